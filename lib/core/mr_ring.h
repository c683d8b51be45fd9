/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Rings indexed by a free-running 32-bit counter (send queue = msn,
 * receive queue = rsn, SRQ, response records) have a power-of-two number
 * of slots, at least the depth asked for: slot = counter & (slots - 1)
 * then steps from the last slot to the first as the counter wraps from
 * 2^32 - 1 to 0, because 2^32 is a multiple of the ring's size. With
 * counter % depth and a depth that is not a power of two (max_send_wr =
 * 3) the wrap skipped back onto a live slot. Occupancy (tail - head)
 * stays limited to the depth.
 */
#ifndef MR_RING_H
#define MR_RING_H

#include <stdint.h>

static inline uint32_t mr_ring_slots(uint32_t depth)
{
	uint32_t n = 1;

	while (n < depth)
		n <<= 1;
	return n;
}

#endif /* MR_RING_H */
