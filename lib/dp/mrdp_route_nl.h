/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's view of the planes, read with libnl-route as rdma-core
 * reads it to resolve RoCE addresses: the main routing table and the
 * neighbour table of the interface a port attaches to (MR-ROUTE-2), and a
 * subscription to their changes (MR-ROUTE-5). Dumps are taken when the
 * device opens and again after the kernel announces a change; lookups
 * read the last dump, so they cost no system call. Not thread safe: the
 * device lock covers it. Errors: negative errno.
 */
#ifndef MRDP_ROUTE_NL_H
#define MRDP_ROUTE_NL_H

#include <stdint.h>

#include "mrdp_route.h"

struct mrdp_route_nl;

/* Connect (two netlink sockets: dumps, and events) and take the first
 * dumps. 0 or -errno with a reason in err. */
int mrdp_route_nl_open(struct mrdp_route_nl **out, char *err, size_t errlen);
void mrdp_route_nl_close(struct mrdp_route_nl *nl);

/* Did the kernel announce a route, neighbour, address or link change since
 * the last call? Non-blocking (one recv that usually finds nothing). */
int mrdp_route_nl_changed(struct mrdp_route_nl *nl);

/* Take the dumps again. 0 or -errno (the previous dumps stay). */
int mrdp_route_nl_refresh(struct mrdp_route_nl *nl);

/* Fill t with the unicast routes of the main table whose nexthop (or one
 * of whose nexthops) leaves through ifindex, from the last dump. */
void mrdp_route_nl_table(struct mrdp_route_nl *nl, int ifindex,
			 struct mrdp_route_table *t);

/* The kernel's neighbour entry of ip on ifindex, from the last dump: 1 and
 * mac when it holds a usable link address (reachable, stale, delay,
 * probe, permanent), else 0. */
int mrdp_route_nl_neigh(struct mrdp_route_nl *nl, int ifindex, uint32_t ip,
			uint8_t mac[6]);

/* IPv6 (MR-ADDR-4): the same for the main IPv6 table. A gateway becomes
 * an id of book: a link-local one scoped by plane (1 + plane), a global
 * one as a peer (scope 0). Routes to link-local prefixes are left out
 * (link-local peers are on-link on every plane). */
struct mrdp_addrs;
void mrdp_route_nl_table6(struct mrdp_route_nl *nl, int ifindex,
			  struct mrdp_route6_table *t, struct mrdp_addrs *book,
			  unsigned plane);
int mrdp_route_nl_neigh6(struct mrdp_route_nl *nl, int ifindex,
			 const uint8_t a[16], uint8_t mac[6]);

#endif /* MRDP_ROUTE_NL_H */
