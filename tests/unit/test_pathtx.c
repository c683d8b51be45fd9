// SPDX-License-Identifier: BSD-2-Clause
/* mr_pathtx: ppsn assignment, SACK processing, per-path loss detection,
 * RTT and RTO (MR-PATH-*, MR-LOSS-*, MR-TMR-*). */
#include "mr_test.h"

#include "mr_err.h"
#include "mr_pathrx.h"
#include "mr_pathsel.h"
#include "mr_pathtx.h"
#include "mr_ssnwin.h"

struct rec {
	unsigned nacked, nlost;
	uint32_t acked[600], lost[600];
	uint64_t rtt[600];
	int why[600];
	uint16_t path[600];
};

static void on_acked(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		     uint64_t ctx, uint64_t rtt)
{
	struct rec *r = user;

	(void)bytes;
	/* The tests put ssn + 1000 in ctx: check it is echoed. */
	if (ctx != (uint64_t)ssn + 1000)
		return;
	r->path[r->nacked] = path;
	r->rtt[r->nacked] = rtt;
	r->acked[r->nacked++] = ssn;
}

static void on_lost(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		    uint64_t ctx, int why)
{
	struct rec *r = user;

	(void)path;
	(void)bytes;
	(void)ctx;
	r->why[r->nlost] = why;
	r->lost[r->nlost++] = ssn;
}

static int setup(struct mr_pathtx *tx, struct rec *r, uint16_t path,
		 uint32_t init_ppsn)
{
	struct mr_pathtx_config cfg = {
		.path_id = path,
		.init_ppsn = init_ppsn,
		.rto_init_ns = 1000000,
		.rto_min_ns = 1000,
		.rto_max_ns = 5000000,
	};
	struct mr_pathtx_cb cb = { .acked = on_acked,
				   .lost = on_lost,
				   .user = r };

	memset(r, 0, sizeof(*r));
	return mr_pathtx_init(tx, &cfg, &cb);
}

/* A block with cum_ppsn and the listed ppsns marked. */
static void block(struct mr_sack_block *b, uint16_t path, uint32_t cum,
		  const uint32_t *ppsn, unsigned n)
{
	unsigned k;

	memset(b, 0, sizeof(*b));
	b->path_id = path;
	b->cum_ppsn = cum;
	for (k = 0; k < n; k++) {
		uint32_t i = ppsn[k] - cum - 1;

		b->bitmap[i / 8] |= (uint8_t)(1u << (i % 8));
	}
}

static int tsend(struct mr_pathtx *tx, uint32_t ssn, uint64_t now)
{
	uint32_t ppsn;
	int rc = mr_pathtx_send(tx, ssn, 4096, 0, ssn + 1000, now, &ppsn);

	return rc ? rc : (int)(ppsn & 0x7fffffff);
}

static void test_init_and_space(void)
{
	struct mr_pathtx tx;
	struct mr_pathtx_config bad = { .max_inflight = 257 };
	struct mr_pathtx_config bad2 = { .rto_min_ns = 10, .rto_max_ns = 5 };
	struct rec r;
	uint32_t i, ppsn;

	MR_CHECK_EQ(mr_pathtx_init(&tx, NULL, NULL), -MR_EINVAL);
	MR_CHECK_EQ(mr_pathtx_init(&tx, &bad, NULL), -MR_EINVAL);
	MR_CHECK_EQ(mr_pathtx_init(&tx, &bad2, NULL), -MR_EINVAL);
	MR_CHECK_EQ(setup(&tx, &r, 0, 500), 0);
	MR_CHECK_EQ(tx.cfg.reorder_thresh, 3);
	MR_CHECK_EQ(tx.cfg.max_inflight, 256);
	MR_CHECK_EQ(tx.cfg.granularity_ns, 1000);
	MR_CHECK_EQ(mr_pathtx_space(&tx), 256);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), UINT64_MAX);
	for (i = 0; i < 256; i++)
		MR_CHECK_EQ(tsend(&tx, i, 100), (int)(500 + i));
	MR_CHECK_EQ(mr_pathtx_space(&tx), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx, 9, 1, 0, 0, 100, &ppsn), -MR_EAGAIN);
	MR_CHECK_EQ(tx.out_pkts, 256);
	MR_CHECK_EQ(tx.out_bytes, 256 * 4096);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), 100 + 1000000);
}

/* A first RTT sample of 100 us, so the time threshold (9/8 x RTT) stays
 * out of the way of a test about the reorder threshold. */
static void warm(struct mr_pathtx *tx, struct rec *r)
{
	struct mr_sack_block b;

	tsend(tx, 99, 0);
	memset(&b, 0, sizeof(b));
	b.path_id = tx->cfg.path_id;
	b.cum_ppsn = tx->nxt;
	mr_pathtx_on_sack(tx, &b, 100000);
	memset(r, 0, sizeof(*r));
}

/* MR-LOSS-1: a hole is lost exactly when 3 later packets of the path are
 * acked. */
