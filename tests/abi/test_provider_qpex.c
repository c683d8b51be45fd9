// SPDX-License-Identifier: BSD-2-Clause
/*
 * Extended QPs through the real libibverbs (ibv_create_qp_ex with
 * send_ops_flags, ibv_wr_start ... ibv_wr_complete) over the device's own
 * loopback: every offered opcode with every way of giving data (one SGE,
 * an SGE list, inline data, an inline list), every byte compared; then
 * what is refused: operations not offered, a setter without a WR, too
 * many SGEs or inline bytes, a batch larger than the queue (nothing of it
 * posted), a datagram without an address. And extended CQs: the
 * start/next/end_poll readers, completion timestamps against
 * ibv_query_rt_values_ex and hca_core_clock, ibv_resize_cq (below the
 * fill refused, nothing lost), wc_flags the device cannot fill refused.
 * And ibv_rereg_mr: a new translation, PD or access takes effect for the
 * peer's next access with the same key; bad input changes nothing.
 *
 * Device: provider_fixture.h (root; skipped otherwise).
 */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "mr_test.h"
#include "provider_fixture.h"

#define BUF 65536
#define RC_OPS                                                            \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM |             \
	 IBV_QP_EX_WITH_RDMA_WRITE | IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
	 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |   \
	 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

static struct mrt_dev dev;
static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static union ibv_gid gid0;
static uint8_t *src, *dst;
static uint64_t *atom;
static struct ibv_mr *msrc, *mdst, *matom;

static int wait_wc(int n, struct ibv_wc *wc)
{
	return mrt_wait_wc(cq, n, wc);
}

