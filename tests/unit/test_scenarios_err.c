// SPDX-License-Identifier: BSD-2-Clause
/*
 * Hand-written error and corner scenarios on the two-endpoint harness
 * (tests/unit/sim/), in both reliability modes: a bad rkey, bounds or
 * rights end in MR_WC_REM_ACCESS_ERR and flush what follows; a peer that
 * vanishes ends in MR_WC_RETRY_EXC_ERR after the configured timeout times
 * the retries, in simulated time; RNR with and without a later receive;
 * duplicated and reordered packets never execute an atomic twice;
 * corrupted packets are all dropped by the ICRC and counted.
 */
#include <stdio.h>
#include <string.h>

#include "mr_counters.h"
#include "mr_test.h"
#include "sim/mrsim_scen.h"

struct pair {
	struct mrsim_world w;
	struct mr_qp *qp[2];
	struct mrsim_region *src[2], *tgt[2], *ro[2], *dst[2];
	uint32_t qpn[2];
};

static const struct mr_ep_config ep_cfg = { .mtu = 1024,
					    .num_paths = 4,
					    .max_qp = 4 };

static void fill(uint8_t *p, size_t n, uint8_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(seed + i * 7 + (i >> 8));
}

/* Returns 0 when both nodes are connected and have their regions. l is
 * the link from node 0 to node 1, lb the way back. */
static int pair_init2(struct pair *p, enum mr_mode mode,
		      const struct mrsim_link_cfg *l,
		      const struct mrsim_link_cfg *lb, uint8_t timeout,
		      uint8_t retry_cnt, uint8_t rnr_retry, uint64_t seed)
{
	struct mrsim_rc_opts o = { .mode = mode,
				   .max_send_wr = 256,
				   .max_recv_wr = 64,
				   .max_inline = 64,
				   .timeout = timeout,
				   .retry_cnt = retry_cnt,
				   .rnr_retry = rnr_retry,
				   .min_rnr_timer = 1,
				   .psn = { 0xfffffff0u, 77 } };
	int i;

	memset(p, 0, sizeof(*p));
	p->qpn[0] = 0x111;
	p->qpn[1] = 0x222;
	if (mrsim_world_init(&p->w, &ep_cfg, l, lb, seed))
		return -1;
	for (i = 0; i < 2; i++) {
		struct mrsim_mem *m = &p->w.node[i].mem;

		p->src[i] = mrsim_mem_reg(m, 0, 1 << 20, 1, 0);
		p->tgt[i] = mrsim_mem_reg(m, 0, 1 << 20, 1,
					  MR_ACCESS_LOCAL_WRITE |
						  MR_ACCESS_REMOTE_WRITE |
						  MR_ACCESS_REMOTE_READ |
						  MR_ACCESS_REMOTE_ATOMIC);
		p->ro[i] = mrsim_mem_reg(m, 0, 4096, 1, MR_ACCESS_REMOTE_READ);
		p->dst[i] =
			mrsim_mem_reg(m, 0, 1 << 20, 1, MR_ACCESS_LOCAL_WRITE);
		if (!p->src[i] || !p->tgt[i] || !p->ro[i] || !p->dst[i])
			return -1;
		fill(p->src[i]->buf, p->src[i]->len, (uint8_t)(i + 1));
	}
	return mrsim_rc_connect(&p->w, &o, p->qpn, p->qp);
}

static int pair_init(struct pair *p, enum mr_mode mode,
		     const struct mrsim_link_cfg *l, uint8_t timeout,
		     uint8_t retry_cnt, uint8_t rnr_retry, uint64_t seed)
{
	return pair_init2(p, mode, l, l, timeout, retry_cnt, rnr_retry, seed);
}

/* Idempotent, so that it also runs as the cleanup of a pair whose test
 * returned early on a failed check (no leak reports on top of the
 * failure). */
static void pair_fini(struct pair *p)
{
	int i;

	for (i = 0; i < 2; i++)
		if (p->qp[i])
			mr_qp_destroy(p->qp[i]);
	mrsim_world_fini(&p->w);
	memset(p, 0, sizeof(*p));
}