static void test_reorder_threshold(void)
{
	struct mr_pathtx tx;
	struct mr_sack_block b;
	struct rec r;
	uint32_t i;

	/* The warm-up uses ppsn 0xffffffff; data starts at ppsn 0. */
	MR_CHECK_EQ(setup(&tx, &r, 0, 0xffffffffu), 0);
	warm(&tx, &r);
	MR_CHECK_EQ(tx.srtt, 100000);
	for (i = 0; i < 10; i++)
		MR_CHECK_EQ(tsend(&tx, 100 + i, 100000 + i), (int)i);
	{
		static const uint32_t got[] = { 3, 4 };

		block(&b, 0, 2, got, 2); /* 0,1 acked; 2 missing; 3,4 */
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100100), 4);
	MR_CHECK_EQ(r.nacked, 4);
	MR_CHECK_EQ(r.acked[0], 100);
	MR_CHECK_EQ(r.acked[1], 101);
	MR_CHECK_EQ(r.acked[2], 103);
	MR_CHECK_EQ(r.acked[3], 104);
	MR_CHECK_EQ(r.nlost, 0); /* only 2 later acked */
	MR_CHECK_EQ(tx.una, 2);
	{
		static const uint32_t got[] = { 3, 4, 5 };

		block(&b, 0, 2, got, 3);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100200), 1);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.lost[0], 102);
	MR_CHECK_EQ(r.why[0], MR_PATHTX_LOSS_REORDER);
	MR_CHECK_EQ(tx.lost_reorder, 1);
	/* 6..9 outstanding, nothing after them acked: not lost. */
	MR_CHECK_EQ(tx.una, 6);
	MR_CHECK_EQ(tx.out_pkts, 4);
	MR_CHECK_EQ(mr_pathtx_space(&tx), 252);
	/* The same block again changes nothing. */
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100300), 0);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.nacked, 5);
	/* Two holes, 6 and 8: 8 has one later ack (9), 6 two (7, 9). */
	{
		static const uint32_t got[] = { 7, 9 };

		block(&b, 0, 2, got, 2);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100400), 2);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(tsend(&tx, 110, 100500), 10);
	MR_CHECK_EQ(tsend(&tx, 111, 100500), 11);
	{
		static const uint32_t got[] = { 7, 9, 10 };

		block(&b, 0, 2, got, 3);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100600), 1);
	MR_CHECK_EQ(r.nlost, 2);
	MR_CHECK_EQ(r.lost[1], 106); /* 7, 9, 10 later: 3; 8 has 2 */
	{
		static const uint32_t got[] = { 7, 9, 10, 11 };

		block(&b, 0, 2, got, 4);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100700), 1);
	MR_CHECK_EQ(r.nlost, 3);
	MR_CHECK_EQ(r.lost[2], 108); /* 9, 10, 11 later: 3 */
	MR_CHECK_EQ(tx.lost_time, 0);
	MR_CHECK_EQ(tx.out_pkts, 0);
	MR_CHECK_EQ(tx.una, 12);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), UINT64_MAX);
}

/* MR-LOSS-4. Spraying over two paths: path 1's packets all arrive before any of
 * path 0's; path 0 must not declare anything lost (MR-LOSS-4). */
static void test_no_false_loss_across_paths(void)
{
	struct mr_pathtx tx[2];
	struct mr_pathrx rx[2];
	struct mr_sack_block b;
	struct rec r[2];
	uint32_t ssn, i, ppsn[64];

	MR_CHECK_EQ(setup(&tx[0], &r[0], 0, 77), 0);
	MR_CHECK_EQ(setup(&tx[1], &r[1], 1, 77), 0);
	mr_pathrx_init(&rx[0], 0, 77);
	mr_pathrx_init(&rx[1], 1, 77);
	for (ssn = 0; ssn < 64; ssn++) {
		int p = tsend(&tx[ssn % 2], ssn, 10000 + ssn * 100);

		MR_CHECK(p >= 0);
		ppsn[ssn] = (uint32_t)p;
	}
	/* Path 1 is the fast one: all its packets arrive, ACKed one by
	 * one, while none of path 0's has. */
	for (ssn = 1; ssn < 64; ssn += 2) {
		MR_CHECK_EQ(mr_pathrx_record(&rx[1], ppsn[ssn], 0, 20000),
			    MR_PATHRX_NEW);
		mr_pathrx_sack(&rx[1], &b);
		MR_CHECK_EQ(mr_pathtx_on_sack(&tx[1], &b, 20000 + ssn), 1);
		mr_pathrx_sack(&rx[0], &b);
		MR_CHECK_EQ(mr_pathtx_on_sack(&tx[0], &b, 20000 + ssn), 0);
	}
	MR_CHECK_EQ(r[1].nacked, 32);
	MR_CHECK_EQ(r[0].nacked + r[0].nlost + r[1].nlost, 0);
	/* Path 0's packets arrive in reverse order (within the path: an
	 * extreme case); the SACK is only sent after all of them. */
	for (i = 0; i < 32; i++)
		MR_CHECK_EQ(
			mr_pathrx_record(&rx[0], ppsn[62 - 2 * i], 0, 30000),
			MR_PATHRX_NEW);
	mr_pathrx_sack(&rx[0], &b);
	MR_CHECK_EQ(b.cum_ppsn, 77 + 32);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx[0], &b, 30000), 32);
	MR_CHECK_EQ(r[0].nlost + r[1].nlost, 0);
	for (i = 0; i < 32; i++) {
		MR_CHECK_EQ(r[0].acked[i], 2 * i);
		MR_CHECK_EQ(r[1].acked[i], 2 * i + 1);
		MR_CHECK_EQ(r[1].path[i], 1);
	}
}

