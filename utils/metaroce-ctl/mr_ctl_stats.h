/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl stats NAME [--json] [--last]: the live counters of a
 * device. The datapath of every process that uses the device writes them
 * once per second and at close, as one JSON object, to
 *   <view>/class/infiniband/<name>/metaroce.stats   (lib/dp/mrdp_stats.c)
 * replaced by rename, so a reader never sees half of it.
 *
 * "In use" means: the file was written within MRCTL_STATS_FRESH_S seconds
 * and a process holds the device's /dev/infiniband node open (when every
 * process's descriptors could be inspected; otherwise freshness alone).
 * A device not in use is an error that says when the counters were last
 * written; --last shows those last counters anyway.
 */
#ifndef MR_CTL_STATS_H
#define MR_CTL_STATS_H

#define MRCTL_STATS_FILE "metaroce.stats"
/* Written every second: 5 s of silence allows for a loaded machine. */
#define MRCTL_STATS_FRESH_S 5
#define MRCTL_STATS_MAX (64 * 1024)

/* Processes (other than this one) holding /dev/infiniband/<node> open:
 * returns how many, the first max pids into pids; *incomplete = 1 when
 * some process's descriptors could not be inspected (not root). */
unsigned mrctl_node_holders(const char *node, int *pids, unsigned max,
			    int *incomplete);

/* The stats command; argv after "stats". Returns the exit status. */
int mrctl_cmd_stats(int argc, char **argv);

#endif /* MR_CTL_STATS_H */
