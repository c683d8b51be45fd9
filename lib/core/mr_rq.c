// SPDX-License-Identifier: BSD-2-Clause
/*
 * Receive queues and shared receive queues (docs/spec/transport.md
 * MR-RSP-3, MR-RSP-4), and the scatter/gather walks used to place data
 * into, and copy data out of, registered memory.
 *
 * A SEND packet may arrive before every earlier message: it names its
 * receive WQE by rsn. With an own RQ, WQE number rsn is simply the rsn-th
 * posted one. With an SRQ other QPs take WQEs too, so a QP takes SRQ WQEs
 * in rsn order into its claim table the first time a packet needs one
 * (claim_next), which keeps "the n-th receive-consuming message gets the
 * n-th WQE this QP took" and completions in message order.
 */
#include <string.h>

#include "mr_engine.h"

void mr_rq_init_ring(struct mr_rq *rq)
{
	rq->head = 0;
	rq->tail = 0;
}

int mr_rq_alloc(struct mr_ep *ep, struct mr_rq *rq, uint32_t max_wr,
		uint32_t max_sge)
{
	uint32_t i, slots = mr_ring_slots(max_wr);

	rq->max_wr = max_wr;
	rq->max_sge = max_sge;
	rq->mask = slots - 1;
	mr_rq_init_ring(rq);
	rq->wqe = ep->mem.calloc(ep->mem.user, slots, sizeof(*rq->wqe));
	rq->sge = ep->mem.calloc(ep->mem.user,
				 (size_t)slots * (max_sge ? max_sge : 1),
				 sizeof(*rq->sge));
	if (!rq->wqe || !rq->sge) {
		mr_rq_free(ep, rq);
		return -MR_ENOMEM;
	}
	for (i = 0; i < slots; i++)
		rq->wqe[i].sge = rq->sge + (size_t)i * (max_sge ? max_sge : 1);
	return 0;
}

void mr_rq_free(struct mr_ep *ep, struct mr_rq *rq)
{
	if (rq->wqe)
		ep->mem.free(ep->mem.user, rq->wqe);
	if (rq->sge)
		ep->mem.free(ep->mem.user, rq->sge);
	rq->wqe = NULL;
	rq->sge = NULL;
}

/* Copy a receive WR into a ring after checking its SGEs (MR-RSP-3: a bad
 * lkey is refused at post time, not discovered when data arrives). */
int mr_rq_push(struct mr_ep *ep, uint32_t pd, struct mr_rq *rq,
	       const struct mr_recv_wr *wr)
{
	struct mr_rwqe *w;
	uint64_t total = 0;
	uint8_t *host;
	unsigned i;

	if (!wr || (wr->num_sge && !wr->sg_list) || wr->num_sge > rq->max_sge)
		return -MR_EINVAL;
	if (rq->tail - rq->head >= rq->max_wr)
		return -MR_EAGAIN;
	for (i = 0; i < wr->num_sge; i++) {
		const struct mr_sge *s = &wr->sg_list[i];

		if (s->length &&
		    ep->memreg.lookup(ep->memreg.user, pd, s->lkey, 0, s->addr,
				      s->length, MR_ACCESS_LOCAL_WRITE, &host))
			return -MR_EACCESS;
		total += s->length;
	}
	w = mr_rq_wqe(rq, rq->tail);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->total = total;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	rq->tail++;
	return 0;
}

static void srq_check_limit(struct mr_srq *srq)
{
	struct mr_ep *ep = srq->ep;

	if (srq->limit && srq->rq.tail - srq->rq.head < srq->limit) {
		srq->limit = 0; /* verbs: the event disarms the limit */
		if (ep->cb.srq_limit)
			ep->cb.srq_limit(ep->cb.user, srq->cfg.user);
	}
}

static void rwqe_copy(struct mr_rwqe *dst, struct mr_sge *dsge,
		      const struct mr_rwqe *src)
{
	dst->wr_id = src->wr_id;
	dst->num_sge = src->num_sge;
	dst->total = src->total;
	dst->sge = dsge;
	if (src->num_sge)
		memcpy(dsge, src->sge, src->num_sge * sizeof(*dsge));
}

struct mr_rwqe *mr_rq_for_rsn(struct mr_qp *qp, uint32_t rsn)
{
	uint32_t mw = qp->ep->cfg.msg_window;
	struct mr_srq *srq = qp->cfg.srq;

