/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The simulator's event list: a binary min-heap of events ordered by
 * (time in picoseconds, insertion number). The insertion number breaks
 * ties, so events at the same instant run in the order they were
 * scheduled and a run is a pure function of its scenario and seed.
 * Grows by doubling (the simulator allocates; the core does not).
 */
#ifndef MRSIM_EV_H
#define MRSIM_EV_H

#include <stdint.h>

struct mrsim_event {
	uint64_t at;  /* ps */
	uint64_t seq; /* insertion number: the tie break */
	uint32_t type;
	uint32_t arg;
	void *p;
};

struct mrsim_evq {
	struct mrsim_event *heap;
	uint64_t n, cap;
	uint64_t seq;
	uint64_t now; /* time of the event last popped */
	uint64_t popped;
};

int mrsim_evq_init(struct mrsim_evq *q);
void mrsim_evq_fini(struct mrsim_evq *q);
/* Schedule at `at` (>= now; earlier is run now). 0 or -1 (no memory). */
int mrsim_evq_push(struct mrsim_evq *q, uint64_t at, uint32_t type,
		   uint32_t arg, void *p);
/* Pop the earliest event into *e and advance now; 0, or -1 if empty. */
int mrsim_evq_pop(struct mrsim_evq *q, struct mrsim_event *e);

#endif /* MRSIM_EV_H */
