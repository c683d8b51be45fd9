// SPDX-License-Identifier: BSD-2-Clause
/*
 * QP lifetime and the verbs state machine (docs/spec/transport.md
 * MR-QP-*): create sizes every pool, modify checks transitions and
 * required attributes exactly as verbs does, ERR flushes.
 */
#include <string.h>

#include "mr_qp.h"

static void *xcalloc(struct mr_ep *ep, size_t n, size_t size)
{
	return ep->mem.calloc(ep->mem.user, n ? n : 1, size);
}

static void xfree(struct mr_ep *ep, void *p)
{
	if (p)
		ep->mem.free(ep->mem.user, p);
}

static void qp_free(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;

	mr_sq_free(&qp->sq, &ep->mem);
	xfree(ep, qp->req.txp);
	xfree(ep, qp->ptx);
	mr_resp_free(qp);
	mr_rq_fini(&qp->rq, &ep->mem);
	mr_sqlocal_free(qp);
	mr_qpout_free(&qp->out, &ep->mem);
	ep->mem.free(ep->mem.user, qp);
}

static int qp_alloc(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;
	const struct mr_qp_config *c = &qp->cfg;
	int rc;

	rc = mr_sq_alloc(&qp->sq, &ep->mem, c->max_send_wr, c->max_send_sge,
			 c->max_inline);
	if (rc)
		return rc;
	rc = mr_sqlocal_alloc(qp);
	if (rc)
		return rc;
	/* Every completion one entry point can produce (mr_qpout.h): each
	 * send WR, each own receive WQE or SRQ claim (one per message
	 * record), the SQ-drained and the QP-error event. */
	rc = mr_qpout_alloc(&qp->out, &ep->mem,
			    c->max_send_wr + c->max_recv_wr +
				    (c->srq ? ep->cfg.msg_window : 0) + 2);
	if (rc)
		return rc;
	rc = mr_rq_init(&qp->rq, &ep->mem, c->srq, c->max_recv_wr,
			c->max_recv_sge);
	if (rc)
		return rc;
	/* MR-UC-8: a UC QP on an SRQ holds one WQE at a time. */
	if (c->type == MR_QPT_UC && c->srq)
		return mr_rq_init_claims(&qp->rq, &ep->mem, 1);
	if (c->type == MR_QPT_UD || c->type == MR_QPT_UC)
		return 0; /* MR-UC-1: no transmit or message records */

	qp->npaths = c->mode == MR_MODE_GBN ? 1 : ep->cfg.num_paths;
	qp->req.txp = xcalloc(ep, ep->cfg.ssn_window, sizeof(*qp->req.txp));
	qp->ptx = xcalloc(ep, qp->npaths, sizeof(*qp->ptx));
	if (!qp->req.txp || !qp->ptx)
		return -MR_ENOMEM;
	rc = mr_resp_alloc(qp);
	if (rc)
		return rc;
	if (c->srq)
		return mr_rq_init_claims(&qp->rq, &ep->mem, ep->cfg.msg_window);
	return 0;
}

static int ep_check_qpn(const struct mr_ep *ep, uint32_t qpn)
{
	if (mr_ep_qpn_find(ep, qpn))
		return -MR_EINVAL;
	return ep->nqp < ep->cfg.max_qp ? 0 : -MR_ENOMEM;
}

/* Back to RESET: queues empty, sequence spaces forgotten, no completions
 * (verbs: modify to RESET discards). */
static void qp_reset(struct mr_qp *qp)
{
	qp->state = MR_QPS_RESET;
	qp->sq.head = qp->sq.next = qp->sq.tail = 0;
	qp->req.snd_rsn = 0;
	qp->req.rd_out = 0;
	qp->req.have_err = 0;
	mr_sqlocal_reset(qp);
	mr_rq_reset(&qp->rq);
	qp->ud_ssn = 0;
	mr_uc_rx_reset(qp);
	if (qp->cfg.type == MR_QPT_UD || qp->cfg.type == MR_QPT_UC)
		return;
	mr_resp_reset(qp); /* also frees the hold slots */
	mr_req_reset(qp, 0);
}

