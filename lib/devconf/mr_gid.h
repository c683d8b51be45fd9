/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The GID table of a device, made from its record: one order for the
 * sysfs files metaroce-ctl writes, the provider's checks and the
 * datapath's addresses (docs/spec/routing.md MR-ADDR-1..4). Every GID is
 * RoCE v2 (UDP); every listed GID is an address the datapath sends from
 * and receives on:
 *
 *   0  fe80::<EUI-64 of the MAC>   link-local IPv6 (always)
 *   1  ::ffff:a.b.c.d              the IPv4 address (record ip=)
 *   2  the global IPv6 address     (record ip6=, when given)
 *
 * Index 0 is the link-local GID as on Linux RoCE devices (mlx5, rxe),
 * so a program that takes the port's first GID talks IPv6 link-local.
 *
 * Address ids (the engine's dest/src, lib/dp/mrdp.h): an IPv4 address is
 * its own id (host order); an IPv6 address gets an id from the datapath's
 * address book, in MR_GID_ID6_BASE.. (224.0.0.0/4: multicast, never an
 * IPv4 peer), so the two never collide.
 */
#ifndef MR_GID_H
#define MR_GID_H

#include <stdint.h>

#include "mr_devconf.h"

#define MR_GID_MAX 3
#define MR_GID_INDEX_IPV4 1 /* where the IPv4-mapped GID always is */
#define MR_GID_ID6_BASE 0xe0000000u
#define MR_GID_ID6_MAX 0x10000u /* ids MR_GID_ID6_BASE + 1 .. + MAX - 1 */

/* What a GID is; also the kind a peer GID must match (MR-ADDR-2). */
enum mr_gid_kind {
	MR_GID_LINKLOCAL = 0, /* fe80::/10 */
	MR_GID_IPV4 = 1,      /* ::ffff:a.b.c.d, unicast */
	MR_GID_GLOBAL6 = 2,   /* any other unicast IPv6 address */
};

struct mr_gid {
	uint8_t raw[16];
	enum mr_gid_kind kind;
};

/* The device's table: returns the number of GIDs (2 or 3). */
unsigned mr_gid_table(const struct mr_devconf *c, struct mr_gid out[MR_GID_MAX]);

/* The kind of a peer's GID, or -1 for one no device can address: ::,
 * ::1, multicast, IPv4-mapped 0.0.0.0, 224/4, 240/4 and broadcast. */
int mr_gid_kind_of(const uint8_t raw[16]);

/* Is an engine address id an IPv6 one (from the address book)? */
static inline int mr_gid_id_is6(uint32_t id)
{
	return (id & 0xf0000000u) == MR_GID_ID6_BASE;
}

/* A GID as sysfs prints it: eight groups of four hex digits. */
void mr_gid_sysfs(const uint8_t raw[16], char buf[40]);

/* The link-local address of a MAC: fe80::/64 with the modified EUI-64
 * interface id (RFC 4291 2.5.1). */
void mr_gid_ll6_of_mac(const uint8_t mac[6], uint8_t ll6[16]);

/* Does the device directory dir of a sysfs view (what metaroce-ctl wrote
 * at link add: ports/1/gids/N, ports/1/gid_attrs/types/N) list exactly
 * mr_gid_table(c)? libibverbs reads the GIDs from those files, the
 * provider serves the table: a view made by a metaroce-ctl from before
 * the table changed lists others. 0: it does; -1: it does not, and why
 * says the first difference ("GID 0 is X there, the device serves Y"). */
int mr_gid_view_check(const char *dir, const struct mr_devconf *c, char *why,
		      size_t len);

#endif /* MR_GID_H */
