/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-plane route tables: a short array kept sorted, scanned in order. A
 * host's table restricted to one interface holds a handful of routes; the
 * first match of a longest-prefix-first array is the longest match. */
#include <errno.h>
#include <string.h>

#include "mrdp_route.h"

static uint32_t mask_of(unsigned plen)
{
	return plen ? 0xffffffffu << (32 - plen) : 0;
}

void mrdp_route_clear(struct mrdp_route_table *t)
{
	memset(t, 0, sizeof(*t));
}

void mrdp_route_set_onlink(struct mrdp_route_table *t)
{
	mrdp_route_clear(t);
	t->onlink_all = 1;
}

int mrdp_route_add(struct mrdp_route_table *t, uint32_t dst, unsigned plen,
		   uint32_t gw, uint32_t metric)
{
	unsigned i;

	if (plen > 32)
		return -EINVAL;
	if (t->n == MRDP_ROUTES_MAX) {
		t->overflow++;
		return -ENOSPC;
	}
	dst &= mask_of(plen);
	for (i = t->n; i > 0; i--) {
		const struct mrdp_route *p = &t->r[i - 1];

		if (p->plen > plen || (p->plen == plen && p->metric <= metric))
			break;
		t->r[i] = t->r[i - 1];
	}
	t->r[i] = (struct mrdp_route){
		.dst = dst, .gw = gw, .metric = metric, .plen = (uint8_t)plen
	};
	t->n++;
	return 0;
}

int mrdp_route_nexthop(const struct mrdp_route_table *t, uint32_t dst,
		       uint32_t *nh)
{
	unsigned i;

	if (t->onlink_all) {
		*nh = dst;
		return 0;
	}
	for (i = 0; i < t->n; i++) {
		const struct mrdp_route *r = &t->r[i];

		if ((dst & mask_of(r->plen)) == r->dst) {
			*nh = r->gw ? r->gw : dst;
			return 0;
		}
	}
	return -ENETUNREACH;
}

/* Does a lie in the prefix p/plen? */
static int in_prefix6(const uint8_t a[16], const uint8_t p[16], unsigned plen)
{
	unsigned full = plen / 8, rest = plen % 8;

	if (memcmp(a, p, full))
		return 0;
	return !rest || ((a[full] ^ p[full]) & (0xff00u >> rest) & 0xff) == 0;
}

void mrdp_route6_clear(struct mrdp_route6_table *t)
{
	memset(t, 0, sizeof(*t));
}

void mrdp_route6_set_onlink(struct mrdp_route6_table *t)
{
	mrdp_route6_clear(t);
	t->onlink_all = 1;
}

int mrdp_route6_add(struct mrdp_route6_table *t, const uint8_t dst[16],
		    unsigned plen, uint32_t gw_id, uint32_t metric)
{
	struct mrdp_route6 nr = { .gw_id = gw_id, .metric = metric };
	unsigned i;

	if (plen > 128)
		return -EINVAL;
	if (t->n == MRDP_ROUTES_MAX) {
		t->overflow++;
		return -ENOSPC;
	}
	nr.plen = (uint8_t)plen;
	memcpy(nr.dst, dst, plen / 8);
	if (plen % 8)
		nr.dst[plen / 8] = dst[plen / 8] & (uint8_t)(0xff00u >> (plen % 8));
	for (i = t->n; i > 0; i--) {
		const struct mrdp_route6 *p = &t->r[i - 1];

		if (p->plen > plen || (p->plen == plen && p->metric <= metric))
			break;
		t->r[i] = t->r[i - 1];
	}
	t->r[i] = nr;
	t->n++;
	return 0;
}

int mrdp_route6_nexthop(const struct mrdp_route6_table *t,
			const uint8_t dst[16], uint32_t *gw_id)
{
	unsigned i;

	if (t->onlink_all) {
		*gw_id = 0;
		return 0;
	}
	for (i = 0; i < t->n; i++)
		if (in_prefix6(dst, t->r[i].dst, t->r[i].plen)) {
			*gw_id = t->r[i].gw_id;
			return 0;
		}
	return -ENETUNREACH;
}