int mr_qp_create(struct mr_ep *ep, const struct mr_qp_config *cfg,
		 struct mr_qp **out)
{
	struct mr_qp *qp;
	int rc;

	if (!ep || !cfg || !out)
		return -MR_EINVAL;
	if (cfg->type != MR_QPT_RC && cfg->type != MR_QPT_UD &&
	    cfg->type != MR_QPT_UC)
		return -MR_EINVAL;
	if (cfg->type == MR_QPT_RC && cfg->mode != MR_MODE_METAROCE &&
	    cfg->mode != MR_MODE_GBN)
		return -MR_EINVAL;
	if (!cfg->qpn || (cfg->qpn & ~MR_QPN_MASK) || !cfg->max_send_wr ||
	    (!cfg->srq && !cfg->max_recv_wr) || cfg->max_send_sge > 1024 ||
	    cfg->max_recv_sge > 1024 || cfg->max_inline > 65536)
		return -MR_EINVAL;
	if (cfg->srq && (cfg->srq->ep != ep || cfg->srq->cfg.pd != cfg->pd))
		return -MR_EINVAL;
	rc = ep_check_qpn(ep, cfg->qpn);
	if (rc)
		return rc;
	qp = ep->mem.calloc(ep->mem.user, 1, sizeof(*qp));
	if (!qp)
		return -MR_ENOMEM;
	qp->ep = ep;
	mr_timerq_entry_init(&qp->tmr);
	qp->cfg = *cfg;
	qp->mtu = ep->cfg.mtu;
	if (cfg->type != MR_QPT_RC)
		qp->cfg.mode = MR_MODE_METAROCE;
	rc = qp_alloc(qp);
	if (rc) {
		qp_free(qp);
		return rc;
	}
	if (cfg->srq)
		cfg->srq->users++;
	qp->attr.path_mtu_bytes = ep->cfg.mtu;
	qp_reset(qp);
	ep->qps[ep->nqp++] = qp;
	mr_ep_qpn_insert(ep, qp);
	*out = qp;
	return 0;
}

int mr_qp_destroy(struct mr_qp *qp)
{
	struct mr_ep *ep;
	uint32_t i;

	if (!qp)
		return -MR_EINVAL;
	ep = qp->ep;
	mr_ep_qpn_remove(ep, qp);
	mr_ep_unkick(qp);
	mr_timerq_remove(&ep->timers, &qp->tmr);
	for (i = 0; i < ep->nqp; i++) {
		if (ep->qps[i] == qp) {
			ep->qps[i] = ep->qps[--ep->nqp];
			break;
		}
	}
	if (qp->cfg.srq) {
		mr_rq_set_blocked(&qp->rq, 0);
		qp->cfg.srq->users--;
	}
	mr_ep_stats_qp_gone(qp);
	mr_ratehint_conn_gone(&ep->rh, &qp->rsp.rh);
	qp_free(qp);
	return 0;
}

int mr_qp_seq_base(struct mr_qp *qp, uint32_t base)
{
	if (qp->sq.tail != qp->sq.head || qp->sq.tail != qp->sq.next ||
	    !mr_rq_idle(&qp->rq) || !mr_resp_idle(qp) ||
	    qp->req.snd_nxt != qp->req.snd_base)
		return -MR_ESTATE;
	qp->sq.head = qp->sq.next = qp->sq.tail = base;
	qp->req.snd_rsn = base;
	qp->req.peer_cum_msn = base;
	qp->lq.head = qp->lq.run = qp->lq.tail = base;
	mr_rq_set_base(&qp->rq, base);
	mr_resp_set_base(qp, base);
	return 0;
}

uint32_t mr_qp_sq_room(const struct mr_qp *qp)
{
	/* Completions not yet delivered hold their room (mr_qpout.h). */
	return qp->cfg.max_send_wr - (qp->sq.tail - qp->sq.head) -
	       mr_sqlocal_count(qp) - qp->out.sends;
}

