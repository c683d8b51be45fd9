/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Path manager of one connection (docs/spec/reliability.md MR-PM-*,
 * wire.md MR-PRB-*): what becomes of a path that went silent and of a
 * plane whose paths all did.
 *
 *   - A suspect path (MR-MP-8: silent for about 2 SRTT while another path
 *     progressed) is *probing*: it carries no data, only data-free PROBE
 *     packets, one at a time (MR-PM-1, MR-PM-2). Its outstanding data was
 *     declared lost by mr_pathtx and is resent on the other paths at once.
 *     An acknowledgement of a probe (any packet of the path) makes it
 *     whole again (MR-PM-3).
 *   - A plane whose paths are all probing while a path of another plane
 *     is healthy is *down* (MR-PM-4): its paths are remapped round robin
 *     onto the planes that are up, each with a new entropy, and carry data
 *     there at once; the plane itself is probed with PROBE packets sent on
 *     it (borrowing one of its former paths' ppsn space, MR-PM-5). When a
 *     plane probe is acknowledged the plane is up again and its paths go
 *     home (MR-PM-6).
 *   - Every path's health (CE and loss fractions, RTT against the best
 *     path) sets its spraying weight (MR-PM-7, MR-MP-9); a path that keeps
 *     seeing more ECN, loss or RTT than the others is re-drawn with a new
 *     UDP source port (MR-PM-8).
 *
 * A leaf module over mr_pathtx and mr_pathsel: it returns what to send
 * and what happened; the engine (mr_req.c, mr_req_rx.c) sends the probes
 * and routes the pathtx callbacks of probe records here (the ctx values
 * below mark them). It never calls up.
 *
 * Time: every entry point takes now (ns); mr_pathmgr_deadline() says
 * when a probe is next due. No allocation. Threading: none.
 */
#ifndef MR_PATHMGR_H
#define MR_PATHMGR_H

#include <stdint.h>

#include "mr_pathsel.h"
#include "mr_pathtx.h"

/* Planes one connection may use (a plane needs a path: <= paths). */
#define MR_PATHMGR_MAX_PLANES MR_MAX_PATHS

/* The ctx of a probe's mr_pathtx record (data records use ctx 0): a path
 * probe, or a probe of plane d (low byte). */
#define MR_PATHMGR_CTX_PATH (1ull << 62)
#define MR_PATHMGR_CTX_PLANE (1ull << 63)
#define MR_PATHMGR_CTX_IS_PROBE(ctx) \
	(((ctx) & (MR_PATHMGR_CTX_PATH | MR_PATHMGR_CTX_PLANE)) != 0)

/* Events (bit mask) of mr_pathmgr_on_suspect() / mr_pathmgr_on_acked(). */
enum mr_pathmgr_event {
	MR_PATHMGR_EV_PROBING = 1u << 0,    /* the path began probing */
	MR_PATHMGR_EV_PLANE_DOWN = 1u << 1, /* a plane went down, remapped */
	MR_PATHMGR_EV_PATH_BACK = 1u << 2,  /* a probing path answered */
	MR_PATHMGR_EV_PLANE_UP = 1u << 3,   /* a down plane answered */
};

struct mr_pathmgr_path {
	uint8_t home;	   /* the plane it was given (path % planes) */
	uint8_t probing;   /* suspect: probes only, no data (MR-PM-1) */
	uint64_t probe_at; /* next probe due (probing, none outstanding) */
	/* Health (MR-PM-7, -8): fractions of settled packets that were
	 * CE-marked or lost, smoothed (1/8 per sample of >= 8 packets),
	 * in 1/1024; the pathtx counters at the last sample. */
	uint16_t ce_frac, loss_frac;
	uint64_t seen_acked, seen_lost, seen_ce;
	uint64_t redraw_ok_at; /* no re-draw before (hold-off) */
};

struct mr_pathmgr_plane {
	uint8_t down;
	uint8_t probe_out;   /* a plane probe is outstanding */
	uint16_t probe_path; /* whose ppsn space the plane probes use */
	uint64_t probe_at;   /* next plane probe due */
};

/* What to send: mr_pathmgr_next_probe(). */
struct mr_pathmgr_probe {
	uint16_t path; /* path id (PTH) and pathtx the probe is sent on */
	uint8_t plane; /* plane to send it on (PTH plane, tx meta) */
	uint64_t ctx;  /* the pathtx record's ctx */
};

