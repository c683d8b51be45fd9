// SPDX-License-Identifier: BSD-2-Clause
/* mr_cc: MetaRoCE ECN-AIMD + rate hint, DCQCN-like and fixed baselines,
 * the receiver's rate hint (MR-CC-*). */
#include "mr_test.h"

#include "mr_cc.h"
#include "mr_cc_dcqcn.h"
#include "mr_ratehint.h"
#include "mr_err.h"

/* 100 Gb/s, 10 us: BDP = 100000 x 10000 / 8000 = 125000 bytes. */
static const struct mr_cc_config cfg100 = {
	.mtu = 4096,
	.line_rate_mbps = 100000,
	.base_rtt_ns = 10000,
};

static void ack(struct mr_cc *cc, uint32_t pkts, uint32_t ce, uint32_t hint,
		uint64_t srtt, uint64_t now)
{
	struct mr_cc_ack a = {
		.acked_bytes = (uint64_t)pkts * 4096,
		.acked_pkts = pkts,
		.ce_pkts = ce,
		.rate_hint_mbps = hint,
		.srtt_ns = srtt,
	};

	mr_cc_on_ack(cc, &a, now);
}

static void test_init(void)
{
	struct mr_cc cc;
	struct mr_cc_config c = cfg100;

	MR_CHECK_EQ(mr_cc_init(&cc, NULL, &cfg100, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), NULL, 0), -MR_EINVAL);
	c.mtu = 0;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), -MR_EINVAL);
	c = cfg100;
	c.line_rate_mbps = 0;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), -MR_EINVAL);
	c = cfg100;
	c.min_cwnd = 200000;
	c.max_cwnd = 100000;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	MR_CHECK_EQ(cc.cfg.init_cwnd, 125000);
	MR_CHECK_EQ(cc.cfg.max_cwnd, 500000);
	MR_CHECK_EQ(cc.cfg.min_cwnd, 4096);
	MR_CHECK_EQ(cc.cfg.ai_bytes, 4096);
	MR_CHECK_EQ(cc.cwnd, 125000);
	/* MR-CC-5: one packet until the receiver's first hint. */
	MR_CHECK_EQ(mr_cc_window(&cc), 4096);
	MR_CHECK_EQ(mr_cc_window_pkts(&cc), 1);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 4096 * 8000 / 10000 * 5 / 4);
	MR_CHECK(strcmp(cc.ops->name, "metaroce") == 0);
	/* Without hints: the AIMD window from the start. 125000 B / 10 us =
	 * 100 Gb/s, x 5/4 capped at line rate. */
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce-nohint"), &cfg100, 0),
		    0);
	MR_CHECK_EQ(mr_cc_window(&cc), 125000);
	MR_CHECK_EQ(mr_cc_window_pkts(&cc), 30);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 100000);
}

/* MR-CC-1, MR-CC-2: additive increase per RTT without CE; x (1 - F/2) with CE
 * fraction F, at most once per RTT. */
static void test_aimd(void)
{
	struct mr_cc cc;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack(&cc, 10, 0, 0, 10000, 5000);
	MR_CHECK_EQ(cc.cwnd, 125000); /* the round is not over */
	ack(&cc, 10, 0, 0, 10000, 10000);
	MR_CHECK_EQ(cc.cwnd, 125000 + 4096);
	MR_CHECK_EQ(cc.increases, 1);
	/* Round 2: 20 acked, 5 CE -> F = 1/4: cut 129096 x 5 / 40. */
	ack(&cc, 10, 5, 0, 10000, 15000);
	MR_CHECK_EQ(cc.cwnd, 129096);
	ack(&cc, 10, 0, 0, 10000, 20000);
	MR_CHECK_EQ(cc.cwnd, 129096 - 16137);
	MR_CHECK_EQ(cc.decreases, 1);
	/* More CE within the same RTT: no second cut yet. */
	ack(&cc, 4, 4, 0, 10000, 21000);
	ack(&cc, 4, 4, 0, 10000, 29999);
	MR_CHECK_EQ(cc.cwnd, 112959);
	/* Round end: F = 8/8 -> halve. */
	ack(&cc, 0, 0, 0, 10000, 30000);
	MR_CHECK_EQ(cc.cwnd, 112959 - 56479);
	MR_CHECK_EQ(cc.decreases, 2);
	MR_CHECK_EQ(cc.ce_seen, 13);
	/* More CE than acked packets counts as F = 1. */
	ack(&cc, 2, 9, 0, 10000, 40000);
	MR_CHECK_EQ(cc.cwnd, 56480 - 28240);
	/* The floor is min_cwnd. */
	ack(&cc, 1, 1, 0, 10000, 50000);
	ack(&cc, 1, 1, 0, 10000, 60000);
	ack(&cc, 1, 1, 0, 10000, 70000);
	ack(&cc, 1, 1, 0, 10000, 80000);
	MR_CHECK_EQ(cc.cwnd, 4096);
	MR_CHECK_EQ(mr_cc_window_pkts(&cc), 1);
	/* A round with no acked packet changes nothing. */
	ack(&cc, 0, 0, 0, 10000, 100000);
	MR_CHECK_EQ(cc.cwnd, 4096);
	/* The round length follows srtt: 20 us now. */
	ack(&cc, 1, 0, 0, 20000, 110000);
	MR_CHECK_EQ(cc.cwnd, 4096);
	ack(&cc, 1, 0, 0, 20000, 120000);
	MR_CHECK_EQ(cc.cwnd, 8192);
}

