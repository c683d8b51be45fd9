// SPDX-License-Identifier: BSD-2-Clause
/*
 * Thousands of seeded random scenarios through the whole core (two
 * endpoints, scripted link, reference model; tests/unit/sim/): RC in both
 * reliability modes at 0%, 1%, 10% and 30% loss, a configuration with
 * duplication, reordering, corruption and ECN marks on top, and UD. Every
 * registered byte and every completion is compared; a scenario that fails
 * prints its seed, and MRSIM_SEED=<seed> MRSIM_CONFIG=<name> replays only
 * it. MRSIM_SCALE=<factor> multiplies the scenario counts for soak runs.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_test.h"
#include "sim/mrsim_scen.h"

#define MAX_REPORTED 5

static int run_config(const struct mrsim_scen_cfg *cfg, unsigned count,
		      uint64_t seed_base)
{
	const char *only_cfg = getenv("MRSIM_CONFIG");
	const char *only_seed = getenv("MRSIM_SEED");
	uint64_t pkts = 0, retx = 0, lost = 0, sim = 0, max_sim = 0, bytes = 0,
		 wrs = 0, qps = 0, srqs = 0;
	unsigned i, failed = 0;

	if (only_cfg && strcmp(only_cfg, cfg->name))
		return 0;
	count = mrsim_scen_count(count);
	for (i = 0; i < count; i++) {
		uint64_t seed = only_seed ? strtoull(only_seed, NULL, 0)
					  : seed_base + i;
		struct mrsim_scen_result r;

		if (mrsim_scen_run(cfg, seed, &r)) {
			if (failed < MAX_REPORTED)
				fprintf(stderr, "FAIL %s\n", r.why);
			failed++;
		}
		pkts += r.pkts;
		retx += r.retx;
		lost += r.lost;
		sim += r.sim_ns;
		bytes += r.bytes;
		wrs += r.wrs;
		qps += r.qp_pairs;
		srqs += r.srqs;
		if (r.sim_ns > max_sim)
			max_sim = r.sim_ns;
	}
	printf("%-18s %5u scenarios %6" PRIu64 " WRs %9" PRIu64
	       " msg bytes %8" PRIu64 " pkts %7" PRIu64 " lost %7" PRIu64
	       " retx  sim %.3f s (max %.3f ms)  %u failed",
	       cfg->name, count, wrs, bytes, pkts, lost, retx, sim / 1e9,
	       max_sim / 1e6, failed);
	if (qps != count || srqs)
		printf("  (%" PRIu64 " QP pairs, %" PRIu64 " SRQs)", qps, srqs);
	printf("\n");
	fflush(stdout);
	return (int)failed;
}

static struct mrsim_scen_cfg rc_cfg(const char *name, enum mr_mode mode,
				    uint32_t loss_ppm)
{
	struct mrsim_scen_cfg c = {
		.name = name,
		.type = MR_QPT_RC,
		.mode = mode,
		.loss_ppm = loss_ppm,
		.delay_ns = 2000,
		.jitter_ns = 1000,
		.max_wr = 24,
		.big_max = 1u << 20,
		.big_ppm = 10000,
		.bidir = 1,
		.bound_ns = 20ull * 1000000000ull,
	};

	/* go-back-N resends whole windows: keep its lossy runs smaller. */
	if (mode == MR_MODE_GBN && loss_ppm >= 100000) {
		c.max_wr = 12;
		c.big_ppm = 0;
	}
	return c;
}

#define RC_TEST(fn, name, mode, loss, count, base)                  \
	static void fn(void)                                        \
	{                                                           \
		struct mrsim_scen_cfg c = rc_cfg(name, mode, loss); \
		MR_CHECK_EQ(run_config(&c, count, base), 0);        \
	}

RC_TEST(test_metaroce_loss0, "metaroce-0%", MR_MODE_METAROCE, 0, 400, 1000000)
RC_TEST(test_metaroce_loss1, "metaroce-1%", MR_MODE_METAROCE, 10000, 400,
	2000000)
RC_TEST(test_metaroce_loss10, "metaroce-10%", MR_MODE_METAROCE, 100000, 300,
	3000000)
RC_TEST(test_metaroce_loss30, "metaroce-30%", MR_MODE_METAROCE, 300000, 200,
	4000000)