#define AUTO_PAIR struct pair __attribute__((cleanup(pair_fini)))

static int post(struct pair *p, int i, uint64_t wr_id, enum mr_wr_opcode op,
		uint64_t src_off, uint32_t len, uint64_t raddr, uint32_t rkey,
		unsigned flags)
{
	struct mr_sge sge = { .addr = p->src[i]->iova + src_off,
			      .length = len,
			      .lkey = p->src[i]->lkey };
	struct mr_send_wr wr = { .wr_id = wr_id,
				 .opcode = op,
				 .flags = flags,
				 .sg_list = &sge,
				 .num_sge = 1,
				 .remote_addr = raddr,
				 .rkey = rkey };

	if (op == MR_WR_RDMA_READ || op == MR_WR_ATOMIC_CMP_AND_SWP ||
	    op == MR_WR_ATOMIC_FETCH_AND_ADD) {
		sge.addr = p->dst[i]->iova + src_off;
		sge.lkey = p->dst[i]->lkey;
	}
	return mr_qp_post_send(p->qp[i], &wr, p->w.now);
}

static int post_recv(struct pair *p, int i, uint64_t wr_id, uint64_t off,
		     uint32_t len)
{
	struct mr_sge sge = { .addr = p->dst[i]->iova + off,
			      .length = len,
			      .lkey = p->dst[i]->lkey };
	struct mr_recv_wr wr = { .wr_id = wr_id,
				 .sg_list = &sge,
				 .num_sge = 1 };

	return mr_qp_post_recv(p->qp[i], &wr);
}

struct want {
	struct mrsim_node *nd;
	size_t n;
};

static int have_cqes(void *user)
{
	struct want *w = user;

	return w->nd->ncqe >= w->n;
}

static int run_until_cqes(struct pair *p, int i, size_t n, uint64_t bound)
{
	struct want w = { &p->w.node[i], n };
	int rc = mrsim_world_run(&p->w, have_cqes, &w, bound);

	if (rc)
		fprintf(stderr,
			"run: rc %d at t=%llu, node %d has %zu/%zu "
			"CQEs %s\n",
			rc, (unsigned long long)p->w.now, i, p->w.node[i].ncqe,
			n, p->w.why);
	return rc;
}

static const struct mr_cqe *cqe(struct pair *p, int i, size_t k)
{
	return &p->w.node[i].cqes[k].c;
}

static enum mr_qp_state qp_state(struct mr_qp *qp)
{
	struct mr_qp_attr a;

	if (mr_qp_query(qp, &a))
		return (enum mr_qp_state) - 1;
	return a.state;
}

/* The bad WR: kind 0 WRITE with an unknown rkey, 1 WRITE past the end,
 * 2 WRITE to a read-only region, 3 READ of a region without remote rights,
 * 4 FETCH_ADD on a region without atomic rights, 5 WRITE with the lkey as
 * rkey. */
