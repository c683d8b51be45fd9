// SPDX-License-Identifier: BSD-2-Clause
/* Path manager: probing paths and planes that went silent (MR-PM-*). */
#include "mr_pathmgr.h"

#include <string.h>

void mr_pathmgr_init(struct mr_pathmgr *pm, uint16_t npaths, uint8_t nplanes,
		     uint64_t probe_gap_ns, uint32_t remap_seed)
{
	uint16_t i;

	memset(pm, 0, sizeof(*pm));
	if (npaths > MR_MAX_PATHS)
		npaths = MR_MAX_PATHS;
	if (!nplanes)
		nplanes = 1;
	pm->npaths = npaths;
	pm->nplanes = nplanes;
	pm->probe_gap_ns = probe_gap_ns ? probe_gap_ns : 1000;
	/* MR-PM-5: each connection's remap round robin starts at its own
	 * place, so the paths of a down plane spread evenly over the planes
	 * left in the aggregate: from 0, every connection of one path per
	 * plane moved it onto the same plane, which then carried half of
	 * the traffic (the simulator's plane failure, 16 hosts, 4 planes). */
	pm->remap_next = remap_seed;
	for (i = 0; i < npaths; i++)
		pm->path[i].home = (uint8_t)(i % nplanes);
}

/* The next plane that is up, round robin over the planes up other than d
 * (MR-PM-5), from the connection's own start; d itself if none. */
static uint8_t next_up_plane(struct mr_pathmgr *pm, uint8_t d)
{
	unsigned k, up = 0, idx;

	for (k = 0; k < pm->nplanes; k++)
		up += k != d && !pm->plane[k].down;
	if (!up)
		return d;
	idx = pm->remap_next++ % up;
	for (k = 0; k < pm->nplanes; k++)
		if (k != d && !pm->plane[k].down && !idx--)
			break;
	return (uint8_t)k;
}

/* MR-PM-4: plane d has no path that carries data, another plane has one. */
static int plane_failed(const struct mr_pathmgr *pm,
			const struct mr_pathsel *ps, uint8_t d)
{
	int elsewhere = 0, on_d = 0;
	uint16_t i;

	for (i = 0; i < pm->npaths; i++) {
		if (ps->path[i].plane == d) {
			on_d = 1;
			if (!pm->path[i].probing)
				return 0;
		} else if (!pm->path[i].probing) {
			elsewhere = 1;
		}
	}
	return on_d && elsewhere;
}

unsigned mr_pathmgr_on_suspect(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			       struct mr_pathtx *tx, uint16_t path,
			       uint64_t now)
{
	struct mr_pathmgr_plane *pl;
	unsigned ev = 0;
	uint16_t i, probe_path;
	uint8_t d;

	if (path >= pm->npaths)
		return 0;
	if (!pm->path[path].probing) {
		/* MR-PM-1: from now on only probes; the first one at once
		 * (its data was declared lost: nothing is outstanding). */
		pm->path[path].probing = 1;
		pm->path[path].probe_at = now;
		ev |= MR_PATHMGR_EV_PROBING;
	}
	d = ps->path[path].plane;
	if (pm->nplanes < 2 || d >= pm->nplanes || pm->plane[d].down ||
	    !plane_failed(pm, ps, d))
		return ev;
	/* MR-PM-4, MR-PM-5: the plane is down. Its plane probes borrow the
	 * ppsn space of a path that belongs to it (goes home with it). */
	probe_path = path;
	for (i = 0; i < pm->npaths; i++)
		if (ps->path[i].plane == d && pm->path[i].home == d) {
			probe_path = i;
			break;
		}
	pl = &pm->plane[d];
	pl->down = 1;
	pl->probe_out = 0;
	pl->probe_path = probe_path;
	pl->probe_at = now;
	pm->planes_down++;
	for (i = 0; i < pm->npaths; i++) {
		if (ps->path[i].plane != d)
			continue;
		ps->path[i].plane = next_up_plane(pm, d);
		mr_pathsel_repath(ps, i);
		/* On its new plane it carries data at once: its old route's
		 * silence says nothing about the new one. */
		pm->path[i].probing = 0;
		tx[i].suspect = 0;
	}
	return ev | MR_PATHMGR_EV_PLANE_DOWN;
}

