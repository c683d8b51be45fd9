// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unit tests of the transport engine (mr_ep/mr_qp/mr_req/mr_resp/mr_rq/
 * mr_ud): two endpoints joined by a tiny scripted link (an array of
 * packets in flight, loss by mask or seeded PRNG, fixed delay plus
 * seeded jitter), literal timestamps, every byte compared.
 */
#include "engine_world.h"
#include "mr_engine.h" /* per-path state of the 64-path run */
#include "mr_test.h"

static void test_send_recv(void)
{
	static struct world w;
	static uint8_t src[10000], dst[12000];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(src, sizeof(src), 1);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), MR_ACCESS_LOCAL_WRITE);
	MR_CHECK_EQ(post_recv(p.b, 77, dst, sizeof(dst), 6), 0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND_WITH_IMM, 1, src, sizeof(src), 5,
			      NULL, 0, MR_SEND_SOLICITED, w.now),
		    0);
	want_a = 1;
	want_b = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[0].wr_id, 1);
	MR_CHECK_EQ(w.n[0].cqe[0].opcode, MR_WC_SEND);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 77);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, sizeof(src));
	MR_CHECK_EQ(w.n[1].cqe[0].imm, 0x01020304);
	MR_CHECK_EQ(w.n[1].cqe[0].wc_flags, MR_WC_F_WITH_IMM);
	MR_CHECK_EQ(w.n[1].cqe[0].solicited, 1);
	MR_CHECK_EQ(w.n[1].cqe[0].src_qp, 0x11);
	MR_CHECK_MEM(dst, src, sizeof(src));
	MR_CHECK_EQ(mr_qp_counters(p.b)->msgs_rcvd, 1);
	MR_CHECK_EQ(mr_qp_counters(p.a)->tx_data_pkts, 10);
	MR_CHECK_EQ(mr_qp_counters(p.a)->retx_pkts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_write_read_atomic(void)
{
	static struct world w;
	static uint8_t a[20000], b[20000], back[8000];
	uint64_t *cnt = (uint64_t *)(void *)(b + 16384), res[2];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(a, sizeof(a), 2);
	memset(b, 0, sizeof(b));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 7, back, sizeof(back), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 8, (uint8_t *)res, sizeof(res), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	*cnt = 40;
	/* WRITE 7777 bytes, READ them back (ordered after the WRITE),
	 * then CAS and FAA on a counter, and a 0-byte WRITE. */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 7777, 5, b + 3, 6, 0,
			      w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 2, back, 7777, 7, b + 3, 6,
			      0, w.now),
		    0);
	{
		struct mr_sge s = { (uint64_t)(uintptr_t)&res[0], 8, 8 };
		struct mr_send_wr wr = {
			.wr_id = 3,
			.opcode = MR_WR_ATOMIC_CMP_AND_SWP,
			.flags = MR_SEND_SIGNALED,
			.sg_list = &s,
			.num_sge = 1,
			.remote_addr = (uint64_t)(uintptr_t)cnt,
			.rkey = 6,
			.compare_add = 40,
			.swap = 1000,
		};
		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), 0);
		s.addr = (uint64_t)(uintptr_t)&res[1];
		wr.wr_id = 4;
		wr.opcode = MR_WR_ATOMIC_FETCH_AND_ADD;
		wr.compare_add = 5;
		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), 0);
		/* misaligned atomic refused at post time */
		wr.remote_addr += 4;
		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), -MR_EINVAL);
	}
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 5, NULL, 0, 0, b, 6, 0, w.now),
		0);
	want_a = 5;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	for (int i = 0; i < 5; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, i + 1);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
	}
	MR_CHECK_EQ(w.n[0].cqe[1].opcode, MR_WC_RDMA_READ);
	MR_CHECK_EQ(w.n[0].cqe[1].byte_len, 7777);
	MR_CHECK_EQ(w.n[0].cqe[2].opcode, MR_WC_COMP_SWAP);
	MR_CHECK_EQ(w.n[0].cqe[3].opcode, MR_WC_FETCH_ADD);
	MR_CHECK_MEM(b + 3, a, 7777);
	MR_CHECK_MEM(back, a, 7777);
	MR_CHECK_EQ(b[2], 0);
	MR_CHECK_EQ(b[3 + 7777], 0);
	MR_CHECK_EQ(res[0], 40);
	MR_CHECK_EQ(res[1], 1000);
	MR_CHECK_EQ(*cnt, 1005);
	MR_CHECK_EQ(w.n[1].ncqe, 0);
	MR_CHECK_EQ(mr_qp_counters(p.b)->reads_executed, 1);
	MR_CHECK_EQ(mr_qp_counters(p.b)->atomics_executed, 2);
	destroy_pair(&p);
	world_fini(&w);
}

