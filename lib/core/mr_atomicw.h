/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * ATOMIC WRITE (IBTA vol. 1 annex A19, 2021; docs/spec/transport.md
 * MR-AW-*): 8 bytes placed at an 8-byte aligned remote address as one
 * 64-bit store, after every earlier message of the QP is placed.
 *
 * It rides the atomic machinery of the requester and the responder (one
 * ATOMETH packet, a response record, max_rd_atomic, fences, duplicates
 * answered from the record); what differs is here: the post checks and
 * the capture of the 8 bytes at post, the responder's access check
 * (REMOTE_WRITE, as IBTA and rxe ask, not REMOTE_ATOMIC) and the store.
 *
 * Internal to lib/core; the caller holds the endpoint (mr_core.h).
 */
#ifndef MR_ATOMICW_H
#define MR_ATOMICW_H

#include <stdint.h>

#include "mr_core.h"
#include "mr_resp.h"
#include "mr_sq.h"
#include "mr_wire.h"

struct mr_qp;

/* An opcode of the atomic family on the send queue: one ATOMETH request,
 * one ATOMIC_RESP, a READ/atomic slot (MR-REQ-8). */
static inline int mr_atomicw_is_atomic(uint8_t wr_opcode)
{
	return wr_opcode == MR_WR_ATOMIC_CMP_AND_SWP ||
	       wr_opcode == MR_WR_ATOMIC_FETCH_AND_ADD ||
	       wr_opcode == MR_WR_ATOMIC_WRITE;
}

/* The same on the wire: the requests a responder executes as atomics. */
static inline int mr_atomicw_is_atomic_op(uint8_t op)
{
	return op == MR_OP_ATOMIC_CS || op == MR_OP_ATOMIC_FA ||
	       op == MR_OP_ATOMIC_WRITE;
}

/* MR-AW-1: the post checks of an ATOMIC_WRITE WR on a QP of type `type`
 * whose SGEs total len bytes. 0 or -MR_EINVAL. */
int mr_atomicw_check_wr(enum mr_qp_type type, const struct mr_send_wr *wr,
			uint64_t len);

/* MR-AW-2: take the WR's 8 bytes into the WQE at post (from its inline
 * copy, its SGEs, or wr->swap with no SGE): w->swap holds them as they
 * lie in memory, and the WQE keeps no SGE (its response places nothing).
 * 0 or -MR_EACCESS. */
int mr_atomicw_capture(struct mr_qp *qp, const struct mr_send_wr *wr,
		       struct mr_swqe *w);

/* MR-EXT-9: ATOMETH.swap_add of the WQE: its 8 bytes in order. */
uint64_t mr_atomicw_wire_value(const struct mr_swqe *w);

/* MR-AW-4: the responder's check of an ATOMIC_WRITE packet. Returns 0
 * (*host: where the 8 bytes go) or the NAK code. */
uint8_t mr_atomicw_check(const struct mr_qp *qp, const struct mr_pkt *pkt,
			 uint8_t **host);

/* MR-AW-3, MR-AW-5: execute the message into response record r (its turn
 * came: every earlier message is complete). 0 or -MR_EACCESS (the key
 * went away since its packet was checked; nothing was written). */
int mr_atomicw_execute(struct mr_qp *qp, const struct mr_rmsg *e,
		       struct mr_resp_rec *r);

#endif /* MR_ATOMICW_H */
