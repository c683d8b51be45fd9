// SPDX-License-Identifier: BSD-2-Clause
/*
 * The engine tests' world (engine_world.h): two endpoints joined by a tiny
 * scripted link (an array of packets in flight, loss by mask or seeded
 * PRNG, fixed delay plus seeded jitter), literal timestamps.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_world.h"
#include "mr_engine.h"
#include "mr_sched.h" /* mr_ep_timers_check */
#include "mr_test_mem.h"

uint64_t xs(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*s = x;
	return x;
}

static uint64_t t_rand(void *u)
{
	return xs((uint64_t *)u);
}

static struct mr_mw *find_mw(struct node *n, uint32_t rkey)
{
	int i;

	for (i = 0; i < n->nmws; i++)
		if (n->mws[i].rkey == rkey)
			return &n->mws[i];
	return NULL;
}

static struct reg *find_reg(struct node *n, uint32_t key)
{
	int i;

	for (i = 0; i < n->nregs; i++)
		if (n->regs[i].key == key)
			return &n->regs[i];
	return NULL;
}

/* Windows as a key table keeps them: the rules are mr_mw.c's. */
static int t_bind(void *user, uint32_t pd, uint32_t qpn,
		  const struct mr_mw_bind *b)
{
	struct node *n = user;
	struct mr_mw *mw = find_mw(n, b->mw_rkey);
	struct reg *r = find_reg(n, b->mr_lkey);
	struct mr_mw_region reg;
	int rc;

	if (!mw)
		return -MR_EINVAL;
	if (r) {
		reg.pd = r->pd;
		reg.iova = (uint64_t)(uintptr_t)r->base;
		reg.length = r->len;
		reg.access = r->access;
	}
	rc = mr_mw_bind_check(mw, r ? &reg : NULL, pd, b);
	if (!rc)
		mr_mw_bind_apply(mw, qpn, b);
	return rc;
}

static int t_invalidate(void *user, uint32_t pd, uint32_t qpn, uint32_t rkey,
			int remote)
{
	struct node *n = user;
	struct mr_mw *mw = find_mw(n, rkey);
	int rc;

	if (!mw)
		return -MR_EINVAL; /* a region's key, or none */
	rc = mr_mw_inv_check(mw, pd, qpn, remote);
	if (!rc)
		mr_mw_inv_apply(mw);
	return rc;
}

void world_alloc_mw(struct node *n, uint8_t type, uint32_t rkey)
{
	struct mr_mw *mw = &n->mws[n->nmws++];

	memset(mw, 0, sizeof(*mw));
	mw->type = type;
	mw->pd = 1;
	mw->rkey = rkey;
}

static int t_lookup(void *user, uint32_t pd, uint32_t key, int remote,
		    uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	struct node *n = user;
	struct mr_mw *mw;
	int i;

	*host = NULL;
	if (!len)
		return 0;
	mw = find_mw(n, key);
	if (mw) {
		/* MR-MW-3: windows serve remote accesses only. */
		if (!remote || mr_mw_access_check(mw, pd, (uint32_t)remote,
						  addr, len, need))
			return -MR_EACCESS;
		*host = (uint8_t *)(uintptr_t)addr;
		return 0;
	}
	for (i = 0; i < n->nregs; i++) {
		struct reg *r = &n->regs[i];
		uint64_t b = (uint64_t)(uintptr_t)r->base;

		if (r->key != key)
			continue;
		if (r->pd != pd || addr < b || addr + len > b + r->len ||
		    (need & r->access) != need)
			return -MR_EACCESS;
		*host = (uint8_t *)(uintptr_t)addr;
		return 0;
	}
	return -MR_EACCESS;
}

static void t_place(void *user, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	struct node *n = user;

	n->places++;
	if (n->watch && dst <= n->watch && n->watch < dst + len &&
	    !n->watch_at_place)
		n->watch_at_place = n->places;
	memcpy(dst, src, len);
}

static void t_complete(void *user, const struct mr_cqe *c)
{
	struct node *n = user;

	if (n->on_cqe)
		n->on_cqe(n, c);
	if (n->ncqe < MAXCQE)
		n->cqe[n->ncqe++] = *c;
}

static void t_qp_error(void *user, void *qpu)
{
	((struct node *)user)->qp_errors++;
}

static void t_srq_limit(void *user, void *srqu)
{
	((struct node *)user)->srq_limits++;
}

