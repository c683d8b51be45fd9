// SPDX-License-Identifier: BSD-2-Clause
/* Randomized RC scenarios with a reference model: see mrsim_scen.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_counters.h"
#include "mrsim_scen_int.h"

void mrsim_scen_fail(struct scen *sc, const char *fmt, ...)
{
	va_list ap;

	if (sc->failed)
		return;
	sc->failed = 1;
	va_start(ap, fmt);
	vsnprintf(sc->why, sizeof(sc->why), fmt, ap);
	va_end(ap);
}

unsigned mrsim_scen_count(unsigned dflt)
{
	const char *s = getenv("MRSIM_SCALE");
	double f;

	if (getenv("MRSIM_SEED"))
		return 1;
	if (!s)
		return dflt;
	f = strtod(s, NULL);
	if (f <= 0)
		return dflt;
	return (unsigned)(dflt * f + 0.5) ? (unsigned)(dflt * f + 0.5) : 1;
}

uint64_t mrsim_world_retx(const struct mrsim_world *w)
{
	return mr_ep_counters(w->node[0].ep)->retx_pkts +
	       mr_ep_counters(w->node[1].ep)->retx_pkts;
}

int mrsim_rc_connect(struct mrsim_world *w, const struct mrsim_rc_opts *o,
		     const uint32_t qpn[2], struct mr_qp *qp[2])
{
	int i, rc;

	qp[0] = qp[1] = NULL;
	for (i = 0; i < 2; i++) {
		struct mr_qp_config qc = {
			.type = MR_QPT_RC,
			.mode = o->mode,
			.qpn = qpn[i],
			.pd = 1,
			.max_send_wr = o->max_send_wr,
			.max_recv_wr = o->max_recv_wr,
			.max_send_sge = MAX_SGE,
			.max_recv_sge = MAX_SGE,
			.max_inline = o->max_inline,
			.sq_sig_all = o->sq_sig_all[i],
			.srq = o->srq[i],
			.user = &w->node[i],
		};

		rc = mr_qp_create(w->node[i].ep, &qc, &qp[i]);
		if (rc)
			return rc;
	}
	for (i = 0; i < 2; i++) {
		struct mr_qp_attr a = {
			.state = MR_QPS_INIT,
			.access =
				MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
				MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_ATOMIC,
		};

		rc = mr_qp_modify(qp[i], &a, MR_QP_STATE | MR_QP_ACCESS_FLAGS);
		if (rc)
			return rc;
		a.state = MR_QPS_RTR;
		a.dest_qpn = qpn[1 - i];
		a.rq_psn = o->psn[1 - i];
		a.path_mtu_bytes = mr_ep_config(w->node[i].ep)->mtu;
		a.dest = (uint32_t)(1 - i);
		a.max_dest_rd_atomic = 16;
		a.min_rnr_timer = o->min_rnr_timer;
		rc = mr_qp_modify(qp[i], &a,
				  MR_QP_STATE | MR_QP_DEST_QPN | MR_QP_RQ_PSN |
					  MR_QP_PATH_MTU | MR_QP_DEST |
					  MR_QP_MAX_DEST_RD_ATOMIC |
					  MR_QP_MIN_RNR_TIMER);
		if (rc)
			return rc;
		a.state = MR_QPS_RTS;
		a.sq_psn = o->psn[i];
		a.timeout = o->timeout;
		a.retry_cnt = o->retry_cnt;
		a.rnr_retry = o->rnr_retry;
		a.max_rd_atomic = 16;
		rc = mr_qp_modify(qp[i], &a,
				  MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
					  MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
					  MR_QP_MAX_QP_RD_ATOMIC);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- plan: sizes ---- */

static uint32_t pick_len(struct scen *sc)
{
	const struct mrsim_scen_cfg *c = sc->cfg;
	uint32_t mtu = sc->mtu;

	if (c->big_ppm && mrsim_rand_ppm(&sc->r, c->big_ppm))
		return (uint32_t)mrsim_rand_range(&sc->r, 4 * mtu, c->big_max);
	switch (mrsim_rand_below(&sc->r, 10)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return mtu - 1;
	case 3:
		return mtu;
	case 4:
		return mtu + 1;
	case 5:
		return (uint32_t)mrsim_rand_range(&sc->r, 2, 64);
	case 6:
		return 2 * mtu + (uint32_t)mrsim_rand_below(&sc->r, 3) - 1;
	default:
		return (uint32_t)mrsim_rand_range(&sc->r, 1, 4 * mtu);
	}
}