RC_TEST(test_gbn_loss0, "gbn-0%", MR_MODE_GBN, 0, 300, 5000000)
RC_TEST(test_gbn_loss1, "gbn-1%", MR_MODE_GBN, 10000, 300, 6000000)
RC_TEST(test_gbn_loss10, "gbn-10%", MR_MODE_GBN, 100000, 200, 7000000)
RC_TEST(test_gbn_loss30, "gbn-30%", MR_MODE_GBN, 300000, 150, 8000000)

/* Receives posted late (a third of the scenarios): RNR NAKs and retries
 * mixed with loss. */
static void rnr_mix(enum mr_mode mode, const char *name, uint64_t base)
{
	struct mrsim_scen_cfg c = rc_cfg(name, mode, 10000);

	c.late_recv = 1;
	MR_CHECK_EQ(run_config(&c, 300, base), 0);
}

static void test_metaroce_rnr(void)
{
	rnr_mix(MR_MODE_METAROCE, "metaroce-rnr", 14000000);
}

static void test_gbn_rnr(void)
{
	rnr_mix(MR_MODE_GBN, "gbn-rnr", 15000000);
}

/* Up to three QP pairs at once on the same endpoints (demultiplexing,
 * scheduling, per-QP ordering), receivers with an SRQ half the time. */
static void multi(enum mr_mode mode, const char *name, uint32_t loss,
		  uint64_t base)
{
	struct mrsim_scen_cfg c = rc_cfg(name, mode, loss);

	c.max_qps = 3;
	c.srq = 1;
	c.max_wr = 16;
	MR_CHECK_EQ(run_config(&c, 200, base), 0);
}

static void test_metaroce_multi_qp_srq(void)
{
	multi(MR_MODE_METAROCE, "metaroce-multi-0%", 0, 16000000);
	multi(MR_MODE_METAROCE, "metaroce-multi-1%", 10000, 17000000);
}

static void test_gbn_multi_qp_srq(void)
{
	multi(MR_MODE_GBN, "gbn-multi-0%", 0, 18000000);
	multi(MR_MODE_GBN, "gbn-multi-1%", 10000, 19000000);
}

/* Everything the link can do at once: duplicates, reordering beyond the
 * per-path FIFO, corrupted packets (ICRC), CE marks, jitter and loss. */
static void chaos(enum mr_mode mode, const char *name, uint64_t base)
{
	struct mrsim_scen_cfg c = rc_cfg(name, mode, 20000);

	c.dup_ppm = 50000;
	c.reorder_ppm = 50000;
	c.corrupt_ppm = 20000;
	c.ce_ppm = 50000;
	c.jitter_ns = 5000;
	MR_CHECK_EQ(run_config(&c, 300, base), 0);
}

static void test_metaroce_chaos(void)
{
	chaos(MR_MODE_METAROCE, "metaroce-chaos", 9000000);
}

static void test_gbn_chaos(void)
{
	chaos(MR_MODE_GBN, "gbn-chaos", 10000000);
}

static void ud(const char *name, uint32_t loss_ppm, uint32_t corrupt_ppm,
	       unsigned count, uint64_t base)
{
	struct mrsim_scen_cfg c = {
		.name = name,
		.type = MR_QPT_UD,
		.loss_ppm = loss_ppm,
		.corrupt_ppm = corrupt_ppm,
		.reorder_ppm = 20000,
		.delay_ns = 2000,
		.jitter_ns = 1000,
		.max_wr = 40,
		.bidir = 1,
		.bound_ns = 1000000000ull,
	};

	MR_CHECK_EQ(run_config(&c, count, base), 0);
}

static void test_ud(void)
{
	ud("ud-0%", 0, 0, 300, 11000000);
	ud("ud-10%", 100000, 0, 200, 12000000);
	ud("ud-corrupt", 10000, 30000, 200, 13000000);
}

MR_TEST_MAIN(MR_TEST(test_metaroce_loss0), MR_TEST(test_metaroce_loss1),
	     MR_TEST(test_metaroce_loss10), MR_TEST(test_metaroce_loss30),
	     MR_TEST(test_gbn_loss0), MR_TEST(test_gbn_loss1),
	     MR_TEST(test_gbn_loss10), MR_TEST(test_gbn_loss30),
	     MR_TEST(test_metaroce_chaos), MR_TEST(test_gbn_chaos),
	     MR_TEST(test_metaroce_rnr), MR_TEST(test_gbn_rnr),
	     MR_TEST(test_metaroce_multi_qp_srq),
	     MR_TEST(test_gbn_multi_qp_srq), MR_TEST(test_ud))
