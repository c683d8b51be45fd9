// SPDX-License-Identifier: BSD-2-Clause
/*
 * Memory windows in the core (docs/spec/windows.md MR-MW-*): the rules of
 * mr_mw.c one by one, then windows bound, used, invalidated remotely
 * (SEND_WITH_INV) and locally (LOCAL_INV) over the engine world's link,
 * every byte compared, with the statuses IB gives the bad cases: a bind
 * to a region without MW_BIND access (MW_BIND_ERR, in posting order, the
 * QP failed, later WRs flushed and never sent), an invalidated rkey used
 * (REM_ACCESS_ERR, no byte written), a region's key named by a
 * SEND_WITH_INV (REM_INV_REQ_ERR at both ends), a type 2 window reached
 * through another QP (refused) and a type 1 window through any QP of its
 * PD. Node 1 owns the memory and the windows; node 0 is the peer.
 */
#include "engine_world.h"
#include "mr_test.h"

static struct world w;
static uint8_t src[16384], dst[16384], seen[16384], rbuf[4096];

#define MW2 0x00004200u /* rkey of node 1's type 2 window */
#define MW1 0x00005300u /* rkey of node 1's type 1 window */
#define ACC_MW (RW | MR_ACCESS_MW_BIND)

static void rules_bind(void)
{
	struct mr_mw mw = { .type = MR_MW_TYPE_2, .pd = 1, .rkey = 0x1200 };
	struct mr_mw_region r = {
		.pd = 1, .iova = 0x10000, .length = 0x1000, .access = ACC_MW
	};
	struct mr_mw_bind b = { .mw_rkey = 0x1200,
				.new_rkey = 0x1201,
				.mr_lkey = 9,
				.addr = 0x10100,
				.length = 0x100,
				.access = MR_ACCESS_REMOTE_WRITE };
	struct mr_mw_bind x;

	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), 0);
	/* MR-MW-2 e: no MW_BIND on the region */
	r.access = RW;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), -MR_EINVAL);
	/* MR-MW-2 f: a writable window on a region the device may not
	 * write */
	r.access = MR_ACCESS_MW_BIND | MR_ACCESS_REMOTE_READ;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), -MR_EINVAL);
	x = b;
	x.access = MR_ACCESS_REMOTE_READ;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), 0);
	r.access = ACC_MW;
	/* MR-MW-2 g: the window inside the region, to the last byte */
	x = b;
	x.addr = 0x10f00;
	x.length = 0x100;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), 0);
	x.length = 0x101;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	x.addr = 0xffff;
	x.length = 1;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	x.addr = UINT64_MAX - 1;
	x.length = 4;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	/* MR-MW-2 b: one PD for window, QP and region */
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 2, &b), -MR_EINVAL);
	r.pd = 2;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), -MR_EINVAL);
	r.pd = 1;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, NULL, 1, &b), -MR_EINVAL);
	/* MR-MW-2 a: remote rights only, no zero-based windows */
	x = b;
	x.access |= MR_ACCESS_ZERO_BASED;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	x.access = MR_ACCESS_LOCAL_WRITE;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	/* MR-MW-7: the key byte is the consumer's, the index is not */
	x = b;
	x.new_rkey = 0x1300;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	MR_CHECK_EQ(mr_mw_next_rkey(0xabcd12ffu), 0xabcd1200u);
	MR_CHECK_EQ(mr_mw_next_rkey(0xabcd1207u), 0xabcd1208u);
	/* MR-MW-2 c: type 2 only while free, never with length 0 */
	x = b;
	x.length = 0;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &x), -MR_EINVAL);
	mr_mw_bind_apply(&mw, 0x22, &b);
	MR_CHECK_EQ(mw.rkey, 0x1201);
	MR_CHECK_EQ(mw.qpn, 0x22);
	b.mw_rkey = b.new_rkey = 0x1201;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), -MR_EINVAL);
	/* MR-MW-2 d: a type 1 window is rebound at will, unbound by a
	 * zero-length bind without a region */
	mw.type = MR_MW_TYPE_1;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, &r, 1, &b), 0);
	x = b;
	x.length = 0;
	x.mr_lkey = 0;
	MR_CHECK_EQ(mr_mw_bind_check(&mw, NULL, 1, &x), 0);
	mr_mw_bind_apply(&mw, 0x22, &x);
	MR_CHECK_EQ(mw.bound, 0);
}

