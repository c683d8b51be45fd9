// SPDX-License-Identifier: BSD-2-Clause
/*
 * ATOMIC WRITE (docs/spec/transport.md MR-AW-1..5, wire.md MR-EXT-9)
 * between two endpoints of the scripted link: the 8 bytes from an SGE,
 * inline or from the WR itself; placed only after every earlier WRITE
 * (MR-AW-3 over MR-ORD-2, with the packets reversed); a window gone
 * before its turn (MR-AW-5); a lost response
 * answered from the record, never executed twice (MR-RSP-6); the bad
 * cases (misaligned, no REMOTE_WRITE, outside the region, refused posts)
 * with their IB statuses and every byte of memory compared.
 */
#include "engine_world.h"
#include "mr_test.h"

static const uint8_t val[8] = {
	0xa1, 0xb2, 0xc3, 0xd4, 0xe5, 0xf6, 0x07, 0x18
};

static int aw(struct mr_qp *qp, uint64_t wr_id, const struct mr_sge *s,
	      unsigned nsge, unsigned flags, const void *raddr, uint32_t rkey,
	      uint64_t now)
{
	struct mr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = MR_WR_ATOMIC_WRITE,
		.flags = flags | MR_SEND_SIGNALED,
		.sg_list = s,
		.num_sge = nsge,
		.remote_addr = (uint64_t)(uintptr_t)raddr,
		.rkey = rkey,
	};

	if (!nsge)
		memcpy(&wr.swap, val, 8);
	return mr_qp_post_send(qp, &wr, now);
}

/* MR-AW-1, MR-AW-2, MR-EXT-9: three forms of the 8 bytes, each placed as
 * given, the source untouched (a response places nothing), the CQE. */
static void test_forms(void)
{
	static struct world w;
	static uint8_t src[64], b[4096], ref[4096];
	struct mr_sge s[2] = { { (uint64_t)(uintptr_t)src, 3, 5 },
			       { (uint64_t)(uintptr_t)(src + 3), 5, 5 } };
	struct pair p;
	int i;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	memcpy(src, val, 8);
	fill(src + 8, sizeof(src) - 8, 3);
	fill(b, sizeof(b), 4);
	memcpy(ref, b, sizeof(b));
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	/* REMOTE_WRITE alone is enough (MR-AW-4) */
	reg(&w.n[1], 6, b, sizeof(b), MR_ACCESS_REMOTE_WRITE);
	MR_CHECK_EQ(aw(p.a, 1, s, 2, 0, b + 8, 6, w.now), 0);
	MR_CHECK_EQ(aw(p.a, 2, s, 2, MR_SEND_INLINE, b + 1024, 6, w.now), 0);
	MR_CHECK_EQ(aw(p.a, 3, NULL, 0, 0, b + 4088, 6, w.now), 0);
	/* the buffers may change as soon as the post returns */
	memset(src, 0x5a, 8);
	want_a = 3;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	for (i = 0; i < 3; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, i + 1);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
		MR_CHECK_EQ(w.n[0].cqe[i].opcode, MR_WC_ATOMIC_WRITE);
		MR_CHECK_EQ(w.n[0].cqe[i].byte_len, 8);
	}
	memcpy(ref + 8, val, 8);
	memcpy(ref + 1024, val, 8);
	memcpy(ref + 4088, val, 8);
	MR_CHECK_MEM(b, ref, sizeof(b));
	for (i = 0; i < 8; i++)
		MR_CHECK_EQ(src[i], 0x5a); /* nothing placed back */
	MR_CHECK_EQ(w.n[1].ncqe, 0);
	MR_CHECK_EQ(mr_qp_counters(p.b)->atomics_executed, 3);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-AW-3 (MR-ORD-2): a WRITE of 8 packets, then an ATOMIC_WRITE into the
 * middle of it, the packets delivered in reverse: the 8 bytes arrive
 * first yet are placed after every byte of the WRITE, so they survive. */
