// SPDX-License-Identifier: BSD-2-Clause
/*
 * Key lookups and scatter/gather walks over registered memory (MR-RSP-3,
 * MR-RSP-4): see mr_sge.h.
 */
#include <string.h>

#include "mr_sge.h"

int mr_mem_lookup(const struct mr_memctx *m, uint32_t key, int remote,
		  uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	*host = NULL;
	if (!len)
		return 0;
	if (addr + len < addr)
		return -MR_EACCESS;
	return m->reg->lookup(m->reg->user, m->pd, key, remote, addr, len, need,
			      host)
		       ? -MR_EACCESS
		       : 0;
}

/* Walk [off, off + len) of a scatter/gather list: each piece is looked up
 * (local write rights when placing into it) and copied from src (placed
 * through the place callback), copied into dst, or (neither: zero-copy
 * transmit) described as a segment in seg[0, max). One walker for every
 * direction so bounds and key checks cannot drift apart. Returns the
 * number of pieces, or -MR_EACCESS, -MR_EMSGSIZE (list too short), or
 * -MR_EAGAIN (segments: more than max pieces). */
static int sge_walk(const struct mr_memctx *m, const struct mr_sge *sge,
		    uint32_t n, uint64_t off, const uint8_t *src, uint8_t *dst,
		    struct mr_tx_seg *seg, unsigned max, uint32_t len)
{
	uint32_t i;
	int pieces = 0;

	for (i = 0; i < n && len; i++) {
		uint64_t chunk;
		uint8_t *host;

		if (off >= sge[i].length) {
			off -= sge[i].length;
			continue;
		}
		chunk = sge[i].length - off;
		if (chunk > len)
			chunk = len;
		if (mr_mem_lookup(m, sge[i].lkey, 0, sge[i].addr + off, chunk,
				  src ? MR_ACCESS_LOCAL_WRITE : 0, &host))
			return -MR_EACCESS;
		if (src) {
			m->cb->place(m->cb->user, host, src, (uint32_t)chunk);
			src += chunk;
		} else if (dst) {
			memcpy(dst, host, chunk);
			dst += chunk;
		} else {
			if ((unsigned)pieces == max)
				return -MR_EAGAIN;
			seg[pieces].addr = host;
			seg[pieces].len = (uint32_t)chunk;
		}
		pieces++;
		len -= (uint32_t)chunk;
		off = 0;
	}
	return len ? -MR_EMSGSIZE : pieces;
}

int mr_sge_place(const struct mr_memctx *m, const struct mr_sge *sge,
		 uint32_t n, uint64_t off, const uint8_t *src, uint32_t len)
{
	int rc = sge_walk(m, sge, n, off, src, NULL, NULL, 0, len);

	return rc < 0 ? rc : 0;
}

int mr_sge_gather(const struct mr_memctx *m, const struct mr_sge *sge,
		  uint32_t n, uint64_t off, uint8_t *dst, uint32_t len)
{
	int rc = sge_walk(m, sge, n, off, NULL, dst, NULL, 0, len);

	return rc < 0 ? rc : 0;
}

int mr_sge_segs(const struct mr_memctx *m, const struct mr_sge *sge, uint32_t n,
		uint64_t off, struct mr_tx_seg *seg, unsigned max, uint32_t len)
{
	return sge_walk(m, sge, n, off, NULL, NULL, seg, max, len);
}