/* MR-CC-3: loss is not congestion. */
static void test_no_decrease_on_loss(void)
{
	struct mr_cc cc;
	unsigned i;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	for (i = 0; i < 20; i++)
		mr_cc_on_sent(&cc, 4096, 0);
	MR_CHECK_EQ(cc.inflight, 20 * 4096);
	for (i = 0; i < 10; i++)
		mr_cc_on_loss(&cc, 4096, i % 4, 1000 + i);
	MR_CHECK_EQ(cc.cwnd, 125000);
	MR_CHECK_EQ(cc.inflight, 10 * 4096);
	MR_CHECK_EQ(cc.decreases, 0);
	/* Loss rounds still grow the window when nothing is marked. */
	ack(&cc, 10, 0, 0, 10000, 10000);
	MR_CHECK_EQ(cc.cwnd, 125000 + 4096);
	MR_CHECK_EQ(cc.inflight, 0);
	/* The dcqcn baseline ignores loss too. */
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("dcqcn"), &cfg100, 0), 0);
	mr_cc_on_loss(&cc, 4096, 2, 10);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 100000);
}

/* MR-CC-5: the hint cap is hint x min RTT, not x srtt: with a standing
 * queue (srtt 50 us over a 10 us path) the cap still drains it. */
static void test_hint_min_rtt(void)
{
	struct mr_cc cc;
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.rate_hint_mbps = 10000,
		.srtt_ns = 50000,
		.min_rtt_ns = 10000,
	};

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	mr_cc_on_ack(&cc, &a, 1000);
	/* 10 Gb/s x 10 us = 12500 bytes, not x 50 us = 62500; plus what the
	 * receiver holds for two ACKs: 2 x (10 Gb/s x 2 us + one packet). */
	MR_CHECK_EQ(mr_cc_window(&cc), 12500 + 2 * (2500 + 4096));
	/* The variant without hints ignores it. */
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce-nohint"), &cfg100, 0),
		    0);
	mr_cc_on_ack(&cc, &a, 1000);
	MR_CHECK_EQ(mr_cc_window(&cc), 125000);
}

/* MR-POL-1: every controller is found by its name, has its hooks and a
 * state that fits; unknown names are not found. */
static void test_registry(void)
{
	const struct mr_cc_ops *o;
	unsigned i, n = 0;

	for (i = 0; (o = mr_cc_algo(i)); i++) {
		MR_CHECK(mr_cc_find(o->name) == o);
		MR_CHECK(o->help && o->init && o->on_ack && o->on_loss &&
			 o->on_sent);
		MR_CHECK(o->state_size <= MR_CC_STATE_MAX);
		n++;
	}
	MR_CHECK_EQ(n, 4);
	MR_CHECK(mr_cc_find("cubic") == NULL);
	MR_CHECK(mr_cc_find(NULL) == NULL);
	/* AI scales with the BDP: 400 Gb/s x 10 us = 500000 B, / 32. */
	{
		struct mr_cc cc;
		struct mr_cc_config c = cfg100;

		c.line_rate_mbps = 400000;
		MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
		MR_CHECK_EQ(cc.cfg.ai_bytes, 15625);
	}
}

/* MR-CC-5, MR-CC-6: the receiver's hint caps window and pacing rate at
 * once. */
static void test_rate_hint(void)
{
	struct mr_cc cc;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack(&cc, 1, 0, 10000, 10000, 1000);
	/* 10 Gb/s x 10 us = 12500 bytes, + twice (10 Gb/s x 2 us ACK hold
	 * + one packet). */
	MR_CHECK_EQ(mr_cc_window(&cc), 12500 + 2 * (2500 + 4096));
	MR_CHECK_EQ(cc.cwnd, 125000);
	/* MR-CC-13: paced at 9/8 of the hint. */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250);
	/* While the hint binds, the window does not grow. */
	ack(&cc, 10, 0, 10000, 10000, 10000);
	MR_CHECK_EQ(cc.cwnd, 125000);
	MR_CHECK_EQ(cc.hint_limited, 1);
	/* A hint below one packet's worth: about two packets (125 + 2 x
	 * (25 + 4096) bytes). */
	ack(&cc, 1, 0, 100, 10000, 11000);
	MR_CHECK_EQ(mr_cc_window(&cc), 125 + 2 * (25 + 4096));
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 112);
	/* No hint: the AIMD window again. */
	ack(&cc, 1, 0, 0, 10000, 12000);
	MR_CHECK_EQ(mr_cc_window(&cc), 125000);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 100000);
	/* Round end at 20 us: 12 acked since 10 us, 10 CE: cut
	 * 125000 x 10 / 24. */
	ack(&cc, 10, 10, 0, 10000, 20000);
	MR_CHECK_EQ(cc.cwnd, 125000 - 52083);
	/* A hint above the window does not bind; pacing 5/4 window/RTT:
	 * 72917 x 8000 / 10000 = 58333 Mb/s x 5/4. */
	ack(&cc, 1, 0, 90000, 10000, 21000);
	MR_CHECK_EQ(mr_cc_window(&cc), 72917);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 72916);
}