/* MR-TMR-1, MR-TMR-2: RFC 6298 estimates with literal values; Karn (no sample
 * from retransmissions). */
static void test_rtt(void)
{
	struct mr_pathtx tx;
	struct mr_sack_block b;
	struct rec r;
	uint32_t ppsn;

	MR_CHECK_EQ(setup(&tx, &r, 0, 0), 0);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 1000000);
	MR_CHECK_EQ(tsend(&tx, 1, 0), 0);
	block(&b, 0, 1, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 10000), 1);
	MR_CHECK_EQ(r.rtt[0], 10000);
	MR_CHECK_EQ(tx.srtt, 10000);
	MR_CHECK_EQ(tx.rttvar, 5000);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 30000); /* 10000 + 4 x 5000 */
	MR_CHECK_EQ(tsend(&tx, 2, 20000), 1);
	block(&b, 0, 2, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 40000), 1);
	/* R 20000: rttvar = (3 x 5000 + 10000) / 4, srtt = (7 x 10000 +
	 * 20000) / 8 */
	MR_CHECK_EQ(tx.rttvar, 6250);
	MR_CHECK_EQ(tx.srtt, 11250);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 36250);
	MR_CHECK_EQ(tx.min_rtt, 10000);
	MR_CHECK_EQ(tx.latest_rtt, 20000);
	/* A retransmission acked after 1 ms gives no sample. */
	MR_CHECK_EQ(mr_pathtx_send(&tx, 3, 4096, 1, 1003, 50000, &ppsn), 0);
	MR_CHECK_EQ(ppsn, 2);
	block(&b, 0, 3, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 1050000), 1);
	MR_CHECK_EQ(r.rtt[2], 0);
	MR_CHECK_EQ(tx.srtt, 11250);
	MR_CHECK_EQ(tx.retx_pkts, 1);
	/* Several acked at once: the newest first transmission samples. */
	MR_CHECK_EQ(tsend(&tx, 4, 2000000), 3);
	MR_CHECK_EQ(tsend(&tx, 5, 2004000), 4);
	block(&b, 0, 5, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 2012000), 2);
	MR_CHECK_EQ(r.rtt[3], 12000);
	MR_CHECK_EQ(r.rtt[4], 8000);
	/* R 8000: err 3250; rttvar = (3 x 6250 + 3250) / 4 = 5500,
	 * srtt = (7 x 11250 + 8000) / 8 = 10843 */
	MR_CHECK_EQ(tx.rttvar, 5500);
	MR_CHECK_EQ(tx.srtt, 10843);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 10843 + 22000);
	/* The floor: rto_min. */
	tx.cfg.rto_min_ns = 100000;
	MR_CHECK_EQ(tsend(&tx, 6, 3000000), 5);
	block(&b, 0, 6, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 3010000), 1);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 100000);
}

/* MR-TMR-3..5, MR-LOSS-3: the RTO doubles per expiry without progress, is
 * capped by rto_max and resets on progress; it declares every outstanding
 * packet lost. */
static void test_rto_backoff(void)
{
	struct mr_pathtx tx;
	struct mr_sack_block b;
	struct rec r;

	MR_CHECK_EQ(setup(&tx, &r, 4, 0), 0);
	MR_CHECK_EQ(tsend(&tx, 10, 0), 0);
	MR_CHECK_EQ(tsend(&tx, 11, 500), 1);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), 1000000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 999999), 0);
	MR_CHECK_EQ(r.nlost, 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 1000000), MR_PATHTX_EV_RTO);
	MR_CHECK_EQ(r.nlost, 2);
	MR_CHECK_EQ(r.lost[0], 10);
	MR_CHECK_EQ(r.lost[1], 11);
	MR_CHECK_EQ(r.why[1], MR_PATHTX_LOSS_RTO);
	MR_CHECK_EQ(tx.backoff, 1);
	MR_CHECK_EQ(tx.out_pkts, 0);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), UINT64_MAX);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 2000000);
	/* Retransmission on the same path: new ppsn, timer 2 ms. */
	MR_CHECK_EQ(tsend(&tx, 10, 1000100), 2);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), 3000100);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 3000099), 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 3000100), MR_PATHTX_EV_RTO);
	MR_CHECK_EQ(tx.backoff, 2);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 4000000);
	MR_CHECK_EQ(tsend(&tx, 10, 3000200), 3);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 7000200), MR_PATHTX_EV_RTO);
	MR_CHECK_EQ(tx.backoff, 3);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 5000000); /* 8 ms capped at 5 */
	MR_CHECK_EQ(tx.rto_events, 3);
	MR_CHECK_EQ(tx.lost_rto, 4);
	/* An ack of ppsn 1 (ssn 11's first transmission, sent at 500,
	 * declared lost by the first RTO, out of the span but still in the
	 * ring) is late, not new (MR-TMR-8): no callback, but the RTO was
	 * spurious: backoff undone, and its 7 ms RTT is sampled (clamped to
	 * rto_max, 5 ms here) and kept as the RTO's floor (5/4 x). */
	MR_CHECK_EQ(tsend(&tx, 10, 7000300), 4);
	{
		static const uint32_t got[] = { 1 };

		block(&b, 4, 0, got, 1);
	}
	MR_CHECK_EQ(tx.srtt, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 7000400), 0);
	MR_CHECK_EQ(tx.backoff, 0);
	MR_CHECK_EQ(r.nacked, 0);
	MR_CHECK_EQ(tx.late_acked, 1);
	MR_CHECK_EQ(tx.srtt, 5000000); /* the sample, clamped to rto_max */
	MR_CHECK_EQ(tx.rto_floor, (7000400 - 500) * 5 / 4);
	MR_CHECK_EQ(mr_pathtx_rto(&tx), 5000000);
	/* ppsn 2 late too (its own sample), and ppsn 1 again: nothing
	 * more for ppsn 1. */
	{
		static const uint32_t got[] = { 1, 2 };

		block(&b, 4, 0, got, 2);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 7000500), 0);
	MR_CHECK_EQ(tx.late_acked, 2);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 7000600), 0);
	MR_CHECK_EQ(tx.late_acked, 2);
	/* Progress: ppsn 4 acked -> backoff 0, timer restarted. */
	{
		static const uint32_t got[] = { 1, 4 };

		block(&b, 4, 0, got, 2);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 7010000), 1);
	MR_CHECK_EQ(tx.backoff, 0);
	MR_CHECK_EQ(r.acked[0], 10);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), UINT64_MAX);
	/* Timer restart on progress with packets still out. */
	MR_CHECK_EQ(tsend(&tx, 20, 8000000), 5);
	MR_CHECK_EQ(tsend(&tx, 21, 8000000), 6);
	block(&b, 4, 6, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 8005000), 1);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), 8005000 + mr_pathtx_rto(&tx));
}

