// SPDX-License-Identifier: BSD-2-Clause
/*
 * ATOMIC WRITE through the real libibverbs (docs/spec/transport.md
 * MR-AW-1..5): the device capability bit of ibv_query_device_ex, the QP
 * send operation flag, ibv_wr_atomic_write and ibv_post_send with
 * IBV_WR_ATOMIC_WRITE (an SGE, inline), every byte of the target compared;
 * then the responder's refusals with their IB statuses and the memory
 * unchanged: misaligned (REM_INV_REQ_ERR), a region without REMOTE_WRITE
 * and a range past the region's end (REM_ACCESS_ERR). Two RC QPs of one
 * device, looped back (the fixture's GID 0).
 */
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "mr_test.h"
#include "provider_fixture.h"

#define BUF 4096
#define AW_OPS                                             \
	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | \
	 IBV_QP_EX_WITH_ATOMIC_WRITE)
/* IB_UVERBS_DEVICE_ATOMIC_WRITE (Linux uapi since 6.2); rdma-core 44's
 * headers do not name it. */
#define DEV_ATOMIC_WRITE (1ull << 40)

static struct mrt_dev dev;
static uint8_t *src, *dst, *noww, *ref;
static struct ibv_mr *msrc, *mdst, *mnoww;
static const uint8_t val[8] = {
	0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88
};

struct pair {
	struct ibv_qp *a, *b;
};

static int pair_up(struct pair *p)
{
	static const struct ibv_qp_cap cap = { .max_send_wr = 16,
					       .max_recv_wr = 4,
					       .max_send_sge = 2,
					       .max_recv_sge = 1,
					       .max_inline_data = 16 };

	return mrt_rc_pair(&dev, &cap, AW_OPS, &p->a, &p->b);
}

static void pair_down(struct pair *p)
{
	MR_CHECK_EQ(ibv_destroy_qp(p->a), 0);
	MR_CHECK_EQ(ibv_destroy_qp(p->b), 0);
}

static int post_aw(struct ibv_qp *q, uint64_t id, void *laddr, unsigned flags,
		   void *raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)laddr, 8, msrc->lkey };
	struct ibv_send_wr w = { .wr_id = id,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_WRITE,
				 .send_flags = IBV_SEND_SIGNALED | flags },
			   *bad;

	w.wr.rdma.remote_addr = (uintptr_t)raddr;
	w.wr.rdma.rkey = rkey;
	return ibv_post_send(q, &w, &bad);
}

static void setup(void)
{
	MR_CHECK_EQ(mrt_fixture_open(&dev, 64), 0);
	src = aligned_alloc(4096, BUF);
	dst = aligned_alloc(4096, BUF);
	noww = aligned_alloc(4096, BUF);
	ref = aligned_alloc(4096, BUF);
	MR_CHECK(src && dst && noww && ref);
	for (int i = 0; i < BUF; i++)
		src[i] = (uint8_t)(i * 11 + 1);
	msrc = ibv_reg_mr(dev.pd, src, BUF, MRT_ACC_ALL);
	mdst = ibv_reg_mr(dev.pd, dst, BUF, MRT_ACC_ALL);
	/* READ and ATOMIC but no REMOTE_WRITE: MR-AW-4 needs the latter */
	mnoww = ibv_reg_mr(dev.pd, noww, BUF,
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC);
	MR_CHECK(msrc && mdst && mnoww);
}

/* ibv_devinfo -v / ibv_query_device_ex: the capability, and no FLUSH. */
static void test_attrs(void)
{
	struct ibv_device_attr_ex a;

	MR_CHECK_EQ(ibv_query_device_ex(dev.ctx, NULL, &a), 0);
	MR_CHECK(a.device_cap_flags_ex & DEV_ATOMIC_WRITE);
	/* IB_UVERBS_DEVICE_FLUSH_GLOBAL / _PERSISTENT: not claimed */
	MR_CHECK(!(a.device_cap_flags_ex & (3ull << 38)));
	/* the low half is device_cap_flags, as the kernel reports it */
	MR_CHECK_EQ(a.device_cap_flags_ex & 0xffffffffull,
		    a.orig_attr.device_cap_flags);
}