/* Many mixed messages over a lossy, reordering link: every byte and the
 * order of every completion checked. */
static void lossy_run_n(enum mr_mode mode, uint32_t loss_ppm, uint32_t seed,
			uint16_t npaths)
{
	static struct world w;
	static uint8_t a[1 << 18], b[1 << 18], rbuf[1 << 18], back[1 << 18];
	static uint8_t bref[1 << 18];
	struct mr_ep_config cfg = base_cfg;
	const int nmsg = 60;
	uint32_t off[64], len[64];
	int op[64], nrecv = 0, i, r, s;
	uint64_t rs = seed;
	struct pair p;

	if (npaths)
		cfg.num_paths = npaths;
	if (mode == MR_MODE_GBN)
		cfg.num_paths = 1;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, mode, 64, NULL);
	for (i = 0; i < 2; i++) {
		w.l[i].loss_ppm = loss_ppm;
		w.l[i].jitter = mode == MR_MODE_GBN ? 0 : 20000;
		w.l[i].rng = seed * 2 + i + 1;
	}
	fill(a, sizeof(a), seed);
	fill(b, sizeof(b), seed + 100);
	memcpy(bref, b, sizeof(b));
	memset(rbuf, 0, sizeof(rbuf));
	memset(back, 0, sizeof(back));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 9, back, sizeof(back), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	reg(&w.n[1], 7, rbuf, sizeof(rbuf), MR_ACCESS_LOCAL_WRITE);
	for (i = 0, s = 0; i < nmsg; i++) {
		op[i] = (int)(xs(&rs) % 3);
		len[i] = (uint32_t)(xs(&rs) % 6000);
		off[i] = (uint32_t)s;
		s += (int)len[i];
		if (op[i] == 0) {
			MR_CHECK_EQ(post_recv(p.b, 1000 + i, rbuf + off[i],
					      len[i] + 10, 7),
				    0);
			nrecv++;
		}
	}
	for (i = 0; i < nmsg; i++) {
		static const enum mr_wr_opcode ops[] = { MR_WR_SEND,
							 MR_WR_RDMA_WRITE,
							 MR_WR_RDMA_READ };
		void *l = op[i] == 2 ? back + off[i] : a + off[i];

		MR_CHECK_EQ(post_send(p.a, ops[op[i]], i, l, len[i],
				      op[i] == 2 ? 9 : 5, b + off[i], 6, 0,
				      w.now),
			    0);
	}
	want_a = nmsg;
	want_b = nrecv;
	MR_CHECK(run_until(&w, cqe_done, w.now + 20000000000ull));
	MR_CHECK_EQ(w.n[0].ncqe, nmsg);
	MR_CHECK_EQ(w.n[1].ncqe, nrecv);
	for (i = 0, r = 0; i < nmsg; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, i);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
		if (op[i] == 0) {
			MR_CHECK_EQ(w.n[1].cqe[r].wr_id, 1000 + i);
			MR_CHECK_EQ(w.n[1].cqe[r].status, MR_WC_SUCCESS);
			MR_CHECK_EQ(w.n[1].cqe[r].byte_len, len[i]);
			MR_CHECK_MEM(rbuf + off[i], a + off[i], len[i]);
			r++;
		} else if (op[i] == 1) {
			MR_CHECK_MEM(b + off[i], a + off[i], len[i]);
		} else {
			/* READ of a range nobody writes: the original */
			MR_CHECK_MEM(back + off[i], bref + off[i], len[i]);
		}
	}
	if (loss_ppm)
		MR_CHECK(mr_qp_counters(p.a)->retx_pkts > 0);
	if (npaths == MR_MAX_PATHS) {
		/* MR-ACK-9, MR-SACK-7: 64 paths (one ACK carries them all
		 * while their bitmaps are short, MR-ACK-12); all were used,
		 * and the rotation of the ACK path gave many of them clean
		 * RTT samples (MR-MP-7). */
		int sampled = 0;

		for (i = 0; i < npaths; i++) {
			MR_CHECK(p.a->ptx[i].tx_pkts > 0);
			sampled += p.a->ptx[i].srtt > 0;
		}
		/* About 3 packets per path and an ACK every 4: the ACKs
		 * cannot visit every path; 38 and 30 of 64 do here. */
		MR_CHECK(sampled >= npaths / 4);
	}
	destroy_pair(&p);
	world_fini(&w);
}

