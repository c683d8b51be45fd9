/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters: a snapshot under the lock (the datapath's and, through the
 * ops, the engine's), JSON text, and the file a separate process
 * (metaroce-ctl stats) reads. The file is replaced by rename, so a reader
 * never sees half of it.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mrdp_conns.h"
#include "mrdp_int.h"
#include "mrdp_jbuf.h"
#include "mrdp_pcap.h"

#define DROP_NAME(id, name, help) #name,
static const char *const rx_drop_names[MRDP_RXD_MAX] = {
	MRDP_RX_DROPS(DROP_NAME)
};

static const char *const tx_drop_names[MRDP_TXD_MAX] = {
	MRDP_TX_DROPS(DROP_NAME)
};
#undef DROP_NAME

const char *mrdp_rx_drop_name(enum mrdp_rx_drop r)
{
	return (unsigned)r < MRDP_RXD_MAX ? rx_drop_names[r] : "?";
}

const char *mrdp_tx_drop_name(enum mrdp_tx_drop r)
{
	return (unsigned)r < MRDP_TXD_MAX ? tx_drop_names[r] : "?";
}

void mrdp_snapshot(struct mrdp_dev *d, struct mrdp_counters *out)
{
	unsigned i;

	memset(out, 0, sizeof(*out));
	out->nplanes = d->nplanes;
	for (i = 0; i < d->nplanes; i++)
		out->plane[i] = d->plane[i].c;
	out->loopback_pkts = d->loopback_pkts;
	out->neigh_entries = d->neigh->count;
	out->neigh_resolved = d->neigh->resolved;
	out->route_reloads = d->route_reloads;
	out->progress_rounds = d->progress_rounds;
	out->inline_rounds = d->inline_rounds;
	out->sleeps = d->sleeps;
	out->lease_sleeps = d->lease_sleeps;
	out->lease_expired = d->lease_expired;
	out->wake_frame = d->wake_frame;
	out->wake_kick = d->wake_kick;
	out->wake_timer = d->wake_timer;
	out->spins = d->spins;
	out->spin_cut_memory = d->spin_cut_memory;
	out->spin_cut_crowd = d->spin_cut_crowd;
	out->zc_outlived = d->zc_outlived;
	/* The engine's counters are read under the same lock that
	 * serialises every engine call, so the snapshot is consistent. */
	if (d->ops.counters) {
		out->has_engine = 1;
		out->engine = *d->ops.counters(d->ops.user);
		if (d->ops.path_counters)
			out->npaths = d->ops.path_counters(
				d->ops.user, out->path, MR_MAX_PATHS);
	}
}

static void engine_json(struct mrdp_jbuf *b, const struct mrdp_counters *c)
{
	const uint64_t *v = (const uint64_t *)&c->engine;
	const char *const *names = mr_counters_names();
	const char *const *pnames = mr_path_counters_names();
	unsigned i, k, planes = c->nplanes ? c->nplanes : 1;

	mrdp_jp(b, ",\"engine\":{");
	for (i = 0; i < MR_COUNTERS_N; i++)
		mrdp_jp(b, "%s\"%s\":%llu", i ? "," : "", names[i],
			(unsigned long long)v[i]);
	mrdp_jp(b, "},\"paths\":[");
	for (i = 0; i < c->npaths && i < MR_MAX_PATHS; i++) {
		const uint64_t *pv = (const uint64_t *)&c->path[i];

		/* Path i uses plane i % planes (mr_pathsel.h). */
		mrdp_jp(b, "%s{\"path\":%u,\"plane\":%u", i ? "," : "", i,
			i % planes);
		for (k = 0; k < MR_PATH_COUNTERS_N; k++)
			mrdp_jp(b, ",\"%s\":%llu", pnames[k],
				(unsigned long long)pv[k]);
		mrdp_jp(b, "}");
	}
	mrdp_jp(b, "]");
}

/* One counter, or an object of counters by reason. */
#define JSON_FIELD(name, help)                                               \
	mrdp_jp(&b, ",\"" #name "\":%llu", (unsigned long long)p->name);
#define JSON_BY(name, reasons, n, help)                                      \
	mrdp_jp(&b, ",\"" #name "\":{");                                      \
	for (k = 0; k < (n); k++)                                            \
		mrdp_jp(&b, "%s\"%s\":%llu", k ? "," : "",                   \
			name##_names[k], (unsigned long long)p->name[k]);    \
	mrdp_jp(&b, "}");

/* The object without its closing brace; started_ns: when the device
 * opened (0: not said). */
static void counters_json(const struct mrdp_counters *c, const char *name,
			  uint64_t started_ns, struct mrdp_jbuf *bp)
{
	struct mrdp_jbuf b = *bp;
	unsigned i, k;

	/* Device names are [A-Za-z0-9_.-] (mr_devconf_valid_name): no
	 * escaping needed. */
	mrdp_jp(&b, "{\"device\":\"%s\",\"pid\":%ld", name, (long)getpid());
	if (started_ns)
		mrdp_jp(&b, ",\"started_ns\":%llu",
			(unsigned long long)started_ns);
	{
		const struct mrdp_counters *p = c;

		MRDP_DEV_COUNTERS(JSON_FIELD)
	}
	mrdp_jp(&b, ",\"planes\":[");
	for (i = 0; i < c->nplanes && i < MR_DEVCONF_MAX_PORTS; i++) {
		const struct mrdp_plane_counters *p = &c->plane[i];

		mrdp_jp(&b, "%s{\"plane\":%u", i ? "," : "", i);
		MRDP_PLANE_COUNTERS(JSON_FIELD, JSON_BY)
		mrdp_jp(&b, "}");
	}
	mrdp_jp(&b, "]");
	if (c->has_engine)
		engine_json(&b, c);
	*bp = b;
}

int mrdp_counters_json(const struct mrdp_counters *c, const char *name,
		       char *buf, size_t cap)
{
	struct mrdp_jbuf b = { .p = buf, .cap = cap };

	if (cap == 0)
		return -ENOSPC;
	counters_json(c, name, 0, &b);
	mrdp_jp(&b, "}\n");
	if (b.over)
		return -ENOSPC;
	return (int)b.len;
}

void mrdp_stats_open(struct mrdp_dev *d, const char *path)
{
	struct timespec ts;

	snprintf(d->stats_path, sizeof(d->stats_path), "%s", path);
	/* Wall-clock time, as the file's mtime that the reader compares it
	 * with: a process that last wrote before this one started belongs
	 * to an earlier run (mr_ctl_stats.h). */
	clock_gettime(CLOCK_REALTIME, &ts);
	d->stats_started_ns =
		(uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int mrdp_stats_write(struct mrdp_dev *d)
{
	struct mrdp_counters c;
	struct mrdp_jbuf b = { .grow = 1 };
	struct mrdp_conns conns;
	char tmp[PATH_MAX + 32];
	int fd, ret = 0;

	mrdp_get_counters(d, &c);
	if (mrdp_conns_snapshot(d, &conns))
		return -ENOMEM;
	if (d->pcap) {
		/* Under the lock: frames are written under it. */
		mrdp_lock(d);
		mrdp_pcap_flush(d->pcap);
		mrdp_unlock(d);
	}
	counters_json(&c, d->conf.name, d->stats_started_ns, &b);
	if (c.has_engine)
		mrdp_conns_json(&conns, d->addrs, &b);
	mrdp_conns_free(&conns);
	mrdp_jp(&b, "}\n");
	if (b.over) {
		free(b.p);
		return -ENOMEM;
	}
	snprintf(tmp, sizeof(tmp), "%s.tmp", d->stats_path);
	/* The directory may be world-writable (sticky): never write through
	 * a name another user planted. A leftover of ours is removed first;
	 * someone else's makes the exclusive create fail. */
	unlink(tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0) {
		ret = -errno;
		free(b.p);
		return ret;
	}
	if (write(fd, b.p, b.len) != (ssize_t)b.len)
		ret = -EIO;
	free(b.p);
	close(fd);
	if (!ret && rename(tmp, d->stats_path) != 0)
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}