static struct ibv_qp *make_qpx_on(struct ibv_cq *c, enum ibv_qp_type t,
				  uint64_t ops, uint32_t max_wr)
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = c,
		.recv_cq = c,
		.qp_type = t,
		.cap = { .max_send_wr = max_wr,
			 .max_recv_wr = 16,
			 .max_send_sge = 3,
			 .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = ops,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *make_qpx(enum ibv_qp_type t, uint64_t ops,
			       uint32_t max_wr)
{
	return make_qpx_on(cq, t, ops, max_wr);
}

/* RC towards peer (mrt_rc_up), or UD INIT -> RTR -> RTS. */
static int up(struct ibv_qp *q, uint32_t peer)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qkey = 0x1234 };

	if (q->qp_type != IBV_QPT_UD)
		return mrt_rc_up(q, &gid0, peer, 0, 0);
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(q, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(q, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

static void setup(void)
{
	int i;

	MR_CHECK_EQ(mrt_fixture_open(&dev, 256), 0);
	ctx = dev.ctx;
	pd = dev.pd;
	cq = dev.cq;
	gid0 = dev.gid0;
	src = aligned_alloc(4096, BUF);
	dst = aligned_alloc(4096, BUF);
	atom = aligned_alloc(64, 64);
	MR_CHECK(src && dst && atom);
	for (i = 0; i < BUF; i++)
		src[i] = (uint8_t)(i * 7 + 3);
	msrc = ibv_reg_mr(pd, src, BUF, MRT_ACC_ALL);
	mdst = ibv_reg_mr(pd, dst, BUF, MRT_ACC_ALL);
	matom = ibv_reg_mr(pd, atom, 64, MRT_ACC_ALL);
	MR_CHECK(msrc && mdst && matom);
}

static void test_rc_every_op(void)
{
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	struct ibv_wc wc[12];
	struct ibv_sge rs = { (uintptr_t)dst + 40000, 4096, mdst->lkey };
	struct ibv_sge list3[3] = {
		{ (uintptr_t)src + 100, 10, msrc->lkey },
		{ (uintptr_t)src + 200, 20, msrc->lkey },
		{ (uintptr_t)src + 300, 30, msrc->lkey },
	};
	char inl1[5] = "abcd", inl2[7] = "efghij";
	struct ibv_data_buf il[2] = { { inl1, 4 }, { inl2, 6 } };
	struct ibv_recv_wr rw = { .wr_id = 77, .sg_list = &rs, .num_sge = 1 },
			   *bad;
	int i;

	MR_CHECK(ctx);
	memset(dst, 0, BUF);
	atom[0] = 5;
	atom[1] = 0;
	atom[2] = 0;
	a = make_qpx(IBV_QPT_RC, RC_OPS, 16);
	b = make_qpx(IBV_QPT_RC, RC_OPS, 16);
	MR_CHECK(a && b);
	x = ibv_qp_to_qp_ex(a);
	MR_CHECK(x && x->wr_start && x->wr_set_inline_data_list);
	/* Window builders are there (test_provider_mw.c uses them); what
	 * is not offered is NULL. */
	MR_CHECK(x->wr_bind_mw && x->wr_local_inv && x->wr_send_inv);
	MR_CHECK(!x->wr_send_tso && !x->wr_set_xrc_srqn);
	MR_CHECK_EQ(up(a, b->qp_num), 0);
	MR_CHECK_EQ(up(b, a->qp_num), 0);
	MR_CHECK_EQ(ibv_post_recv(b, &rw, &bad), 0);

	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 1; /* WRITE, one SGE */
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 3000);
	x->wr_id = 2; /* WRITE_IMM, an SGE list */
	ibv_wr_rdma_write_imm(x, mdst->rkey, (uintptr_t)dst + 4000,
			      htobe32(0xabc));
	ibv_wr_set_sge_list(x, 3, list3);
	x->wr_id = 3; /* WRITE, inline list; the buffers change at once */
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst + 5000);
	ibv_wr_set_inline_data_list(x, 2, il);
	memset(inl1, 'X', 4);
	memset(inl2, 'Y', 6);
	x->wr_id = 4; /* SEND_IMM, inline */
	ibv_wr_send_imm(x, htobe32(0x55));
	ibv_wr_set_inline_data(x, "hello", 5);
	x->wr_flags = IBV_SEND_SIGNALED;
	x->wr_id = 5; /* READ back what WR 1 wrote */
	ibv_wr_rdma_read(x, mdst->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, mdst->lkey, (uintptr_t)dst + 20000, 3000);
	x->wr_id = 6;
	ibv_wr_atomic_fetch_add(x, matom->rkey, (uintptr_t)&atom[0], 10);
	ibv_wr_set_sge(x, matom->lkey, (uintptr_t)&atom[1], 8);
	x->wr_id = 7;
	ibv_wr_atomic_cmp_swp(x, matom->rkey, (uintptr_t)&atom[0], 15, 99);
	ibv_wr_set_sge(x, matom->lkey, (uintptr_t)&atom[2], 8);
	MR_CHECK_EQ(ibv_wr_complete(x), 0);

	/* 7 send completions in order, the WRITE_IMM's and the SEND's
	 * receive (the WRITE_IMM consumes no WQE of its own here: one
	 * receive, so post one more for the SEND). */
	rw.wr_id = 78;
	rs.addr = (uintptr_t)dst + 45000;
	MR_CHECK_EQ(ibv_post_recv(b, &rw, &bad), 0);
	MR_CHECK_EQ(wait_wc(9, wc), 9);
	{
		int s = 0;

		for (i = 0; i < 9; i++) {
			MR_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
			if (wc[i].qp_num == a->qp_num)
				MR_CHECK_EQ(wc[i].wr_id, (uint64_t)++s);
		}
		MR_CHECK_EQ(s, 7);
	}
	MR_CHECK_MEM(dst, src, 3000);
	MR_CHECK_MEM(dst + 4000, src + 100, 10);
	MR_CHECK_MEM(dst + 4010, src + 200, 20);
	MR_CHECK_MEM(dst + 4030, src + 300, 30);
	MR_CHECK_MEM(dst + 5000, "abcdefghij", 10);
	MR_CHECK_MEM(dst + 45000, "hello", 5);
	MR_CHECK_MEM(dst + 20000, src, 3000);
	MR_CHECK_EQ(atom[1], 5);
	MR_CHECK_EQ(atom[2], 15);
	MR_CHECK_EQ(atom[0], 99);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
}

