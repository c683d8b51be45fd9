/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Registered memory of one simulated endpoint: a real table of regions,
 * each with its own buffer, I/O virtual address, lkey, rkey, protection
 * domain and access rights, exactly what ibv_reg_mr would record. It
 * provides the core's struct mr_memreg lookup (key, PD, bounds and rights
 * checked) and the place callback, which refuses, and records as a harness
 * failure, any copy whose destination is not inside a registered region:
 * the core may only write where a lookup allowed it.
 *
 * Addresses are host addresses, as with verbs, unless a test asks for a
 * synthetic I/O virtual address (bounds and wrap checks).
 */
#ifndef MRSIM_MEM_H
#define MRSIM_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"

#define MRSIM_MAX_REGIONS 16

struct mrsim_region {
	uint8_t *buf;
	uint64_t iova;
	uint64_t len;
	uint32_t lkey, rkey, pd;
	unsigned access; /* enum mr_access */
};

struct mrsim_mem {
	struct mrsim_region r[MRSIM_MAX_REGIONS];
	unsigned n;
	uint32_t next_key;
	/* What the core did through us. */
	uint64_t lookups, lookup_denied;
	uint64_t placed_bytes, place_calls;
	uint64_t bad_place; /* writes outside registered memory: a bug */
};

/* key_base makes the two endpoints' keys differ, so a key of the wrong side
 * is caught as an unknown key. */
void mrsim_mem_init(struct mrsim_mem *m, uint32_t key_base);
void mrsim_mem_fini(struct mrsim_mem *m);

/* Register len bytes (zero-filled) at I/O address iova, or, with iova 0,
 * at the buffer's host address as verbs does (the core may then treat an
 * inline SGE's address as a pointer). Returns the region or NULL (table
 * full, no memory, len 0 or overlapping iova range). */
struct mrsim_region *mrsim_mem_reg(struct mrsim_mem *m, uint64_t iova,
				   uint64_t len, uint32_t pd, unsigned access);

/* Host pointer of [iova, iova+len) inside some region, whatever its keys
 * (for the harness's own setup and checks), or NULL. */
uint8_t *mrsim_mem_host(struct mrsim_mem *m, uint64_t iova, uint64_t len);

/* The struct mr_memreg lookup, user = struct mrsim_mem. */
int mrsim_mem_lookup(void *user, uint32_t pd, uint32_t key, int remote,
		     uint64_t addr, uint64_t len, unsigned need,
		     uint8_t **host);

/* The place callback body (the world calls it with the endpoint's mem). */
void mrsim_mem_place(struct mrsim_mem *m, uint8_t *dst, const uint8_t *src,
		     uint32_t len);

static inline struct mr_memreg mrsim_mem_memreg(struct mrsim_mem *m)
{
	struct mr_memreg mr = { .lookup = mrsim_mem_lookup, .user = m };

	return mr;
}

#endif /* MRSIM_MEM_H */
