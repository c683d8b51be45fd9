// SPDX-License-Identifier: BSD-2-Clause
/*
 * ATOMIC WRITE: what differs from the other atomics (mr_atomicw.h,
 * docs/spec/transport.md MR-AW-*).
 */
#include <string.h>

#include "mr_atomicw.h"
#include "mr_engine.h"

int mr_atomicw_check_wr(enum mr_qp_type type, const struct mr_send_wr *wr,
			uint64_t len)
{
	/* MR-AW-1: RC only (IBTA defines it for RC and XRC); exactly the 8
	 * bytes, or none with the value in wr->swap. An unaligned remote
	 * address is the responder's to refuse (MR-AW-4), as with rxe. */
	if (type != MR_QPT_RC)
		return -MR_EINVAL;
	if (wr->num_sge ? len != MR_WIRE_ATOMIC_LEN
			: (wr->flags & MR_SEND_INLINE) != 0)
		return -MR_EINVAL;
	return 0;
}

int mr_atomicw_capture(struct mr_qp *qp, const struct mr_send_wr *wr,
		       struct mr_swqe *w)
{
	uint8_t b[MR_WIRE_ATOMIC_LEN];

	if (!wr->num_sge)
		memcpy(b, &wr->swap, sizeof(b));
	else if (w->is_inline)
		memcpy(b, w->inl, sizeof(b)); /* post copied it (MR-REQ-2) */
	else if (mr_sge_gather(MR_QP_MEM(qp), wr->sg_list, wr->num_sge, 0, b,
			       sizeof(b)))
		return -MR_EACCESS;
	/* Taken now, as inline data is: a retransmission sends the same
	 * bytes even if the application changed its buffer meanwhile. */
	memcpy(&w->swap, b, sizeof(b));
	w->num_sge = 0;
	w->is_inline = 0;
	w->len = MR_WIRE_ATOMIC_LEN;
	return 0;
}

uint64_t mr_atomicw_wire_value(const struct mr_swqe *w)
{
	uint8_t b[MR_WIRE_ATOMIC_LEN];

	memcpy(b, &w->swap, sizeof(b));
	return mr_get64(b); /* put64 at the responder gives the same bytes */
}

uint8_t mr_atomicw_check(const struct mr_qp *qp, const struct mr_pkt *pkt,
			 uint8_t **host)
{
	/* MR-AW-4: misaligned is an invalid request; then REMOTE_WRITE on
	 * the QP and on the key over the 8 bytes. */
	if (pkt->atom.vaddr & 7)
		return MR_NAK_INV_REQ;
	if (!(qp->attr.access & MR_ACCESS_REMOTE_WRITE) ||
	    mr_qp_lookup(qp, pkt->atom.rkey, 1, pkt->atom.vaddr,
			 MR_WIRE_ATOMIC_LEN, MR_ACCESS_REMOTE_WRITE, host))
		return MR_NAK_REM_ACCESS;
	return 0;
}

int mr_atomicw_execute(struct mr_qp *qp, const struct mr_rmsg *e,
		       struct mr_resp_rec *r)
{
	uint8_t b[MR_WIRE_ATOMIC_LEN], *host;
	uint64_t v;

	/* Looked up again: a window may have been invalidated since the
	 * packet was checked (MR-MW-6). */
	if (mr_qp_lookup(qp, e->rkey, 1, e->vaddr, MR_WIRE_ATOMIC_LEN,
			 MR_ACCESS_REMOTE_WRITE, &host))
		return -MR_EACCESS;
	mr_put64(b, e->swap_add);
	memcpy(&v, b, sizeof(v));
	/* MR-AW-3: one 64-bit store; a reader of the word sees the old or
	 * the new 8 bytes, never a mix. Sequentially consistent, so it is
	 * ordered after every earlier placement of this thread. */
	__atomic_store_n((uint64_t *)(void *)host, v, __ATOMIC_SEQ_CST);
	r->opcode = MR_OP_ATOMIC_RESP;
	r->len = MR_WIRE_ATOMIC_LEN;
	r->npkts = 1;
	r->orig = 0; /* MR-AW-3: nothing to return */
	MR_CNT(qp, atomics_executed, 1);
	return 0;
}