static void test_refused(void)
{
	struct ibv_qp_init_attr_ex ax = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
	};
	struct ibv_sge two[2] = { { (uintptr_t)src, 8, msrc->lkey },
				  { (uintptr_t)src, 8, msrc->lkey } };
	struct ibv_qp *a, *b, *u;
	struct ibv_qp_ex *x;
	struct ibv_wc wc[8];
	static char big[65];
	int i;

	MR_CHECK(ctx);
	/* Operations the device does not offer: no QP at all. */
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(ctx, &ax));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	/* ATOMIC_WRITE is offered on RC (test_provider_aw.c); not on UD */
	ax.qp_type = IBV_QPT_UD;
	ax.send_ops_flags = IBV_QP_EX_WITH_RDMA_WRITE;
	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(ctx, &ax));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	ax.qp_type = IBV_QPT_RC;
	ax.comp_mask |= IBV_QP_INIT_ATTR_CREATE_FLAGS;
	ax.send_ops_flags = IBV_QP_EX_WITH_SEND;
	ax.create_flags = IBV_QP_CREATE_SCATTER_FCS;
	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(ctx, &ax));
	MR_CHECK_EQ(errno, EOPNOTSUPP);

	a = make_qpx(IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE, 4);
	b = make_qpx(IBV_QPT_RC, IBV_QP_EX_WITH_RDMA_WRITE, 4);
	MR_CHECK(a && b);
	MR_CHECK_EQ(up(a, b->qp_num), 0);
	MR_CHECK_EQ(up(b, a->qp_num), 0);
	x = ibv_qp_to_qp_ex(a);
	memset(dst, 0, 64);
	/* Each batch below fails at complete and posts nothing. */
	ibv_wr_start(x); /* an operation not in send_ops_flags */
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 8);
	ibv_wr_send(x);
	MR_CHECK_EQ(ibv_wr_complete(x), EOPNOTSUPP);
	ibv_wr_start(x); /* a setter before any WR */
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 8);
	MR_CHECK_EQ(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x); /* more SGEs than max_send_sge (3 here) */
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst);
	{
		struct ibv_sge four[4] = { two[0], two[1], two[0], two[1] };

		ibv_wr_set_sge_list(x, 4, four);
	}
	MR_CHECK_EQ(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x); /* more inline bytes than max_inline_data */
	x->wr_flags = IBV_SEND_SIGNALED | IBV_SEND_INLINE;
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst);
	ibv_wr_set_inline_data(x, big, sizeof(big));
	MR_CHECK_EQ(ibv_wr_complete(x), EINVAL);
	ibv_wr_start(x); /* 5 WRs into a queue of 4 */
	x->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 5; i++) {
		ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst + 8 * i);
		ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 8);
	}
	MR_CHECK_EQ(ibv_wr_complete(x), ENOMEM);
	ibv_wr_start(x); /* aborted: nothing posted */
	ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst);
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 8);
	ibv_wr_abort(x);
	MR_CHECK_EQ(wait_wc(1, wc), 0);
	{
		static const uint8_t zero[64];

		MR_CHECK_MEM(dst, zero, 64);
	}
	/* The queue is intact: a full batch of 4 goes. */
	ibv_wr_start(x);
	for (i = 0; i < 4; i++) {
		x->wr_id = 100 + (uint64_t)i;
		ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst + 8 * i);
		ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src + 8 * i, 8);
	}
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	MR_CHECK_EQ(wait_wc(4, wc), 4);
	for (i = 0; i < 4; i++) {
		MR_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(wc[i].wr_id, 100 + (uint64_t)i);
	}
	MR_CHECK_MEM(dst, src, 32);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);

	/* UD: a datagram needs ibv_wr_set_ud_addr. */
	u = make_qpx(IBV_QPT_UD, IBV_QP_EX_WITH_SEND, 4);
	MR_CHECK(u);
	MR_CHECK_EQ(up(u, 0), 0);
	x = ibv_qp_to_qp_ex(u);
	ibv_wr_start(x);
	ibv_wr_send(x);
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 8);
	MR_CHECK_EQ(ibv_wr_complete(x), EINVAL);
	MR_CHECK_EQ(ibv_destroy_qp(u), 0);
}

/* UD through ibv_wr_set_ud_addr: the datagram and its GRH area. */
static void test_ud_addr(void)
{
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *s, *r;
	struct ibv_qp_ex *x;
	struct ibv_ah *ah;
	struct ibv_wc wc[2];
	struct ibv_sge rs = { (uintptr_t)dst, 40 + 100, mdst->lkey };
	struct ibv_recv_wr rw = { .wr_id = 9, .sg_list = &rs, .num_sge = 1 },
			   *bad;

	MR_CHECK(ctx);
	s = make_qpx(IBV_QPT_UD, IBV_QP_EX_WITH_SEND_WITH_IMM, 4);
	r = make_qpx(IBV_QPT_UD, IBV_QP_EX_WITH_SEND, 4);
	MR_CHECK(s && r);
	MR_CHECK_EQ(up(s, 0), 0);
	MR_CHECK_EQ(up(r, 0), 0);
	aa.grh.dgid = gid0;
	aa.grh.hop_limit = 64;
	ah = ibv_create_ah(pd, &aa);
	MR_CHECK(ah);
	memset(dst, 0, 200);
	MR_CHECK_EQ(ibv_post_recv(r, &rw, &bad), 0);
	x = ibv_qp_to_qp_ex(s);
	ibv_wr_start(x);
	x->wr_id = 8;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_send_imm(x, htobe32(7));
	ibv_wr_set_ud_addr(x, ah, r->qp_num, 0x1234);
	ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 100);
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	MR_CHECK_EQ(wait_wc(2, wc), 2);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[1].status, IBV_WC_SUCCESS);
	MR_CHECK_MEM(dst + 40, src, 100);
	MR_CHECK_EQ(ibv_destroy_qp(s), 0);
	MR_CHECK_EQ(ibv_destroy_qp(r), 0);
	MR_CHECK_EQ(ibv_destroy_ah(ah), 0);
}

