/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A QP's send queue (docs/spec/transport.md MR-REQ-*, MR-UD-*, MR-UC-*):
 * the ring of posted send WQEs with their SGE and inline space, shared by
 * the RC requester (mr_req.c), datagrams (mr_ud.c) and UC (mr_uc.c). A
 * leaf: the ring and its counters; what a WQE means is the sender's.
 * Counters are free-running (slot = counter & mask, mr_ring.h): head is
 * the oldest WQE not completed, next the next to start sending (= the
 * next msn), tail the next free slot.
 */
#ifndef MR_SQ_H
#define MR_SQ_H

#include <stdint.h>

#include "mr_core.h"
#include "mr_ring.h"

/* Send WQE states. */
enum mr_swqe_state {
	MR_SWQE_POSTED = 0, /* not all packets sent once */
	MR_SWQE_SENT = 1,   /* every packet sent at least once */
};

/* Fields ordered by size: no padding (one per send WR, MR-QP memory). */
struct mr_swqe {
	uint64_t wr_id;
	uint64_t remote_addr;
	uint64_t compare_add;
	uint64_t swap;
	struct mr_sge *sge; /* sq.sge + slot * max_send_sge */
	uint8_t *inl;	    /* sq.inl + slot * max_inline */
	uint32_t msn;
	uint32_t rsn;
	uint32_t len;
	uint32_t imm;
	uint32_t rkey;
	uint32_t num_sge;
	/* Packets of the message: counted in MTUs at post (UC's, mr_uc.c);
	 * RC sets it again once its last is sent, as its first packets may
	 * be smaller than the MTU (MR-CC-16). */
	uint32_t npkts;
	uint32_t sent_pkts;  /* first transmissions so far */
	uint32_t sent_off;   /* RC: payload bytes sent once so far */
	uint32_t last_off;   /* RC: offset of the last packet (once sent) */
	uint32_t resp_bytes; /* READ: response bytes placed */
	uint32_t last_ssn;   /* ssn of the last packet (once all are sent) */
	uint32_t ud_qpn, ud_qkey, ud_dest;
	uint8_t opcode; /* enum mr_wr_opcode */
	uint8_t state;
	uint8_t signaled;
	uint8_t is_inline;
	uint8_t fence;
	uint8_t solicited;
	uint8_t resp_done; /* READ/atomic: response complete */
	uint8_t rnr_count;
	uint8_t err; /* enum mr_wc_status to complete with, 0 = none */
};

struct mr_sq {
	struct mr_swqe *wqe; /* mr_ring_slots(max_send_wr) slots */
	struct mr_sge *sge;
	uint8_t *inl;
	uint32_t mask;
	uint32_t head; /* oldest not completed */
	uint32_t next; /* next WQE to start sending (= next msn) */
	uint32_t tail; /* next free */
};

static inline struct mr_swqe *mr_sq_at(const struct mr_sq *sq, uint32_t i)
{
	return &sq->wqe[i & sq->mask];
}

/* max_wr WQEs of max_sge SGEs and max_inline inline bytes each. */
int mr_sq_alloc(struct mr_sq *sq, const struct mr_mem *mem, uint32_t max_wr,
		uint32_t max_sge, uint32_t max_inline);
void mr_sq_free(struct mr_sq *sq, const struct mr_mem *mem);

#endif /* MR_SQ_H */
