// SPDX-License-Identifier: BSD-2-Clause
/* The endpoint's timer queue: an indexed binary min-heap (mr_timerq.h). */
#include "mr_timerq.h"

#include <string.h>

int mr_timerq_init(struct mr_timerq *q, const struct mr_mem *mem, uint32_t cap)
{
	if (!q || !mem || !mem->calloc || !mem->free || !cap)
		return -MR_EINVAL;
	memset(q, 0, sizeof(*q));
	q->heap = mem->calloc(mem->user, cap, sizeof(*q->heap));
	if (!q->heap)
		return -MR_ENOMEM;
	q->cap = cap;
	q->mem = *mem;
	return 0;
}

void mr_timerq_fini(struct mr_timerq *q)
{
	if (q->heap && q->mem.free)
		q->mem.free(q->mem.user, q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

static void place(struct mr_timerq *q, uint32_t i, struct mr_timerq_entry *e)
{
	q->heap[i] = e;
	e->pos = i;
}

static void sift_up(struct mr_timerq *q, uint32_t i)
{
	struct mr_timerq_entry *e = q->heap[i];

	while (i) {
		uint32_t p = (i - 1) / 2;

		if (q->heap[p]->at <= e->at)
			break;
		place(q, i, q->heap[p]);
		i = p;
	}
	place(q, i, e);
}

static void sift_down(struct mr_timerq *q, uint32_t i)
{
	struct mr_timerq_entry *e = q->heap[i];

	for (;;) {
		uint32_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && q->heap[c + 1]->at < q->heap[c]->at)
			c++;
		if (e->at <= q->heap[c]->at)
			break;
		place(q, i, q->heap[c]);
		i = c;
	}
	place(q, i, e);
}

void mr_timerq_remove(struct mr_timerq *q, struct mr_timerq_entry *e)
{
	uint32_t i = e->pos;
	struct mr_timerq_entry *last;

	if (i == MR_TIMERQ_NONE)
		return;
	e->pos = MR_TIMERQ_NONE;
	e->at = UINT64_MAX;
	last = q->heap[--q->n];
	if (i == q->n)
		return;
	place(q, i, last);
	/* The moved entry may belong above or below its new place. */
	sift_up(q, i);
	sift_down(q, last->pos);
}

int mr_timerq_set(struct mr_timerq *q, struct mr_timerq_entry *e, uint64_t at)
{
	uint64_t old = e->at;

	if (at == UINT64_MAX) {
		mr_timerq_remove(q, e);
		return 0;
	}
	if (e->pos == MR_TIMERQ_NONE) {
		if (q->n == q->cap)
			return -MR_ENOMEM;
		e->at = at;
		place(q, q->n++, e);
		sift_up(q, e->pos);
		return 0;
	}
	e->at = at;
	if (at < old)
		sift_up(q, e->pos);
	else if (at > old)
		sift_down(q, e->pos);
	return 0;
}

int mr_timerq_valid(const struct mr_timerq *q)
{
	uint32_t i;

	for (i = 0; i < q->n; i++) {
		if (q->heap[i]->pos != i || q->heap[i]->at == UINT64_MAX)
			return 0;
		if (i && q->heap[(i - 1) / 2]->at > q->heap[i]->at)
			return 0;
	}
	return 1;
}
