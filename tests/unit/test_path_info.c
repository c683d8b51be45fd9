// SPDX-License-Identifier: BSD-2-Clause
/*
 * mr_ep_conn_info (mr_path_info.c): the snapshot of each connection and
 * its paths equals the state of the modules that own it, over a lossy
 * scripted link with literal timestamps; UD and unconnected QPs are not
 * connections; arrays too small leave connections out whole.
 */
#include "engine_world.h"
#include "mr_engine.h"
#include "mr_path_info.h"
#include "mr_test.h"

static void check_path(const struct mr_path_info *o, const struct mr_qp *qp,
		       unsigned p)
{
	const struct mr_pathtx *tx = &qp->ptx[p];

	MR_CHECK_EQ(o->path, p);
	MR_CHECK_EQ(o->plane, qp->ps.path[p].plane);
	MR_CHECK_EQ(o->sport, qp->ps.path[p].entropy);
	MR_CHECK(o->sport >= MR_ENTROPY_MIN);
	MR_CHECK_EQ(o->srtt_ns, tx->srtt);
	MR_CHECK_EQ(o->min_rtt_ns, tx->min_rtt);
	MR_CHECK_EQ(o->rto_ns, mr_pathtx_rto(tx));
	MR_CHECK_EQ(o->inflight_pkts, tx->out_pkts);
	MR_CHECK_EQ(o->window_pkts, tx->cfg.max_inflight);
	MR_CHECK_EQ(o->tx_pkts, tx->tx_pkts);
	MR_CHECK_EQ(o->acked_pkts, tx->acked_pkts);
	MR_CHECK_EQ(o->lost_pkts, tx->lost_reorder + tx->lost_time +
					  tx->lost_rto + tx->lost_forced +
					  tx->lost_suspect + tx->lost_tail);
	MR_CHECK_EQ(o->ce_pkts, tx->ce_pkts);
	MR_CHECK_EQ(o->rx_pkts, qp->rsp.prx[p].pkts);
	MR_CHECK_EQ(o->home_plane, p % 2);
	if (qp->pm.path[p].probing) {
		MR_CHECK_EQ(o->state, MR_PATH_PROBING);
		MR_CHECK_EQ(o->weight, 0); /* probes only */
	} else {
		MR_CHECK_EQ(o->state, tx->suspect   ? MR_PATH_SUSPECT
				      : tx->backoff ? MR_PATH_BACKOFF
				      : o->plane != o->home_plane
					      ? MR_PATH_REMAPPED
					      : MR_PATH_ACTIVE);
		MR_CHECK_EQ(o->weight, qp->ps.path[p].weight);
		MR_CHECK(o->weight >= 1 && o->weight <= MR_PATHSEL_WEIGHT_FULL);
	}
}

static void test_conn_info(void)
{
	static struct world w;
	static uint8_t a[1 << 16], b[1 << 16];
	struct mr_ep_config cfg = base_cfg;
	struct mr_conn_info c[4];
	struct mr_path_info pi[4 * MR_MAX_PATHS];
	unsigned nc, np, i;
	uint64_t ce = 0;
	struct pair p;

	cfg.num_paths = 6;
	cfg.num_planes = 2;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	mr_ep_conn_count(w.n[0].ep, &nc, &np);
	MR_CHECK_EQ(nc + np, 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 64, NULL);
	for (i = 0; i < 2; i++) {
		w.l[i].loss_ppm = 20000;
		w.l[i].ce_ppm = 100000;
		w.l[i].rng = 11 + i;
	}
	fill(a, sizeof(a), 5);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	for (i = 0; i < 16; i++)
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, i, a + i * 4096,
				      4096, 5, b + i * 4096, 6, 0, w.now),
			    0);
	want_a = 16;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 20000000000ull));
	MR_CHECK_MEM(b, a, sizeof(a));

	mr_ep_conn_count(w.n[0].ep, &nc, &np);
	MR_CHECK_EQ(nc, 1);
	MR_CHECK_EQ(np, 6);
	memset(c, 0xa5, sizeof(c));
	MR_CHECK_EQ(mr_ep_conn_info(w.n[0].ep, c, 4, pi, 4 * MR_MAX_PATHS),
		    1);
	MR_CHECK_EQ(c[0].qpn, p.a->cfg.qpn);
	MR_CHECK_EQ(c[0].dest_qpn, p.b->cfg.qpn);
	MR_CHECK_EQ(c[0].qp_state, MR_QPS_RTS);
	MR_CHECK_EQ(c[0].npaths, 6);
	MR_CHECK_EQ(c[0].planes_down, 0);
	MR_CHECK_EQ(c[0].cwnd_bytes, p.a->cc.cwnd);
	MR_CHECK_EQ(c[0].tx_pkts, p.a->cnt.tx_pkts);
	MR_CHECK_EQ(c[1].qpn, 0xa5a5a5a5a5a5a5a5ull); /* not touched */
	for (i = 0; i < 6; i++) {
		check_path(&pi[i], p.a, i);
		MR_CHECK_EQ(pi[i].plane, i % 2); /* no plane went down */
		/* Every path carried data and has RTT samples. */
		MR_CHECK(pi[i].tx_pkts > 0 && pi[i].acked_pkts > 0);
		MR_CHECK(pi[i].min_rtt_ns > 0 &&
			 pi[i].min_rtt_ns <= pi[i].srtt_ns);
		ce += pi[i].ce_pkts;
	}
	MR_CHECK(ce > 0);
	MR_CHECK_EQ(strcmp(mr_path_state_name(MR_PATH_ACTIVE), "active"), 0);
	MR_CHECK_EQ(strcmp(mr_path_state_name(MR_PATH_NSTATES), "?"), 0);
	MR_CHECK_EQ(strcmp(mr_qp_state_name(MR_QPS_RTS), "RTS"), 0);
	MR_CHECK_EQ(strcmp(mr_path_info_names[0], "path"), 0);
	MR_CHECK_EQ(strcmp(mr_conn_info_names[MR_CONN_INFO_N - 1],
			   "sack_holes"),
		    0);

	/* Paths that do not fit: the connection is left out whole. */
	MR_CHECK_EQ(mr_ep_conn_info(w.n[0].ep, c, 4, pi, 5), 0);
	MR_CHECK_EQ(mr_ep_conn_info(w.n[0].ep, c, 0, pi, 64), 0);
	destroy_pair(&p);
	mr_ep_conn_count(w.n[0].ep, &nc, &np);
	MR_CHECK_EQ(nc, 0);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_conn_info))