static uint64_t raw_clock(void)
{
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };

	if (ibv_query_rt_values_ex(ctx, &v))
		return 0;
	return (uint64_t)v.raw_clock.tv_sec * 1000000000ull +
	       (uint64_t)v.raw_clock.tv_nsec;
}

static void test_cq_ex(void)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 4,
		.wc_flags = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			    IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_device_attr_ex da;
	struct ibv_poll_cq_attr pa = { 0 };
	struct ibv_sge rs = { (uintptr_t)dst, 64, mdst->lkey };
	struct ibv_recv_wr rw = { .sg_list = &rs, .num_sge = 1 }, *bad;
	struct ibv_cq_ex *cx;
	struct ibv_cq *c;
	struct ibv_qp *a, *b;
	struct ibv_qp_ex *x;
	struct ibv_wc wc[8];
	uint64_t t0, t1, last = 0;
	int i, n = 0, sends = 0, recvs = 0;

	MR_CHECK(ctx);
	MR_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &da), 0);
	MR_CHECK_EQ(da.hca_core_clock, 1000000); /* kHz: 1 tick = 1 ns */
	MR_CHECK(da.completion_timestamp_mask == UINT64_MAX);
	/* What the device cannot fill or do: refused, nothing made. */
	ca.wc_flags |= IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	MR_CHECK(!ibv_create_cq_ex(ctx, &ca));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	ca.wc_flags &= ~(uint64_t)IBV_WC_EX_WITH_CVLAN;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	ca.flags = IBV_CREATE_CQ_ATTR_IGNORE_OVERRUN;
	errno = 0;
	MR_CHECK(!ibv_create_cq_ex(ctx, &ca));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	ca.flags = IBV_CREATE_CQ_ATTR_SINGLE_THREADED;
	cx = ibv_create_cq_ex(ctx, &ca);
	MR_CHECK(cx);
	MR_CHECK(cx->read_completion_ts && cx->read_byte_len &&
		 !cx->read_slid && !cx->read_cvlan);
	c = ibv_cq_ex_to_cq(cx);
	MR_CHECK_EQ(c->cqe, 4);
	a = make_qpx_on(c, IBV_QPT_RC, RC_OPS, 4);
	b = make_qpx_on(c, IBV_QPT_RC, RC_OPS, 4);
	MR_CHECK(a && b);
	MR_CHECK_EQ(up(a, b->qp_num), 0);
	MR_CHECK_EQ(up(b, a->qp_num), 0);
	for (i = 0; i < 2; i++) {
		rw.wr_id = 50 + (uint64_t)i;
		MR_CHECK_EQ(ibv_post_recv(b, &rw, &bad), 0);
	}
	t0 = raw_clock();
	x = ibv_qp_to_qp_ex(a);
	ibv_wr_start(x);
	x->wr_flags = IBV_SEND_SIGNALED;
	for (i = 0; i < 2; i++) {
		x->wr_id = 10 + (uint64_t)i;
		ibv_wr_rdma_write_imm(x, mdst->rkey, (uintptr_t)dst + 100,
				      htobe32(0x700 + (uint32_t)i));
		ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src, 30);
	}
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	/* 4 completions into a CQ of 4; wait until all are in. */
	for (i = 0; i < 1000000 && n < 4; i++) {
		struct timespec ts = { 0, 100000 };

		n = 0;
		if (ibv_start_poll(cx, &pa) == 0) {
			/* Took one: put nothing back, count it below. */
			do {
				MR_CHECK_EQ(cx->status, IBV_WC_SUCCESS);
				t1 = ibv_wc_read_completion_ts(cx);
				MR_CHECK(t1 >= t0 && t1 >= last);
				last = t1;
				if (ibv_wc_read_opcode(cx) ==
				    IBV_WC_RDMA_WRITE) {
					MR_CHECK_EQ(cx->wr_id,
						    10 + (uint64_t)sends);
					MR_CHECK_EQ(ibv_wc_read_qp_num(cx),
						    a->qp_num);
					sends++;
				} else {
					MR_CHECK_EQ(ibv_wc_read_opcode(cx),
						    IBV_WC_RECV_RDMA_WITH_IMM);
					MR_CHECK_EQ(cx->wr_id,
						    50 + (uint64_t)recvs);
					MR_CHECK(ibv_wc_read_wc_flags(cx) &
						 IBV_WC_WITH_IMM);
					MR_CHECK_EQ(
						be32toh(ibv_wc_read_imm_data(
							cx)),
						0x700 + (uint32_t)recvs);
					MR_CHECK_EQ(ibv_wc_read_byte_len(cx),
						    30);
					MR_CHECK_EQ(ibv_wc_read_src_qp(cx),
						    a->qp_num);
					recvs++;
				}
			} while (ibv_next_poll(cx) == 0);
			ibv_end_poll(cx);
		}
		n = sends + recvs;
		nanosleep(&ts, NULL);
	}
	MR_CHECK_EQ(sends, 2);
	MR_CHECK_EQ(recvs, 2);
	MR_CHECK(last <= raw_clock());
	MR_CHECK_EQ(ibv_start_poll(cx, &pa), ENOENT); /* empty now */

	/* Resize: below what it holds is refused and loses nothing; larger
	 * keeps every entry in order; the ring keeps working. */
	ibv_wr_start(x);
	memset(dst + 200, 0, 24);
	for (i = 0; i < 3; i++) {
		x->wr_id = 20 + (uint64_t)i;
		ibv_wr_rdma_write(x, mdst->rkey, (uintptr_t)dst + 200 + 8 * i);
		ibv_wr_set_sge(x, msrc->lkey, (uintptr_t)src + 8 * i, 8);
	}
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	/* The three completions must be in the ring, not taken: wait for
	 * the last WRITE's bytes (ibv_poll_cq with 0 entries progresses
	 * without taking), then for its ACK's round. */
	for (i = 0; i < 50000 && memcmp(dst + 216, src + 16, 8); i++) {
		struct timespec ts = { 0, 100000 };

		MR_CHECK_EQ(ibv_poll_cq(c, 0, wc), 0);
		nanosleep(&ts, NULL);
	}
	for (i = 0; i < 20; i++) {
		struct timespec ts = { 0, 10000000 };

		MR_CHECK_EQ(ibv_poll_cq(c, 0, wc), 0);
		nanosleep(&ts, NULL);
	}
	MR_CHECK_EQ(ibv_resize_cq(c, 2), EINVAL);
	MR_CHECK_EQ(ibv_resize_cq(c, 0), EINVAL);
	MR_CHECK_EQ(ibv_resize_cq(c, 40), 0);
	MR_CHECK_EQ(c->cqe, 64);
	MR_CHECK_EQ(mrt_wait_wc(c, 3, wc), 3);
	for (i = 0; i < 3; i++)
		MR_CHECK_EQ(wc[i].wr_id, 20 + (uint64_t)i);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
	MR_CHECK_EQ(ibv_destroy_cq(c), 0);
}