static enum mr_wr_opcode pick_op(struct scen *sc)
{
	static const enum mr_wr_opcode ops[] = {
		MR_WR_SEND,
		MR_WR_SEND,
		MR_WR_SEND_WITH_IMM,
		MR_WR_RDMA_WRITE,
		MR_WR_RDMA_WRITE,
		MR_WR_RDMA_WRITE_WITH_IMM,
		MR_WR_RDMA_READ,
		MR_WR_RDMA_READ,
		MR_WR_ATOMIC_CMP_AND_SWP,
		MR_WR_ATOMIC_FETCH_AND_ADD,
	};

	return ops[mrsim_rand_below(&sc->r, sizeof(ops) / sizeof(ops[0]))];
}

static int is_consumer(enum mr_wr_opcode op)
{
	return op == MR_WR_SEND || op == MR_WR_SEND_WITH_IMM ||
	       op == MR_WR_RDMA_WRITE_WITH_IMM;
}

static int is_atomic(enum mr_wr_opcode op)
{
	return op == MR_WR_ATOMIC_CMP_AND_SWP ||
	       op == MR_WR_ATOMIC_FETCH_AND_ADD;
}

/* Pass 1 for requester x: opcodes and lengths; what it needs of its own
 * regions and of the peer's. */
static int plan_sizes(struct scen *sc, int x, unsigned nwr)
{
	struct side *s = &sc->s[x], *p = &sc->s[x ^ 1];
	unsigned i;

	s->nwr = nwr;
	s->wrs = calloc(nwr ? nwr : 1, sizeof(*s->wrs));
	if (!s->wrs)
		return -1;
	for (i = 0; i < nwr; i++) {
		struct pwr *pw = &s->wrs[i];
		enum mr_wr_opcode op = pick_op(sc);

		pw->wr.opcode = op;
		pw->len = is_atomic(op) ? 8 : pick_len(sc);
		if (op == MR_WR_SEND || op == MR_WR_SEND_WITH_IMM ||
		    op == MR_WR_RDMA_WRITE || op == MR_WR_RDMA_WRITE_WITH_IMM)
			if (pw->len > s->need[R_SRC])
				s->need[R_SRC] = pw->len;
		if (is_consumer(op)) {
			p->nrcv++;
			/* The WQE: the message plus slack that must stay
			 * untouched (WRITE_WITH_IMM places nothing there). */
			p->need[R_RCV] +=
				(op == MR_WR_RDMA_WRITE_WITH_IMM ? 0
								 : pw->len) +
				72;
		}
		if (op == MR_WR_RDMA_WRITE || op == MR_WR_RDMA_WRITE_WITH_IMM ||
		    op == MR_WR_RDMA_READ)
			p->need[R_TGT] += pw->len;
		if (op == MR_WR_RDMA_READ)
			s->need[R_LDST] += pw->len;
		if (is_atomic(op))
			s->need[R_LDST] += 16;
	}
	return 0;
}

/* Split len bytes into 1..max pieces (0 pieces for len 0, sometimes). */
static unsigned split(struct scen *sc, uint32_t len, unsigned max,
		      uint32_t *piece)
{
	unsigned n, i;
	uint32_t left = len;

	if (!len)
		return (unsigned)mrsim_rand_below(&sc->r, 2);
	n = (unsigned)mrsim_rand_range(&sc->r, 1, max);
	if (n > len)
		n = len;
	for (i = 0; i + 1 < n; i++) {
		/* Each piece at least 1 byte, leaving 1 for the rest. */
		uint32_t k = (uint32_t)mrsim_rand_range(&sc->r, 1,
							left - (n - 1 - i));

		piece[i] = k;
		left -= k;
	}
	piece[n - 1] = left;
	return n;
}

static void fill_random(struct mrsim_rand *r, uint8_t *p, uint64_t n)
{
	uint64_t i, v = 0;

	for (i = 0; i < n; i++) {
		if (!(i & 7))
			v = mrsim_rand_next(r);
		p[i] = (uint8_t)(v >> (8 * (i & 7)));
	}
}

static int setup_regions(struct scen *sc, int x)
{
	static const unsigned access[R_N] = {
		[R_SRC] = 0,
		[R_RCV] = MR_ACCESS_LOCAL_WRITE,
		[R_TGT] = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
			  MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_ATOMIC,
		[R_LDST] = MR_ACCESS_LOCAL_WRITE,
		[R_INL] = 0,
	};
	struct side *s = &sc->s[x];
	int k;

	s->need[R_TGT] += RO_ZONE + 8 * ATOMIC_WORDS;
	s->need[R_INL] = MAX_INLINE;
	for (k = 0; k < R_N; k++) {
		uint64_t len = s->need[k] + 64;

		s->reg[k] = mrsim_mem_reg(&s->nd->mem, 0, len, 1, access[k]);
		s->exp[k] = malloc(len);
		if (!s->reg[k] || !s->exp[k])
			return -1;
		fill_random(&sc->r, s->reg[k]->buf, len);
		memcpy(s->exp[k], s->reg[k]->buf, len);
	}
	/* Atomic words live at the end of the target region, 8-aligned. */
	return 0;
}

