// SPDX-License-Identifier: BSD-2-Clause
/*
 * QPs, SRQs and the data path through the real libibverbs, over the
 * device's own loopback (QPs of one device talk to each other as on every
 * RDMA NIC): every opcode with seeded random data and every byte compared,
 * UD with its GRH area, SRQ with the limit event, and the error cases
 * (bad rkey, range, rights, flush after error, bad attributes).
 *
 * Device: provider_fixture.h (root; skipped otherwise). Waits for
 * completions are bounded (10 s) so that a lost completion fails the test
 * instead of hanging it; nothing is timed.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mr_test.h"
#include "provider_fixture.h"

#define BUF 65536

static struct mrt_dev dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid1; /* our own GID 0 (link-local): loopback */
static uint8_t *src, *dst, *loc;
static uint64_t *atom; /* [0] remote target, [1] local result */
static struct ibv_mr *msrc, *mdst, *mloc, *matom, *mro;
static uint64_t rng = 0x5eed0f1234abcdefULL;

static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static void fill_random(uint8_t *p, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)next_rand();
}

static struct ibv_qp *make_qp(enum ibv_qp_type t, struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.srq = srq,
		.qp_type = t,
		.cap = { .max_send_wr = 32,
			 .max_recv_wr = 32,
			 .max_send_sge = 2,
			 .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};

	return ibv_create_qp(pd, &a);
}

static int to_init(struct ibv_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (q->qp_type == IBV_QPT_UD) {
		a.qkey = 0x11111111;
		return ibv_modify_qp(q, &a,
				     IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					     IBV_QP_PORT | IBV_QP_QKEY);
	}
	return mrt_conn_init(q);
}

static int post_one(struct ibv_qp *q, enum ibv_wr_opcode op, uint64_t wr_id,
		    struct ibv_sge *sg, int nsge, uint64_t raddr, uint32_t rkey,
		    unsigned flags)
{
	struct ibv_send_wr w = { 0 }, *bad;

	w.wr_id = wr_id;
	w.sg_list = sg;
	w.num_sge = nsge;
	w.opcode = op;
	w.send_flags = flags | IBV_SEND_SIGNALED;
	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	return ibv_post_send(q, &w, &bad);
}

static int post_recv(struct ibv_qp *q, uint64_t wr_id, struct ibv_sge *sg,
		     int nsge)
{
	struct ibv_recv_wr w = { .wr_id = wr_id,
				 .sg_list = sg,
				 .num_sge = nsge },
			   *bad;

	return ibv_post_recv(q, &w, &bad);
}

/* Acknowledge the async events queued so far; each must name one of the
 * two QPs (a QP that failed raises IBV_EVENT_QP_FATAL). Returns how many,
 * or -1 for an unexpected event. */
static int drain_qp_events(struct ibv_qp *a, struct ibv_qp *b)
{
	int fl = fcntl(ctx->async_fd, F_GETFL), n = 0, bad = 0;
	struct ibv_async_event ev;

	fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	while (ibv_get_async_event(ctx, &ev) == 0) {
		if (ev.event_type != IBV_EVENT_QP_FATAL ||
		    (ev.element.qp != a && ev.element.qp != b))
			bad = 1;
		ibv_ack_async_event(&ev);
		n++;
	}
	fcntl(ctx->async_fd, F_SETFL, fl);
	return bad ? -1 : n;
}

