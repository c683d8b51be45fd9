/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receiver-side deduplication window over the connection-wide send
 * sequence number `ssn` (BTH.ssn, docs/spec/reliability.md MR-SACK-*).
 *
 * A retransmission keeps its ssn but travels with a new path/ppsn, so the
 * per-path records cannot tell a duplicate from new data: this window can.
 * It is a bitmap ring over [cum, cum + nbits): `cum` (the AETH cum_ssn) is
 * the first ssn not yet received, every ssn before it has been received.
 *
 * Contract with the sender (MR-SACK-6): a sender never transmits an ssn at
 * or beyond (oldest ssn not yet acknowledged) + nbits, with nbits agreed
 * by both ends (MR_SSNWIN_BITS(num_paths) unless configured otherwise), so
 * MR_SSNWIN_FAR only happens for a misbehaving or stale peer.
 *
 * Memory: the bitmap is allocated once at init from the injected allocator
 * and released by fini; record/test never allocate.
 * Threading: none; the caller serialises calls on one window.
 */
#ifndef MR_SSNWIN_H
#define MR_SSNWIN_H

#include <stdint.h>

#include "mr_core.h"

/* The default window: twice the packets all paths can have in flight
 * (256 per path, MR-PATH-4), so retransmissions of old ssns do not stall
 * new data immediately. Always a power of two >= 64. */
#define MR_SSNWIN_MAX_BITS (1u << 20)
#define MR_SSNWIN_BITS(num_paths) mr_ssnwin_bits_for(2u * (num_paths)*256u)

/* Outcome of mr_ssnwin_record(). */
enum mr_ssnwin_res {
	MR_SSNWIN_NEW = 0, /* first arrival: deliver/place it */
	MR_SSNWIN_DUP = 1, /* inside the window, already received: drop */
	MR_SSNWIN_OLD = 2, /* before cum: received long ago: drop (re-ACK) */
	MR_SSNWIN_FAR = 3, /* at or beyond cum + nbits: drop, not recorded */
};

struct mr_ssnwin {
	uint32_t cum;	 /* first ssn not yet received (AETH cum_ssn) */
	uint32_t nbits;	 /* window size, power of two */
	uint32_t high;	 /* one past the highest ssn recorded (>= cum) */
	uint64_t *words; /* nbits / 64 words; bit (ssn & (nbits-1)) */
	struct mr_mem mem;
};

/* Smallest power of two >= max(n, 64), capped at MR_SSNWIN_MAX_BITS. */
uint32_t mr_ssnwin_bits_for(uint32_t n);

/* Allocate a window of nbits (rounded up by mr_ssnwin_bits_for) starting
 * at init_ssn (the peer's initial ssn, e.g. rq_psn). Returns 0,
 * -MR_EINVAL (nbits 0 or > MR_SSNWIN_MAX_BITS, NULL mem) or -MR_ENOMEM. */
int mr_ssnwin_init(struct mr_ssnwin *w, const struct mr_mem *mem,
		   uint32_t init_ssn, uint32_t nbits);

/* Release the bitmap. Safe on a zeroed or already released window. */
void mr_ssnwin_fini(struct mr_ssnwin *w);

/* Forget everything and restart at init_ssn (QP reset / modify to RTR);
 * keeps the memory. */
void mr_ssnwin_reset(struct mr_ssnwin *w, uint32_t init_ssn);

/* Record the arrival of ssn. NEW marks it received and advances cum over
 * every consecutive received ssn. Returns an enum mr_ssnwin_res. */
enum mr_ssnwin_res mr_ssnwin_record(struct mr_ssnwin *w, uint32_t ssn);

/* 1 if ssn has been received (before cum, or marked in the window). ssn
 * beyond the window: 0. Does not change the window. */
int mr_ssnwin_test(const struct mr_ssnwin *w, uint32_t ssn);

static inline uint32_t mr_ssnwin_cum(const struct mr_ssnwin *w)
{
	return w->cum;
}

#endif /* MR_SSNWIN_H */