static uint64_t atomic_off(const struct side *p)
{
	uint64_t end =
		p->reg[R_TGT]->iova + p->reg[R_TGT]->len - 8 * ATOMIC_WORDS - 8;

	return (end & ~7ull) - p->reg[R_TGT]->iova;
}

/* Scatter msg over SGEs of region k of side s, also into the model. */
static unsigned make_sges(struct scen *sc, struct side *s, int k, uint64_t *cur,
			  uint32_t cap, struct mr_sge *sge, const uint8_t *msg,
			  uint32_t len)
{
	uint32_t piece[MAX_SGE];
	unsigned n = split(sc, cap, MAX_SGE, piece), i;
	uint32_t done = 0;

	for (i = 0; i < n; i++) {
		sge[i].addr = s->reg[k]->iova + *cur;
		sge[i].length = cap ? piece[i] : 0;
		sge[i].lkey = s->reg[k]->lkey;
		if (msg && done < len) {
			uint32_t c = len - done < sge[i].length ? len - done
								: sge[i].length;

			memcpy(s->exp[k] + *cur, msg + done, c);
			done += c;
		}
		*cur += sge[i].length;
	}
	return n;
}

/* Pass 2 for requester x: addresses, SGEs and the model. */
static int plan_wrs(struct scen *sc, int x, uint64_t *msgbuf)
{
	struct side *s = &sc->s[x], *p = &sc->s[x ^ 1];
	uint8_t *msg = (uint8_t *)msgbuf;
	uint64_t t = 0, aoff = atomic_off(p);
	unsigned i;

	for (i = 0; i < s->nwr; i++) {
		struct pwr *pw = &s->wrs[i];
		struct mr_send_wr *wr = &pw->wr;
		enum mr_wr_opcode op = wr->opcode;
		uint32_t len = pw->len, piece[MAX_SGE];
		unsigned k;

		wr->wr_id = ((uint64_t)x << 56) | ((uint64_t)i << 8) | 0x5a;
		wr->sg_list = pw->sge;
		if (mrsim_rand_below(&sc->r, 2) || i + 1 == s->nwr)
			wr->flags |= MR_SEND_SIGNALED;
		if (mrsim_rand_below(&sc->r, 8) == 0)
			wr->flags |= MR_SEND_FENCE;
		if (mrsim_rand_below(&sc->r, 8) == 0)
			wr->flags |= MR_SEND_SOLICITED;
		if (op == MR_WR_SEND_WITH_IMM ||
		    op == MR_WR_RDMA_WRITE_WITH_IMM)
			wr->imm = (uint32_t)mrsim_rand_next(&sc->r);
		if (mrsim_rand_below(&sc->r, 2))
			t += mrsim_rand_below(&sc->r, 20000);
		pw->t_post = t;

		if (op == MR_WR_RDMA_READ) {
			uint64_t avail = RO_ZONE + p->cur_tgt, off;

			/* Read bytes that no later WR writes: already
			 * written or never-written ones, or fresh space. */
			if (len <= avail && mrsim_rand_below(&sc->r, 4)) {
				off = mrsim_rand_below(&sc->r, avail - len + 1);
			} else {
				off = RO_ZONE + p->cur_tgt;
				p->cur_tgt += len;
			}
			wr->remote_addr = p->reg[R_TGT]->iova + off;
			wr->rkey = p->reg[R_TGT]->rkey;
			wr->num_sge =
				make_sges(sc, s, R_LDST, &s->cur_ldst, len,
					  pw->sge, p->exp[R_TGT] + off, len);
		} else if (is_atomic(op)) {
			uint64_t woff =
				aoff +
				8 * mrsim_rand_below(&sc->r, ATOMIC_WORDS);
			uint64_t orig, nv;

			memcpy(&orig, p->exp[R_TGT] + woff, 8);
			if (op == MR_WR_ATOMIC_CMP_AND_SWP) {
				wr->compare_add =
					mrsim_rand_below(&sc->r, 2)
						? orig
						: mrsim_rand_next(&sc->r);
				wr->swap = mrsim_rand_next(&sc->r);
				nv = orig == wr->compare_add ? wr->swap : orig;
			} else {
				wr->compare_add =
					mrsim_rand_below(&sc->r, 2)
						? mrsim_rand_below(&sc->r, 100)
						: mrsim_rand_next(&sc->r);
				nv = orig + wr->compare_add;
			}
			memcpy(p->exp[R_TGT] + woff, &nv, 8);
			wr->remote_addr = p->reg[R_TGT]->iova + woff;
			wr->rkey = p->reg[R_TGT]->rkey;
			s->cur_ldst = (s->cur_ldst + 7) & ~7ull;
			pw->sge[0].addr = s->reg[R_LDST]->iova + s->cur_ldst;
			pw->sge[0].length = 8;
			pw->sge[0].lkey = s->reg[R_LDST]->lkey;
			memcpy(s->exp[R_LDST] + s->cur_ldst, &orig, 8);
			s->cur_ldst += 8;
			wr->num_sge = 1;
		} else {
			/* Gather from the read-only source region. */
			uint32_t done = 0;
			uint64_t srclen = s->reg[R_SRC]->len;

			wr->num_sge = split(sc, len, MAX_SGE, piece);
			for (k = 0; k < wr->num_sge; k++) {
				uint32_t l = len ? piece[k] : 0;
				uint64_t off = mrsim_rand_below(&sc->r,
								srclen - l + 1);

				pw->sge[k].addr = s->reg[R_SRC]->iova + off;
				pw->sge[k].length = l;
				pw->sge[k].lkey = s->reg[R_SRC]->lkey;
				memcpy(msg + done, s->exp[R_SRC] + off, l);
				done += l;
			}
			if (len <= MAX_INLINE &&
			    mrsim_rand_below(&sc->r, 3) == 0)
				pw->inl = 1;
		}
		if (op == MR_WR_RDMA_WRITE || op == MR_WR_RDMA_WRITE_WITH_IMM) {
			uint64_t off = RO_ZONE + p->cur_tgt;

			p->cur_tgt += len;
			wr->remote_addr = p->reg[R_TGT]->iova + off;
			wr->rkey = p->reg[R_TGT]->rkey;
			memcpy(p->exp[R_TGT] + off, msg, len);
			pw->tgt_off = off;
		}
		pw->tgt_mark = p->cur_tgt;
		pw->ldst_mark = s->cur_ldst;
		if (is_consumer(op)) {
			struct prcv *rv = &p->rcvs[p->nrcv++];
			int sendop = op != MR_WR_RDMA_WRITE_WITH_IMM;
			uint32_t cap = (sendop ? len : 0) +
				       (uint32_t)mrsim_rand_below(&sc->r, 65);
			struct mr_cqe *e = &p->exp_rq[p->nexp_rq++];

			rv->wr.wr_id = ((uint64_t)(x ^ 1) << 56) |
				       ((uint64_t)(p->nrcv - 1) << 8) | 0xa5;
			rv->wr.sg_list = rv->sge;
			rv->wr.num_sge =
				make_sges(sc, p, R_RCV, &p->cur_rcv, cap,
					  rv->sge, sendop ? msg : NULL, len);
			rv->rcv_mark = p->cur_rcv;
			rv->tgt_mark = p->cur_tgt;
			memset(e, 0, sizeof(*e));
			e->wr_id = rv->wr.wr_id;
			e->qp_user = p->nd;
			e->status = MR_WC_SUCCESS;
			e->opcode =
				sendop ? MR_WC_RECV : MR_WC_RECV_RDMA_WITH_IMM;
			e->byte_len = len;
			if (op != MR_WR_SEND) {
				e->imm = wr->imm;
				e->wc_flags = MR_WC_F_WITH_IMM;
			}
			e->qp_num = p->qpn;
			e->is_recv = 1;
		}
		if ((wr->flags & MR_SEND_SIGNALED) || s->sig_all) {
			static const enum mr_wc_opcode wcop[] = {
				[MR_WR_RDMA_WRITE] = MR_WC_RDMA_WRITE,
				[MR_WR_RDMA_WRITE_WITH_IMM] = MR_WC_RDMA_WRITE,
				[MR_WR_SEND] = MR_WC_SEND,
				[MR_WR_SEND_WITH_IMM] = MR_WC_SEND,
				[MR_WR_RDMA_READ] = MR_WC_RDMA_READ,
				[MR_WR_ATOMIC_CMP_AND_SWP] = MR_WC_COMP_SWAP,
				[MR_WR_ATOMIC_FETCH_AND_ADD] = MR_WC_FETCH_ADD,
			};
			struct mr_cqe *e = &s->exp_sq[s->nexp_sq++];

			memset(e, 0, sizeof(*e));
			e->wr_id = wr->wr_id;
			e->qp_user = s->nd;
			e->status = MR_WC_SUCCESS;
			e->opcode = wcop[op];
			e->byte_len = len;
			e->qp_num = s->qpn;
		}
	}
	return 0;
}