static void lossy_run(enum mr_mode mode, uint32_t loss_ppm, uint32_t seed)
{
	lossy_run_n(mode, loss_ppm, seed, 0);
}

/* MR-PATH-1, MR-ACK-9: 64 paths, lossless and with 5% loss. */
static void test_64_paths(void)
{
	lossy_run_n(MR_MODE_METAROCE, 0, 6, MR_MAX_PATHS);
	lossy_run_n(MR_MODE_METAROCE, 50000, 7, MR_MAX_PATHS);
}

static void test_lossless_metaroce(void)
{
	lossy_run(MR_MODE_METAROCE, 0, 3);
}

static void test_loss_metaroce(void)
{
	lossy_run(MR_MODE_METAROCE, 50000, 4);
	lossy_run(MR_MODE_METAROCE, 200000, 5);
}

static void test_loss_gbn(void)
{
	lossy_run(MR_MODE_GBN, 0, 6);
	lossy_run(MR_MODE_GBN, 30000, 7);
}

static void test_rem_access(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct mr_qp_attr q;
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), MR_ACCESS_LOCAL_WRITE); /* no remote */
	/* a good WRITE is impossible here: key 6 lacks REMOTE_WRITE */
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 100, 5, b, 6, 0, w.now),
		0);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 2, a, 100, 5, b, 99, 0, w.now),
		0);
	want_a = 2;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].wr_id, 1);
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_REM_ACCESS_ERR);
	MR_CHECK_EQ(w.n[0].cqe[1].wr_id, 2);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(mr_qp_query(p.a, &q), 0);
	MR_CHECK_EQ(q.state, MR_QPS_ERR);
	MR_CHECK_EQ(w.n[0].qp_errors, 0); /* the CQE is the report */
	MR_CHECK(mr_qp_counters(p.b)->nak_sent[MR_NAK_REM_ACCESS] >= 1);
	MR_CHECK(mr_qp_counters(p.a)->nak_rcvd[MR_NAK_REM_ACCESS] >= 1);
	/* posting in ERR completes at once with a flush error */
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 3, a, 10, 5, NULL, 0, 0, w.now),
		    0);
	MR_CHECK_EQ(w.n[0].ncqe, 3);
	MR_CHECK_EQ(w.n[0].cqe[2].status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(b[0], 0);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_recv_overflow(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), MR_ACCESS_LOCAL_WRITE);
	MR_CHECK_EQ(post_recv(p.b, 50, b, 50, 6), 0);
	MR_CHECK_EQ(post_recv(p.b, 51, b, 50, 6), 0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 1, a, 100, 5, NULL, 0, 0, w.now),
		    0);
	want_a = 1;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_REM_INV_REQ_ERR);
	MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 50);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_LOC_LEN_ERR);
	MR_CHECK_EQ(w.n[1].cqe[1].wr_id, 51);
	MR_CHECK_EQ(w.n[1].cqe[1].status, MR_WC_WR_FLUSH_ERR);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_rnr(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct pair p;

	fill(a, sizeof(a), 9);
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), MR_ACCESS_LOCAL_WRITE);
	/* infinite RNR retry: the receive posted 1 ms later is used */
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_SEND, 1, a, 3000, 5, NULL, 0, 0, w.now),
		0);
	MR_CHECK(run_until(&w, NULL, w.now + 1000000));
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	MR_CHECK(mr_qp_counters(p.a)->rnr_waits >= 1);
	MR_CHECK_EQ(post_recv(p.b, 9, b, sizeof(b), 6), 0);
	want_a = 1;
	want_b = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 3000);
	MR_CHECK_MEM(b, a, 3000);
	/* rnr_retry 1: the second RNR NAK fails the WQE */
	set_rts_attr(p.a, MR_QP_RNR_RETRY, 1);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 2, a, 10, 5, NULL, 0, 0, w.now),
		    0);
	want_a = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[1].wr_id, 2);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_RNR_RETRY_EXC_ERR);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_retry_exceeded(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	set_rts_attr(p.a, MR_QP_RETRY_CNT | MR_QP_TIMEOUT, 3);
	w.l[0].drop_all = 1;
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 2000, 5, b, 6, 0, w.now),
		0);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 2, a, 2000, 5, b, 6, 0, w.now),
		0);
	want_a = 2;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 10000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_RETRY_EXC_ERR);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK(mr_qp_counters(p.a)->timeouts >= 4);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_last_byte_visible_last(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct pair p;

	fill(a, sizeof(a), 11);
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	w.n[1].watch = &b[2999];
	w.l[0].reverse_next = 3; /* 3 packets arrive last-first */
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 3000, 5, b, 6, 0, w.now),
		0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(b, a, 3000);
	MR_CHECK_EQ(mr_qp_counters(p.b)->held_last, 1);
	MR_CHECK_EQ(w.n[1].places, 3);
	MR_CHECK_EQ(w.n[1].watch_at_place, 3);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_write_imm_zero_and_srq(void)
{
	static struct world w;
	static uint8_t a[4096], b[8192];
	struct mr_srq_config sc = {
		.pd = 1, .max_wr = 8, .max_sge = 2, .limit = 2
	};
	struct mr_srq *srq;
	struct mr_sge sge;
	struct mr_recv_wr rw = { 0, &sge, 1 };
	struct pair p;
	int i;

	fill(a, sizeof(a), 12);
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	MR_CHECK_EQ(mr_srq_create(w.n[1].ep, &sc, &srq), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, srq);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	MR_CHECK_EQ(post_recv(p.b, 1, b, 10, 6), -MR_EINVAL); /* has SRQ */
	for (i = 0; i < 3; i++) {
		sge.addr = (uint64_t)(uintptr_t)(b + 4096 + i * 1024);
		sge.length = 1024;
		sge.lkey = 6;
		rw.wr_id = 100 + i;
		rw.num_sge = i == 0 ? 0 : 1; /* first: 0-SGE for WRITE_IMM */
		MR_CHECK_EQ(mr_srq_post_recv(srq, &rw), 0);
	}
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 1, NULL, 0, 0, b,
			      6, 0, w.now),
		    0);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_SEND, 2, a, 1000, 5, NULL, 0, 0, w.now),
		0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND_WITH_IMM, 3, a + 1000, 1024, 5,
			      NULL, 0, 0, w.now),
		    0);
	want_a = 3;
	want_b = 3;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 100);
	MR_CHECK_EQ(w.n[1].cqe[0].opcode, MR_WC_RECV_RDMA_WITH_IMM);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 0);
	MR_CHECK_EQ(w.n[1].cqe[0].imm, 0x01020304);
	MR_CHECK_EQ(w.n[1].cqe[1].wr_id, 101);
	MR_CHECK_EQ(w.n[1].cqe[1].byte_len, 1000);
	MR_CHECK_EQ(w.n[1].cqe[2].wr_id, 102);
	MR_CHECK_EQ(w.n[1].cqe[2].byte_len, 1024);
	MR_CHECK_MEM(b + 5120, a, 1000);
	MR_CHECK_MEM(b + 6144, a + 1000, 1024);
	MR_CHECK_EQ(w.n[1].srq_limits, 1);
	MR_CHECK_EQ(mr_srq_count(srq), 0);
	MR_CHECK_EQ(mr_srq_destroy(srq), -MR_EBUSY);
	destroy_pair(&p);
	MR_CHECK_EQ(mr_srq_destroy(srq), 0);
	world_fini(&w);
}