static void rem_access(enum mr_mode mode, int kind, uint32_t loss_ppm)
{
	struct mrsim_link_cfg l = { .delay_ns = 3000, .loss_ppm = loss_ppm };
	AUTO_PAIR p = { 0 };
	enum mr_wr_opcode op = MR_WR_RDMA_WRITE;
	uint32_t rkey, len = 200;
	uint64_t raddr;
	size_t k;

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 7, 42 + (uint64_t)kind), 0);
	MR_CHECK_EQ(post_recv(&p, 1, 0x71, 0, 4096), 0);
	raddr = p.tgt[1]->iova + 4096;
	rkey = p.tgt[1]->rkey;
	if (kind == 0)
		rkey ^= 0x5a5a;
	else if (kind == 1)
		raddr = p.tgt[1]->iova + p.tgt[1]->len - 100;
	else if (kind == 2 || kind == 4) {
		raddr = p.ro[1]->iova;
		rkey = p.ro[1]->rkey;
	} else if (kind == 3) {
		raddr = p.src[1]->iova;
		rkey = p.src[1]->rkey;
	} else {
		rkey = p.tgt[1]->lkey;
	}
	if (kind == 3)
		op = MR_WR_RDMA_READ;
	if (kind == 4) {
		op = MR_WR_ATOMIC_FETCH_AND_ADD;
		len = 8;
	}
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_RDMA_WRITE, 0, 3000, p.tgt[1]->iova,
			 p.tgt[1]->rkey, MR_SEND_SIGNALED),
		    0);
	/* The bad one is unsignaled: errors complete anyway. */
	MR_CHECK_EQ(post(&p, 0, 2, op, 100, len, raddr, rkey, 0), 0);
	MR_CHECK_EQ(post(&p, 0, 3, MR_WR_SEND, 0, 100, 0, 0, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(post(&p, 0, 4, MR_WR_RDMA_READ, 0, 100, p.tgt[1]->iova,
			 p.tgt[1]->rkey, 0),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 4, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 0, 0)->wr_id, 1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(&p, 0, 1)->wr_id, 2);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_REM_ACCESS_ERR);
	for (k = 2; k < 4; k++) {
		MR_CHECK_EQ(cqe(&p, 0, k)->wr_id, k + 1);
		MR_CHECK_EQ(cqe(&p, 0, k)->status, MR_WC_WR_FLUSH_ERR);
	}
	MR_CHECK_EQ(qp_state(p.qp[0]), MR_QPS_ERR);
	/* The successful WRITE's bytes are all there, the bad one's are
	 * nowhere (the read-only region is still zero). */
	MR_CHECK_MEM(p.tgt[1]->buf, p.src[0]->buf, 3000);
	for (k = 0; k < p.ro[1]->len; k++)
		MR_CHECK_EQ(p.ro[1]->buf[k], 0);
	for (k = 3000; k < p.tgt[1]->len; k++)
		MR_CHECK_EQ(p.tgt[1]->buf[k], 0);
	/* Nothing came back into the requester's memory either. */
	for (k = 0; k < p.dst[0]->len; k++)
		MR_CHECK_EQ(p.dst[0]->buf[k], 0);
	MR_CHECK(mr_ep_counters(p.w.node[1].ep)->nak_sent[MR_NAK_REM_ACCESS] >=
		 1);
	MR_CHECK(mr_ep_counters(p.w.node[0].ep)->nak_rcvd[MR_NAK_REM_ACCESS] >=
		 1);
	/* Posting in ERR completes at once with a flush. */
	MR_CHECK_EQ(post(&p, 0, 5, MR_WR_SEND, 0, 10, 0, 0, 0), 0);
	MR_CHECK_EQ(p.w.node[0].ncqe, 5);
	MR_CHECK_EQ(cqe(&p, 0, 4)->wr_id, 5);
	MR_CHECK_EQ(cqe(&p, 0, 4)->status, MR_WC_WR_FLUSH_ERR);
	pair_fini(&p);
}

static void test_rem_access_metaroce(void)
{
	int kind;

	for (kind = 0; kind < 6; kind++)
		rem_access(MR_MODE_METAROCE, kind, 0);
	rem_access(MR_MODE_METAROCE, 0, 100000);
}

static void test_rem_access_gbn(void)
{
	int kind;

	for (kind = 0; kind < 6; kind++)
		rem_access(MR_MODE_GBN, kind, 0);
	rem_access(MR_MODE_GBN, 1, 100000);
}

/* The peer vanishes (both directions cut) while a 64 KiB WRITE is in
 * flight: retry_cnt RTOs later the WR fails with RETRY_EXC_ERR, the QP is
 * in ERR and later WRs are flushed. */
