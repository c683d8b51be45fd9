// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's engine: lib/core's endpoint driven by lib/dp (engine.h).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "engine.h"
#include "mr_cc.h"
#include "mr_counters.h"
#include "xlate.h"

/* The knobs' defaults and why they are what they are (lib/devconf/
 * mr_knobs.h holds the values):
 * - min_rto_us 20000: see engine_open().
 * - pace_quantum 256 KiB: a software datapath works in rounds (one burst
 *   in, one burst out per round, each round a system call or more): the
 *   pacer may release what the rate allowed since the last round, up to
 *   this many bytes at once (MR-CC-4), else a sender gets one packet per
 *   round (bench/wire FINDINGS section 8).
 * - ack_every 16, ack_delay_us 20: every ACK is a transmit system call
 *   for the receiver's thread: ACK every 16 packets (and at the end of
 *   every message, ACK_REQ) or 20 us after the first unacknowledged one,
 *   instead of the core's 4 / 2 us sized for a NIC.
 * - base_rtt_us 1000: the round trip of a software datapath, not of a
 *   NIC. The controller's window starts at line rate x base RTT
 *   (MR-CC-1); a NIC's 10 us (125 KB, 30 packets at MTU 4096) against
 *   0.5-10 ms per round trip of two progress threads on a shared machine
 *   (each hop a thread wakeup) sent one window per 8-20 ms, growing one
 *   AI step per round trip: the start-up penalty of ib_write_bw -n 200
 *   (bench/wire FINDINGS section 9). 1 ms makes the first window large
 *   enough (12.5 MB at 100 Gb/s; the ssn window bounds what is in
 *   flight) and the pacer then paces at the window over the measured
 *   srtt. */
_Static_assert(MR_KNOBS_PATHS_MAX == MR_MAX_PATHS,
	       "the paths knob's range is the core's paths per connection");

/* --- what the core needs injected --------------------------------------- */

static void *eng_calloc(void *user, size_t n, size_t size)
{
	return calloc(n, size);
}

static void eng_free(void *user, void *p)
{
	free(p);
}

/* splitmix64: initial sequence numbers and path entropy need to differ
 * between runs, not to be secret. */