static void test_ud(void)
{
	static struct world w;
	static uint8_t a[1024], b[2048];
	struct mr_qp_config c = { .type = MR_QPT_UD,
				  .pd = 1,
				  .max_send_wr = 4,
				  .max_recv_wr = 4,
				  .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct mr_qp_attr at = { .qkey = 0x1234 };
	struct mr_qp *q[2];
	struct mr_sge sge = { (uint64_t)(uintptr_t)a, 200, 5 };
	struct mr_send_wr wr = { .wr_id = 1,
				 .opcode = MR_WR_SEND_WITH_IMM,
				 .flags = MR_SEND_SIGNALED,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .imm = 7,
				 .ud_remote_qpn = 0x66,
				 .ud_remote_qkey = 0x1234,
				 .ud_dest = 3 };
	int i;

	fill(a, sizeof(a), 13);
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	for (i = 0; i < 2; i++) {
		c.qpn = 0x55 + 0x11 * i;
		MR_CHECK_EQ(mr_qp_create(w.n[i].ep, &c, &q[i]), 0);
		at.state = MR_QPS_INIT;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at, MR_QP_STATE | MR_QP_QKEY),
			    0);
		at.state = MR_QPS_RTR;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at, MR_QP_STATE), 0);
		at.state = MR_QPS_RTS;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at, MR_QP_STATE | MR_QP_SQ_PSN),
			    0);
	}
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), MR_ACCESS_LOCAL_WRITE);
	memset(b, 0xee, 40); /* the GRH area must be written, not kept */
	MR_CHECK_EQ(post_recv(q[1], 40, b, 1024, 6), 0);
	MR_CHECK_EQ(mr_qp_post_send(q[0], &wr, w.now), 0);
	wr.wr_id = 2;
	wr.ud_remote_qkey = 0x999; /* wrong qkey: dropped at the receiver */
	MR_CHECK_EQ(mr_qp_post_send(q[0], &wr, w.now), 0);
	sge.length = 1025; /* over the mtu */
	MR_CHECK_EQ(mr_qp_post_send(q[0], &wr, w.now), -MR_EMSGSIZE);
	MR_CHECK(run_until(&w, NULL, w.now + 1000000));
	MR_CHECK_EQ(w.n[0].ncqe, 2);
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 40);
	MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 240);
	MR_CHECK_EQ(w.n[1].cqe[0].src_qp, 0x55);
	MR_CHECK_EQ(w.n[1].cqe[0].imm, 7);
	MR_CHECK_EQ(w.n[1].cqe[0].wc_flags, MR_WC_F_GRH | MR_WC_F_WITH_IMM);
	MR_CHECK_MEM(b + 40, a, 200);
	{
		/* MR-UD-5: 20 zero bytes, then the IPv4 header: total
		 * length 20 + 8 + 200, TTL 64, UDP, the world's addresses
		 * (0 -> 0), header checksum 0x7a0a. */
		static const uint8_t grh[40] = {
			[20] = 0x45, [23] = 228,  [28] = 64,
			[29] = 17,   [30] = 0x7a, [31] = 0x0a,
		};

		MR_CHECK_MEM(b, grh, 40);
	}
	MR_CHECK_EQ(mr_qp_counters(q[1])->drop_qkey, 1);
	mr_qp_destroy(q[0]);
	mr_qp_destroy(q[1]);
	world_fini(&w);
}

