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
}

int mrdp_nexthop_init(struct mrdp_dev *d, char *err, size_t errlen)
{
	unsigned i, seen = 0;
	int ret;

	d->rt = calloc(d->nplanes ? d->nplanes : 1, sizeof(*d->rt));
	if (!d->rt) {
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
}

int mrdp_nexthop_of(const struct mrdp_dev *d, unsigned plane, uint32_t dst,
		    uint32_t *nh)
{
	return mrdp_route_nexthop(&d->rt[plane], dst, nh);
}

int mrdp_nexthop_onlink(const struct mrdp_dev *d, unsigned plane, uint32_t ip)
{
	uint32_t nh;

	return mrdp_route_nexthop(&d->rt[plane], ip, &nh) == 0 && nh == ip;
}

int mrdp_nexthop_kernel_mac(struct mrdp_dev *d, unsigned plane, uint32_t nh,
			    uint8_t mac[6])
{
	int ifx = d->plane[plane].ifindex;

	return d->rnl && ifx && mrdp_route_nl_neigh(d->rnl, ifx, nh, mac);
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