/* MR-CC-5, MR-CC-7, MR-CC-8. Incast: 8 senders into one 100G receiver. Each
 * starts with one packet (no hint yet); the hint of the first ACK round
 * gives each its 1/8 share: the sum of windows is one BDP plus what the
 * receiver holds per sender for a coalesced ACK. */
static void test_incast_resolves(void)
{
	struct mr_cc cc[8];
	struct mr_ratehint h;
	struct mr_ratehint_conn c[8], *act[8];
	uint32_t dem[8];
	uint64_t sum = 0, slack;
	unsigned i;

	MR_CHECK_EQ(mr_ratehint_init(&h, 100000, 40000, 8, act, dem), 0);
	for (i = 0; i < 8; i++) {
		MR_CHECK_EQ(mr_cc_init(&cc[i], mr_cc_find("metaroce"), &cfg100, 0),
			    0);
		mr_ratehint_conn_init(&c[i]);
		sum += mr_cc_window(&cc[i]);
	}
	MR_CHECK_EQ(sum, 8 * 4096);
	/* All 8 deliver data in the first RTT. */
	for (i = 0; i < 8; i++)
		mr_ratehint_on_rx(&h, &c[i], 4096, 0, 5000 + i);
	MR_CHECK_EQ(mr_ratehint_get(&h, 6000), 12500);
	/* Twice (12.5 Gb/s x 2 us ACK hold + one packet, under 4
	 * packets). */
	slack = 2 * (12500ull * 2000 / 8000 + 4096);
	MR_CHECK_EQ(cc[0].cfg.hint_slack, 4 * 4096);
	sum = 0;
	for (i = 0; i < 8; i++) {
		ack(&cc[i], 1, 0, mr_ratehint_get(&h, 11000), 10000, 11000);
		sum += mr_cc_window(&cc[i]);
		/* 9/8 of the 1/8 share (MR-CC-13). */
		MR_CHECK_EQ(mr_cc_rate_mbps(&cc[i]), 12500 * 9 / 8);
	}
	MR_CHECK_EQ(sum, 8 * (15625 + slack));
}

/* MR-CC-5: before the first CE mark the window takes the hint's cap at
 * once (up and down); after a CE round it is AIMD's again, cut from the
 * window in use. */
static void test_hint_start(void)
{
	struct mr_cc cc;
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.rate_hint_mbps = 100000,
		.srtt_ns = 10000,
		.min_rtt_ns = 10000,
	};
	uint64_t cap = 125000 + 2 * 4 * 4096; /* BDP + 2 ACKs' packets */

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	MR_CHECK_EQ(mr_cc_window(&cc), 4096);
	mr_cc_on_ack(&cc, &a, 1000);
	MR_CHECK_EQ(cc.hint_cap, cap);
	MR_CHECK_EQ(cc.cwnd, cap);
	MR_CHECK_EQ(mr_cc_window(&cc), cap);
	/* The round ends at 11 us with 1 of 2 packets marked: x (1 - 1/4)
	 * from the cap. */
	a.ce_pkts = 1;
	mr_cc_on_ack(&cc, &a, 11000);
	MR_CHECK_EQ(cc.cwnd, cap - cap / 4);
	/* The start is over: a larger hint no longer lifts the window. */
	a.ce_pkts = 0;
	a.rate_hint_mbps = 200000;
	mr_cc_on_ack(&cc, &a, 12000);
	MR_CHECK_EQ(cc.cwnd, cap - cap / 4);
}

/* MR-CC-1: under a hint's cap a round without CE closes half the way to
 * the cap when that is more than ai (BDP/32 steps took an all-to-all's
 * last flows dozens of RTTs back to their share); ai once it is less. */
static void test_hint_climb(void)
{
	struct mr_cc cc;
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.rate_hint_mbps = 100000,
		.srtt_ns = 10000,
		.min_rtt_ns = 10000,
	};
	uint64_t cap = 125000 + 2 * 4 * 4096, w;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	mr_cc_on_ack(&cc, &a, 1000);
	a.ce_pkts = 1;
	mr_cc_on_ack(&cc, &a, 11000); /* x 3/4 from the cap */
	w = cap - cap / 4;
	MR_CHECK_EQ(cc.cwnd, w);
	a.ce_pkts = 0;
	mr_cc_on_ack(&cc, &a, 21000);
	w += (cap - w) / 2;
	MR_CHECK_EQ(cc.cwnd, w);
	mr_cc_on_ack(&cc, &a, 31000);
	w += (cap - w) / 2;
	MR_CHECK_EQ(cc.cwnd, w);
	mr_cc_on_ack(&cc, &a, 41000);
	w += (cap - w) / 2;
	mr_cc_on_ack(&cc, &a, 51000);
	MR_CHECK_EQ(cc.cwnd, w + 4096); /* half the way < ai: ai */
	MR_CHECK_EQ(cc.hint_cap, cap);
}

static void ack_rtt_ce(struct mr_cc *cc, uint32_t hint, uint64_t min_rtt,
		       uint64_t rtt, uint64_t now, uint32_t ce)
{
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.ce_pkts = ce,
		.rate_hint_mbps = hint,
		.srtt_ns = 10000,
		.min_rtt_ns = min_rtt,
		.rtt_ns = rtt,
	};

	mr_cc_on_ack(cc, &a, now);
}

