// SPDX-License-Identifier: BSD-2-Clause
/*
 * metaroce-sim's engine and network against analytic values: event
 * order, serialisation and propagation, store-and-forward through a
 * leaf-spine path, a standing queue and drop-tail under 2:1 overload,
 * ECN step marking, ECMP spread over source ports (chi-square), failed
 * links carrying nothing. Packets are injected by hand; no core runs.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mr_test.h"
#include "mrsim_net.h"

static struct mrsim_world *mk(const char *const *kv)
{
	struct mrsim_world *w = calloc(1, sizeof(*w));
	char err[256];

	mrsim_scn_defaults(&w->scn);
	for (; *kv; kv += 2)
		if (mrsim_scn_set(&w->scn, kv[0], kv[1], err, sizeof(err))) {
			fprintf(stderr, "%s\n", err);
			abort();
		}
	if (mrsim_scn_check(&w->scn, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		abort();
	}
	w->host = calloc((size_t)w->scn.hosts, sizeof(*w->host));
	if (mrsim_evq_init(&w->q) || mrsim_net_build(w, err, sizeof(err)))
		abort();
	return w;
}

static void rm(struct mrsim_world *w)
{
	struct mrsim_event e;

	while (!mrsim_evq_pop(&w->q, &e))
		if (e.type == MRSIM_EV_ARRIVE)
			mrsim_pkt_free(w, e.p);
	mrsim_net_free(w);
	mrsim_evq_fini(&w->q);
	free(w->host);
	free(w);
}

/* A port that hands packets to switch sw, as a host's NIC would. */
static struct mrsim_port inject_at(struct mrsim_switch *sw)
{
	struct mrsim_port p;

	memset(&p, 0, sizeof(p));
	p.to_host = -1;
	p.to_sw = sw;
	return p;
}

static struct mrsim_pkt *pkt(struct mrsim_world *w, struct mrsim_port *hop,
			     int src, int dst, uint16_t sport, uint32_t len)
{
	struct mrsim_pkt *p = mrsim_pkt_alloc(w);

	p->hop = hop;
	p->src = (uint16_t)src;
	p->dst = (uint16_t)dst;
	p->sport = sport;
	p->len = len;
	memset(p->data, 0, len);
	return p;
}

/* Run the network until idle or past `until`; packets reaching a host
 * are counted (and the time of the last one kept), never given to a
 * core. */
static int run_to(struct mrsim_world *w, uint64_t until, uint64_t *last_at)
{
	struct mrsim_event e;
	int n = 0;

	while (w->q.n && w->q.heap[0].at <= until) {
		mrsim_evq_pop(&w->q, &e);
		if (e.type == MRSIM_EV_PORT_DONE) {
			mrsim_port_done(e.p);
		} else if (e.type == MRSIM_EV_ARRIVE) {
			struct mrsim_pkt *p = e.p;

			if (p->hop->to_host >= 0) {
				n++;
				*last_at = e.at;
				mrsim_pkt_free(w, p);
			} else {
				mrsim_arrive(w, p);
			}
		}
	}
	if (until != UINT64_MAX && w->q.now < until)
		w->q.now = until;
	return n;
}

static int run(struct mrsim_world *w, uint64_t *last_at)
{
	return run_to(w, UINT64_MAX, last_at);
}

/* Same time: insertion order; otherwise time order; 100,000 events. */
static void test_event_order(void)
{
	struct mrsim_evq q;
	struct mrsim_event e, prev = { 0 };
	uint64_t s = 7;
	int i;

	MR_CHECK_EQ(mrsim_evq_init(&q), 0);
	for (i = 0; i < 100000; i++)
		MR_CHECK_EQ(mrsim_evq_push(&q, mrsim_rand(&s) % 1000, 0,
					   (uint32_t)i, NULL),
			    0);
	for (i = 0; i < 100000; i++) {
		MR_CHECK_EQ(mrsim_evq_pop(&q, &e), 0);
		if (i)
			MR_CHECK(e.at > prev.at ||
				 (e.at == prev.at && e.arg > prev.arg));
		prev = e;
	}
	MR_CHECK(mrsim_evq_pop(&q, &e) != 0);
	/* An event in the past runs now, after those already due now. */
	mrsim_evq_push(&q, 5, 0, 1, NULL);
	MR_CHECK(q.now == 999 || q.now == prev.at);
	MR_CHECK_EQ(mrsim_evq_pop(&q, &e), 0);
	MR_CHECK(e.at == prev.at);
	mrsim_evq_fini(&q);
}

/*
 * Host 0 -> host 16 across the fabric: leaf 0 -> spine -> leaf 1 ->
 * host. Store-and-forward: each hop costs its serialisation at its rate
 * plus the link delay. Two back-to-back packets: the second arrives one
 * bottleneck serialisation later.
 */