/* Receives of side y: at time 0, or spread late (RNR and retry). */
static void plan_recv_times(struct scen *sc, int y)
{
	struct side *s = &sc->s[y];
	int late = sc->cfg->late_recv && mrsim_rand_below(&sc->r, 3) == 0;
	unsigned i;
	uint64_t t = 0;

	for (i = 0; i < s->nrcv; i++) {
		if (late)
			t += mrsim_rand_below(&sc->r, 30000);
		s->rcvs[i].t_post = t;
	}
}

static uint64_t on_instant(void *user, struct mrsim_world *w)
{
	struct scen *sc = user;
	uint64_t wake = UINT64_MAX;
	int x;

	for (x = 0; x < 2 * (int)sc->nq; x++) {
		struct side *s = &sc->s[x];

		while (s->rposted < s->nrcv &&
		       s->rcvs[s->rposted].t_post <= w->now) {
			const struct mr_recv_wr *rw = &s->rcvs[s->rposted].wr;
			int rc = s->srq ? mr_srq_post_recv(s->srq, rw)
					: mr_qp_post_recv(s->qp, rw);

			if (rc) {
				mrsim_scen_fail(sc, "node %d post_recv #%u: %s",
						x, s->rposted,
						mr_strerror(-rc));
				return UINT64_MAX;
			}
			s->rposted++;
		}
		if (s->rposted < s->nrcv && s->rcvs[s->rposted].t_post < wake)
			wake = s->rcvs[s->rposted].t_post;
		while (s->posted < s->nwr &&
		       s->wrs[s->posted].t_post <= w->now) {
			struct pwr *pw = &s->wrs[s->posted];
			struct mr_send_wr wr = pw->wr;
			struct mr_sge isge;
			uint8_t *inl = s->reg[R_INL]->buf;
			unsigned k;
			uint32_t n = 0;
			int rc;

			if (pw->inl) {
				/* Stage the bytes in a scratch buffer and
				 * scribble it after posting: inline data must
				 * be copied at post time. */
				for (k = 0; k < wr.num_sge; k++) {
					memcpy(inl + n,
					       mrsim_mem_host(
						       &s->nd->mem,
						       pw->sge[k].addr,
						       pw->sge[k].length),
					       pw->sge[k].length);
					n += pw->sge[k].length;
				}
				isge.addr = s->reg[R_INL]->iova;
				isge.length = n;
				isge.lkey = s->reg[R_INL]->lkey;
				wr.sg_list = &isge;
				wr.num_sge = 1;
				wr.flags |= MR_SEND_INLINE;
			}
			rc = mr_qp_post_send(s->qp, &wr, w->now);
			if (rc == -MR_EAGAIN) {
				/* Send queue full: retried at the next instant,
				 * which a completion's packet or timer brings;
				 * if none comes, the world reports the stall.
				 */
				break;
			}
			if (rc) {
				mrsim_scen_fail(sc, "node %d post_send #%u: %s",
						x, s->posted, mr_strerror(-rc));
				return UINT64_MAX;
			}
			if (pw->inl) {
				fill_random(&sc->r, inl, n);
				memcpy(s->exp[R_INL], inl, n);
			}
			s->posted++;
		}
		if (s->posted < s->nwr && s->wrs[s->posted].t_post > w->now &&
		    s->wrs[s->posted].t_post < wake)
			wake = s->wrs[s->posted].t_post;
	}
	return wake;
}

