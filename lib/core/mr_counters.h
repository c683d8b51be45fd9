/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters of the transport engine, per QP and per endpoint (the
 * endpoint's are the sum over its QPs plus drops that match no QP). Every
 * field only grows; readers take a snapshot with memcpy. The names are
 * what metaroce-ctl stats prints (mr_counters_names()).
 */
#ifndef MR_COUNTERS_H
#define MR_COUNTERS_H

#include <stdint.h>

#include "mr_wire.h"

#define MR_NAK_CODES 6	/* enum mr_nak_code 0..5 (0 unused) */
#define MR_PARSE_ERRS 6 /* enum mr_parse_err 0..5 (0 unused) */

struct mr_counters {
	/* traffic */
	uint64_t tx_pkts;
	uint64_t tx_bytes; /* packet bytes, BTH to ICRC */
	uint64_t rx_pkts;
	uint64_t rx_bytes;
	uint64_t tx_data_pkts; /* requests and responses, first sends */
	uint64_t tx_ack_pkts;  /* ACK and NAK */
	uint64_t rx_data_pkts;
	uint64_t rx_ack_pkts;
	uint64_t tx_payload_bytes;
	uint64_t rx_payload_bytes; /* placed (not duplicates) */
	/* reliability */
	uint64_t retx_pkts;	/* retransmissions of any cause */
	uint64_t sack_holes;	/* packets declared lost from a SACK hole */
	uint64_t timeouts;	/* RTO expiries */
	uint64_t duplicates;	/* received packets already received */
	uint64_t rnr_waits;	/* RNR NAKs acted on */
	uint64_t gbn_rewinds;	/* gbn: go-back-N restarts */
	uint64_t ecn_ce_rcvd;	/* CE-marked packets received */
	uint64_t ecn_ce_echoed; /* CE counts reported back by the peer */
	uint64_t nak_sent[MR_NAK_CODES];
	uint64_t nak_rcvd[MR_NAK_CODES];
	/* messages */
	uint64_t msgs_sent; /* requests completed at the requester */
	uint64_t msgs_rcvd; /* requests completed at the responder */
	uint64_t reads_executed;
	uint64_t atomics_executed;
	uint64_t held_last; /* final WRITE packets held for visibility */
	uint64_t cqe_ok;
	uint64_t cqe_err; /* completions with an error status */
	/* drops by reason */
	uint64_t drop_parse[MR_PARSE_ERRS]; /* by enum mr_parse_err */
	uint64_t drop_unknown_qp;
	uint64_t drop_bad_state;  /* QP state does not take the packet */
	uint64_t drop_qkey;	  /* UD qkey mismatch */
	uint64_t drop_window;	  /* ssn or msn outside the window */
	uint64_t drop_invalid;	  /* fields inconsistent with the message */
	uint64_t drop_unexpected; /* opcode the QP type/role does not take */
	uint64_t drop_no_slot;	  /* no hold slot for a final WRITE packet */
	uint64_t drop_rnr;	  /* SEND with no receive WQE (RNR NAKed) */
	uint64_t drop_access;	  /* remote access violations (NAKed) */
	uint64_t drop_ud_len;	  /* UD message larger than the receive WQE */
	uint64_t drop_peer_addr;  /* RC: source address is not the peer's */
	/* multipath */
	uint64_t path_suspects; /* paths gone silent while others
				 * progressed (MR-MP-8) */
	uint64_t probes_sent;	/* data-free path/plane probes (MR-PM-2) */
	uint64_t probes_rcvd;	/* probes answered as receiver (MR-PRB-3) */
	uint64_t paths_back;	/* probing paths that answered (MR-PM-3) */
	uint64_t planes_down;	/* planes marked down (MR-PM-4) */
	uint64_t planes_up;	/* down planes that answered (MR-PM-6) */
	uint64_t path_redraws;	/* paths re-drawn for ECN/loss/RTT (MR-PM-8) */
};

#define MR_COUNTERS_N (sizeof(struct mr_counters) / sizeof(uint64_t))

/* Names of the counters, in struct order (array fields get "[i]"
 * suffixes: "nak_sent_rnr", ...), MR_COUNTERS_N entries. */
const char *const *mr_counters_names(void);

#endif /* MR_COUNTERS_H */