static void test_timing(void)
{
	static const char *const kv[] = {
		"hosts",     "32",  "hosts_per_leaf", "16",  "spines",	"2",
		"link_gbps", "100", "delay_ns",	      "500", "oversub", "4",
		NULL
	};
	struct mrsim_world *w = mk(kv);
	struct mrsim_port in = inject_at(&w->leaf[0]);
	uint64_t at = 0, wire = 1000 + MRSIM_WIRE_OVERHEAD;
	uint64_t ser_h = wire * 8000000 / w->host_mbps;
	uint64_t ser_u = wire * 8000000 / w->up_mbps;

	/* 16 hosts x 100 Gb/s over 2 spines at 4:1: 200 Gb/s uplinks */
	MR_CHECK_EQ(w->up_mbps, 200000);
	mrsim_arrive(w, pkt(w, &in, 0, 16, 1234, 1000));
	MR_CHECK_EQ(run(w, &at), 1);
	MR_CHECK_EQ(at, 2 * ser_u + ser_h + 3 * 500000);
	mrsim_arrive(w, pkt(w, &in, 0, 16, 1234, 1000));
	mrsim_arrive(w, pkt(w, &in, 0, 16, 1234, 1000));
	{
		uint64_t t0 = w->q.now;

		MR_CHECK_EQ(run(w, &at), 2);
		/* the second waits behind the first at every hop; the
		 * slowest hop (the host link) sets the gap */
		MR_CHECK_EQ(at - t0, 2 * ser_u + ser_h + 3 * 500000 + ser_u +
					     (ser_h - ser_u));
	}
	rm(w);
}

/*
 * Two senders at line rate into one 100 Gb/s port for 200 packets each:
 * the queue stands at (in - out) x t, i.e. grows one packet per
 * serialisation; the port sends at exactly its rate. With a buffer of
 * 64 KiB, what does not fit is dropped (drop-tail), no more, no less.
 */
static void test_standing_queue(void)
{
	static const char *const kv[] = { "hosts",     "4",	   "link_gbps",
					  "100",       "delay_ns", "0",
					  "buffer_kb", "100000",   "ecn_kb",
					  "0",	       NULL };
	static const char *const kv2[] = { "hosts",    "4",  "link_gbps", "100",
					   "delay_ns", "0",  "buffer_kb", "64",
					   "ecn_kb",   "16", NULL };
	struct mrsim_world *w = mk(kv);
	struct mrsim_port in = inject_at(&w->leaf[0]);
	uint64_t wire = 4000 + MRSIM_WIRE_OVERHEAD, at = 0;
	uint64_t ser = wire * 8000000 / w->host_mbps;
	struct mrsim_port *out = w->leaf[0].down[3];
	int i, n = 200, got = 0;

	for (i = 0; i < n; i++) {
		/* both senders' packets arrive at i x ser */
		got += run_to(w, (uint64_t)i * ser, &at);
		mrsim_arrive(w, pkt(w, &in, 1, 3, 1, 4000));
		mrsim_arrive(w, pkt(w, &in, 2, 3, 1, 4000));
	}
	/* after the last pair: n packets sent or in service, n queued */
	MR_CHECK(out->qmax >= (uint64_t)(n - 1) * wire &&
		 out->qmax <= (uint64_t)(n + 1) * wire);
	MR_CHECK_EQ(got + run(w, &at), 2 * n);
	MR_CHECK_EQ(at, 2 * (uint64_t)n * ser); /* exactly the line rate */
	MR_CHECK_EQ(out->drops_overflow, 0);
	MR_CHECK_EQ(out->ecn_marked, 0);
	rm(w);

	w = mk(kv2);
	in = inject_at(&w->leaf[0]);
	out = w->leaf[0].down[3];
	for (i = 0; i < n; i++) {
		run_to(w, (uint64_t)i * ser, &at);
		mrsim_arrive(w, pkt(w, &in, 1, 3, 1, 4000));
		mrsim_arrive(w, pkt(w, &in, 2, 3, 1, 4000));
	}
	run(w, &at);
	{
		/* the queue holds floor(64 KiB / wire) packets; once full,
		 * of each pair one fits (one left) and one is dropped */
		uint64_t fit = 65536 / wire;

		MR_CHECK(out->qmax <= 65536 && out->qmax >= (fit - 1) * wire);
		MR_CHECK(out->drops_overflow + fit >= (uint64_t)n - 2 &&
			 out->drops_overflow + fit <= (uint64_t)n + 2);
		MR_CHECK_EQ(out->tx_pkts + out->drops_overflow, 2 * n);
		/* step marking at 16 KiB: every packet that found 16 KiB or
		 * more waiting. The queue grows one packet per pair, so
		 * both packets of the first ceil(16 KiB / wire) pairs pass
		 * unmarked, and the first of the next. */
		uint64_t k = (16384 + wire - 1) / wire;

		MR_CHECK(out->tx_pkts - out->ecn_marked >= 2 * k - 1 &&
			 out->tx_pkts - out->ecn_marked <= 2 * k + 1);
	}
	rm(w);
}