static int all_done(void *user)
{
	struct scen *sc = user;
	int x;

	size_t want[2] = { 0, 0 };

	if (sc->failed)
		return 1;
	for (x = 0; x < 2 * (int)sc->nq; x++) {
		struct side *s = &sc->s[x];

		if (s->posted < s->nwr || s->rposted < s->nrcv)
			return 0;
		want[x & 1] += s->nexp_sq + s->nexp_rq;
	}
	return sc->w.node[0].ncqe >= want[0] && sc->w.node[1].ncqe >= want[1];
}

static void scen_free(struct scen *sc)
{
	int x, k;

	for (x = 0; x < 2 * MRSIM_MAX_QPS; x++) {
		struct side *s = &sc->s[x];

		if (s->qp)
			mr_qp_destroy(s->qp);
		s->qp = NULL;
		if (s->srq)
			mr_srq_destroy(s->srq);
		s->srq = NULL;
		for (k = 0; k < R_N; k++)
			free(s->exp[k]);
		free(s->wrs);
		free(s->rcvs);
		free(s->exp_sq);
		free(s->exp_rq);
	}
	mrsim_world_fini(&sc->w);
}

/* Create, connect and (maybe) give an SRQ to QP pair q. */
static int setup_pair(struct scen *sc, unsigned q, struct mrsim_rc_opts *o)
{
	struct side *s0 = &sc->s[2 * q], *s1 = &sc->s[2 * q + 1];
	struct mr_qp *qp[2] = { NULL, NULL };
	uint32_t qpn[2] = { s0->qpn, s1->qpn };
	int x, rc;

	for (x = 0; x < 2; x++) {
		struct side *s = &sc->s[2 * q + (unsigned)x];

		o->sq_sig_all[x] = s->sig_all;
		o->srq[x] = NULL;
		if (sc->cfg->srq && mrsim_rand_below(&sc->r, 2)) {
			struct mr_srq_config sq = { .pd = 1,
						    .max_wr = s->nrcv + 1,
						    .max_sge = MAX_SGE,
						    .user = s };

			rc = mr_srq_create(s->nd->ep, &sq, &s->srq);
			if (rc) {
				mrsim_scen_fail(sc, "srq create: %s",
						mr_strerror(-rc));
				return -1;
			}
			o->srq[x] = s->srq;
		}
	}
	rc = mrsim_rc_connect(&sc->w, o, qpn, qp);
	s0->qp = qp[0];
	s1->qp = qp[1];
	if (rc) {
		mrsim_scen_fail(sc, "connect: %s", mr_strerror(-rc));
		return -1;
	}
	return 0;
}

