/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The neighbour table of a device: IPv4 -> MAC, resolved by ARP, learnt
 * from received packets. No DPDK and no clock here (time is passed in), so
 * the unit tests drive it with literal timestamps. Queued packets are
 * opaque pointers the caller owns (mbufs in the datapath).
 *
 * Keys are address ids (mrdp.h: IPv4 addresses, or IPv6 ids of the
 * address book); the caller asks with ARP or ND as the id says.
 *
 * Expiry (docs/spec/routing.md MR-ROUTE-8): an entry is REACHABLE for
 * reach_ns (MRDP_NEIGH_REACHABLE_NS; knob dp_neigh_reach_ms) after its last confirmation (an answer, or a
 * packet from the neighbour at that MAC); the first lookup after that
 * makes it PROBE: packets still go to the known MAC while requests are
 * sent as for a new entry; an answer makes it REACHABLE again (at its
 * new MAC if it moved), MRDP_ARP_TRIES unanswered requests make it FAILED.
 * Entries are never removed (a device talks to a bounded set of peers;
 * MRDP_NEIGH_SIZE of them); a peer that stops answering is FAILED for
 * MRDP_NEIGH_HOLD_NS, then resolution starts again on the next packet.
 * Not thread safe: the device lock covers it.
 */
#ifndef MRDP_NEIGH_H
#define MRDP_NEIGH_H

#include <stdint.h>

#define MRDP_NEIGH_SIZE 1024	       /* power of two */
#define MRDP_NEIGH_QLEN 16	       /* packets queued per unresolved peer */
#define MRDP_ARP_RETRY_NS 100000000ull /* 100 ms between requests */
#define MRDP_ARP_TRIES 5	       /* then FAILED */
#define MRDP_NEIGH_HOLD_NS 1000000000ull /* FAILED for 1 s */
/* Linux's base_reachable_time (30 s) without its random factor. */
#define MRDP_NEIGH_REACHABLE_NS 30000000000ull

enum mrdp_neigh_state {
	MRDP_NEIGH_FREE = 0,
	MRDP_NEIGH_INCOMPLETE,
	MRDP_NEIGH_REACHABLE,
	MRDP_NEIGH_FAILED,
	MRDP_NEIGH_PROBE, /* expired: still used, being re-verified */
};

struct mrdp_neigh {
	uint32_t ip;
	uint8_t mac[6];
	uint8_t state;	  /* enum mrdp_neigh_state */
	uint8_t tries;	  /* requests sent in this resolution */
	uint8_t planes;	  /* planes whose next hop this is: where ARP asks
			   * (set by the caller; 0: every plane) */
	uint64_t next_ns; /* INCOMPLETE, PROBE: next request; FAILED: end of
			   * hold */
	uint64_t confirmed_ns; /* REACHABLE: last confirmation */
	unsigned nq;
	void *q[MRDP_NEIGH_QLEN];
};

struct mrdp_neigh_table {
	struct mrdp_neigh e[MRDP_NEIGH_SIZE];
	unsigned count;	     /* used entries */
	unsigned resolved;   /* REACHABLE entries */
	unsigned incomplete; /* INCOMPLETE and PROBE entries */
	uint64_t next_due;   /* earliest next_ns of those */
	uint64_t expired;    /* REACHABLE entries that turned PROBE */
	uint64_t reach_ns;   /* reachable time (MRDP_NEIGH_REACHABLE_NS
			      * unless the owner sets another) */
};

void mrdp_neigh_init(struct mrdp_neigh_table *t);

/* The entry of ip, or NULL. */
struct mrdp_neigh *mrdp_neigh_find(struct mrdp_neigh_table *t, uint32_t ip);

/*
 * The entry to send to ip at now: a REACHABLE one, or one being resolved
 * (a new INCOMPLETE entry whose first request is due at once; a FAILED one
 * whose hold has ended restarts; a REACHABLE one past its reachable time
 * turns PROBE). NULL if the table is full. The caller looks at
 * mrdp_neigh_usable(): send to ->mac; else INCOMPLETE enqueue, FAILED
 * drop.
 */
struct mrdp_neigh *mrdp_neigh_lookup(struct mrdp_neigh_table *t, uint32_t ip,
				     uint64_t now);

/* Does the entry hold a MAC to send to (REACHABLE or PROBE)? */
static inline int mrdp_neigh_usable(const struct mrdp_neigh *e)
{
	return e->state == MRDP_NEIGH_REACHABLE ||
	       e->state == MRDP_NEIGH_PROBE;
}

/* Queue a packet on an INCOMPLETE entry. 0, or -1 if the queue is full. */
int mrdp_neigh_enqueue(struct mrdp_neigh *e, void *pkt);

/*
 * ip is at mac (a received packet or ARP message said so). create: add the
 * entry if absent. Returns the entry (its queued packets, if any, are now
 * the caller's to send: q[0..nq), then set nq = 0), or NULL (absent and
 * !create, or the table full).
 */
struct mrdp_neigh *mrdp_neigh_learn(struct mrdp_neigh_table *t, uint32_t ip,
				    const uint8_t mac[6], int create,
				    uint64_t now);

/*
 * Run the resolution timers due at now: send_request(user, ip) for each
 * INCOMPLETE or PROBE entry whose retry time has come; after
 * MRDP_ARP_TRIES unanswered requests the entry becomes FAILED and each
 * queued packet is passed to drop(user, pkt). Cheap when nothing is due.
 */
void mrdp_neigh_tick(struct mrdp_neigh_table *t, uint64_t now,
		     void (*send_request)(void *user, uint32_t ip),
		     void (*drop)(void *user, void *pkt), void *user);

/* Earliest time mrdp_neigh_tick has work; UINT64_MAX if none. */
uint64_t mrdp_neigh_next_deadline(const struct mrdp_neigh_table *t);

#endif /* MRDP_NEIGH_H */