/* MR-AW-1, MR-AW-2: three WRs, three forms, every byte. */
static void test_atomic_write(void)
{
	struct pair p;
	struct ibv_qp_ex *x;
	struct ibv_wc wc[4];
	uint8_t word[8];
	int i;

	MR_CHECK_EQ(pair_up(&p), 0);
	memset(dst, 0xee, BUF);
	memset(ref, 0xee, BUF);
	memcpy(src + 64, val, 8);
	x = ibv_qp_to_qp_ex(p.a);
	MR_CHECK(x && x->wr_atomic_write);
	memcpy(word, "ibv_wr!!", 8);
	ibv_wr_start(x);
	x->wr_id = 1;
	x->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(x, mdst->rkey, (uintptr_t)dst + 256, word);
	MR_CHECK_EQ(ibv_wr_complete(x), 0);
	memset(word, 0, 8); /* taken at the call */
	MR_CHECK_EQ(post_aw(p.a, 2, src + 64, 0, dst + 1024, mdst->rkey), 0);
	MR_CHECK_EQ(post_aw(p.a, 3, src + 64, IBV_SEND_INLINE, dst + 4088,
			    mdst->rkey),
		    0);
	MR_CHECK_EQ(mrt_wait_wc(dev.cq, 3, wc), 3);
	for (i = 0; i < 3; i++) {
		MR_CHECK_EQ(wc[i].status, IBV_WC_SUCCESS);
		MR_CHECK_EQ(wc[i].wr_id, (uint64_t)i + 1);
		MR_CHECK_EQ(wc[i].opcode, IBV_WC_ATOMIC_WRITE);
		MR_CHECK_EQ(wc[i].qp_num, p.a->qp_num);
	}
	memcpy(ref + 256, "ibv_wr!!", 8);
	memcpy(ref + 1024, val, 8);
	memcpy(ref + 4088, val, 8);
	MR_CHECK_MEM(dst, ref, BUF);
	MR_CHECK_MEM(src + 64, val, 8); /* the source is not written */
	pair_down(&p);
}

/* MR-AW-4: one refused ATOMIC_WRITE: its status, the target unchanged,
 * the requester QP in ERR (MR-ERR-1). */
static void refused(uint8_t *mem, struct ibv_mr *mr, uint64_t off,
		    enum ibv_wc_status want)
{
	struct pair p;
	struct ibv_wc wc[2];
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;

	MR_CHECK_EQ(pair_up(&p), 0);
	for (int i = 0; i < BUF; i++)
		mem[i] = ref[i] = (uint8_t)(i * 5 + 9);
	MR_CHECK_EQ(post_aw(p.a, 9, src, 0, mem + off, mr->rkey), 0);
	MR_CHECK_EQ(mrt_wait_wc(dev.cq, 1, wc), 1);
	MR_CHECK_EQ(wc[0].wr_id, 9);
	MR_CHECK_EQ(wc[0].status, want);
	MR_CHECK_EQ(wc[0].opcode, IBV_WC_ATOMIC_WRITE);
	MR_CHECK_MEM(mem, ref, BUF);
	MR_CHECK_EQ(ibv_query_qp(p.a, &qa, IBV_QP_STATE, &qi), 0);
	MR_CHECK_EQ(qa.qp_state, IBV_QPS_ERR);
	pair_down(&p);
}

static void test_misaligned(void)
{
	refused(dst, mdst, 260, IBV_WC_REM_INV_REQ_ERR);
}

static void test_no_remote_write(void)
{
	refused(noww, mnoww, 256, IBV_WC_REM_ACCESS_ERR);
}

static void test_past_end(void)
{
	refused(dst, mdst, BUF, IBV_WC_REM_ACCESS_ERR);
}

/* MR-AW-1 at post: UD has none, no SGE, a 4-byte SGE. */
static void test_post_refused(void)
{
	struct ibv_qp_init_attr_ex ax = {
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
		.send_ops_flags =
			IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_ATOMIC_WRITE,
	};
	struct ibv_sge sg = { (uintptr_t)src, 4, msrc->lkey };
	struct ibv_send_wr w = { .wr_id = 5,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = IBV_WR_ATOMIC_WRITE,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;
	struct ibv_wc wc;
	struct pair p;

	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(dev.ctx, &ax));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	ax.qp_type = IBV_QPT_UC;
	errno = 0;
	MR_CHECK(!ibv_create_qp_ex(dev.ctx, &ax));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	MR_CHECK_EQ(pair_up(&p), 0);
	w.wr.rdma.remote_addr = (uintptr_t)dst;
	w.wr.rdma.rkey = mdst->rkey;
	MR_CHECK_EQ(ibv_post_send(p.a, &w, &bad), EINVAL);
	MR_CHECK(bad == &w);
	w.num_sge = 0;
	MR_CHECK_EQ(ibv_post_send(p.a, &w, &bad), EINVAL);
	MR_CHECK_EQ(ibv_poll_cq(dev.cq, 1, &wc), 0); /* nothing posted */
	pair_down(&p);
}

static void teardown(void)
{
	MR_CHECK_EQ(ibv_dereg_mr(msrc), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mdst), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mnoww), 0);
	MR_CHECK_EQ(mrt_fixture_close(&dev), 0);
}

MR_TEST_MAIN(MR_TEST(setup), MR_TEST(test_attrs), MR_TEST(test_atomic_write),
	     MR_TEST(test_misaligned), MR_TEST(test_no_remote_write),
	     MR_TEST(test_past_end), MR_TEST(test_post_refused),
	     MR_TEST(teardown))
