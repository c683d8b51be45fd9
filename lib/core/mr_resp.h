/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The responder and the receive side of an RC QP (mr_resp.c,
 * docs/spec/transport.md MR-RSP-*, MR-ORD-*, MR-ACK-*): its state, struct
 * mr_resp, embedded in struct mr_qp as qp->rsp and touched only by
 * mr_resp.c, the QP's lifetime (mr_qp.c), the requester's sending of
 * response records (mr_req.c, mr_req_rx.c) and the deadline (mr_ep.c).
 * It reads one field of the requester, qp->req.snd_nxt (MR-RSP-12).
 */
#ifndef MR_RESP_H
#define MR_RESP_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_pathrx.h"
#include "mr_ratehint.h"
#include "mr_rq.h"
#include "mr_ssnwin.h"
#include "mr_wire.h"

struct mr_qp;

/* A READ or atomic the responder executed: its response is sent from here
 * and retransmitted from here (never executed twice, MR-RSP-6). */
struct mr_resp_rec {
	uint8_t opcode; /* MR_OP_READ_RESP or MR_OP_ATOMIC_RESP */
	uint32_t msn;
	uint32_t len;
	uint64_t vaddr;
	uint32_t rkey;
	uint64_t orig;	   /* atomic: the value before the operation */
	uint32_t last_ssn; /* ssn of the last packet's first sending */
	uint32_t npkts;
	uint32_t sent_pkts;
};

/* Receiver's record of one incoming request message (ring qp->rmsg, slot
 * msn % msg_window, valid for msns in [rcv_msn, rcv_msn + msg_window)). */
struct mr_rmsg {
	uint8_t used;
	uint8_t opcode; /* wire opcode */
	uint8_t solicited;
	uint8_t err;  /* enum mr_nak_code the message failed with */
	uint8_t got;  /* any packet accepted */
	uint8_t held; /* final packet in a hold slot */
	uint8_t rnr;  /* WRITE_IMM complete but no receive WQE yet */
	uint8_t hold_idx;
	uint32_t msn;
	uint32_t msg_len;
	uint32_t bytes; /* accepted payload bytes */
	uint32_t rsn;
	uint32_t imm;
	uint32_t rkey; /* here, not after vaddr: no padding (64 bytes) */
	uint64_t vaddr;
	uint64_t swap_add, compare;
	struct mr_rwqe *rwqe; /* SEND: the receive WQE it lands in */
};

struct mr_hold {
	uint8_t used;
	uint32_t msn;
	uint32_t len;
	uint8_t *dst;
	uint8_t *data; /* mtu bytes */
};

/* Ordered by size: no padding. */
struct mr_resp {
	struct mr_ssnwin win;  /* dedup of the peer's ssn space */
	struct mr_pathrx *prx; /* [npaths] */
	struct mr_rmsg *rmsg;  /* [msg_window], slot msn % msg_window */
	struct mr_hold *hold;  /* [hold_slots] */
	uint8_t *hold_mem;
	/* Responses (our sender side of the peer's READ/atomic). */
	struct mr_resp_rec *rec;
	struct mr_ratehint_conn rh;
	uint64_t ack_due;  /* delayed ACK deadline, UINT64_MAX none */
	uint32_t rcv_msn;  /* every message before it complete */
	uint32_t rec_max;  /* records usable at once */
	uint32_t rec_mask; /* mr_ring_slots(rec_max) - 1 */
	uint32_t rec_head, rec_send, rec_tail; /* counters */
	uint32_t rnr_nak_msn;
	uint32_t rx_err_msn;
	/* MR-RSP-12: qp->req.snd_nxt when the last ACK_REQ came (it moved
	 * since: this side answers, the ACK goes at once) */
	uint32_t ack_req_nxt;
	uint16_t ack_pkts; /* data packets since the last ACK */
	uint16_t last_rx_path;
	uint16_t ack_path_next; /* MR-MP-7: next path to report on first */
	uint8_t ack_now;	/* send an ACK at the next tx opportunity */
	uint8_t ack_req;	/* an ACK_REQ waits in ack_due (MR-RSP-8) */
	uint8_t ack_sent;	/* an ACK went since the last reset */
	uint8_t rnr_nak;	/* include an RNR NAK */
	uint8_t seq_nak_sent;	/* gbn: SEQ_ERR sent for the current gap */
	uint8_t seq_nak;	/* gbn: include a SEQ_ERR NAK */
	uint8_t rx_started;	/* a packet of the peer was recorded */
	uint8_t rx_err;		/* a request failed: every ACK NAKs it */
	uint8_t rx_err_code;	/* enum mr_nak_code */
};

/* Sized from the endpoint's configuration (records, per-path receivers,
 * message records, hold slots, dedup window); freed by mr_resp_free()
 * (also after a failed alloc). */
int mr_resp_alloc(struct mr_qp *qp);
void mr_resp_free(struct mr_qp *qp);
/* mr_qp_seq_base(): nothing received or executed yet; move the counters. */
int mr_resp_idle(const struct mr_qp *qp);
void mr_resp_set_base(struct mr_qp *qp, uint32_t base);
/* MR-ERR-8: the peer's requester is gone (our responses went unanswered
 * through every retry): NAK REM_OP for its request if it asks again. */
void mr_resp_peer_gone(struct mr_qp *qp);
void mr_resp_reset(struct mr_qp *qp);
void mr_resp_rebase(struct mr_qp *qp, uint32_t base);
int mr_resp_on_req(struct mr_qp *qp, const struct mr_pkt *pkt,
		   const struct mr_rx_meta *meta, uint64_t now);
/* Receive-side sequence checks shared by requests and responses:
 * returns MR_RX_NEW (caller validates, then mr_rx_accept() or
 * mr_rx_path_only()), MR_RX_DUP (handled: path recorded, ACK scheduled)
 * or a negative drop reason (counted). */
enum { MR_RX_NEW = 0, MR_RX_DUP = 1 };
int mr_rx_check(struct mr_qp *qp, const struct mr_pkt *pkt,
		const struct mr_rx_meta *meta, uint64_t now);
void mr_rx_accept(struct mr_qp *qp, const struct mr_pkt *pkt,
		  const struct mr_rx_meta *meta, uint64_t now);
/* The packet arrived but is not accepted (RNR, NAKed): record its path
 * only, so the sender's path sees no loss, and ACK now. */
void mr_rx_path_only(struct mr_qp *qp, const struct mr_pkt *pkt,
		     const struct mr_rx_meta *meta, uint64_t now);
/* Complete what is complete, in msn order (completions into qp->out).
 * A receive that fails (MR-ERR-3) reports the failure there
 * (mr_qpout_fail): the caller returns, and the QP floor moves the QP to
 * ERR. */
void mr_resp_advance(struct mr_qp *qp, uint64_t now);
size_t mr_resp_ack(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		   struct mr_tx_meta *meta);
int mr_resp_ack_wanted(const struct mr_qp *qp, uint64_t now);
void mr_resp_flush(struct mr_qp *qp);

#endif /* MR_RESP_H */
