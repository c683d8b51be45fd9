// SPDX-License-Identifier: BSD-2-Clause
/*
 * Memory windows through the real libibverbs (docs/spec/windows.md
 * MR-MW-*), on RC QPs looped back through the device's own GID: the
 * device advertises type 1 and 2B windows; a type 2 window bound with
 * ibv_post_send (IBV_WR_BIND_MW) and with ibv_wr_bind_mw is written and
 * read by the peer, every byte compared, invalidated by the peer's
 * SEND_WITH_INV (ibv_wr_send_inv too; the receive wc says
 * IBV_WC_WITH_INV and the rkey) or by LOCAL_INV, and then refused
 * (IBV_WC_REM_ACCESS_ERR, no byte written); ibv_bind_mw binds a type 1
 * window and moves its rkey's key byte; a bind to a region without
 * IBV_ACCESS_MW_BIND completes with IBV_WC_MW_BIND_ERR; a region with a
 * window bound cannot be deregistered (EBUSY); what may not be posted is
 * refused at post with EINVAL and nothing is posted.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <infiniband/verbs.h>

#include "mr_test.h"
#include "provider_fixture.h"

#define BUF 65536
#define MW_OPS                                               \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE |   \
	 IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV | \
	 IBV_QP_EX_WITH_SEND_WITH_INV)

static struct mrt_dev dev;
static uint8_t *src, *win, *rbuf, *seen;
static struct ibv_mr *msrc, *mwin, *mrbuf, *mplain;

struct pair {
	struct ibv_qp *a, *b; /* a: the peer; b: owns the windows */
};

static int wait_wc(int n, struct ibv_wc *wc)
{
	return mrt_wait_wc(dev.cq, n, wc);
}

static void pair_up(struct pair *p)
{
	static const struct ibv_qp_cap cap = { .max_send_wr = 32,
					       .max_recv_wr = 16,
					       .max_send_sge = 2,
					       .max_recv_sge = 2 };

	MR_CHECK_EQ(mrt_rc_pair(&dev, &cap, MW_OPS, &p->a, &p->b), 0);
}

static void pair_down(struct pair *p)
{
	MR_CHECK_EQ(ibv_destroy_qp(p->a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(p->b), 0);
}

static int rdma(struct ibv_qp *q, enum ibv_wr_opcode op, uint64_t id,
		void *laddr, uint32_t len, void *raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)laddr, len, msrc->lkey };
	struct ibv_send_wr w = { .wr_id = id,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	w.wr.rdma.remote_addr = (uintptr_t)raddr;
	w.wr.rdma.rkey = rkey;
	return ibv_post_send(q, &w, &bad);
}