static int scen_setup(struct scen *sc, uint64_t **msgbuf)
{
	const struct mrsim_scen_cfg *c = sc->cfg;
	static const uint32_t mtus[] = { 256, 1024, 4096 };
	struct mrsim_link_cfg l = { 0 };
	struct mrsim_rc_opts o = { 0 };
	struct mr_ep_config ec = { 0 };
	uint64_t maxlen = 0;
	unsigned i, q, n = 1;
	int x, rc;

	/* Drawn only when asked for, so single-pair seeds stay stable. */
	if (c->max_qps > 1)
		n = (unsigned)mrsim_rand_range(&sc->r, 1,
					       c->max_qps < MRSIM_MAX_QPS
						       ? c->max_qps
						       : MRSIM_MAX_QPS);
	sc->nq = n;
	sc->mtu = c->mtu ? c->mtu : mtus[mrsim_rand_below(&sc->r, 3)];
	sc->paths = c->num_paths ? c->num_paths
				 : (uint16_t)mrsim_rand_range(&sc->r, 1, 8);
	if (c->mode == MR_MODE_GBN)
		sc->paths = 1;
	l.delay_ns = c->delay_ns;
	l.jitter_ns = c->jitter_ns;
	l.loss_ppm = c->loss_ppm;
	l.dup_ppm = c->dup_ppm;
	l.reorder_ppm = c->reorder_ppm;
	l.reorder_ns = 4 * c->delay_ns + 1000;
	l.corrupt_ppm = c->corrupt_ppm;
	l.ce_ppm = c->ce_ppm;
	for (i = 0; i < MRSIM_MAX_PATHS; i++)
		l.path_delay_ns[i] =
			mrsim_rand_below(&sc->r, 3 * c->delay_ns + 1);
	ec.mtu = sc->mtu;
	ec.num_paths = sc->paths;
	ec.max_qp = 4;
	rc = mrsim_world_init(&sc->w, &ec, &l, &l, sc->seed);
	if (rc) {
		mrsim_scen_fail(sc, "world init: %s", mr_strerror(-rc));
		return -1;
	}
	for (x = 0; x < 2 * (int)n; x++)
		sc->s[x].nd = &sc->w.node[x & 1];

	for (q = 0; q < n; q++) {
		unsigned nwr0 =
			(unsigned)mrsim_rand_range(&sc->r, 1, c->max_wr);
		unsigned nwr1 = c->bidir ? (unsigned)mrsim_rand_range(&sc->r, 0,
								      c->max_wr)
					 : 0;

		if (plan_sizes(sc, (int)(2 * q), nwr0) ||
		    plan_sizes(sc, (int)(2 * q + 1), nwr1))
			return -1;
	}
	for (x = 0; x < 2 * (int)n; x++) {
		struct side *s = &sc->s[x];

		s->rcvs = calloc(s->nrcv + 1, sizeof(*s->rcvs));
		s->exp_rq = calloc(s->nrcv + 1, sizeof(*s->exp_rq));
		s->exp_sq = calloc(s->nwr + 1, sizeof(*s->exp_sq));
		if (!s->rcvs || !s->exp_rq || !s->exp_sq ||
		    setup_regions(sc, x))
			return -1;
		if (s->need[R_SRC] > maxlen)
			maxlen = s->need[R_SRC];
		s->sig_all = mrsim_rand_below(&sc->r, 4) == 0;
	}
	*msgbuf = malloc(maxlen + 8);
	if (!*msgbuf)
		return -1;

	for (q = 0; q < n; q++) {
		struct side *s0 = &sc->s[2 * q], *s1 = &sc->s[2 * q + 1];
		unsigned k;

		s0->qpn = 0x100 + (uint32_t)mrsim_rand_below(&sc->r, 0xfffe00);
		s1->qpn = s0->qpn ^
			  (1u + (uint32_t)mrsim_rand_below(&sc->r, 0xff));
		/* QPNs are unique per endpoint (and kept apart across
		 * endpoints so a misrouted packet shows). */
		for (k = 0; k < 2 * q; k++) {
			if (sc->s[k].qpn == s0->qpn ||
			    sc->s[k].qpn == s1->qpn) {
				s0->qpn = (s0->qpn + 0x10001) & 0xffffff;
				s1->qpn = (s1->qpn + 0x10001) & 0xffffff;
				k = (unsigned)-1;
			}
		}
		for (x = 0; x < 2; x++)
			sc->s[2 * q + (unsigned)x].psn =
				mrsim_rand_below(&sc->r, 2)
					? (uint32_t)mrsim_rand_next(&sc->r)
					: 0xffffffffu -
						  (uint32_t)mrsim_rand_below(
							  &sc->r, 64);
	}
	o.mode = c->mode;
	o.max_send_wr = (uint32_t)mrsim_rand_range(&sc->r, 4, 64);
	o.max_recv_wr = 1;
	for (x = 0; x < 2 * (int)n; x++)
		if (sc->s[x ^ 1].nwr + 1 > o.max_recv_wr)
			o.max_recv_wr = sc->s[x ^ 1].nwr + 1;
	o.max_inline = MAX_INLINE;
	/* 16.8 ms local ACK timeout x 8 tries. At 10% loss and more, both
	 * ways, eight RTO rounds without progress happen for real (gbn-30%
	 * soak: the same packet lost five times in a row), so there the
	 * retry limit is infinite (timeout 0, as verbs allows) and any
	 * RETRY_EXC_ERR is a bug; test_link_cut covers the limit. */
	o.timeout = c->loss_ppm >= 100000 ? 0 : 12;
	o.retry_cnt = 7;
	o.rnr_retry = 7;
	o.min_rnr_timer = 1;
	sc->max_send_wr = o.max_send_wr;
	for (q = 0; q < n; q++) {
		o.psn[0] = sc->s[2 * q].psn;
		o.psn[1] = sc->s[2 * q + 1].psn;
		if (setup_pair(sc, q, &o))
			return -1;
	}
	for (x = 0; x < 2 * (int)n; x++)
		sc->s[x].nrcv = 0; /* recounted by plan_wrs */
	for (x = 0; x < 2 * (int)n; x++)
		if (plan_wrs(sc, x, *msgbuf))
			return -1;
	for (x = 0; x < 2 * (int)n; x++)
		plan_recv_times(sc, x);
	return 0;
}

