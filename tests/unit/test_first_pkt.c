// SPDX-License-Identifier: BSD-2-Clause
/*
 * MR-CC-16 between two endpoints: with first_pkt_bytes set, a metaroce
 * RC connection's new request packets carry at most that many bytes
 * until its first ACK, then the path MTU; offsets follow the bytes sent,
 * not packet index x MTU. A retransmission carries exactly the bytes of
 * its first transmission (after loss, a tail probe, an RNR rewind),
 * READ responses and the gbn baseline stay MTU-sized. Every byte of
 * every message compared, every data packet's (ssn, offset, length)
 * checked by a tap on the link.
 */
#include "engine_world.h"
#include "mr_engine.h" /* white box: the connection's first ACK */
#include "mr_test.h"
#include "mr_wire.h"

#define FIRST 256u /* first_pkt_bytes; the path MTU is 1024 */
#define NSSN 4096u

static struct world w;
static uint8_t src[1 << 16], dst[1 << 16], back[1 << 16], rbuf[1 << 16];
static struct pair p;

/* What the tap saw of one direction's data packets. */
struct seen {
	uint32_t ssn0; /* the direction's first ssn */
	uint32_t off[NSSN], plen[NSSN];
	uint8_t have[NSSN];
	uint32_t next_off[64]; /* by msn: where the next new packet starts */
	uint32_t msg_len[64];
	unsigned pkts, retx, small, full, resp, resp_off_bad, bad;
};

static int is_req(uint8_t op)
{
	return op == MR_OP_WRITE || op == MR_OP_WRITE_IMM || op == MR_OP_SEND ||
	       op == MR_OP_SEND_IMM;
}

static void tap(struct link *l, const uint8_t *buf, size_t len)
{
	struct seen *s = l->tap_user;
	struct mr_pkt pkt;
	uint32_t i;

	if (mr_wire_parse(buf, len, &pkt) != MR_PARSE_OK)
		return;
	if (pkt.bth.opcode == MR_OP_READ_RESP) {
		/* Responses are not requests: MTU-sized from the start. */
		s->resp++;
		if (pkt.bth.offset % world_path_mtu ||
		    (pkt.payload_len != world_path_mtu &&
		     pkt.bth.offset + pkt.payload_len != pkt.bth.msg_len))
			s->resp_off_bad++;
		return;
	}
	if (!is_req(pkt.bth.opcode) || !pkt.payload_len)
		return;
	s->pkts++;
	i = (pkt.bth.ssn - s->ssn0) % NSSN;
	if (pkt.bth.flags & MR_BTH_F_RETX) {
		/* The same bytes as the first transmission of this ssn. */
		s->retx++;
		if (!s->have[i] || s->off[i] != pkt.bth.offset ||
		    s->plen[i] != pkt.payload_len)
			s->bad++;
		return;
	}
	if (s->have[i] || pkt.bth.msn >= 64) {
		s->bad++;
		return;
	}
	s->have[i] = 1;
	s->off[i] = pkt.bth.offset;
	s->plen[i] = pkt.payload_len;
	/* New packets of a message follow each other byte for byte. */
	if (pkt.bth.offset != s->next_off[pkt.bth.msn])
		s->bad++;
	s->next_off[pkt.bth.msn] += pkt.payload_len;
	s->msg_len[pkt.bth.msn] = pkt.bth.msg_len;
	/* ACK_REQ on the last packet only (MR-REQ-3). */
	if (!(pkt.bth.flags & MR_BTH_F_ACK_REQ) !=
	    (pkt.bth.offset + pkt.payload_len < pkt.bth.msg_len))
		s->bad++;
	if (pkt.payload_len == world_path_mtu)
		s->full++;
	else if (pkt.bth.offset + pkt.payload_len < pkt.bth.msg_len)
		s->small++;
}

static struct mr_ep_config first_cfg(uint32_t first, const char *cc)
{
	struct mr_ep_config c = base_cfg;

	c.first_pkt_bytes = first;
	if (cc)
		c.cc_metaroce = mr_cc_find(cc);
	return c;
}

static void setup(const struct mr_ep_config *c, enum mr_mode mode,
		  struct seen *s)
{
	memset(s, 0, sizeof(*s));
	MR_CHECK_EQ(world_init(&w, c), 0);
	connect_qps(&w, &p, mode, 64, NULL);
	fill(src, sizeof(src), 16);
	memset(dst, 0, sizeof(dst));
	memset(back, 0, sizeof(back));
	memset(rbuf, 0, sizeof(rbuf));
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 7, back, sizeof(back), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	reg(&w.n[1], 8, rbuf, sizeof(rbuf), MR_ACCESS_LOCAL_WRITE);
	s->ssn0 = p.a->req.snd_nxt;
	w.l[0].tap = tap;
	w.l[0].tap_user = s;
	w.l[1].tap = tap;
	w.l[1].tap_user = s;
}

/* Every message's new packets covered it whole. */
static int covered(const struct seen *s, uint32_t nmsg)
{
	uint32_t m;

	for (m = 0; m < nmsg; m++)
		if (s->msg_len[m] && s->next_off[m] != s->msg_len[m])
			return 0;
	return 1;
}

/* One WRITE of 20000 bytes, its first packet lost (found by the tail
 * probe or the RTO: no ACK, so still no hint) and a later one lost too:
 * one packet of FIRST bytes (the window before the hint is one packet,
 * MR-CC-5), then packets of the MTU from offset FIRST, the lost ones
 * sent again with their own bytes. */
