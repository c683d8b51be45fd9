/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two simulated endpoints joined by a scripted link, driven in simulated
 * time exactly as the DPDK datapath drives the core: at each instant every
 * endpoint's mr_ep_tx() is drained into its link direction, every packet
 * due is handed to the peer's mr_ep_rx(), and mr_ep_handle_expiry() runs
 * when mr_ep_next_deadline() has come; then the clock jumps to the
 * earliest of the next delivery and the endpoints' deadlines.
 *
 * The world also records what the core did through its callbacks
 * (completions, async QP errors, placements), counts allocations made
 * after setup (the core must allocate only at create time), and flags
 * every harness-visible contract breach: a corrupted packet accepted, a
 * placement outside registered memory, time that stops advancing.
 */
#ifndef MRSIM_WORLD_H
#define MRSIM_WORLD_H

#include <stdint.h>

#include "mr_core.h"
#include "mrsim_link.h"
#include "mrsim_mem.h"
#include "mrsim_rand.h"

struct mrsim_world;

/* One completion as seen by the harness, with the time it arrived. */
struct mrsim_cqe {
	struct mr_cqe c;
	uint64_t t;
};

struct mrsim_node {
	struct mrsim_world *w;
	int idx; /* 0 or 1; packets go out on w->dir[idx] */
	struct mr_ep *ep;
	struct mrsim_mem mem;
	struct mrsim_rand rand; /* injected into the core */
	struct mrsim_cqe *cqes;
	size_t ncqe, cqe_cap;
	uint64_t qp_errors;  /* callbacks.qp_error */
	uint64_t srq_limits; /* callbacks.srq_limit */
	uint64_t allocs, frees;
	uint64_t tx_pkts, rx_ok, rx_dropped;
	uint8_t *txbuf;
	size_t txcap;
};

struct mrsim_world {
	struct mrsim_node node[2];
	struct mrsim_dir dir[2]; /* dir[i]: node i -> node 1 - i */
	uint64_t now;
	uint64_t steps;
	int setup_done; /* allocations after this are counted as bugs */
	uint64_t allocs_after_setup;
	/* First contract breach seen, with its time; 0 = none. */
	int broken;
	char why[256];
	/* Optional: called at the start of each instant (posting work);
	 * returns the next time it wants to be called (UINT64_MAX: only when
	 * something else happens). */
	uint64_t (*on_instant)(void *user, struct mrsim_world *w);
	void *on_instant_user;
	/* Optional checks at the moment things happen (user = hook_user):
	 * a placement on node, before its bytes are copied; a completion,
	 * right after it was recorded. */
	void (*on_place)(void *user, int node, const uint8_t *dst,
			 uint32_t len);
	void (*on_cqe)(void *user, int node, const struct mr_cqe *cqe);
	void *hook_user;
};

/*
 * Create both endpoints with ep_cfg (same config on both, as the protocol
 * requires) and the two link directions. seed derives every generator.
 * Returns 0 or a negative MR_E* from mr_ep_create (-MR_ENOMEM also for a
 * link setup failure).
 */
int mrsim_world_init(struct mrsim_world *w, const struct mr_ep_config *ep_cfg,
		     const struct mrsim_link_cfg *link_ab,
		     const struct mrsim_link_cfg *link_ba, uint64_t seed);

/* Destroy endpoints (after the caller destroyed its QPs/SRQs), links and
 * memory. */
void mrsim_world_fini(struct mrsim_world *w);

/* The injected allocator, usable before init for QP creation accounting. */
struct mr_mem mrsim_world_mem(struct mrsim_node *n);

/*
 * Advance the simulation until done(user) is true (returns 0), nothing is
 * left to happen (returns 1: idle), simulated time passes bound_ns
 * (returns -1), or a contract breach is seen (returns -2, w->why says
 * which). done may be NULL (run until idle or bound).
 */
int mrsim_world_run(struct mrsim_world *w, int (*done)(void *user), void *user,
		    uint64_t bound_ns);

/* Mark the world broken with a printf-style reason (first one wins). */
void mrsim_world_fail(struct mrsim_world *w, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* MRSIM_WORLD_H */