static void collect(struct scen *sc, struct mrsim_scen_result *res)
{
	int x;

	res->sim_ns = sc->w.now;
	res->retx = mrsim_world_retx(&sc->w);
	for (x = 0; x < 2; x++) {
		const struct mrsim_dir_stats *d = &sc->w.dir[x].st;

		res->pkts += sc->w.node[x].tx_pkts;
		res->lost += d->lost_rand + d->lost_idx + d->lost_filter +
			     d->lost_cut;
	}
	res->qp_pairs = sc->nq;
	for (x = 0; x < 2 * (int)sc->nq; x++) {
		unsigned i;

		res->srqs += sc->s[x].srq != NULL;
		res->wrs += sc->s[x].nwr;
		for (i = 0; i < sc->s[x].nwr; i++)
			res->bytes += sc->s[x].wrs[i].len;
	}
}

static void scen_execute(struct scen *sc)
{
	struct mrsim_world *w = &sc->w;
	int x, rc;

	w->on_instant = on_instant;
	w->on_instant_user = sc;
	w->on_cqe = mrsim_scen_on_cqe;
	w->on_place = mrsim_scen_on_place;
	w->hook_user = sc;
	rc = mrsim_world_run(w, all_done, sc, sc->cfg->bound_ns);
	if (sc->failed)
		return;
	if (rc == -2) {
		mrsim_scen_fail(sc, "%s", w->why);
		return;
	}
	if (rc) {
		const struct mr_cqe *e = mrsim_scen_first_error(w);
		char err[96] = "";
		size_t want[2] = { 0, 0 };
		unsigned posted[2] = { 0, 0 }, nwr[2] = { 0, 0 };

		for (x = 0; x < 2 * (int)sc->nq; x++) {
			want[x & 1] += sc->s[x].nexp_sq + sc->s[x].nexp_rq;
			posted[x & 1] += sc->s[x].posted;
			nwr[x & 1] += sc->s[x].nwr;
		}

		if (e)
			snprintf(err, sizeof(err),
				 "; first error CQE: wr_id %#llx status %d",
				 (unsigned long long)e->wr_id, e->status);
		mrsim_scen_fail(
			sc,
			"%s at t=%llu ns%s: node0 %zu/%zu CQEs posted %u/%u, "
			"node1 %zu/%zu CQEs posted %u/%u, in flight %zu/%zu",
			rc == 1 ? "stalled (nothing left to happen)"
				: "did not finish within the time bound",
			(unsigned long long)w->now, err, w->node[0].ncqe,
			want[0], posted[0], nwr[0], w->node[1].ncqe, want[1],
			posted[1], nwr[1], mrsim_dir_inflight(&w->dir[0]),
			mrsim_dir_inflight(&w->dir[1]));
		return;
	}
	/* Let the last ACKs settle: then nothing may be left to do, and no
	 * completion may come late. The bound leaves room for a response or
	 * probe whose ACKs keep getting lost while its RTO backs off to the
	 * 1 s ceiling (30% loss both ways). */
	w->on_instant = NULL;
	rc = mrsim_world_run(w, NULL, NULL, w->now + MRSIM_SETTLE_NS);
	if (rc == -2) {
		mrsim_scen_fail(sc, "%s", w->why);
		return;
	}
	if (rc != 1) {
		mrsim_scen_fail(
			sc,
			"not quiescent %llu ms after the last completion "
			"(deadlines %llu / %llu)",
			(unsigned long long)(MRSIM_SETTLE_NS / 1000000),
			(unsigned long long)mr_ep_next_deadline(w->node[0].ep),
			(unsigned long long)mr_ep_next_deadline(w->node[1].ep));
		return;
	}
	for (x = 0; x < 2 * (int)sc->nq; x++) {
		struct mr_qp_attr a;

		mrsim_scen_check_cqes(sc, x, 0);
		mrsim_scen_check_cqes(sc, x, 1);
		mrsim_scen_check_memory(sc, x);
		if (!sc->failed && w->node[x & 1].qp_errors)
			mrsim_scen_fail(sc, "node %d: async QP error", x & 1);
		if (!sc->failed &&
		    (mr_qp_query(sc->s[x].qp, &a) || a.state != MR_QPS_RTS))
			mrsim_scen_fail(sc, "node %d: QP not in RTS (%d)", x,
					a.state);
	}
	if (!sc->failed && w->allocs_after_setup)
		mrsim_scen_fail(sc, "core allocated %llu times after setup",
				(unsigned long long)w->allocs_after_setup);
}