static void t_sq_drained(void *user, void *qpu)
{
	((struct node *)user)->sq_drained++;
}

static uint64_t rng_state[2];

int world_init(struct world *w, const struct mr_ep_config *cfg)
{
	int i, rc;

	memset(w, 0, sizeof(*w));
	for (i = 0; i < 2; i++) {
		struct mr_mem mem = mr_test_heap;
		struct mr_rand rnd = { t_rand, &rng_state[i] };
		struct mr_memreg mr = { .lookup = t_lookup,
					.bind = t_bind,
					.invalidate = t_invalidate,
					.user = &w->n[i] };
		struct mr_callbacks cb = { .place = t_place,
					   .complete = t_complete,
					   .qp_error = t_qp_error,
					   .srq_limit = t_srq_limit,
					   .sq_drained = t_sq_drained,
					   .user = &w->n[i] };

		rng_state[i] = 0x9e3779b97f4a7c15ull * (i + 1);
		rc = mr_ep_create(cfg, &mem, &rnd, &mr, &cb, &w->n[i].ep);
		if (rc)
			return rc;
		w->l[i].delay = 5000;
		w->l[i].rng = 12345 + i;
	}
	w->now = 1000000;
	return 0;
}

void world_fini(struct world *w)
{
	mr_ep_destroy(w->n[0].ep);
	mr_ep_destroy(w->n[1].ep);
}

void reg(struct node *n, uint32_t key, uint8_t *base, uint64_t len,
	 unsigned access)
{
	struct reg *r = &n->regs[n->nregs++];

	r->key = key;
	r->pd = 1;
	r->base = base;
	r->len = len;
	r->access = access;
}

void link_send(struct link *l, const uint8_t *buf, size_t len, uint64_t now)
{
	uint64_t idx = l->sent++, extra = 0;
	struct inflight *p;
	int i;

	if (l->tap)
		l->tap(l, buf, len);
	if (l->drop_all || (l->drop_op && len > 1 && buf[1] == l->drop_op))
		return;
	if (len >= 40) {
		/* PTH: path id at 32, plane at 35 */
		unsigned path = (unsigned)buf[32] << 8 | buf[33];

		if (buf[35] < 8)
			l->plane_pkts[buf[35]]++;
		extra = buf[35] < 8 ? l->plane_delay[buf[35]] : 0;
		if ((buf[35] < 64 && (l->drop_planes >> buf[35] & 1)) ||
		    (path < 64 && (l->drop_paths >> path & 1)))
			return;
	}
	for (i = 0; i < l->ndrop; i++)
		if (l->drop_idx[i] == idx)
			return;
	if (l->loss_ppm && xs(&l->rng) % 1000000 < l->loss_ppm)
		return;
	if (l->n >= MAXQ)
		return;
	p = &l->q[l->n++];
	memcpy(p->buf, buf, len);
	p->len = len;
	p->at = now + l->delay + extra +
		(l->jitter ? xs(&l->rng) % l->jitter : 0);
	memset(&p->meta, 0, sizeof(p->meta));
	if (l->ce_ppm && xs(&l->rng) % 1000000 < l->ce_ppm)
		p->meta.ecn_ce = 1;
	if (l->corrupt_next) {
		l->corrupt_next--;
		p->buf[len / 2] ^= 0x40;
	}
	if (l->stall_every && now % l->stall_every < l->stall_len)
		p->at += l->stall_len - now % l->stall_every;
	if (l->reverse_next > 1) {
		/* the next reverse_next packets leave in reverse order */
		p->at += (uint64_t)l->reverse_next * 100;
		l->reverse_next--;
	}
}

/* One step: expiry, drain tx, deliver what is due; then jump. Returns 0
 * when nothing is left to happen. */
