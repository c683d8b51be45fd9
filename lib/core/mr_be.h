/* SPDX-License-Identifier: BSD-2-Clause */
/* Explicit big-endian put/get helpers for the wire format, and wrap-aware
 * 32-bit sequence comparisons. Every header is read and written through
 * these: no casts of packet bytes to structs, no bitfields. */
#ifndef MR_BE_H
#define MR_BE_H

#include <stdint.h>

static inline void mr_put8(uint8_t *p, uint8_t v)
{
	p[0] = v;
}

static inline void mr_put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void mr_put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void mr_put64(uint8_t *p, uint64_t v)
{
	mr_put32(p, (uint32_t)(v >> 32));
	mr_put32(p + 4, (uint32_t)v);
}

static inline uint8_t mr_get8(const uint8_t *p)
{
	return p[0];
}

static inline uint16_t mr_get16(const uint8_t *p)
{
	return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static inline uint32_t mr_get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t mr_get64(const uint8_t *p)
{
	return (uint64_t)mr_get32(p) << 32 | mr_get32(p + 4);
}

/* Sequence numbers are 32-bit and wrap: compare only through these. */
static inline int mr_seq_lt(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) < 0;
}

static inline int mr_seq_le(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b) <= 0;
}

static inline int32_t mr_seq_diff(uint32_t a, uint32_t b)
{
	return (int32_t)(a - b);
}

#endif /* MR_BE_H */
