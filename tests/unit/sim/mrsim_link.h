/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A scripted link in simulated time: one direction of the wire between two
 * endpoints of the unit harness (two of these make a link). Packets are
 * copied in with the time they were sent and the path the core chose, and
 * come out at the time the script says: base delay, per-path delay and
 * jitter, loss by probability or by exact packet index, extra reordering,
 * duplication, single-bit corruption (the receiver's ICRC must drop it), ECN
 * CE marks, and a cut after which nothing gets through (peer vanished).
 *
 * Deterministic: all randomness comes from the direction's own generator,
 * seeded by the caller. Packets on one path stay in FIFO order unless the
 * script reorders them explicitly, as on a real ECMP path; packets on
 * different paths overtake each other freely.
 *
 * Memory: packet buffers come from a free list that grows as needed and is
 * released by mrsim_dir_fini(); the harness may allocate, the core may not.
 */
#ifndef MRSIM_LINK_H
#define MRSIM_LINK_H

#include <stddef.h>
#include <stdint.h>

#include "mrsim_rand.h"

/* Largest packet the link carries: 4096-byte MTU plus every header. */
#define MRSIM_PKT_MAX (4096 + 512)
/* Per-path delays are kept for this many path ids (path_id modulo). */
#define MRSIM_MAX_PATHS 16

struct mrsim_link_cfg {
	uint64_t delay_ns;  /* base one-way delay */
	uint64_t jitter_ns; /* plus uniform [0, jitter_ns) per packet */
	uint64_t path_delay_ns[MRSIM_MAX_PATHS]; /* plus this per path */
	uint32_t loss_ppm;    /* random loss, parts per million */
	uint32_t reorder_ppm; /* these get reorder_ns extra, out of FIFO */
	uint64_t reorder_ns;
	uint32_t dup_ppm;     /* delivered twice */
	uint32_t corrupt_ppm; /* one bit flipped */
	uint32_t ce_ppm;      /* delivered with ECN CE */
	/* Drop exactly the packets with these 0-based indices (in the order
	 * they were sent in this direction). Sorted ascending. */
	const uint64_t *drop_idx;
	size_t n_drop;
	/* Optional: return nonzero to drop packet number idx. */
	int (*filter)(void *user, uint64_t idx, uint64_t now,
		      const uint8_t *pkt, size_t len, uint16_t path_id);
	void *filter_user;
	/* From this time on (if nonzero) every packet is dropped. */
	uint64_t cut_at_ns;
};

struct mrsim_pkt {
	uint64_t t;   /* delivery time */
	uint64_t seq; /* tie-break: FIFO among equal times */
	uint64_t idx; /* index of the send that produced it */
	uint32_t len;
	uint16_t path_id;
	uint8_t ecn_ce;
	uint8_t corrupted; /* a bit was flipped (the ICRC must catch it) */
	struct mrsim_pkt *next_free;
	uint8_t data[MRSIM_PKT_MAX];
};

struct mrsim_dir_stats {
	uint64_t sent; /* packets given to the link */
	uint64_t sent_bytes;
	uint64_t delivered; /* packets handed to the receiver */
	uint64_t lost_rand; /* dropped by loss_ppm */
	uint64_t lost_idx;  /* dropped by drop_idx */
	uint64_t lost_filter;
	uint64_t lost_cut;
	uint64_t reordered;
	uint64_t duplicated;
	uint64_t corrupted;
	uint64_t ce_marked;
};

struct mrsim_dir {
	struct mrsim_link_cfg cfg;
	struct mrsim_rand rand;
	struct mrsim_pkt **heap; /* min-heap on (t, seq) */
	size_t n, cap;
	struct mrsim_pkt *free;
	uint64_t seq;
	size_t drop_pos;
	uint64_t last_t[MRSIM_MAX_PATHS]; /* per-path FIFO */
	struct mrsim_dir_stats st;
};

/* Returns 0, or -1 if the configuration is invalid (drop_idx unsorted). */
int mrsim_dir_init(struct mrsim_dir *d, const struct mrsim_link_cfg *cfg,
		   uint64_t seed, uint64_t stream);
void mrsim_dir_fini(struct mrsim_dir *d);

/* Hand one packet to the link at time now. Returns 0, or -1 if len
 * exceeds MRSIM_PKT_MAX or memory ran out (the harness treats both as a
 * test failure, never as loss). */
int mrsim_dir_send(struct mrsim_dir *d, uint64_t now, const uint8_t *pkt,
		   size_t len, uint16_t path_id);

/* Time of the next delivery, or UINT64_MAX if nothing is in flight. */
uint64_t mrsim_dir_next_time(const struct mrsim_dir *d);

/* The next packet due at or before now (earliest first), or NULL. The
 * caller hands it back with mrsim_dir_release() once consumed. */
struct mrsim_pkt *mrsim_dir_pop(struct mrsim_dir *d, uint64_t now);
void mrsim_dir_release(struct mrsim_dir *d, struct mrsim_pkt *p);

/* Packets in flight. */
static inline size_t mrsim_dir_inflight(const struct mrsim_dir *d)
{
	return d->n;
}

#endif /* MRSIM_LINK_H */
