// SPDX-License-Identifier: BSD-2-Clause
/* Re-draw times of black-holed paths (mrsim_redraw.h). */
#include "mrsim_redraw.h"

#include <stdlib.h>

#include <json-c/json.h>

#include "mr_core.h"
#include "mrsim_net.h"

/* Data packets only: ACKs and data-free probes are smaller (a probe of a
 * path lost in the hole says nothing new about the sender's reaction). */
#define REDRAW_MIN_LEN 512

struct mrsim_redraw_ent {
	uint64_t drop_ps;   /* first data packet black-holed (0: none) */
	uint64_t redraw_ps; /* first packet on another entropy (0: none) */
	uint16_t sport;	    /* the black-holed entropy */
};

static struct mrsim_redraw_ent *ent(struct mrsim_world *w,
				    const struct mrsim_pkt *pkt, int make)
{
	size_t n = (size_t)w->scn.hosts * (size_t)w->scn.hosts * MR_MAX_PATHS;

	if (!w->redraw) {
		if (!make)
			return NULL;
		w->redraw = calloc(n, sizeof(*w->redraw));
		if (!w->redraw)
			return NULL; /* not measured: the figure says 0 */
	}
	if (pkt->src >= w->scn.hosts || pkt->dst >= w->scn.hosts ||
	    pkt->path_id >= MR_MAX_PATHS)
		return NULL;
	return &w->redraw[((size_t)pkt->src * (size_t)w->scn.hosts +
			   pkt->dst) * MR_MAX_PATHS +
			  pkt->path_id];
}

void mrsim_redraw_drop(struct mrsim_world *w, const struct mrsim_pkt *pkt,
		       uint64_t now_ps)
{
	struct mrsim_redraw_ent *e;

	if (pkt->len < REDRAW_MIN_LEN)
		return;
	e = ent(w, pkt, 1);
	if (!e || e->drop_ps)
		return;
	e->drop_ps = now_ps ? now_ps : 1;
	e->sport = pkt->sport;
	w->redraw_affected++;
}

void mrsim_redraw_tx(struct mrsim_world *w, const struct mrsim_pkt *pkt,
		     uint64_t now_ps)
{
	struct mrsim_redraw_ent *e = ent(w, pkt, 0);

	if (e && e->drop_ps && !e->redraw_ps && pkt->sport != e->sport)
		e->redraw_ps = now_ps;
}

static int cmp_d(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

void mrsim_redraw_json(const struct mrsim_world *w, struct json_object *o)
{
	size_t n = (size_t)w->scn.hosts * (size_t)w->scn.hosts * MR_MAX_PATHS;
	struct json_object *a = json_object_new_array();
	double *d = NULL;
	size_t i, k = 0;

	if (w->redraw && w->redraw_affected)
		d = malloc(sizeof(*d) * (size_t)w->redraw_affected);
	for (i = 0; d && i < n && k < w->redraw_affected; i++) {
		const struct mrsim_redraw_ent *e = &w->redraw[i];

		if (e->drop_ps && e->redraw_ps)
			d[k++] = (double)(e->redraw_ps - e->drop_ps) / 1e6;
	}
	if (k)
		qsort(d, k, sizeof(*d), cmp_d);
	for (i = 0; i < k && i < 4096; i++)
		json_object_array_add(a, json_object_new_double(d[i]));
	json_object_object_add(o, "blackholed_paths",
			       json_object_new_uint64(w->redraw_affected));
	json_object_object_add(o, "redrawn_paths", json_object_new_uint64(k));
	json_object_object_add(o, "redraw_p50_us",
			       json_object_new_double(k ? d[(k - 1) / 2] : 0));
	json_object_object_add(
		o, "redraw_p99_us",
		json_object_new_double(k ? d[(size_t)((double)(k - 1) * 0.99)]
					 : 0));
	json_object_object_add(o, "redraw_max_us",
			       json_object_new_double(k ? d[k - 1] : 0));
	json_object_object_add(o, "redraw_us", a);
	free(d);
}

void mrsim_redraw_free(struct mrsim_world *w)
{
	free(w->redraw);
	w->redraw = NULL;
	w->redraw_affected = 0;
}
