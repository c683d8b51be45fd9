/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Registered memory as the engine sees it: a key lookup (the embedder's
 * mr_memreg, within one protection domain) and the scatter/gather walks
 * that place data into, copy data out of, or describe (zero-copy
 * transmit) a list of local SGEs. A leaf: it knows no QP; the caller
 * passes the memory context (MR_QP_MEM() in mr_engine.h builds a QP's).
 */
#ifndef MR_SGE_H
#define MR_SGE_H

#include <stdint.h>

#include "mr_core.h"

struct mr_memctx {
	const struct mr_memreg *reg;
	const struct mr_callbacks *cb; /* cb->place writes into memory */
	uint32_t pd;
};

/* Look up [addr, addr + len) under key with the rights in need (remote:
 * an rkey, and the number of the QP it arrived at, as mr_memreg.lookup
 * takes it); *host gets its address. 0 or -MR_EACCESS; len 0 always 0. */
int mr_mem_lookup(const struct mr_memctx *m, uint32_t key, int remote,
		  uint64_t addr, uint64_t len, unsigned need, uint8_t **host);
/* Place len bytes of src at byte offset off of the SGE list. */
int mr_sge_place(const struct mr_memctx *m, const struct mr_sge *sge,
		 uint32_t n, uint64_t off, const uint8_t *src, uint32_t len);
/* Copy len bytes at offset off of the SGE list into dst. */
int mr_sge_gather(const struct mr_memctx *m, const struct mr_sge *sge,
		  uint32_t n, uint64_t off, uint8_t *dst, uint32_t len);
/* Describe len bytes at offset off of the SGE list as at most max
 * segments of registered memory (zero-copy transmit). Returns their
 * number, -MR_EAGAIN if more are needed, -MR_EACCESS, -MR_EMSGSIZE. */
int mr_sge_segs(const struct mr_memctx *m, const struct mr_sge *sge, uint32_t n,
		uint64_t off, struct mr_tx_seg *seg, unsigned max,
		uint32_t len);

#endif /* MR_SGE_H */