static void test_state_machine_and_drops(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	struct mr_qp_config c = { .type = MR_QPT_RC,
				  .pd = 1,
				  .qpn = 9,
				  .max_send_wr = 4,
				  .max_recv_wr = 4,
				  .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct mr_qp_attr at;
	struct mr_qp *q;
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q), 0);
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q), -MR_EINVAL); /* qpn */
	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_RTR;
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE), -MR_EINVAL);
	at.state = MR_QPS_INIT;
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE), -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_ACCESS_FLAGS), 0);
	MR_CHECK_EQ(post_send(q, MR_WR_SEND, 1, NULL, 0, 0, NULL, 0, 0, 0),
		    -MR_ESTATE);
	at.state = MR_QPS_RTR;
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_DEST_QPN),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_ep_destroy(w.n[0].ep), -MR_EBUSY);
	mr_qp_destroy(q);

	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 100, 77, b, 6, 0, w.now),
		-MR_EACCESS); /* bad lkey at post time */
	/* a corrupted packet is dropped and counted; the retransmission
	 * delivers */
	w.l[0].corrupt_next = 1;
	fill(a, sizeof(a), 14);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 2, a, 100, 5, b, 6, 0, w.now),
		0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(b, a, 100);
	MR_CHECK_EQ(mr_ep_counters(w.n[1].ep)->drop_parse[MR_PARSE_ICRC], 1);
	{
		uint8_t junk[64];

		memset(junk, 0, sizeof(junk));
		MR_CHECK_EQ(mr_ep_rx(w.n[1].ep, w.now, junk, 10, NULL),
			    -MR_EPROTO);
		MR_CHECK_EQ(
			mr_ep_counters(w.n[1].ep)->drop_parse[MR_PARSE_SHORT],
			1);
	}
	destroy_pair(&p);
	world_fini(&w);
}

