// SPDX-License-Identifier: BSD-2-Clause
/* Receiver ssn deduplication window (MR-SACK-5, MR-SACK-6). */
#include "mr_ssnwin.h"

#include <string.h>

#include "mr_be.h"
#include "mr_err.h"

uint32_t mr_ssnwin_bits_for(uint32_t n)
{
	uint32_t b = 64;

	while (b < n && b < MR_SSNWIN_MAX_BITS)
		b <<= 1;
	return b;
}

int mr_ssnwin_init(struct mr_ssnwin *w, const struct mr_mem *mem,
		   uint32_t init_ssn, uint32_t nbits)
{
	uint32_t bits;

	if (!w || !mem || !mem->calloc || !mem->free || nbits == 0 ||
	    nbits > MR_SSNWIN_MAX_BITS)
		return -MR_EINVAL;
	bits = mr_ssnwin_bits_for(nbits);
	memset(w, 0, sizeof(*w));
	w->words = mem->calloc(mem->user, bits / 64, sizeof(uint64_t));
	if (!w->words)
		return -MR_ENOMEM;
	w->mem = *mem;
	w->nbits = bits;
	w->cum = init_ssn;
	w->high = init_ssn;
	return 0;
}

void mr_ssnwin_fini(struct mr_ssnwin *w)
{
	if (w->words && w->mem.free)
		w->mem.free(w->mem.user, w->words);
	w->words = NULL;
	w->nbits = 0;
}

void mr_ssnwin_reset(struct mr_ssnwin *w, uint32_t init_ssn)
{
	if (w->words)
		memset(w->words, 0, (size_t)w->nbits / 8);
	w->cum = init_ssn;
	w->high = init_ssn;
}

static int bit_get(const struct mr_ssnwin *w, uint32_t ssn)
{
	uint32_t i = ssn & (w->nbits - 1);

	return (int)(w->words[i / 64] >> (i % 64) & 1);
}

static void bit_set(struct mr_ssnwin *w, uint32_t ssn)
{
	uint32_t i = ssn & (w->nbits - 1);

	w->words[i / 64] |= 1ull << (i % 64);
}

static void bit_clear(struct mr_ssnwin *w, uint32_t ssn)
{
	uint32_t i = ssn & (w->nbits - 1);

	w->words[i / 64] &= ~(1ull << (i % 64));
}

enum mr_ssnwin_res mr_ssnwin_record(struct mr_ssnwin *w, uint32_t ssn)
{
	int32_t d = mr_seq_diff(ssn, w->cum);

	if (d < 0)
		return MR_SSNWIN_OLD;
	if ((uint32_t)d >= w->nbits)
		return MR_SSNWIN_FAR;
	if (bit_get(w, ssn))
		return MR_SSNWIN_DUP;
	if (mr_seq_le(w->high, ssn))
		w->high = ssn + 1;
	if (d > 0) {
		bit_set(w, ssn);
		return MR_SSNWIN_NEW;
	}
	/* ssn == cum: advance over every consecutive received ssn, clearing
	 * their bits so the slots are free for cum + nbits onwards. */
	w->cum++;
	while (w->cum != w->high && bit_get(w, w->cum)) {
		bit_clear(w, w->cum);
		w->cum++;
	}
	return MR_SSNWIN_NEW;
}

int mr_ssnwin_test(const struct mr_ssnwin *w, uint32_t ssn)
{
	int32_t d = mr_seq_diff(ssn, w->cum);

	if (d < 0)
		return 1;
	if ((uint32_t)d >= w->nbits)
		return 0;
	return bit_get(w, ssn);
}