/* One signaled WR on q; its completion's status. */
static int one_wr(struct ibv_qp *q, enum ibv_wr_opcode op, void *laddr,
		  uint32_t lkey, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = { (uintptr_t)laddr, 64, lkey };
	struct ibv_send_wr w = { .wr_id = 7,
				 .sg_list = &s,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED,
				 .wr.rdma = { raddr, rkey } },
			   *bad;
	struct ibv_wc wc;

	if (ibv_post_send(q, &w, &bad))
		return -1;
	return wait_wc(1, &wc) == 1 ? (int)wc.status : -2;
}

static void test_rereg_mr(void)
{
	uint8_t *ra = aligned_alloc(4096, 4096),
		*rb = aligned_alloc(4096, 4096);
	uint8_t *back = src + 8192;
	struct ibv_qp *a, *b;
	struct ibv_pd *pd2;
	struct ibv_mr *m;
	uint32_t k;

	MR_CHECK(ctx && ra && rb);
	memset(ra, 0, 4096);
	memset(rb, 0, 4096);
	m = ibv_reg_mr(pd, ra, 4096, MRT_ACC_ALL);
	MR_CHECK(m);
	k = m->rkey;
	a = make_qpx(IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 8);
	b = make_qpx(IBV_QPT_RC, IBV_QP_EX_WITH_SEND, 8);
	MR_CHECK(a && b);
	MR_CHECK_EQ(up(a, b->qp_num), 0);
	MR_CHECK_EQ(up(b, a->qp_num), 0);
	MR_CHECK_EQ(one_wr(a, IBV_WR_RDMA_WRITE, src, msrc->lkey,
			   (uintptr_t)ra + 100, k),
		    IBV_WC_SUCCESS);
	MR_CHECK_MEM(ra + 100, src, 64);
	/* New translation: the same key now names rb. */
	MR_CHECK_EQ(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, rb,
				 4096, 0),
		    0);
	MR_CHECK(m->addr == rb && m->rkey == k && m->lkey == k);
	MR_CHECK_EQ(one_wr(a, IBV_WR_RDMA_WRITE, src + 64, msrc->lkey,
			   (uintptr_t)rb + 200, k),
		    IBV_WC_SUCCESS);
	MR_CHECK_MEM(rb + 200, src + 64, 64);
	MR_CHECK_MEM(ra + 100, src, 64); /* the old memory is left alone */
	/* Bad input changes nothing: remote write without local write,
	 * a range that is not mapped. */
	MR_CHECK(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			      IBV_ACCESS_REMOTE_WRITE) != 0);
	MR_CHECK(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			      (void *)(uintptr_t)4096, 4096, 0) != 0);
	MR_CHECK(m->addr == rb);
	MR_CHECK_EQ(one_wr(a, IBV_WR_RDMA_WRITE, src + 128, msrc->lkey,
			   (uintptr_t)rb + 300, k),
		    IBV_WC_SUCCESS);
	MR_CHECK_MEM(rb + 300, src + 128, 64);
	/* Another PD holds it now (so that PD is in use), then back. */
	pd2 = ibv_alloc_pd(ctx);
	MR_CHECK(pd2);
	MR_CHECK_EQ(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0),
		    0);
	MR_CHECK(m->pd == pd2);
	MR_CHECK_EQ(ibv_dealloc_pd(pd2), EBUSY);
	MR_CHECK_EQ(ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_PD, pd, NULL, 0, 0), 0);
	MR_CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	/* Read only now: a READ works, the next WRITE is refused. */
	MR_CHECK_EQ(
		ibv_rereg_mr(m, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ),
		0);
	MR_CHECK_EQ(one_wr(a, IBV_WR_RDMA_READ, back, msrc->lkey,
			   (uintptr_t)rb + 200, k),
		    IBV_WC_SUCCESS);
	MR_CHECK_MEM(back, src + 64, 64);
	MR_CHECK_EQ(
		one_wr(a, IBV_WR_RDMA_WRITE, src, msrc->lkey, (uintptr_t)rb, k),
		IBV_WC_REM_ACCESS_ERR);
	MR_CHECK_EQ(rb[0], 0);
	MR_CHECK_EQ(ibv_destroy_qp(a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(b), 0);
	MR_CHECK_EQ(ibv_dereg_mr(m), 0);
	free(ra);
	free(rb);
}

