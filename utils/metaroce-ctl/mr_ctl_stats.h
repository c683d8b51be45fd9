/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl stats NAME [--json] [--last]: the live counters of a
 * device. The datapath of every process that uses the device writes its
 * own (datapath and engine: lib/dp/mrdp.h) once per second and at close,
 * as one JSON object, to
 *   <view>/class/infiniband/<name>/stats/metaroce.stats.<pid>
 * replaced by rename, so a reader never sees half of it. link add makes
 * the stats directory with mode 1777, so programs of any user can write,
 * and two programs on one device do not overwrite each other.
 *
 * A process is live when its pid exists (owned by the file's owner), its
 * file was written within MRCTL_STATS_FRESH_S seconds and it holds the
 * device's /dev/infiniband node open (when every process's descriptors
 * could be inspected; otherwise the first two alone). The device is in
 * use when some process is live; the command shows each live process's
 * counters and, with more than one, their sum (--json: "processes" and
 * the sum as "counters"). Files of processes gone are removed except the
 * last run's; a device not in use is an error that says when the counters
 * were last written; --last shows the kept files anyway.
 */
#ifndef MR_CTL_STATS_H
#define MR_CTL_STATS_H

/* <view>/class/infiniband/<name>/stats/metaroce.stats.<pid> */
#define MRCTL_STATS_DIR "stats"
#define MRCTL_STATS_FILE "metaroce.stats"
/* Written every second: 5 s of silence allows for a loaded machine. */
#define MRCTL_STATS_FRESH_S 5
#define MRCTL_STATS_MAX (64 * 1024)
/* Files of processes that ended are removed, except those written within
 * this many seconds of the newest of them (the last run, for --last). */
#define MRCTL_STATS_LAST_S 10
/* Process files looked at per device. */
#define MRCTL_STATS_MAX_PROCS 256

/* Processes (other than this one) holding /dev/infiniband/<node> open:
 * returns how many, the first max pids into pids; *incomplete = 1 when
 * some process's descriptors could not be inspected (not root). */
unsigned mrctl_node_holders(const char *node, int *pids, unsigned max,
			    int *incomplete);

/* The stats command; argv after "stats". Returns the exit status. */
int mrctl_cmd_stats(int argc, char **argv);

#endif /* MR_CTL_STATS_H */
