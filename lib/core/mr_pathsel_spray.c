// SPDX-License-Identifier: BSD-2-Clause
/* Path selection `spray` (MR-MP-3, MR-MP-4): plain round robin. */
#include "mr_pathsel.h"

#include "mr_err.h"

/* A path that went silent while others progressed (suspect) carries no
 * data: the path manager probes it with data-free packets until one
 * returns (MR-MP-8, MR-PM-1). A path whose RTO fired and that has not
 * made progress since carries one packet at a time (MR-MP-4), so a dead
 * route costs one packet per RTO, not a window. */
static int usable(const struct mr_pathtx *t)
{
	if (!mr_pathtx_space(t) || t->suspect)
		return 0;
	return !(t->backoff && t->out_pkts);
}

struct spray_state {
	uint16_t cursor; /* next path to try first */
};

_Static_assert(sizeof(struct spray_state) <= MR_PATHSEL_STATE_MAX,
	       "spray state fits the base's area");

static int spray_pick(struct mr_pathsel *ps, const struct mr_pathtx *tx,
		      uint64_t now)
{
	struct spray_state *s = MR_PATHSEL_STATE(ps, struct spray_state);
	uint16_t k;

	(void)now;
	for (k = 0; k < ps->num_paths; k++) {
		uint16_t i = (uint16_t)((s->cursor + k) % ps->num_paths);

		if (usable(&tx[i])) {
			s->cursor = (uint16_t)((i + 1) % ps->num_paths);
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
	.help = "round robin over the paths with window space; none on a "
		"suspect path, one packet at a time on one that timed out",
	.state_size = sizeof(struct spray_state),
	.pick = spray_pick,
	.on_rto = spray_on_rto,
};