static uint64_t eng_rand(void *user)
{
	struct metaroce_engine *eng = user;
	uint64_t z = (eng->rng += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static int eng_lookup(void *user, uint32_t pd, uint32_t key, int remote,
		      uint64_t addr, uint64_t len, unsigned need,
		      uint8_t **host)
{
	struct metaroce_engine *eng = user;

	/* remote: the arriving QP's number (a type 2 window's check). */
	if (metaroce_mrt_lookup_qp(&eng->dev->mrt, pd, (uint32_t)remote, key,
				   addr, len, need, host))
		return -MR_EACCESS;
	return 0;
}

/* Memory windows (mw.c, mr_table.c): the core calls these when its send
 * queue reaches a bind or local invalidate, or a SEND_WITH_INV completes. */
static int eng_bind(void *user, uint32_t pd, uint32_t qpn,
		    const struct mr_mw_bind *b)
{
	struct metaroce_engine *eng = user;

	return metaroce_mrt_bind(&eng->dev->mrt, pd, qpn, b) ? -MR_EINVAL : 0;
}

static int eng_invalidate(void *user, uint32_t pd, uint32_t qpn, uint32_t rkey,
			  int remote)
{
	struct metaroce_engine *eng = user;

	return metaroce_mrt_invalidate(&eng->dev->mrt, pd, qpn, rkey, remote)
		       ? -MR_EINVAL
		       : 0;
}

/* Copy received payload so that a reader polling the last byte (perftest
 * latency tests) sees every earlier byte first: memcpy may store the tail
 * of a buffer before its middle. */
static void eng_place(void *user, uint8_t *dst, const uint8_t *src,
		      uint32_t len)
{
	struct metaroce_engine *eng = user;
	const uint32_t tail = len < 8 ? len : 8;
	uint32_t i;

	memcpy(dst, src, len - tail);
	atomic_thread_fence(memory_order_release);
	for (i = len - tail; i < len; i++)
		((volatile uint8_t *)dst)[i] = src[i];
	/* An application spinning on this memory may answer at once: the
	 * progress thread's round may hold its ACK for that answer. */
	mrdp_placed(eng->dp);
}

static void eng_complete(void *user, const struct mr_cqe *cqe)
{
	struct metaroce_qp *qp = cqe->qp_user;
	struct ibv_wc wc;

	metaroce_cqe_to_wc(cqe, &wc);
	metaroce_cq_push(cqe->is_recv ? qp->rcq : qp->scq, &wc, cqe->solicited);
	mrdp_completed(qp->eng->dp);
}

static void eng_qp_error(void *user, void *qp_user)
{
	struct metaroce_qp *qp = qp_user;

	qp->async_events++;
	metaroce_async_event(to_mctx(qp->vqp.qp.context), (uintptr_t)qp,
			     IBV_EVENT_QP_FATAL);
}

/* Verbs: IBV_EVENT_SQ_DRAINED only when the move to SQD asked for it. */
static void eng_sq_drained(void *user, void *qp_user)
{
	struct metaroce_qp *qp = qp_user;

	if (!qp->attr.en_sqd_async_notify)
		return;
	qp->async_events++;
	metaroce_async_event(to_mctx(qp->vqp.qp.context), (uintptr_t)qp,
			     IBV_EVENT_SQ_DRAINED);
}

static void eng_srq_limit(void *user, void *srq_user)
{
	struct metaroce_srq *srq = srq_user;

	/* Verbs: the limit fires once, then must be re-armed. */
	srq->limit = 0;
	srq->async_events++;
	metaroce_async_event(srq->mctx, (uintptr_t)srq,
			     IBV_EVENT_SRQ_LIMIT_REACHED);
}

/* --- open / close ------------------------------------------------------- */

/* engine_stats=1: the endpoint's nonzero counters on stderr when the
 * engine closes (retransmissions, timeouts, duplicates: what the
 * datapath's stats file cannot see). */
static void engine_print_counters(struct metaroce_engine *eng)
{
	const uint64_t *v = (const uint64_t *)mr_ep_counters(eng->ep);
	const char *const *names = mr_counters_names();
	size_t i;

	if (!mr_knob_get(&eng->knobs, MR_KNOB_ENGINE_STATS))
		return;
	fprintf(stderr, "metaroce: %s: engine counters:", eng->dev->conf.name);
	for (i = 0; i < MR_COUNTERS_N; i++)
		if (v[i])
			fprintf(stderr, " %s=%llu", names[i],
				(unsigned long long)v[i]);
	fprintf(stderr, "\n");
}

static void engine_close(struct metaroce_engine *eng)
{
	/* The datapath first: after mrdp_close() nothing calls the
	 * endpoint from another thread. */
	mrdp_close(eng->dp);
	engine_print_counters(eng);
	if (mr_ep_destroy(eng->ep))
		fprintf(stderr,
			"metaroce: %s: endpoint still had QPs at "
			"close\n",
			eng->dev->conf.name);
	free(eng);
}

/* A port's rate where neither the knob nor the port says (MR-CC-11). */
#define METAROCE_PORT_MBPS 100000u

static int engine_open(struct metaroce_device *dev,
		       struct metaroce_engine **out)
{
	struct mr_ep_config ecfg = { 0 };
	struct mrdp_config dcfg = { 0 };
	struct metaroce_engine *eng;
	char stats[IBV_SYSFS_PATH_MAX + 64], pcap[IBV_SYSFS_PATH_MAX + 64];
	char steer[IBV_SYSFS_PATH_MAX + 16];
	char err[256];
	uint32_t link_mbps;
	struct mr_mem mem = { .calloc = eng_calloc, .free = eng_free };
	struct mr_rand rnd = { .next = eng_rand };
	struct mr_memreg memreg = { .lookup = eng_lookup,
				    .bind = eng_bind,
				    .invalidate = eng_invalidate };
	struct mr_callbacks cb = {
		.place = eng_place,
		.complete = eng_complete,
		.qp_error = eng_qp_error,
		.srq_limit = eng_srq_limit,
		.sq_drained = eng_sq_drained,
	};
	int ret;

	eng = calloc(1, sizeof(*eng));
	if (!eng)
		return ENOMEM;
	eng->dev = dev;
	if (getrandom(&eng->rng, sizeof(eng->rng), 0) != sizeof(eng->rng))
		eng->rng = (uint64_t)time(NULL) ^ (uintptr_t)eng;
	/* QP numbers start at a random point so that two processes using
	 * the same device (each with its own engine) rarely collide. */
	eng->next_qpn = (uint32_t)eng_rand(eng) & MR_QPN_MASK;
	rnd.user = eng;
	memreg.user = eng;
	cb.user = eng;
	/* The knobs, once: defaults, the device's record, the environment
	 * (lib/devconf/mr_knobs.h); a bad value refuses the open. */
	if (mr_knobs_resolve(&eng->knobs, &dev->conf.opts, err, sizeof(err))) {
		fprintf(stderr, "metaroce: %s: %s\n", dev->conf.name, err);
		free(eng);
		return EINVAL;
	}
	if (mr_knob_get(&eng->knobs, MR_KNOB_DEBUG))
		metaroce_debug_on = 1;
	ecfg.mtu = dev->conf.mtu;
	ecfg.num_planes = (uint8_t)dev->conf.nports;
	/* The transport policy (mode, cc, pathsel, paths: MR-POL-*): spray
	 * every connection over several paths (UDP source ports = ECMP
	 * entropy), at least one per plane; loss is found per path. */
	if (mr_policy_resolve(&eng->knobs, dev->conf.nports, &eng->policy, err,
			      sizeof(err))) {
		fprintf(stderr, "metaroce: %s: %s\n", dev->conf.name, err);
		free(eng);
		return EINVAL;
	}
	ecfg.num_paths = eng->policy.paths;
	if (eng->policy.mode == MR_MODE_GBN)
		ecfg.cc_gbn = eng->policy.cc;
	else
		ecfg.cc_metaroce = eng->policy.cc;
	if (eng->policy.mode != MR_MODE_GBN)
		ecfg.pathsel = eng->policy.pathsel;
	ecfg.max_qp = METAROCE_MAX_QP;
	/* The core's 100 us RTO floor suits a NIC; a software datapath's
	 * threads lose the CPU for whole scheduler slices (4-12 ms on a
	 * loaded machine), and every spurious RTO cuts the window to one
	 * packet. Holes in the SACK vector still find real losses at once;
	 * the RTO only covers a lost tail. */
	ecfg.min_rto_ns =
		(uint64_t)mr_knob_get(&eng->knobs, MR_KNOB_MIN_RTO_US) *
		1000ull;
	/* Tuning of the controller and the ACK policy (README, knobs). */
	ecfg.base_rtt_ns =
		(uint64_t)mr_knob_get(&eng->knobs, MR_KNOB_BASE_RTT_US) *
		1000ull;
	/* MR-CC-11: each plane's port rate, summed; read from the ports
	 * once they are up (below) unless the knob sets it. */
	link_mbps = (uint32_t)mr_knob_get(&eng->knobs, MR_KNOB_LINK_MBPS);
	ecfg.link_rate_mbps = (link_mbps ? link_mbps : METAROCE_PORT_MBPS) *
			      (dev->conf.nports ? dev->conf.nports : 1);
	ecfg.pace_quantum =
		(uint64_t)mr_knob_get(&eng->knobs, MR_KNOB_PACE_QUANTUM);
	ecfg.path_run = (uint16_t)mr_knob_get(&eng->knobs, MR_KNOB_PATH_RUN);
	ecfg.ack_every = (uint16_t)mr_knob_get(&eng->knobs, MR_KNOB_ACK_EVERY);
	ecfg.ack_delay_ns =
		(uint32_t)mr_knob_get(&eng->knobs, MR_KNOB_ACK_DELAY_US) *
		1000u;
	ecfg.ack_req_delay_ns =
		(uint32_t)mr_knob_get(&eng->knobs, MR_KNOB_ACK_REQ_DELAY_US) *
		1000u;
	ecfg.first_pkt_bytes =
		(uint32_t)mr_knob_get(&eng->knobs, MR_KNOB_FIRST_PKT_BYTES);
	ecfg.first_pkt_starts =
		(uint16_t)mr_knob_get(&eng->knobs, MR_KNOB_FIRST_PKT_STARTS);
	/* MR-CC-17: the knob's index 0, 1 is enum mr_cc_start's 1, 2. */
	ecfg.cc_start =
		(uint8_t)(mr_knob_get(&eng->knobs, MR_KNOB_CC_START) + 1);
	ret = mr_ep_create(&ecfg, &mem, &rnd, &memreg, &cb, &eng->ep);
	if (ret) {
		fprintf(stderr,
			"metaroce: %s: cannot create the endpoint: %s\n",
			dev->conf.name, mr_strerror(-ret));
		free(eng);
		return metaroce_errno(ret);
	}
	/* One file per process (two programs may use one device), in the
	 * world-writable directory metaroce-ctl made (mrdp.h). */
	snprintf(stats, sizeof(stats), "%s/stats/metaroce.stats.%ld",
		 dev->ibdev_path, (long)getpid());
	dcfg.conf = &dev->conf;
	dcfg.ops = mrdp_ep_ops(eng->ep);
	dcfg.stats_path = stats;
	dcfg.knobs = &eng->knobs;
	dcfg.addrs = dev->gids.book; /* the GIDs' IPv6 ids (mrdp_addr.h) */
	/* Several processes may use the device: each claims a QPN slot in
	 * the device's shared directory and its sockets take only its own
	 * frames (mrdp.h, steer_dir; knob dp_steer). A record made before
	 * the directory existed has none: every process then sees every
	 * frame. */
	snprintf(steer, sizeof(steer), "%s/stats", dev->ibdev_path);
	if (access(steer, W_OK) == 0)
		dcfg.steer_dir = steer;
	/* The capture switch's file, next to the counters (README). */
	snprintf(pcap, sizeof(pcap), "%s/stats/metaroce.%ld.pcapng",
		 dev->ibdev_path, (long)getpid());
	dcfg.pcap_path = pcap;
	ret = mrdp_open(&dcfg, &eng->dp, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "metaroce: %s: cannot open the datapath: %s\n",
			dev->conf.name, err);
		mr_ep_destroy(eng->ep);
		free(eng);
		return -ret;
	}
	if (mrdp_qpn_range(eng->dp, &eng->qpn_base, &eng->qpn_count))
		eng->qpn_count = 0;
	if (!link_mbps) {
		unsigned nread;
		uint32_t mbps = mrdp_link_mbps(eng->dp, METAROCE_PORT_MBPS,
					       &nread);

		mrdp_lock(eng->dp);
		mr_ep_set_link_rate(eng->ep, mbps);
		mrdp_unlock(eng->dp);
		metaroce_dbg("%s: port rate %u Mb/s (%u of %u ports report "
			     "one)",
			     dev->conf.name, mbps, nread,
			     mrdp_num_planes(eng->dp));
	}
	*out = eng;
	return 0;
}

int metaroce_engine_use(struct metaroce_context *mctx,
			struct metaroce_engine **out)
{
	struct metaroce_device *dev = mctx->dev;
	int ret = 0;

	pthread_mutex_lock(&dev->eng_lock);
	if (!dev->eng)
		ret = engine_open(dev, &dev->eng);
	if (!ret) {
		bool first = false;

		pthread_mutex_lock(&mctx->lock);
		if (!mctx->uses_engine) {
			mctx->uses_engine = true;
			dev->eng_users++;
			first = true;
		}
		pthread_mutex_unlock(&mctx->lock);
		/* The port's link is up from the moment the datapath runs:
		 * say so, once per context, as a NIC does when its link
		 * comes up (IBV_DEVICE_PORT_ACTIVE_EVENT). */
		if (first)
			metaroce_async_event(mctx, 1, IBV_EVENT_PORT_ACTIVE);
		*out = dev->eng;
	}
	pthread_mutex_unlock(&dev->eng_lock);
	return ret;
}

void metaroce_engine_release(struct metaroce_context *mctx)
{
	struct metaroce_device *dev = mctx->dev;

	if (!mctx->uses_engine)
		return;
	pthread_mutex_lock(&dev->eng_lock);
	mctx->uses_engine = false;
	if (--dev->eng_users == 0) {
		engine_close(dev->eng);
		dev->eng = NULL;
	}
	pthread_mutex_unlock(&dev->eng_lock);
}

void metaroce_progress_handoff(struct metaroce_context *mctx)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;

	if (eng)
		mrdp_handoff(eng->dp);
}

