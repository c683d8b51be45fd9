// SPDX-License-Identifier: BSD-2-Clause
/*
 * Receive queues and a QP's receive WQEs (docs/spec/transport.md
 * MR-RSP-3, MR-RSP-4, MR-ERR-4): see mr_rq.h. The public SRQ calls, which
 * wake QPs, are one floor up in mr_srq.c.
 */
#include <string.h>

#include "mr_err.h"
#include "mr_rq.h"

int mr_rq_ring_alloc(const struct mr_mem *mem, struct mr_rq_ring *r,
		     uint32_t max_wr, uint32_t max_sge)
{
	uint32_t i, slots = mr_ring_slots(max_wr);

	r->max_wr = max_wr;
	r->max_sge = max_sge;
	r->mask = slots - 1;
	r->head = r->tail = 0;
	r->wqe = mem->calloc(mem->user, slots, sizeof(*r->wqe));
	r->sge = mem->calloc(mem->user, (size_t)slots * (max_sge ? max_sge : 1),
			     sizeof(*r->sge));
	if (!r->wqe || !r->sge) {
		mr_rq_ring_free(mem, r);
		return -MR_ENOMEM;
	}
	for (i = 0; i < slots; i++)
		r->wqe[i].sge = r->sge + (size_t)i * (max_sge ? max_sge : 1);
	return 0;
}

void mr_rq_ring_free(const struct mr_mem *mem, struct mr_rq_ring *r)
{
	if (r->wqe)
		mem->free(mem->user, r->wqe);
	if (r->sge)
		mem->free(mem->user, r->sge);
	r->wqe = NULL;
	r->sge = NULL;
}

/* MR-RSP-3: a bad lkey is refused at post time, not discovered when data
 * arrives. */
int mr_rq_ring_push(const struct mr_memreg *reg, uint32_t pd,
		    struct mr_rq_ring *r, uint32_t held,
		    const struct mr_recv_wr *wr)
{
	struct mr_rwqe *w;
	uint64_t total = 0;
	uint8_t *host;
	unsigned i;

	if (!wr || (wr->num_sge && !wr->sg_list) || wr->num_sge > r->max_sge)
		return -MR_EINVAL;
	if (r->tail - r->head + held >= r->max_wr)
		return -MR_EAGAIN;
	for (i = 0; i < wr->num_sge; i++) {
		const struct mr_sge *s = &wr->sg_list[i];

		if (s->length &&
		    reg->lookup(reg->user, pd, s->lkey, 0, s->addr, s->length,
				MR_ACCESS_LOCAL_WRITE, &host))
			return -MR_EACCESS;
		total += s->length;
	}
	w = mr_rq_wqe(r, r->tail);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->total = total;
	if (wr->num_sge)
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	r->tail++;
	return 0;
}

void mr_srq_check_limit(struct mr_srq *srq)
{
	if (srq->limit && srq->ring.tail - srq->ring.head < srq->limit) {
		srq->limit = 0; /* verbs: the event disarms the limit */
		if (srq->cb->srq_limit)
			srq->cb->srq_limit(srq->cb->user, srq->cfg.user);
	}
}

int mr_rq_init(struct mr_rq *rq, const struct mr_mem *mem, struct mr_srq *srq,
	       uint32_t max_wr, uint32_t max_sge)
{
	rq->srq = srq;
	if (srq)
		return 0;
	return mr_rq_ring_alloc(mem, &rq->own, max_wr, max_sge);
}

int mr_rq_init_claims(struct mr_rq *rq, const struct mr_mem *mem,
		      uint32_t window)
{
	uint32_t ms = rq->srq->ring.max_sge ? rq->srq->ring.max_sge : 1;

	rq->window = window;
	rq->claim =
		mem->calloc(mem->user, window ? window : 1, sizeof(*rq->claim));
	rq->claim_sge = mem->calloc(mem->user, (size_t)window * ms,
				    sizeof(*rq->claim_sge));
	return rq->claim && rq->claim_sge ? 0 : -MR_ENOMEM;
}

void mr_rq_fini(struct mr_rq *rq, const struct mr_mem *mem)
{
	mr_rq_ring_free(mem, &rq->own);
	if (rq->claim)
		mem->free(mem->user, rq->claim);
	if (rq->claim_sge)
		mem->free(mem->user, rq->claim_sge);
	rq->claim = NULL;
	rq->claim_sge = NULL;
}

