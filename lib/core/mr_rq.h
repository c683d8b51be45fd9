/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receive queues (docs/spec/transport.md MR-RSP-3, MR-RSP-4, MR-ERR-4):
 * the WQE ring of an own receive queue or an SRQ, and a QP's part of the
 * receive side (struct mr_rq: which WQE the n-th receive-consuming
 * message lands in). A leaf: it knows no QP, calls nothing above it and
 * returns what happened (a WQE, NULL, a flushed wr_id) for the QP to act
 * on. Only the SRQ limit event goes out, through the embedder's
 * callback, the moment a WQE is taken (verbs' semantics).
 *
 * A SEND packet may arrive before every earlier message: it names its
 * receive WQE by rsn. With an own RQ, WQE number rsn is simply the rsn-th
 * posted one. With an SRQ other QPs take WQEs too, so a QP takes SRQ WQEs
 * in rsn order into its claim table the first time a packet needs one
 * (claim_next), which keeps "the n-th receive-consuming message gets the
 * n-th WQE this QP took" and completions in message order.
 */
#ifndef MR_RQ_H
#define MR_RQ_H

#include <stdint.h>

#include "mr_be.h"
#include "mr_core.h"
#include "mr_ring.h"

struct mr_rwqe {
	uint64_t wr_id;
	uint32_t num_sge;
	uint64_t total; /* sum of SGE lengths */
	struct mr_sge *sge;
};

/* A FIFO ring of posted WQEs (own receive queue or SRQ). */
struct mr_rq_ring {
	uint32_t max_wr, max_sge;
	uint32_t mask;	     /* mr_ring_slots(max_wr) - 1 */
	uint32_t head, tail; /* counters; slot = counter & mask */
	struct mr_rwqe *wqe;
	struct mr_sge *sge;
};

struct mr_srq {
	struct mr_ep *ep;
	const struct mr_callbacks *cb; /* srq_limit (the endpoint's) */
	struct mr_srq_config cfg;
	struct mr_rq_ring ring;
	uint32_t limit;	  /* 0 = not armed */
	uint32_t users;	  /* QPs attached */
	uint32_t blocked; /* QPs with wimm_blocked set */
};

/* A QP's receive WQEs: its own ring, or its claims on an SRQ. */
struct mr_rq {
	struct mr_rq_ring own; /* srq == NULL */
	struct mr_srq *srq;
	struct mr_rwqe *claim; /* SRQ, RC: WQEs taken for rsn (window) */
	struct mr_sge *claim_sge;
	uint32_t window;      /* claim slots (msg_window, a power of 2) */
	uint32_t claim_next;  /* next rsn to take an SRQ WQE for */
	uint32_t rcv_rsn;     /* receive WQEs consumed by completed msgs */
	uint8_t wimm_blocked; /* next message: WRITE_IMM without a WQE */
};

static inline struct mr_rwqe *mr_rq_wqe(const struct mr_rq_ring *r, uint32_t i)
{
	return &r->wqe[i & r->mask];
}

int mr_rq_ring_alloc(const struct mr_mem *mem, struct mr_rq_ring *r,
		     uint32_t max_wr, uint32_t max_sge);
void mr_rq_ring_free(const struct mr_mem *mem, struct mr_rq_ring *r);
/* Copy a receive WR into a ring after checking its SGEs against the
 * memory of protection domain pd (MR-RSP-3). held: WQEs consumed whose
 * completion is not delivered yet, which still take room. */
int mr_rq_ring_push(const struct mr_memreg *reg, uint32_t pd,
		    struct mr_rq_ring *r, uint32_t held,
		    const struct mr_recv_wr *wr);
/* SRQ: fire the limit event if the SRQ fell below an armed limit. */
void mr_srq_check_limit(struct mr_srq *srq);

/* A QP's part: srq NULL allocates an own ring of max_wr x max_sge. An RC
 * QP on an SRQ then gets window claim slots (UD takes SRQ WQEs in arrival
 * order and has none). */
int mr_rq_init(struct mr_rq *rq, const struct mr_mem *mem, struct mr_srq *srq,
	       uint32_t max_wr, uint32_t max_sge);
int mr_rq_init_claims(struct mr_rq *rq, const struct mr_mem *mem,
		      uint32_t window);
void mr_rq_fini(struct mr_rq *rq, const struct mr_mem *mem);
/* RESET: the own ring empties. */
void mr_rq_reset(struct mr_rq *rq);
/* INIT->RTR: the receive sequence (rsn, claims) starts again at 0. */
void mr_rq_rx_reset(struct mr_rq *rq);
/* 1 if nothing was posted to the own ring or claimed (mr_qp_seq_base). */
int mr_rq_idle(const struct mr_rq *rq);
void mr_rq_set_base(struct mr_rq *rq, uint32_t base);
int mr_rq_push(struct mr_rq *rq, const struct mr_memreg *reg, uint32_t pd,
	       uint32_t held, const struct mr_recv_wr *wr);

/* MR-RSP-3: rsn may name a WQE of this QP: not one a completed message
 * consumed, nor beyond the claim window (window = msg_window). */
static inline int mr_rq_rsn_valid(const struct mr_rq *rq, uint32_t rsn,
				  uint32_t window)
{
	return !mr_seq_lt(rsn, rq->rcv_rsn) && rsn - rq->rcv_rsn < window;
}

/* The receive WQE for rsn (taking SRQ WQEs in rsn order), or NULL. */
struct mr_rwqe *mr_rq_for_rsn(struct mr_rq *rq, uint32_t rsn);
/* Consume the WQE of rsn (its message completed). */
void mr_rq_consume(struct mr_rq *rq, uint32_t rsn);
/* The next rsn to consume. */
static inline uint32_t mr_rq_next_rsn(const struct mr_rq *rq)
{
	return rq->rcv_rsn;
}

/* A WRITE_IMM complete but without a WQE (the SRQ counts such QPs, so a
 * post to it knows whom to wake). */
void mr_rq_set_blocked(struct mr_rq *rq, int on);

/* UD: the next WQE in arrival order, consumed. Copies into *out. */
int mr_rq_take(struct mr_rq *rq, struct mr_rwqe *out, struct mr_sge *sge);
/* UC: the oldest WQE (of an SRQ: taken as this QP's one claim) or NULL;
 * drop it once used. */
struct mr_rwqe *mr_rq_head(struct mr_rq *rq);
void mr_rq_pop(struct mr_rq *rq);

/* QP in ERR (MR-ERR-4): the next WQE this QP owns is flushed: 1 and its
 * wr_id, or 0 when none is left (SRQ WQEs not yet taken stay in the SRQ
 * for the other QPs). The QP completes each with a flush error. */
int mr_rq_flush_next(struct mr_rq *rq, uint64_t *wr_id);

#endif /* MR_RQ_H */
