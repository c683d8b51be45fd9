// SPDX-License-Identifier: BSD-2-Clause
/* Receiver side of one path: per-path SACK state (MR-SACK-1..4). */
#include "mr_pathrx.h"

#include <string.h>

#include "mr_be.h"

#define NWORDS (MR_SACK_BITS / 64)

void mr_pathrx_init(struct mr_pathrx *rx, uint16_t path_id, uint32_t init_ppsn)
{
	memset(rx, 0, sizeof(*rx));
	rx->path_id = path_id;
	rx->cum_ppsn = init_ppsn;
}

static int bit_get(const struct mr_pathrx *rx, uint32_t i)
{
	return (int)(rx->bits[i / 64] >> (i % 64) & 1);
}

/* Shift the 256-bit map towards bit 0 by n (bit i <- bit i + n). */
static void shr(struct mr_pathrx *rx, uint32_t n)
{
	uint32_t w = n / 64, b = n % 64, i;

	if (n >= MR_SACK_BITS) {
		memset(rx->bits, 0, sizeof(rx->bits));
		return;
	}
	for (i = 0; i < NWORDS; i++) {
		uint64_t lo = i + w < NWORDS ? rx->bits[i + w] : 0;
		uint64_t hi = i + w + 1 < NWORDS ? rx->bits[i + w + 1] : 0;

		rx->bits[i] = b ? (lo >> b | hi << (64 - b)) : lo;
	}
}

/* Move cum_ppsn forward by k >= 1. `recv` says whether the new cum_ppsn
 * itself has arrived; if so keep advancing over consecutive arrivals. */
static void advance(struct mr_pathrx *rx, uint32_t k, int recv)
{
	shr(rx, k);
	rx->cum_ppsn += k;
	while (recv) {
		recv = bit_get(rx, 0);
		shr(rx, 1);
		rx->cum_ppsn++;
	}
}

enum mr_pathrx_res mr_pathrx_record(struct mr_pathrx *rx, uint32_t ppsn, int ce,
				    uint64_t now)
{
	int32_t d = mr_seq_diff(ppsn, rx->cum_ppsn);
	uint32_t i;

	rx->pkts++;
	rx->last_rx_ns = now;
	if (ce)
		rx->ce_total++;
	if (d < 0) {
		rx->olds++;
		return MR_PATHRX_OLD;
	}
	if (d == 0) {
		/* cum_ppsn arrived: it is consumed, bit 0 (cum + 1) decides
		 * whether to keep going. */
		advance(rx, 1, bit_get(rx, 0));
		rx->unacked++;
		return MR_PATHRX_NEW;
	}
	if ((uint32_t)d > MR_SACK_BITS) {
		/* Beyond the bitmap: the sender has settled everything up to
		 * ppsn - 256 (MR-PATH-4), so slide over it (MR-SACK-4). The
		 * new cum_ppsn is ppsn - 256, at old bit index k - 1. */
		uint32_t k = (uint32_t)d - MR_SACK_BITS, j;
		uint32_t lim = k - 1 < MR_SACK_BITS ? k - 1 : MR_SACK_BITS;
		int recv = k - 1 < MR_SACK_BITS ? bit_get(rx, k - 1) : 0;

		/* Holes abandoned: the old cum itself plus every clear bit
		 * below the new cum (bits at or above it are re-examined by
		 * advance()). */
		rx->skipped++;
		for (j = 0; j < lim; j++)
			rx->skipped += !bit_get(rx, j);
		rx->skipped += k - 1 - lim;
		advance(rx, k, recv);
		d = mr_seq_diff(ppsn, rx->cum_ppsn);
		if (d == 0) {
			advance(rx, 1, bit_get(rx, 0));
			rx->unacked++;
			return MR_PATHRX_NEW;
		}
	}
	i = (uint32_t)d - 1;
	if (bit_get(rx, i)) {
		rx->dups++;
		return MR_PATHRX_DUP;
	}
	rx->bits[i / 64] |= 1ull << (i % 64);
	rx->unacked++;
	return MR_PATHRX_NEW;
}

int mr_pathrx_test(const struct mr_pathrx *rx, uint32_t ppsn)
{
	int32_t d = mr_seq_diff(ppsn, rx->cum_ppsn);

	if (d < 0)
		return 1;
	if (d == 0 || (uint32_t)d > MR_SACK_BITS)
		return 0;
	return bit_get(rx, (uint32_t)d - 1);
}

void mr_pathrx_sack(struct mr_pathrx *rx, struct mr_sack_block *out)
{
	uint32_t i;

	out->path_id = rx->path_id;
	out->ce_cum = (uint16_t)rx->ce_total; /* MR-ACK-11: mod 2^16 */
	out->cum_ppsn = rx->cum_ppsn;
	for (i = 0; i < MR_SACK_BYTES; i++)
		out->bitmap[i] = (uint8_t)(rx->bits[i / 8] >> (i % 8 * 8));
	rx->unacked = 0;
}
