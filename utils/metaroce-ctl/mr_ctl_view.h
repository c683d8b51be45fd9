/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sysfs view of one network namespace (see mr_netns.h for where) and
 * the /dev/infiniband nodes of its devices: what stock libibverbs reads to
 * find MetaRoCE devices with no RDMA in the kernel.
 *
 *   sysfs/class/infiniband_verbs/abi_version        6 (or the host's)
 *   sysfs/class/infiniband_verbs/<node>/{ibdev,dev,abi_version}
 *   sysfs/class/infiniband/<name>/                  node_type, node_guid,
 *       ..., ports/1/{state,gids/N,gid_attrs/{types,ndevs}/N,pkeys/0,
 *       ...},
 *       metaroce.conf (the record, mr_devconf.h)
 *   /dev/infiniband/<node>                          c 1 7 (/dev/full), 0666
 *
 * <node> is "metaroce-<netns inode>-<n>": /dev is shared by every network
 * namespace, so the inode keeps namespaces apart, n (the lowest free) keeps
 * devices of one namespace apart, and the prefix never meets the kernel's
 * uverbsN. The machine's real RDMA devices are mirrored into the view as
 * symlinks to their sysfs directories each time the view changes.
 *
 * Every change holds an flock on the runtime directory and is all or
 * nothing: a device appears by rename() of a fully built directory, and a
 * failure undoes what was done.
 */
#ifndef MR_CTL_VIEW_H
#define MR_CTL_VIEW_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#include "mr_devconf.h"

#define MRCTL_DEVDIR "/dev/infiniband"
#define MRCTL_UVERBS_ABI 1 /* per-device abi_version the provider accepts */
#define MRCTL_VERBS_ABI 6  /* class/infiniband_verbs/abi_version */

struct mrctl_view {
	char dir[PATH_MAX];   /* <rundir>/net-<ino> */
	char sysfs[PATH_MAX]; /* <dir>/sysfs: SYSFS_PATH */
	unsigned long ino;
	int lock_fd;	 /* -1 when not locked */
	int made_rundir; /* this command created the runtime directory */
};

/* $METAROCE_HOST_SYSFS (tests only) or /sys: where real devices are. */
const char *mrctl_host_sysfs(void);

enum {
	MRCTL_LOCK_NONE,   /* read only (link show) */
	MRCTL_LOCK,	   /* lock the runtime directory if it exists */
	MRCTL_LOCK_CREATE, /* create it first if needed (link add) */
};

/* Resolve this namespace's view. With a lock mode: take the runtime
 * directory's lock and remove a stale view (a dead namespace's with the
 * same inode) and leftovers of an interrupted command. 0 or -1 + err. */
int mrctl_view_open(struct mrctl_view *v, int lock, char *err, size_t errlen);
/* Unlock; removes the runtime directory if this command made it and it is
 * still empty. */
void mrctl_view_close(struct mrctl_view *v);

/* Add the device c (c->uverbs is chosen here). Fails, changing nothing,
 * if the name, IP or MAC is in use. Needs the lock. 0 or -1 + err. */
int mrctl_view_add(struct mrctl_view *v, struct mr_devconf *c, char *err,
		   size_t errlen);

/* Remove device name and its node; the view goes with the last device.
 * Needs the lock. 0 or -1 + err. */
int mrctl_view_del(struct mrctl_view *v, const char *name, char *err,
		   size_t errlen);

/* Change the knobs of device name's record (mr_knobs.h): those set in
 * set take its values, those in unset go back to their defaults. The
 * record is replaced atomically (rename); programs that have the device
 * open keep what they resolved, later opens see the new values. Needs the
 * lock. 0 or -1 + err. */
int mrctl_view_set_opts(struct mrctl_view *v, const char *name,
			const struct mr_knob_set *set, uint64_t unset,
			char *err, size_t errlen);

/* The MetaRoCE devices of the view, sorted by name, into *out (malloc'd,
 * caller frees; *n may be 0). Only name given: just that one, error if
 * absent. 0 or -1 + err. */
int mrctl_view_list(struct mrctl_view *v, const char *name,
		    struct mr_devconf **out, unsigned *n, char *err,
		    size_t errlen);

/* Node GUID as sysfs shows it: xxxx:xxxx:xxxx:xxxx. */
void mrctl_guid_str(const struct mr_devconf *c, char buf[20]);

#endif /* MR_CTL_VIEW_H */
