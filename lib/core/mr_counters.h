/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Counters of the transport engine, per QP and per endpoint (the
 * endpoint's are the sum over its QPs plus drops that match no QP). Every
 * field only grows; readers take a snapshot with memcpy.
 *
 * One table (MR_COUNTERS below) names every counter once, with one line of
 * help: the struct, the names (mr_counters_names(): what metaroce-ctl
 * stats prints and the stats file's JSON holds) and the help text
 * (mr_counters_help(): the # HELP lines of metaroce-ctl stats --prom) are
 * all made from it. A new counter is one X(...) row.
 */
#ifndef MR_COUNTERS_H
#define MR_COUNTERS_H

#include <stdint.h>

#include "mr_wire.h"

#define MR_NAK_CODES 6	/* enum mr_nak_code 0..5 (0 unused) */
#define MR_PARSE_ERRS 6 /* enum mr_parse_err 0..5 (0 unused) */

/* Suffixes of the per-code arrays, in enum order: S(base, suffix). */
#define MR_NAK_CODE_SUFFIXES(S, base) \
	S(base, none)                 \
	S(base, seq_err)              \
	S(base, rnr) S(base, rem_access) S(base, inv_req) S(base, rem_op)
#define MR_PARSE_ERR_SUFFIXES(S, base) \
	S(base, ok)                    \
	S(base, short)                 \
	S(base, version) S(base, opcode) S(base, icrc) S(base, field)

/*
 * X(name, help): one counter. XA(name, n, SUFFIXES, help): an array of n
 * counters named name_<suffix> (SUFFIXES lists them in index order).
 */
#define MR_COUNTERS(X, XA)                                                     \
	/* traffic */                                                          \
	X(tx_pkts, "packets sent")                                             \
	X(tx_bytes, "packet bytes sent, BTH to ICRC")                          \
	X(rx_pkts, "packets received")                                         \
	X(rx_bytes, "packet bytes received")                                   \
	X(tx_data_pkts, "requests and responses sent, first sends")            \
	X(tx_ack_pkts, "ACKs and NAKs sent")                                   \
	X(ack_req_waits, "ACK requests whose ACK waited for the messages "     \
			 "behind them (MR-RSP-12)")                            \
	X(rx_data_pkts, "requests and responses received")                     \
	X(rx_ack_pkts, "ACKs and NAKs received")                               \
	X(tx_payload_bytes, "payload bytes sent")                              \
	X(rx_payload_bytes, "payload bytes placed (not duplicates)")           \
	/* reliability */                                                      \
	X(retx_pkts, "retransmissions of any cause")                           \
	X(sack_holes, "packets declared lost from a SACK hole")                \
	X(timeouts, "retransmission timeouts")                                 \
	X(duplicates, "received packets already received")                     \
	X(rnr_waits, "RNR NAKs acted on")                                      \
	X(gbn_rewinds, "go-back-N restarts (gbn mode)")                        \
	X(ecn_ce_rcvd, "CE-marked packets received")                           \
	X(ecn_ce_echoed, "CE marks the peer reported back")                    \
	XA(nak_sent, MR_NAK_CODES, MR_NAK_CODE_SUFFIXES, "NAKs sent, by code") \
	XA(nak_rcvd, MR_NAK_CODES, MR_NAK_CODE_SUFFIXES,                       \
	   "NAKs received, by code")                                           \
	/* messages */                                                         \
	X(msgs_sent, "requests completed at the requester")                    \
	X(msgs_rcvd, "requests completed at the responder")                    \
	X(reads_executed, "READ requests executed")                            \
	X(atomics_executed, "atomic requests executed")                        \
	X(held_last, "final WRITE packets held for visibility")                \
	X(cqe_ok, "successful completions")                                    \
	X(cqe_err, "completions with an error status")                         \
	/* drops by reason */                                                  \
	XA(drop_parse, MR_PARSE_ERRS, MR_PARSE_ERR_SUFFIXES,                   \
	   "packets dropped by the parser, by reason")                         \
	X(drop_unknown_qp, "packets for no QP of ours")                        \
	X(drop_bad_state, "packets the QP's state does not take")              \
	X(drop_qkey, "UD packets with the wrong qkey")                         \
	X(drop_window, "packets with ssn or msn outside the window")           \
	X(drop_invalid, "packets with fields inconsistent with the message")   \
	X(drop_unexpected, "opcodes the QP's type or role does not take")      \
	X(drop_no_slot, "final WRITE packets with no hold slot")               \
	X(drop_rnr, "SENDs with no receive WQE (RNR NAKed)")                   \
	X(drop_access, "remote access violations (NAKed)")                     \
	X(drop_ud_len, "UD messages larger than the receive WQE")              \
	X(drop_peer_addr, "RC packets from an address not the peer's")         \
	/* multipath */                                                        \
	X(path_suspects, "paths gone silent while others progressed "          \
			 "(MR-MP-8)")                                          \
	X(path_suspects_false, "suspicions proved false: a packet declared "   \
			       "lost by one was ACKed late (MR-MP-8)")         \
	X(tail_probes, "tail-loss probes: the newest packet resent after a "   \
		       "probe timeout of silence (MR-TMR-9)")                  \
	X(probes_sent, "data-free path and plane probes sent (MR-PM-2)")       \
	X(probes_rcvd, "probes answered as receiver (MR-PRB-3)")               \
	X(paths_back, "probing paths that answered (MR-PM-3)")                 \
	X(planes_down, "planes marked down (MR-PM-4)")                         \
	X(planes_up, "down planes that answered (MR-PM-6)")                    \
	X(path_redraws, "paths re-drawn for ECN, loss or RTT (MR-PM-8)")

#define MR_COUNTERS_FIELD(name, help) uint64_t name;
#define MR_COUNTERS_ARRAY(name, n, suffixes, help) uint64_t name[n];
struct mr_counters {
	MR_COUNTERS(MR_COUNTERS_FIELD, MR_COUNTERS_ARRAY)
};
#undef MR_COUNTERS_FIELD
#undef MR_COUNTERS_ARRAY

#define MR_COUNTERS_N (sizeof(struct mr_counters) / sizeof(uint64_t))

/* Names of the counters, in struct order (array fields get their
 * suffixes: "nak_sent_rnr", ...), MR_COUNTERS_N entries. */
const char *const *mr_counters_names(void);

/* One line of help per counter, the same order (an array's entries share
 * their array's). */
const char *const *mr_counters_help(void);

#endif /* MR_COUNTERS_H */
