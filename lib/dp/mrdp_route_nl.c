/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The kernel's routes and neighbours through libnl-route (a library the
 * project links already and rdma-core itself uses for the same job).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <linux/neighbour.h>
#include <linux/rtnetlink.h>
#include <netlink/cache.h>
#include <netlink/netlink.h>
#include <netlink/route/neighbour.h>
#include <netlink/route/route.h>

#include "mrdp_addr.h"
#include "mrdp_route_nl.h"

struct mrdp_route_nl {
	struct nl_sock *dump; /* requests and their answers */
	struct nl_sock *ev;   /* change notifications only */
	struct nl_cache *routes;
	struct nl_cache *neigh;
};

static uint32_t addr4(struct nl_addr *a)
{
	const uint8_t *b;

	if (!a || nl_addr_get_family(a) != AF_INET || nl_addr_get_len(a) != 4)
		return 0;
	b = nl_addr_get_binary_addr(a);
	return (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
	       (uint32_t)b[2] << 8 | b[3];
}

int mrdp_route_nl_refresh(struct mrdp_route_nl *nl)
{
	struct nl_cache *r = NULL, *n = NULL;
	int ret;

	/* Both families in one dump; the tables filter by family. */
	ret = rtnl_route_alloc_cache(nl->dump, AF_UNSPEC, 0, &r);
	if (ret >= 0)
		ret = rtnl_neigh_alloc_cache(nl->dump, &n);
	if (ret < 0) {
		if (r)
			nl_cache_free(r);
		return -EIO;
	}
	if (nl->routes)
		nl_cache_free(nl->routes);
	if (nl->neigh)
		nl_cache_free(nl->neigh);
	nl->routes = r;
	nl->neigh = n;
	return 0;
}

int mrdp_route_nl_open(struct mrdp_route_nl **out, char *err, size_t errlen)
{
	struct mrdp_route_nl *nl = calloc(1, sizeof(*nl));
	int ret;

	if (!nl) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	nl->dump = nl_socket_alloc();
	nl->ev = nl_socket_alloc();
	if (!nl->dump || !nl->ev) {
		ret = -ENOMEM;
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	if (nl_connect(nl->dump, NETLINK_ROUTE) < 0 ||
	    nl_connect(nl->ev, NETLINK_ROUTE) < 0) {
		ret = -EIO;
		snprintf(err, errlen, "cannot open a routing netlink socket");
		goto fail;
	}
	nl_socket_disable_seq_check(nl->ev);
	if (nl_socket_add_memberships(nl->ev, RTNLGRP_IPV4_ROUTE, RTNLGRP_NEIGH,
				      RTNLGRP_LINK, RTNLGRP_IPV4_IFADDR,
				      RTNLGRP_IPV6_ROUTE, RTNLGRP_IPV6_IFADDR,
				      0) < 0 ||
	    nl_socket_set_nonblocking(nl->ev) < 0) {
		ret = -EIO;
		snprintf(err, errlen, "cannot subscribe to route changes");
		goto fail;
	}
	ret = mrdp_route_nl_refresh(nl);
	if (ret) {
		snprintf(err, errlen, "cannot read the routing table");
		goto fail;
	}
	*out = nl;
	return 0;
fail:
	mrdp_route_nl_close(nl);
	return ret;
}

void mrdp_route_nl_close(struct mrdp_route_nl *nl)
{
	if (!nl)
		return;
	if (nl->routes)
		nl_cache_free(nl->routes);
	if (nl->neigh)
		nl_cache_free(nl->neigh);
	nl_socket_free(nl->dump);
	nl_socket_free(nl->ev);
	free(nl);
}

int mrdp_route_nl_changed(struct mrdp_route_nl *nl)
{
	char buf[8192];
	int changed = 0;
	ssize_t n;

	/* The content does not matter: any event means "dump again". A
	 * full receive buffer (ENOBUFS) means events were lost: also. */
	for (;;) {
		n = recv(nl_socket_get_fd(nl->ev), buf, sizeof(buf),
			 MSG_DONTWAIT);
		if (n > 0) {
			changed = 1;
			continue;
		}
		if (n < 0 && errno == ENOBUFS) {
			changed = 1;
			continue;
		}
		return changed;
	}
}

struct table_walk {
	int ifindex;
	struct mrdp_route_table *t;
};

static void add_route(struct nl_object *o, void *arg)
{
	struct table_walk *w = arg;
	struct rtnl_route *r = (struct rtnl_route *)o;
	struct nl_addr *dst = rtnl_route_get_dst(r);
	int i, n = rtnl_route_get_nnexthops(r);

	if (rtnl_route_get_table(r) != RT_TABLE_MAIN ||
	    rtnl_route_get_type(r) != RTN_UNICAST ||
	    rtnl_route_get_family(r) != AF_INET)
		return;
	for (i = 0; i < n; i++) {
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, i);

		if (rtnl_route_nh_get_ifindex(nh) != w->ifindex)
			continue;
		/* One nexthop per route and interface is enough: an ECMP
		 * route's nexthops on one interface reach one network. */
		mrdp_route_add(w->t, dst ? addr4(dst) : 0,
			       dst ? nl_addr_get_prefixlen(dst) : 0,
			       addr4(rtnl_route_nh_get_gateway(nh)),
			       rtnl_route_get_priority(r));
		return;
	}
}

void mrdp_route_nl_table(struct mrdp_route_nl *nl, int ifindex,
			 struct mrdp_route_table *t)
{
	struct table_walk w = { .ifindex = ifindex, .t = t };

	mrdp_route_clear(t);
	nl_cache_foreach(nl->routes, add_route, &w);
}

static int neigh_lookup(struct mrdp_route_nl *nl, int ifindex, int family,
			const uint8_t *b, unsigned len, uint8_t mac[6])
{
	struct nl_addr *a = nl_addr_build(family, b, len);
	struct rtnl_neigh *n;
	struct nl_addr *ll;
	int ok = 0;

	if (!a)
		return 0;
	n = rtnl_neigh_get(nl->neigh, ifindex, a);
	nl_addr_put(a);
	if (!n)
		return 0;
	ll = rtnl_neigh_get_lladdr(n);
	if (ll && nl_addr_get_len(ll) == 6 &&
	    (rtnl_neigh_get_state(n) & (NUD_REACHABLE | NUD_STALE | NUD_DELAY |
					NUD_PROBE | NUD_PERMANENT))) {
		memcpy(mac, nl_addr_get_binary_addr(ll), 6);
		ok = 1;
	}
	rtnl_neigh_put(n);
	return ok;
}

int mrdp_route_nl_neigh(struct mrdp_route_nl *nl, int ifindex, uint32_t ip,
			uint8_t mac[6])
{
	uint8_t b[4] = { (uint8_t)(ip >> 24), (uint8_t)(ip >> 16),
			 (uint8_t)(ip >> 8), (uint8_t)ip };

	return neigh_lookup(nl, ifindex, AF_INET, b, 4, mac);
}

int mrdp_route_nl_neigh6(struct mrdp_route_nl *nl, int ifindex,
			 const uint8_t a[16], uint8_t mac[6])
{
	return neigh_lookup(nl, ifindex, AF_INET6, a, 16, mac);
}

struct table6_walk {
	int ifindex;
	struct mrdp_route6_table *t;
	struct mrdp_addrs *book;
	unsigned plane;
};

static void add_route6(struct nl_object *o, void *arg)
{
	static const uint8_t any[16];
	struct table6_walk *w = arg;
	struct rtnl_route *r = (struct rtnl_route *)o;
	struct nl_addr *dst = rtnl_route_get_dst(r);
	const uint8_t *d = any;
	unsigned plen = 0;
	int i, n = rtnl_route_get_nnexthops(r);

	if (rtnl_route_get_table(r) != RT_TABLE_MAIN ||
	    rtnl_route_get_type(r) != RTN_UNICAST ||
	    rtnl_route_get_family(r) != AF_INET6)
		return;
	if (dst && nl_addr_get_len(dst) == 16) {
		d = nl_addr_get_binary_addr(dst);
		plen = nl_addr_get_prefixlen(dst);
	}
	if (d[0] == 0xfe && (d[1] & 0xc0) == 0x80)
		return; /* fe80::/64: link-local is on-link everywhere */
	for (i = 0; i < n; i++) {
		struct rtnl_nexthop *nh = rtnl_route_nexthop_n(r, i);
		struct nl_addr *gw = rtnl_route_nh_get_gateway(nh);
		uint32_t gw_id = 0;

		if (rtnl_route_nh_get_ifindex(nh) != w->ifindex)
			continue;
		if (gw && nl_addr_get_family(gw) == AF_INET6 &&
		    nl_addr_get_len(gw) == 16) {
			const uint8_t *g = nl_addr_get_binary_addr(gw);
			int ll = g[0] == 0xfe && (g[1] & 0xc0) == 0x80;

			/* A gateway the book cannot name is a route we
			 * cannot use. */
			if (mrdp_addrs_id(w->book, g,
					  ll ? (uint8_t)(1 + w->plane) : 0, 1,
					  &gw_id))
				return;
		}
		mrdp_route6_add(w->t, d, plen, gw_id,
				rtnl_route_get_priority(r));
		return;
	}
}

void mrdp_route_nl_table6(struct mrdp_route_nl *nl, int ifindex,
			  struct mrdp_route6_table *t, struct mrdp_addrs *book,
			  unsigned plane)
{
	struct table6_walk w = {
		.ifindex = ifindex, .t = t, .book = book, .plane = plane
	};

	mrdp_route6_clear(t);
	nl_cache_foreach(nl->routes, add_route6, &w);
}