static void test_write_loss(void)
{
	static const uint64_t drop[] = { 0, 6 };
	struct mr_ep_config c = first_cfg(FIRST, NULL);
	struct seen s;

	setup(&c, MR_MODE_METAROCE, &s);
	w.l[0].drop_idx = drop;
	w.l[0].ndrop = 2;
	MR_CHECK(!mr_cc_hinted(&p.a->cc));
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 20000, 5, dst + 1,
			      6, MR_SEND_SIGNALED, w.now),
		    0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst + 1, src, 20000);
	MR_CHECK_EQ(dst[0], 0);
	MR_CHECK_EQ(dst[20001], 0);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK(covered(&s, 64));
	MR_CHECK_EQ(s.small, 1);
	MR_CHECK_EQ(s.off[1], FIRST); /* the second packet's offset */
	MR_CHECK_EQ(s.plen[0], FIRST);
	/* 20000 = 256 + 19 x 1024 + 288 */
	MR_CHECK_EQ(s.full, 19);
	MR_CHECK_EQ(s.pkts - s.retx, 21);
	MR_CHECK(s.retx >= 2);
	MR_CHECK(mr_cc_hinted(&p.a->cc));
	MR_CHECK_EQ(mr_qp_counters(p.a)->tx_data_pkts, 21);
	destroy_pair(&p);
	world_fini(&w);
}

/* With a fixed window (no pacing, no one-packet start) every packet
 * sent before the first ACK is small: a run of WRITE, SEND, WRITE_IMM
 * and READ posted at once over a link losing 5% of its packets (seeded);
 * a second run after the first ACK is MTU-sized. */
static void test_mixed_fixed_loss(void)
{
	struct mr_ep_config c = first_cfg(FIRST, "fixed");
	struct seen s;
	unsigned small0;

	setup(&c, MR_MODE_METAROCE, &s);
	w.l[0].loss_ppm = 50000;
	w.l[1].loss_ppm = 50000;
	MR_CHECK_EQ(post_recv(p.b, 71, rbuf, 9000, 8), 0);
	MR_CHECK_EQ(post_recv(p.b, 72, NULL, 0, 0), 0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 12345, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 2, src + 12345, 9000, 5, NULL, 0,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 3, src + 21345,
			      3000, 5, dst + 12345, 6, MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 4, back, 15000, 7, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	want_a = 4;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	for (int i = 0; i < 4; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, i + 1);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
	}
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 9000);
	MR_CHECK_EQ(w.n[1].cqe[1].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst, src, 12345);
	MR_CHECK_MEM(rbuf, src + 12345, 9000);
	MR_CHECK_MEM(dst + 12345, src + 21345, 3000);
	MR_CHECK_MEM(back, dst, 15000);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK(covered(&s, 64));
	/* Everything left before the first ACK: all small. */
	MR_CHECK_EQ(s.full, 0);
	MR_CHECK(s.small >= 12345 / FIRST);
	MR_CHECK(s.retx > 0);
	MR_CHECK(s.resp >= 15);
	MR_CHECK_EQ(s.resp_off_bad, 0);
	small0 = s.small;
	/* After the first ACK: the MTU. */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 5, src, 10240, 5,
			      dst + 30000, 6, MR_SEND_SIGNALED, w.now),
		    0);
	want_a = 5;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[4].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst + 30000, src, 10240);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK_EQ(s.small, small0);
	MR_CHECK_EQ(s.full, 10);
	destroy_pair(&p);
	world_fini(&w);
}

/* A SEND refused for want of a receive (RNR NAK): that NAK is the first
 * ACK, so the rewind (MR-REQ-12) sends the first packet again at its
 * FIRST bytes and the rest of the message at the MTU; every byte lands
 * once the receive is posted. */
static void test_send_rnr(void)
{
	struct mr_ep_config c = first_cfg(FIRST, NULL);
	struct seen s;

	setup(&c, MR_MODE_METAROCE, &s);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 1, src, 5000, 5, NULL, 0,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK(run_until(&w, NULL, w.now + 1000000));
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	MR_CHECK(mr_qp_counters(p.a)->rnr_waits >= 1);
	MR_CHECK_EQ(post_recv(p.b, 9, rbuf, 8192, 8), 0);
	want_a = 1;
	want_b = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 5000);
	MR_CHECK_MEM(rbuf, src, 5000);
	MR_CHECK_EQ(rbuf[5000], 0);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK(covered(&s, 64));
	MR_CHECK_EQ(s.plen[0], FIRST);
	MR_CHECK_EQ(s.small, 1);
	MR_CHECK(s.retx >= 1);
	destroy_pair(&p);
	world_fini(&w);
}

/* gbn (the RoCEv2 baseline) and first_pkt_bytes 0: MTU-sized packets
 * from the first, offsets k x MTU (MR-REQ-3). */
static void test_off_and_gbn(void)
{
	struct mr_ep_config c = first_cfg(FIRST, NULL);
	struct mr_ep_config off = first_cfg(0, NULL);
	struct seen s;

	setup(&c, MR_MODE_GBN, &s);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 5000, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_MEM(dst, src, 5000);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK_EQ(s.small, 0);
	MR_CHECK_EQ(s.full, 4);
	destroy_pair(&p);
	world_fini(&w);

	setup(&off, MR_MODE_METAROCE, &s);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 5000, 5, dst, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_MEM(dst, src, 5000);
	MR_CHECK_EQ(s.bad, 0);
	MR_CHECK_EQ(s.small, 0);
	MR_CHECK_EQ(s.full, 4);
	MR_CHECK_EQ(s.off[1], 1024);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_write_loss), MR_TEST(test_mixed_fixed_loss),
	     MR_TEST(test_send_rnr), MR_TEST(test_off_and_gbn))