static void test_after_writes(void)
{
	static struct world w;
	static uint8_t a[8192], b[8192], ref[8192];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(a, sizeof(a), 5);
	memset(b, 0, sizeof(b));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	w.l[0].reverse_next = 9;
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, a, sizeof(a), 5, b, 6,
			      0, w.now),
		    0);
	MR_CHECK_EQ(aw(p.a, 2, NULL, 0, 0, b + 4096, 6, w.now), 0);
	want_a = 2;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[1].opcode, MR_WC_ATOMIC_WRITE);
	memcpy(ref, a, sizeof(a));
	memcpy(ref + 4096, val, 8);
	MR_CHECK_MEM(b, ref, sizeof(b));
	destroy_pair(&p);
	world_fini(&w);
}

static uint8_t *dup_word;

static int word_rewritten(struct world *w)
{
	(void)w;
	return !memcmp(dup_word, "WRITTEN!", 8);
}

/* MR-RSP-6 for ATOMIC_WRITE: its response is lost, the WRITE after it
 * overwrites the word, the requester resends the ATOMIC_WRITE: the
 * responder answers from its record and does not store again. */
static void test_lost_response(void)
{
	static struct world w;
	static uint8_t a[8], b[64];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	memcpy(a, "WRITTEN!", 8);
	memset(b, 0, sizeof(b));
	dup_word = b + 16;
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	w.l[1].drop_op = MR_OP_ATOMIC_RESP;
	MR_CHECK_EQ(aw(p.a, 1, NULL, 0, 0, b + 16, 6, w.now), 0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 2, a, 8, 5, b + 16, 6, 0,
			      w.now),
		    0);
	MR_CHECK(run_until(&w, word_rewritten, w.now + 100000000));
	/* let the request be resent at least once with the response lost */
	run_until(&w, NULL, w.now + 5000000);
	MR_CHECK(mr_qp_counters(p.a)->retx_pkts >= 1);
	w.l[1].drop_op = 0;
	want_a = 2;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[0].opcode, MR_WC_ATOMIC_WRITE);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(b + 16, "WRITTEN!", 8);
	MR_CHECK_EQ(mr_qp_counters(p.b)->atomics_executed, 1);
	destroy_pair(&p);
	world_fini(&w);
}

/* One ATOMIC_WRITE that the responder must refuse (MR-AW-4): the
 * requester's status, and not one byte of the region changed. */