int mr_pathmgr_next_probe(struct mr_pathmgr *pm, const struct mr_pathtx *tx,
			  uint64_t now, struct mr_pathmgr_probe *out)
{
	uint16_t i;
	uint8_t d;

	for (d = 0; d < pm->nplanes; d++) {
		const struct mr_pathmgr_plane *pl = &pm->plane[d];

		if (pl->down && !pl->probe_out && pl->probe_at <= now &&
		    mr_pathtx_space(&tx[pl->probe_path])) {
			out->path = pl->probe_path;
			out->plane = d;
			out->ctx = MR_PATHMGR_CTX_PLANE | d;
			return 1;
		}
	}
	for (i = 0; i < pm->npaths; i++) {
		const struct mr_pathmgr_path *pp = &pm->path[i];

		/* MR-PM-2: one probe at a time: the path has nothing else
		 * outstanding (its data went elsewhere). */
		if (pp->probing && !tx[i].out_pkts && pp->probe_at <= now) {
			out->path = i;
			out->plane = 0;
			out->ctx = MR_PATHMGR_CTX_PATH;
			return 1;
		}
	}
	return 0;
}

void mr_pathmgr_on_probe_sent(struct mr_pathmgr *pm,
			      const struct mr_pathmgr_probe *p, uint64_t now)
{
	pm->probes_sent++;
	if (p->ctx & MR_PATHMGR_CTX_PLANE) {
		struct mr_pathmgr_plane *pl = &pm->plane[p->ctx & 0xff];

		pl->probe_out = 1;
		pl->probe_at = now + pm->probe_gap_ns;
	} else if (p->path < pm->npaths) {
		pm->path[p->path].probe_at = now + pm->probe_gap_ns;
	}
}

unsigned mr_pathmgr_on_progress(struct mr_pathmgr *pm, uint16_t path)
{
	if (path >= pm->npaths || !pm->path[path].probing)
		return 0;
	pm->path[path].probing = 0; /* MR-PM-3 */
	pm->paths_back++;
	return MR_PATHMGR_EV_PATH_BACK;
}

unsigned mr_pathmgr_on_acked(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			     uint16_t path, uint64_t ctx, uint64_t now)
{
	struct mr_pathmgr_plane *pl;
	uint16_t i;
	uint8_t d;

	(void)now;
	pm->probes_acked++;
	if (!(ctx & MR_PATHMGR_CTX_PLANE))
		return mr_pathmgr_on_progress(pm, path);
	d = (uint8_t)(ctx & 0xff);
	if (d >= pm->nplanes)
		return 0;
	pl = &pm->plane[d];
	pl->probe_out = 0;
	if (!pl->down)
		return 0;
	/* MR-PM-6: the plane answered: it is up, its paths go home. */
	pl->down = 0;
	pm->planes_up++;
	for (i = 0; i < pm->npaths; i++) {
		if (pm->path[i].home != d || ps->path[i].plane == d)
			continue;
		ps->path[i].plane = d;
		mr_pathsel_repath(ps, i);
	}
	return MR_PATHMGR_EV_PLANE_UP;
}

void mr_pathmgr_on_lost(struct mr_pathmgr *pm, uint16_t path, uint64_t ctx,
			uint64_t now)
{
	(void)path;
	(void)now;
	if ((ctx & MR_PATHMGR_CTX_PLANE) && (ctx & 0xff) < pm->nplanes)
		pm->plane[ctx & 0xff].probe_out = 0;
}

uint64_t mr_pathmgr_deadline(const struct mr_pathmgr *pm,
			     const struct mr_pathtx *tx)
{
	uint64_t d = UINT64_MAX;
	uint16_t i;
	uint8_t p;

	for (p = 0; p < pm->nplanes; p++)
		if (pm->plane[p].down && !pm->plane[p].probe_out &&
		    pm->plane[p].probe_at < d &&
		    mr_pathtx_space(&tx[pm->plane[p].probe_path]))
			d = pm->plane[p].probe_at;
	for (i = 0; i < pm->npaths; i++)
		if (pm->path[i].probing && !tx[i].out_pkts &&
		    pm->path[i].probe_at < d)
			d = pm->path[i].probe_at;
	return d;
}

unsigned mr_pathmgr_planes_down(const struct mr_pathmgr *pm)
{
	unsigned n = 0;
	uint8_t p;

	for (p = 0; p < pm->nplanes; p++)
		n += pm->plane[p].down;
	return n;
}

/* ---- health, weights, re-draws (MR-PM-7, MR-PM-8) ---------------------- */

