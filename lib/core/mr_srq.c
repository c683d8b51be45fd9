// SPDX-License-Identifier: BSD-2-Clause
/*
 * The public SRQ calls (mr_core.h). The ring itself is the leaf mr_rq.c;
 * this floor knows the endpoint, so a post can wake the QPs whose
 * WRITE_IMM waits for a WQE (MR-RSP-3).
 */
#include "mr_qp.h"

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
	srq->cb = &ep->cb;
	srq->cfg = *cfg;
	srq->limit = cfg->limit;
	rc = mr_rq_ring_alloc(&ep->mem, &srq->ring, cfg->max_wr, cfg->max_sge);
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
	mr_rq_ring_free(&ep->mem, &srq->ring);
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
	rc = mr_rq_ring_push(&srq->ep->memreg, srq->cfg.pd, &srq->ring, 0, wr);
	if (rc)
		return rc;
	/* QPs whose next message is a WRITE_IMM waiting for a WQE. */
	ep = srq->ep;
	for (i = 0; srq->blocked && i < ep->nqp; i++) {
		struct mr_qp *qp = ep->qps[i];

		if (qp->rq.srq == srq && qp->rq.wimm_blocked &&
		    qp->state >= MR_QPS_RTR && qp->state != MR_QPS_ERR) {
			mr_resp_advance(qp, qp->now);
			mr_qp_settle(qp);
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
	mr_srq_check_limit(srq);
	return 0;
}

int mr_srq_seq_base(struct mr_srq *srq, uint32_t base)
{
	if (srq->ring.head != srq->ring.tail)
		return -MR_ESTATE;
	srq->ring.head = srq->ring.tail = base;
	return 0;
}

uint32_t mr_srq_count(const struct mr_srq *srq)
{
	return srq->ring.tail - srq->ring.head;
}