/* 8 spines, 8,000 source ports: chi-square against uniform below the
 * 0.1% critical value of 7 degrees of freedom (24.32); another switch
 * seed maps most ports elsewhere; the leaf spreads real packets so. */
static void test_ecmp_spread(void)
{
	static const char *const kv[] = { "hosts", "32",     "hosts_per_leaf",
					  "16",	   "spines", "8",
					  NULL };
	struct mrsim_world *w = mk(kv);
	struct mrsim_port in = inject_at(&w->leaf[0]);
	uint64_t cnt[8] = { 0 }, at;
	double chi = 0, e = 8000 / 8.0;
	int i, same = 0;

	for (i = 0; i < 8000; i++) {
		uint32_t a = mrsim_ecmp_hash(w->leaf[0].seed, 3, 20,
					     (uint16_t)(49152 + i), 4791) %
			     8;
		uint32_t b = mrsim_ecmp_hash(w->leaf[0].seed ^ 1, 3, 20,
					     (uint16_t)(49152 + i), 4791) %
			     8;

		same += a == b;
		mrsim_arrive(w, pkt(w, &in, 3, 20, (uint16_t)(49152 + i), 64));
	}
	MR_CHECK(run(w, &at) == 8000);
	for (i = 0; i < 8; i++)
		cnt[i] = w->leaf[0].up[i]->tx_pkts;
	for (i = 0; i < 8; i++)
		chi += (cnt[i] - e) * (cnt[i] - e) / e;
	fprintf(stderr, "ecmp chi-square %.2f (critical 24.32)\n", chi);
	MR_CHECK(chi < 24.32);
	MR_CHECK(same < 1500); /* ~1000 expected by chance */
	/* one source port always takes the same spine */
	for (i = 0; i < 8; i++)
		cnt[i] = w->leaf[0].up[i]->tx_pkts;
	for (i = 0; i < 10; i++)
		mrsim_arrive(w, pkt(w, &in, 3, 20, 50000, 64));
	run(w, &at);
	{
		int moved = 0;

		for (i = 0; i < 8; i++)
			moved += w->leaf[0].up[i]->tx_pkts != cnt[i];
		MR_CHECK_EQ(moved, 1);
	}
	rm(w);
}

/* A failed plane and a failed leaf-spine link carry nothing while they
 * are down, and carry again once they recover. */
static void test_failed_link(void)
{
	static const char *const kv[] = { "hosts",
					  "32",
					  "hosts_per_leaf",
					  "16",
					  "spines",
					  "2",
					  "planes",
					  "2",
					  "fail",
					  "plane=1,at=0,until=100us",
					  "fail",
					  "plane=0,leaf=0,spine=1,at=0",
					  NULL };
	struct mrsim_world *w = mk(kv);
	struct mrsim_port in1 = inject_at(&w->leaf[1 * w->leaves + 0]);
	struct mrsim_port in0 = inject_at(&w->leaf[0]);
	uint64_t at = 0;
	int i, got;

	/* plane 1, same leaf and across: nothing arrives */
	for (i = 0; i < 50; i++) {
		mrsim_arrive(w, pkt(w, &in1, 0, 1, (uint16_t)i, 100));
		mrsim_arrive(w, pkt(w, &in1, 0, 20, (uint16_t)i, 100));
	}
	MR_CHECK_EQ(run(w, &at), 0);
	for (i = 0; i < w->nport; i++)
		if (w->port[i]->plane == 1)
			MR_CHECK_EQ(w->port[i]->tx_pkts,
				    w->port[i]->drops_failed);
	/* plane 0: only what hashes to spine 0 gets across; spine 1's
	 * uplink from leaf 0 drops everything it is given */
	for (i = 0; i < 200; i++)
		mrsim_arrive(w, pkt(w, &in0, 0, 20, (uint16_t)i, 100));
	got = run(w, &at);
	MR_CHECK_EQ(got, (int)w->leaf[0].up[0]->tx_pkts);
	MR_CHECK(w->leaf[0].up[1]->tx_pkts > 50);
	MR_CHECK_EQ(w->leaf[0].up[1]->drops_failed, w->leaf[0].up[1]->tx_pkts);
	MR_CHECK_EQ(w->spine[1].down[1]->tx_pkts, 0);
	/* plane 1 recovers at 100 us */
	w->q.now = 100000000;
	for (i = 0; i < 50; i++)
		mrsim_arrive(w, pkt(w, &in1, 0, 20, (uint16_t)i, 100));
	MR_CHECK_EQ(run(w, &at), 50);
	rm(w);
}

MR_TEST_MAIN(MR_TEST(test_event_order), MR_TEST(test_timing),
	     MR_TEST(test_standing_queue), MR_TEST(test_ecmp_spread),
	     MR_TEST(test_failed_link))