/* MR-LOSS-2, time threshold: one later packet acked, the hole older than 9/8
 * RTT. */
static void test_time_threshold(void)
{
	struct mr_pathtx tx;
	struct mr_sack_block b;
	struct rec r;

	MR_CHECK_EQ(setup(&tx, &r, 0, 0), 0);
	MR_CHECK_EQ(tsend(&tx, 0, 0), 0);
	block(&b, 0, 1, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 8000), 1); /* srtt 8000 */
	MR_CHECK_EQ(tsend(&tx, 1, 10000), 1);
	MR_CHECK_EQ(tsend(&tx, 2, 10000), 2);
	{
		static const uint32_t got[] = { 2 };

		block(&b, 0, 1, got, 1);
	}
	/* latest_rtt 8000, srtt 8000: delay 9000; 1 sent at 10000. */
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 18000), 1);
	MR_CHECK_EQ(r.nlost, 0);
	MR_CHECK_EQ(tx.loss_time, 19000);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx), 19000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 18999), 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 19000), MR_PATHTX_EV_LOSS_TIMER);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.lost[0], 1);
	MR_CHECK_EQ(r.why[0], MR_PATHTX_LOSS_TIME);
	MR_CHECK_EQ(tx.loss_time, UINT64_MAX);
	MR_CHECK_EQ(tx.una, 3);
}

static void test_wrap(void)
{
	struct mr_pathtx tx;
	struct mr_pathrx rx;
	struct mr_sack_block b;
	struct rec r;
	uint32_t i, ppsn[8];

	MR_CHECK_EQ(setup(&tx, &r, 0, 0xfffffffdu), 0);
	mr_pathrx_init(&rx, 0, 0xfffffffdu);
	for (i = 0; i < 8; i++)
		MR_CHECK_EQ(mr_pathtx_send(&tx, 50 + i, 100, 0, 1050 + i, 10,
					   &ppsn[i]),
			    0);
	MR_CHECK_EQ(ppsn[0], 0xfffffffdu);
	MR_CHECK_EQ(ppsn[3], 0x00000000u);
	MR_CHECK_EQ(ppsn[7], 0x00000004u);
	/* ppsn[1] (0xfffffffe) lost; the rest arrive. */
	for (i = 0; i < 8; i++)
		if (i != 1)
			mr_pathrx_record(&rx, ppsn[i], 0, 20);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 0xfffffffeu);
	MR_CHECK_EQ(b.bitmap[0], 0x3f);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 30), 7);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.lost[0], 51);
	MR_CHECK_EQ(tx.una, 5);
	MR_CHECK_EQ(tx.nxt, 5);
	MR_CHECK_EQ(tx.out_pkts, 0);
	MR_CHECK_EQ(r.acked[6], 57);
}

/* MR-LOSS-5, MR-SACK-8: blocks naming unsent ppsns or another path are rejected
 * whole. */
static void test_bad_sack(void)
{
	struct mr_pathtx tx;
	struct mr_sack_block b;
	struct rec r;

	MR_CHECK_EQ(setup(&tx, &r, 2, 100), 0);
	MR_CHECK_EQ(tsend(&tx, 0, 0), 100);
	MR_CHECK_EQ(tsend(&tx, 1, 0), 101);
	block(&b, 3, 102, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 1), -MR_EINVAL);
	block(&b, 2, 103, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 1), -MR_EPROTO);
	{
		static const uint32_t got[] = { 101, 102 };

		block(&b, 2, 100, got, 2);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 1), -MR_EPROTO);
	MR_CHECK_EQ(tx.bad_sacks, 2);
	MR_CHECK_EQ(r.nacked, 0);
	MR_CHECK_EQ(tx.out_pkts, 2);
	{
		static const uint32_t got[] = { 101 };

		block(&b, 2, 100, got, 1);
	}
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 1), 1);
	/* A stale block (older cum) after a newer one: no effect. */
	block(&b, 2, 102, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 2), 1);
	block(&b, 2, 100, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 3), 0);
	MR_CHECK_EQ(r.nacked, 2);
	MR_CHECK_EQ(r.nlost, 0);
}