static void setup(void)
{
	MR_CHECK_EQ(mrt_fixture_open(&dev, 256), 0);
	ctx = dev.ctx;
	pd = dev.pd;
	cq = dev.cq;
	gid1 = dev.gid0;
	src = aligned_alloc(4096, BUF);
	dst = aligned_alloc(4096, BUF);
	loc = aligned_alloc(4096, BUF);
	atom = aligned_alloc(64, 64);
	MR_CHECK(src && dst && loc && atom);
	msrc = ibv_reg_mr(pd, src, BUF, MRT_ACC_ALL);
	mdst = ibv_reg_mr(pd, dst, BUF, MRT_ACC_ALL);
	mloc = ibv_reg_mr(pd, loc, BUF, MRT_ACC_ALL);
	matom = ibv_reg_mr(pd, atom, 64, MRT_ACC_ALL);
	/* Remote-read-only view of dst: remote writes must be refused. */
	mro = ibv_reg_mr(pd, dst, BUF,
			 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	MR_CHECK(msrc && mdst && mloc && matom && mro);
}

static void test_rc_opcodes(void)
{
	struct ibv_qp *a, *b;
	struct ibv_wc wc[4];
	struct ibv_sge sg[2], rs;

	MR_CHECK(ctx);
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, NULL);
	MR_CHECK(a && b);
	MR_CHECK_EQ(mrt_rc_up(a, &gid1, b->qp_num, 0x100, 0x200), 0);
	MR_CHECK_EQ(mrt_rc_up(b, &gid1, a->qp_num, 0x200, 0x100), 0);
	/* The first QP started the datapath: the port is active. */
	{
		struct ibv_async_event ev;

		MR_CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
		MR_CHECK_EQ(ev.event_type, IBV_EVENT_PORT_ACTIVE);
		MR_CHECK_EQ(ev.element.port_num, 1);
		ibv_ack_async_event(&ev);
	}

	/* WRITE, two SGEs, 10000 bytes at an offset. */
	fill_random(src, BUF);
	memset(dst, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)src, 3000, msrc->lkey };
	sg[1] = (struct ibv_sge){ (uintptr_t)src + 5000, 7000, msrc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, 1, sg, 2,
			     (uintptr_t)dst + 100, mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
	MR_CHECK_EQ(wc[0].wr_id, 1);
	MR_CHECK_EQ(wc[0].qp_num, a->qp_num);
	MR_CHECK_MEM(dst + 100, src, 3000);
	MR_CHECK_MEM(dst + 3100, src + 5000, 7000);
	MR_CHECK_EQ(dst[99], 0);
	MR_CHECK_EQ(dst[10100], 0);

	/* SEND into a posted receive, data and length. */
	fill_random(src, 3000);
	memset(loc, 0, 4096);
	rs = (struct ibv_sge){ (uintptr_t)loc, 4096, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 10, &rs, 1), 0);
	sg[0] = (struct ibv_sge){ (uintptr_t)src, 3000, msrc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_SEND, 2, sg, 1, 0, 0, 0), 0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
	if (wc[0].wr_id != 10) {
		struct ibv_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = t;
	}
	MR_CHECK_EQ(wc[0].wr_id, 10);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RECV);
	MR_CHECK_EQ(wc[0].byte_len, 3000);
	MR_CHECK_EQ(wc[0].qp_num, b->qp_num);
	MR_CHECK_EQ(wc[0].wc_flags & IBV_WC_WITH_IMM, 0);
	MR_CHECK_EQ(wc[1].wr_id, 2);
	MR_CHECK_EQ(wc[1].opcode, IBV_WC_SEND);
	MR_CHECK_MEM(loc, src, 3000);

	/* SEND_WITH_IMM, inline: the buffer may change after the post. */
	fill_random(src, 64);
	memcpy(loc + 8192, src, 64);
	rs = (struct ibv_sge){ (uintptr_t)loc, 4096, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 11, &rs, 1), 0);
	{
		struct ibv_send_wr w = { 0 }, *bad;

		sg[0] = (struct ibv_sge){ (uintptr_t)src, 64, 0 };
		w.wr_id = 3;
		w.sg_list = sg;
		w.num_sge = 1;
		w.opcode = IBV_WR_SEND_WITH_IMM;
		w.imm_data = htobe32(0xfeedf00d);
		w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
		MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
	}
	memset(src, 0, 64);
	MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
	if (wc[0].wr_id != 11) {
		struct ibv_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = t;
	}
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].byte_len, 64);
	MR_CHECK(wc[0].wc_flags & IBV_WC_WITH_IMM);
	MR_CHECK_EQ(wc[0].imm_data, htobe32(0xfeedf00d));
	MR_CHECK_MEM(loc, loc + 8192, 64);

	/* 0-byte WRITE_WITH_IMM into a 0-SGE receive (NCCL's signal). */
	MR_CHECK_EQ(post_recv(b, 12, NULL, 0), 0);
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE_WITH_IMM, 4, NULL, 0,
			     (uintptr_t)dst, mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
	if (wc[0].wr_id != 12) {
		struct ibv_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = t;
	}
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	MR_CHECK_EQ(wc[0].byte_len, 0);
	MR_CHECK_EQ(wc[1].wr_id, 4);

	/* READ 20000 bytes back. */
	fill_random(dst, BUF);
	memset(loc, 0, BUF);
	sg[0] = (struct ibv_sge){ (uintptr_t)loc, 20000, mloc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_READ, 5, sg, 1, (uintptr_t)dst + 7,
			     mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RDMA_READ);
	MR_CHECK_EQ(wc[0].byte_len, 20000);
	MR_CHECK_MEM(loc, dst + 7, 20000);

	/* Atomics: fetch-add, compare-swap that succeeds and one that
	 * fails; the old value comes back each time. */
	atom[0] = 1000;
	atom[1] = 0;
	{
		struct ibv_send_wr w = { 0 }, *bad;

		sg[0] = (struct ibv_sge){ (uintptr_t)&atom[1], 8, matom->lkey };
		w.wr_id = 6;
		w.sg_list = sg;
		w.num_sge = 1;
		w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w.send_flags = IBV_SEND_SIGNALED;
		w.wr.atomic.remote_addr = (uintptr_t)&atom[0];
		w.wr.atomic.rkey = matom->rkey;
		w.wr.atomic.compare_add = 24;
		MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
		MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
		MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(wc[0].opcode, IBV_WC_FETCH_ADD);
		MR_CHECK_EQ(atom[1], 1000);
		MR_CHECK_EQ(atom[0], 1024);

		w.wr_id = 7;
		w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
		w.wr.atomic.compare_add = 1024;
		w.wr.atomic.swap = 0xabcdef;
		MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
		MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
		MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(wc[0].opcode, IBV_WC_COMP_SWAP);
		MR_CHECK_EQ(atom[1], 1024);
		MR_CHECK_EQ(atom[0], 0xabcdef);

		w.wr_id = 8; /* compare fails: memory unchanged */
		MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
		MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
		MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(atom[1], 0xabcdef);
		MR_CHECK_EQ(atom[0], 0xabcdef);
	}

	/* Unsignalled WRITE then signalled one: one completion, both
	 * written, in order. */
	fill_random(src, 2048);
	{
		struct ibv_send_wr w[2], *bad;

		memset(w, 0, sizeof(w));
		sg[0] = (struct ibv_sge){ (uintptr_t)src, 1024, msrc->lkey };
		sg[1] = (struct ibv_sge){ (uintptr_t)src + 1024, 1024,
					  msrc->lkey };
		w[0].wr_id = 20;
		w[0].sg_list = &sg[0];
		w[0].num_sge = 1;
		w[0].opcode = IBV_WR_RDMA_WRITE;
		w[0].wr.rdma.remote_addr = (uintptr_t)dst;
		w[0].wr.rdma.rkey = mdst->rkey;
		w[0].next = &w[1];
		w[1] = w[0];
		w[1].next = NULL;
		w[1].wr_id = 21;
		w[1].sg_list = &sg[1];
		w[1].send_flags = IBV_SEND_SIGNALED;
		w[1].wr.rdma.remote_addr = (uintptr_t)dst + 1024;
		MR_CHECK_EQ(ibv_post_send(a, w, &bad), 0);
		MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
		MR_CHECK_EQ(wc[0].wr_id, 21);
		MR_CHECK_MEM(dst, src, 2048);
		MR_CHECK_EQ(ibv_poll_cq(cq, 1, wc), 0);
	}
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
}

