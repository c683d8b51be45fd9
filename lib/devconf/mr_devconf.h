/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The record of one MetaRoCE device, shared by metaroce-ctl (writes it),
 * the provider and the datapath (read it).
 *
 * Where it lives: `metaroce-ctl link add` writes it as
 *   <sysfs view>/class/infiniband/<name>/metaroce.conf
 * so a provider that libibverbs hands an ibdev_path finds the record next
 * to the sysfs files, with no other configuration. The sysfs view is
 *   $METAROCE_RUNDIR/net-<netns inode>/sysfs   (default RUNDIR /run/metaroce)
 * one per network namespace, so each emulated host sees its own devices.
 *
 * Format: text, one `key=value` per line, '#' comments:
 *   name=mr0
 *   port=net_af_packet0,iface=veth0     (repeated: one line per plane)
 *   ip=192.0.2.1/24
 *   mac=02:00:c0:00:02:01
 *   mtu=4096                            (RoCE active MTU, 256..4096)
 *   udp_port=4797
 *   uverbs=uverbs0                      (name of the /dev/infiniband node)
 *   opt.paths=8                         (a knob, mr_knobs.h; repeated)
 *   gateway=1,10.101.1.254              (plane 1's gateway, for a port the
 *                                        kernel does not see; repeated;
 *                                        docs/spec/routing.md MR-ROUTE-4;
 *                                        an IPv6 address is plane 1's
 *                                        IPv6 router: one of each family)
 *   ip6=2001:db8::1/64                  (optional: the device's global
 *                                        IPv6 address, GID 2; mr_gid.h)
 */
#ifndef MR_DEVCONF_H
#define MR_DEVCONF_H

#include "mr_knobs.h"

#include <stdint.h>
#include <stdio.h>

#define MR_DEVCONF_MAX_PORTS 8
#define MR_DEVCONF_NAME_MAX 64
#define MR_DEVCONF_ARGS_MAX 256
#define MR_DEVCONF_FILE "metaroce.conf"

struct mr_devconf {
	char name[MR_DEVCONF_NAME_MAX];
	unsigned nports;
	char ports[MR_DEVCONF_MAX_PORTS][MR_DEVCONF_ARGS_MAX];
	uint32_t ip;     /* host byte order */
	uint8_t prefix;  /* 0..32 */
	uint8_t mac[6];
	uint32_t mtu;    /* 256, 512, 1024, 2048 or 4096 */
	uint16_t udp_port;
	char uverbs[MR_DEVCONF_NAME_MAX];
	/* Per port: the gateway of its plane, host order (0: none; only
	 * used where the kernel does not see the port, MR-ROUTE-4). */
	uint32_t gateway[MR_DEVCONF_MAX_PORTS];
	/* IPv6 (routing.md MR-ADDR-1): the global address (wire order) and
	 * its prefix length when has_ip6; the link-local address is the
	 * MAC's (mr_gid.h). Per port the IPv6 gateway, all zero: none. */
	int has_ip6;
	uint8_t ip6[16];
	uint8_t prefix6; /* 1..128 */
	uint8_t gateway6[MR_DEVCONF_MAX_PORTS][16];
	struct mr_knob_set opts; /* the device's layer of the knobs */
};

/* Parse "a.b.c.d/len" (len 0..32). Returns 0 or -1. */
int mr_devconf_parse_ip(const char *s, uint32_t *ip, uint8_t *prefix);
/* Parse "ADDR/LEN" (IPv6, len 1..128) for a device's own global address:
 * refuses link-local (the device derives its own), multicast, ::, ::1
 * and IPv4-mapped addresses. Returns 0 or -1. */
int mr_devconf_parse_ip6(const char *s, uint8_t a[16], uint8_t *prefix);
/* Parse an IPv6 gateway address (no prefix): unicast, link-local
 * allowed. 0 or -1. */
int mr_devconf_parse_gw6(const char *s, uint8_t a[16]);
/* Print an IPv6 address in its RFC 5952 text form (buf of 46 bytes). */
void mr_devconf_ip6_str(const uint8_t a[16], char buf[46]);

/* Parse "xx:xx:xx:xx:xx:xx"; refuses multicast and all-zero. 0 or -1. */
int mr_devconf_parse_mac(const char *s, uint8_t mac[6]);
/* Is s a valid RDMA device name (1..63 chars of [A-Za-z0-9_.-], not
 * "." or "..")? */
int mr_devconf_valid_name(const char *s);

/* Read a record. Returns 0, or -1 with a one-line reason in err (an
 * opt. line naming no knob, or out of its range, is refused). */
int mr_devconf_read(const char *path, struct mr_devconf *c, char *err,
		    size_t errlen);
/* The first line of the file at path (a sysfs attribute, a view's file)
 * into buf, newline cut: 0, or -1 if it cannot be opened or is empty. */
int mr_devconf_read_line(const char *path, char *buf, size_t len);
/* Write a record to f. Returns 0 or -1 (errno set). */
int mr_devconf_write(FILE *f, const struct mr_devconf *c);

/* Node GUID derived from the MAC (EUI-64: flip U/L bit, insert ff:fe). */
uint64_t mr_devconf_node_guid(const uint8_t mac[6]);

#endif /* MR_DEVCONF_H */