static void test_lose_all(void)
{
	struct mr_pathtx tx;
	struct rec r;
	uint32_t i;

	MR_CHECK_EQ(setup(&tx, &r, 0, 0), 0);
	for (i = 0; i < 5; i++)
		MR_CHECK_EQ(tsend(&tx, i, 0), (int)i);
	MR_CHECK_EQ(mr_pathtx_lose_all(&tx, 5), 5);
	MR_CHECK_EQ(r.nlost, 5);
	MR_CHECK_EQ(r.why[4], MR_PATHTX_LOSS_FORCED);
	MR_CHECK_EQ(tx.backoff, 0);
	MR_CHECK_EQ(mr_pathtx_space(&tx), 256);
	MR_CHECK_EQ(mr_pathtx_lose_all(&tx, 6), 0);
}

/* MR-PATH-4, MR-SACK-4: full ring: 256 in flight, the oldest lost, the 255
 * others acked; the freed slot is reusable and the receiver's SACK covers
 * everything. */
static void test_full_ring(void)
{
	struct mr_pathtx tx;
	struct mr_pathrx rx;
	struct mr_sack_block b;
	struct rec r;
	uint32_t i;

	MR_CHECK_EQ(setup(&tx, &r, 0, 0xffffff80u), 0);
	mr_pathrx_init(&rx, 0, 0xffffff80u);
	for (i = 0; i < 256; i++)
		MR_CHECK(tsend(&tx, i, 0) >= 0);
	for (i = 1; i < 256; i++)
		mr_pathrx_record(&rx, 0xffffff80u + i, 0, 1);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 100), 255);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.lost[0], 0);
	MR_CHECK_EQ(mr_pathtx_space(&tx), 256);
	/* ppsn +256 is the receiver's last bit (cum still the hole +0). */
	MR_CHECK(tsend(&tx, 256, 200) >= 0);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0xffffff80u + 256, 0, 2),
		    MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 0xffffff80u);
	MR_CHECK_EQ(b.bitmap[31], 0xff);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 300), 1);
	/* +257 is beyond it: the receiver abandons the hole +0 and slides;
	 * the SACK covers +257 by cum_ppsn. */
	MR_CHECK(tsend(&tx, 257, 400) >= 0);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0xffffff80u + 257, 0, 3),
		    MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 0xffffff80u + 258);
	MR_CHECK_EQ(rx.skipped, 1);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 500), 1);
	MR_CHECK_EQ(r.acked[255], 256);
	MR_CHECK_EQ(r.acked[256], 257);
	MR_CHECK_EQ(tx.out_pkts, 0);
	MR_CHECK_EQ(r.nlost, 1);
}

