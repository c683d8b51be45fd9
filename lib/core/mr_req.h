/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The RC requester (mr_req.c: WQEs become packets, mr_req_rx.c: ACK/NAK
 * and responses in, timers; docs/spec/transport.md MR-REQ-*, MR-ERR-*):
 * its state, struct mr_req, embedded in struct mr_qp as qp->req. Our
 * ssn space carries our requests and the responder's responses, so the
 * responder's records are sent from here too (qp->rsp.rec_send).
 */
#ifndef MR_REQ_H
#define MR_REQ_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_wire.h"

struct mr_qp;

/* What one ssn we sent carries (ring qp->txp, slot ssn % ssn_window). */
enum mr_txp_state {
	MR_TXP_OUT = 0,	  /* in flight on a path */
	MR_TXP_ACKED = 1, /* a path ACK or cum_ssn covered it */
	MR_TXP_LOST = 2,  /* waiting for retransmission */
};

enum mr_txp_kind {
	MR_TXP_REQ = 0,	 /* owner = msn of our request */
	MR_TXP_RESP = 1, /* owner = response record counter */
};

/* One per ssn of the window (ssn_window per QP): 16 bytes, the largest
 * array of a QP, so nothing in it that is not read. */
struct mr_txp {
	uint8_t state;
	uint8_t kind;
	uint8_t retx;  /* transmissions before the latest */
	uint8_t probe; /* stall probe: send even if its WQE completed */
	uint32_t owner;
	uint32_t offset;
	/* Payload bytes: a retransmission carries exactly the bytes of the
	 * first transmission, and a connection's first packets may be
	 * smaller than the MTU (MR-CC-16). */
	uint32_t plen;
};

/* Ordered by size: no padding. */
struct mr_req {
	struct mr_txp *txp;	 /* [ssn_window], slot ssn % ssn_window */
	uint64_t progress_at;	 /* time of the last forward progress */
	uint64_t stall_ref;	 /* last cum_ssn advance or stall rewind */
	uint64_t rnr_until;	 /* RNR wait: no data before this */
	uint64_t pace_at;	 /* blocked by pacing until (UINT64_MAX) */
	uint64_t cc_acked_bytes; /* accumulated by pathtx callbacks */
	uint64_t rnr_probe_at;	 /* no answer by then: probe again, a retry */
	uint64_t rnr_probe_sent; /* when the last probe left */
	uint32_t snd_rsn;	 /* rsn of the next receive-consuming request */
	uint32_t rd_out;	 /* READ/atomic started, not completed */
	uint32_t err_msn;	 /* first WQE with err set (if have_err) */
	uint32_t snd_base; /* first ssn of our stream (rsn of responses) */
	uint32_t snd_una;  /* peer's cum_ssn: ring starts here */
	uint32_t snd_nxt;
	uint32_t lost_cnt; /* txp entries in state LOST */
	uint32_t peer_cum_msn;
	uint32_t retries;   /* RTOs since the last progress */
	uint32_t retx_from; /* no LOST txp before this ssn */
	uint32_t cc_acked_pkts;
	uint32_t rnr_msn; /* message the RNR wait is for */
	/* MR-MP-8: false suspicions seen (cnt.path_suspects_false), ACKs
	 * of progress since the last one, and how far an overtaken path's
	 * silence allowance is widened: own RTT x (1 + widen/2). */
	uint64_t susp_false_seen;
	/* MR-TMR-9: progress_at when the last tail-loss probe went (one per
	 * silence: UINT64_MAX, none since the reset). */
	uint64_t tlp_progress;
	uint16_t susp_calm;
	uint8_t susp_widen;
	uint8_t have_err;
	uint8_t rnr_wait;
	/* MR-REQ-14: after the wait nothing of rnr_msn was left to resend
	 * (a WRITE_IMM whose data the peer took): send its last packet
	 * again so the peer answers (its RNR NAK again, or the ACK). */
	uint8_t rnr_probe;
	uint8_t sqd_drained; /* SQD: the drained callback was made */
};

/* Check and queue a send WR (mr_qp_post_send() is this plus queueing the
 * QP for transmit). */
int mr_req_post(struct mr_qp *qp, const struct mr_send_wr *wr, uint64_t now);
int mr_req_started(const struct mr_qp *qp, uint32_t msn);
void mr_req_mark_err(struct mr_qp *qp, uint32_t msn, enum mr_wc_status st);
void mr_req_reset(struct mr_qp *qp, uint64_t now);
/* SQD: 1 while a message started before SQD is not complete. */
int mr_req_sq_draining(const struct mr_qp *qp);
/* SQD: make the drained callback once nothing started is in flight. */
void mr_req_sqd_check(struct mr_qp *qp);
/* zc NULL: the whole packet in buf (mr_ep_tx); else mr_ep_tx_zc's form. */
size_t mr_req_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		 struct mr_tx_meta *meta, struct mr_tx_zc *zc);
int mr_req_has_data(const struct mr_qp *qp, uint64_t now);
/* mr_req_rx.c */
int mr_req_on_ack(struct mr_qp *qp, const struct mr_pkt *pkt, uint64_t now);
int mr_req_on_resp(struct mr_qp *qp, const struct mr_pkt *pkt,
		   const struct mr_rx_meta *meta, uint64_t now);
void mr_req_complete(struct mr_qp *qp);
void mr_req_flush(struct mr_qp *qp);
uint64_t mr_req_deadline(const struct mr_qp *qp);
void mr_req_expiry(struct mr_qp *qp, uint64_t now);

#endif /* MR_REQ_H */