/* An ACK of one CE-marked packet. */
static void ack_rtt(struct mr_cc *cc, uint32_t hint, uint64_t min_rtt,
		    uint64_t rtt, uint64_t now)
{
	ack_rtt_ce(cc, hint, min_rtt, rtt, now, 1);
}

/* MR-CC-13: while the network marks CE, a latest RTT sample above 2 x
 * ref (min(min RTT, base RTT)) shrinks the hint's cap and rate by 2 ref /
 * RTT, so the queue drains; at or under it nothing changes; a delay
 * without CE marks (the hosts' own) shrinks nothing, and a round without
 * marks ends the drain. */
static void test_queue_drain(void)
{
	struct mr_cc cc;
	uint64_t cap = 12500 + 2 * (2500 + 4096); /* 10 Gb/s x 10 us + S */

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack_rtt_ce(&cc, 10000, 10000, 40000, 500, 0); /* no CE: held */
	MR_CHECK_EQ(mr_cc_window(&cc), cap);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250);
	ack_rtt(&cc, 10000, 10000, 20000, 1000); /* one ref of queue: held */
	MR_CHECK_EQ(mr_cc_window(&cc), cap);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250);
	ack_rtt(&cc, 10000, 10000, 40000, 2000); /* three: x 1/2 */
	MR_CHECK_EQ(mr_cc_window(&cc), cap / 2);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250 / 2);
	/* A min RTT inflated by the queue its first packet met: the base
	 * RTT (10 us) is the reference, as for the other senders. */
	ack_rtt(&cc, 10000, 30000, 40000, 3000);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250 / 2);
	/* Never under one packet. */
	ack_rtt(&cc, 10000, 10000, 2000000, 4000);
	MR_CHECK_EQ(mr_cc_window(&cc), 4096);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 112);
	/* Drained: the full share again. */
	ack_rtt(&cc, 10000, 10000, 12000, 5000);
	MR_CHECK_EQ(mr_cc_window(&cc), cap);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250);
	/* A round without CE marks in which the queue was gone ends the
	 * drain (MR-CC-15, test_drain_until_gone): the cap is whole again. */
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack_rtt(&cc, 10000, 10000, 40000, 1000);
	MR_CHECK_EQ(cc.hint_cap, cap / 2);
	ack_rtt_ce(&cc, 10000, 10000, 40000, 11000, 0); /* round of a CE */
	MR_CHECK_EQ(cc.hint_cap, cap / 2);
	ack_rtt_ce(&cc, 10000, 10000, 20000, 22000, 0); /* round without */
	ack_rtt_ce(&cc, 10000, 10000, 40000, 23000, 0);
	MR_CHECK_EQ(cc.hint_cap, cap);
	/* The variant without hints does not drain (nothing to shrink). */
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce-nohint"), &cfg100, 0),
		    0);
	ack_rtt(&cc, 10000, 10000, 40000, 1000);
	MR_CHECK_EQ(mr_cc_window(&cc), 125000);
}

/* MR-CC-15: the drain lasts until the queue is gone, not only while
 * CE marks come: a round without marks whose latest RTT sample still
 * shows a queue (the switch's queue under its marking threshold, over
 * 2 ref) keeps the cap and the rate drained; a round without marks at
 * q <= 2 ref ends it, and a delay after that, unmarked, drains nothing
 * (the hosts' own, MR-CC-13). */
static void test_drain_until_gone(void)
{
	struct mr_cc cc;
	uint64_t cap = 12500 + 2 * (2500 + 4096); /* 10 Gb/s x 10 us + S */

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack_rtt(&cc, 10000, 10000, 40000, 1000); /* CE, 3 ref: x 1/2 */
	MR_CHECK_EQ(cc.hint_cap, cap / 2);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250 / 2);
	/* Rounds without CE, the queue under the threshold but not gone
	 * (25 us: 1.5 ref of queue): still drained, by 20 / 25. */
	ack_rtt_ce(&cc, 10000, 10000, 25000, 11000, 0);
	ack_rtt_ce(&cc, 10000, 10000, 25000, 22000, 0);
	ack_rtt_ce(&cc, 10000, 10000, 25000, 33000, 0);
	MR_CHECK_EQ(cc.hint_cap, cap * 4 / 5);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250 * 4 / 5);
	/* At 2 ref nothing shrinks; the round without CE ends the drain. */
	ack_rtt_ce(&cc, 10000, 10000, 20000, 44000, 0);
	MR_CHECK_EQ(cc.hint_cap, cap);
	ack_rtt_ce(&cc, 10000, 10000, 40000, 45000, 0);
	MR_CHECK_EQ(cc.hint_cap, cap); /* unmarked: the hosts' delay */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 11250);
	/* A CE mark arms it again. */
	ack_rtt(&cc, 10000, 10000, 40000, 46000);
	MR_CHECK_EQ(cc.hint_cap, cap / 2);
}

/* MR-CC-4: a rate that rises on an ACK re-spaces the gap after the last
 * packet at the new rate (a drained sender at a sub-packet share is not
 * held idle for the slow gap); a falling rate keeps the gap it had. */