static uint64_t sm_next(void *user)
{
	uint64_t *s = user, z;

	*s += 0x9e3779b97f4a7c15ull;
	z = *s;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * Seeded random run of 4 sprayed paths with very different delays (so
 * cross-path reordering is constant), 5% data loss and 10% ACK loss on
 * FIFO routes, through the real receiver (mr_pathrx, mr_ssnwin): every
 * ssn is delivered exactly once, every transmission is settled exactly
 * once, an acked transmission really arrived, and no packet is declared
 * lost by the SACK rules unless it really was (MR-LOSS-1, -2, -4, -6).
 */
#define RS_N 3000
#define RS_TX 16384
#define RS_P 4

struct rs_tx {
	uint32_t ssn, ppsn;
	uint16_t path;
	uint8_t dropped, settled;
	uint64_t arrive;
};

static struct {
	struct rs_tx tx[RS_TX];
	uint32_t ntx;
	uint8_t acked_ssn[RS_N], inq[RS_N], delivered[RS_N];
	uint32_t retxq[RS_N], qh, qt;
	unsigned false_loss, acked_dropped, rto_losses, twice;
	/* per-path FIFO of transmission indices */
	uint32_t fifo[RS_P][RS_TX], fh[RS_P], ft[RS_P];
	/* ACKs in flight */
	struct {
		uint64_t at;
		struct mr_sack_block b[RS_P];
	} ack[RS_TX];
	uint32_t ah, at;
} rs;

static void rs_acked(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		     uint64_t ctx, uint64_t rtt)
{
	(void)user;
	(void)path;
	(void)bytes;
	(void)rtt;
	if (rs.tx[ctx].settled++)
		rs.twice++;
	if (rs.tx[ctx].dropped)
		rs.acked_dropped++;
	rs.acked_ssn[ssn] = 1;
}

static void rs_lost(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		    uint64_t ctx, int why)
{
	(void)user;
	(void)path;
	(void)bytes;
	if (rs.tx[ctx].settled++)
		rs.twice++;
	if (why == MR_PATHTX_LOSS_RTO)
		rs.rto_losses++;
	else if (!rs.tx[ctx].dropped)
		rs.false_loss++;
	if (!rs.acked_ssn[ssn] && !rs.inq[ssn]) {
		rs.inq[ssn] = 1;
		rs.retxq[rs.qt++ % RS_N] = ssn;
	}
}

static uint64_t rs_rand(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

static void *rs_calloc(void *user, size_t n, size_t size)
{
	(void)user;
	return calloc(n, size);
}

static void rs_free(void *user, void *p)
{
	(void)user;
	free(p);
}

static void test_random_sprayed_paths(void)
{
	static const uint64_t delay[RS_P] = { 5000, 9000, 13000, 30000 };
	struct mr_pathtx tx[RS_P];
	struct mr_pathrx rx[RS_P];
	struct mr_pathtx_cb cb = { .acked = rs_acked, .lost = rs_lost };
	struct mr_pathtx_config cfg = { .rto_min_ns = 50000 };
	struct mr_ssnwin win;
	struct mr_mem mem = { .calloc = rs_calloc, .free = rs_free };
	struct mr_pathsel ps;
	uint64_t x = 0x2545f4914f6cdd1dull, seed = 3, t;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint32_t next_ssn = 0, una_ssn = 0, pend = 0, k;
	unsigned news = 0;
	uint16_t p;

	memset(&rs, 0, sizeof(rs));
	for (p = 0; p < RS_P; p++) {
		cfg.path_id = p;
		MR_CHECK_EQ(mr_pathtx_init(&tx[p], &cfg, &cb), 0);
		mr_pathrx_init(&rx[p], p, 0);
	}
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), RS_P, 1, &rnd),
		    0);
	MR_CHECK_EQ(mr_ssnwin_init(&win, &mem, 0, 2048), 0);
	for (t = 0; t < 100000000ull && una_ssn < RS_N; t += 100) {
		for (p = 0; p < RS_P; p++)
			if (mr_pathtx_next_deadline(&tx[p]) <= t)
				if (mr_pathtx_on_timeout(&tx[p], t) &
				    MR_PATHTX_EV_RTO)
					mr_pathsel_on_rto(&ps, p, t);
		/* Data arrivals: FIFO per path. */
		for (p = 0; p < RS_P; p++) {
			while (rs.fh[p] != rs.ft[p]) {
				struct rs_tx *d =
					&rs.tx[rs.fifo[p][rs.fh[p] % RS_TX]];

				if (d->arrive > t)
					break;
				rs.fh[p]++;
				if (d->dropped)
					continue;
				mr_pathrx_record(&rx[p], d->ppsn, 0, t);
				if (mr_ssnwin_record(&win, d->ssn) ==
				    MR_SSNWIN_NEW) {
					news++;
					rs.delivered[d->ssn]++;
				}
				pend++;
			}
		}
		/* The receiver ACKs every 2 packets; 10% of ACKs are lost. */
		if (pend >= 2 || (pend && t % 3000 == 0)) {
			pend = 0;
			if (rs_rand(&x) % 10) {
				k = rs.at++ % RS_TX;
				rs.ack[k].at = t + 2000;
				for (p = 0; p < RS_P; p++)
					mr_pathrx_sack(&rx[p], &rs.ack[k].b[p]);
			}
		}
		while (rs.ah != rs.at && rs.ack[rs.ah % RS_TX].at <= t) {
			k = rs.ah++ % RS_TX;
			for (p = 0; p < RS_P; p++)
				MR_CHECK(mr_pathtx_on_sack(&tx[p],
							   &rs.ack[k].b[p],
							   t) >= 0);
		}
		while (una_ssn < RS_N && rs.acked_ssn[una_ssn])
			una_ssn++;
		/* One packet per 100 ns: a retransmission first, else new
		 * data within the ssn window. */
		{
			uint32_t ssn, retx = 0;
			int path = mr_pathsel_pick(&ps, tx, t);
			struct rs_tx *d;

			if (path < 0)
				continue;
			while (rs.qh != rs.qt &&
			       rs.acked_ssn[rs.retxq[rs.qh % RS_N]])
				rs.inq[rs.retxq[rs.qh++ % RS_N]] = 0;
			if (rs.qh != rs.qt) {
				ssn = rs.retxq[rs.qh++ % RS_N];
				rs.inq[ssn] = 0;
				retx = 1;
			} else if (next_ssn < RS_N &&
				   next_ssn - una_ssn < 2048) {
				ssn = next_ssn++;
			} else {
				continue;
			}
			MR_CHECK(rs.ntx < RS_TX);
			d = &rs.tx[rs.ntx];
			d->ssn = ssn;
			d->path = (uint16_t)path;
			MR_CHECK_EQ(mr_pathtx_send(&tx[path], ssn, 4096, retx,
						   rs.ntx, t, &d->ppsn),
				    0);
			d->dropped = rs_rand(&x) % 100 < 5;
			d->arrive = t + delay[path];
			rs.fifo[path][rs.ft[path]++ % RS_TX] = rs.ntx++;
		}
	}
	MR_CHECK_EQ(una_ssn, RS_N);
	MR_CHECK_EQ(news, RS_N);
	MR_CHECK_EQ(mr_ssnwin_cum(&win), RS_N);
	for (k = 0; k < RS_N; k++)
		MR_CHECK_EQ(rs.delivered[k], 1);
	MR_CHECK_EQ(rs.false_loss, 0);
	MR_CHECK_EQ(rs.acked_dropped, 0);
	MR_CHECK_EQ(rs.twice, 0);
	/* Some losses were really found by the SACK rules, not by RTOs. */
	MR_CHECK(tx[0].lost_reorder + tx[1].lost_reorder + tx[2].lost_reorder +
			 tx[3].lost_reorder >
		 50);
	printf("  %u transmissions, rto losses %u, done at %llu ns\n", rs.ntx,
	       rs.rto_losses, (unsigned long long)t);
	mr_ssnwin_fini(&win);
}