static void test_rc_errors(void)
{
	struct ibv_qp *a, *b;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_wc wc[2];
	struct ibv_sge sg = { 0, 64, 0 }, rs;

	MR_CHECK(ctx);
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, NULL);
	MR_CHECK(a && b);
	MR_CHECK_EQ(mrt_rc_up(a, &gid1, b->qp_num, 7, 9), 0);
	MR_CHECK_EQ(mrt_rc_up(b, &gid1, a->qp_num, 9, 7), 0);
	MR_CHECK_EQ(ibv_query_qp(a, &qa,
				 IBV_QP_STATE | IBV_QP_DEST_QPN |
					 IBV_QP_SQ_PSN | IBV_QP_TIMEOUT,
				 &qi),
		    0);
	MR_CHECK_EQ(qa.qp_state, IBV_QPS_RTS);
	MR_CHECK_EQ(qa.dest_qp_num, b->qp_num);
	MR_CHECK_EQ(qa.timeout, 14);
	MR_CHECK_EQ(qa.path_mtu, IBV_MTU_1024);
	MR_CHECK_EQ(qi.cap.max_send_sge, 2);
	MR_CHECK(qi.send_cq == cq && qi.qp_type == IBV_QPT_RC);

	/* A WRITE to a region the peer did not open for writing. */
	sg.addr = (uintptr_t)src;
	sg.lkey = msrc->lkey;
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, 30, &sg, 1, (uintptr_t)dst,
			     mro->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].wr_id, 30);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	/* After the error the QP is in ERR and later WRs are flushed. */
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, 31, &sg, 1, (uintptr_t)dst,
			     mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].wr_id, 31);
	MR_CHECK_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(ibv_query_qp(a, &qa, IBV_QP_STATE, &qi), 0);
	MR_CHECK_EQ(qa.qp_state, IBV_QPS_ERR);

	/* Moving b to ERR flushes its posted receives. */
	rs = (struct ibv_sge){ (uintptr_t)loc, 64, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 40, &rs, 1), 0);
	MR_CHECK_EQ(post_recv(b, 41, &rs, 1), 0);
	while (ibv_poll_cq(cq, 2, wc) > 0)
		; /* the peer's error may have left completions */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_ERR;
	MR_CHECK_EQ(ibv_modify_qp(b, &qa, IBV_QP_STATE), 0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
	MR_CHECK_EQ(wc[0].status, IBV_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(wc[0].wr_id + wc[1].wr_id, 81);
	/* Both errors were reported by error completions: no QP_FATAL
	 * (that event is for failures no completion can report). */
	MR_CHECK_EQ(drain_qp_events(a, b), 0);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);

	/* A bad rkey and a READ outside the region. */
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, NULL);
	MR_CHECK(a && b);
	MR_CHECK_EQ(mrt_rc_up(a, &gid1, b->qp_num, 1, 2), 0);
	MR_CHECK_EQ(mrt_rc_up(b, &gid1, a->qp_num, 2, 1), 0);
	sg.addr = (uintptr_t)loc;
	sg.lkey = mloc->lkey;
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_READ, 50, &sg, 1,
			     (uintptr_t)dst + BUF - 32, mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	MR_CHECK(drain_qp_events(a, b) >= 0);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, NULL);
	MR_CHECK(a && b);
	MR_CHECK_EQ(mrt_rc_up(a, &gid1, b->qp_num, 1, 2), 0);
	MR_CHECK_EQ(mrt_rc_up(b, &gid1, a->qp_num, 2, 1), 0);
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, 51, &sg, 1, (uintptr_t)dst,
			     mdst->rkey ^ 0x100, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	MR_CHECK(drain_qp_events(a, b) >= 0);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
}