int world_step(struct world *w)
{
	static uint8_t buf[8192];
	uint64_t next = UINT64_MAX;
	int i, j, did = 0;

	for (i = 0; i < 2; i++) {
		struct node *nd = &w->n[i];
		struct mr_tx_meta meta;
		uint64_t t = w->now;
		size_t len;

		if (nd->stale_every && ++nd->stale_n % nd->stale_every == 0 &&
		    t > nd->stale_ns)
			t -= nd->stale_ns;
		if (mr_ep_next_deadline(nd->ep) <= w->now)
			mr_ep_handle_expiry(nd->ep, t);
		while ((len = mr_ep_tx(w->n[i].ep, w->now, buf, sizeof(buf),
				       &meta)) > 0) {
			link_send(&w->l[i], buf, len, w->now);
			did = 1;
		}
	}
	for (i = 0; i < 2; i++) {
		struct link *l = &w->l[i];

		for (j = 0; j < l->n;) {
			if (l->q[j].at <= w->now) {
				struct inflight p = l->q[j];
				struct node *rn = &w->n[1 - i];
				uint64_t t = w->now;

				l->q[j] = l->q[--l->n];
				if (rn->stale_every &&
				    ++rn->stale_n % rn->stale_every == 0 &&
				    t > rn->stale_ns)
					t -= rn->stale_ns;
				mr_ep_rx(rn->ep, t, p.buf, p.len, &p.meta);
				did = 1;
				continue;
			}
			if (l->q[j].at < next)
				next = l->q[j].at;
			j++;
		}
	}
	for (i = 0; i < 2; i++) {
		/* The timer queue must agree with every QP's state after
		 * each step (an entry point that forgot to re-key a QP). */
		if (mr_ep_timers_check(w->n[i].ep)) {
			fprintf(stderr, "node %d: timer queue out of date\n",
				i);
			abort();
		}
	}
	if (did)
		return 1;
	for (i = 0; i < 2; i++) {
		uint64_t d = mr_ep_next_deadline(w->n[i].ep);

		if (d < next)
			next = d;
	}
	if (w->until > w->now && next > w->until)
		next = w->until;
	if (next == UINT64_MAX)
		return 0;
	w->now = next > w->now ? next : w->now + 1;
	return 1;
}

int run_until(struct world *w, int (*done)(struct world *), uint64_t t)
{
	uint64_t steps = 0;
	int ok;

	while (w->now < t && steps++ < 50000000) {
		if (done && done(w))
			return 1;
		if (!world_step(w))
			break;
	}
	ok = done ? done(w) : 1;
	if (!ok)
		dump(w);
	return ok;
}

void connect_qps(struct world *w, struct pair *p, enum mr_mode mode,
		 uint32_t max_wr, struct mr_srq *srq_b)
{
	const struct mr_qp_config c = {
		.type = MR_QPT_RC,
		.mode = mode,
		.pd = 1,
		.max_send_wr = max_wr,
		.max_recv_wr = max_wr,
		.max_send_sge = 4,
		.max_recv_sge = 4,
		.max_inline = 64,
	};
	const struct world_conn k = {
		.qpn = { 0x11, 0x22 },
		.rq_psn = { 0x7000, 0xfffffff0u },
		.sq_psn = { 0xfffffff0u, 0x7000 }, /* wraps soon */
		.path_mtu = world_path_mtu,
		.rd_atomic = 4,
		.min_rnr_timer = 1,
		.timeout = 10,
		.rts = 2,
		.srq_b = srq_b,
	};

	world_connect(w, p, &c, &k);
}

void world_connect(struct world *w, struct pair *p,
		   const struct mr_qp_config *c, const struct world_conn *k)
{
	struct mr_qp_config qc = *c;
	struct mr_qp_attr at;
	struct mr_qp *q[2];
	int i;

	for (i = 0; i < 2; i++) {
		qc.qpn = k->qpn[i];
		if (i)
			qc.srq = k->srq_b;
		MR_CHECK_EQ(mr_qp_create(w->n[i].ep, &qc, &q[i]), 0);
	}
	for (i = 0; i < 2; i++) {
		memset(&at, 0, sizeof(at));
		at.state = MR_QPS_INIT;
		at.access = RW;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at,
					 MR_QP_STATE | MR_QP_ACCESS_FLAGS),
			    0);
		at.state = MR_QPS_RTR;
		at.dest_qpn = k->qpn[!i];
		at.rq_psn = k->rq_psn[i];
		at.path_mtu_bytes = k->path_mtu;
		at.max_dest_rd_atomic = k->rd_atomic;
		at.min_rnr_timer = k->min_rnr_timer;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at,
					 MR_QP_STATE | MR_QP_DEST |
						 MR_QP_PATH_MTU |
						 MR_QP_DEST_QPN | MR_QP_RQ_PSN |
						 MR_QP_MAX_DEST_RD_ATOMIC |
						 MR_QP_MIN_RNR_TIMER),
			    0);
		if (i >= k->rts)
			continue;
		at.state = MR_QPS_RTS;
		at.sq_psn = k->sq_psn[i];
		at.timeout = k->timeout;
		at.retry_cnt = 7;
		at.rnr_retry = 7;
		at.max_rd_atomic = k->rd_atomic;
		MR_CHECK_EQ(mr_qp_modify(
				    q[i], &at,
				    MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
					    MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
					    MR_QP_MAX_QP_RD_ATOMIC),
			    0);
	}
	p->a = q[0];
	p->b = q[1];
}

