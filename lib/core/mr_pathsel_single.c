// SPDX-License-Identifier: BSD-2-Clause
/* Path selection `single` (MR-MP-6): RoCEv2's one fixed path. */
#include "mr_pathsel.h"

#include "mr_err.h"

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
	.help = "path 0 only, fixed 5-tuple (RoCEv2, gbn mode)",
	.pick = single_pick,
	.on_rto = single_on_rto,
};