uint32_t mr_qp_num(const struct mr_qp *qp)
{
	return qp->cfg.qpn;
}

/* A completion a part returned, stamped with the QP and handed to the
 * embedder. */
static void deliver(struct mr_qp *qp, const struct mr_qpout_ev *e)
{
	struct mr_ep *ep = qp->ep;
	struct mr_cqe c;

	if (e->kind == MR_QPOUT_SQ_DRAINED) {
		ep->cb.sq_drained(ep->cb.user, qp->cfg.user);
		return;
	}
	if (e->kind == MR_QPOUT_QP_ERROR) {
		ep->cb.qp_error(ep->cb.user, qp->cfg.user);
		return;
	}
	c = e->cqe;
	c.qp_user = qp->cfg.user;
	c.qp_num = qp->cfg.qpn;
	if (c.status == MR_WC_SUCCESS)
		MR_CNT(qp, cqe_ok, 1);
	else
		MR_CNT(qp, cqe_err, 1);
	ep->cb.complete(ep->cb.user, &c);
}

/* A receive WQE that will not be received into (MR-ERR-4). */
static void recv_flushed(struct mr_qp *qp, uint64_t wr_id)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.status = MR_WC_WR_FLUSH_ERR;
	c.opcode = MR_WC_RECV;
	c.is_recv = 1;
	mr_qpout_cqe(&qp->out, &c);
}

static void rq_flush(struct mr_qp *qp)
{
	uint64_t wr_id;

	while (mr_rq_flush_next(&qp->rq, &wr_id))
		recv_flushed(qp, wr_id);
}

/* ERR: every part flushes (send WRs, receive WQEs, response records)
 * into qp->out, then the async event if no CQE says why; mr_qp_settle()
 * delivers them in that order. */
static void enter_err(struct mr_qp *qp, int notify)
{
	if (qp->state == MR_QPS_ERR)
		return;
	qp->state = MR_QPS_ERR;
	mr_req_flush(qp);
	rq_flush(qp);
	if (qp->cfg.type == MR_QPT_RC)
		mr_resp_flush(qp);
	if (notify && qp->ep->cb.qp_error)
		mr_qpout_qp_error(&qp->out);
}

void mr_qp_settle(struct mr_qp *qp)
{
	struct mr_qpout_ev e;
	enum mr_qpout_fail f;

	/* Called again from a callback below (a post on this QP): what it
	 * added is delivered by this loop, in order, when that callback
	 * returns. */
	if (qp->out.busy)
		return;
	qp->out.busy = 1;
	for (;;) {
		/* In the order the parts produced them (MR-ERR-1, MR-ORD-1). */
		while (mr_qpout_next(&qp->out, &e))
			deliver(qp, &e);
		f = mr_qpout_take_fail(&qp->out);
		if (f == MR_QPOUT_FAIL_NONE)
			break;
		enter_err(qp, f == MR_QPOUT_FAIL_NOTIFY);
	}
	qp->out.busy = 0;
}

/* Attributes each transition requires (verbs' qp_state_table for RC and
 * UD) and allows. */
struct trans {
	unsigned req, opt;
};

#define RC_RTR_REQ                                                     \
	(MR_QP_DEST | MR_QP_PATH_MTU | MR_QP_DEST_QPN | MR_QP_RQ_PSN | \
	 MR_QP_MAX_DEST_RD_ATOMIC | MR_QP_MIN_RNR_TIMER)
#define RC_RTS_REQ                                                          \
	(MR_QP_SQ_PSN | MR_QP_TIMEOUT | MR_QP_RETRY_CNT | MR_QP_RNR_RETRY | \
	 MR_QP_MAX_QP_RD_ATOMIC)