struct mr_pathmgr {
	uint16_t npaths;
	uint8_t nplanes;
	uint32_t remap_next;   /* round robin over the planes that are up */
	uint64_t probe_gap_ns; /* floor between two probes of one path */
	struct mr_pathmgr_path path[MR_MAX_PATHS];
	struct mr_pathmgr_plane plane[MR_PATHMGR_MAX_PLANES];
	/* Counters (never reset by the module). */
	uint64_t probes_sent, probes_acked, paths_back, planes_down, planes_up,
		redraws;
};

/* Start with every path healthy on its home plane (path % nplanes, as
 * mr_pathsel_init gave them). probe_gap_ns: the least time between two
 * probes of one path or plane (0 = 1 us). remap_seed: a value drawn for
 * this connection; the remap round robin (MR-PM-5) starts at the
 * (remap_seed mod the planes up)-th plane up. */
void mr_pathmgr_init(struct mr_pathmgr *pm, uint16_t npaths, uint8_t nplanes,
		     uint64_t probe_gap_ns, uint32_t remap_seed);

/* 1 if path carries data (not probing). */
static inline int mr_pathmgr_carries_data(const struct mr_pathmgr *pm,
					  uint16_t path)
{
	return !pm->path[path].probing;
}

/* mr_pathtx reported MR_PATHTX_EV_SUSPECT for path at now (its data was
 * declared lost): the path probes from now (MR-PM-1); if that leaves its
 * plane without a healthy path while another plane has one, the plane goes
 * down and its paths are remapped (MR-PM-4, -5): ps's planes and entropies
 * change, the remapped paths' suspect flags in tx[] are cleared. Returns
 * enum mr_pathmgr_event bits. */
unsigned mr_pathmgr_on_suspect(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			       struct mr_pathtx *tx, uint16_t path,
			       uint64_t now);

/* The probe to send at now, if one is due: 1 and *out, else 0. A probing
 * path is probed when nothing of it is outstanding; a down plane when its
 * last probe is settled; each no sooner than probe_gap_ns after the last
 * one (MR-PM-2). */
int mr_pathmgr_next_probe(struct mr_pathmgr *pm, const struct mr_pathtx *tx,
			  uint64_t now, struct mr_pathmgr_probe *out);

/* The probe *p went out at now. */
void mr_pathmgr_on_probe_sent(struct mr_pathmgr *pm,
			      const struct mr_pathmgr_probe *p, uint64_t now);

/* A pathtx record of path with a probe ctx was acknowledged: a path probe
 * makes the path whole (MR-PM-3), a plane probe brings the plane and its
 * paths home (MR-PM-6; ps changes). Returns enum mr_pathmgr_event bits. */
unsigned mr_pathmgr_on_acked(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			     uint16_t path, uint64_t ctx, uint64_t now);

/* Any packet of path was acknowledged: a probing path is whole again
 * (the probe or a late data packet came back). Returns EV_PATH_BACK or 0. */
unsigned mr_pathmgr_on_progress(struct mr_pathmgr *pm, uint16_t path);

/* A probe record was declared lost: the next one may go (after the gap). */
void mr_pathmgr_on_lost(struct mr_pathmgr *pm, uint16_t path, uint64_t ctx,
			uint64_t now);

/* Earliest time a probe will be due given tx (UINT64_MAX: none). A
 * probing path with a probe outstanding is not due: its settlement
 * (ACK, loss, suspect again, RTO) makes it so. */
uint64_t mr_pathmgr_deadline(const struct mr_pathmgr *pm,
			     const struct mr_pathtx *tx);

/* After an ACK was processed at now: update each path's health from its
 * sender's counters, set its spraying weight in ps (MR-PM-7), and re-draw
 * (new entropy, MR-MP-5) a path that keeps seeing more ECN, loss or RTT
 * than the others (MR-PM-8). Returns the number of paths re-drawn. */
unsigned mr_pathmgr_on_acks(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			    const struct mr_pathtx *tx, uint64_t now);

/* Planes down now. */
unsigned mr_pathmgr_planes_down(const struct mr_pathmgr *pm);

#endif /* MR_PATHMGR_H */
