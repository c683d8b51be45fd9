// SPDX-License-Identifier: BSD-2-Clause
/* MR-CC-17, a connection's start with cc_start = slots: the receiver's
 * first ACKs in slots a full packet apart, a newcomer greedy through the
 * epoch after its first, the first hint's window without the slack and
 * pacing at the hint until the first CE round; and MR-CC-16's
 * first_pkt_starts count. */
#include "mr_test.h"

#include "mr_cc.h"
#include "mr_ratehint.h"

/* A full packet on the wire: 4156 bytes at 100 Gb/s = 332 ns. */
#define PKT 4156u
#define GAP 332u

/* MR-CC-17: each newcomer's first ACK takes the next slot, one packet's
 * time at the port after the previous one; a slot in the past is no
 * delay; a connection keeps its slot; without the paced start the ACK
 * is due when it is due. */
static void test_first_ack_slots(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, b, c, *act[4];
	uint32_t dem[4];

	MR_CHECK_EQ(mr_ratehint_init(&h, 100000, 20000, 4, act, dem), 0);
	mr_ratehint_conn_init(&a);
	mr_ratehint_conn_init(&b);
	mr_ratehint_conn_init(&c);
	/* Off: due is due. */
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &a, 2000), 2000);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &b, 2000), 2000);
	mr_ratehint_set_start(&h, PKT);
	mr_ratehint_conn_init(&a);
	mr_ratehint_conn_init(&b);
	/* Three newcomers whose ACKs fall due 100 ns apart leave 332 ns
	 * apart. */
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &a, 2000), 2000);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &b, 2100), 2000 + GAP);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &c, 2200), 2000 + 2 * GAP);
	/* a's slot is a's: asked again, the slot or a later due. */
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &a, 1500), 2000);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &a, 9000), 9000);
	/* Long after the last slot: at once. */
	mr_ratehint_conn_init(&a);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &a, 50000), 50000);
	/* The slot follows the port's rate (400 Gb/s: 83 ns). */
	MR_CHECK_EQ(mr_ratehint_set_link(&h, 400000), 0);
	mr_ratehint_conn_init(&b);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &b, 50000), 50000 + GAP);
	mr_ratehint_conn_init(&c);
	MR_CHECK_EQ(mr_ratehint_first_ack(&h, &c, 50000),
		    50000 + GAP + PKT * 8000u / 400000u);
}

#define EPOCH 20000u
/* Bytes that make mbps over one epoch. */
#define EPOCH_BYTES(mbps) ((uint32_t)((uint64_t)(mbps) * EPOCH / 8000))

/* MR-CC-17: b begins late in epoch 0 (one small packet); measured there
 * it would demand 2 x 0.8 Gb/s and leave a 98.4 Gb/s; with the paced
 * start it stays greedy through epoch 1 (an equal share), and epoch 2
 * measures it on epoch 1 alone. */
static void test_young_newcomer(void)
{
	struct mr_ratehint h;
	struct mr_ratehint_conn a, b, *act[4];
	uint32_t dem[4];
	int start;

	for (start = 0; start < 2; start++) {
		MR_CHECK_EQ(mr_ratehint_init(&h, 100000, EPOCH, 4, act, dem),
			    0);
		if (start)
			mr_ratehint_set_start(&h, PKT);
		mr_ratehint_conn_init(&a);
		mr_ratehint_conn_init(&b);
		mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(50000), 0, 100);
		mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(800), 0, 19000);
		MR_CHECK_EQ(mr_ratehint_get(&h, 19500), 50000);
		/* Epoch 1. */
		MR_CHECK_EQ(mr_ratehint_get(&h, EPOCH + 100),
			    start ? 50000 : 98400);
		MR_CHECK_EQ(b.young, start);
		mr_ratehint_on_rx(&h, &a, EPOCH_BYTES(50000), 0, EPOCH + 200);
		mr_ratehint_on_rx(&h, &b, EPOCH_BYTES(10000), 0, EPOCH + 300);
		/* Epoch 2: a demands 2 x 50, b 2 x 10 (epoch 1 alone, not
		 * the mean with epoch 0's packet, 2 x 5.4): a gets 80. */
		MR_CHECK_EQ(mr_ratehint_get(&h, 2 * EPOCH + 100),
			    start ? 80000 : 89200);
		MR_CHECK_EQ(b.young, 0);
	}
}

/* 100 Gb/s, 10 us: BDP 125000 bytes; slack 4 packets per ACK. */
static const struct mr_cc_config cfg100 = {
	.mtu = 4096,
	.line_rate_mbps = 100000,
	.base_rtt_ns = 10000,
};

/* MR-CC-17: the first hint's cap is hint x min RTT (at least one
 * packet), the next ones add the two ACKs' slack of MR-CC-5. */