#define RC_RTS_OPT                                                    \
	(MR_QP_ACCESS_FLAGS | MR_QP_MIN_RNR_TIMER | MR_QP_TIMEOUT |   \
	 MR_QP_RETRY_CNT | MR_QP_RNR_RETRY | MR_QP_MAX_QP_RD_ATOMIC | \
	 MR_QP_MAX_DEST_RD_ATOMIC)
/* MR-UC-9: IB's UC columns of the table. */
#define UC_RTR_REQ \
	(MR_QP_DEST | MR_QP_PATH_MTU | MR_QP_DEST_QPN | MR_QP_RQ_PSN)

/* The transitions of a UC QP (RESET and ERR handled by the caller). */
static int uc_transition(enum mr_qp_state from, enum mr_qp_state to,
			 struct trans *t)
{
	switch (from) {
	case MR_QPS_RESET:
		if (to != MR_QPS_INIT)
			return -MR_EINVAL;
		t->req = MR_QP_ACCESS_FLAGS;
		return 0;
	case MR_QPS_INIT:
		if (to == MR_QPS_INIT) {
			t->opt = MR_QP_ACCESS_FLAGS;
			return 0;
		}
		if (to != MR_QPS_RTR)
			return -MR_EINVAL;
		t->req = UC_RTR_REQ;
		t->opt = MR_QP_ACCESS_FLAGS;
		return 0;
	case MR_QPS_RTR:
		if (to != MR_QPS_RTS)
			return -MR_EINVAL;
		t->req = MR_QP_SQ_PSN;
		t->opt = MR_QP_ACCESS_FLAGS;
		return 0;
	case MR_QPS_RTS:
	case MR_QPS_SQD:
		if (to != MR_QPS_RTS && to != MR_QPS_SQD)
			return -MR_EINVAL;
		t->opt = MR_QP_ACCESS_FLAGS;
		return 0;
	default:
		return -MR_EINVAL;
	}
}

static int transition(const struct mr_qp *qp, enum mr_qp_state from,
		      enum mr_qp_state to, struct trans *t)
{
	int rc = qp->cfg.type == MR_QPT_RC;

	t->req = t->opt = 0;
	if (to == MR_QPS_RESET || to == MR_QPS_ERR)
		return 0;
	if (qp->cfg.type == MR_QPT_UC)
		return uc_transition(from, to, t);
	switch (from) {
	case MR_QPS_RESET:
		if (to != MR_QPS_INIT)
			return -MR_EINVAL;
		t->req = rc ? MR_QP_ACCESS_FLAGS : MR_QP_QKEY;
		return 0;
	case MR_QPS_INIT:
		if (to == MR_QPS_INIT) {
			t->opt = rc ? MR_QP_ACCESS_FLAGS : MR_QP_QKEY;
			return 0;
		}
		if (to != MR_QPS_RTR)
			return -MR_EINVAL;
		t->req = rc ? RC_RTR_REQ : 0;
		t->opt = rc ? MR_QP_ACCESS_FLAGS : MR_QP_QKEY;
		return 0;
	case MR_QPS_RTR:
		if (to != MR_QPS_RTS)
			return -MR_EINVAL;
		t->req = rc ? RC_RTS_REQ : MR_QP_SQ_PSN;
		t->opt = rc ? MR_QP_ACCESS_FLAGS | MR_QP_MIN_RNR_TIMER
			    : MR_QP_QKEY;
		return 0;
	case MR_QPS_RTS:
	case MR_QPS_SQD:
		if (to != MR_QPS_RTS && to != MR_QPS_SQD)
			return -MR_EINVAL;
		t->opt = rc ? RC_RTS_OPT : MR_QP_QKEY;
		return 0;
	default:
		return -MR_EINVAL;
	}
}

