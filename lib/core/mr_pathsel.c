// SPDX-License-Identifier: BSD-2-Clause
/* Path selection: spray / single, entropy and repath (MR-MP-*). */
#include "mr_pathsel.h"

#include <string.h>

#include "mr_err.h"

#define ENTROPY_SPAN (MR_ENTROPY_MAX - MR_ENTROPY_MIN + 1)
#define DRAW_TRIES 16

static uint16_t draw(struct mr_pathsel *ps)
{
	return (uint16_t)(MR_ENTROPY_MIN +
			  ps->rand.next(ps->rand.user) % ENTROPY_SPAN);
}

/* 1 if v is used by another path of the same plane as `path`: two paths
 * with the same entropy and plane would share an ECMP route. */
static int taken(const struct mr_pathsel *ps, uint16_t path, uint16_t v,
		 uint16_t upto)
{
	uint16_t i;

	for (i = 0; i < upto; i++)
		if (i != path && ps->path[i].plane == ps->path[path].plane &&
		    ps->path[i].entropy == v)
			return 1;
	return 0;
}

static uint16_t pick_entropy(struct mr_pathsel *ps, uint16_t path,
			     uint16_t upto, int avoid_cur)
{
	uint16_t cur = ps->path[path].entropy, v = cur;
	int i;

	for (i = 0; i < DRAW_TRIES; i++) {
		v = draw(ps);
		if ((!avoid_cur || v != cur) && !taken(ps, path, v, upto))
			return v;
	}
	/* A degenerate generator: walk from the last draw to a free value
	 * (at most 16 paths, so one exists within 17 steps). */
	for (i = 0; i < (int)ENTROPY_SPAN; i++) {
		v = (uint16_t)(MR_ENTROPY_MIN +
			       (v - MR_ENTROPY_MIN + 1) % ENTROPY_SPAN);
		if ((!avoid_cur || v != cur) && !taken(ps, path, v, upto))
			break;
	}
	return v;
}

int mr_pathsel_init(struct mr_pathsel *ps, const struct mr_pathsel_ops *ops,
		    uint16_t num_paths, uint8_t num_planes,
		    const struct mr_rand *rand)
{
	uint16_t i;

	if (!ps || !ops || !ops->pick || !ops->on_rto || !rand || !rand->next ||
	    num_paths < 1 || num_paths > MR_ACK_MAX_PATHS || num_planes < 1 ||
	    num_planes > num_paths)
		return -MR_EINVAL;
	memset(ps, 0, sizeof(*ps));
	ps->ops = ops;
	ps->num_paths = num_paths;
	ps->num_planes = num_planes;
	ps->rand = *rand;
	for (i = 0; i < num_paths; i++) {
		ps->path[i].plane = (uint8_t)(i % num_planes);
		ps->path[i].entropy = pick_entropy(ps, i, i, 0);
	}
	return 0;
}

void mr_pathsel_repath(struct mr_pathsel *ps, uint16_t path)
{
	if (path >= ps->num_paths)
		return;
	ps->path[path].entropy = pick_entropy(ps, path, ps->num_paths, 1);
	ps->path[path].repaths++;
}

/* A path whose RTO fired and that has not made progress since carries
 * one probe at a time (MR-MP-4), so a dead route costs one packet per
 * RTO, not a window. */
static int usable(const struct mr_pathtx *t)
{
	if (!mr_pathtx_space(t))
		return 0;
	return !(t->backoff && t->out_pkts);
}

static int spray_pick(struct mr_pathsel *ps, const struct mr_pathtx *tx,
		      uint64_t now)
{
	uint16_t k;

	(void)now;
	for (k = 0; k < ps->num_paths; k++) {
		uint16_t i = (uint16_t)((ps->cursor + k) % ps->num_paths);

		if (usable(&tx[i])) {
			ps->cursor = (uint16_t)((i + 1) % ps->num_paths);
			ps->picks++;
			return i;
		}
	}
	ps->no_path++;
	return -MR_EAGAIN;
}

static void spray_on_rto(struct mr_pathsel *ps, uint16_t path, uint64_t now)
{
	(void)now;
	mr_pathsel_repath(ps, path);
}

const struct mr_pathsel_ops mr_pathsel_ops_spray = {
	.name = "spray",
	.pick = spray_pick,
	.on_rto = spray_on_rto,
};

static int single_pick(struct mr_pathsel *ps, const struct mr_pathtx *tx,
		       uint64_t now)
{
	(void)now;
	if (mr_pathtx_space(&tx[0])) {
		ps->picks++;
		return 0;
	}
	ps->no_path++;
	return -MR_EAGAIN;
}

static void single_on_rto(struct mr_pathsel *ps, uint16_t path, uint64_t now)
{
	/* RoCEv2 model: the 5-tuple of a QP never changes (MR-MP-6). */
	(void)ps;
	(void)path;
	(void)now;
}

const struct mr_pathsel_ops mr_pathsel_ops_single = {
	.name = "single",
	.pick = single_pick,
	.on_rto = single_on_rto,
};
