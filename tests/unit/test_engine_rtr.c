// SPDX-License-Identifier: BSD-2-Clause
/*
 * A responder left in RTR (perftest's passive side, transport.md
 * MR-RSP-10/11): it never gets an sq_psn, and the requester's rq_psn is a
 * number the responder never saw. READs and atomics must still complete
 * with every byte right, with loss, and a window once established must
 * never be moved by a response's rsn.
 */
#include "engine_world.h"

static struct world w;

/* a: requester in RTS, rq_psn 0x123456 (what the passive side advertised
 * but never gave its QP); b: responder left in RTR. */
static void connect_rtr(struct pair *p, enum mr_mode mode)
{
	struct mr_qp_config c = {
		.type = MR_QPT_RC,
		.mode = mode,
		.pd = 1,
		.max_send_wr = 64,
		.max_recv_wr = 64,
		.max_send_sge = 4,
		.max_recv_sge = 4,
	};
	static const struct world_conn k = {
		.qpn = { 0x11, 0x22 },
		.rq_psn = { 0x123456, 0xfffffffau },
		.sq_psn = { 0xfffffffau },
		.path_mtu = 1024,
		.rd_atomic = 4,
		.min_rnr_timer = 1,
		.timeout = 14,
		.rts = 1,
	};

	world_connect(&w, p, &c, &k);
}

static void run_reads(enum mr_mode mode, uint32_t loss_ppm)
{
	static uint8_t src[300000], dst[300000];
	static uint64_t ctr_w, old_w;
	uint8_t *ctr = (uint8_t *)&ctr_w, *old = (uint8_t *)&old_w;
	struct pair p = { 0 };
	uint64_t v = 40;
	int i;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	w.l[0].loss_ppm = w.l[1].loss_ppm = loss_ppm;
	fill(src, sizeof(src), 7);
	memset(dst, 0, sizeof(dst));
	memcpy(ctr, &v, 8);
	reg(&w.n[1], 0x100, src, sizeof(src), RW);
	reg(&w.n[1], 0x101, ctr, 8, RW);
	reg(&w.n[0], 0x200, dst, sizeof(dst), RW);
	reg(&w.n[0], 0x201, old, 8, RW);
	connect_rtr(&p, mode);
	MR_CHECK(p.a && p.b);
	/* Three READs of different sizes, then a FETCH_ADD. */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 1, dst, 1, 0x200, src,
			      0x100, MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 2, dst + 1, 5000, 0x200,
			      src + 1, 0x100, MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 3, dst + 5001, 294999,
			      0x200, src + 5001, 0x100, MR_SEND_SIGNALED,
			      w.now),
		    0);
	{
		struct mr_sge sge = { (uint64_t)(uintptr_t)old, 8, 0x201 };
		struct mr_send_wr wr = {
			.wr_id = 4,
			.opcode = MR_WR_ATOMIC_FETCH_AND_ADD,
			.flags = MR_SEND_SIGNALED,
			.sg_list = &sge,
			.num_sge = 1,
			.remote_addr = (uint64_t)(uintptr_t)ctr,
			.rkey = 0x101,
			.compare_add = 8,
		};

		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), 0);
	}
	want_a = 4;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, 5000000000ULL));
	MR_CHECK_EQ(w.n[0].ncqe, 4);
	for (i = 0; i < 4; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, (uint64_t)i + 1);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
	}
	MR_CHECK_EQ(w.n[0].cqe[3].opcode, MR_WC_FETCH_ADD);
	MR_CHECK_MEM(dst, src, sizeof(src));
	memcpy(&v, old, 8);
	MR_CHECK_EQ(v, 40);
	memcpy(&v, ctr, 8);
	MR_CHECK_EQ(v, 48);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_read_from_rtr(void)
{
	run_reads(MR_MODE_METAROCE, 0);
}

static void test_read_from_rtr_loss(void)
{
	run_reads(MR_MODE_METAROCE, 100000);
}

static void test_read_from_rtr_gbn(void)
{
	run_reads(MR_MODE_GBN, 20000);
}

MR_TEST_MAIN(MR_TEST(test_read_from_rtr), MR_TEST(test_read_from_rtr_loss),
	     MR_TEST(test_read_from_rtr_gbn))
