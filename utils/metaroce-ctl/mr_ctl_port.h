/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * --port DEVARGS of metaroce-ctl: syntax checks and what the named
 * interface (iface=) tells about the port (MTU, MAC), read in the caller's
 * network namespace.
 */
#ifndef MR_CTL_PORT_H
#define MR_CTL_PORT_H

#include <net/if.h>
#include <stddef.h>
#include <stdint.h>

/* Bytes a MetaRoCE packet adds to its RoCE payload on an IP netdev:
 * IPv6 40 (every device has the link-local IPv6 GID; IPv4 is 20) + UDP 8
 * + BTH 32 + PTH 8 + up to 32 of extensions + ICRC 4. */
#define MRCTL_HDR_OVERHEAD 124
/* Largest RoCE MTU an af_xdp port carries (lib/dp/mrdp_port.c). */
#define MRCTL_AF_XDP_MAX_MTU 2048

struct mrctl_port {
	char dev[64]; /* vdev name (net_af_packet0) or PCI addr */
	int is_pci;
	int is_service; /* service:<socket> (metaroced owns the ports) */
	char iface[IF_NAMESIZE]; /* iface= value, "" if none */
	int iface_exists;	 /* a netdev of this namespace */
	unsigned netdev_mtu;	 /* when iface_exists */
	uint8_t mac[6];		 /* when iface_exists and has_mac */
	int has_mac;
};

/* Check one devargs string; fill p. 0, or -1 with a reason in err. */
int mrctl_port_parse(const char *devargs, struct mrctl_port *p, char *err,
		     size_t errlen);

/* --port IFACE: a bare interface name of this namespace stands for the
 * net_mrpkt port on it (lib/dp's AF_PACKET port with UDP GSO, the default
 * kind for a kernel netdev), numbered k: out = "net_mrpkt<k>,iface=IFACE"
 * and 1; 0 when arg is not such a name (it is parsed as devargs then). */
int mrctl_port_expand(const char *arg, unsigned k, char *out, size_t cap);

/* Largest RoCE MTU (256..4096) a netdev MTU carries, 0 if none. */
unsigned mrctl_roce_mtu(unsigned netdev_mtu);

#endif /* MR_CTL_PORT_H */