static void rules_access_inv(void)
{
	struct mr_mw mw = { .type = MR_MW_TYPE_2, .pd = 1, .rkey = 0x1200 };
	struct mr_mw_bind b = { .mw_rkey = 0x1200,
				.new_rkey = 0x1201,
				.addr = 0x10100,
				.length = 0x100,
				.access = MR_ACCESS_REMOTE_WRITE };

	/* MR-MW-3: nothing through a free window */
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x22, 0x10100, 8,
				       MR_ACCESS_REMOTE_WRITE),
		    -MR_EACCESS);
	mr_mw_bind_apply(&mw, 0x22, &b);
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x22, 0x10100, 0x100,
				       MR_ACCESS_REMOTE_WRITE),
		    0);
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x22, 0x10100, 0x101,
				       MR_ACCESS_REMOTE_WRITE),
		    -MR_EACCESS);
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x22, 0x10100, 8,
				       MR_ACCESS_REMOTE_READ),
		    -MR_EACCESS);
	MR_CHECK_EQ(mr_mw_access_check(&mw, 2, 0x22, 0x10100, 8,
				       MR_ACCESS_REMOTE_WRITE),
		    -MR_EACCESS);
	/* type 2: only through its QP; type 1: any QP of its PD */
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x44, 0x10100, 8,
				       MR_ACCESS_REMOTE_WRITE),
		    -MR_EACCESS);
	/* MR-MW-4: remote invalidation only through its QP; local by any
	 * QP of the PD; never a type 1 window or a free one */
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x44, 1), -MR_EINVAL);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 2, 0x22, 1), -MR_EINVAL);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x44, 0), 0);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x22, 1), 0);
	mr_mw_inv_apply(&mw);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x22, 1), -MR_EINVAL);
	MR_CHECK_EQ(mw.rkey, 0x1201);
	mw.type = MR_MW_TYPE_1;
	mr_mw_bind_apply(&mw, 0x22, &b);
	MR_CHECK_EQ(mr_mw_access_check(&mw, 1, 0x44, 0x10100, 8,
				       MR_ACCESS_REMOTE_WRITE),
		    0);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x22, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_mw_inv_check(&mw, 1, 0x22, 1), -MR_EINVAL);
}

/* ---- over the link ---- */

static int post_bind(struct mr_qp *qp, uint64_t wr_id, uint32_t mw_rkey,
		     uint32_t new_rkey, uint32_t lkey, const void *addr,
		     uint64_t len, unsigned access)
{
	struct mr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = MR_WR_BIND_MW,
		.flags = MR_SEND_SIGNALED,
		.bind = { .mw_rkey = mw_rkey,
			  .new_rkey = new_rkey,
			  .mr_lkey = lkey,
			  .addr = (uint64_t)(uintptr_t)addr,
			  .length = len,
			  .access = access },
	};
	return mr_qp_post_send(qp, &wr, w.now);
}

static int post_inv(struct mr_qp *qp, enum mr_wr_opcode op, uint64_t wr_id,
		    void *laddr, uint32_t len, uint32_t lkey, uint32_t rkey)
{
	struct mr_sge sge = { (uint64_t)(uintptr_t)laddr, len, lkey };
	struct mr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.flags = MR_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = laddr ? 1 : 0,
		.invalidate_rkey = rkey,
	};
	return mr_qp_post_send(qp, &wr, w.now);
}

static void start(struct pair *p)
{
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, p, MR_MODE_METAROCE, 64, NULL);
	fill(src, sizeof(src), 3);
	memset(dst, 0x5a, sizeof(dst));
	reg(&w.n[0], 5, src, sizeof(src), RW);
	reg(&w.n[1], 6, dst, sizeof(dst), ACC_MW);
	reg(&w.n[1], 7, rbuf, sizeof(rbuf), MR_ACCESS_LOCAL_WRITE);
	world_alloc_mw(&w.n[1], MR_MW_TYPE_2, MW2);
	world_alloc_mw(&w.n[1], MR_MW_TYPE_1, MW1);
}

static void finish(struct pair *p)
{
	destroy_pair(p);
	world_fini(&w);
}

/* Completion i of a node; one that was not made has a status no
 * completion has, so every check on it fails. */
static const struct mr_cqe *cqe(int node, int i)
{
	static const struct mr_cqe none = { .status = 99, .opcode = 99 };

	return i < w.n[node].ncqe ? &w.n[node].cqe[i] : &none;
}