static int check_values(const struct mr_qp *qp, const struct mr_qp_attr *a,
			unsigned mask)
{
	const struct mr_ep_config *ec = &qp->ep->cfg;

	if ((mask & MR_QP_PATH_MTU) &&
	    (a->path_mtu_bytes < 256 || a->path_mtu_bytes > ec->mtu ||
	     (a->path_mtu_bytes & (a->path_mtu_bytes - 1))))
		return -MR_EINVAL;
	if ((mask & MR_QP_RETRY_CNT) && a->retry_cnt > 7)
		return -MR_EINVAL;
	if ((mask & MR_QP_RNR_RETRY) && a->rnr_retry > 7)
		return -MR_EINVAL;
	if ((mask & MR_QP_MIN_RNR_TIMER) && a->min_rnr_timer > 31)
		return -MR_EINVAL;
	if ((mask & MR_QP_TIMEOUT) && a->timeout > 31)
		return -MR_EINVAL;
	if ((mask & MR_QP_MAX_DEST_RD_ATOMIC) &&
	    a->max_dest_rd_atomic > ec->max_rd_atomic)
		return -MR_EINVAL;
	if ((mask & MR_QP_MAX_QP_RD_ATOMIC) &&
	    a->max_rd_atomic > MR_MAX_RD_ATOMIC)
		return -MR_EINVAL;
	if ((mask & MR_QP_DEST_QPN) &&
	    (!a->dest_qpn || (a->dest_qpn & ~MR_QPN_MASK)))
		return -MR_EINVAL;
	if ((mask & MR_QP_ACCESS_FLAGS) &&
	    (a->access &
	     ~(unsigned)(MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
			 MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_ATOMIC)))
		return -MR_EINVAL;
	return 0;
}

static void apply(struct mr_qp *qp, const struct mr_qp_attr *a, unsigned m)
{
	struct mr_qp_attr *q = &qp->attr;

	if (m & MR_QP_ACCESS_FLAGS)
		q->access = a->access;
	if (m & MR_QP_QKEY)
		q->qkey = a->qkey;
	if (m & MR_QP_DEST)
		q->dest = a->dest;
	if (m & MR_QP_PATH_MTU) {
		q->path_mtu_bytes = a->path_mtu_bytes;
		qp->mtu = a->path_mtu_bytes;
	}
	if (m & MR_QP_TIMEOUT)
		q->timeout = a->timeout;
	if (m & MR_QP_RETRY_CNT)
		q->retry_cnt = a->retry_cnt;
	if (m & MR_QP_RNR_RETRY)
		q->rnr_retry = a->rnr_retry;
	if (m & MR_QP_RQ_PSN)
		q->rq_psn = a->rq_psn;
	if (m & MR_QP_MAX_QP_RD_ATOMIC)
		q->max_rd_atomic = a->max_rd_atomic;
	if (m & MR_QP_MIN_RNR_TIMER)
		q->min_rnr_timer = a->min_rnr_timer;
	if (m & MR_QP_SQ_PSN)
		q->sq_psn = a->sq_psn;
	if (m & MR_QP_MAX_DEST_RD_ATOMIC)
		q->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (m & MR_QP_DEST_QPN)
		q->dest_qpn = a->dest_qpn;
}