int mrsim_scen_run(const struct mrsim_scen_cfg *cfg, uint64_t seed,
		   struct mrsim_scen_result *res)
{
	struct scen *sc = calloc(1, sizeof(*sc));
	uint64_t *msgbuf = NULL;
	int ok;

	if (cfg->type == MR_QPT_UD) {
		free(sc);
		return mrsim_ud_run(cfg, seed, res);
	}
	memset(res, 0, sizeof(*res));
	if (!sc) {
		snprintf(res->why, sizeof(res->why), "out of memory");
		return -1;
	}
	sc->cfg = cfg;
	sc->seed = seed;
	mrsim_rand_seed(&sc->r, seed, 1);
	if (scen_setup(sc, &msgbuf) == 0)
		scen_execute(sc);
	else
		mrsim_scen_fail(sc, "setup failed (out of memory)");
	collect(sc, res);
	ok = !sc->failed;
	if (!ok)
		mrsim_scen_dump(sc);
	res->ok = ok;
	if (!ok)
		snprintf(res->why, sizeof(res->why),
			 "%s seed %#llx (mtu %u, %u paths, %u QP pairs): %s",
			 cfg->name ? cfg->name : "scenario",
			 (unsigned long long)seed, sc->mtu, sc->paths, sc->nq,
			 sc->why);
	free(msgbuf);
	scen_free(sc);
	free(sc);
	return ok ? 0 : -1;
}