/* ibv_create_srq_ex: a basic SRQ (libibverbs makes it through
 * create_srq); XRC and tag-matching SRQs are not offered. */
static void test_srq_ex(void)
{
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_PD | IBV_SRQ_INIT_ATTR_TYPE,
		.srq_type = IBV_SRQT_BASIC,
		.pd = pd,
	};
	struct ibv_srq *srq;

	MR_CHECK(ctx);
	srq = ibv_create_srq_ex(ctx, &sa);
	MR_CHECK(srq);
	MR_CHECK_EQ(ibv_destroy_srq(srq), 0);
	sa.srq_type = IBV_SRQT_XRC;
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ;
	sa.cq = cq;
	errno = 0;
	MR_CHECK(!ibv_create_srq_ex(ctx, &sa));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
}

static void teardown(void)
{
	MR_CHECK(ctx);
	MR_CHECK_EQ(ibv_dereg_mr(msrc), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mdst), 0);
	MR_CHECK_EQ(ibv_dereg_mr(matom), 0);
	MR_CHECK_EQ(mrt_fixture_close(&dev), 0);
}

MR_TEST_MAIN(MR_TEST(setup), MR_TEST(test_rc_every_op), MR_TEST(test_refused),
	     MR_TEST(test_ud_addr), MR_TEST(test_cq_ex), MR_TEST(test_srq_ex),
	     MR_TEST(test_rereg_mr), MR_TEST(teardown))