static void link_cut(enum mr_mode mode, uint8_t retry_cnt)
{
	const uint8_t timeout = 10; /* 4.096 us << 10 = 4.19 ms */
	const uint64_t tmo_ns = 4096ull << timeout, cut = 3000;
	struct mrsim_link_cfg l = { .delay_ns = 2000, .cut_at_ns = cut };
	AUTO_PAIR p = { 0 };
	uint64_t t_err;

	MR_CHECK_EQ(pair_init(&p, mode, &l, timeout, retry_cnt, 7, 5), 0);
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_RDMA_WRITE, 0, 1 << 16, p.tgt[1]->iova,
			 p.tgt[1]->rkey, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(post(&p, 0, 2, MR_WR_RDMA_WRITE, 0, 100, p.tgt[1]->iova,
			 p.tgt[1]->rkey, 0),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 2, 100ull * tmo_ns << retry_cnt), 0);
	MR_CHECK_EQ(cqe(&p, 0, 0)->wr_id, 1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_RETRY_EXC_ERR);
	MR_CHECK_EQ(cqe(&p, 0, 1)->wr_id, 2);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(qp_state(p.qp[0]), MR_QPS_ERR);
	/* The first transmission's timeout plus retry_cnt retransmission
	 * timeouts, each at least the configured timeout; with exponential
	 * backoff at most 2^(retry_cnt+2) timeouts in all. */
	t_err = p.w.node[0].cqes[0].t;
	if (t_err < (uint64_t)(retry_cnt + 1) * tmo_ns ||
	    t_err > cut + (tmo_ns << (retry_cnt + 2)))
		fprintf(stderr,
			"mode %d retry_cnt %u: RETRY_EXC at %llu ns "
			"after the cut, timeout %llu ns\n",
			mode, retry_cnt, (unsigned long long)(t_err - cut),
			(unsigned long long)tmo_ns);
	MR_CHECK(t_err >= (uint64_t)(retry_cnt + 1) * tmo_ns);
	MR_CHECK(t_err <= cut + (tmo_ns << (retry_cnt + 2)));
	MR_CHECK(mr_ep_counters(p.w.node[0].ep)->timeouts >= retry_cnt + 1u);
	pair_fini(&p);
}

static void test_link_cut(void)
{
	link_cut(MR_MODE_METAROCE, 0);
	link_cut(MR_MODE_METAROCE, 3);
	link_cut(MR_MODE_METAROCE, 7);
	link_cut(MR_MODE_GBN, 0);
	link_cut(MR_MODE_GBN, 3);
	link_cut(MR_MODE_GBN, 7);
}

struct late_recv {
	struct pair *p;
	uint64_t at;
	int done;
	uint32_t len;	/* receive buffer size (0: 5000) */
	unsigned count; /* receives to post (0: 1), back to back */
};

static uint64_t post_late(void *user, struct mrsim_world *w)
{
	struct late_recv *lr = user;

	if (lr->done)
		return UINT64_MAX;
	if (w->now < lr->at)
		return lr->at;
	uint32_t len = lr->len ? lr->len : 5000;
	unsigned i;

	lr->done = 1;
	for (i = 0; i < (lr->count ? lr->count : 1); i++)
		if (post_recv(lr->p, 1, 0x900 + i, 8192 + (uint64_t)i * len,
			      len))
			mrsim_world_fail(w, "late post_recv failed");
	return UINT64_MAX;
}

/* No receive posted: rnr_retry NAKs later the SEND fails with
 * RNR_RETRY_EXC_ERR. With rnr_retry 7 (infinite) and a receive posted
 * 3 ms later, the SEND and WRITE_WITH_IMM complete and land. */
static void rnr(enum mr_mode mode)
{
	struct mrsim_link_cfg l = { .delay_ns = 2000 };
	struct late_recv lr;
	AUTO_PAIR p = { 0 };

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 2, 11), 0);
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_SEND, 0, 3000, 0, 0, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(post(&p, 0, 2, MR_WR_SEND, 0, 10, 0, 0, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 2, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 0, 0)->wr_id, 1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_RNR_RETRY_EXC_ERR);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(qp_state(p.qp[0]), MR_QPS_ERR);
	/* The first NAK and two retries, each NAKed again. */
	MR_CHECK(mr_ep_counters(p.w.node[1].ep)->nak_sent[MR_NAK_RNR] >= 3);
	MR_CHECK_EQ(p.w.node[1].ncqe, 0);
	pair_fini(&p);

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 7, 12), 0);
	memset(&lr, 0, sizeof(lr));
	lr.p = &p;
	lr.at = 3000000;
	lr.done = 0;
	p.w.on_instant = post_late;
	p.w.on_instant_user = &lr;
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_SEND, 0, 3000, 0, 0, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 1, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK(p.w.node[0].cqes[0].t > lr.at);
	MR_CHECK_EQ(run_until_cqes(&p, 1, 1, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 1, 0)->wr_id, 0x900);
	MR_CHECK_EQ(cqe(&p, 1, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(&p, 1, 0)->byte_len, 3000);
	MR_CHECK_MEM(p.dst[1]->buf + 8192, p.src[0]->buf, 3000);
	MR_CHECK(mr_ep_counters(p.w.node[0].ep)->rnr_waits >= 1);
	pair_fini(&p);
}