static int bind2(struct ibv_qp *q, struct ibv_mw *mw, uint32_t rkey,
		 struct ibv_mr *mr, void *addr, size_t len, unsigned acc)
{
	struct ibv_send_wr w = { .wr_id = 0xb1,
				 .opcode = IBV_WR_BIND_MW,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	w.bind_mw.mw = mw;
	w.bind_mw.rkey = rkey;
	w.bind_mw.bind_info.mr = mr;
	w.bind_mw.bind_info.addr = (uintptr_t)addr;
	w.bind_mw.bind_info.length = len;
	w.bind_mw.bind_info.mw_access_flags = acc;
	return ibv_post_send(q, &w, &bad);
}

static void setup(void)
{
	MR_CHECK_EQ(mrt_fixture_open(&dev, 256), 0);
	src = aligned_alloc(4096, BUF);
	win = aligned_alloc(4096, BUF);
	rbuf = aligned_alloc(4096, 4096);
	seen = aligned_alloc(4096, BUF);
	MR_CHECK(src && win && rbuf && seen);
	for (int i = 0; i < BUF; i++)
		src[i] = (uint8_t)(i * 13 + 5);
	msrc = ibv_reg_mr(dev.pd, src, BUF, MRT_ACC_ALL);
	mwin = ibv_reg_mr(dev.pd, win, BUF,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	mrbuf = ibv_reg_mr(dev.pd, rbuf, 4096, IBV_ACCESS_LOCAL_WRITE);
	mplain = ibv_reg_mr(dev.pd, seen, BUF, MRT_ACC_ALL); /* no MW_BIND */
	MR_CHECK(msrc && mwin && mrbuf && mplain);
}

/* ibv_devinfo -v: what works, no more (MR-MW-1). */
static void test_attrs(void)
{
	struct ibv_device_attr a;

	MR_CHECK_EQ(ibv_query_device(dev.ctx, &a), 0);
	MR_CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	MR_CHECK(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	MR_CHECK(!(a.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2A));
	MR_CHECK(a.max_mw > 0);
	errno = 0;
	MR_CHECK(!ibv_alloc_mw(dev.pd, (enum ibv_mw_type)3));
	MR_CHECK_EQ(errno, EINVAL);
}

/* MR-MW-2..6 with a type 2 window, through ibv_post_send. */
static void test_type2_post_send(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_recv_wr rw, *rbad;
	struct ibv_sge rs = { (uintptr_t)rbuf, 4096, mrbuf->lkey };
	struct ibv_send_wr w, *bad;
	struct ibv_sge sg = { (uintptr_t)src, 1000, msrc->lkey };
	struct ibv_wc wc[4];
	struct pair p;
	uint32_t rk;

	MR_CHECK(mw);
	MR_CHECK_EQ(mw->type, IBV_MW_TYPE_2);
	pair_up(&p);
	memset(win, 0x33, BUF);
	rk = ibv_inc_rkey(mw->rkey);
	MR_CHECK_EQ(bind2(p.b, mw, rk, mwin, win + 4096, 8192,
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_BIND_MW);
	/* a region with a window bound stays (MR-MW-2) */
	MR_CHECK_EQ(ibv_dereg_mr(mwin), EBUSY);
	MR_CHECK_EQ(
		rdma(p.a, IBV_WR_RDMA_WRITE, 1, src, 5000, win + 4096 + 7, rk),
		0);
	MR_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, 2, src + 16384, 8192,
			 win + 4096, rk),
		    0);
	MR_CHECK_EQ(wait_wc(2, wc), 2);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc[1].status, IBV_WC_SUCCESS);
	MR_CHECK_MEM(win + 4096 + 7, src, 5000);
	MR_CHECK_MEM(src + 16384, win + 4096, 8192);
	MR_CHECK_EQ(win[4095], 0x33);
	MR_CHECK_EQ(win[4096 + 8192], 0x33);
	/* MR-MW-4: the peer's SEND_WITH_INV */
	memset(&rw, 0, sizeof(rw));
	rw.wr_id = 9;
	rw.sg_list = &rs;
	rw.num_sge = 1;
	MR_CHECK_EQ(ibv_post_recv(p.b, &rw, &rbad), 0);
	memset(&w, 0, sizeof(w));
	w.wr_id = 3;
	w.opcode = IBV_WR_SEND_WITH_INV;
	w.send_flags = IBV_SEND_SIGNALED;
	w.sg_list = &sg;
	w.num_sge = 1;
	w.invalidate_rkey = rk;
	MR_CHECK_EQ(ibv_post_send(p.a, &w, &bad), 0);
	MR_CHECK_EQ(wait_wc(2, wc), 2);
	for (int i = 0; i < 2; i++) {
		MR_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		if (wc[i].wr_id == 9) {
			MR_CHECK_EQ(wc[i].opcode, IBV_WC_RECV);
			MR_CHECK(wc[i].wc_flags & IBV_WC_WITH_INV);
			MR_CHECK_EQ(wc[i].invalidated_rkey, rk);
			MR_CHECK_EQ(wc[i].byte_len, 1000);
		} else {
			MR_CHECK_EQ(wc[i].wr_id, 3);
			MR_CHECK_EQ(wc[i].opcode, IBV_WC_SEND);
		}
	}
	MR_CHECK_MEM(rbuf, src, 1000);
	/* an invalidated rkey: refused, nothing written */
	memcpy(seen, win, BUF);
	MR_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_WRITE, 4, src, 100, win + 4096, rk),
		    0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].wr_id, 4);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	MR_CHECK_MEM(win, seen, BUF);
	pair_down(&p);
	MR_CHECK_EQ(ibv_dealloc_mw(mw), 0);
	memcpy(seen, src, BUF); /* mplain's memory back to a known state */
}