static int state_of(struct mr_qp *qp)
{
	struct mr_qp_attr a;

	return mr_qp_query(qp, &a) ? -1 : (int)a.state;
}

/* A type 2 window: bound through the send queue, written and read by
 * the peer within it, refused outside it; invalidated by the peer's
 * SEND_WITH_INV (the receive completion says which rkey); then the old
 * rkey is refused with no byte written. */
static void test_type2_bind_use_remote_inv(void)
{
	struct pair p;
	uint8_t *win = dst + 1024;

	start(&p);
	MR_CHECK_EQ(post_bind(p.b, 1, MW2, MW2 | 1, 6, win, 4096,
			      MR_ACCESS_REMOTE_WRITE | MR_ACCESS_REMOTE_READ),
		    0);
	/* MR-MW-6: nothing before it: executed and completed at once */
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK_EQ(cqe(1, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(1, 0)->opcode, MR_WC_BIND_MW);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 10, src, 3000, 5,
			      win + 100, MW2 | 1, 0, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 11, src + 8192, 4096, 5,
			      win, MW2 | 1, 0, w.now),
		    0);
	want_a = 2;
	want_b = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(0, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_MEM(win + 100, src, 3000);
	MR_CHECK_MEM(src + 8192, win, 4096);
	MR_CHECK_EQ(dst[1023], 0x5a);
	MR_CHECK_EQ(dst[1024 + 4096], 0x5a);

	/* MR-MW-4: the peer invalidates it with its SEND */
	MR_CHECK_EQ(post_recv(p.b, 20, rbuf, sizeof(rbuf), 7), 0);
	MR_CHECK_EQ(
		post_inv(p.a, MR_WR_SEND_WITH_INV, 12, src, 2000, 5, MW2 | 1),
		0);
	want_a = 3;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 2)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(0, 2)->opcode, MR_WC_SEND);
	MR_CHECK_EQ(cqe(1, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(1, 1)->opcode, MR_WC_RECV);
	MR_CHECK_EQ(cqe(1, 1)->wc_flags, MR_WC_F_WITH_INV);
	MR_CHECK_EQ(cqe(1, 1)->imm, MW2 | 1);
	MR_CHECK_EQ(cqe(1, 1)->byte_len, 2000);
	MR_CHECK_MEM(rbuf, src, 2000);
	MR_CHECK_EQ(w.n[1].mws[0].bound, 0);

	/* An invalidated rkey used: remote access error, nothing written */
	memcpy(seen, dst, sizeof(dst));
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 13, src + 4096, 512, 5,
			      win, MW2 | 1, 0, w.now),
		    0);
	want_a = 4;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 3)->status, MR_WC_REM_ACCESS_ERR);
	MR_CHECK_MEM(dst, seen, sizeof(dst));
	MR_CHECK_EQ(state_of(p.a), MR_QPS_ERR);
	finish(&p);
}

/* MR-MW-2 e, MR-MW-6: a bind to a region without MW_BIND completes with
 * MW_BIND_ERR after the message posted before it and before the one
 * posted after it, which is flushed and never reaches the peer. */