static void test_pacing_respace(void)
{
	struct mr_cc cc;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &cfg100, 0), 0);
	ack_rtt(&cc, 1000, 10000, 40000, 1000); /* 1125 / 2 = 562 Mb/s */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 562);
	mr_cc_on_sent(&cc, 4096, 10000);
	MR_CHECK_EQ(mr_cc_next_send(&cc), 10000 + 4096ull * 8000 / 562);
	ack_rtt(&cc, 1000, 10000, 80000, 11000); /* slower: gap kept */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 281);
	MR_CHECK_EQ(mr_cc_next_send(&cc), 10000 + 4096ull * 8000 / 562);
	ack_rtt(&cc, 1000, 10000, 10000, 12000); /* drained: 1125 Mb/s */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 1125);
	MR_CHECK_EQ(mr_cc_next_send(&cc), 10000 + 4096ull * 8000 / 1125);
	MR_CHECK(mr_cc_can_send(&cc, 4096, 10000 + 4096ull * 8000 / 1125));
}

/* MR-CC-4 (window and pacing gate), MR-CC-10 (fixed). */
static void test_can_send_and_pacing(void)
{
	struct mr_cc cc;
	struct mr_cc_config c = cfg100;

	c.init_cwnd = 8192;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce-nohint"), &c, 1000),
		    0);
	/* 8192 B / 10 us = 6553 Mb/s x 5/4 = 8191 */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 8191);
	MR_CHECK(mr_cc_can_send(&cc, 100000, 1000)); /* nothing in flight */
	mr_cc_on_sent(&cc, 4096, 1000);
	/* 4096 B at 8191 Mb/s: 4096 x 8000 / 8191 = 4000 ns. */
	MR_CHECK_EQ(mr_cc_next_send(&cc), 5000);
	MR_CHECK(!mr_cc_can_send(&cc, 4096, 4999));
	MR_CHECK(mr_cc_can_send(&cc, 4096, 5000));
	mr_cc_on_sent(&cc, 4096, 5000);
	MR_CHECK_EQ(mr_cc_next_send(&cc), 9000);
	MR_CHECK(!mr_cc_can_send(&cc, 1, 20000)); /* window full */
	ack(&cc, 1, 0, 0, 0, 20000);
	/* That ACK closed a round without CE: cwnd 8192 + 4096. */
	MR_CHECK_EQ(mr_cc_window(&cc), 12288);
	MR_CHECK(mr_cc_can_send(&cc, 8192, 20000));
	MR_CHECK(!mr_cc_can_send(&cc, 8193, 20000));
	/* Fixed: unpaced, constant window whatever the marks. */
	c.init_cwnd = 65536;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("fixed"), &c, 0), 0);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 0);
	ack(&cc, 10, 10, 1000, 10000, 50000);
	ack(&cc, 10, 10, 1000, 10000, 90000);
	MR_CHECK_EQ(mr_cc_window(&cc), 65536);
	mr_cc_on_sent(&cc, 4096, 100000);
	MR_CHECK_EQ(mr_cc_next_send(&cc), 0);
	MR_CHECK(mr_cc_can_send(&cc, 4096, 100000));
}

/* MR-CC-4: a pacing quantum lets a driver that runs in rounds send, in one
 * round, what the rate allowed since the last one (up to the quantum), but
 * never more than the quantum after an idle period. */
static void test_pacing_quantum(void)
{
	struct mr_cc cc;
	struct mr_cc_config c = cfg100;
	unsigned n;
	uint64_t t;

	c.init_cwnd = 8192;
	c.max_cwnd = 1 << 20;
	c.pace_quantum = 16384;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("fixed"), &c, 0), 0);
	/* fixed is unpaced; give it a rate by hand to test the clock. */
	cc.cwnd = 1 << 20;
	cc.rate_mbps = 8192; /* 4096 B = 4000 ns */
	/* Idle since time 0, first send at 1 ms: the credit is 16384 B
	 * (16 us), so 4 packets of 4096 go at once, then the fifth and
	 * following wait 4 us each. */
	t = 1000000;
	for (n = 0; mr_cc_can_send(&cc, 4096, t) && n < 100; n++)
		mr_cc_on_sent(&cc, 4096, t);
	MR_CHECK_EQ(n, 5);
	MR_CHECK_EQ(mr_cc_next_send(&cc), t - 16000 + 5 * 4000);
	/* A driver coming back 12 us later sends 3 packets in its round:
	 * what the rate allowed, not a new full quantum. */
	t += 12000;
	for (n = 0; mr_cc_can_send(&cc, 4096, t) && n < 100; n++)
		mr_cc_on_sent(&cc, 4096, t);
	MR_CHECK_EQ(n, 3);
	/* Without a quantum: one packet per round, whatever the gap. */
	c.pace_quantum = 0;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("fixed"), &c, 0), 0);
	cc.cwnd = 1 << 20;
	cc.rate_mbps = 8192;
	t = 1000000;
	for (n = 0; mr_cc_can_send(&cc, 4096, t) && n < 100; n++)
		mr_cc_on_sent(&cc, 4096, t);
	MR_CHECK_EQ(n, 1);
	MR_CHECK_EQ(mr_cc_next_send(&cc), t + 4000);
}

