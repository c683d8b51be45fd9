/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Where the per-network-namespace sysfs view lives, shared by metaroce-ctl
 * (builds it) and metaroce-run (points SYSFS_PATH at it).
 *
 *   $METAROCE_RUNDIR/net-<inode of /proc/self/ns/net>/
 *       netns_cookie    the namespace's SO_NETNS_COOKIE when the view was
 *                       made: inode numbers are recycled when a namespace
 *                       dies, cookies never are, so a view whose cookie
 *                       differs belongs to a dead namespace (stale)
 *       sysfs/          what SYSFS_PATH points at
 */
#ifndef MR_NETNS_H
#define MR_NETNS_H

#include <stddef.h>
#include <stdint.h>

#define MRCTL_RUNDIR_DEFAULT "/run/metaroce"
#define MRCTL_COOKIE_FILE "netns_cookie"

/* $METAROCE_RUNDIR if set and non-empty, else /run/metaroce. */
const char *mrctl_rundir(void);

/* Inode of this thread's network namespace. 0 or -1 (errno set). */
int mrctl_netns_ino(unsigned long *ino);

/* SO_NETNS_COOKIE of this namespace. 0, or -1 when the kernel has none
 * (before 5.14): then views are not checked for staleness. */
int mrctl_netns_cookie(uint64_t *cookie);

/* "<rundir>/net-<ino>" into buf. 0, or -1 (errno set: ENAMETOOLONG...). */
int mrctl_view_dir(char *buf, size_t len);

/* Is the view at dir one of this namespace's, not a dead namespace's that
 * had the same inode? 1 yes, 0 stale, -1 absent (no such directory). */
int mrctl_view_current(const char *dir);

#endif /* MR_NETNS_H */
