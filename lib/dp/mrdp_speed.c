// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's port rate, summed over its planes (reliability.md
 * MR-CC-11): what the receiver's rate hints share (MR-CC-7). A port on a
 * kernel interface (af_packet, af_xdp) reports the interface's speed as
 * the kernel knows it (/sys/class/net/IF/speed: what ethtool shows; the
 * af_packet PMD's own link speed is a constant); a PCI port its link
 * status from DPDK. A port that reports no speed (down, virtual without
 * one, memif) counts the caller's default.
 */
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>

#include <rte_ethdev.h>

#include "mrdp_int.h"

static uint32_t kernel_speed(int ifindex)
{
	char ifn[IF_NAMESIZE], path[64 + IF_NAMESIZE], buf[32];
	long v;

	if (!ifindex || !if_indextoname((unsigned)ifindex, ifn))
		return 0;
	snprintf(path, sizeof(path), "/sys/class/net/%s/speed", ifn);
	/* Reading fails (EINVAL) on an interface that is down or has no
	 * speed; it says -1 on some virtual ones. */
	if (mr_devconf_read_line(path, buf, sizeof(buf)))
		return 0;
	v = strtol(buf, NULL, 10);
	return v > 0 && v <= UINT32_MAX ? (uint32_t)v : 0;
}

static uint32_t plane_speed(const struct mrdp_plane *p)
{
	struct rte_eth_link l;
	uint32_t s = kernel_speed(p->ifindex);

	/* A service port: no ethdev here (the default rate). */
	if (s || !p->started || p->svc)
		return s;
	if (rte_eth_link_get_nowait(p->port_id, &l) != 0 || !l.link_status ||
	    l.link_speed == RTE_ETH_SPEED_NUM_NONE ||
	    l.link_speed == RTE_ETH_SPEED_NUM_UNKNOWN)
		return 0;
	return l.link_speed;
}

uint32_t mrdp_link_mbps(const struct mrdp_dev *d, uint32_t dflt,
			unsigned *nread)
{
	uint64_t sum = 0;
	unsigned i, n = 0;

	for (i = 0; i < d->nplanes; i++) {
		uint32_t s = plane_speed(&d->plane[i]);

		n += s != 0;
		sum += s ? s : dflt;
	}
	if (nread)
		*nread = n;
	return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}