/* MR-CC-9, DCQCN-like: cut on the first CE, one CNP per 50 us, fast recovery
 * every 55 us, then additive increase. */
static void test_dcqcn(void)
{
	struct mr_cc cc;

	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("dcqcn"), &cfg100, 0), 0);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 100000);
	MR_CHECK_EQ(mr_cc_window(&cc), 500000);
	ack(&cc, 1, 1, 0, 10000, 0);
	/* alpha stays 1: Rc = 100000 x (1 - 1/2) */
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->alpha, 65536);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 50000);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->rt, 100000);
	ack(&cc, 1, 1, 0, 10000, 49999); /* within 50 us: ignored */
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 50000);
	/* 55 us: alpha decays (65536 - 256), fast recovery 1. */
	mr_cc_on_sent(&cc, 4096, 55000);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->alpha, 65280);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 75000);
	/* 4 more periods: 87500, 93750, 96875, 98437. */
	mr_cc_on_sent(&cc, 4096, 275000);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 98437);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->stage, 5);
	/* alpha decayed 4 more times: 65025, 64771, 64518, 64266. */
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->alpha, 64266);
	/* A CNP: alpha = 64266 - 251 + 256 = 64271; Rt = 98437;
	 * Rc = 98437 - 98437 x 64271 / 131072 = 50169. */
	ack(&cc, 1, 1, 0, 10000, 280000);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->alpha, 64271);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->rt, 98437);
	MR_CHECK_EQ(mr_cc_rate_mbps(&cc), 50169);
	MR_CHECK_EQ(cc.decreases, 2);
	/* 10 periods: 5 fast recovery, then additive (+40 on Rt). */
	mr_cc_on_sent(&cc, 4096, 280000 + 5 * 55000);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->rt, 98437);
	mr_cc_on_sent(&cc, 4096, 280000 + 6 * 55000);
	MR_CHECK_EQ(mr_cc_dcqcn_of(&cc)->rt, 98477);
	/* The hint is not DCQCN's business. */
	ack(&cc, 1, 0, 1000, 10000, 280000 + 6 * 55000);
	MR_CHECK_EQ(mr_cc_window(&cc), 500000);
}

/* MR-CC-7: water-filling. A demand below the equal share of what is left
 * is met; the others share the rest; the last sender gets all that is left. */
static void test_ratehint_level(void)
{
	const uint32_t one[] = { 10000 };
	const uint32_t two[] = { 10000, 90000 };
	const uint32_t three[] = { 10000, 20000, 200000 };
	const uint32_t big[] = { 60000, 70000 };

	MR_CHECK_EQ(mr_ratehint_level(100000, NULL, 0, 0), 100000);
	MR_CHECK_EQ(mr_ratehint_level(100000, NULL, 0, 4), 25000);
	MR_CHECK_EQ(mr_ratehint_level(100000, one, 1, 0), 100000);
	MR_CHECK_EQ(mr_ratehint_level(100000, one, 1, 3), 30000);
	MR_CHECK_EQ(mr_ratehint_level(100000, two, 2, 0), 90000);
	MR_CHECK_EQ(mr_ratehint_level(100000, three, 3, 0), 70000);
	MR_CHECK_EQ(mr_ratehint_level(100000, three, 3, 1), 35000);
	MR_CHECK_EQ(mr_ratehint_level(100000, big, 2, 0), 50000);
	MR_CHECK_EQ(mr_ratehint_level(3, NULL, 0, 8), 1); /* never 0 */
}

/* Bytes of `mbps` over one epoch of 10 us. */
#define EPOCH_BYTES(mbps) ((uint32_t)((uint64_t)(mbps) * 10000 / 8000))

/* MR-CC-7: newcomers take an equal share at once; a sender that uses
 * less than its share leaves the rest to the others (demand: twice what
 * it delivered); a sender silent for two epochs leaves the list. */