struct metaroce_engine *metaroce_engine_hold(struct metaroce_context *mctx)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;

	if (eng)
		mrdp_lock(eng->dp);
	return eng;
}

void metaroce_progress(struct metaroce_context *mctx)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;

	if (eng)
		mrdp_progress(eng->dp);
}

void metaroce_progress_cq(struct metaroce_context *mctx, bool armed)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;

	if (eng)
		mrdp_progress_cq(eng->dp, armed);
}

void metaroce_polled(struct metaroce_context *mctx, int got)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;

	if (eng)
		mrdp_polled(eng->dp, got);
}

int metaroce_resolve(struct metaroce_context *mctx, uint32_t dest)
{
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;
	const struct timespec step = { 0, 5 * 1000 * 1000 };
	int i, ret;

	/* Our own address needs no neighbour: the datapath loops it back. */
	if (!eng || dest == eng->dev->conf.ip)
		return 0;
	for (i = 0; i < 200; i++) {
		ret = mrdp_resolve(eng->dp, dest, NULL);
		if (ret == -ENETUNREACH) {
			metaroce_dbg("%s: no plane has a route to "
				     "%u.%u.%u.%u",
				     eng->dev->conf.name, dest >> 24,
				     (dest >> 16) & 0xff, (dest >> 8) & 0xff,
				     dest & 0xff);
			return ENETUNREACH;
		}
		if (ret != 0)
			return 0; /* resolved (1) or never resolvable (< 0) */
		nanosleep(&step, NULL);
	}
	metaroce_dbg("%s: no ARP answer from %u.%u.%u.%u yet",
		     eng->dev->conf.name, dest >> 24, (dest >> 16) & 0xff,
		     (dest >> 8) & 0xff, dest & 0xff);
	return 0;
}