/* A SEND larger than what the requester sends in its first pass (1000 KB,
 * ~980 packets at 1 KiB MTU) finds no receive WQE until 20 us: every
 * packet is RNR-NAKed while the message is still being sent for the first
 * time; once the receive is posted the SEND must still complete. */
static void rnr_big_send(enum mr_mode mode)
{
	struct mrsim_link_cfg l = { .delay_ns = 2000 };
	struct late_recv lr = { 0 };
	AUTO_PAIR p = { 0 };

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 7, 13), 0);
	lr.p = &p;
	lr.at = 20000;
	lr.done = 0;
	lr.len = 1000000;
	p.w.on_instant = post_late;
	p.w.on_instant_user = &lr;
	MR_CHECK_EQ(
		post(&p, 0, 1, MR_WR_SEND, 0, 1000000, 0, 0, MR_SEND_SIGNALED),
		0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 1, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(run_until_cqes(&p, 1, 1, 10000000000ull), 0);
	MR_CHECK_EQ(cqe(&p, 1, 0)->byte_len, 1000000);
	MR_CHECK_MEM(p.dst[1]->buf + 8192, p.src[0]->buf, 1000000);
	pair_fini(&p);
}

/* Drop the first RNR NAK for message 0 (the one for message 1 gets
 * through): the requester must still resend message 0 once the receives
 * are posted. */
static int drop_first_rnr_nak0(void *user, uint64_t idx, uint64_t now,
			       const uint8_t *pkt, size_t len, uint16_t path)
{
	int *dropped = user;
	struct mr_pkt k;

	if (*dropped || mr_wire_parse(pkt, len, &k) ||
	    k.bth.opcode != MR_OP_ACK || k.aeth.syndrome != MR_NAK_RNR ||
	    k.aeth.nak_msn != 0)
		return 0;
	*dropped = 1;
	return 1;
}

static void rnr_nak_lost(enum mr_mode mode)
{
	struct mrsim_link_cfg l = { .delay_ns = 2000 }, lb = l;
	struct late_recv lr = { 0 };
	AUTO_PAIR p = { 0 };
	int dropped = 0;

	lb.filter = drop_first_rnr_nak0;
	lb.filter_user = &dropped;
	memset(&p, 0, sizeof(p));
	MR_CHECK_EQ(pair_init2(&p, mode, &l, &lb, 14, 7, 7, 14), 0);
	lr.p = &p;
	lr.at = 20000;
	lr.done = 0;
	lr.len = 100;
	lr.count = 2;
	p.w.on_instant = post_late;
	p.w.on_instant_user = &lr;
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_SEND, 0, 100, 0, 0, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(
		post(&p, 0, 2, MR_WR_SEND, 100, 100, 0, 0, MR_SEND_SIGNALED),
		0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 2, 10000000000ull), 0);
	MR_CHECK_EQ(dropped, 1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(run_until_cqes(&p, 1, 2, 10000000000ull), 0);
	MR_CHECK_MEM(p.dst[1]->buf + 8192, p.src[0]->buf, 100);
	MR_CHECK_MEM(p.dst[1]->buf + 8192 + 100, p.src[0]->buf + 100, 100);
	pair_fini(&p);
}

/* Loss of the one ACK that completes a message whose packets were all
 * acked earlier: msn 0 is a FETCH_ADD whose first transmission is lost,
 * msn 1 a WRITE that arrives (SACKed, but not complete: msn 0 is not);
 * after the RTO the atomic executes, its response arrives, but the ACK
 * with cum_msn 2 is dropped. The WRITE must still complete. */
struct drop_ack_state {
	int dropped;
};