static void test_bind_error_in_order(void)
{
	struct pair p;

	start(&p);
	reg(&w.n[1], 8, dst + 8192, 4096, RW); /* no MW_BIND */
	memset(src, 0, 8192);
	fill(dst, 8192, 9);
	MR_CHECK_EQ(post_send(p.b, MR_WR_RDMA_WRITE, 1, dst, 4096, 6, src, 5, 0,
			      w.now),
		    0);
	MR_CHECK_EQ(post_bind(p.b, 2, MW2, MW2 | 7, 8, dst + 8192, 64,
			      MR_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(post_send(p.b, MR_WR_RDMA_WRITE, 3, dst + 4096, 4096, 6,
			      src + 4096, 5, 0, w.now),
		    0);
	MR_CHECK_EQ(w.n[1].ncqe, 0); /* the WRITE before it is in flight */
	want_a = 0;
	want_b = 3;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(1, 0)->wr_id, 1);
	MR_CHECK_EQ(cqe(1, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(1, 1)->wr_id, 2);
	MR_CHECK_EQ(cqe(1, 1)->opcode, MR_WC_BIND_MW);
	MR_CHECK_EQ(cqe(1, 1)->status, MR_WC_MW_BIND_ERR);
	MR_CHECK_EQ(cqe(1, 2)->wr_id, 3);
	MR_CHECK_EQ(cqe(1, 2)->status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(state_of(p.b), MR_QPS_ERR);
	MR_CHECK_MEM(src, dst, 4096);
	memset(seen, 0, 4096);
	MR_CHECK_MEM(src + 4096, seen, 4096);
	MR_CHECK_EQ(w.n[1].mws[0].bound, 0);
	MR_CHECK_EQ(w.n[1].mws[0].rkey, MW2);
	finish(&p);
}

/* MR-MW-4: a SEND_WITH_INV naming a region's key is an invalid request
 * at both ends (and so is one naming a type 1 window: rules above). */
static void test_send_inv_region_refused(void)
{
	struct pair p;

	start(&p);
	MR_CHECK_EQ(post_recv(p.b, 20, rbuf, sizeof(rbuf), 7), 0);
	MR_CHECK_EQ(post_inv(p.a, MR_WR_SEND_WITH_INV, 1, src, 100, 5, 6), 0);
	want_a = 1;
	want_b = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 0)->status, MR_WC_REM_INV_REQ_ERR);
	MR_CHECK_EQ(cqe(1, 0)->status, MR_WC_REM_INV_REQ_ERR);
	MR_CHECK_EQ(state_of(p.a), MR_QPS_ERR);
	MR_CHECK_EQ(state_of(p.b), MR_QPS_ERR);
	finish(&p);
}

/* MR-MW-4: LOCAL_INV of a bound type 2 window closes it to the peer;
 * LOCAL_INV of a region's key fails with LOC_QP_OP_ERR. */
static void test_local_inv(void)
{
	struct pair p;

	start(&p);
	MR_CHECK_EQ(post_bind(p.b, 1, MW2, MW2 | 2, 6, dst, 4096,
			      MR_ACCESS_REMOTE_WRITE),
		    0);
	MR_CHECK_EQ(post_inv(p.b, MR_WR_LOCAL_INV, 2, NULL, 0, 0, MW2 | 2), 0);
	MR_CHECK_EQ(w.n[1].ncqe, 2);
	MR_CHECK_EQ(cqe(1, 1)->opcode, MR_WC_LOCAL_INV);
	MR_CHECK_EQ(cqe(1, 1)->status, MR_WC_SUCCESS);
	memcpy(seen, dst, sizeof(dst));
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 10, src, 100, 5, dst,
			      MW2 | 2, 0, w.now),
		    0);
	want_a = 1;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 0)->status, MR_WC_REM_ACCESS_ERR);
	MR_CHECK_MEM(dst, seen, sizeof(dst));
	/* a region's key is not a window's */
	MR_CHECK_EQ(post_inv(p.b, MR_WR_LOCAL_INV, 3, NULL, 0, 0, 6), 0);
	MR_CHECK_EQ(w.n[1].ncqe, 3);
	MR_CHECK_EQ(cqe(1, 2)->status, MR_WC_LOC_QP_OP_ERR);
	MR_CHECK_EQ(state_of(p.b), MR_QPS_ERR);
	finish(&p);
}

/* A second connection between the same nodes (QPNs 0x33 -> 0x44). */
static void connect_second(struct pair *p)
{
	static const struct mr_qp_config c = { .type = MR_QPT_RC,
					       .pd = 1,
					       .max_send_wr = 16,
					       .max_recv_wr = 16,
					       .max_send_sge = 1,
					       .max_recv_sge = 1 };
	const struct world_conn k = { .qpn = { 0x33, 0x44 },
				      .rq_psn = { 100, 100 },
				      .sq_psn = { 100, 100 },
				      .path_mtu = world_path_mtu,
				      .rd_atomic = 1,
				      .timeout = 10,
				      .rts = 2 };

	world_connect(&w, p, &c, &k);
}

/* MR-MW-3: a type 2 window answers only through the QP it was bound
 * through; a type 1 window through any QP of its PD, and its rebind
 * (MR-MW-7, the key byte + 1) retires the old rkey. */
