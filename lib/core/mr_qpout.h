/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the QP parts (requester, responder, datagrams, local send WRs)
 * return to the QP floor (docs/architecture.md, "lib/core in floors"):
 * the completions they produced, the end of an SQ drain, and a failure.
 * A leaf: a FIFO the parts fill while an entry point runs and the QP
 * floor empties (mr_qp_settle) before that entry point returns, stamping
 * and delivering each completion in the order it was produced, then
 * moving a failed QP to ERR. No part calls up into the QP.
 *
 * Order and room are those of delivering at once (MR-ERR-1, MR-ORD-1):
 * a completion queued here still holds its WQE's room (sends, recvs),
 * as the WQEs behind the one being delivered did when parts called the
 * QP directly, so a post made from a completion callback sees the same
 * queue it saw then, and the FIFO never holds more than a QP's queues:
 * every send WR (max_send_wr), every own receive WQE or SRQ claim (one
 * per message record), the flushes of those, one SQ-drained event and
 * one QP-error event.
 *
 * A completion callback that re-enters the core on the same QP (a post
 * from the callback) does not deliver from inside that callback: the
 * delivery running below it on the stack goes on in order once the
 * callback returns, so callbacks never nest, as when parts called up.
 */
#ifndef MR_QPOUT_H
#define MR_QPOUT_H

#include <stdint.h>

#include "mr_core.h"

enum mr_qpout_kind {
	MR_QPOUT_CQE = 0,	 /* deliver cqe */
	MR_QPOUT_SQ_DRAINED = 1, /* SQD reached with nothing in flight */
	MR_QPOUT_QP_ERROR = 2,	 /* the async fatal event, after flushes */
};

/* Failure the QP floor acts on (enum, kept in mr_qpout.fail). */
enum mr_qpout_fail {
	MR_QPOUT_FAIL_NONE = 0,
	/* Enter ERR; an error completion said why (MR-ERR-1, -2, -3). */
	MR_QPOUT_FAIL = 1,
	/* Enter ERR with the async fatal event: no CQE can say why
	 * (MR-ERR-6, MR-ERR-8). */
	MR_QPOUT_FAIL_NOTIFY = 2,
};

struct mr_qpout_ev {
	struct mr_cqe cqe;
	uint8_t kind; /* enum mr_qpout_kind */
};

struct mr_qpout {
	struct mr_qpout_ev *ev; /* [mask + 1] */
	uint32_t mask;
	uint32_t head, tail; /* free-running (mr_ring.h) */
	uint32_t sends;	     /* queued send-queue completions */
	uint32_t recvs;	     /* queued receive completions */
	uint8_t fail;	     /* enum mr_qpout_fail, the worst reported */
	uint8_t overflow;    /* a completion found no room (never, if the
			      * bound above holds): the QP fails */
	uint8_t busy;	     /* the QP floor is delivering (mr_qp_settle) */
};

/* Room for depth events (rounded up to a power of two). */
int mr_qpout_alloc(struct mr_qpout *o, const struct mr_mem *mem,
		   uint32_t depth);
void mr_qpout_free(struct mr_qpout *o, const struct mr_mem *mem);

/* A completion to deliver (qp_user, qp_num are the QP floor's). */
void mr_qpout_cqe(struct mr_qpout *o, const struct mr_cqe *cqe);
void mr_qpout_sq_drained(struct mr_qpout *o);
void mr_qpout_qp_error(struct mr_qpout *o);
/* The QP must enter ERR (notify: with the async fatal event). Parts that
 * report it stop as they would in ERR (mr_qp_failed()). */
void mr_qpout_fail(struct mr_qpout *o, int notify);

/* The oldest event into *ev: 1, or 0 when none is left. */
int mr_qpout_next(struct mr_qpout *o, struct mr_qpout_ev *ev);
/* The failure reported since the last call (and clears it). */
enum mr_qpout_fail mr_qpout_take_fail(struct mr_qpout *o);

#endif /* MR_QPOUT_H */
