// SPDX-License-Identifier: BSD-2-Clause
/* The simulator's event list (mrsim_ev.h). */
#include "mrsim_ev.h"

#include <stdlib.h>
#include <string.h>

static int before(const struct mrsim_event *a, const struct mrsim_event *b)
{
	return a->at < b->at || (a->at == b->at && a->seq < b->seq);
}

int mrsim_evq_init(struct mrsim_evq *q)
{
	memset(q, 0, sizeof(*q));
	q->cap = 1024;
	q->heap = malloc(q->cap * sizeof(*q->heap));
	return q->heap ? 0 : -1;
}

void mrsim_evq_fini(struct mrsim_evq *q)
{
	free(q->heap);
	q->heap = NULL;
	q->n = q->cap = 0;
}

int mrsim_evq_push(struct mrsim_evq *q, uint64_t at, uint32_t type,
		   uint32_t arg, void *p)
{
	struct mrsim_event e = { at < q->now ? q->now : at, q->seq++, type, arg,
				 p };
	uint64_t i;

	if (q->n == q->cap) {
		struct mrsim_event *h =
			realloc(q->heap, 2 * q->cap * sizeof(*h));

		if (!h)
			return -1;
		q->heap = h;
		q->cap *= 2;
	}
	i = q->n++;
	while (i) {
		uint64_t parent = (i - 1) / 2;

		if (!before(&e, &q->heap[parent]))
			break;
		q->heap[i] = q->heap[parent];
		i = parent;
	}
	q->heap[i] = e;
	return 0;
}

int mrsim_evq_pop(struct mrsim_evq *q, struct mrsim_event *out)
{
	struct mrsim_event last;
	uint64_t i = 0;

	if (!q->n)
		return -1;
	*out = q->heap[0];
	last = q->heap[--q->n];
	for (;;) {
		uint64_t c = 2 * i + 1;

		if (c >= q->n)
			break;
		if (c + 1 < q->n && before(&q->heap[c + 1], &q->heap[c]))
			c++;
		if (!before(&q->heap[c], &last))
			break;
		q->heap[i] = q->heap[c];
		i = c;
	}
	if (q->n)
		q->heap[i] = last;
	q->now = out->at;
	q->popped++;
	return 0;
}