static void test_which_qp(void)
{
	struct pair p, q;

	start(&p);
	connect_second(&q);
	fill(dst, sizeof(dst), 4);
	MR_CHECK_EQ(post_bind(p.b, 1, MW2, MW2 | 3, 6, dst, 4096,
			      MR_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(post_bind(q.b, 2, MW1, mr_mw_next_rkey(MW1), 6, dst + 4096,
			      4096, MR_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(post_send(q.a, MR_WR_RDMA_READ, 10, src, 64, 5, dst + 4096,
			      mr_mw_next_rkey(MW1), 0, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 11, src + 64, 64, 5,
			      dst + 4096, mr_mw_next_rkey(MW1), 0, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 12, src + 128, 64, 5, dst,
			      MW2 | 3, 0, w.now),
		    0);
	want_a = 3;
	want_b = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(w.n[0].ncqe, 3);
	MR_CHECK_EQ(cqe(0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(0, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(0, 2)->status, MR_WC_SUCCESS);
	MR_CHECK_MEM(src, dst + 4096, 64);
	MR_CHECK_MEM(src + 64, dst + 4096, 64);
	MR_CHECK_MEM(src + 128, dst, 64);
	/* the type 2 window through the other QP: refused */
	memset(src + 256, 0, 64);
	MR_CHECK_EQ(post_send(q.a, MR_WR_RDMA_READ, 13, src + 256, 64, 5, dst,
			      MW2 | 3, 0, w.now),
		    0);
	want_a = 4;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 3)->wr_id, 13);
	MR_CHECK_EQ(cqe(0, 3)->status, MR_WC_REM_ACCESS_ERR);
	memset(seen, 0, 64);
	MR_CHECK_MEM(src + 256, seen, 64);
	/* rebind the type 1 window: the old rkey is refused */
	MR_CHECK_EQ(post_bind(p.b, 3, mr_mw_next_rkey(MW1),
			      mr_mw_next_rkey(mr_mw_next_rkey(MW1)), 6, dst, 64,
			      MR_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 14, src + 320, 64, 5,
			      dst + 4096, mr_mw_next_rkey(MW1), 0, w.now),
		    0);
	want_a = 5;
	want_b = 3;
	MR_CHECK(run_until(&w, cqe_done, w.now + 50000000));
	MR_CHECK_EQ(cqe(0, 4)->wr_id, 14);
	MR_CHECK_EQ(cqe(0, 4)->status, MR_WC_REM_ACCESS_ERR);
	destroy_pair(&q);
	finish(&p);
}

/* MR-MW-8: UD has no windows; a SEND_WITH_INV needs RC (post: EINVAL). */
static void test_refused_at_post(void)
{
	struct mr_qp_config c = { .type = MR_QPT_UD,
				  .pd = 1,
				  .qpn = 0x55,
				  .max_send_wr = 4,
				  .max_recv_wr = 4,
				  .max_send_sge = 1,
				  .max_recv_sge = 1 };
	struct mr_qp_attr at = { .state = MR_QPS_INIT, .qkey = 1 };
	struct mr_qp *ud;
	struct pair p;

	start(&p);
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &ud), 0);
	MR_CHECK_EQ(mr_qp_modify(ud, &at, MR_QP_STATE | MR_QP_QKEY), 0);
	at.state = MR_QPS_RTR;
	MR_CHECK_EQ(mr_qp_modify(ud, &at, MR_QP_STATE), 0);
	at.state = MR_QPS_RTS;
	MR_CHECK_EQ(mr_qp_modify(ud, &at, MR_QP_STATE | MR_QP_SQ_PSN), 0);
	MR_CHECK_EQ(post_bind(ud, 1, MW2, MW2 | 1, 6, dst, 64,
			      MR_ACCESS_REMOTE_READ),
		    -MR_EINVAL);
	MR_CHECK_EQ(post_inv(ud, MR_WR_LOCAL_INV, 2, NULL, 0, 0, MW2),
		    -MR_EINVAL);
	MR_CHECK_EQ(post_inv(ud, MR_WR_SEND_WITH_INV, 3, src, 8, 5, MW2),
		    -MR_EINVAL);
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	/* no room left: nothing posted, nothing run */
	MR_CHECK_EQ(mr_qp_sq_room(p.b), 64);
	MR_CHECK_EQ(post_bind(p.b, 4, MW2, MW2 | 1, 6, dst, 64,
			      MR_ACCESS_REMOTE_READ),
		    0);
	MR_CHECK_EQ(mr_qp_sq_room(p.b), 64);
	mr_qp_destroy(ud);
	finish(&p);
}

MR_TEST_MAIN(MR_TEST(rules_bind), MR_TEST(rules_access_inv),
	     MR_TEST(test_type2_bind_use_remote_inv),
	     MR_TEST(test_bind_error_in_order),
	     MR_TEST(test_send_inv_region_refused), MR_TEST(test_local_inv),
	     MR_TEST(test_which_qp), MR_TEST(test_refused_at_post))
