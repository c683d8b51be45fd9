/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The next hop of each plane (docs/spec/routing.md, MR-ROUTE-*): one
 * table of IPv4 routes per plane, longest prefix first. Where the kernel
 * sees a plane's interface (af_packet and af_xdp ports: iface=) the table
 * is the kernel's main table restricted to nexthops on that interface
 * (mrdp_route_nl.c reads it and follows its changes); a plane the kernel
 * does not see (PCI, memif) reaches every peer on-link, as one L2 network
 * (MR-ROUTE-4). No DPDK, no netlink and no clock here, so the unit tests
 * drive it directly. Not thread safe: the device lock covers it.
 */
#ifndef MRDP_ROUTE_H
#define MRDP_ROUTE_H

#include <stdint.h>
#include <string.h>

#define MRDP_ROUTES_MAX 64 /* per plane; more are counted, not kept */

struct mrdp_route {
	uint32_t dst;	 /* host order, host bits zero */
	uint32_t gw;	 /* next hop; 0: dst is on-link */
	uint32_t metric; /* lower wins among equal prefixes */
	uint8_t plen;	 /* 0..32 */
};

struct mrdp_route_table {
	int onlink_all;	   /* no routing: every peer is on-link */
	unsigned n;	   /* routes in r, longest prefix first */
	unsigned overflow; /* routes that did not fit */
	struct mrdp_route r[MRDP_ROUTES_MAX];
};

/* An empty table: every peer unreachable until routes are added. */
void mrdp_route_clear(struct mrdp_route_table *t);
/* The table of a plane the kernel does not see: every peer on-link. */
void mrdp_route_set_onlink(struct mrdp_route_table *t);

/* Add a route (plen 0..32; gw 0 for on-link). The table stays ordered
 * longest prefix first, then lowest metric. 0, -EINVAL, or -ENOSPC. */
int mrdp_route_add(struct mrdp_route_table *t, uint32_t dst, unsigned plen,
		   uint32_t gw, uint32_t metric);

/* The next hop toward dst on this plane (MR-ROUTE-3): the gateway of the
 * longest matching prefix, or dst itself where that route is on-link.
 * 0 and *nh, or -ENETUNREACH when no route matches. */
int mrdp_route_nexthop(const struct mrdp_route_table *t, uint32_t dst,
		       uint32_t *nh);

/*
 * IPv6 (MR-ADDR-4): the same rules over 128-bit prefixes. A gateway is
 * kept with the address id the caller gave it (gw_id; the datapath's
 * address book, mrdp_addr.h), so a lookup hands out the next hop's id
 * without touching the book. Link-local destinations never reach a
 * table (they are on-link on every plane).
 */
struct mrdp_route6 {
	uint8_t dst[16]; /* host bits zero */
	uint32_t gw_id;	 /* next hop's id; 0: dst is on-link */
	uint32_t metric;
	uint8_t plen; /* 0..128 */
};

struct mrdp_route6_table {
	int onlink_all;
	unsigned n;
	unsigned overflow;
	struct mrdp_route6 r[MRDP_ROUTES_MAX];
};

void mrdp_route6_clear(struct mrdp_route6_table *t);
void mrdp_route6_set_onlink(struct mrdp_route6_table *t);
/* Add a route (plen 0..128; gw_id 0: on-link). 0, -EINVAL, -ENOSPC. */
int mrdp_route6_add(struct mrdp_route6_table *t, const uint8_t dst[16],
		    unsigned plen, uint32_t gw_id, uint32_t metric);
/* The longest match for dst: 0 and *gw_id (0: on-link, the next hop is
 * dst itself), or -ENETUNREACH. */
int mrdp_route6_nexthop(const struct mrdp_route6_table *t,
			const uint8_t dst[16], uint32_t *gw_id);

#endif /* MRDP_ROUTE_H */