static int qp_modify(struct mr_qp *qp, const struct mr_qp_attr *attr,
		     unsigned attr_mask)
{
	enum mr_qp_state from, to;
	struct trans t;
	int rc;

	if (!qp || !attr)
		return -MR_EINVAL;
	from = qp->state;
	to = (attr_mask & MR_QP_STATE) ? attr->state : from;
	if (to > MR_QPS_ERR || to == MR_QPS_SQE)
		return -MR_EINVAL;
	rc = transition(qp, from, to, &t);
	if (rc)
		return rc;
	if (to == MR_QPS_RESET) {
		qp_reset(qp);
		return 0;
	}
	if (to == MR_QPS_ERR) {
		enter_err(qp, 0);
		return 0;
	}
	if ((attr_mask & t.req) != t.req ||
	    (attr_mask & ~(t.req | t.opt | MR_QP_STATE)))
		return -MR_EINVAL;
	rc = check_values(qp, attr, attr_mask);
	if (rc)
		return rc;
	apply(qp, attr, attr_mask);
	if (from == MR_QPS_INIT && to == MR_QPS_RTR &&
	    qp->cfg.type == MR_QPT_UC)
		mr_uc_rx_reset(qp);
	if (from == MR_QPS_INIT && to == MR_QPS_RTR &&
	    qp->cfg.type == MR_QPT_RC) {
		mr_resp_reset(qp);
		/* MR-RSP-10: a QP in RTR answers READs and atomics, so its
		 * stream exists from RTR on (verbs gives sq_psn only at RTS,
		 * and perftest's passive side never goes there). */
		mr_req_reset(qp, 0);
	}
	if (from == MR_QPS_RTR && to == MR_QPS_RTS &&
	    qp->cfg.type == MR_QPT_RC && qp->req.snd_nxt == qp->req.snd_base)
		mr_req_reset(qp, 0); /* nothing sent yet: start at sq_psn */
	if (to == MR_QPS_SQD && from != MR_QPS_SQD)
		qp->req.sqd_drained = 0;
	qp->state = to;
	if (to == MR_QPS_SQD)
		mr_req_sqd_check(qp); /* nothing in flight: drained now */
	if (to == MR_QPS_RTS && from == MR_QPS_SQD) {
		mr_sqlocal_run(qp); /* MR-MW-6: SQD held them */
		mr_sqlocal_complete(qp);
	}
	mr_ep_kick(qp);
	return 0;
}

int mr_qp_modify(struct mr_qp *qp, const struct mr_qp_attr *attr,
		 unsigned attr_mask)
{
	int rc = qp_modify(qp, attr, attr_mask);

	if (qp) {
		mr_qp_settle(qp); /* SQ drained, local WRs completed */
		mr_ep_timer_update(qp);
	}
	return rc;
}

int mr_qp_query(const struct mr_qp *qp, struct mr_qp_attr *out)
{
	if (!qp || !out)
		return -MR_EINVAL;
	*out = qp->attr;
	out->state = qp->state;
	out->sq_draining = (uint8_t)mr_req_sq_draining(qp);
	out->qp_num = qp->cfg.qpn;
	out->mode = qp->cfg.mode;
	out->type = qp->cfg.type;
	return 0;
}

static int qp_post_recv(struct mr_qp *qp, const struct mr_recv_wr *wr)
{
	int rc;

	if (!qp || !wr)
		return -MR_EINVAL;
	if (qp->cfg.srq)
		return -MR_EINVAL;
	if (qp->state == MR_QPS_RESET)
		return -MR_ESTATE;
	rc = mr_rq_push(&qp->rq, &qp->ep->memreg, qp->cfg.pd, qp->out.recvs,
			wr);
	if (rc)
		return rc;
	if (qp->state != MR_QPS_ERR) {
		/* A WRITE_IMM complete but waiting for a WQE finishes now. */
		if (qp->cfg.type == MR_QPT_RC && qp->state >= MR_QPS_RTR) {
			mr_resp_advance(qp, qp->now);
			mr_qp_settle(qp);
			mr_ep_kick(qp);
		}
		return 0;
	}
	/* MR-ERR-4: posted in ERR, flushed at once (ERR flushed the ring,
	 * so this WQE is the only one in it). */
	rq_flush(qp);
	return 0;
}

int mr_qp_post_recv(struct mr_qp *qp, const struct mr_recv_wr *wr)
{
	int rc = qp_post_recv(qp, wr);

	if (qp) {
		mr_qp_settle(qp); /* flushed in ERR */
		mr_ep_timer_update(qp);
	}
	return rc;
}

int mr_qp_post_send(struct mr_qp *qp, const struct mr_send_wr *wr, uint64_t now)
{
	int rc = mr_req_post(qp, wr, now);

	if (!rc)
		mr_ep_kick(qp);
	if (qp) {
		mr_qp_settle(qp); /* flushed in ERR, local WRs completed */
		mr_ep_timer_update(qp);
	}
	return rc;
}

const struct mr_counters *mr_qp_counters(const struct mr_qp *qp)
{
	return &qp->cnt;
}
