/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The endpoint's timer queue: an indexed binary min-heap of intrusive
 * entries keyed by an absolute deadline (ns). The earliest deadline is
 * read in O(1); setting, moving or removing an entry is O(log n); an
 * entry knows its own heap position, so no search is ever needed (the
 * shape of ngtcp2's pq). A leaf module: it knows nothing of QPs; the
 * endpoint embeds one entry per QP and keys it by the QP's next deadline
 * (mr_ep.c), so mr_ep_next_deadline() reads the top and
 * mr_ep_handle_expiry() visits only the QPs that are due.
 *
 * Ties are broken by heap position, which depends only on the order of
 * the calls: the same sequence of calls gives the same order (the
 * simulator's determinism rests on it).
 *
 * Memory: the position array is allocated once (mr_timerq_init) for at
 * most cap entries; nothing is allocated afterwards. Not thread-safe
 * (the endpoint's caller serialises, mr_core.h).
 */
#ifndef MR_TIMERQ_H
#define MR_TIMERQ_H

#include <stdint.h>

#include "mr_core.h"

#define MR_TIMERQ_NONE UINT32_MAX /* entry not in the queue */

struct mr_timerq_entry {
	uint64_t at;  /* deadline while queued */
	uint32_t pos; /* index in the heap, MR_TIMERQ_NONE if not queued */
};

struct mr_timerq {
	struct mr_timerq_entry **heap; /* [cap], heap[0] is the earliest */
	uint32_t n, cap;
	struct mr_mem mem;
};

/* Allocate room for cap entries. 0, -MR_EINVAL (cap 0, no mem), or
 * -MR_ENOMEM. */
int mr_timerq_init(struct mr_timerq *q, const struct mr_mem *mem, uint32_t cap);
/* Release the heap (entries are the caller's). Safe on a zeroed queue. */
void mr_timerq_fini(struct mr_timerq *q);

/* Make an entry known to no queue (call once before its first use). */
static inline void mr_timerq_entry_init(struct mr_timerq_entry *e)
{
	e->at = UINT64_MAX;
	e->pos = MR_TIMERQ_NONE;
}

/* Key e by at: insert it, move it, or (at == UINT64_MAX) remove it.
 * -MR_ENOMEM if it is not queued and the queue already holds cap
 * entries (nothing changes). */
int mr_timerq_set(struct mr_timerq *q, struct mr_timerq_entry *e, uint64_t at);

/* Remove e if it is queued. */
void mr_timerq_remove(struct mr_timerq *q, struct mr_timerq_entry *e);

/* The earliest entry, or NULL if empty. */
static inline struct mr_timerq_entry *mr_timerq_top(const struct mr_timerq *q)
{
	return q->n ? q->heap[0] : (struct mr_timerq_entry *)0;
}

/* The earliest deadline, UINT64_MAX if empty. */
static inline uint64_t mr_timerq_next(const struct mr_timerq *q)
{
	return q->n ? q->heap[0]->at : UINT64_MAX;
}

static inline uint32_t mr_timerq_len(const struct mr_timerq *q)
{
	return q->n;
}

/* 1 if every entry's position is right and the heap order holds (tests
 * and the endpoint's self-check). */
int mr_timerq_valid(const struct mr_timerq *q);

#endif /* MR_TIMERQ_H */