#define FRAC_ONE 1024u
#define SAMPLE_MIN 8u /* settled packets per health sample */

/* One health sample of a path, if enough of it settled since the last. */
static void sample(struct mr_pathmgr_path *pp, const struct mr_pathtx *t)
{
	uint64_t a = t->acked_pkts - pp->seen_acked;
	uint64_t l = mr_pathtx_lost(t) - pp->seen_lost;
	uint64_t c = t->ce_pkts - pp->seen_ce;
	uint64_t n = a + l, ce, lo;

	if (n < SAMPLE_MIN)
		return;
	ce = (c > a ? a : c) * FRAC_ONE / (a ? a : 1);
	lo = l * FRAC_ONE / n;
	/* EWMA, gain 1/8 */
	pp->ce_frac = (uint16_t)((pp->ce_frac * 7u + ce) / 8u);
	pp->loss_frac = (uint16_t)((pp->loss_frac * 7u + lo) / 8u);
	pp->seen_acked = t->acked_pkts;
	pp->seen_lost = mr_pathtx_lost(t);
	pp->seen_ce = t->ce_pkts;
}

/* MR-PM-7: w = 16 x (1 - ce) x (1 - loss) x min(1, best srtt / srtt),
 * at least 2 (a path keeps being measured). */
static uint8_t weight_of(const struct mr_pathmgr_path *pp,
			 const struct mr_pathtx *t, uint64_t best)
{
	uint64_t w = MR_PATHSEL_WEIGHT_FULL * 1024ull;

	w = w * (FRAC_ONE - pp->ce_frac) / FRAC_ONE;
	w = w * (FRAC_ONE - pp->loss_frac) / FRAC_ONE;
	if (best && t->srtt > best)
		w = w * best / t->srtt;
	w = (w + 512) / 1024; /* rounded */
	if (w < 2)
		return 2;
	return (uint8_t)(w > MR_PATHSEL_WEIGHT_FULL ? MR_PATHSEL_WEIGHT_FULL
						    : w);
}

/* MR-PM-8: x stands out of the others' mean m by more than both m and a
 * floor (noise around a common level is no outlier). */
static int outlier(uint64_t x, uint64_t m, uint64_t floor)
{
	return x > m + (m > floor ? m : floor);
}

unsigned mr_pathmgr_on_acks(struct mr_pathmgr *pm, struct mr_pathsel *ps,
			    const struct mr_pathtx *tx, uint64_t now)
{
	uint64_t best = 0, ce_sum = 0, lo_sum = 0;
	unsigned n = 0, redraws = 0;
	uint16_t i;

	if (pm->npaths < 2)
		return 0;
	for (i = 0; i < pm->npaths; i++) {
		struct mr_pathmgr_path *pp = &pm->path[i];

		if (pp->probing)
			continue;
		sample(pp, &tx[i]);
		if (tx[i].srtt && (!best || tx[i].srtt < best))
			best = tx[i].srtt;
		ce_sum += pp->ce_frac;
		lo_sum += pp->loss_frac;
		n++;
	}
	for (i = 0; i < pm->npaths; i++) {
		struct mr_pathmgr_path *pp = &pm->path[i];
		uint64_t ce_m, lo_m;
		int out;

		if (pp->probing)
			continue;
		ps->path[i].weight = weight_of(pp, &tx[i], best);
		if (n < 2 || !best || now < pp->redraw_ok_at)
			continue;
		/* against the mean of the other paths */
		ce_m = (ce_sum - pp->ce_frac) / (n - 1);
		lo_m = (lo_sum - pp->loss_frac) / (n - 1);
		out = outlier(pp->ce_frac, ce_m, FRAC_ONE / 8) ||
		      outlier(pp->loss_frac, lo_m, FRAC_ONE / 32) ||
		      (tx[i].srtt && tx[i].srtt > 2 * best + 4 * tx[i].rttvar);
		if (!out)
			continue;
		mr_pathsel_repath(ps, i);
		/* A fresh start at the others' level, judged again after 16
		 * of the best path's RTTs. */
		pp->ce_frac = (uint16_t)ce_m;
		pp->loss_frac = (uint16_t)lo_m;
		ps->path[i].weight = MR_PATHSEL_WEIGHT_FULL;
		pp->redraw_ok_at = now + 16 * best;
		pm->redraws++;
		redraws++;
	}
	return redraws;
}
