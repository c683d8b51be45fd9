// SPDX-License-Identifier: BSD-2-Clause
/*
 * The device's port rate, summed over its planes (reliability.md
 * MR-CC-11): what the receiver's rate hints share (MR-CC-7). A port on a
 * kernel interface (af_packet, af_xdp) reports the interface's speed as
 * the kernel knows it (/sys/class/net/IF/speed: what ethtool shows; the
 * af_packet PMD's own link speed is a constant); a PCI port its link
 * status from DPDK. A port that reports no speed (down, virtual without
 * one, memif) counts the caller's default, and so does a virtual
 * interface with neither a device nor a lower interface under it (veth,
 * tun, dummy): its speed is a constant of its driver (veth says 10000),
 * not a rate. Taken as one, it capped the pacer and the receiver's rate
 * hints of a veth link at 10 Gb/s, below what the link carries (kernel
 * TCP 13.6 Gb/s on the test bed; bench/wire/FINDINGS.md 13.2). A macvlan
 * or VLAN (a lower interface) reports its NIC's speed and keeps it.
 */
#include <dirent.h>
#include <net/if.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rte_ethdev.h>

#include "mrdp_int.h"

/* Has interface ifn a device (a NIC's bus entry) or a lower interface
 * (macvlan, VLAN, bond) under it in sysfs? */
static int has_hardware(const char *ifn)
{
	char path[64 + IF_NAMESIZE];
	struct dirent *e;
	DIR *dir;
	int found = 0;

	snprintf(path, sizeof(path), "/sys/class/net/%s/device", ifn);
	if (access(path, F_OK) == 0)
		return 1;
	snprintf(path, sizeof(path), "/sys/class/net/%s", ifn);
	dir = opendir(path);
	if (!dir)
		return 0;
	while (!found && (e = readdir(dir)) != NULL)
		found = strncmp(e->d_name, "lower_", 6) == 0;
	closedir(dir);
	return found;
}

static uint32_t kernel_speed(int ifindex)
{
	char ifn[IF_NAMESIZE], path[64 + IF_NAMESIZE], buf[32];
	long v;

	if (!ifindex || !if_indextoname((unsigned)ifindex, ifn) ||
	    !has_hardware(ifn))
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

	/* A port on a kernel interface has the kernel's word or none (the
	 * af_packet PMD's link speed is its constant, not the link's); a
	 * service port has no ethdev here (the default rate). */
	if (s || p->ifindex || !p->started || p->svc)
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
