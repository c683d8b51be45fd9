/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Memory windows (docs/spec/windows.md MR-MW-*): the rules IB gives them,
 * as pure functions over the state a key table keeps for one window and
 * the region it is bound to. The key table itself (which keys exist, the
 * lock, where memory lives) is the caller's: the provider's MR table, a
 * test harness. The core calls the table through struct mr_memreg (bind,
 * invalidate, lookup with the arriving QP's number); the table answers
 * with these functions, so every table applies the same rules.
 *
 * No state of its own, no locking: the caller holds its table's lock.
 * Errors: 0 or a negative MR_E* (mr_err.h).
 */
#ifndef MR_MW_H
#define MR_MW_H

#include <stdint.h>

#include "mr_core.h"

enum mr_mw_type {
	MR_MW_TYPE_1 = 1, /* bound by the Bind verb; any QP of its PD */
	MR_MW_TYPE_2 = 2, /* bound by a send WR; only through that QP (2B) */
};

/* One window as a key table keeps it. */
struct mr_mw {
	uint8_t type;  /* enum mr_mw_type */
	uint8_t bound; /* 0: free (no access through it) */
	uint32_t pd;
	uint32_t rkey;	 /* current rkey (the table's key for it) */
	uint32_t qpn;	 /* type 2, bound: the QP it was bound through */
	uint32_t mr_key; /* bound: the region's key */
	uint64_t addr;	 /* bound: first byte, in the region's iova */
	uint64_t length;
	unsigned access; /* bound: MR_ACCESS_REMOTE_* */
};

/* The region a bind names, as the table keeps it. */
struct mr_mw_region {
	uint32_t pd;
	uint64_t iova, length;
	unsigned access; /* MR_ACCESS_* as registered */
};

/* MR-MW-7: the rkey a type 1 bind gives: the key byte (bits 0-7) plus
 * one, the index bits kept (what ibv_inc_rkey computes). */
uint32_t mr_mw_next_rkey(uint32_t rkey);

/* MR-MW-2: may the bind b of window mw be done by a QP of protection
 * domain qp_pd? mr is the region b->mr_lkey names (NULL if no live region
 * has that key). 0, or -MR_EINVAL (the WR fails with MR_WC_MW_BIND_ERR). */
int mr_mw_bind_check(const struct mr_mw *mw, const struct mr_mw_region *mr,
		     uint32_t qp_pd, const struct mr_mw_bind *b);

/* Apply a checked bind done through QP qpn; a type 1 bind of length 0
 * unbinds. */
void mr_mw_bind_apply(struct mr_mw *mw, uint32_t qpn,
		      const struct mr_mw_bind *b);

/* MR-MW-4: may a QP (protection domain pd, number qpn) invalidate window
 * mw, remote = 1 for a peer's SEND_WITH_INV, 0 for LOCAL_INV? 0 or
 * -MR_EINVAL. Keys of regions are never invalidated: the table refuses
 * them before asking. */
int mr_mw_inv_check(const struct mr_mw *mw, uint32_t pd, uint32_t qpn,
		    int remote);

/* Invalidate: the window is free, its rkey unchanged. */
void mr_mw_inv_apply(struct mr_mw *mw);

/* MR-MW-3: may a remote access of rights need to [addr, addr + len) that
 * arrived at QP qpn of protection domain pd go through window mw? 0 or
 * -MR_EACCESS. len 0 is for the caller to decide (no memory needed). */
int mr_mw_access_check(const struct mr_mw *mw, uint32_t pd, uint32_t qpn,
		       uint64_t addr, uint64_t len, unsigned need);

#endif /* MR_MW_H */
