// SPDX-License-Identifier: BSD-2-Clause
/* Path selection base: the registry, entropy, planes and repath
 * (MR-MP-1, -2, -5). The algorithms are in mr_pathsel_<name>.c. */
#include "mr_pathsel.h"

#include <string.h>

#include "mr_err.h"
#include "mr_registry.h"

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
	 * (at most MR_MAX_PATHS paths, so one exists within MR_MAX_PATHS + 1
	 * steps). */
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

	if (!ps || !ops || !ops->pick || !ops->on_rto ||
	    ops->state_size > MR_PATHSEL_STATE_MAX || !rand || !rand->next ||
	    num_paths < 1 || num_paths > MR_MAX_PATHS || num_planes < 1 ||
	    num_planes > num_paths)
		return -MR_EINVAL;
	memset(ps, 0, sizeof(*ps));
	ps->ops = ops;
	ps->num_paths = num_paths;
	ps->num_planes = num_planes;
	ps->rand = *rand;
	ps->first_plane = -1;
	for (i = 0; i < num_paths; i++) {
		ps->path[i].plane = (uint8_t)(i % num_planes);
		ps->path[i].weight = MR_PATHSEL_WEIGHT_FULL;
		ps->path[i].entropy = pick_entropy(ps, i, i, 0);
	}
	if (ops->init)
		ops->init(ps);
	return 0;
}

void mr_pathsel_repath(struct mr_pathsel *ps, uint16_t path)
{
	if (path >= ps->num_paths)
		return;
	ps->path[path].entropy = pick_entropy(ps, path, ps->num_paths, 1);
	ps->path[path].repaths++;
}

/* The registry: one line per algorithm (its file defines
 * `const struct mr_pathsel_ops mr_pathsel_ops_<name>`). */
#define MR_PATHSEL_ALGOS(X) \
	X(spray)            \
	X(single)

#define DECLARE(n) extern const struct mr_pathsel_ops mr_pathsel_ops_##n;
MR_PATHSEL_ALGOS(DECLARE)
#undef DECLARE

static const struct mr_pathsel_ops *const algos[] = {
#define ENTRY(n) &mr_pathsel_ops_##n,
	MR_PATHSEL_ALGOS(ENTRY)
#undef ENTRY
};

MR_REGISTRY_LOOKUP(struct mr_pathsel_ops, mr_pathsel_algo, mr_pathsel_find,
		   algos)
