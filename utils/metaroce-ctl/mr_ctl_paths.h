/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl paths NAME [--json] [--watch[=SECONDS]] [--last]: the live
 * connections of a device and each of their paths (plane, UDP source
 * port, state, weight, RTTs, what is in flight, ECN marks, losses), per
 * process. The datapath writes them into its stats file as "conns"
 * (lib/dp/mrdp_conns.h, fields: lib/core/mr_path_info.h) once a second;
 * this command reads the same files as stats (mr_ctl_stats.h).
 */
#ifndef MR_CTL_PATHS_H
#define MR_CTL_PATHS_H

/* The paths command; argv after "paths". Returns the exit status. */
int mrctl_cmd_paths(int argc, char **argv);

#endif /* MR_CTL_PATHS_H */
