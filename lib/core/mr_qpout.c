// SPDX-License-Identifier: BSD-2-Clause
/* What QP parts return to the QP floor (mr_qpout.h). */
#include <string.h>

#include "mr_err.h"
#include "mr_qpout.h"
#include "mr_ring.h"

int mr_qpout_alloc(struct mr_qpout *o, const struct mr_mem *mem, uint32_t depth)
{
	uint32_t slots = mr_ring_slots(depth ? depth : 1);

	memset(o, 0, sizeof(*o));
	o->ev = mem->calloc(mem->user, slots, sizeof(*o->ev));
	if (!o->ev)
		return -MR_ENOMEM;
	o->mask = slots - 1;
	return 0;
}

void mr_qpout_free(struct mr_qpout *o, const struct mr_mem *mem)
{
	if (o->ev)
		mem->free(mem->user, o->ev);
	o->ev = NULL;
}

static struct mr_qpout_ev *put(struct mr_qpout *o)
{
	if (o->tail - o->head > o->mask) {
		o->overflow = 1;
		return NULL;
	}
	return &o->ev[o->tail++ & o->mask];
}

void mr_qpout_cqe(struct mr_qpout *o, const struct mr_cqe *cqe)
{
	struct mr_qpout_ev *e = put(o);

	if (!e)
		return;
	e->kind = MR_QPOUT_CQE;
	e->cqe = *cqe;
	if (cqe->is_recv)
		o->recvs++;
	else
		o->sends++;
}

void mr_qpout_sq_drained(struct mr_qpout *o)
{
	struct mr_qpout_ev *e = put(o);

	if (e)
		e->kind = MR_QPOUT_SQ_DRAINED;
}

void mr_qpout_qp_error(struct mr_qpout *o)
{
	struct mr_qpout_ev *e = put(o);

	if (e)
		e->kind = MR_QPOUT_QP_ERROR;
}

void mr_qpout_fail(struct mr_qpout *o, int notify)
{
	uint8_t f = notify ? MR_QPOUT_FAIL_NOTIFY : MR_QPOUT_FAIL;

	if (f > o->fail)
		o->fail = f;
}

int mr_qpout_next(struct mr_qpout *o, struct mr_qpout_ev *ev)
{
	if (o->head == o->tail)
		return 0;
	/* Taken out before it is delivered: its room is free in its
	 * callback, the room of those behind it is not. */
	*ev = o->ev[o->head++ & o->mask];
	if (ev->kind == MR_QPOUT_CQE) {
		if (ev->cqe.is_recv)
			o->recvs--;
		else
			o->sends--;
	}
	return 1;
}

enum mr_qpout_fail mr_qpout_take_fail(struct mr_qpout *o)
{
	enum mr_qpout_fail f = (enum mr_qpout_fail)o->fail;

	if (o->overflow)
		f = MR_QPOUT_FAIL_NOTIFY;
	o->fail = MR_QPOUT_FAIL_NONE;
	o->overflow = 0;
	return f;
}
