/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Local send-queue operations: BIND_MW and LOCAL_INV (docs/spec/windows.md
 * MR-MW-6). They put nothing on the wire, so they take no msn (the msn of
 * every WQE is on the wire and the peer counts messages by it); they sit
 * in a ring of their own beside the send queue, each tagged with the msn
 * of the message posted after it (`before`). A local WR is executed when
 * the send queue reaches it (every earlier message sent in full, the QP in
 * RTS and no earlier WR failed) and completes in posting order: after the
 * messages before it, before the message after it.
 *
 * Internal to lib/core; the caller holds the endpoint (mr_core.h).
 */
#ifndef MR_SQLOCAL_H
#define MR_SQLOCAL_H

#include <stdint.h>

#include "mr_core.h"

struct mr_qp;

struct mr_lwqe {
	uint64_t wr_id;
	struct mr_mw_bind bind; /* BIND_MW */
	uint32_t inv_rkey;	/* LOCAL_INV */
	uint32_t before;	/* msn of the next message posted after it */
	uint8_t opcode;		/* MR_WR_BIND_MW or MR_WR_LOCAL_INV */
	uint8_t signaled;
	uint8_t status; /* enum mr_wc_status once executed */
};

struct mr_sqlocal {
	struct mr_lwqe *q; /* mr_ring_slots(max_send_wr) slots */
	uint32_t mask;
	uint32_t head, run, tail; /* counters: completed, executed, posted */
};

/* 1 for the opcodes handled here. */
int mr_sqlocal_is_local(unsigned opcode);

int mr_sqlocal_alloc(struct mr_qp *qp);
void mr_sqlocal_free(struct mr_qp *qp);
void mr_sqlocal_reset(struct mr_qp *qp);

/* Local WRs posted and not completed (they count against max_send_wr). */
uint32_t mr_sqlocal_count(const struct mr_qp *qp);

/* Post one (the caller checked state and room). -MR_EINVAL: the QP type
 * takes none, the memreg has no windows, or bad flags. In ERR it
 * completes at once with MR_WC_WR_FLUSH_ERR. */
int mr_sqlocal_post(struct mr_qp *qp, const struct mr_send_wr *wr);

/* Execute the local WRs the send queue has reached (after sq_next moved,
 * after a post, on the move to RTS). */
void mr_sqlocal_run(struct mr_qp *qp);

/* Complete the local WRs that precede the WQE at sq_head (all earlier
 * messages complete). Returns 1 if one failed: its error completion was
 * made and the QP entered ERR. */
int mr_sqlocal_complete(struct mr_qp *qp);

/* Flush (MR_WC_WR_FLUSH_ERR) the local WRs posted before message msn;
 * all = 1: every one left. */
void mr_sqlocal_flush(struct mr_qp *qp, uint32_t msn, int all);

#endif /* MR_SQLOCAL_H */