static int drop_first_cum2(void *user, uint64_t idx, uint64_t now,
			   const uint8_t *pkt, size_t len, uint16_t path)
{
	struct drop_ack_state *st = user;
	struct mr_pkt k;

	if (st->dropped || mr_wire_parse(pkt, len, &k) ||
	    k.bth.opcode != MR_OP_ACK || k.aeth.cum_msn != 2)
		return 0;
	st->dropped = 1;
	return 1;
}

static void last_ack_lost(enum mr_mode mode)
{
	static const uint64_t first[] = { 0 };
	struct mrsim_link_cfg l = { .delay_ns = 2000,
				    .drop_idx = first,
				    .n_drop = 1 },
			      lb = { .delay_ns = 2000 };
	struct drop_ack_state st = { 0 };
	AUTO_PAIR p = { 0 };
	uint64_t v;

	lb.filter = drop_first_cum2;
	lb.filter_user = &st;
	MR_CHECK_EQ(pair_init2(&p, mode, &l, &lb, 14, 7, 7, 15), 0);
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_ATOMIC_FETCH_AND_ADD, 0, 8,
			 p.tgt[1]->iova + 4096, p.tgt[1]->rkey,
			 MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(post(&p, 0, 2, MR_WR_RDMA_WRITE, 0, 100, p.tgt[1]->iova,
			 p.tgt[1]->rkey, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 2, 10000000000ull), 0);
	MR_CHECK_EQ(st.dropped, 1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_MEM(p.tgt[1]->buf, p.src[0]->buf, 100);
	memcpy(&v, p.dst[0]->buf, 8);
	MR_CHECK_EQ(v, 0);
	pair_fini(&p);
}

static void test_last_ack_lost(void)
{
	last_ack_lost(MR_MODE_METAROCE);
	last_ack_lost(MR_MODE_GBN);
}

static void test_rnr(void)
{
	rnr(MR_MODE_METAROCE);
	rnr(MR_MODE_GBN);
}

static void test_rnr_big_send(void)
{
	rnr_big_send(MR_MODE_METAROCE);
	rnr_big_send(MR_MODE_GBN);
}

static void test_rnr_nak_lost(void)
{
	rnr_nak_lost(MR_MODE_METAROCE);
	rnr_nak_lost(MR_MODE_GBN);
}

/* Half the packets delivered twice, reordered, 5% loss both ways: 300
 * atomics on two words; every returned value and the final values follow
 * one sequential execution. */
static void atomics_dup(enum mr_mode mode)
{
	struct mrsim_link_cfg l = { .delay_ns = 3000,
				    .jitter_ns = 4000,
				    .dup_ppm = 500000,
				    .reorder_ppm = 100000,
				    .reorder_ns = 20000,
				    .loss_ppm = 50000 };
	uint64_t word[2] = { 1000, 0xffffffffffffff00ull }, orig[300];
	AUTO_PAIR p = { 0 };
	unsigned i;

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 7, 99), 0);
	memcpy(p.tgt[1]->buf, word, 16);
	for (i = 0; i < 300; i++) {
		unsigned wi = i % 3 == 0;
		struct mr_sge sge = { .addr = p.dst[0]->iova + 8 * i,
				      .length = 8,
				      .lkey = p.dst[0]->lkey };
		struct mr_send_wr wr = { .wr_id = i,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .flags = MR_SEND_SIGNALED,
					 .remote_addr = p.tgt[1]->iova + 8 * wi,
					 .rkey = p.tgt[1]->rkey };

		orig[i] = word[wi];
		if (i % 5 == 4) {
			wr.opcode = MR_WR_ATOMIC_CMP_AND_SWP;
			/* Every other CAS matches. */
			wr.compare_add = i % 10 == 4 ? word[wi] : ~word[wi];
			wr.swap = i * 0x10001ull;
			if (word[wi] == wr.compare_add)
				word[wi] = wr.swap;
		} else {
			wr.opcode = MR_WR_ATOMIC_FETCH_AND_ADD;
			wr.compare_add = i + 1;
			word[wi] += i + 1;
		}
		MR_CHECK_EQ(mr_qp_post_send(p.qp[0], &wr, p.w.now), 0);
		/* The send queue holds 256: post in three rounds. */
		if (i % 100 == 99)
			MR_CHECK_EQ(
				run_until_cqes(&p, 0, i + 1, 60000000000ull),
				0);
	}
	for (i = 0; i < 300; i++) {
		uint64_t got;

		MR_CHECK_EQ(cqe(&p, 0, i)->wr_id, i);
		MR_CHECK_EQ(cqe(&p, 0, i)->status, MR_WC_SUCCESS);
		MR_CHECK_EQ(cqe(&p, 0, i)->opcode,
			    i % 5 == 4 ? MR_WC_COMP_SWAP : MR_WC_FETCH_ADD);
		memcpy(&got, p.dst[0]->buf + 8 * i, 8);
		if (got != orig[i])
			fprintf(stderr,
				"atomic %u returned %#llx, want %#llx\n", i,
				(unsigned long long)got,
				(unsigned long long)orig[i]);
		MR_CHECK_EQ(got, orig[i]);
	}
	MR_CHECK_MEM(p.tgt[1]->buf, word, 16);
	MR_CHECK_EQ(mr_ep_counters(p.w.node[1].ep)->atomics_executed, 300);
	MR_CHECK(mr_ep_counters(p.w.node[1].ep)->duplicates > 0);
	MR_CHECK(p.w.dir[0].st.duplicated > 0);
	pair_fini(&p);
}