/*
 * MR-LOSS-5, MR-LOSS-6, MR-SACK-8: a hostile or confused peer sending
 * random blocks (random cum_ppsn near the window, random bitmaps, stale
 * and future ones) cannot break the sender: every transmission is settled
 * at most once, the counters match the ring, nothing unsent is acked.
 */
static struct {
	uint8_t settled[4096];
	unsigned twice;
} hs;

static void hs_acked(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		     uint64_t ctx, uint64_t rtt)
{
	(void)user;
	(void)path;
	(void)ssn;
	(void)bytes;
	(void)rtt;
	if (hs.settled[ctx]++)
		hs.twice++;
}

static void hs_lost(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		    uint64_t ctx, int why)
{
	(void)user;
	(void)path;
	(void)ssn;
	(void)bytes;
	(void)why;
	if (hs.settled[ctx]++)
		hs.twice++;
}

static void test_hostile_sacks(void)
{
	struct mr_pathtx tx;
	struct mr_pathtx_cb cb = { .acked = hs_acked, .lost = hs_lost };
	struct mr_pathtx_config cfg = { .init_ppsn = 0xffffff00u };
	struct mr_sack_block b;
	uint64_t x = 0x853c49e6748fea9bull, t = 0;
	uint32_t ntx = 0, p, out, acked, i, ppsn;
	unsigned rejected = 0, accepted = 0;

	memset(&hs, 0, sizeof(hs));
	MR_CHECK_EQ(mr_pathtx_init(&tx, &cfg, &cb), 0);
	for (i = 0; i < 20000; i++) {
		uint64_t r = rs_rand(&x);
		int rc;

		t += 1000;
		if (r % 3 == 0 && ntx < 4096) {
			while (mr_pathtx_space(&tx) && ntx < 4096 && r % 7) {
				MR_CHECK_EQ(mr_pathtx_send(&tx, ntx, 100, 0,
							   ntx, t, &ppsn),
					    0);
				ntx++;
				r = rs_rand(&x);
			}
			continue;
		}
		memset(&b, 0, sizeof(b));
		b.cum_ppsn = tx.una + (uint32_t)(r % 300) - 150;
		if (r >> 20 & 1) {
			unsigned k;

			for (k = 0; k < MR_SACK_BYTES; k++)
				b.bitmap[k] = (uint8_t)rs_rand(&x);
		} else {
			b.bitmap[(r >> 24) % MR_SACK_BYTES] =
				(uint8_t)(1u << (r >> 32) % 8);
		}
		rc = mr_pathtx_on_sack(&tx, &b, t);
		if (rc < 0) {
			MR_CHECK_EQ(rc, -MR_EPROTO);
			rejected++;
		} else {
			accepted++;
		}
		if (r % 11 == 0)
			mr_pathtx_on_timeout(&tx, t + 100000000ull);
		/* The counters agree with the ring. */
		out = 0;
		acked = 0;
		for (p = tx.una; p != tx.nxt; p++) {
			out += tx.ring[p & 255].state == MR_PATHTX_OUT;
			acked += tx.ring[p & 255].state == MR_PATHTX_ACKED;
			MR_CHECK_EQ(tx.ring[p & 255].ppsn, p);
		}
		MR_CHECK_EQ(out, tx.out_pkts);
		MR_CHECK_EQ(acked, tx.acked_in_span);
		MR_CHECK_EQ(tx.out_bytes, (uint64_t)out * 100);
		MR_CHECK(tx.una == tx.nxt ||
			 tx.ring[tx.una & 255].state == MR_PATHTX_OUT);
		MR_CHECK(tx.nxt - tx.una <= 256);
	}
	MR_CHECK_EQ(hs.twice, 0);
	MR_CHECK(rejected > 1000);
	MR_CHECK(accepted > 1000);
	MR_CHECK_EQ(tx.bad_sacks, rejected);
	/* Settle the rest: every transmission exactly once overall. */
	mr_pathtx_lose_all(&tx, t);
	for (i = 0; i < ntx; i++)
		MR_CHECK_EQ(hs.settled[i], 1);
	MR_CHECK(ntx > 1000);
}