/* Messages of thousands of packets (beyond every per-path window and the
 * ssn window) over a lossy link: every byte compared. */
static void test_large_messages(void)
{
	static struct world w;
	struct mr_ep_config cfg = base_cfg;
	const uint32_t len = 6u << 20;
	uint8_t *a = malloc(len), *b = malloc(len), *back = malloc(len);
	struct pair p;

	MR_CHECK(a && b && back);
	cfg.mtu = 4096;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	{
		struct mr_qp_attr at;

		memset(&at, 0, sizeof(at));
		MR_CHECK_EQ(mr_qp_query(p.a, &at), 0);
		MR_CHECK_EQ(at.path_mtu_bytes, 1024);
	}
	fill(a, len, 21);
	memset(b, 0, len);
	memset(back, 0, len);
	reg(&w.n[0], 5, a, len, MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 7, back, len, MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, len, RW);
	w.l[0].loss_ppm = 10000;
	w.l[1].loss_ppm = 10000;
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, len, 5, b, 6, 0, w.now),
		0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 2, back, len, 7, b, 6, 0,
			      w.now),
		    0);
	want_a = 2;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 10000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[1].byte_len, len);
	MR_CHECK_MEM(b, a, len);
	MR_CHECK_MEM(back, a, len);
	MR_CHECK(mr_qp_counters(p.a)->retx_pkts > 0);
	MR_CHECK(mr_qp_counters(p.b)->retx_pkts > 0);
	destroy_pair(&p);
	world_fini(&w);
	free(a);
	free(b);
	free(back);
}

/* SQD (IB 10.3.1): a message started before SQD finishes, none starts
 * after; the drained callback comes once, when the last started message
 * completes; back in RTS the queue goes on; entering SQD with nothing in
 * flight is drained at once. */
static void test_sqd_drain(void)
{
	static struct world w;
	const uint32_t len = 256u << 10;
	uint8_t *a = malloc(2 * len), *b = calloc(1, 2 * len);
	struct mr_qp_attr at;
	struct pair p;
	int i;

	MR_CHECK(a && b);
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	fill(a, 2 * len, 33);
	reg(&w.n[0], 5, a, 2 * len, MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, 2 * len, RW);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, a, len, 5, b, 6,
			      MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 2, a + len, len, 5,
			      b + len, 6, MR_SEND_SIGNALED, w.now),
		    0);
	for (i = 0; i < 1000 && !mr_qp_counters(p.a)->tx_data_pkts; i++)
		world_step(&w);
	MR_CHECK(mr_qp_counters(p.a)->tx_data_pkts > 0);
	MR_CHECK(mr_qp_counters(p.a)->tx_data_pkts < len / 1024);
	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_SQD;
	MR_CHECK_EQ(mr_qp_modify(p.a, &at, MR_QP_STATE), 0);
	MR_CHECK_EQ(mr_qp_query(p.a, &at), 0);
	MR_CHECK_EQ(at.state, MR_QPS_SQD);
	MR_CHECK_EQ(at.sq_draining, 1);
	MR_CHECK_EQ(w.n[0].sq_drained, 0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].wr_id, 1);
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].sq_drained, 1);
	/* Nothing of the second message goes while in SQD. */
	run_until(&w, NULL, w.now + 50000000ull);
	MR_CHECK_EQ(w.n[0].ncqe, 1);
	MR_CHECK_EQ(mr_qp_counters(p.a)->tx_data_pkts, len / 1024);
	MR_CHECK_EQ(mr_qp_query(p.a, &at), 0);
	MR_CHECK_EQ(at.sq_draining, 0);
	MR_CHECK_EQ(w.n[0].sq_drained, 1);
	MR_CHECK_MEM(b, a, len);
	/* Back to RTS: the second message goes. */
	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_RTS;
	MR_CHECK_EQ(mr_qp_modify(p.a, &at, MR_QP_STATE), 0);
	want_a = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[1].wr_id, 2);
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(b, a, 2 * len);
	/* SQD with nothing in flight: drained at once. */
	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_SQD;
	MR_CHECK_EQ(mr_qp_modify(p.a, &at, MR_QP_STATE), 0);
	MR_CHECK_EQ(w.n[0].sq_drained, 2);
	destroy_pair(&p);
	world_fini(&w);
	free(a);
	free(b);
}