static void test_atomics_never_twice(void)
{
	atomics_dup(MR_MODE_METAROCE);
	atomics_dup(MR_MODE_GBN);
}

/* 20% of packets get one bit flipped: each is dropped by the ICRC and
 * counted, and the transfer still completes byte-exact. */
static void corrupt(enum mr_mode mode)
{
	struct mrsim_link_cfg l = { .delay_ns = 2000, .corrupt_ppm = 200000 };
	AUTO_PAIR p = { 0 };
	uint64_t dropped = 0, corrupted;
	int i, k;

	MR_CHECK_EQ(pair_init(&p, mode, &l, 14, 7, 7, 1234), 0);
	MR_CHECK_EQ(post(&p, 0, 1, MR_WR_RDMA_WRITE, 0, 300000, p.tgt[1]->iova,
			 p.tgt[1]->rkey, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(post(&p, 0, 2, MR_WR_RDMA_READ, 0, 200000, p.tgt[1]->iova,
			 p.tgt[1]->rkey, MR_SEND_SIGNALED),
		    0);
	MR_CHECK_EQ(run_until_cqes(&p, 0, 2, 60000000000ull), 0);
	MR_CHECK_EQ(mrsim_world_run(&p.w, NULL, NULL, p.w.now + 100000000ull),
		    1);
	MR_CHECK_EQ(cqe(&p, 0, 0)->status, MR_WC_SUCCESS);
	MR_CHECK_EQ(cqe(&p, 0, 1)->status, MR_WC_SUCCESS);
	MR_CHECK_MEM(p.tgt[1]->buf, p.src[0]->buf, 300000);
	MR_CHECK_MEM(p.dst[0]->buf, p.src[0]->buf, 200000);
	for (i = 0; i < 2; i++)
		for (k = 0; k < MR_PARSE_ERRS; k++)
			dropped +=
				mr_ep_counters(p.w.node[i].ep)->drop_parse[k];
	corrupted = p.w.dir[0].st.corrupted + p.w.dir[1].st.corrupted;
	MR_CHECK(corrupted > 50);
	MR_CHECK_EQ(dropped, corrupted);
	pair_fini(&p);
}

static void test_corruption(void)
{
	corrupt(MR_MODE_METAROCE);
	corrupt(MR_MODE_GBN);
}

MR_TEST_MAIN(MR_TEST(test_rem_access_metaroce), MR_TEST(test_rem_access_gbn),
	     MR_TEST(test_link_cut), MR_TEST(test_rnr),
	     MR_TEST(test_rnr_big_send), MR_TEST(test_rnr_nak_lost),
	     MR_TEST(test_last_ack_lost), MR_TEST(test_atomics_never_twice),
	     MR_TEST(test_corruption))