void mr_rq_reset(struct mr_rq *rq)
{
	rq->own.head = 0;
	rq->own.tail = 0;
}

void mr_rq_rx_reset(struct mr_rq *rq)
{
	rq->rcv_rsn = 0;
	rq->claim_next = 0;
	mr_rq_set_blocked(rq, 0);
}

int mr_rq_idle(const struct mr_rq *rq)
{
	return rq->own.tail == rq->own.head && rq->rcv_rsn == rq->claim_next;
}

void mr_rq_set_base(struct mr_rq *rq, uint32_t base)
{
	rq->own.head = rq->own.tail = base;
	rq->rcv_rsn = rq->claim_next = base;
}

int mr_rq_push(struct mr_rq *rq, const struct mr_memreg *reg, uint32_t pd,
	       uint32_t held, const struct mr_recv_wr *wr)
{
	return mr_rq_ring_push(reg, pd, &rq->own, held, wr);
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

struct mr_rwqe *mr_rq_for_rsn(struct mr_rq *rq, uint32_t rsn)
{
	uint32_t mw = rq->window;
	struct mr_srq *srq = rq->srq;

	if (!srq) {
		if (mr_seq_lt(rsn, rq->own.head) ||
		    !mr_seq_lt(rsn, rq->own.tail))
			return NULL;
		return mr_rq_wqe(&rq->own, rsn);
	}
	if (!mr_rq_rsn_valid(rq, rsn, mw))
		return NULL;
	while (mr_seq_le(rq->claim_next, rsn)) {
		uint32_t slot = rq->claim_next & (mw - 1);
		struct mr_rwqe *src;

		if (srq->ring.head == srq->ring.tail)
			return NULL;
		src = mr_rq_wqe(&srq->ring, srq->ring.head);
		rwqe_copy(&rq->claim[slot],
			  rq->claim_sge + (size_t)slot * srq->ring.max_sge,
			  src);
		srq->ring.head++;
		rq->claim_next++;
		mr_srq_check_limit(srq);
	}
	return &rq->claim[rsn & (mw - 1)];
}

void mr_rq_consume(struct mr_rq *rq, uint32_t rsn)
{
	if (!rq->srq && rq->own.head == rsn)
		rq->own.head++;
	rq->rcv_rsn = rsn + 1;
}

void mr_rq_set_blocked(struct mr_rq *rq, int on)
{
	if (rq->wimm_blocked == on)
		return;
	rq->wimm_blocked = (uint8_t)on;
	if (rq->srq) {
		if (on)
			rq->srq->blocked++;
		else
			rq->srq->blocked--;
	}
}

int mr_rq_take(struct mr_rq *rq, struct mr_rwqe *out, struct mr_sge *sge)
{
	struct mr_rq_ring *r = rq->srq ? &rq->srq->ring : &rq->own;

	if (r->head == r->tail)
		return -MR_EAGAIN;
	rwqe_copy(out, sge, mr_rq_wqe(r, r->head));
	r->head++;
	if (rq->srq)
		mr_srq_check_limit(rq->srq);
	return 0;
}

struct mr_rwqe *mr_rq_head(struct mr_rq *rq)
{
	/* MR-UC-8: an SRQ's WQE becomes this QP's claim, kept until a
	 * message completes into it. */
	if (rq->srq)
		return mr_rq_for_rsn(rq, rq->rcv_rsn);
	if (rq->own.head == rq->own.tail)
		return NULL;
	return mr_rq_wqe(&rq->own, rq->own.head);
}

void mr_rq_pop(struct mr_rq *rq)
{
	if (rq->srq)
		rq->rcv_rsn++;
	else
		rq->own.head++;
}

int mr_rq_flush_next(struct mr_rq *rq, uint64_t *wr_id)
{
	if (!rq->srq) {
		if (rq->own.head == rq->own.tail)
			return 0;
		*wr_id = mr_rq_wqe(&rq->own, rq->own.head++)->wr_id;
		return 1;
	}
	if (!mr_seq_lt(rq->rcv_rsn, rq->claim_next))
		return 0;
	*wr_id = rq->claim[rq->rcv_rsn++ & (rq->window - 1)].wr_id;
	return 1;
}
