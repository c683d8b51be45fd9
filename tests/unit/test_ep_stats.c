// SPDX-License-Identifier: BSD-2-Clause
/*
 * mr_ep_path_counters (mr_ep_stats.c): the use of each path id summed over
 * an endpoint's QPs, kept when the QPs are destroyed. Two endpoints on the
 * engine harness's scripted link, seeded loss, literal timestamps.
 */
#include "engine_world.h"
#include "mr_engine.h"
#include "mr_test.h"

/* What the endpoint must report for path p of qp (one QP per endpoint). */
static void check_path(const struct mr_path_counters *c, const struct mr_qp *qp,
		       unsigned p)
{
	const struct mr_pathtx *tx = &qp->ptx[p];
	const struct mr_pathrx *rx = &qp->rsp.prx[p];

	MR_CHECK_EQ(c->tx_pkts, tx->tx_pkts);
	MR_CHECK_EQ(c->tx_bytes, tx->tx_bytes);
	MR_CHECK_EQ(c->retx_pkts, tx->retx_pkts);
	/* Every way a packet is declared lost, as the per-QP view counts. */
	MR_CHECK_EQ(c->lost_pkts, tx->lost_reorder + tx->lost_time +
					  tx->lost_rto + tx->lost_forced +
					  tx->lost_suspect + tx->lost_tail);
	MR_CHECK_EQ(c->rto_events, tx->rto_events);
	MR_CHECK_EQ(c->repaths, qp->ps.path[p].repaths);
	MR_CHECK_EQ(c->rx_pkts, rx->pkts);
	MR_CHECK_EQ(c->rx_dups, rx->dups);
	MR_CHECK_EQ(c->rx_ce, rx->ce_total);
}

static void test_paths_over_lossy_link(void)
{
	static struct world w;
	static uint8_t a[1 << 17], b[1 << 17];
	struct mr_path_counters pa[MR_MAX_PATHS], pb[MR_MAX_PATHS];
	struct mr_path_counters after[MR_MAX_PATHS], two[2];
	uint64_t tx = 0, retx = 0, rx = 0;
	struct pair p;
	unsigned i;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	/* No QP yet: every path zero. */
	memset(pa, 0xa5, sizeof(pa));
	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, pa, MR_MAX_PATHS), 4);
	for (i = 0; i < 4; i++)
		MR_CHECK_EQ(pa[i].tx_pkts + pa[i].rx_pkts + pa[i].repaths, 0);
	MR_CHECK_EQ(pa[4].tx_pkts, 0xa5a5a5a5a5a5a5a5ull); /* not touched */

	connect_qps(&w, &p, MR_MODE_METAROCE, 64, NULL);
	for (i = 0; i < 2; i++) {
		w.l[i].loss_ppm = 30000; /* 3% */
		w.l[i].ce_ppm = 100000;
		w.l[i].jitter = 20000;
		w.l[i].rng = 7 + i;
	}
	fill(a, sizeof(a), 3);
	memset(b, 0, sizeof(b));
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	for (i = 0; i < 32; i++)
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, i, a + i * 4096,
				      4096, 5, b + i * 4096, 6, 0, w.now),
			    0);
	want_a = 32;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 20000000000ull));
	MR_CHECK_MEM(b, a, sizeof(a));

	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, pa, MR_MAX_PATHS), 4);
	MR_CHECK_EQ(mr_ep_path_counters(w.n[1].ep, pb, MR_MAX_PATHS), 4);
	for (i = 0; i < 4; i++) {
		check_path(&pa[i], p.a, i);
		check_path(&pb[i], p.b, i);
		/* Spraying uses every path. */
		MR_CHECK(pa[i].tx_pkts > 0);
		MR_CHECK(pb[i].rx_pkts > 0);
		/* What B received on a path, A sent on it (less losses). */
		MR_CHECK(pb[i].rx_pkts <= pa[i].tx_pkts);
		tx += pa[i].tx_pkts;
		retx += pa[i].retx_pkts;
		rx += pb[i].rx_pkts;
	}
	/* 128 data packets (4 KiB / 1 KiB mtu x 32), some sent again. */
	MR_CHECK(tx >= 128);
	MR_CHECK(retx > 0 && retx <= mr_ep_counters(w.n[0].ep)->retx_pkts);
	MR_CHECK(rx >= 128 && rx <= tx);
	MR_CHECK(pb[0].rx_ce + pb[1].rx_ce + pb[2].rx_ce + pb[3].rx_ce > 0);

	/* A smaller array: the first paths only. */
	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, two, 2), 2);
	MR_CHECK_MEM(two, pa, sizeof(two));

	/* Destroyed QPs keep their share. */
	destroy_pair(&p);
	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, after, MR_MAX_PATHS), 4);
	MR_CHECK_MEM(after, pa, 4 * sizeof(*after));
	MR_CHECK_EQ(mr_ep_path_counters(w.n[1].ep, after, MR_MAX_PATHS), 4);
	MR_CHECK_MEM(after, pb, 4 * sizeof(*after));

	/* A new pair adds to them. */
	connect_qps(&w, &p, MR_MODE_METAROCE, 64, NULL);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 99, a, 1024, 5, b, 6, 0,
			      w.now),
		    0);
	w.l[0].loss_ppm = w.l[1].loss_ppm = 0;
	w.n[0].ncqe = 0;
	want_a = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, after, MR_MAX_PATHS), 4);
	tx = 0;
	for (i = 0; i < 4; i++) {
		MR_CHECK(after[i].tx_pkts >= pa[i].tx_pkts);
		tx += after[i].tx_pkts - pa[i].tx_pkts;
	}
	MR_CHECK_EQ(tx, 1);
	destroy_pair(&p);
	world_fini(&w);
}

static void test_gbn_one_path(void)
{
	static struct world w;
	static uint8_t a[8192], b[8192];
	struct mr_ep_config cfg = base_cfg;
	struct mr_path_counters pc[MR_MAX_PATHS];
	struct pair p;

	cfg.num_paths = 1;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, MR_MODE_GBN, 16, NULL);
	fill(a, sizeof(a), 9);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, a, sizeof(a), 5, b, 6,
			      0, w.now),
		    0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000ull));
	MR_CHECK_MEM(b, a, sizeof(a));
	MR_CHECK_EQ(mr_ep_path_counters(w.n[0].ep, pc, MR_MAX_PATHS), 1);
	MR_CHECK_EQ(pc[0].tx_pkts, 8);
	MR_CHECK_EQ(pc[0].retx_pkts, 0);
	MR_CHECK_EQ(mr_ep_path_counters(w.n[1].ep, pc, MR_MAX_PATHS), 1);
	MR_CHECK_EQ(pc[0].rx_pkts, 8);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_paths_over_lossy_link), MR_TEST(test_gbn_one_path))
