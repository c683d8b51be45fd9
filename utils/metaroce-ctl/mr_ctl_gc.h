/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl link gc [--dry-run]: remove the /dev/infiniband nodes of
 * network namespaces that provably no longer exist, and their views in
 * this runtime directory (see mr_ctl_gc.c for what "provably" means).
 * Needs root.
 */
#ifndef MR_CTL_GC_H
#define MR_CTL_GC_H

/* The gc command; argv after "gc". Returns the exit status. */
int mrctl_cmd_gc(int argc, char **argv);

#endif /* MR_CTL_GC_H */
