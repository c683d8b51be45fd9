/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The harness's only source of randomness: xorshift64* seeded through
 * splitmix64, so that one 64-bit seed reproduces a whole scenario (the
 * link's loss, jitter and the generated work requests) on any machine.
 * Every consumer owns its own generator, derived from the scenario seed
 * with a distinct stream number, so adding a draw in one place does not
 * shift the others.
 */
#ifndef MRSIM_RAND_H
#define MRSIM_RAND_H

#include <stdint.h>

struct mrsim_rand {
	uint64_t s;
};

static inline uint64_t mrsim_splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Seed generator r from (seed, stream). Never leaves the all-zero state,
 * which xorshift cannot leave. */
static inline void mrsim_rand_seed(struct mrsim_rand *r, uint64_t seed,
				   uint64_t stream)
{
	uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull);

	r->s = mrsim_splitmix64(&x);
	if (!r->s)
		r->s = 0x2545f4914f6cdd1dull;
}

static inline uint64_t mrsim_rand_next(struct mrsim_rand *r)
{
	uint64_t x = r->s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	r->s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [0, n); n == 0 yields 0. The multiply-shift keeps the bias
 * below 2^-32 for the ranges the harness uses. */
static inline uint64_t mrsim_rand_below(struct mrsim_rand *r, uint64_t n)
{
	if (!n)
		return 0;
	return (uint64_t)(((unsigned __int128)mrsim_rand_next(r) * n) >> 64);
}

/* Uniform in [lo, hi] inclusive. */
static inline uint64_t mrsim_rand_range(struct mrsim_rand *r, uint64_t lo,
					uint64_t hi)
{
	return lo + mrsim_rand_below(r, hi - lo + 1);
}

/* True with probability ppm / 1e6. */
static inline int mrsim_rand_ppm(struct mrsim_rand *r, uint32_t ppm)
{
	return ppm && mrsim_rand_below(r, 1000000) < ppm;
}

/* Adapter for the core's injected struct mr_rand (user = the generator). */
static inline uint64_t mrsim_rand_next_cb(void *user)
{
	return mrsim_rand_next((struct mrsim_rand *)user);
}

#endif /* MRSIM_RAND_H */