	if (!srq) {
		struct mr_rq *rq = &qp->rq;

		if (mr_seq_lt(rsn, rq->head) || !mr_seq_lt(rsn, rq->tail))
			return NULL;
		return mr_rq_wqe(rq, rsn);
	}
	if (mr_seq_lt(rsn, qp->rcv_rsn) || rsn - qp->rcv_rsn >= mw)
		return NULL;
	while (mr_seq_le(qp->claim_next, rsn)) {
		uint32_t slot = qp->claim_next & (mw - 1);
		struct mr_rwqe *src;

		if (srq->rq.head == srq->rq.tail)
			return NULL;
		src = mr_rq_wqe(&srq->rq, srq->rq.head);
		rwqe_copy(&qp->claim[slot],
			  qp->claim_sge + (size_t)slot * srq->rq.max_sge, src);
		srq->rq.head++;
		qp->claim_next++;
		srq_check_limit(srq);
	}
	return &qp->claim[rsn & (mw - 1)];
}

void mr_rq_consume(struct mr_qp *qp, uint32_t rsn)
{
	if (!qp->cfg.srq && qp->rq.head == rsn)
		qp->rq.head++;
	qp->rcv_rsn = rsn + 1;
}

int mr_rq_take(struct mr_qp *qp, struct mr_rwqe *out, struct mr_sge *sge)
{
	struct mr_rq *rq = qp->cfg.srq ? &qp->cfg.srq->rq : &qp->rq;

	if (rq->head == rq->tail)
		return -MR_EAGAIN;
	rwqe_copy(out, sge, mr_rq_wqe(rq, rq->head));
	rq->head++;
	if (qp->cfg.srq)
		srq_check_limit(qp->cfg.srq);
	return 0;
}

static void flush_one(struct mr_qp *qp, const struct mr_rwqe *w)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = w->wr_id;
	c.status = MR_WC_WR_FLUSH_ERR;
	c.opcode = MR_WC_RECV;
	c.is_recv = 1;
	mr_qp_cqe(qp, &c);
}

/* QP in ERR: every WQE it owns completes with a flush error (MR-ERR-4).
 * SRQ WQEs not yet taken stay in the SRQ for the other QPs. */
void mr_rq_flush(struct mr_qp *qp)
{
	uint32_t mw = qp->ep->cfg.msg_window;

	if (!qp->cfg.srq) {
		while (qp->rq.head != qp->rq.tail) {
			flush_one(qp, mr_rq_wqe(&qp->rq, qp->rq.head));
			qp->rq.head++;
		}
		return;
	}
	while (mr_seq_lt(qp->rcv_rsn, qp->claim_next)) {
		flush_one(qp, &qp->claim[qp->rcv_rsn & (mw - 1)]);
		qp->rcv_rsn++;
	}
}

/* Walk [off, off + len) of a scatter/gather list: each piece is looked up
 * (local write rights when placing into it) and copied from src (placed
 * through the place callback), copied into dst, or (neither: zero-copy
 * transmit) described as a segment in seg[0, max). One walker for every
 * direction so bounds and key checks cannot drift apart. Returns the
 * number of pieces, or -MR_EACCESS, -MR_EMSGSIZE (list too short), or
 * -MR_EAGAIN (segments: more than max pieces). */
static int sge_walk(struct mr_qp *qp, const struct mr_sge *sge, uint32_t n,
		    uint64_t off, const uint8_t *src, uint8_t *dst,
		    struct mr_tx_seg *seg, unsigned max, uint32_t len)
{
	struct mr_ep *ep = qp->ep;
	uint32_t i;
	int pieces = 0;

	for (i = 0; i < n && len; i++) {
		uint64_t chunk;
		uint8_t *host;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		chunk = sge[i].length - off;
		if (chunk > len)
			chunk = len;
		if (mr_qp_lookup(qp, sge[i].lkey, 0, sge[i].addr + off, chunk,
				 src ? MR_ACCESS_LOCAL_WRITE : 0, &host))
			return -MR_EACCESS;
		if (src) {
			ep->cb.place(ep->cb.user, host, src, (uint32_t)chunk);
			src += chunk;
		} else if (dst) {
			memcpy(dst, host, chunk);
			dst += chunk;
		} else {
			if ((unsigned)pieces == max)
				return -MR_EAGAIN;
			seg[pieces].addr = host;
			seg[pieces].len = (uint32_t)chunk;
		}
		pieces++;
		len -= (uint32_t)chunk;
		off = 0;
	}
	return len ? -MR_EMSGSIZE : pieces;
}