/*
 * The reply path of a UD receiver (ibv_ud_pingpong's server, UCX):
 * libibverbs' ibv_init_ah_from_wc reads the GRH area (version 6: the IPv6
 * header; 4: the IPv4 header at byte 20), looks our GID up in the table
 * and gives the vector back to the sender; a datagram sent with it must
 * reach a. 0, or the step that failed.
 */
static int ud_reply(struct ibv_qp *a, struct ibv_qp *b, struct ibv_wc *rwc,
		    int want_sgid)
{
	struct ibv_ah_attr r;
	struct ibv_ah *ah;
	struct ibv_sge sg = { (uintptr_t)src, 64, msrc->lkey };
	struct ibv_sge rs = { (uintptr_t)dst, 40 + 64, mdst->lkey };
	struct ibv_send_wr w = { 0 }, *bad;
	struct ibv_wc wc[2];
	int ret = 0;

	if (ibv_init_ah_from_wc(ctx, 1, rwc, (struct ibv_grh *)loc, &r))
		return 1;
	if (!r.is_global || r.grh.sgid_index != want_sgid)
		return 2;
	ah = ibv_create_ah(pd, &r);
	if (!ah)
		return 3;
	if (post_recv(a, 70, &rs, 1))
		ret = 4;
	w.wr_id = 71;
	w.sg_list = &sg;
	w.num_sge = 1;
	w.opcode = IBV_WR_SEND;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = rwc->src_qp;
	w.wr.ud.remote_qkey = 0x11111111;
	if (!ret && ibv_post_send(b, &w, &bad))
		ret = 5;
	if (!ret && mrt_wait_wc(cq, 2, wc) != 2)
		ret = 6;
	if (!ret &&
	    (wc[0].status != IBV_WC_SUCCESS || wc[1].status != IBV_WC_SUCCESS ||
	     (wc[0].wr_id != 70 && wc[1].wr_id != 70) ||
	     (wc[0].wr_id == 70 ? wc[0] : wc[1]).qp_num != a->qp_num))
		ret = 7;
	ibv_destroy_ah(ah);
	return ret;
}

