/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The backlogged-plane report (MR-MP-12, docs/spec/reliability.md). A
 * round pulls packets from the engine only while no port keeps a backlog
 * (mrdp_io.c: what a port refuses waits there and is offered first at
 * every 32nd packet; a backlog left after that ends the round's pulling).
 * The engine's round robin is blind to the ports, so the round after a
 * port refused frames would put about 1/k of its packets on that port
 * again, its ring would refuse them at the round's flush, and the next
 * round would pull nothing for any plane. A port that refused frames at
 * its last transmit call is at the end of its ring, which is what MR-MP-12
 * asks to be told ("about to stop taking packets", not "has a queue"): a
 * frame staged and not yet offered is not counted, since the port has not
 * said no to it. The frames the port refused are the only occupancy that
 * every port kind gives (net_mrpkt's send call, an ethdev's tx_burst, the
 * service's ring: each returns how many it took; no PMD we link reports
 * its ring's fill in a way the others share).
 */
#include "mrdp_backlog.h"

#include "mrdp_int.h"

uint32_t mrdp_backlog_planes(const struct mrdp_dev *d)
{
	uint32_t planes = 0;
	unsigned i;

	_Static_assert(MR_DEVCONF_MAX_PORTS <= 32, "a bit per plane");
	for (i = 0; i < d->nplanes; i++)
		if (d->plane[i].nbacklog)
			planes |= 1u << i;
	return planes;
}

void mrdp_backlog_report(struct mrdp_dev *d)
{
	if (d->ops.planes_backlogged)
		d->ops.planes_backlogged(d->ops.user, mrdp_backlog_planes(d));
}
