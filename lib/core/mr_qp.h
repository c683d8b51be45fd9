/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The QP floor (mr_qp.c, mr_srq.c: state machine, completions, flush,
 * ERR, the public QP and SRQ calls of mr_core.h), above the QP parts and
 * the endpoint's bookkeeping (docs/architecture.md).
 */
#ifndef MR_QP_H
#define MR_QP_H

#include "mr_engine.h"
#include "mr_sched.h"

/*
 * Unit tests only (tests/unit/test_wrap.c): put the free-running counters
 * of an RC or UD QP that has carried nothing yet (msn = send-queue index,
 * rsn = own receive-queue index, response records, the peer's cumulative
 * msn, the message and receive records, SRQ claims) at base, so that a
 * test crosses their 2^32 wrap within a few messages. Both QPs of a
 * connection must get the same base, in RTR or RTS (INIT->RTR resets the
 * receive side). -MR_ESTATE if the QP has posted or received anything.
 */
int mr_qp_seq_base(struct mr_qp *qp, uint32_t base);
/* Same for an SRQ that holds no WQE: its ring counters start at base. */
int mr_srq_seq_base(struct mr_srq *srq, uint32_t base);

/* Act on what the QP's parts returned while the entry point called them
 * (qp->out, mr_qpout.h): deliver their completions in order, then move a
 * QP whose part failed (MR-ERR-1, -2, -3, -6, -8) to ERR, flush it and
 * deliver the flushes. Every entry point that calls into a part calls
 * this before it returns. */
void mr_qp_settle(struct mr_qp *qp);

#endif /* MR_QP_H */
