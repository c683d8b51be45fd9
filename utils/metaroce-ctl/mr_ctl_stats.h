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
 * last run's: the file written last and those of the processes that ran
 * alongside its writer (written after it started: "started_ns", the
 * writer's CLOCK_REALTIME at open). A device not in use is an error that
 * says when the counters were last written; --last shows the kept files
 * anyway (the last run's, and those of live processes).
 */
#ifndef MR_CTL_STATS_H
#define MR_CTL_STATS_H

/* <view>/class/infiniband/<name>/stats/metaroce.stats.<pid> */
#define MRCTL_STATS_DIR "stats"
#define MRCTL_STATS_FILE "metaroce.stats"
/* Written every second: 5 s of silence allows for a loaded machine. */
#define MRCTL_STATS_FRESH_S 5
/* With the connections and paths of up to 256 QPs (lib/dp/mrdp_conns.h). */
#define MRCTL_STATS_MAX (16 * 1024 * 1024)
/* Files of processes that ended are removed, except the last run's (for
 * --last). A file without "started_ns" (an older writer) cannot say when
 * its run began: its run is then the files written within this many
 * seconds of the newest. */
#define MRCTL_STATS_LAST_S 10
/* Process files looked at per device. */
#define MRCTL_STATS_MAX_PROCS 256

/* Processes (other than this one) holding /dev/infiniband/<node> open:
 * returns how many, the first max pids into pids; *incomplete = 1 when
 * some process's descriptors could not be inspected (not root). */
unsigned mrctl_node_holders(const char *node, int *pids, unsigned max,
			    int *incomplete);

#include <limits.h>
#include <sys/stat.h>

#include <json-c/json.h>

#include "mr_devconf.h"

#define MAX_PIDS 64

/* Who holds the device's node open. */
struct mrctl_holders {
	int pid[MAX_PIDS];
	unsigned n;	/* found (at most MAX_PIDS kept) */
	int incomplete; /* some process could not be inspected */
};

/* One process's stats file. */
struct mrctl_proc {
	int pid;
	char name[NAME_MAX + 1];
	struct stat st;
	double age;
	int alive; /* the pid exists */
	int live;  /* alive, fresh and (as far as we can see) holds the node */
	char comm[32];
	char *raw;
	size_t len;
	struct json_object *root;
};

/* The files a command shows: ps[0..shown), sorted by pid, each parsed
 * (root); newest: the one written last. */
struct mrctl_stats {
	struct mr_devconf *all; /* the device's record, all[0] */
	struct mrctl_holders h;
	struct mrctl_proc *ps;
	unsigned shown;
	struct mrctl_proc *newest;
	int in_use;
	int dfd;
	char dir[PATH_MAX + 300];
};

/* Load device name's files: the live processes', or with last every file
 * kept. Returns 0, or the exit status after printing the error (no
 * counters: why, as stats says it). */
int mrctl_stats_load(const char *name, int last, struct mrctl_stats *st);
void mrctl_stats_release(struct mrctl_stats *st);

/* "metaroce-ctl: <message>" on stderr; returns 1. */
int mrctl_stats_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
/* The same with " (see metaroce-ctl --help)"; returns 2. */
int mrctl_stats_usage(const char *fmt, const char *arg);
/* /proc/<pid>/comm, "" if unknown. */
void mrctl_comm_of(int pid, char *buf, size_t len);

/* The stats command; argv after "stats". Returns the exit status. */
int mrctl_cmd_stats(int argc, char **argv);

#endif /* MR_CTL_STATS_H */
