/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Read-only views of an endpoint for statistics: the use of each path id,
 * summed over the QPs (each QP keeps its own per-path sender and receiver
 * state; a tool wants one line per path of the device). A destroyed QP's
 * share is kept in the endpoint, so the sums never go down.
 */
#include <string.h>

#include "mr_sched.h"

static void add_qp(struct mr_path_counters *out, unsigned n,
		   const struct mr_qp *qp)
{
	unsigned p;

	/* UD QPs have no paths; gbn QPs use path 0 only. */
	if (!qp->ptx || !qp->rsp.prx)
		return;
	for (p = 0; p < qp->npaths && p < n; p++) {
		const struct mr_pathtx *tx = &qp->ptx[p];
		const struct mr_pathrx *rx = &qp->rsp.prx[p];
		struct mr_path_counters *o = &out[p];

		o->tx_pkts += tx->tx_pkts;
		o->tx_bytes += tx->tx_bytes;
		o->retx_pkts += tx->retx_pkts;
		o->lost_pkts += mr_pathtx_lost(tx);
		o->rto_events += tx->rto_events;
		o->repaths += qp->ps.path[p].repaths;
		o->rx_pkts += rx->pkts;
		o->rx_dups += rx->dups;
		o->rx_ce += rx->ce_total;
	}
}

void mr_ep_stats_qp_gone(struct mr_qp *qp)
{
	add_qp(qp->ep->paths_gone, MR_MAX_PATHS, qp);
}

unsigned mr_ep_path_counters(const struct mr_ep *ep,
			     struct mr_path_counters *out, unsigned max)
{
	unsigned n = ep->cfg.num_paths < max ? ep->cfg.num_paths : max;
	uint32_t i;

	if (n > MR_MAX_PATHS)
		n = MR_MAX_PATHS;
	memcpy(out, ep->paths_gone, n * sizeof(*out));
	for (i = 0; i < ep->nqp; i++)
		add_qp(out, n, ep->qps[i]);
	return n;
}