static void test_ud(void)
{
	struct ibv_qp *a, *b;
	struct ibv_qp_attr qa;
	struct ibv_ah_attr aa;
	struct ibv_ah *ah;
	struct ibv_wc wc[2];
	struct ibv_sge sg, rs;
	struct ibv_send_wr w = { 0 }, *bad;
	int i;

	MR_CHECK(ctx);
	a = make_qp(IBV_QPT_UD, NULL);
	b = make_qp(IBV_QPT_UD, NULL);
	MR_CHECK(a && b);
	for (i = 0; i < 2; i++) {
		struct ibv_qp *q = i ? b : a;

		MR_CHECK_EQ(to_init(q), 0);
		memset(&qa, 0, sizeof(qa));
		qa.qp_state = IBV_QPS_RTR;
		MR_CHECK_EQ(ibv_modify_qp(q, &qa, IBV_QP_STATE), 0);
		qa.qp_state = IBV_QPS_RTS;
		qa.sq_psn = 0;
		MR_CHECK_EQ(ibv_modify_qp(q, &qa, IBV_QP_STATE | IBV_QP_SQ_PSN),
			    0);
	}
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.dgid = gid1;
	aa.grh.sgid_index = 0;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	MR_CHECK(ah);

	fill_random(src, 500);
	memset(loc, 0, 1024);
	rs = (struct ibv_sge){ (uintptr_t)loc, 40 + 500, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 60, &rs, 1), 0);
	sg = (struct ibv_sge){ (uintptr_t)src, 500, msrc->lkey };
	w.wr_id = 61;
	w.sg_list = &sg;
	w.num_sge = 1;
	w.opcode = IBV_WR_SEND;
	w.send_flags = IBV_SEND_SIGNALED;
	w.wr.ud.ah = ah;
	w.wr.ud.remote_qpn = b->qp_num;
	w.wr.ud.remote_qkey = 0x11111111;
	MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
	if (wc[0].wr_id != 60) {
		struct ibv_wc t = wc[0];

		wc[0] = wc[1];
		wc[1] = t;
	}
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RECV);
	/* The 40-byte GRH area comes first and is counted. */
	MR_CHECK_EQ(wc[0].byte_len, 540);
	MR_CHECK(wc[0].wc_flags & IBV_WC_GRH);
	MR_CHECK_EQ(wc[0].src_qp, a->qp_num);
	MR_CHECK_MEM(loc + 40, src, 500);
	MR_CHECK_EQ(wc[1].wr_id, 61);
	MR_CHECK_EQ(wc[1].status, IBV_WC_SUCCESS);
	/* MR-UD-5 over IPv6: the GRH is the IPv6 header (version 6, next
	 * header UDP, our link-local GID both ways), sl says IPv6. */
	MR_CHECK_EQ(wc[0].sl, 0x9);
	MR_CHECK_EQ(loc[0] >> 4, 6);
	MR_CHECK_EQ(loc[6], 17);
	MR_CHECK_MEM(loc + 8, gid1.raw, 16);
	MR_CHECK_MEM(loc + 24, gid1.raw, 16);
	MR_CHECK_EQ(ud_reply(a, b, &wc[0], 0), 0);
	/* And over IPv4 from GID 1: the IPv4 header at byte 20, sl 0xa. */
	{
		struct ibv_ah *ah4;

		MR_CHECK_EQ(ibv_query_gid(ctx, 1, 1, &aa.grh.dgid), 0);
		aa.grh.sgid_index = 1;
		ah4 = ibv_create_ah(pd, &aa);
		MR_CHECK(ah4);
		MR_CHECK_EQ(post_recv(b, 62, &rs, 1), 0);
		w.wr_id = 63;
		w.wr.ud.ah = ah4;
		MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
		MR_CHECK_EQ(mrt_wait_wc(cq, 2, wc), 2);
		if (wc[0].wr_id != 62) {
			struct ibv_wc t = wc[0];

			wc[0] = wc[1];
			wc[1] = t;
		}
		MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(wc[0].sl, 0xa);
		MR_CHECK_EQ(loc[20], 0x45);
		MR_CHECK_MEM(loc + 20 + 12, aa.grh.dgid.raw + 12, 4);
		MR_CHECK_EQ(ud_reply(a, b, &wc[0], 1), 0);
		w.wr.ud.ah = ah;
		MR_CHECK_EQ(ibv_destroy_ah(ah4), 0);
	}

	/* A datagram over the MTU cannot be posted; RC opcodes neither. */
	sg.length = MRT_MTU + 1;
	MR_CHECK(ibv_post_send(a, &w, &bad) != 0);
	MR_CHECK(bad == &w);
	sg.length = 8;
	w.opcode = IBV_WR_RDMA_WRITE;
	MR_CHECK_EQ(ibv_post_send(a, &w, &bad), EINVAL);
	MR_CHECK_EQ(ibv_destroy_ah(ah), 0);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
}

