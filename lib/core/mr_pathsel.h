/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Path selection of one connection (docs/spec/reliability.md MR-MP-*), as
 * plug-ins: each algorithm is one file (mr_pathsel_<name>.c) with its own
 * state in the `state` area of the common base struct mr_pathsel, found
 * by name in one registry (mr_pathsel.c: one line per algorithm). The
 * base owns what every algorithm shares: each path's entropy and plane,
 * the repath step and the counters. Registered:
 *
 *   mr_pathsel_ops_spray   round-robin over the paths with window space
 *                          (mr_pathtx_space() > 0). A path whose RTO fired
 *                          and has not made progress since (backoff > 0)
 *                          is used only when it has nothing in flight, so
 *                          one packet at a time probes it (MR-MP-4).
 *                          Each connection starts at a drawn path
 *                          (MR-MP-11), not at path 0. A path whose
 *                          plane's local port is backlogged is passed
 *                          over while a path of a free plane may send
 *                          (MR-MP-12).
 *   mr_pathsel_ops_single  always path 0 (gbn, and a single-path
 *                          MetaRoCE baseline); never repaths: RoCEv2's
 *                          5-tuple is fixed for the life of a QP.
 *
 * Each path has an entropy value (the UDP source port, so ECMP hashes it
 * onto some route) and a plane (the port / network plane, path % planes).
 * Repath (MR-MP-5): after a path's RTO the engine calls
 * mr_pathsel_on_rto() and the path gets a new, different entropy drawn
 * from the injected randomness; its plane, path id and ppsn space stay.
 *
 * No allocation. Threading: none.
 */
#ifndef MR_PATHSEL_H
#define MR_PATHSEL_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_pathtx.h"

/* UDP source ports used as entropy: the dynamic range. */
#define MR_ENTROPY_MIN 49152u
#define MR_ENTROPY_MAX 65535u

struct mr_pathsel;

/* Size of the per-algorithm state area in struct mr_pathsel. */
#define MR_PATHSEL_STATE_MAX 64

struct mr_pathsel_ops {
	const char *name;
	const char *help;  /* one line for listings */
	size_t state_size; /* bytes of its state (<= MR_PATHSEL_STATE_MAX) */
	/* Optional: set up the state (zeroed before) after the base. */
	void (*init)(struct mr_pathsel *ps);
	/* Pick the path for the next packet given the per-path senders
	 * tx[0..num_paths). Returns the path index, or -MR_EAGAIN if no path
	 * may send now. Advances the round-robin cursor only on success. */
	int (*pick)(struct mr_pathsel *ps, const struct mr_pathtx *tx,
		    uint64_t now);
	/* Path `path` had an RTO at now: repath (new entropy). */
	void (*on_rto)(struct mr_pathsel *ps, uint16_t path, uint64_t now);
};

/* Full weight of a path (MR-MP-9): a path of weight w gets w / 16 of the
 * turns a full-weight path gets. */
#define MR_PATHSEL_WEIGHT_FULL 16u

struct mr_pathsel_path {
	uint16_t entropy; /* UDP source port */
	uint8_t plane;
	uint8_t weight;	  /* 1..MR_PATHSEL_WEIGHT_FULL, set by the path
			   * manager from the path's state (MR-PM-7) */
	uint8_t credit;	  /* spray's weighted round robin (MR-MP-9) */
	uint64_t repaths; /* times this path got a new entropy */
};

struct mr_pathsel {
	const struct mr_pathsel_ops *ops;
	uint16_t num_paths; /* spray: 1..MR_MAX_PATHS; single: 1 used */
	uint8_t num_planes;
	struct mr_rand rand;
	struct mr_pathsel_path path[MR_MAX_PATHS];
	/* MR-MP-10: the connection's window (bytes), set by the requester
	 * before each pick; a path may hold at most twice its weighted share
	 * of it in flight, and one packet of pkt bytes (0: no per-path
	 * share). */
	uint64_t window;
	uint32_t pkt;
	/* MR-MP-3: packets a path sends in a row before the turn passes
	 * (spray; 0 or 1: one, plain per-packet round robin). A datapath
	 * that coalesces a path's consecutive frames into one UDP GSO
	 * super-frame (lib/dp net_mrpkt) sends a run as one. */
	uint16_t run;
	/* MR-MP-12: planes whose local port is nearly full (bit k:
	 * plane k), set by the requester before each pick from what the
	 * datapath last said (mr_ep_set_planes_backlogged()); spray takes a
	 * path of another plane when one may send. 0: no preference. */
	uint32_t planes_backlogged;
	/* MR-MP-14: the plane the connection's first packet goes on (0..
	 * num_planes - 1), set by the requester before each pick from the
	 * endpoint's turn, which it moves on after a connection's first
	 * pick: an endpoint's connections start on its planes in rotation.
	 * -1 (as init leaves it): MR-MP-11's drawn start alone. */
	int32_t first_plane;
	uint64_t picks, no_path; /* counters */
	/* The algorithm's own state (ops->state_size bytes). */
	_Alignas(8) unsigned char state[MR_PATHSEL_STATE_MAX];
};

#define MR_PATHSEL_STATE(ps, type) ((type *)(void *)(ps)->state)

/* The algorithm registered under name, or NULL. */
const struct mr_pathsel_ops *mr_pathsel_find(const char *name);

/* The i-th registered algorithm (0..), NULL past the last: listings. */
const struct mr_pathsel_ops *mr_pathsel_algo(unsigned i);

/* Initialise: num_paths (1..MR_MAX_PATHS), num_planes (1..num_paths;
 * path i uses plane i % num_planes), distinct initial entropies drawn from
 * rand (rand.next must be set). Returns 0 or -MR_EINVAL (also for an ops
 * table without pick/on_rto or with too large a state). */
int mr_pathsel_init(struct mr_pathsel *ps, const struct mr_pathsel_ops *ops,
		    uint16_t num_paths, uint8_t num_planes,
		    const struct mr_rand *rand);

/* Wrappers over the ops. */
static inline int mr_pathsel_pick(struct mr_pathsel *ps,
				  const struct mr_pathtx *tx, uint64_t now)
{
	return ps->ops->pick(ps, tx, now);
}

static inline void mr_pathsel_on_rto(struct mr_pathsel *ps, uint16_t path,
				     uint64_t now)
{
	ps->ops->on_rto(ps, path, now);
}

/* Entropy / plane of a path (for struct mr_tx_meta). */
static inline uint16_t mr_pathsel_entropy(const struct mr_pathsel *ps,
					  uint16_t path)
{
	return ps->path[path].entropy;
}

static inline uint8_t mr_pathsel_plane(const struct mr_pathsel *ps,
				       uint16_t path)
{
	return ps->path[path].plane;
}

/* Give path a new entropy different from its current one and from the
 * other paths on its plane (the repath step, also usable by other
 * policies). */
void mr_pathsel_repath(struct mr_pathsel *ps, uint16_t path);

#endif /* MR_PATHSEL_H */