static void test_ratehint_demand(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, b, *act[4];
	uint32_t dem[4];

	MR_CHECK_EQ(mr_ratehint_init(&h, 0, 10, 4, act, dem), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_init(&h, 100, 0, 4, act, dem), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_init(&h, 100, 10, 0, act, dem), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_init(&h, 100, 10, 4, NULL, dem), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_init(&h, 100000, 10000, 4, act, dem), 0);
	mr_ratehint_conn_init(&a);
	mr_ratehint_conn_init(&b);
	MR_CHECK_EQ(mr_ratehint_get(&h, 0), 100000);
	/* Epoch 0: a delivers 10 Gb/s worth, b 90; both newcomers. */
	mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(10000) / 2, 0, 100);
	MR_CHECK_EQ(mr_ratehint_get(&h, 150), 100000);
	mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(90000), 0, 200);
	MR_CHECK_EQ(mr_ratehint_get(&h, 300), 50000);
	mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(10000) / 2, 0, 400); /* once */
	MR_CHECK_EQ(mr_ratehint_get(&h, 500), 50000);
	MR_CHECK_EQ(h.nact, 2);
	/* Epoch 1: demands 20000 and 180000: a leaves b 80 Gb/s. */
	MR_CHECK_EQ(mr_ratehint_get(&h, 10000), 80000);
	MR_CHECK_EQ(h.ndem, 2);
	MR_CHECK_EQ(h.demand[0], 20000);
	MR_CHECK_EQ(h.demand[1], 180000);
	/* a and b go on alike in epoch 1; epoch 2 sees the mean of both. */
	mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(10000), 0, 10500);
	mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(90000), 0, 10600);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10700), 80000); /* not newcomers */
	MR_CHECK_EQ(mr_ratehint_get(&h, 20000), 80000);
	/* a goes silent: epoch 3 still counts it from epoch 1 (it delivered
	 * in one of the two epochs before: twice that); b delivers more. */
	mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(90000), 0, 20500);
	MR_CHECK_EQ(mr_ratehint_get(&h, 30000), 80000);
	MR_CHECK_EQ(h.nact, 2);
	/* Epoch 4: a silent in epochs 2 and 3: off the list, b alone. */
	mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(90000), 0, 30500);
	MR_CHECK_EQ(mr_ratehint_get(&h, 40000), 100000);
	MR_CHECK_EQ(h.nact, 1);
	/* a returns: a newcomer, equal share at once. */
	mr_ratehint_on_rx(&h, &a, 100, 0, 40100);
	MR_CHECK_EQ(mr_ratehint_get(&h, 40200), 50000);
	/* a's QP goes away: its newcomer share is returned, the list is
	 * left consistent. */
	mr_ratehint_conn_gone(&h, &a);
	MR_CHECK_EQ(mr_ratehint_get(&h, 40300), 100000);
	MR_CHECK_EQ(h.nact, 1);
	MR_CHECK(h.act[0] == &b);
	MR_CHECK_EQ(b.slot, 0);
	/* Idle for epochs: nobody listed, the full link. */
	MR_CHECK_EQ(mr_ratehint_get(&h, 90000), 100000);
	MR_CHECK_EQ(h.nact, 0);
	MR_CHECK_EQ(h.ndem, 0);
	/* Time running backwards does not roll epochs. */
	mr_ratehint_on_rx(&h, &b, 100, 0, 91000);
	mr_ratehint_on_rx(&h, &a, 100, 0, 60000);
	MR_CHECK_EQ(h.epoch, 9);
	MR_CHECK_EQ(mr_ratehint_get(&h, 92000), 50000);
	/* The port's rate read from the port. */
	MR_CHECK_EQ(mr_ratehint_set_link(&h, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_set_link(&h, 400000), 0);
	MR_CHECK_EQ(mr_ratehint_get(&h, 92000), 200000);
}

/* MR-CC-14: an IDLE packet takes its connection out of the hint at once
 * (a newcomer's share, or a measured demand, goes to the others); older
 * packets keep it out, a newer one brings it back as a newcomer. */
static void test_ratehint_idle(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, b, c, *act[4];
	uint32_t dem[4];

	MR_CHECK_EQ(mr_ratehint_init(&h, 100000, 10000, 4, act, dem), 0);
	mr_ratehint_conn_init(&a);
	mr_ratehint_conn_init(&b);
	mr_ratehint_conn_init(&c);
	/* Epoch 0: a and b newcomers; a's last packet (ssn 10) is IDLE. */
	mr_ratehint_on_pkt(&h, &a, 4096, 0, 9, 0, 100);
	mr_ratehint_on_pkt(&h, &b, 4096, 0, 500, 0, 200);
	MR_CHECK_EQ(mr_ratehint_get(&h, 300), 50000);
	mr_ratehint_on_pkt(&h, &a, 4096, 0, 10, 1, 400);
	MR_CHECK_EQ(mr_ratehint_get(&h, 450), 100000);
	MR_CHECK_EQ(h.nact, 1);
	MR_CHECK(h.act[0] == &b);
	/* A late packet older than the IDLE one (another path) says no new
	 * demand; the planes still count it. */
	mr_ratehint_on_pkt(&h, &a, 4096, 0, 8, 0, 500);
	MR_CHECK_EQ(mr_ratehint_get(&h, 550), 100000);
	MR_CHECK_EQ(h.nact, 1);
	MR_CHECK_EQ(h.rx_pkts, 4);
	/* New data (ssn 11): a newcomer again, in the same epoch. */
	mr_ratehint_on_pkt(&h, &a, 4096, 0, 11, 0, 600);
	MR_CHECK_EQ(mr_ratehint_get(&h, 650), 50000);
	MR_CHECK_EQ(h.nact, 2);
	/* Epoch 1: a, b and c measured (demands 2 x their epoch-0 rate:
	 * a and b 6553 Mb/s each, c the rest); c's IDLE takes its measured
	 * demand out of demand[], the others' share grows at once. */
	mr_ratehint_on_pkt(&h, &c, EPOCH_BYTES(60000), 0, 70, 0, 700);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10000), 100000 - 2 * 6553);
	MR_CHECK_EQ(h.ndem, 3);
	mr_ratehint_on_pkt(&h, &c, 4096, 0, 71, 1, 10100);
	MR_CHECK_EQ(h.ndem, 2);
	MR_CHECK_EQ(h.nact, 2);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10200), 100000 - 6553);
	/* An IDLE retransmission older than c's IDLE changes nothing. */
	mr_ratehint_on_pkt(&h, &c, 4096, 0, 70, 1, 10300);
	MR_CHECK_EQ(c.idle_ssn, 71);
	MR_CHECK_EQ(h.ndem, 2);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10400), 100000 - 6553);
	/* b finishes too: a alone. */
	mr_ratehint_on_pkt(&h, &b, 4096, 0, 501, 1, 10500);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10600), 100000);
	MR_CHECK_EQ(h.ndem, 1);
}