void fill(uint8_t *p, size_t n, uint32_t seed)
{
	size_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)((i * 131 + seed * 7 + (i >> 8)) ^ seed);
}

int post_send(struct mr_qp *qp, enum mr_wr_opcode op, uint64_t wr_id,
	      void *laddr, uint32_t len, uint32_t lkey, void *raddr,
	      uint32_t rkey, unsigned flags, uint64_t now)
{
	struct mr_sge sge = { (uint64_t)(uintptr_t)laddr, len, lkey };
	struct mr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = op,
		.flags = flags | MR_SEND_SIGNALED,
		.sg_list = &sge,
		.num_sge = laddr ? 1 : 0,
		.imm = 0x01020304,
		.remote_addr = (uint64_t)(uintptr_t)raddr,
		.rkey = rkey,
	};
	return mr_qp_post_send(qp, &wr, now);
}

int post_recv(struct mr_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
	      uint32_t lkey)
{
	struct mr_sge sge = { (uint64_t)(uintptr_t)addr, len, lkey };
	struct mr_recv_wr wr = { wr_id, &sge, addr ? 1 : 0 };

	return mr_qp_post_recv(qp, &wr);
}

int want_a, want_b;
uint32_t world_path_mtu = 1024;

void world_post_writes(struct world *w, struct pair *p, uint8_t *src,
		       uint8_t *dst, int nmsg, uint32_t msg, uint32_t seed)
{
	size_t len = (size_t)nmsg * msg;
	int i;

	fill(src, len, seed);
	memset(dst, 0, len);
	reg(&w->n[0], 5, src, len, MR_ACCESS_LOCAL_WRITE);
	reg(&w->n[1], 6, dst, len, RW);
	MR_CHECK_EQ(post_recv(p->b, 77, NULL, 0, 0), 0);
	for (i = 0; i < nmsg; i++)
		MR_CHECK_EQ(post_send(p->a,
				      i == nmsg - 1 ? MR_WR_RDMA_WRITE_WITH_IMM
						    : MR_WR_RDMA_WRITE,
				      (uint64_t)i, src + (size_t)i * msg, msg,
				      5, dst + (size_t)i * msg, 6,
				      MR_SEND_SIGNALED, w->now),
			    0);
	want_a = nmsg;
	want_b = 1;
}

/* On failure: what each side completed and its nonzero counters. */
void dump(struct world *w)
{
	const char *const *names = mr_counters_names();
	int i, k;

	for (i = 0; i < 2; i++) {
		const uint64_t *c =
			(const uint64_t *)(const void *)mr_ep_counters(
				w->n[i].ep);

		fprintf(stderr, "node %d: t=%llu ncqe=%d qp_errors=%d\n", i,
			(unsigned long long)w->now, w->n[i].ncqe,
			w->n[i].qp_errors);
		for (k = 0; k < w->n[i].ncqe && k < 8; k++)
			fprintf(stderr, "  cqe wr_id=%llu status=%d op=%d\n",
				(unsigned long long)w->n[i].cqe[k].wr_id,
				w->n[i].cqe[k].status, w->n[i].cqe[k].opcode);
		for (k = 0; k < (int)MR_COUNTERS_N; k++)
			if (c[k])
				fprintf(stderr, "  %s=%llu\n", names[k],
					(unsigned long long)c[k]);
	}
}

int cqe_done(struct world *w)
{
	return w->n[0].ncqe >= want_a && w->n[1].ncqe >= want_b;
}

const struct mr_ep_config base_cfg = {
	.mtu = 1024,
	.num_paths = 4,
	.max_qp = 8,
};

void destroy_pair(struct pair *p)
{
	mr_qp_destroy(p->a);
	mr_qp_destroy(p->b);
}

void set_rts_attr(struct mr_qp *qp, unsigned mask, uint8_t val)
{
	struct mr_qp_attr at;

	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_RTS;
	at.rnr_retry = val;
	at.retry_cnt = val;
	at.timeout = val;
	MR_CHECK_EQ(mr_qp_modify(qp, &at, MR_QP_STATE | mask), 0);
}