static void test_srq(void)
{
	struct ibv_srq_init_attr si = { .attr = { .max_wr = 16,
						  .max_sge = 1 } };
	struct ibv_srq_attr sa;
	struct ibv_srq *srq;
	struct ibv_qp *a, *b;
	struct ibv_async_event ev;
	struct ibv_wc wc[8];
	struct ibv_sge sg, rs;
	struct pollfd pfd;
	int i, fl, got;

	MR_CHECK(ctx);
	srq = ibv_create_srq(pd, &si);
	MR_CHECK(srq);
	a = make_qp(IBV_QPT_RC, NULL);
	b = make_qp(IBV_QPT_RC, srq);
	MR_CHECK(a && b);
	MR_CHECK_EQ(mrt_rc_up(a, &gid1, b->qp_num, 3, 4), 0);
	MR_CHECK_EQ(mrt_rc_up(b, &gid1, a->qp_num, 4, 3), 0);
	for (i = 0; i < 4; i++) {
		struct ibv_recv_wr w = { .wr_id = 70 + (uint64_t)i,
					 .sg_list = &rs,
					 .num_sge = 1 },
				   *bad;

		rs = (struct ibv_sge){ (uintptr_t)loc + (uint64_t)i * 1024,
				       1024, mloc->lkey };
		MR_CHECK_EQ(ibv_post_srq_recv(srq, &w, &bad), 0);
	}
	/* A QP with an SRQ has no receive queue of its own. */
	MR_CHECK_EQ(post_recv(b, 99, &rs, 1), EINVAL);
	sa.srq_limit = 2;
	MR_CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), 0);
	sa.srq_limit = 17;
	MR_CHECK_EQ(ibv_modify_srq(srq, &sa, IBV_SRQ_LIMIT), EINVAL);
	fill_random(src, 3 * 100);
	for (i = 0; i < 3; i++) {
		sg = (struct ibv_sge){ (uintptr_t)src + (uint64_t)i * 100, 100,
				       msrc->lkey };
		MR_CHECK_EQ(post_one(a, IBV_WR_SEND, 80 + (uint64_t)i, &sg, 1,
				     0, 0, 0),
			    0);
	}
	got = mrt_wait_wc(cq, 6, wc);
	MR_CHECK_EQ(got, 6);
	for (i = 0; i < 6; i++) {
		MR_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].opcode == IBV_WC_RECV) {
			uint64_t k = wc[i].wr_id - 70;

			/* SRQ receives are consumed in posting order. */
			MR_CHECK(k < 3);
			MR_CHECK_EQ(wc[i].qp_num, b->qp_num);
			MR_CHECK_MEM(loc + k * 1024, src + k * 100, 100);
		}
	}
	/* One WQE is left, below the limit of 2: the limit event. */
	fl = fcntl(ctx->async_fd, F_GETFL);
	pfd.fd = ctx->async_fd;
	pfd.events = POLLIN;
	MR_CHECK_EQ(poll(&pfd, 1, 10000), 1);
	MR_CHECK_EQ(ibv_get_async_event(ctx, &ev), 0);
	MR_CHECK_EQ(ev.event_type, IBV_EVENT_SRQ_LIMIT_REACHED);
	MR_CHECK(ev.element.srq == srq);
	ibv_ack_async_event(&ev);
	MR_CHECK_EQ(fcntl(ctx->async_fd, F_GETFL), fl);
	/* Fired once: the limit is disarmed until set again. */
	MR_CHECK_EQ(ibv_query_srq(srq, &sa), 0);
	MR_CHECK_EQ(sa.srq_limit, 0);
	MR_CHECK_EQ(sa.max_wr, 16);
	MR_CHECK_EQ(ibv_destroy_srq(srq), EBUSY); /* b uses it */
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
	MR_CHECK_EQ(ibv_destroy_srq(srq), 0);
}

/* UC: INIT -> RTR -> RTS with IB's UC attributes only (MR-UC-9). */
static int connect_uc(struct ibv_qp *q, uint32_t peer, uint32_t rq_psn,
		      uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = 4,
	};
	int ret;

	ret = to_init(q);
	if (ret)
		return ret;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid1;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	/* RC's responder attributes are not UC attributes. */
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC) != EINVAL)
		return -1;
	ret = ibv_modify_qp(q, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT) !=
	    EINVAL)
		return -1;
	return ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* The completions of n WRs in any order, sorted by wr_id. */
static int wait_sorted(int n, struct ibv_wc *wc)
{
	int got = mrt_wait_wc(cq, n, wc), i, j;

	for (i = 0; i < got; i++)
		for (j = i + 1; j < got; j++)
			if (wc[j].wr_id < wc[i].wr_id) {
				struct ibv_wc t = wc[i];

				wc[i] = wc[j];
				wc[j] = t;
			}
	return got;
}

/* UC over the loopback (no loss there): WRITE, WRITE_WITH_IMM, SEND,
 * SEND_WITH_IMM of several packets, every byte compared; READ and atomics
 * refused at post (MR-UC-6); an SRQ refused (MR-UC-8); query reports the
 * UC attributes. */
