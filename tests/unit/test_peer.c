// SPDX-License-Identifier: BSD-2-Clause
/*
 * Only the connected peer gets in (docs/spec/transport.md MR-RSP-1): a
 * WRITE, READ or atomic whose QPNs, rkey and sequence numbers are all
 * right but which comes from another source address changes no byte,
 * gets no answer (no ACK, no READ or atomic response) and is counted as
 * drop_peer_addr. The very same packet from the peer's address is then
 * accepted, which shows the forgery was otherwise perfect.
 */
#include "engine_world.h"
#include "mr_test.h"

#define PEER 0	  /* connect_qps() connects both QPs to address id 0 */
#define FORGER 42 /* any other host on the network */

static struct world w;
static uint8_t buf[8192];

/* Take the first packet node 0 transmits (the request just posted). */
static size_t take_request(uint8_t *out, size_t cap)
{
	struct mr_tx_meta meta;

	return mr_ep_tx(w.n[0].ep, w.now, out, cap, &meta);
}

static int b_sends_nothing(void)
{
	struct mr_tx_meta meta;

	return mr_ep_tx(w.n[1].ep, w.now, buf, sizeof(buf), &meta) == 0 &&
	       mr_ep_next_deadline(w.n[1].ep) == UINT64_MAX;
}

static void forged(enum mr_wr_opcode op)
{
	static uint8_t a[64], b[64], snap[64], pkt[4400];
	const struct mr_counters *cnt;
	struct mr_rx_meta from = { .src = FORGER };
	struct pair p;
	size_t len;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(a, sizeof(a), 9);
	fill(b, sizeof(b), 4);
	memcpy(snap, b, sizeof(b));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	if (op == MR_WR_ATOMIC_FETCH_AND_ADD) {
		struct mr_sge s = { (uint64_t)(uintptr_t)a, 8, 5 };
		struct mr_send_wr wr = {
			.wr_id = 1,
			.opcode = op,
			.flags = MR_SEND_SIGNALED,
			.sg_list = &s,
			.num_sge = 1,
			.remote_addr = (uint64_t)(uintptr_t)b,
			.rkey = 6,
			.compare_add = 0x1000,
		};

		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), 0);
	} else {
		MR_CHECK_EQ(post_send(p.a, op, 1, a, 48, 5, b + 8, 6, 0, w.now),
			    0);
	}
	len = take_request(pkt, sizeof(pkt));
	MR_CHECK(len > 0);
	/* The forgery, three times: nothing placed, nothing answered. */
	MR_CHECK(mr_ep_rx(w.n[1].ep, w.now, pkt, len, &from) < 0);
	MR_CHECK(mr_ep_rx(w.n[1].ep, w.now + 10, pkt, len, &from) < 0);
	MR_CHECK(mr_ep_rx(w.n[1].ep, w.now + 20, pkt, len, &from) < 0);
	MR_CHECK_MEM(b, snap, sizeof(b));
	MR_CHECK(b_sends_nothing());
	cnt = mr_qp_counters(p.b);
	MR_CHECK_EQ(cnt->drop_peer_addr, 3);
	MR_CHECK_EQ(cnt->msgs_rcvd + cnt->reads_executed +
			    cnt->atomics_executed + cnt->duplicates,
		    0);
	MR_CHECK_EQ(mr_ep_counters(w.n[1].ep)->drop_peer_addr, 3);
	/* The same bytes from the peer: taken and answered. */
	from.src = PEER;
	MR_CHECK_EQ(mr_ep_rx(w.n[1].ep, w.now + 30, pkt, len, &from), 0);
	w.now += 30;
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	if (op == MR_WR_RDMA_WRITE) {
		MR_CHECK_MEM(b + 8, a, 48);
	} else if (op == MR_WR_RDMA_READ) {
		MR_CHECK_MEM(a, snap + 8, 48);
		MR_CHECK_MEM(b, snap, sizeof(b));
	} else {
		uint64_t v0, v1;

		memcpy(&v0, snap, 8);
		memcpy(&v1, b, 8);
		MR_CHECK_EQ(v1, v0 + 0x1000);
		MR_CHECK_MEM(a, snap, 8);
	}
	MR_CHECK_EQ(mr_qp_counters(p.b)->drop_peer_addr, 3);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_forged_write(void)
{
	forged(MR_WR_RDMA_WRITE);
}

static void test_forged_read(void)
{
	forged(MR_WR_RDMA_READ);
}

static void test_forged_atomic(void)
{
	forged(MR_WR_ATOMIC_FETCH_AND_ADD);
}

/* ACKs from another address do not complete (or fail) the requester's
 * work: a forged ACK is dropped like a forged request. */
static void test_forged_ack(void)
{
	static uint8_t a[64], b[64], pkt[4400];
	struct mr_rx_meta from = { .src = PEER };
	struct mr_tx_meta meta;
	struct pair p;
	size_t len;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 48, 5, b, 6, 0, w.now),
		0);
	len = take_request(pkt, sizeof(pkt));
	MR_CHECK(len > 0);
	MR_CHECK_EQ(mr_ep_rx(w.n[1].ep, w.now, pkt, len, &from), 0);
	/* B's ACK (it ACKs a final packet at once or after its delay). */
	w.now += 100000;
	mr_ep_handle_expiry(w.n[1].ep, w.now);
	len = mr_ep_tx(w.n[1].ep, w.now, pkt, sizeof(pkt), &meta);
	MR_CHECK(len > 0);
	from.src = FORGER;
	MR_CHECK(mr_ep_rx(w.n[0].ep, w.now, pkt, len, &from) < 0);
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	MR_CHECK_EQ(mr_qp_counters(p.a)->drop_peer_addr, 1);
	from.src = PEER;
	MR_CHECK_EQ(mr_ep_rx(w.n[0].ep, w.now, pkt, len, &from), 0);
	MR_CHECK_EQ(w.n[0].ncqe, 1);
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_forged_write), MR_TEST(test_forged_read),
	     MR_TEST(test_forged_atomic), MR_TEST(test_forged_ack))
