// SPDX-License-Identifier: BSD-2-Clause
/* The tail-loss probe (docs/spec/reliability.md MR-TMR-9) and the RTO of a
 * path without an RTT sample (MR-TMR-2), between two endpoints of 4 paths:
 * a lost packet with nothing in flight behind it is resent on another
 * path after a probe timeout instead of waiting for an RTO, once per
 * silence, every byte compared. Counters only: no timing is asserted. */
#include "engine_world.h"
#include "mr_engine.h" /* white box: the QP's paths */
#include "mr_test.h"

static struct world w;
static uint8_t src[8192], dst[8192];
static struct pair p;

static void setup_cfg(const struct mr_ep_config *cfg, uint32_t seed)
{
	MR_CHECK_EQ(world_init(&w, cfg), 0);
	MR_CHECK(base_cfg.num_paths > 1);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(src, sizeof(src), seed);
	memset(dst, 0, sizeof(dst));
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
}

static void setup(uint32_t seed)
{
	setup_cfg(&base_cfg, seed);
}

/* One WRITE of one packet at off, run to its completion. */
static void write_one(uint64_t wr_id, uint32_t off)
{
	int before = w.n[0].ncqe;

	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, wr_id, src + off, 512, 5,
			      dst + off, 6, MR_SEND_SIGNALED, w.now),
		    0);
	want_a = before + 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].ncqe, before + 1);
	MR_CHECK_EQ(w.n[0].cqe[before].wr_id, wr_id);
	MR_CHECK_EQ(w.n[0].cqe[before].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst + off, src + off, 512);
}

static uint64_t retx_on_paths_other_than(uint16_t path)
{
	uint64_t n = 0;
	uint16_t i;

	for (i = 0; i < p.a->npaths; i++)
		if (i != path)
			n += p.a->ptx[i].retx_pkts;
	return n;
}

/* MR-TMR-9: the connection's very first packet is lost (no RTT sample
 * anywhere yet): the probe timeout, half the initial RTO, resends
 * it on another path; no RTO, no suspicion. */
static void test_first_packet_lost(void)
{
	static const uint64_t drop[] = { 0 };
	const struct mr_counters *c;
	uint16_t i, first = 0;

	setup(1);
	w.l[0].drop_idx = drop;
	w.l[0].ndrop = 1;
	write_one(1, 0);
	c = mr_qp_counters(p.a);
	for (i = 0; i < p.a->npaths; i++)
		if (p.a->ptx[i].lost_tail)
			first = i;
	MR_CHECK_EQ(c->tail_probes, 1);
	MR_CHECK_EQ(c->timeouts, 0);
	MR_CHECK_EQ(c->path_suspects, 0);
	MR_CHECK_EQ(c->retx_pkts, 1);
	/* The path the first packet took (spray's round robin starts at a
	 * drawn path, MR-MP-11): its loss is the probe's, the resend is on
	 * another path. */
	MR_CHECK_EQ(p.a->ptx[first].lost_tail, 1);
	MR_CHECK_EQ(p.a->ptx[first].retx_pkts, 0);
	MR_CHECK_EQ(retx_on_paths_other_than(first), 1);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-TMR-9: with RTT samples, a lone packet whose ACK is lost: the probe
 * resends it elsewhere, the receiver counts a duplicate and ACKs again. */
static void test_lone_ack_lost(void)
{
	static uint64_t drop[1];
	const struct mr_counters *c;
	uint64_t dup;

	setup(2);
	write_one(1, 0);
	write_one(2, 512);
	write_one(3, 1024);
	MR_CHECK(p.a->ptx[0].srtt > 0);
	MR_CHECK_EQ(mr_qp_counters(p.a)->tail_probes, 0);
	dup = mr_qp_counters(p.b)->duplicates;
	drop[0] = w.l[1].sent; /* the next ACK of b */
	w.l[1].drop_idx = drop;
	w.l[1].ndrop = 1;
	write_one(4, 1536);
	c = mr_qp_counters(p.a);
	MR_CHECK_EQ(c->tail_probes, 1);
	MR_CHECK_EQ(c->timeouts, 0);
	MR_CHECK_EQ(mr_qp_counters(p.b)->duplicates, dup + 1);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-TMR-2: a path with no RTT sample of its own takes the RTO of the
 * connection's best path once that one has a sample, not the initial
 * RTO: its first packet may be a retransmission. A configured base RTT
 * far above the link's makes the initial RTO (10 x it) the larger. */
static void test_rto_seeded(void)
{
	struct mr_ep_config cfg = base_cfg;
	uint16_t i, fresh = 0, sampled = 0;
	uint64_t init;
	int found = 0;

	cfg.base_rtt_ns = 100000;
	setup_cfg(&cfg, 3);
	init = p.a->ptx[1].rto;
	MR_CHECK_EQ(init, p.a->ptx[2].rto);
	write_one(1, 0);
	for (i = 0; i < p.a->npaths; i++) {
		if (!p.a->ptx[i].srtt) {
			fresh = i;
			found = 1;
		} else {
			sampled = i; /* the path of the one packet (MR-MP-11) */
		}
	}
	MR_CHECK(found); /* one packet: at most one path was sampled */
	MR_CHECK(p.a->ptx[sampled].srtt > 0);
	MR_CHECK(p.a->ptx[sampled].rto < init);
	MR_CHECK_EQ(p.a->ptx[fresh].rto, p.a->ptx[sampled].rto);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-TMR-9, MR-TMR-7: a peer that answers on no path gets one probe per
 * silence, then the RTOs and retry_cnt fail the WQE as before. */
static void test_dead_peer_one_probe(void)
{
	const struct mr_counters *c;

	setup(4);
	set_rts_attr(p.a, MR_QP_RETRY_CNT | MR_QP_TIMEOUT, 3);
	w.l[0].drop_all = 1;
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 512, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 10000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_RETRY_EXC_ERR);
	c = mr_qp_counters(p.a);
	MR_CHECK_EQ(c->tail_probes, 1);
	MR_CHECK(c->timeouts >= 4);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_first_packet_lost), MR_TEST(test_lone_ack_lost),
	     MR_TEST(test_rto_seeded), MR_TEST(test_dead_peer_one_probe))