/* The SACK example of docs/spec/reliability.md section 8, end to end. */
static void test_spec_example(void)
{
	struct mr_pathtx tx;
	struct mr_pathrx rx;
	struct mr_sack_block b;
	struct rec r;
	uint8_t want[MR_SACK_BYTES];
	uint32_t i;

	MR_CHECK_EQ(setup(&tx, &r, 0, 999), 0);
	warm(&tx, &r); /* ppsn 999, srtt 100 us */
	mr_pathrx_init(&rx, 0, 1000);
	for (i = 1000; i <= 1010; i++)
		MR_CHECK_EQ(tsend(&tx, i, 100000), (int)i);
	mr_pathrx_record(&rx, 1000, 0, 1);
	mr_pathrx_record(&rx, 1003, 0, 2);
	mr_pathrx_record(&rx, 1005, 0, 3);
	mr_pathrx_record(&rx, 1010, 0, 4);
	mr_pathrx_sack(&rx, &b);
	memset(want, 0, sizeof(want));
	want[0] = 0x0a;
	want[1] = 0x01;
	MR_CHECK_EQ(b.cum_ppsn, 1001);
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 101000), 4);
	MR_CHECK_EQ(r.nlost, 2);
	MR_CHECK_EQ(r.lost[0], 1001);
	MR_CHECK_EQ(r.lost[1], 1002);
	MR_CHECK_EQ(tx.out_pkts, 5); /* 1004, 1006..1009 */
	mr_pathrx_record(&rx, 1001, 0, 5);
	mr_pathrx_sack(&rx, &b);
	want[0] = 0x85;
	want[1] = 0;
	MR_CHECK_EQ(b.cum_ppsn, 1002);
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 102000), 0);
	MR_CHECK_EQ(r.nacked, 4);
	MR_CHECK_EQ(r.nlost, 2);
}

/* MR-MP-8 with planes: a path overtaken only by another plane's packets
 * is suspect overtake_ns after the later of its reference and its plane's
 * last progress (the plane's queue is draining, its packets behind it:
 * bench/wire/plane_fail with runs of 16); overtaken on its own plane (a
 * later packet of the shared queue came back) it is suspect overtake_ns
 * after its reference, whatever the plane does. */
static void test_suspect_plane(void)
{
	struct mr_pathtx_config c = { .path_id = 1 };
	struct mr_pathtx tx;
	uint32_t p;

	MR_CHECK_EQ(mr_pathtx_init(&tx, &c, NULL), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx, 1, 100, 0, 0, 1000, &p), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx, 2, 100, 0, 0, 2000, &p), 0);
	tx.overtake_ns = 15000;
	/* Another plane's packet sent at 1.5 us came back; the path's own
	 * plane progressed at 9 us (older packets of its queue): 24 us. */
	tx.conn_sent_at = 1500;
	tx.plane_progress_at = 9000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 24000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 16000), 0);
	MR_CHECK_EQ(tx.suspect, 0);
	/* Its plane's last progress before its reference: 1 us + 15 us. */
	tx.plane_progress_at = 500;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 16000);
	/* Overtaken on its own plane: 16 us although the plane progresses. */
	tx.plane_progress_at = 9000;
	tx.plane_sent_at = 1200;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 16000);
	/* A packet of its plane sent before its reference proves nothing:
	 * back to the cross-plane rule. */
	tx.plane_sent_at = 800;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 24000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 24000), MR_PATHTX_EV_SUSPECT);
	MR_CHECK_EQ(tx.lost_suspect, 2);
}

/* MR-MP-8: the overtaken rules count from the oldest outstanding packet's
 * send time, and the path must have been quiet for half the allowance.
 * The simulator's black hole: A (sent at 1 us) is acked at 15 us, B (sent
 * at 6 us) died in the hole and a packet sent at 16 us came back on
 * another path: B is suspect at 6 + 20 = 26 us. Counted from A's ACK it
 * was 35 us, over 3 base RTTs after B's loss. A path whose ACKs still
 * come (the last at 20 us) is quiet only from 30 us. */
static void test_suspect_ref(void)
{
	struct mr_sack_block b;
	struct mr_pathtx tx;
	struct rec r;

	MR_CHECK_EQ(setup(&tx, &r, 2, 0), 0);
	MR_CHECK_EQ(tsend(&tx, 10, 1000), 0);
	MR_CHECK_EQ(tsend(&tx, 11, 6000), 1);
	block(&b, 2, 1, NULL, 0);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx, &b, 15000), 1);
	MR_CHECK_EQ(tx.last_ack_at, 15000);
	tx.overtake_ns = 20000;
	/* Not overtaken yet: a packet sent before its last ACK came back. */
	tx.conn_sent_at = 14000;
	MR_CHECK(mr_pathtx_suspect_at(&tx) == UINT64_MAX);
	/* Another plane's packet sent at 16 us came back. */
	tx.conn_sent_at = 16000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 26000);
	/* The same on its own plane. */
	tx.plane_sent_at = 16000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 26000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 25999), 0);
	/* Its ACKs still flow: quiet for 10 us from the last, at 20 us. */
	tx.last_ack_at = 20000;
	tx.plane_sent_at = tx.conn_sent_at = 21000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx), 30000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx, 30000), MR_PATHTX_EV_SUSPECT);
	MR_CHECK_EQ(tx.lost_suspect, 1);
	MR_CHECK_EQ(r.nlost, 1);
	MR_CHECK_EQ(r.lost[0], 11);
}

MR_TEST_MAIN(MR_TEST(test_init_and_space), MR_TEST(test_reorder_threshold),
	     MR_TEST(test_no_false_loss_across_paths), MR_TEST(test_rtt),
	     MR_TEST(test_rto_backoff), MR_TEST(test_time_threshold),
	     MR_TEST(test_wrap), MR_TEST(test_bad_sack), MR_TEST(test_lose_all),
	     MR_TEST(test_full_ring), MR_TEST(test_random_sprayed_paths),
	     MR_TEST(test_hostile_sacks), MR_TEST(test_spec_example),
	     MR_TEST(test_suspect_plane), MR_TEST(test_suspect_ref))