/* MR-QP-6, MR-ORD-1: completions are delivered in order before the call
 * that made them returns, and a WR's room is free again only when its
 * completion is delivered. An ACK completes several WRs at once; a
 * callback that posts at each completion finds exactly one free slot
 * (the WR just delivered), never the room of WRs whose completions are
 * still to come, and the WR it posts goes on in order. */
static struct mr_qp *reenter_qp;
static uint8_t reenter_src[4096], reenter_dst[4096];
static int reenter_posted, reenter_room_bad, reenter_order_bad;
static uint32_t reenter_idle; /* callbacks that posted nothing */
static uint64_t reenter_next;

static void reenter_hook(struct node *n, const struct mr_cqe *c)
{
	(void)n;
	if (c->is_recv)
		return;
	if (c->wr_id != reenter_next++)
		reenter_order_bad++;
	if (mr_qp_sq_room(reenter_qp) != 1 + reenter_idle)
		reenter_room_bad++;
	if (reenter_posted >= 40) {
		reenter_idle++;
		return;
	}
	if (post_send(reenter_qp, MR_WR_RDMA_WRITE, (uint64_t)reenter_posted,
		      reenter_src + 512 * (reenter_posted % 8), 512, 5,
		      reenter_dst + 512 * (reenter_posted % 8), 6, 0, 0) == 0)
		reenter_posted++;
	/* a second one finds the queue full */
	if (post_send(reenter_qp, MR_WR_RDMA_WRITE, 999, reenter_src, 1, 5,
		      reenter_dst, 6, 0, 0) != -MR_EAGAIN)
		reenter_room_bad++;
}

static void test_cqe_callback_posts(void)
{
	static struct world w;
	uint8_t *b = reenter_dst;
	struct pair p;
	int i;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 4, NULL);
	memset(b, 0, sizeof(reenter_dst));
	fill(reenter_src, sizeof(reenter_src), 71);
	reg(&w.n[0], 5, reenter_src, sizeof(reenter_src),
	    MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(reenter_dst), RW);
	reenter_qp = p.a;
	reenter_posted = reenter_room_bad = reenter_order_bad = 0;
	reenter_next = 0;
	reenter_idle = 0;
	for (i = 0; i < 4; i++) {
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, (uint64_t)i,
				      reenter_src + 512 * i, 512, 5,
				      b + 512 * i, 6, 0, w.now),
			    0);
		reenter_posted++;
	}
	MR_CHECK_EQ(mr_qp_sq_room(p.a), 0);
	/* data arrives in bursts: one ACK for several WRs (ack_every) */
	w.l[0].stall_every = 200000;
	w.l[0].stall_len = 150000;
	w.n[0].on_cqe = reenter_hook;
	want_a = 40;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	w.n[0].on_cqe = NULL;
	MR_CHECK_EQ(reenter_posted, 40);
	MR_CHECK_EQ(w.n[0].ncqe, 40);
	MR_CHECK_EQ(reenter_order_bad, 0);
	MR_CHECK_EQ(reenter_room_bad, 0);
	for (i = 0; i < 40; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, i);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
	}
	/* several WRs completed per ACK (else the room check shows
	 * nothing) */
	MR_CHECK(mr_qp_counters(p.a)->rx_ack_pkts < 40);
	MR_CHECK_MEM(b, reenter_src, 4096);
	MR_CHECK_EQ(mr_qp_sq_room(p.a), 4);
	destroy_pair(&p);
	world_fini(&w);
}

/* The qpn table: insert, find, backward-shift removal, the max_qp cap. */
static void test_qpn_table(void)
{
	static struct world w;
	struct mr_ep_config cfg = base_cfg;
	struct mr_qp_config c = {
		.type = MR_QPT_RC, .pd = 1, .max_send_wr = 1, .max_recv_wr = 1
	};
	struct mr_qp *q[64], *x;
	uint32_t i;

	cfg.max_qp = 40;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	for (i = 0; i < 40; i++) {
		/* qpns that collide in a small table */
		c.qpn = 1 + i * 64;
		MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q[i]), 0);
	}
	c.qpn = 5000;
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &x), -MR_ENOMEM);
	for (i = 0; i < 40; i += 2)
		MR_CHECK_EQ(mr_qp_destroy(q[i]), 0);
	for (i = 0; i < 40; i++) {
		c.qpn = 1 + i * 64;
		if (i % 2) {
			/* still there: a second one is refused */
			MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &x),
				    -MR_EINVAL);
			MR_CHECK_EQ(mr_qp_num(q[i]), c.qpn);
		} else {
			MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q[i]), 0);
		}
	}
	for (i = 0; i < 40; i++)
		MR_CHECK_EQ(mr_qp_destroy(q[i]), 0);
	world_fini(&w);
}

