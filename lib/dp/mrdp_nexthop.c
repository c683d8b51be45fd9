/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Next-hop choice of a device (docs/spec/routing.md, MR-ROUTE-*): which
 * address each plane sends a peer's packets to, from the plane's route
 * table (mrdp_route.h), kept in step with the kernel (mrdp_route_nl.h)
 * for the planes it sees. The neighbour table (mrdp_neigh.h) then maps
 * that next hop to a MAC. Lock held for all of it.
 */
#include <errno.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "mrdp_int.h"
#include "mrdp_route_nl.h"

/* How often the progress round looks for kernel route changes: one
 * non-blocking recv per period (MR-ROUTE-5). */
#define MRDP_ROUTE_POLL_NS 100000000ull

/* The IPv6 table of plane i (MR-ADDR-4), as load_tables() makes the
 * IPv4 one. */
static void load_table6(struct mrdp_dev *d, unsigned i)
{
	static const uint8_t none[16];
	struct mrdp_plane *p = &d->plane[i];
	struct mrdp_route6_table *t = &d->rt6[i];
	const uint8_t *gw = d->conf.gateway6[i];
	uint32_t gw_id;

	if (!p->ifindex && !memcmp(gw, none, 16)) {
		mrdp_route6_set_onlink(t);
		return;
	}
	if (!p->ifindex) {
		mrdp_route6_clear(t);
		if (!mrdp_addrs_id(d->addrs, gw,
				   mrdp_ip6_linklocal(gw) ? (uint8_t)(1 + i)
							  : 0,
				   1, &gw_id))
			mrdp_route6_add(t, none, 0, gw_id, 0);
	} else {
		mrdp_route_nl_table6(d->rnl, p->ifindex, t, d->addrs, i);
	}
	if (d->conf.has_ip6)
		mrdp_route6_add(t, d->conf.ip6, d->conf.prefix6, 0,
				p->ifindex ? UINT32_MAX : 0);
}

static void load_tables(struct mrdp_dev *d)
{
	unsigned i;

	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];

		if (!p->ifindex && !d->conf.gateway[i]) {
			mrdp_route_set_onlink(&d->rt[i]);
			continue;
		}
		if (!p->ifindex) {
			/* The record names this plane's router (MR-ROUTE-4):
			 * the device's subnet on-link, the rest through it. */
			mrdp_route_clear(&d->rt[i]);
			mrdp_route_add(&d->rt[i], 0, 0, d->conf.gateway[i], 0);
			mrdp_route_add(&d->rt[i], d->conf.ip, d->conf.prefix, 0,
				       0);
			continue;
		}
		mrdp_route_nl_table(d->rnl, p->ifindex, &d->rt[i]);
		/* The device's own subnet is on-link on every plane, as an
		 * interface address's connected route is (MR-ROUTE-2); the
		 * kernel's routes of equal or longer prefix win. */
		mrdp_route_add(&d->rt[i], d->conf.ip, d->conf.prefix, 0,
			       UINT32_MAX);
	}
	for (i = 0; i < d->nplanes; i++)
		load_table6(d, i);
}

int mrdp_nexthop_init(struct mrdp_dev *d, char *err, size_t errlen)
{
	unsigned i, seen = 0;
	int ret;

	d->rt = calloc(d->nplanes ? d->nplanes : 1, sizeof(*d->rt));
	d->rt6 = calloc(d->nplanes ? d->nplanes : 1, sizeof(*d->rt6));
	if (!d->rt || !d->rt6) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	for (i = 0; i < d->nplanes; i++) {
		char ifn[IF_NAMESIZE + 1];

		/* A port on a kernel interface (af_packet, af_xdp): its
		 * routes are the kernel's. */
		if (!mrdp_is_pci(d->conf.ports[i]) &&
		    mrdp_devarg(d->conf.ports[i], "iface", ifn, sizeof(ifn)))
			d->plane[i].ifindex = (int)if_nametoindex(ifn);
		seen += d->plane[i].ifindex != 0;
	}
	if (seen) {
		ret = mrdp_route_nl_open(&d->rnl, err, errlen);
		if (ret)
			return ret;
	}
	load_tables(d);
	return 0;
}

void mrdp_nexthop_fini(struct mrdp_dev *d)
{
	mrdp_route_nl_close(d->rnl);
	d->rnl = NULL;
	free(d->rt);
	d->rt = NULL;
	free(d->rt6);
	d->rt6 = NULL;
}

int mrdp_nexthop_of(const struct mrdp_dev *d, unsigned plane, uint32_t dst,
		    uint32_t *nh)
{
	const uint8_t *a;
	uint32_t gw;

	if (!mr_gid_id_is6(dst))
		return mrdp_route_nexthop(&d->rt[plane], dst, nh);
	a = mrdp_addrs_get(d->addrs, dst, NULL);
	if (!a)
		return -ENETUNREACH;
	/* MR-ADDR-4: a link-local peer is on-link on every plane. */
	if (mrdp_ip6_linklocal(a)) {
		*nh = dst;
		return 0;
	}
	if (mrdp_route6_nexthop(&d->rt6[plane], a, &gw))
		return -ENETUNREACH;
	*nh = gw ? gw : dst;
	return 0;
}

int mrdp_nexthop_onlink(const struct mrdp_dev *d, unsigned plane, uint32_t ip)
{
	uint32_t nh;

	return mrdp_nexthop_of(d, plane, ip, &nh) == 0 && nh == ip;
}

int mrdp_nexthop_kernel_mac(struct mrdp_dev *d, unsigned plane, uint32_t nh,
			    uint8_t mac[6])
{
	int ifx = d->plane[plane].ifindex;
	const uint8_t *a;

	if (!d->rnl || !ifx)
		return 0;
	if (!mr_gid_id_is6(nh))
		return mrdp_route_nl_neigh(d->rnl, ifx, nh, mac);
	a = mrdp_addrs_get(d->addrs, nh, NULL);
	return a && mrdp_route_nl_neigh6(d->rnl, ifx, a, mac);
}

void mrdp_nexthop_poll(struct mrdp_dev *d, uint64_t now)
{
	unsigned i, k;

	if (!d->rnl || now < d->route_check_ns)
		return;
	d->route_check_ns = now + MRDP_ROUTE_POLL_NS;
	if (!mrdp_route_nl_changed(d->rnl) || mrdp_route_nl_refresh(d->rnl))
		return;
	load_tables(d);
	d->route_reloads++;
	/* A next hop the kernel now knows, or knows at a new MAC (a router
	 * replaced): take it (MR-ROUTE-5). */
	for (i = 0; i < MRDP_NEIGH_SIZE; i++) {
		struct mrdp_neigh *e = &d->neigh->e[i];
		uint8_t mac[6];

		if (e->state == MRDP_NEIGH_FREE)
			continue;
		for (k = 0; k < d->nplanes; k++) {
			if (!(e->planes & (1u << k)) ||
			    !mrdp_nexthop_kernel_mac(d, k, e->ip, mac))
				continue;
			if (e->state != MRDP_NEIGH_REACHABLE ||
			    memcmp(e->mac, mac, 6))
				mrdp_io_learn(d, e->ip, mac, 0, now);
			break;
		}
	}
}
