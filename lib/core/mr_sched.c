// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint's bookkeeping of its QPs (mr_sched.h): the qpn table
 * (open addressing, linear probing), the transmit work queue (FIFO, round
 * robin) and the timer heap's keys (docs/spec/transport.md MR-QP-*,
 * MR-REQ-5).
 */
#include "mr_sched.h"

static uint32_t qpn_hash(const struct mr_ep *ep, uint32_t qpn)
{
	return (qpn * 2654435761u) & ep->qpn_mask;
}

void mr_ep_qpn_insert(struct mr_ep *ep, struct mr_qp *qp)
{
	uint32_t i = qpn_hash(ep, qp->cfg.qpn);

	while (ep->qpn_tab[i])
		i = (i + 1) & ep->qpn_mask;
	ep->qpn_tab[i] = qp;
}

struct mr_qp *mr_ep_qpn_find(const struct mr_ep *ep, uint32_t qpn)
{
	uint32_t i = qpn_hash(ep, qpn);

	while (ep->qpn_tab[i]) {
		if (ep->qpn_tab[i]->cfg.qpn == qpn)
			return ep->qpn_tab[i];
		i = (i + 1) & ep->qpn_mask;
	}
	return NULL;
}

void mr_ep_qpn_remove(struct mr_ep *ep, struct mr_qp *qp)
{
	uint32_t i = qpn_hash(ep, qp->cfg.qpn), j, h;

	while (ep->qpn_tab[i] != qp) {
		if (!ep->qpn_tab[i])
			return;
		i = (i + 1) & ep->qpn_mask;
	}
	ep->qpn_tab[i] = NULL;
	/* Backward-shift deletion keeps every probe chain unbroken. */
	for (j = (i + 1) & ep->qpn_mask; ep->qpn_tab[j];
	     j = (j + 1) & ep->qpn_mask) {
		h = qpn_hash(ep, ep->qpn_tab[j]->cfg.qpn);
		if (((j - h) & ep->qpn_mask) >= ((j - i) & ep->qpn_mask)) {
			ep->qpn_tab[i] = ep->qpn_tab[j];
			ep->qpn_tab[j] = NULL;
			i = j;
		}
	}
}

/* The work queue and the ACK queue are both FIFO rings of max_qp QPs
 * (a QP is at most once in each, its in_work / in_ackq flag). */
static void fifo_push(struct mr_qp **v, uint32_t head, uint32_t *n,
		      uint32_t cap, struct mr_qp *qp)
{
	v[(head + (*n)++) % cap] = qp;
}

/* Remove qp, keeping the others' order: O(queue), only when the QP is
 * destroyed (mr_qp_destroy), never per packet. */
static void fifo_drop(struct mr_qp **v, uint32_t head, uint32_t *n,
		      uint32_t cap, const struct mr_qp *qp)
{
	uint32_t i, k = 0;

	for (i = 0; i < *n; i++) {
		struct mr_qp *q = v[(head + i) % cap];

		if (q != qp)
			v[(head + k++) % cap] = q;
	}
	*n = k;
}

void mr_ep_kick(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;

	if (qp->in_work)
		return;
	qp->in_work = 1;
	fifo_push(ep->work, ep->work_head, &ep->work_n, ep->cfg.max_qp, qp);
}

void mr_ep_kick_ack(struct mr_qp *qp, uint64_t now)
{
	struct mr_ep *ep = qp->ep;

	if (qp->in_ackq || qp->cfg.type != MR_QPT_RC ||
	    !mr_resp_ack_wanted(qp, now))
		return;
	qp->in_ackq = 1;
	fifo_push(ep->ackq, ep->ackq_head, &ep->ackq_n, ep->cfg.max_qp, qp);
}

void mr_ep_unkick(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;

	if (qp->in_ackq)
		fifo_drop(ep->ackq, ep->ackq_head, &ep->ackq_n,
			  ep->cfg.max_qp, qp);
	qp->in_ackq = 0;
	if (qp->in_work)
		fifo_drop(ep->work, ep->work_head, &ep->work_n,
			  ep->cfg.max_qp, qp);
	qp->in_work = 0;
}

uint64_t mr_qp_deadline(const struct mr_qp *qp)
{
	uint64_t d, t;

	if (qp->cfg.type != MR_QPT_RC || qp->state < MR_QPS_RTR)
		return UINT64_MAX;
	d = qp->rsp.ack_due;
	if (qp->state == MR_QPS_ERR)
		return d;
	t = mr_req_deadline(qp);
	return t < d ? t : d;
}

void mr_ep_timer_update(struct mr_qp *qp)
{
	/* Cannot fail: the queue holds max_qp entries, one per QP. */
	(void)mr_timerq_set(&qp->ep->timers, &qp->tmr, mr_qp_deadline(qp));
}

int mr_ep_timers_check(const struct mr_ep *ep)
{
	uint32_t i;

	if (!mr_timerq_valid(&ep->timers))
		return -1;
	for (i = 0; i < ep->nqp; i++) {
		const struct mr_qp *qp = ep->qps[i];
		uint64_t d = mr_qp_deadline(qp);

		if (qp->tmr.at != d ||
		    (d != UINT64_MAX) != (qp->tmr.pos != MR_TIMERQ_NONE))
			return -1;
	}
	return 0;
}