/* MR-CC-7: past the list's capacity a connection counts as greedy in every
 * epoch it delivers in (its demand is never measured). */
static void test_ratehint_capacity(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, b, *act[1];
	uint32_t dem[1];

	MR_CHECK_EQ(mr_ratehint_init(&h, 100000, 10000, 1, act, dem), 0);
	mr_ratehint_conn_init(&a);
	mr_ratehint_conn_init(&b);
	mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(1000), 0, 100);
	mr_ratehint_on_rx(&h, &b, 100, 0, 200);
	MR_CHECK_EQ(h.nact, 1);
	MR_CHECK_EQ(mr_ratehint_get(&h, 300), 50000);
	/* Epoch 1: a's demand 2000 measured; b greedy again when it
	 * delivers, not before. */
	MR_CHECK_EQ(mr_ratehint_get(&h, 10000), 100000);
	mr_ratehint_on_rx(&h, &b, 100, 0, 10100);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10200), 98000);
	mr_ratehint_conn_gone(&h, &b);
	MR_CHECK_EQ(mr_ratehint_get(&h, 10300), 100000);
}

/* MR-CC-12: a plane that delivered before and is silent for half an
 * epoch while another delivers is down for the hint, so R is the live
 * planes' share of the port; its next packet brings it back. A plane
 * never heard from, and an idle port, are not judged. */
static void test_ratehint_planes(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, *act[2];
	uint32_t dem[2];
	static const unsigned live3[3] = { 0, 1, 3 };
	unsigned p, i;

	MR_CHECK_EQ(mr_ratehint_init(&h, 400000, 40000, 2, act, dem), 0);
	MR_CHECK_EQ(mr_ratehint_set_planes(&h, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_ratehint_set_planes(&h, 4), 0);
	mr_ratehint_conn_init(&a);
	/* Only plane 0 heard from yet: the others are not judged. */
	mr_ratehint_on_rx(&h, &a, 4096, 0, 100);
	MR_CHECK_EQ(mr_ratehint_get(&h, 30000), 400000);
	/* All four deliver, then plane 1 goes silent. */
	for (p = 0; p < 4; p++)
		mr_ratehint_on_rx(&h, &a, 4096, p, 31000 + p);
	MR_CHECK_EQ(mr_ratehint_get(&h, 40000), 400000);
	for (p = 0; p < 4; p++)
		if (p != 1)
			mr_ratehint_on_rx(&h, &a, 4096, p, 45000 + p);
	/* Silent for long enough, but 3 packets since are a slow sender's,
	 * not a plane's failure (32 per plane are needed). */
	MR_CHECK_EQ(mr_ratehint_get(&h, 51002), 400000);
	for (i = 0; i < 130; i++)
		mr_ratehint_on_rx(&h, &a, 4096, i % 2 ? 0 : 2, 46000 + i);
	/* 20 us of silence is the limit (half of the 40 us epoch): plane
	 * 1's last packet came at 31001. */
	MR_CHECK_EQ(mr_ratehint_get(&h, 51001), 400000);
	MR_CHECK_EQ(mr_ratehint_get(&h, 51002), 300000);
	/* Back with its next packet. */
	mr_ratehint_on_rx(&h, &a, 4096, 1, 52000);
	MR_CHECK_EQ(mr_ratehint_get(&h, 52001), 400000);
	/* An idle port (nothing within the limit on any plane) says
	 * nothing about its planes. */
	MR_CHECK_EQ(mr_ratehint_get(&h, 200000), 400000);
	/* The port's rate read later keeps the live planes' share (plane
	 * 2 silent since 46128 while 0, 1 and 3 deliver 44 packets each). */
	for (i = 0; i < 132; i++)
		mr_ratehint_on_rx(&h, &a, 4096, live3[i % 3], 300000 + i);
	MR_CHECK_EQ(mr_ratehint_get(&h, 300140), 300000);
	MR_CHECK_EQ(mr_ratehint_set_link(&h, 800000), 0);
	MR_CHECK_EQ(mr_ratehint_get(&h, 300141), 600000);
}

MR_TEST_MAIN(MR_TEST(test_init), MR_TEST(test_aimd),
	     MR_TEST(test_no_decrease_on_loss), MR_TEST(test_rate_hint),
	     MR_TEST(test_incast_resolves), MR_TEST(test_can_send_and_pacing),
	     MR_TEST(test_pacing_quantum), MR_TEST(test_dcqcn),
	     MR_TEST(test_ratehint_level),
	     MR_TEST(test_ratehint_demand), MR_TEST(test_ratehint_capacity),
	     MR_TEST(test_ratehint_idle),
	     MR_TEST(test_ratehint_planes), MR_TEST(test_hint_min_rtt),
	     MR_TEST(test_hint_start), MR_TEST(test_hint_climb),
	     MR_TEST(test_queue_drain), MR_TEST(test_drain_until_gone),
	     MR_TEST(test_pacing_respace),
	     MR_TEST(test_registry))
