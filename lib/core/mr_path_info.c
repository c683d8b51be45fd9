/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Snapshots of the connections and paths of an endpoint (mr_path_info.h).
 * One function per struct fills it from the modules that own the state:
 * the sender of each path (mr_pathtx), its receiver (mr_pathrx), the path
 * selection (entropy, plane) and the congestion control (window, rate).
 */
#include <string.h>

#include "mr_engine.h"
#include "mr_path_info.h"

#define MR_INFO_NAME(f, help) #f,
const char *const mr_path_info_names[MR_PATH_INFO_N] = { MR_PATH_INFO_FIELDS(
	MR_INFO_NAME) };

const char *const mr_conn_info_names[MR_CONN_INFO_N] = { MR_CONN_INFO_FIELDS(
	MR_INFO_NAME) };
#undef MR_INFO_NAME

static const char *const path_state_names[MR_PATH_NSTATES] = {
#define MR_PS_NAME(id, name) [MR_PATH_##id] = name,
	MR_PATH_STATES(MR_PS_NAME)
#undef MR_PS_NAME
};

const char *mr_path_state_name(uint64_t state)
{
	return state < MR_PATH_NSTATES ? path_state_names[state] : "?";
}

const char *mr_qp_state_name(uint64_t state)
{
	static const char *const names[] = {
		[MR_QPS_RESET] = "RESET", [MR_QPS_INIT] = "INIT",
		[MR_QPS_RTR] = "RTR",	  [MR_QPS_RTS] = "RTS",
		[MR_QPS_SQD] = "SQD",	  [MR_QPS_SQE] = "SQE",
		[MR_QPS_ERR] = "ERR",
	};

	return state < sizeof(names) / sizeof(names[0]) ? names[state] : "?";
}

static int is_conn(const struct mr_qp *qp)
{
	return qp->ptx && qp->rsp.prx && qp->state != MR_QPS_RESET &&
	       qp->state != MR_QPS_INIT;
}

static enum mr_path_state path_state(const struct mr_qp *qp, uint16_t p)
{
	const struct mr_pathtx *tx = &qp->ptx[p];

	if (qp->pm.path[p].probing)
		return MR_PATH_PROBING;
	if (tx->suspect)
		return MR_PATH_SUSPECT;
	if (tx->backoff)
		return MR_PATH_BACKOFF;
	if (mr_pathsel_plane(&qp->ps, p) != qp->pm.path[p].home)
		return MR_PATH_REMAPPED;
	return MR_PATH_ACTIVE;
}

/* The path's spraying weight (MR-MP-9: 1..MR_PATHSEL_WEIGHT_FULL, set
 * by the path manager from its health, MR-PM-7); single uses path 0 only
 * (MR-MP-6); a probing path carries no data (MR-PM-1). */
static uint64_t path_weight(const struct mr_qp *qp, uint16_t p)
{
	if (!mr_pathmgr_carries_data(&qp->pm, p))
		return 0;
	if (qp->ps.ops == mr_pathsel_find("single"))
		return p == 0 ? MR_PATHSEL_WEIGHT_FULL : 0;
	return qp->ps.path[p].weight;
}

static void fill_path(const struct mr_qp *qp, uint16_t p,
		      struct mr_path_info *o)
{
	const struct mr_pathtx *tx = &qp->ptx[p];
	const struct mr_pathrx *rx = &qp->rsp.prx[p];

	memset(o, 0, sizeof(*o));
	o->path = p;
	o->plane = mr_pathsel_plane(&qp->ps, p);
	o->sport = mr_pathsel_entropy(&qp->ps, p);
	o->home_plane = qp->pm.path[p].home;
	o->state = path_state(qp, p);
	o->weight = path_weight(qp, p);
	o->min_rtt_ns = tx->srtt ? tx->min_rtt : 0;
	o->srtt_ns = tx->srtt;
	o->latest_rtt_ns = tx->latest_rtt;
	o->rto_ns = mr_pathtx_rto(tx);
	o->inflight_pkts = tx->out_pkts;
	o->inflight_bytes = tx->out_bytes;
	o->window_pkts = tx->cfg.max_inflight;
	o->tx_pkts = tx->tx_pkts;
	o->tx_bytes = tx->tx_bytes;
	o->retx_pkts = tx->retx_pkts;
	o->acked_pkts = tx->acked_pkts;
	o->lost_pkts = mr_pathtx_lost(tx);
	o->ce_pkts = tx->ce_pkts;
	o->rto_events = tx->rto_events;
	o->repaths = qp->ps.path[p].repaths;
	o->ce_frac_1024 = qp->pm.path[p].ce_frac;
	o->loss_frac_1024 = qp->pm.path[p].loss_frac;
	o->rx_pkts = rx->pkts;
	o->rx_ce = rx->ce_total;
}

static void fill_conn(const struct mr_qp *qp, struct mr_conn_info *o)
{
	memset(o, 0, sizeof(*o));
	o->qpn = qp->cfg.qpn;
	o->dest_qpn = qp->attr.dest_qpn;
	o->dest = qp->attr.dest;
	o->qp_state = qp->state;
	o->npaths = qp->npaths;
	o->planes_down = mr_pathmgr_planes_down(&qp->pm);
	o->cwnd_bytes = qp->cc.cwnd;
	o->inflight_bytes = qp->cc.inflight;
	o->rate_mbps = qp->cc.rate_mbps;
	o->hint_mbps = qp->cc.hint_mbps;
	o->retries = qp->req.retries;
	o->tx_pkts = qp->cnt.tx_pkts;
	o->retx_pkts = qp->cnt.retx_pkts;
	o->sack_holes = qp->cnt.sack_holes;
}

void mr_ep_conn_count(const struct mr_ep *ep, unsigned *nconn, unsigned *npaths)
{
	uint32_t i;

	*nconn = *npaths = 0;
	for (i = 0; i < ep->nqp; i++)
		if (is_conn(ep->qps[i])) {
			(*nconn)++;
			*npaths += ep->qps[i]->npaths;
		}
}

unsigned mr_ep_conn_info(const struct mr_ep *ep, struct mr_conn_info *conns,
			 unsigned maxc, struct mr_path_info *paths,
			 unsigned maxp)
{
	unsigned n = 0, used = 0;
	uint32_t i;
	uint16_t p;

	for (i = 0; i < ep->nqp && n < maxc; i++) {
		const struct mr_qp *qp = ep->qps[i];

		if (!is_conn(qp) || qp->npaths > maxp - used)
			continue;
		fill_conn(qp, &conns[n++]);
		for (p = 0; p < qp->npaths; p++)
			fill_path(qp, p, &paths[used++]);
	}
	return n;
}