/* MR-MW-2 e: the region was not registered with IBV_ACCESS_MW_BIND. */
static void test_bind_without_mw_access(void)
{
	struct ibv_mw *mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_wc wc[2];
	struct pair p;

	MR_CHECK(mw);
	pair_up(&p);
	MR_CHECK_EQ(bind2(p.b, mw, ibv_inc_rkey(mw->rkey), mplain, seen, 64,
			  IBV_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(rdma(p.b, IBV_WR_RDMA_WRITE, 5, src, 64, seen, 0), 0);
	MR_CHECK_EQ(wait_wc(2, wc), 2);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_BIND_MW);
	MR_CHECK_EQ(wc[0].status, IBV_WC_MW_BIND_ERR);
	MR_CHECK_EQ(wc[1].wr_id, 5);
	MR_CHECK_EQ(wc[1].status, IBV_WC_WR_FLUSH_ERR);
	/* the region was never bound: it goes at once */
	MR_CHECK_EQ(ibv_dereg_mr(mplain), 0);
	mplain = ibv_reg_mr(dev.pd, seen, BUF, MRT_ACC_ALL);
	MR_CHECK(mplain);
	pair_down(&p);
	MR_CHECK_EQ(ibv_dealloc_mw(mw), 0);
}

/* MR-MW-1, MR-MW-7: ibv_bind_mw binds a type 1 window and moves its
 * rkey's key byte; the old rkey reaches nothing. Through ibv_wr_*: a
 * type 2 bind, LOCAL_INV, then the window refused. */
static void test_type1_and_wr_api(void)
{
	struct ibv_mw *m1 = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	struct ibv_mw *m2 = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind mb = { .wr_id = 0x1b,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_mw_bind_info bi = { .mr = mwin,
				       .addr = (uintptr_t)win,
				       .length = 4096,
				       .mw_access_flags =
					       IBV_ACCESS_REMOTE_READ };
	struct ibv_qp_ex *x;
	struct ibv_wc wc[4];
	uint32_t old, rk2;
	struct pair p;

	MR_CHECK(m1 && m2);
	pair_up(&p);
	memset(win, 0x44, 4096);
	old = m1->rkey;
	mb.bind_info = bi;
	MR_CHECK_EQ(ibv_bind_mw(p.b, m1, &mb), 0);
	MR_CHECK_EQ(m1->rkey, ibv_inc_rkey(old));
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_BIND_MW);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	/* type 1 through the Bind verb only; type 2 through a WR only */
	MR_CHECK_EQ(ibv_bind_mw(p.b, m2, &mb), EINVAL);
	MR_CHECK_EQ(bind2(p.b, m1, ibv_inc_rkey(m1->rkey), mwin, win, 64,
			  IBV_ACCESS_REMOTE_READ),
		    EINVAL);
	MR_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, 6, src, 4096, win, m1->rkey),
		    0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_MEM(src, win, 4096);

	/* ibv_wr_bind_mw of the type 2 window, then ibv_wr_local_inv */
	x = ibv_qp_to_qp_ex(p.b);
	MR_CHECK(x && x->wr_bind_mw && x->wr_local_inv && x->wr_send_inv);
	rk2 = ibv_inc_rkey(m2->rkey);
	ibv_wr_start(x);
	x->wr_id = 0x2b;
	x->wr_flags = IBV_SEND_SIGNALED;
	bi.addr = (uintptr_t)win + 4096;
	ibv_wr_bind_mw(x, m2, rk2, &bi);
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(
		rdma(p.a, IBV_WR_RDMA_READ, 7, src + 4096, 64, win + 4096, rk2),
		0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_MEM(src + 4096, win + 4096, 64);
	ibv_wr_start(x);
	x->wr_id = 0x2c;
	ibv_wr_local_inv(x, rk2);
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_LOCAL_INV);
	MR_CHECK_EQ(wc[0].status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(ibv_dereg_mr(mwin), EBUSY); /* m1 still bound */
	/* the old type 1 rkey, then the invalidated type 2 one: refused */
	MR_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, 8, src, 64, win, old), 0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	pair_down(&p);
	pair_up(&p);
	MR_CHECK_EQ(rdma(p.a, IBV_WR_RDMA_READ, 9, src, 64, win + 4096, rk2),
		    0);
	MR_CHECK_EQ(wait_wc(1, wc), 1);
	MR_CHECK_EQ(wc[0].status, IBV_WC_REM_ACCESS_ERR);
	pair_down(&p);
	/* deallocating a bound window unbinds it: the region can go */
	MR_CHECK_EQ(ibv_dealloc_mw(m1), 0);
	MR_CHECK_EQ(ibv_dealloc_mw(m2), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mwin), 0);
	mwin = ibv_reg_mr(dev.pd, win, BUF,
			  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	MR_CHECK(mwin);
}