static void bad_one(unsigned access, uint64_t off, uint64_t reglen,
		    enum mr_wc_status want)
{
	static struct world w;
	static uint8_t b[256], ref[256];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(b, sizeof(b), 9);
	memcpy(ref, b, sizeof(b));
	reg(&w.n[1], 6, b, reglen, access);
	MR_CHECK_EQ(aw(p.a, 1, NULL, 0, 0, b + off, 6, w.now), 0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, want);
	MR_CHECK_EQ(w.n[0].cqe[0].opcode, MR_WC_ATOMIC_WRITE);
	MR_CHECK_MEM(b, ref, sizeof(b));
	MR_CHECK_EQ(mr_qp_counters(p.b)->atomics_executed, 0);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_misaligned(void)
{
	/* MR-AW-4: INV_REQ -> REM_INV_REQ_ERR (MR-ERR-1) */
	bad_one(RW, 12, 256, MR_WC_REM_INV_REQ_ERR);
}

static void test_no_remote_write(void)
{
	/* REMOTE_ATOMIC and READ are not REMOTE_WRITE */
	bad_one(MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_READ |
			MR_ACCESS_REMOTE_ATOMIC,
		16, 256, MR_WC_REM_ACCESS_ERR);
}

static void test_outside_region(void)
{
	/* the region is 128 bytes; [128, 136) is past its end, [124, 132)
	 * would be misaligned: the last aligned word outside */
	bad_one(RW, 128, 128, MR_WC_REM_ACCESS_ERR);
}

static struct mr_qp *aw_resp;

static int aw_arrived(struct world *w)
{
	(void)w;
	/* the 7 WRITE packets that got through, and the ATOMIC_WRITE */
	return mr_qp_counters(aw_resp)->rx_data_pkts >= 8;
}

/* MR-AW-5: the ATOMIC_WRITE through a window arrives and passes its check
 * while the WRITE before it still misses its first packet; the window is
 * invalidated before the ATOMIC_WRITE's turn: it fails with REM_ACCESS
 * and stores nothing, the WRITE completes. */
static void test_window_gone_before_turn(void)
{
	static struct world w;
	static uint8_t a[8192], b[8192], win[4096], ref[4096];
	static const uint64_t drop_first[] = { 0 };
	struct mr_send_wr inv = {
		.wr_id = 2,
		.opcode = MR_WR_LOCAL_INV,
		.flags = MR_SEND_SIGNALED,
		.invalidate_rkey = 0x4201,
	};
	struct mr_send_wr bind = {
		.wr_id = 1,
		.opcode = MR_WR_BIND_MW,
		.flags = MR_SEND_SIGNALED,
		.bind = { .mw_rkey = 0x4200,
			  .new_rkey = 0x4201,
			  .mr_lkey = 7,
			  .addr = (uint64_t)(uintptr_t)win,
			  .length = sizeof(win),
			  .access = MR_ACCESS_REMOTE_WRITE },
	};
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	aw_resp = p.b;
	fill(a, sizeof(a), 6);
	memset(b, 0, sizeof(b));
	fill(win, sizeof(win), 7);
	memcpy(ref, win, sizeof(win));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	reg(&w.n[1], 7, win, sizeof(win),
	    MR_ACCESS_LOCAL_WRITE | MR_ACCESS_MW_BIND);
	world_alloc_mw(&w.n[1], MR_MW_TYPE_2, 0x4200);
	MR_CHECK_EQ(mr_qp_post_send(p.b, &bind, w.now), 0);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	w.l[0].drop_idx = drop_first;
	w.l[0].ndrop = 1;
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, a, sizeof(a), 5, b, 6,
			      0, w.now),
		    0);
	MR_CHECK_EQ(aw(p.a, 2, NULL, 0, 0, win + 64, 0x4201, w.now), 0);
	MR_CHECK(run_until(&w, aw_arrived, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].ncqe, 0); /* the WRITE waits for its first packet */
	MR_CHECK_EQ(mr_qp_post_send(p.b, &inv, w.now), 0);
	MR_CHECK_EQ(w.n[1].ncqe, 2);
	MR_CHECK_EQ(w.n[1].cqe[1].status, MR_WC_SUCCESS);
	want_a = 2;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_REM_ACCESS_ERR);
	MR_CHECK_MEM(b, a, sizeof(a));
	MR_CHECK_MEM(win, ref, sizeof(win));
	MR_CHECK_EQ(mr_qp_counters(p.b)->atomics_executed, 0);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-AW-1: refused at post, nothing posted. */
static void test_post_refusals(void)
{
	static struct world w;
	static uint8_t src[16], b[64];
	struct mr_sge s = { (uint64_t)(uintptr_t)src, 4, 5 };
	struct mr_sge s9 = { (uint64_t)(uintptr_t)src, 9, 5 };
	struct mr_sge bad = { (uint64_t)(uintptr_t)src, 8, 99 };
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	MR_CHECK_EQ(aw(p.a, 1, &s, 1, 0, b, 6, w.now), -MR_EINVAL);
	MR_CHECK_EQ(aw(p.a, 2, &s9, 1, 0, b, 6, w.now), -MR_EINVAL);
	MR_CHECK_EQ(aw(p.a, 3, NULL, 0, MR_SEND_INLINE, b, 6, w.now),
		    -MR_EINVAL);
	MR_CHECK_EQ(aw(p.a, 4, &bad, 1, 0, b, 6, w.now), -MR_EACCESS);
	/* nothing was posted: the link stays silent, no CQE */
	run_until(&w, NULL, w.now + 10000000);
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	MR_CHECK_EQ(mr_qp_counters(p.a)->tx_data_pkts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_forms), MR_TEST(test_after_writes),
	     MR_TEST(test_lost_response), MR_TEST(test_misaligned),
	     MR_TEST(test_no_remote_write), MR_TEST(test_outside_region),
	     MR_TEST(test_window_gone_before_turn), MR_TEST(test_post_refusals))