static void test_uc(void)
{
	struct ibv_qp *a, *b;
	struct ibv_wc wc[4];
	struct ibv_sge sg, rs;
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_send_wr w = { 0 }, *bad;
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq;

	MR_CHECK(ctx);
	srq = ibv_create_srq(pd, &sa);
	MR_CHECK(srq);
	/* MR-UC-8: a UC QP receives from an SRQ too. */
	a = make_qp(IBV_QPT_UC, NULL);
	b = make_qp(IBV_QPT_UC, srq);
	MR_CHECK(a && b);
	if (!a || !b)
		return;
	MR_CHECK_EQ(connect_uc(a, b->qp_num, 0x300, 0x400), 0);
	MR_CHECK_EQ(connect_uc(b, a->qp_num, 0x400, 0x300), 0);
	{
		struct ibv_recv_wr rw = { .wr_id = 30, .sg_list = &rs,
					  .num_sge = 1 },
				   *rb;

		rs = (struct ibv_sge){ (uintptr_t)loc, 8192, mloc->lkey };
		MR_CHECK_EQ(ibv_post_srq_recv(srq, &rw, &rb), 0);
	}
	fill_random(src, BUF);
	memset(loc, 0, 8192);
	sg = (struct ibv_sge){ (uintptr_t)src, 2500, msrc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_SEND, 31, &sg, 1, 0, 0, 0), 0);
	MR_CHECK_EQ(wait_sorted(2, wc), 2);
	MR_CHECK_EQ(wc[0].wr_id, 30);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RECV);
	MR_CHECK_EQ(wc[0].byte_len, 2500);
	MR_CHECK_EQ(wc[0].qp_num, b->qp_num);
	MR_CHECK_EQ(wc[1].wr_id, 31);
	MR_CHECK_MEM(loc, src, 2500);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
	MR_CHECK_EQ(ibv_destroy_srq(srq), 0);
	a = make_qp(IBV_QPT_UC, NULL);
	b = make_qp(IBV_QPT_UC, NULL);
	MR_CHECK(a && b);
	if (!a || !b)
		return;
	MR_CHECK_EQ(a->qp_type, IBV_QPT_UC);
	MR_CHECK_EQ(connect_uc(a, b->qp_num, 0x300, 0x400), 0);
	MR_CHECK_EQ(connect_uc(b, a->qp_num, 0x400, 0x300), 0);
	MR_CHECK_EQ(ibv_query_qp(a, &qa, IBV_QP_STATE, &qi), 0);
	MR_CHECK_EQ(qa.qp_state, IBV_QPS_RTS);
	MR_CHECK_EQ(qa.dest_qp_num, b->qp_num);
	MR_CHECK_EQ(qa.rq_psn, 0x300);
	MR_CHECK_EQ(qa.sq_psn, 0x400);
	MR_CHECK_EQ(qa.path_mtu, IBV_MTU_1024);
	MR_CHECK_EQ(qi.qp_type, IBV_QPT_UC);

	/* WRITE of 5000 bytes: five packets. */
	fill_random(src, BUF);
	memset(dst, 0, BUF);
	sg = (struct ibv_sge){ (uintptr_t)src, 5000, msrc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_RDMA_WRITE, 1, &sg, 1,
			     (uintptr_t)dst + 10, mdst->rkey, 0),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
	/* UC completes the WRITE when it is sent: a later SEND on the same
	 * path shows the WRITE landed (its packets went first). */
	rs = (struct ibv_sge){ (uintptr_t)loc, 8192, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 20, &rs, 1), 0);
	sg = (struct ibv_sge){ (uintptr_t)src + 8192, 3000, msrc->lkey };
	MR_CHECK_EQ(post_one(a, IBV_WR_SEND, 2, &sg, 1, 0, 0, 0), 0);
	MR_CHECK_EQ(wait_sorted(2, wc), 2);
	MR_CHECK_EQ(wc[0].wr_id, 2);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_SEND);
	MR_CHECK_EQ(wc[1].wr_id, 20);
	MR_CHECK_EQ(wc[1].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[1].opcode, IBV_WC_RECV);
	MR_CHECK_EQ(wc[1].byte_len, 3000);
	MR_CHECK_EQ(wc[1].qp_num, b->qp_num);
	MR_CHECK_EQ(wc[1].src_qp, a->qp_num);
	MR_CHECK_MEM(dst + 10, src, 5000);
	MR_CHECK_EQ(dst[9], 0);
	MR_CHECK_EQ(dst[5010], 0);
	MR_CHECK_MEM(loc, src + 8192, 3000);

	/* WRITE_WITH_IMM: data placed, the imm in a receive completion. */
	rs = (struct ibv_sge){ (uintptr_t)loc, 16, mloc->lkey };
	MR_CHECK_EQ(post_recv(b, 21, &rs, 1), 0);
	w.wr_id = 3;
	sg = (struct ibv_sge){ (uintptr_t)src + 16384, 2500, msrc->lkey };
	w.sg_list = &sg;
	w.num_sge = 1;
	w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w.send_flags = IBV_SEND_SIGNALED;
	w.imm_data = htobe32(0xabcd0123);
	w.wr.rdma.remote_addr = (uintptr_t)dst + 20000;
	w.wr.rdma.rkey = mdst->rkey;
	MR_CHECK_EQ(ibv_post_send(a, &w, &bad), 0);
	MR_CHECK_EQ(wait_sorted(2, wc), 2);
	MR_CHECK_EQ(wc[0].wr_id, 3);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_RDMA_WRITE);
	MR_CHECK_EQ(wc[1].wr_id, 21);
	MR_CHECK_EQ(wc[1].opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	MR_CHECK_EQ(wc[1].byte_len, 2500);
	MR_CHECK(wc[1].wc_flags & IBV_WC_WITH_IMM);
	MR_CHECK_EQ(be32toh(wc[1].imm_data), 0xabcd0123);
	MR_CHECK_MEM(dst + 20000, src + 16384, 2500);

	/* SEND_WITH_IMM b -> a. */
	rs = (struct ibv_sge){ (uintptr_t)loc + 8192, 8192, mloc->lkey };
	MR_CHECK_EQ(post_recv(a, 22, &rs, 1), 0);
	w.wr_id = 4;
	sg = (struct ibv_sge){ (uintptr_t)src + 32768, 4100, msrc->lkey };
	w.opcode = IBV_WR_SEND_WITH_IMM;
	w.imm_data = htobe32(77);
	MR_CHECK_EQ(ibv_post_send(b, &w, &bad), 0);
	MR_CHECK_EQ(wait_sorted(2, wc), 2);
	MR_CHECK_EQ(wc[0].wr_id, 4);
	MR_CHECK_EQ(wc[1].wr_id, 22);
	MR_CHECK_EQ(wc[1].opcode, IBV_WC_RECV);
	MR_CHECK_EQ(wc[1].byte_len, 4100);
	MR_CHECK_EQ(be32toh(wc[1].imm_data), 77);
	MR_CHECK_MEM(loc + 8192, src + 32768, 4100);

	/* READ and atomics: EINVAL at post, bad_wr names the WR. */
	w.wr_id = 5;
	w.opcode = IBV_WR_RDMA_READ;
	bad = NULL;
	MR_CHECK_EQ(ibv_post_send(a, &w, &bad), EINVAL);
	MR_CHECK(bad == &w);
	w.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
	sg.length = 8;
	w.wr.atomic.remote_addr = (uintptr_t)atom;
	w.wr.atomic.rkey = matom->rkey;
	MR_CHECK_EQ(ibv_post_send(a, &w, &bad), EINVAL);
	MR_CHECK_EQ(ibv_poll_cq(cq, 1, wc), 0); /* nothing was queued */
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
}

