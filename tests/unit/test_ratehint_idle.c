// SPDX-License-Identifier: BSD-2-Clause
/* MR-CC-14 between two endpoints: a sender marks IDLE the packet after
 * which it has no new data queued (the last packet of its last message,
 * and a retransmission sent while nothing new waits), and the receiver's
 * rate hint stops counting the connection when that packet arrives.
 * Every byte compared. */
#include "engine_world.h"
#include "mr_engine.h" /* white box: the receiver's rate hint */
#include "mr_test.h"
#include "mr_wire.h"

static struct world w;
static uint8_t src[16384], dst[16384];
static struct pair p;

/* What the tap saw of node 0's data packets (WRITE). */
struct seen {
	unsigned n, idle, retx_idle;
	uint32_t idle_msn[8], idle_off[8];
};

static void tap(struct link *l, const uint8_t *buf, size_t len)
{
	struct seen *s = l->tap_user;
	struct mr_pkt pkt;

	if (mr_wire_parse(buf, len, &pkt) != MR_PARSE_OK ||
	    pkt.bth.opcode != MR_OP_WRITE)
		return;
	s->n++;
	if (!(pkt.bth.flags & MR_BTH_F_IDLE))
		return;
	if (pkt.bth.flags & MR_BTH_F_RETX)
		s->retx_idle++;
	if (s->idle < 8) {
		s->idle_msn[s->idle] = pkt.bth.msn;
		s->idle_off[s->idle] = pkt.bth.offset;
	}
	s->idle++;
}

static void setup(void)
{
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(src, sizeof(src), 9);
	memset(dst, 0, sizeof(dst));
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
}

static void run_writes(int n)
{
	want_a = n;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].ncqe, n);
}

/* Two WRITEs of 3 packets (path MTU 1024) posted together: only the
 * last packet of the second is IDLE; one posted later: its last too.
 * The receiver's hint lists the connection while it sends and drops it
 * when the IDLE packet arrives. */
static void test_idle_last_packet(void)
{
	struct seen s = { 0 };
	uint32_t msn0;

	setup();
	w.l[0].tap = tap;
	w.l[0].tap_user = &s;
	msn0 = p.a->sq.next;
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 3000, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 2, src + 3000, 3000, 5,
			      dst + 3000, 6, MR_SEND_SIGNALED, w.now),
		    0);
	run_writes(2);
	MR_CHECK_EQ(s.n, 6);
	MR_CHECK_EQ(s.idle, 1);
	MR_CHECK_EQ(s.idle_msn[0], msn0 + 1);
	MR_CHECK_EQ(s.idle_off[0], 2048);
	/* MR-CC-14: the receiver no longer counts the connection. */
	MR_CHECK_EQ(w.n[1].ep->rh.nact, 0);
	MR_CHECK_EQ(w.n[1].ep->rh.nnew, 0);
	MR_CHECK(p.b->rsp.rh.idle);
	MR_CHECK_EQ(mr_ratehint_get(&w.n[1].ep->rh, w.now),
		    w.n[1].ep->rh.link_mbps);
	MR_CHECK_MEM(dst, src, 6000);

	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 3, src + 6000, 2500, 5,
			      dst + 6000, 6, MR_SEND_SIGNALED, w.now),
		    0);
	run_writes(3);
	MR_CHECK_EQ(s.n, 9);
	MR_CHECK_EQ(s.idle, 2);
	MR_CHECK_EQ(s.idle_msn[1], msn0 + 2);
	MR_CHECK_EQ(s.idle_off[1], 2048);
	MR_CHECK_MEM(dst, src, 8500);
	destroy_pair(&p);
	world_fini(&w);
}

/* A packet lost after the queue drained is resent IDLE (nothing new
 * waits); a loss while more is queued is resent without it. */
static void test_idle_retransmission(void)
{
	static const uint64_t drop[] = { 1, 5 }; /* 2nd and last of 6 */
	struct seen s = { 0 };

	setup();
	w.l[0].tap = tap;
	w.l[0].tap_user = &s;
	w.l[0].drop_idx = drop;
	w.l[0].ndrop = 2;
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 6000, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	run_writes(1);
	MR_CHECK(s.n >= 8);
	MR_CHECK(mr_qp_counters(p.a)->retx_pkts >= 2);
	/* Both retransmissions leave after the last new packet: IDLE. */
	MR_CHECK_EQ(s.retx_idle, s.n - 6);
	MR_CHECK_EQ(s.idle, 1 + s.retx_idle);
	MR_CHECK_EQ(w.n[1].ep->rh.nact, 0);
	MR_CHECK_MEM(dst, src, 6000);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_idle_last_packet),
	     MR_TEST(test_idle_retransmission))