/* NCCL with adaptive routing: RDMA WRITEs, then a 0-byte WRITE_WITH_IMM
 * on the same QP into a receive with no SGE, whose completion must mean
 * every earlier WRITE is placed (MR-ORD-1), though their packets are
 * sprayed over 4 paths, jittered, reordered and lost. Checked in the
 * completion callback itself, when the application could first see it. */
#define NW 6
#define WLEN 5000
static uint8_t nsrc[NW][WLEN], ndst[NW][WLEN];

static void nccl_hook(struct node *n, const struct mr_cqe *c)
{
	if (!c->is_recv)
		return;
	n->hook_calls++;
	if (c->status == MR_WC_SUCCESS && c->byte_len == 0 &&
	    c->opcode == MR_WC_RECV_RDMA_WITH_IMM &&
	    !memcmp(ndst, nsrc, sizeof(ndst)))
		n->hook_ok++;
}

static void test_nccl_write_then_imm(void)
{
	static struct world w;
	uint32_t seed;

	for (seed = 1; seed <= 4; seed++) {
		struct mr_recv_wr rw = { 500, NULL, 0 };
		struct pair p;
		int i, r;

		MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
		for (i = 0; i < 2; i++) {
			w.l[i].rng = seed * 7919u + (uint64_t)i;
			w.l[i].loss_ppm = 30000; /* 3% */
			w.l[i].jitter = 30000;
		}
		connect_qps(&w, &p, MR_MODE_METAROCE, 64, NULL);
		reg(&w.n[0], 5, &nsrc[0][0], sizeof(nsrc),
		    MR_ACCESS_LOCAL_WRITE);
		reg(&w.n[1], 6, &ndst[0][0], sizeof(ndst), RW);
		w.n[1].on_cqe = nccl_hook;
		for (r = 0; r < 3; r++) {
			for (i = 0; i < NW; i++)
				fill(nsrc[i], WLEN,
				     seed * 100 + (uint32_t)(r * NW + i));
			memset(ndst, 0, sizeof(ndst));
			MR_CHECK_EQ(mr_qp_post_recv(p.b, &rw), 0);
			w.l[0].reverse_next = 8;
			for (i = 0; i < NW; i++)
				MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE,
						      (uint64_t)i, nsrc[i],
						      WLEN, 5, ndst[i], 6, 0,
						      w.now),
					    0);
			MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM,
					      99, NULL, 0, 0, ndst[0], 6, 0,
					      w.now),
				    0);
			want_a = (r + 1) * (NW + 1);
			want_b = r + 1;
			MR_CHECK(
				run_until(&w, cqe_done, w.now + 2000000000ull));
			MR_CHECK_EQ(w.n[1].hook_calls, r + 1);
			MR_CHECK_EQ(w.n[1].hook_ok, r + 1);
		}
		MR_CHECK(mr_qp_counters(p.a)->retx_pkts > 0); /* lossy */
		destroy_pair(&p);
		world_fini(&w);
	}
}

MR_TEST_MAIN(MR_TEST(test_nccl_write_then_imm), MR_TEST(test_send_recv),
	     MR_TEST(test_write_read_atomic), MR_TEST(test_lossless_metaroce),
	     MR_TEST(test_loss_metaroce), MR_TEST(test_loss_gbn),
	     MR_TEST(test_64_paths), MR_TEST(test_rem_access),
	     MR_TEST(test_recv_overflow), MR_TEST(test_rnr),
	     MR_TEST(test_retry_exceeded), MR_TEST(test_last_byte_visible_last),
	     MR_TEST(test_write_imm_zero_and_srq), MR_TEST(test_ud),
	     MR_TEST(test_state_machine_and_drops), MR_TEST(test_qpn_table),
	     MR_TEST(test_large_messages), MR_TEST(test_sqd_drain),
	     MR_TEST(test_cqe_callback_posts))