int mr_sge_place(struct mr_qp *qp, const struct mr_sge *sge, uint32_t n,
		 uint64_t off, const uint8_t *src, uint32_t len)
{
	int rc = sge_walk(qp, sge, n, off, src, NULL, NULL, 0, len);

	return rc < 0 ? rc : 0;
}

int mr_rq_place(struct mr_qp *qp, const struct mr_rwqe *w, uint64_t off,
		const uint8_t *src, uint32_t len)
{
	return mr_sge_place(qp, w->sge, w->num_sge, off, src, len);
}

int mr_sge_gather(struct mr_qp *qp, const struct mr_sge *sge, uint32_t n,
		  uint64_t off, uint8_t *dst, uint32_t len)
{
	int rc = sge_walk(qp, sge, n, off, NULL, dst, NULL, 0, len);

	return rc < 0 ? rc : 0;
}

int mr_sge_segs(struct mr_qp *qp, const struct mr_sge *sge, uint32_t n,
		uint64_t off, struct mr_tx_seg *seg, unsigned max, uint32_t len)
{
	return sge_walk(qp, sge, n, off, NULL, NULL, seg, max, len);
}

int mr_srq_create(struct mr_ep *ep, const struct mr_srq_config *cfg,
		  struct mr_srq **out)
{
	struct mr_srq *srq;
	int rc;

	if (!ep || !cfg || !out || !cfg->max_wr || cfg->max_sge > 1024 ||
	    cfg->limit > cfg->max_wr)
		return -MR_EINVAL;
	srq = ep->mem.calloc(ep->mem.user, 1, sizeof(*srq));
	if (!srq)
		return -MR_ENOMEM;
	srq->ep = ep;
	srq->cfg = *cfg;
	srq->limit = cfg->limit;
	rc = mr_rq_alloc(ep, &srq->rq, cfg->max_wr, cfg->max_sge);
	if (rc) {
		ep->mem.free(ep->mem.user, srq);
		return rc;
	}
	ep->nsrq++;
	*out = srq;
	return 0;
}

int mr_srq_destroy(struct mr_srq *srq)
{
	struct mr_ep *ep;

	if (!srq)
		return -MR_EINVAL;
	if (srq->users)
		return -MR_EBUSY;
	ep = srq->ep;
	mr_rq_free(ep, &srq->rq);
	ep->nsrq--;
	ep->mem.free(ep->mem.user, srq);
	return 0;
}

int mr_srq_post_recv(struct mr_srq *srq, const struct mr_recv_wr *wr)
{
	struct mr_ep *ep;
	uint32_t i;
	int rc;

	if (!srq)
		return -MR_EINVAL;
	rc = mr_rq_push(srq->ep, srq->cfg.pd, &srq->rq, wr);
	if (rc)
		return rc;
	/* QPs whose next message is a WRITE_IMM waiting for a WQE. */
	ep = srq->ep;
	for (i = 0; srq->blocked && i < ep->nqp; i++) {
		struct mr_qp *qp = ep->qps[i];

		if (qp->cfg.srq == srq && qp->wimm_blocked &&
		    qp->state >= MR_QPS_RTR && qp->state != MR_QPS_ERR) {
			mr_resp_advance(qp, qp->now);
			mr_ep_kick(qp);
			mr_ep_timer_update(qp);
		}
	}
	return 0;
}

int mr_srq_modify_limit(struct mr_srq *srq, uint32_t limit)
{
	if (!srq || limit > srq->cfg.max_wr)
		return -MR_EINVAL;
	srq->limit = limit;
	srq_check_limit(srq);
	return 0;
}

int mr_srq_seq_base(struct mr_srq *srq, uint32_t base)
{
	if (srq->rq.head != srq->rq.tail)
		return -MR_ESTATE;
	srq->rq.head = srq->rq.tail = base;
	return 0;
}

uint32_t mr_srq_count(const struct mr_srq *srq)
{
	return srq->rq.tail - srq->rq.head;
}
