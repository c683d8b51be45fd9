// SPDX-License-Identifier: BSD-2-Clause
/* Local send-queue operations (see mr_sqlocal.h; MR-MW-6). */
#include <string.h>

#include "mr_engine.h"

int mr_sqlocal_is_local(unsigned opcode)
{
	return opcode == MR_WR_BIND_MW || opcode == MR_WR_LOCAL_INV;
}

static struct mr_lwqe *lwqe(const struct mr_qp *qp, uint32_t i)
{
	return &qp->lq.q[i & qp->lq.mask];
}

int mr_sqlocal_alloc(struct mr_qp *qp)
{
	uint32_t slots = mr_ring_slots(qp->cfg.max_send_wr);

	qp->lq.q =
		qp->ep->mem.calloc(qp->ep->mem.user, slots, sizeof(*qp->lq.q));
	if (!qp->lq.q)
		return -MR_ENOMEM;
	qp->lq.mask = slots - 1;
	qp->lq.head = qp->lq.run = qp->lq.tail = 0;
	return 0;
}

void mr_sqlocal_free(struct mr_qp *qp)
{
	if (qp->lq.q)
		qp->ep->mem.free(qp->ep->mem.user, qp->lq.q);
	qp->lq.q = NULL;
}

void mr_sqlocal_reset(struct mr_qp *qp)
{
	qp->lq.head = qp->lq.run = qp->lq.tail = 0;
}

uint32_t mr_sqlocal_count(const struct mr_qp *qp)
{
	return qp->lq.tail - qp->lq.head;
}

static void local_cqe(struct mr_qp *qp, const struct mr_lwqe *l,
		      enum mr_wc_status st)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = l->wr_id;
	c.status = st;
	c.opcode = l->opcode == MR_WR_BIND_MW ? MR_WC_BIND_MW : MR_WC_LOCAL_INV;
	mr_qpout_cqe(&qp->out, &c);
}

int mr_sqlocal_post(struct mr_qp *qp, const struct mr_send_wr *wr)
{
	const struct mr_memreg *m = &qp->ep->memreg;
	struct mr_lwqe *l;

	/* MR-MW-8: RC and UC send queues take them; UD has no windows. */
	if (qp->cfg.type == MR_QPT_UD || !m->bind || !m->invalidate)
		return -MR_EINVAL;
	if (wr->num_sge ||
	    (wr->flags & ~(unsigned)(MR_SEND_SIGNALED | MR_SEND_FENCE)))
		return -MR_EINVAL;
	l = lwqe(qp, qp->lq.tail);
	memset(l, 0, sizeof(*l));
	l->wr_id = wr->wr_id;
	l->opcode = (uint8_t)wr->opcode;
	l->signaled = (wr->flags & MR_SEND_SIGNALED) || qp->cfg.sq_sig_all;
	l->bind = wr->bind;
	l->inv_rkey = wr->invalidate_rkey;
	l->before = qp->sq.tail;
	qp->lq.tail++;
	if (qp->state == MR_QPS_ERR) {
		/* MR-ERR-4, as for messages: flushed, never executed. */
		qp->lq.head = qp->lq.run = qp->lq.tail;
		local_cqe(qp, l, MR_WC_WR_FLUSH_ERR);
		return 0;
	}
	mr_sqlocal_run(qp);
	mr_sqlocal_complete(qp);
	return 0;
}

/* A failed local WR: no message after it starts (the err_msn barrier of
 * the requester), it completes with its status when its turn comes. */
static void local_failed(struct mr_qp *qp, const struct mr_lwqe *l)
{
	if (!qp->req.have_err || mr_seq_lt(l->before, qp->req.err_msn)) {
		qp->req.have_err = 1;
		qp->req.err_msn = l->before;
	}
}

void mr_sqlocal_run(struct mr_qp *qp)
{
	const struct mr_memreg *m = &qp->ep->memreg;

	while (qp->lq.run != qp->lq.tail && qp->state == MR_QPS_RTS) {
		struct mr_lwqe *l = lwqe(qp, qp->lq.run);
		int rc;

		if (l->before != qp->sq.next ||
		    (qp->req.have_err && !mr_seq_lt(l->before, qp->req.err_msn)))
			return;
		if (l->opcode == MR_WR_BIND_MW) {
			rc = m->bind(m->user, qp->cfg.pd, qp->cfg.qpn,
				     &l->bind);
			/* MR-MW-2 */
			l->status = rc ? MR_WC_MW_BIND_ERR : MR_WC_SUCCESS;
		} else {
			rc = m->invalidate(m->user, qp->cfg.pd, qp->cfg.qpn,
					   l->inv_rkey, 0);
			/* MR-MW-4 */
			l->status = rc ? MR_WC_LOC_QP_OP_ERR : MR_WC_SUCCESS;
		}
		qp->lq.run++;
		if (rc) {
			local_failed(qp, l);
			return;
		}
	}
}

int mr_sqlocal_complete(struct mr_qp *qp)
{
	while (qp->lq.head != qp->lq.run && !mr_qp_failed(qp)) {
		struct mr_lwqe *l = lwqe(qp, qp->lq.head);

		if (l->before != qp->sq.head)
			return 0;
		qp->lq.head++;
		if (l->status != MR_WC_SUCCESS) {
			/* MR-ERR-1: in order, then the QP fails. */
			local_cqe(qp, l, (enum mr_wc_status)l->status);
			mr_qpout_fail(&qp->out, 0);
			return 1;
		}
		if (l->signaled)
			local_cqe(qp, l, MR_WC_SUCCESS);
	}
	return 0;
}

void mr_sqlocal_flush(struct mr_qp *qp, uint32_t msn, int all)
{
	while (qp->lq.head != qp->lq.tail) {
		struct mr_lwqe *l = lwqe(qp, qp->lq.head);

		if (!all && mr_seq_lt(msn, l->before))
			break;
		qp->lq.head++;
		local_cqe(qp, l, MR_WC_WR_FLUSH_ERR);
	}
	/* Flushed ones are never executed. */
	if (mr_seq_lt(qp->lq.run, qp->lq.head))
		qp->lq.run = qp->lq.head;
}
