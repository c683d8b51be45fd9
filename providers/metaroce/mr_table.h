/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The provider's memory-region table: keys (lkey = rkey) to registered
 * memory. It is what answers the core's struct mr_memreg lookup, so a
 * remote WRITE/READ/atomic is checked against the rights and the bounds
 * the application registered.
 *
 * Keys (32 bits): bits 0-7 the key byte (as verbs names the low byte,
 * ibv_inc_rkey), bits 8 up the slot index (as many bits as the table's
 * max needs), the bits above it a tag. Key byte and tag are drawn at
 * random for every region (getrandom), the tag never equal to the one the
 * slot had before, so a key cannot be guessed from the order of
 * registrations and a stale rkey held by a peer after dereg_mr does not
 * reach the next region placed in that slot; 0 is never a key.
 *
 * Threading: every function takes the table's own mutex; lookups may run
 * on the progress thread while the application registers.
 * Errors: positive errno, as the provider's verbs return them.
 */
#ifndef METAROCE_MR_TABLE_H
#define METAROCE_MR_TABLE_H

#include <pthread.h>
#include <stdint.h>

#include "mr_mw.h"

/* What a slot holds: a registered region or a memory window (one key
 * space: an rkey names either, docs/spec/windows.md). */
enum metaroce_mrt_kind {
	METAROCE_MRT_MR = 0,
	METAROCE_MRT_MW = 1,
};

struct metaroce_mrt_ent {
	void *owner;   /* the provider's MR; NULL = free slot */
	uint64_t iova; /* first byte as addressed through the key */
	uint8_t *host; /* where iova lives in this process */
	uint64_t length;
	unsigned access; /* IBV_ACCESS_* as registered */
	uint32_t pd;	 /* protection domain number */
	uint32_t key;	 /* the live key (0: free), or the last one */
	uint32_t next_free;
	uint8_t kind;	  /* enum metaroce_mrt_kind */
	uint32_t windows; /* MR: windows bound to it (MR-MW-2: EBUSY) */
	struct mr_mw mw;  /* MW: its state (rkey = key); pd, type given */
};

struct metaroce_mrt {
	pthread_mutex_t lock;
	struct metaroce_mrt_ent *ents;
	uint32_t cap; /* allocated slots */
	uint32_t max; /* most slots ever (advertised max_mr) */
	uint32_t used;
	uint32_t free_head; /* slot + 1 of the first free slot, 0 = none */
	unsigned slot_bits; /* bits of the key that hold the slot */
};

/* max: the number of regions the table will ever hold (<= 1 << 20, so
 * that at least 4 tag bits remain). */
int metaroce_mrt_init(struct metaroce_mrt *t, uint32_t max);
void metaroce_mrt_fini(struct metaroce_mrt *t);

/* Insert a region (owner, iova, host, length, access, pd from e) and return
 * its key. ENOMEM (no memory), ENOSPC (table full) or the errno of
 * getrandom. */
int metaroce_mrt_add(struct metaroce_mrt *t, const struct metaroce_mrt_ent *e,
		     uint32_t *key);

/* Remove the region (or window) with key that belongs to owner. EINVAL
 * if there is none; EBUSY for a region with windows bound (MR-MW-2). A
 * bound window is unbound. */
int metaroce_mrt_del(struct metaroce_mrt *t, uint32_t key, const void *owner);

/* Remove the window whose key (whichever key byte binds gave it,
 * MR-MW-7) belongs to owner; a bound window is unbound. EINVAL if none. */
int metaroce_mrt_del_mw(struct metaroce_mrt *t, uint32_t key,
			const void *owner);

/* Rereg: give the region with key that belongs to e->owner e's iova,
 * host, length, access and pd; the key stays. EINVAL if there is none,
 * EBUSY while windows are bound to it. */
int metaroce_mrt_update(struct metaroce_mrt *t, uint32_t key,
			const struct metaroce_mrt_ent *e);

/* Resolve [addr, addr + len) through key for protection domain pd with the
 * rights in need (IBV_ACCESS_* bits; remote callers pass the remote bit of
 * the operation, local callers IBV_ACCESS_LOCAL_WRITE or 0). Sets *host.
 * len 0 succeeds with *host = NULL without looking at the key, as a
 * zero-length SGE or RDMA operation needs no memory.
 * ENOENT: no such key; EPERM: other PD; ERANGE: outside the region;
 * EACCES: rights missing. */
int metaroce_mrt_lookup(struct metaroce_mrt *t, uint32_t pd, uint32_t key,
			uint64_t addr, uint64_t len, unsigned need,
			uint8_t **host);

/* The same for a remote access that arrived at QP qpn (nonzero): a
 * window's key resolves through the window (MR-MW-3) to its region's
 * memory; qpn 0 is a local access, which no window's key serves
 * (ENOENT). EACCES: the window refuses it. */
int metaroce_mrt_lookup_qp(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
			   uint32_t key, uint64_t addr, uint64_t len,
			   unsigned need, uint8_t **host);

/* Bind the window b->mw_rkey names for QP qpn of protection domain pd
 * (MR-MW-2, MR-MW-7): the window's key becomes b->new_rkey. EINVAL if
 * it may not (no such window, or a rule of mr_mw_bind_check()). */
int metaroce_mrt_bind(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
		      const struct mr_mw_bind *b);

/* Invalidate the window of rkey for QP qpn of pd (MR-MW-4; remote: a
 * peer's SEND_WITH_INV). EINVAL if it may not: a region's key, no such
 * key, or a rule of mr_mw_inv_check(). */
int metaroce_mrt_invalidate(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
			    uint32_t rkey, int remote);

/* Number of regions and windows in the table. */
uint32_t metaroce_mrt_count(struct metaroce_mrt *t);

#endif /* METAROCE_MR_TABLE_H */
