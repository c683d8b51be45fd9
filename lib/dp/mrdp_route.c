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