void metaroce_engine_lock(struct metaroce_engine *eng)
{
	mrdp_lock(eng->dp);
}

void metaroce_engine_unlock(struct metaroce_engine *eng)
{
	mrdp_unlock(eng->dp);
}

uint32_t metaroce_engine_qpn(struct metaroce_engine *eng)
{
	uint32_t qpn;

	/* With steering, only QPNs of our slot reach this process (the slots
	 * never hold 0 or 1). */
	if (eng->qpn_count)
		return eng->qpn_base + atomic_fetch_add(&eng->next_qpn, 1) %
					       eng->qpn_count;
	/* 0 and 1 are special QPs in IB; skip them on wrap. */
	do
		qpn = atomic_fetch_add(&eng->next_qpn, 1) & MR_QPN_MASK;
	while (qpn < 2);
	return qpn;
}

const struct verbs_context_ops metaroce_engine_ctx_ops = {
	.alloc_mw = metaroce_alloc_mw,
	.bind_mw = metaroce_bind_mw,
	.create_qp = metaroce_create_qp,
	.create_qp_ex = metaroce_create_qp_ex,
	.create_srq = metaroce_create_srq,
	.dealloc_mw = metaroce_dealloc_mw,
	.destroy_qp = metaroce_destroy_qp,
	.destroy_srq = metaroce_destroy_srq,
	.modify_qp = metaroce_modify_qp,
	.modify_srq = metaroce_modify_srq,
	.post_recv = metaroce_post_recv,
	.post_send = metaroce_post_send,
	.post_srq_recv = metaroce_post_srq_recv,
	.query_qp = metaroce_query_qp,
	.query_srq = metaroce_query_srq,
};

int metaroce_errno(int core_err)
{
	switch (-core_err) {
	case 0:
		return 0;
	case MR_ENOMEM:
		return ENOMEM;
	case MR_EAGAIN:
		return ENOMEM; /* verbs: work queue full */
	case MR_EBUSY:
		return EBUSY;
	case MR_ENOENT:
		return ENOENT;
	default:
		/* EINVAL, EACCESS (bad lkey), ESTATE, EMSGSIZE, EPROTO: an
		 * invalid request for the QP as it is. */
		return EINVAL;
	}
}
