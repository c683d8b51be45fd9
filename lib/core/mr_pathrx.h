/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receiver side of one path (docs/spec/reliability.md MR-PATH-*, MR-SACK-*).
 *
 * Records which per-path sequence numbers (PTH.ppsn) arrived on one path
 * and produces that path's SACK block for the next ACK: cum_ppsn = the
 * first ppsn not received, bitmap bit i (byte i/8, bit i%8, LSB first) =
 * ppsn cum_ppsn + 1 + i arrived, exactly as struct mr_sack_block in
 * mr_wire.h.
 *
 * A lost packet is retransmitted with a NEW ppsn (often on another path),
 * so a hole on a path may never fill. The sender keeps at most 256 ppsns
 * in flight per path counted from its oldest unsettled one (MR-PATH-4);
 * hence when a ppsn arrives beyond cum_ppsn + 256 every ppsn at or below
 * ppsn - 256 is already settled at the sender (acked or declared lost),
 * and the receiver slides the window forward over the holes (MR-SACK-4,
 * counted in `skipped`). cum_ppsn therefore means "every earlier ppsn
 * arrived or was abandoned by the sender".
 *
 * Sequence comparisons are wrap-aware (mr_be.h): ppsn may wrap past
 * 0xffffffff.
 *
 * No memory beyond the struct; no allocation. Threading: none.
 */
#ifndef MR_PATHRX_H
#define MR_PATHRX_H

#include <stdint.h>

#include "mr_wire.h"

/* Outcome of mr_pathrx_record(). Whatever the outcome, the payload's
 * fate is decided by the ssn window (mr_ssnwin.h), not here: an OLD ppsn
 * can be the late original of a packet whose retransmission has not yet
 * arrived. */
enum mr_pathrx_res {
	MR_PATHRX_NEW = 0, /* recorded; will be reported in the next SACK */
	MR_PATHRX_DUP = 1, /* this ppsn was already recorded */
	MR_PATHRX_OLD = 2, /* before cum_ppsn (arrived or abandoned) */
};

struct mr_pathrx {
	uint16_t path_id;
	uint32_t cum_ppsn; /* first ppsn not received (see above) */
	uint64_t bits[MR_SACK_BITS / 64]; /* bit i: cum_ppsn + 1 + i */
	uint32_t unacked;    /* NEW packets since the last mr_pathrx_sack() */
	uint64_t last_rx_ns; /* time of the last packet recorded (any res) */
	uint8_t plane;	     /* PTH plane of the last packet (MR-MP-7) */
	/* Counters (never reset by the module). */
	uint64_t pkts;	   /* packets recorded, any outcome */
	uint64_t dups;	   /* MR_PATHRX_DUP */
	uint64_t olds;	   /* MR_PATHRX_OLD */
	uint64_t skipped;  /* holes abandoned by a forward slide */
	uint64_t ce_total; /* CE-marked packets (blocks carry it mod 2^16) */
};

/* Start a path at init_ppsn: the first ppsn the sender will use on it
 * (every path of a connection starts at the connection's initial psn,
 * MR-PATH-2). */
void mr_pathrx_init(struct mr_pathrx *rx, uint16_t path_id, uint32_t init_ppsn);

/* Record the arrival of ppsn at now; ce = 1 if the IP header carried CE
 * (counted whatever the outcome: the mark is about the network, not the
 * data). Returns an enum mr_pathrx_res. */
enum mr_pathrx_res mr_pathrx_record(struct mr_pathrx *rx, uint32_t ppsn, int ce,
				    uint64_t now);

/* 1 if ppsn is before cum_ppsn or marked in the bitmap. */
int mr_pathrx_test(const struct mr_pathrx *rx, uint32_t ppsn);

/* Fill out (path_id, ce_cum, cum_ppsn, bitmap byte-exact per mr_wire.h) and
 * reset `unacked`. The state itself is cumulative: a lost ACK loses nothing. */
void mr_pathrx_sack(struct mr_pathrx *rx, struct mr_sack_block *out);

#endif /* MR_PATHRX_H */
