// SPDX-License-Identifier: BSD-2-Clause
/* MR-MP-12 on the datapath's side (lib/dp/mrdp_backlog.c): a plane whose
 * port holds refused frames is reported to the endpoint through
 * mrdp_ep_ops(), the endpoint's next packets leave on the other plane,
 * and once the port has taken its backlog the report clears and the
 * plane carries packets again. Two endpoints of lib/core over the unit
 * tests' scripted link (tests/unit/engine_world.c), seeded; every byte
 * of the transfer compared. */
#include "mr_test.h"

#include "engine_world.h"
#include "mrdp_backlog.h"
#include "mrdp_int.h"

#define NMSG 96
#define MSG (16 * 1024)

static struct world w;
static uint8_t src[NMSG * MSG], dst[NMSG * MSG];
static struct mrdp_dev dev; /* only nplanes, plane[].nbacklog, ops */

/* The mask alone: a bit per plane that holds a backlog, none past
 * nplanes, the staged frames not counted (the port has not refused
 * them). */
static void test_mask(void)
{
	memset(&dev, 0, sizeof(dev));
	dev.nplanes = 3;
	MR_CHECK_EQ(mrdp_backlog_planes(&dev), 0);
	dev.plane[2].nbacklog = 1;
	dev.plane[0].nstage = MRDP_BURST;
	MR_CHECK_EQ(mrdp_backlog_planes(&dev), 0x4);
	dev.plane[0].nbacklog = MRDP_BACKLOG;
	MR_CHECK_EQ(mrdp_backlog_planes(&dev), 0x5);
	dev.plane[3].nbacklog = 7; /* not a plane of this device */
	MR_CHECK_EQ(mrdp_backlog_planes(&dev), 0x5);
	dev.plane[0].nbacklog = dev.plane[2].nbacklog = 0;
	MR_CHECK_EQ(mrdp_backlog_planes(&dev), 0);
	/* No op (an engine that is not an endpoint): nothing is called. */
	mrdp_backlog_report(&dev);
}

/* Run until t; the packets node 0 sent on each plane meanwhile. */
static void run_count(uint64_t t, uint64_t sent[2])
{
	uint64_t b0 = w.l[0].plane_pkts[0], b1 = w.l[0].plane_pkts[1];

	MR_CHECK(run_until(&w, NULL, t));
	sent[0] = w.l[0].plane_pkts[0] - b0;
	sent[1] = w.l[0].plane_pkts[1] - b1;
}

static void test_report_and_clear(void)
{
	struct mr_ep_config cfg = base_cfg;
	uint64_t sent[2] = { 0, 0 };
	struct pair p;
	int i;

	cfg.num_paths = 4; /* paths 0, 2 on plane 0; 1, 3 on plane 1 */
	cfg.num_planes = 2;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, NMSG + 4, NULL);
	world_post_writes(&w, &p, src, dst, NMSG, MSG, 31);

	memset(&dev, 0, sizeof(dev));
	dev.nplanes = 2;
	dev.ops = mrdp_ep_ops(w.n[0].ep);
	/* Under way, nothing reported: both planes carry packets. */
	mrdp_backlog_report(&dev);
	run_count(w.now + 40000, sent);
	MR_CHECK(sent[0] > 20 && sent[1] > 20);
	/* Plane 1's port refused frames: reported, and while plane 0's
	 * paths may send (MR-MP-10 lets them hold the whole window) not one
	 * packet of node 0 leaves on plane 1. */
	dev.plane[1].nbacklog = 5;
	mrdp_backlog_report(&dev);
	run_count(w.now + 40000, sent);
	MR_CHECK(sent[0] > 40);
	MR_CHECK_EQ(sent[1], 0);
	MR_CHECK(w.n[0].ncqe < NMSG);
	/* The port took its backlog: the report clears, plane 1 is used
	 * again. */
	dev.plane[1].nbacklog = 0;
	mrdp_backlog_report(&dev);
	run_count(w.now + 40000, sent);
	MR_CHECK(sent[0] > 20 && sent[1] > 20);
	/* Plane 0 backlogged instead: the mirror image. */
	dev.plane[0].nbacklog = 1;
	mrdp_backlog_report(&dev);
	run_count(w.now + 20000, sent);
	MR_CHECK(sent[1] > 20);
	MR_CHECK_EQ(sent[0], 0);
	/* Both: no preference (a backlog never idles the QP). */
	dev.plane[1].nbacklog = 1;
	mrdp_backlog_report(&dev);
	run_count(w.now + 20000, sent);
	MR_CHECK(sent[0] > 10 && sent[1] > 10);
	dev.plane[0].nbacklog = dev.plane[1].nbacklog = 0;
	mrdp_backlog_report(&dev);

	MR_CHECK(run_until(&w, cqe_done, w.now + 2000000000ull));
	MR_CHECK_EQ(w.n[0].ncqe, NMSG);
	for (i = 0; i < NMSG; i++) {
		MR_CHECK_EQ(w.n[0].cqe[i].wr_id, (uint64_t)i);
		MR_CHECK_EQ(w.n[0].cqe[i].status, MR_WC_SUCCESS);
	}
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(src, dst, sizeof(src));
	MR_CHECK_EQ(mr_qp_counters(p.a)->timeouts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_mask), MR_TEST(test_report_and_clear))
