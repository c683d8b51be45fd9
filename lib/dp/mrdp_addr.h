/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The address book: 32-bit ids for IPv6 addresses (docs/spec/routing.md
 * MR-ADDR-3). The engine names peers by a 32-bit id (mr_core.h: dest,
 * src); an IPv4 address is its own id, an IPv6 address gets the next free
 * id of MR_GID_ID6_BASE + 1.. (lib/devconf/mr_gid.h) the first time it is
 * seen, and keeps it for the book's life: an id never names another
 * address, so a connection bound to an id (MR-RSP-1) stays bound to one
 * address. A link-local next hop is scoped by its plane (the same fe80::1
 * is a different router on each plane); peers have scope 0.
 *
 * One book per provider device, shared by every context and the datapath
 * (mrdp_config.addrs), so ids taken at create_ah before the datapath
 * opens stay valid. Thread safe: taking an id locks the book's mutex;
 * reading the address of an id does not (an entry is written once,
 * before its id is handed out under the mutex).
 *
 * Bound: MR_GID_ID6_MAX - 1 addresses; beyond, -ENOSPC (a packet from a
 * new address is dropped and counted, a verb naming one fails).
 */
#ifndef MRDP_ADDR_H
#define MRDP_ADDR_H

#include <stdint.h>

struct mrdp_addrs;

/* NULL on allocation failure. */
struct mrdp_addrs *mrdp_addrs_new(void);
void mrdp_addrs_free(struct mrdp_addrs *b);

/* The id of IPv6 address a (wire order) in scope (0: a peer; 1 + plane:
 * a link-local next hop of that plane). create 0: only an existing one.
 * 0 and *id, -ENOENT (absent, !create) or -ENOSPC (book full). */
int mrdp_addrs_id(struct mrdp_addrs *b, const uint8_t a[16], uint8_t scope,
		  int create, uint32_t *id);

/* The address of an IPv6 id, and its scope if non-NULL; NULL for an id
 * the book never gave out. */
const uint8_t *mrdp_addrs_get(const struct mrdp_addrs *b, uint32_t id,
			      uint8_t *scope);

#endif /* MRDP_ADDR_H */
