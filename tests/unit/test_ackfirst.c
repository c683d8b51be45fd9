// SPDX-License-Identifier: BSD-2-Clause
/*
 * An ACK that fell due goes out before the other QPs' data
 * (docs/spec/transport.md MR-REQ-5): node 1 has three QPs with data
 * queued ahead of a fourth when node 0's one-packet WRITE arrives on
 * that fourth; once that packet's ACK is due, node 1's next packet is the ACK,
 * and the data of the three QPs follows, one packet each, as before.
 * Both modes: the go-back-N QPs of the baseline share the scheduler.
 */
#include "engine_world.h"
#include "mr_test.h"
#include "mr_wire.h"

#define NQ 4

static struct world w;
static uint8_t src0[512], dst1[512], src1[3 * 8192], dst0[3 * 8192];
static uint8_t pkt[4400];

static void connect_nth(struct pair *p, int i, enum mr_mode mode)
{
	const struct mr_qp_config c = {
		.type = MR_QPT_RC,
		.mode = mode,
		.pd = 1,
		.max_send_wr = 8,
		.max_recv_wr = 8,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	const struct world_conn k = {
		.qpn = { 0x100u + (uint32_t)i, 0x200u + (uint32_t)i },
		.rq_psn = { 0x7000, 0x1000 },
		.sq_psn = { 0x1000, 0x7000 },
		.path_mtu = world_path_mtu,
		.rd_atomic = 4,
		.min_rnr_timer = 1,
		.timeout = 10,
		.rts = 2,
	};

	world_connect(&w, p, &c, &k);
}

/* The BTH opcode of a packet mr_ep_tx() wrote. */
static uint8_t opcode(const uint8_t *b)
{
	return b[1];
}

static void ack_first(enum mr_mode mode)
{
	struct pair p[NQ];
	struct mr_tx_meta meta;
	struct mr_pkt parsed;
	size_t len;
	int i, acks = 0, data = 0;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	/* A QP is queued when it goes to RTS: QP 0 last, behind 1..3. */
	for (i = 1; i <= NQ; i++)
		connect_nth(&p[i % NQ], i % NQ, mode);
	reg(&w.n[0], 5, src0, sizeof(src0), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst1, sizeof(dst1), RW);
	reg(&w.n[1], 7, src1, sizeof(src1), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 8, dst0, sizeof(dst0), RW);
	/* Node 1's QPs 1..3 queue 8 KiB each (8 packets): kicked first. */
	for (i = 1; i < NQ; i++)
		MR_CHECK_EQ(post_send(p[i].b, MR_WR_RDMA_WRITE, (uint64_t)i,
				      src1 + (i - 1) * 8192, 8192, 7,
				      dst0 + (i - 1) * 8192, 8, 0, w.now),
			    0);
	/* Node 0's QP 0: one packet, delivered to node 1. */
	MR_CHECK_EQ(post_send(p[0].a, MR_WR_RDMA_WRITE, 9, src0,
			      sizeof(src0), 5, dst1, 6, MR_SEND_SIGNALED,
			      w.now),
		    0);
	len = mr_ep_tx(w.n[0].ep, w.now, pkt, sizeof(pkt), &meta);
	MR_CHECK(len > 0);
	w.now += 1000;
	MR_CHECK_EQ(mr_ep_rx(w.n[1].ep, w.now, pkt, len, NULL), 0);
	/* Its ACK falls due at the latest ack_delay_ns later. */
	w.now += 3000;
	if (mr_ep_next_deadline(w.n[1].ep) <= w.now)
		mr_ep_handle_expiry(w.n[1].ep, w.now);
	len = mr_ep_tx(w.n[1].ep, w.now, pkt, sizeof(pkt), &meta);
	MR_CHECK(len > 0);
	MR_CHECK_EQ(opcode(pkt), MR_OP_ACK);
	MR_CHECK_EQ(mr_wire_parse(pkt, len, &parsed), 0);
	MR_CHECK_EQ(parsed.bth.dqpn, 0x100u);
	/* Then the data, round robin: one packet of each of QPs 1..3. */
	for (i = 0; i < 3; i++) {
		len = mr_ep_tx(w.n[1].ep, w.now, pkt, sizeof(pkt), &meta);
		MR_CHECK(len > 0);
		MR_CHECK_EQ(mr_wire_parse(pkt, len, &parsed), 0);
		if (opcode(pkt) == MR_OP_ACK)
			acks++;
		else
			data++;
		MR_CHECK_EQ(parsed.bth.dqpn, 0x101u + (uint32_t)i);
	}
	MR_CHECK_EQ(acks, 0);
	MR_CHECK_EQ(data, 3);
	for (i = 0; i < NQ; i++)
		destroy_pair(&p[i]);
	world_fini(&w);
}

static void test_ack_first_metaroce(void)
{
	ack_first(MR_MODE_METAROCE);
}

static void test_ack_first_gbn(void)
{
	ack_first(MR_MODE_GBN);
}

MR_TEST_MAIN(MR_TEST(test_ack_first_metaroce), MR_TEST(test_ack_first_gbn))