/* What may not be posted is refused at post, nothing posted: a UD QP
 * takes no window WR (MR-MW-8), a batch with one is dropped whole. */
static void test_refused(void)
{
	struct ibv_qp_init_attr ua = { .send_cq = dev.cq,
				       .recv_cq = dev.cq,
				       .qp_type = IBV_QPT_UD,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 4,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp_init_attr_ex xa = {
		.send_cq = dev.cq,
		.recv_cq = dev.cq,
		.qp_type = IBV_QPT_UD,
		.cap = { .max_send_wr = 4,
			 .max_recv_wr = 4,
			 .max_send_sge = 1,
			 .max_recv_sge = 1 },
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = dev.pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qkey = 1 };
	struct ibv_send_wr w = { .opcode = IBV_WR_LOCAL_INV }, *bad;
	struct ibv_wc wc;
	struct ibv_qp *ud = ibv_create_qp(dev.pd, &ua);

	MR_CHECK(ud);
	MR_CHECK_EQ(ibv_modify_qp(ud, &a,
				  IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					  IBV_QP_PORT | IBV_QP_QKEY),
		    0);
	a.qp_state = IBV_QPS_RTR;
	MR_CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE), 0);
	a.qp_state = IBV_QPS_RTS;
	MR_CHECK_EQ(ibv_modify_qp(ud, &a, IBV_QP_STATE | IBV_QP_SQ_PSN), 0);
	w.invalidate_rkey = 1;
	MR_CHECK_EQ(ibv_post_send(ud, &w, &bad), EINVAL);
	MR_CHECK(bad == &w);
	w.opcode = IBV_WR_SEND_WITH_INV;
	MR_CHECK_EQ(ibv_post_send(ud, &w, &bad), EINVAL);
	MR_CHECK_EQ(ibv_poll_cq(dev.cq, 1, &wc), 0);
	MR_CHECK_EQ(ibv_destroy_qp(ud), 0);
	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(dev.ctx, &xa));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
}

static void teardown(void)
{
	MR_CHECK_EQ(ibv_dereg_mr(msrc), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mwin), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mrbuf), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mplain), 0);
	MR_CHECK_EQ(mrt_fixture_close(&dev), 0);
}

MR_TEST_MAIN(MR_TEST(setup), MR_TEST(test_attrs), MR_TEST(test_type2_post_send),
	     MR_TEST(test_bind_without_mw_access),
	     MR_TEST(test_type1_and_wr_api), MR_TEST(test_refused),
	     MR_TEST(teardown))