static void test_first_cap_bare(void)
{
	struct mr_cc cc;
	struct mr_cc_config c = cfg100;
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.rate_hint_mbps = 10000,
		.srtt_ns = 10000,
		.min_rtt_ns = 10000,
	};
	/* 10 Gb/s x 10 us = 12500; slack min(10 Gb/s x 2 us + 4096, 4 x
	 * 4096) = 6596, twice. */
	uint64_t share = 12500, slack = 2 * 6596;
	int bare;

	for (bare = 0; bare < 2; bare++) {
		c.slots_start = bare;
		MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
		MR_CHECK_EQ(mr_cc_window(&cc), 4096);
		mr_cc_on_ack(&cc, &a, 1000);
		MR_CHECK_EQ(cc.hint_cap, bare ? share : share + slack);
		MR_CHECK_EQ(mr_cc_window(&cc), bare ? share : share + slack);
		mr_cc_on_ack(&cc, &a, 2000);
		MR_CHECK_EQ(cc.hint_cap, share + slack);
	}
	/* Paced at the hint (with the slots: not 9/8 of it) until the
	 * first round with CE marks, then 9/8 again. */
	MR_CHECK_EQ(cc.rate_mbps, 10000);
	a.ce_pkts = 1;
	mr_cc_on_ack(&cc, &a, 20000); /* the round of 10 us ends, marked */
	MR_CHECK_EQ(cc.rate_mbps, 11250);
	c.slots_start = 0;
	a.ce_pkts = 0;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
	mr_cc_on_ack(&cc, &a, 1000);
	MR_CHECK_EQ(cc.rate_mbps, 11250);
	/* A share below one packet: one packet. */
	c.slots_start = 1;
	a.rate_hint_mbps = 1000;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
	mr_cc_on_ack(&cc, &a, 1000);
	MR_CHECK_EQ(cc.hint_cap, 4096);
	MR_CHECK_EQ(mr_cc_window_pkts(&cc), 1);
}

/* MR-CC-17 (f): a rate that falls re-spaces the gap after the last
 * packet at the new rate too (MR-CC-4 does it for a rise only); (g) the
 * gap includes the link's bytes around the packet. */
static void test_respace_fall(void)
{
	struct mr_cc cc;
	struct mr_cc_config c = cfg100;
	struct mr_cc_ack a = {
		.acked_bytes = 4096,
		.acked_pkts = 1,
		.rate_hint_mbps = 8000,
		.srtt_ns = 10000,
		.min_rtt_ns = 10000,
	};
	int slots;

	for (slots = 0; slots < 2; slots++) {
		c.slots_start = slots;
		MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
		mr_cc_on_sent(&cc, 4096, 0);
		mr_cc_on_ack(&cc, &a, 1000);
		/* 8 Gb/s, or 9 without the slots: 4096 B at 5000 ns ... */
		mr_cc_on_sent(&cc, 4096, 5000);
		MR_CHECK_EQ(cc.next_send,
			    5000 + 4096ull * 8000 / (slots ? 8000 : 9000));
		/* ... then the hint falls to 1 Gb/s: the gap is 1 Gb/s's. */
		a.rate_hint_mbps = 1000;
		mr_cc_on_ack(&cc, &a, 6000);
		MR_CHECK_EQ(cc.next_send,
			    slots ? 5000 + 4096ull * 8000 / 1000
				  : 5000 + 4096ull * 8000 / 9000);
		a.rate_hint_mbps = 8000;
	}
	/* (g): the gap counts the link's bytes around each packet. */
	c.slots_start = 1;
	c.wire_overhead = MR_CC_WIRE_OVERHEAD;
	MR_CHECK_EQ(mr_cc_init(&cc, mr_cc_find("metaroce"), &c, 0), 0);
	mr_cc_on_sent(&cc, 4096, 0);
	mr_cc_on_ack(&cc, &a, 1000);
	mr_cc_on_sent(&cc, 4096, 5000);
	MR_CHECK_EQ(cc.next_send, 5000 + (4096ull + 66) * 8000 / 8000);
}

/* MR-CC-16's first_pkt_starts: the starts of the current and the
 * previous window; a silence of two windows forgets them. */
static void test_starts(void)
{
	struct mr_cc_starts s = { 0 };

	MR_CHECK_EQ(mr_cc_starts_note(&s, 100, 1000), 1);
	MR_CHECK_EQ(mr_cc_starts_note(&s, 900, 1000), 2);
	MR_CHECK_EQ(mr_cc_starts_note(&s, 1500, 1000), 3); /* 2 + 1 */
	MR_CHECK_EQ(mr_cc_starts_note(&s, 2600, 1000), 2); /* 1 + 1 */
	MR_CHECK_EQ(mr_cc_starts_note(&s, 9000, 1000), 1);
}

MR_TEST_MAIN(MR_TEST(test_first_ack_slots), MR_TEST(test_young_newcomer),
	     MR_TEST(test_first_cap_bare), MR_TEST(test_respace_fall),
	     MR_TEST(test_starts))