static void test_bad_attrs(void)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RAW_PACKET,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
	};
	struct ibv_qp_attr qa;
	struct ibv_qp *q;

	MR_CHECK(ctx);
	errno = 0;
	MR_CHECK(!ibv_create_qp(pd, &ia));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_sge = 17;
	errno = 0;
	MR_CHECK(!ibv_create_qp(pd, &ia));
	MR_CHECK_EQ(errno, EINVAL);
	ia.cap.max_send_sge = 1;
	ia.cap.max_send_wr = 1u << 20;
	errno = 0;
	MR_CHECK(!ibv_create_qp(pd, &ia));
	MR_CHECK_EQ(errno, EINVAL);
	ia.cap.max_send_wr = 4;
	q = ibv_create_qp(pd, &ia);
	MR_CHECK(q);
	MR_CHECK_EQ(q->state, IBV_QPS_RESET);
	/* RESET -> RTS skips states; port 2 does not exist. */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTS;
	MR_CHECK_EQ(ibv_modify_qp(q, &qa, IBV_QP_STATE), EINVAL);
	qa.qp_state = IBV_QPS_INIT;
	qa.port_num = 2;
	MR_CHECK_EQ(ibv_modify_qp(q, &qa,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS),
		    EINVAL);
	MR_CHECK_EQ(to_init(q), 0);
	MR_CHECK_EQ(q->state, IBV_QPS_INIT);
	/* Path MTU above the device's (1024). */
	memset(&qa, 0, sizeof(qa));
	qa.qp_state = IBV_QPS_RTR;
	qa.path_mtu = IBV_MTU_4096;
	qa.dest_qp_num = 5;
	qa.ah_attr.is_global = 1;
	qa.ah_attr.port_num = 1;
	qa.ah_attr.grh.dgid = gid1;
	qa.ah_attr.grh.sgid_index = 0;
	MR_CHECK_EQ(ibv_modify_qp(q, &qa,
				  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
					  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
					  IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER),
		    EINVAL);
	MR_CHECK_EQ(q->state, IBV_QPS_INIT);
	/* Objects in use. */
	MR_CHECK_EQ(ibv_destroy_cq(cq), EBUSY);
	MR_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	MR_CHECK_EQ(ibv_destroy_qp(q), 0);
}

static void test_teardown(void)
{
	MR_CHECK(ctx);
	MR_CHECK_EQ(ibv_dereg_mr(msrc), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mdst), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mloc), 0);
	MR_CHECK_EQ(ibv_dereg_mr(matom), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mro), 0);
	MR_CHECK_EQ(mrt_fixture_close(&dev), 0);
}

MR_TEST_MAIN(MR_TEST(setup), MR_TEST(test_rc_opcodes), MR_TEST(test_rc_errors),
	     MR_TEST(test_ud), MR_TEST(test_srq), MR_TEST(test_uc),
	     MR_TEST(test_bad_attrs), MR_TEST(test_teardown))
