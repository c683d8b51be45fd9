/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * How fast the senders re-draw the paths a black hole swallows (issue 9:
 * "one spine of a plane failing: affected paths re-drawn within 3 RTTs").
 * A path is affected when one of its data packets is dropped by a failed
 * link; it is re-drawn when its sender next sends on that path id with
 * another UDP source port (entropy, MR-MP-5). Paths are keyed by (sender,
 * receiver, path id): with several QPs per host pair they share a key, and
 * only a path's first black-holed entropy is followed.
 */
#ifndef MRSIM_REDRAW_H
#define MRSIM_REDRAW_H

#include <stdint.h>

struct mrsim_world;
struct mrsim_pkt;

/* A packet left a host (after its path id and entropy were set). */
void mrsim_redraw_tx(struct mrsim_world *w, const struct mrsim_pkt *pkt,
		     uint64_t now_ps);

/* A failed link dropped pkt. */
void mrsim_redraw_drop(struct mrsim_world *w, const struct mrsim_pkt *pkt,
		       uint64_t now_ps);

struct json_object;

/* Into the summary: blackholed_paths, redrawn_paths, redraw_p50_us,
 * redraw_p99_us, redraw_max_us (drop -> re-draw, of the re-drawn) and
 * redraw_us, every delay ascending (at most 4096). */
void mrsim_redraw_json(const struct mrsim_world *w, struct json_object *o);

void mrsim_redraw_free(struct mrsim_world *w);

#endif /* MRSIM_REDRAW_H */
