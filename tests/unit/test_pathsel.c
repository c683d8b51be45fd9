// SPDX-License-Identifier: BSD-2-Clause
/* mr_pathsel: spray / single, entropy, planes, repath (MR-MP-*). */
#include "mr_test.h"

#include "mr_err.h"
#include "mr_pathmgr.h"
#include "mr_pathsel.h"

/* splitmix64, seeded: the injected randomness. */
static uint64_t sm_next(void *user)
{
	uint64_t *s = user, z;

	*s += 0x9e3779b97f4a7c15ull;
	z = *s;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static uint64_t zero_next(void *user)
{
	(void)user;
	return 0;
}

static void paths(struct mr_pathtx *tx, unsigned n, uint32_t max_inflight)
{
	struct mr_pathtx_config cfg = { .max_inflight = max_inflight };
	unsigned i;

	for (i = 0; i < n; i++) {
		cfg.path_id = (uint16_t)i;
		mr_pathtx_init(&tx[i], &cfg, NULL);
	}
}

/* n paths of max_inflight packets each (paths()) and a selector of
 * policy name over them on planes planes. */
static void selector(struct mr_pathsel *ps, const char *name,
		     struct mr_pathtx *tx, unsigned n, uint32_t max_inflight,
		     unsigned planes, struct mr_rand *rnd)
{
	paths(tx, n, max_inflight);
	MR_CHECK_EQ(mr_pathsel_init(ps, mr_pathsel_find(name), n, planes, rnd),
		    0);
	/* The sequences below are written from path 0: spray's drawn start
	 * (MR-MP-11, test_spray_start) is put back to path 0 by clearing
	 * its state, which is where its round robin stands when zero. */
	memset(ps->state, 0, sizeof(ps->state));
}

static void check_distinct(const struct mr_pathsel *ps, int *ok)
{
	unsigned i, j;

	*ok = 1;
	for (i = 0; i < ps->num_paths; i++) {
		if (ps->path[i].entropy < MR_ENTROPY_MIN)
			*ok = 0;
		for (j = 0; j < i; j++)
			if (ps->path[i].plane == ps->path[j].plane &&
			    ps->path[i].entropy == ps->path[j].entropy)
				*ok = 0;
	}
}

/* MR-MP-1, MR-MP-2: planes and distinct entropies. */
static void test_init(void)
{
	struct mr_pathsel ps;
	uint64_t seed = 42;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	struct mr_rand none = { 0 };
	int ok;

	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 0, 1, &rnd),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 65, 1, &rnd),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 4, 0, &rnd),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 4, 5, &rnd),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 4, 1, &none),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, NULL, 4, 1, &rnd), -MR_EINVAL);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 16, 4, &rnd),
		    0);
	MR_CHECK(strcmp(ps.ops->name, "spray") == 0);
	MR_CHECK_EQ(mr_pathsel_plane(&ps, 0), 0);
	MR_CHECK_EQ(mr_pathsel_plane(&ps, 5), 1);
	MR_CHECK_EQ(mr_pathsel_plane(&ps, 15), 3);
	check_distinct(&ps, &ok);
	MR_CHECK(ok);
	/* Seeded: the same seed gives the same entropies. */
	{
		struct mr_pathsel ps2;
		uint64_t seed2 = 42;
		struct mr_rand r2 = { .next = sm_next, .user = &seed2 };
		unsigned i;

		MR_CHECK_EQ(mr_pathsel_init(&ps2, mr_pathsel_find("spray"), 16,
					    4, &r2),
			    0);
		for (i = 0; i < 16; i++)
			MR_CHECK_EQ(mr_pathsel_entropy(&ps2, (uint16_t)i),
				    mr_pathsel_entropy(&ps, (uint16_t)i));
	}
	/* A degenerate generator still yields distinct entropies. */
	{
		struct mr_rand z = { .next = zero_next };

		MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 16,
					    1, &z),
			    0);
		check_distinct(&ps, &ok);
		MR_CHECK(ok);
		MR_CHECK_EQ(mr_pathsel_entropy(&ps, 0), MR_ENTROPY_MIN);
		MR_CHECK_EQ(mr_pathsel_entropy(&ps, 1), MR_ENTROPY_MIN + 1);
		mr_pathsel_repath(&ps, 0);
		MR_CHECK(mr_pathsel_entropy(&ps, 0) != MR_ENTROPY_MIN);
		check_distinct(&ps, &ok);
		MR_CHECK(ok);
	}
}

/* MR-MP-3: round robin over paths with window space. */
static void test_spray_round_robin(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[4];
	uint64_t seed = 7;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint32_t ppsn;
	unsigned i;

	selector(&ps, "spray", tx, 4, 2, 2, &rnd);
	for (i = 0; i < 6; i++)
		MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), (int)(i % 4));
	/* Fill path 2's window (2 packets): it is skipped. */
	MR_CHECK_EQ(mr_pathtx_send(&tx[2], 1, 1, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[2], 2, 1, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 3);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 3);
	/* Fill all: no path. */
	for (i = 0; i < 4; i++)
		while (mr_pathtx_space(&tx[i]))
			mr_pathtx_send(&tx[i], 9, 1, 0, 0, 0, &ppsn);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), -MR_EAGAIN);
	MR_CHECK_EQ(ps.no_path, 1);
	MR_CHECK_EQ(ps.picks, 10);
}

/* MR-MP-4, MR-MP-5: after an RTO a path gets new entropy and carries one probe
 * at a time until it makes progress. */
static void test_repath_and_probe(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[3];
	uint64_t seed = 1234;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	struct mr_sack_block b;
	uint16_t old;
	uint32_t ppsn;
	int ok;

	selector(&ps, "spray", tx, 3, 0, 1, &rnd);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 5, 100, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx[1], 1000000), MR_PATHTX_EV_RTO);
	old = mr_pathsel_entropy(&ps, 1);
	mr_pathsel_on_rto(&ps, 1, 1000000);
	MR_CHECK(mr_pathsel_entropy(&ps, 1) != old);
	MR_CHECK_EQ(ps.path[1].repaths, 1);
	MR_CHECK_EQ(mr_pathsel_plane(&ps, 1), 0);
	check_distinct(&ps, &ok);
	MR_CHECK(ok);
	/* Backed off, nothing in flight: it takes its turn (a probe). */
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1000000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1000000), 1);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 5, 100, 1, 0, 1000000, &ppsn), 0);
	/* With the probe out it is skipped. */
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1000000), 2);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1000000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1000000), 2);
	/* The probe is acked: progress, back to full use. */
	memset(&b, 0, sizeof(b));
	b.path_id = 1;
	b.cum_ppsn = ppsn + 1;
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx[1], &b, 1010000), 1);
	MR_CHECK_EQ(tx[1].backoff, 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1010000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1010000), 1);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 6, 100, 0, 0, 1010000, &ppsn), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1010000), 2);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1010000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 1010000), 1);
}

/* MR-MP-6: single path, fixed entropy. */
static void test_single(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[1];
	uint64_t seed = 9;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint16_t e;
	uint32_t ppsn;

	selector(&ps, "single", tx, 1, 1, 1, &rnd);
	MR_CHECK(strcmp(ps.ops->name, "single") == 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[0], 1, 1, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), -MR_EAGAIN);
	e = mr_pathsel_entropy(&ps, 0);
	mr_pathsel_on_rto(&ps, 0, 5);
	MR_CHECK_EQ(mr_pathsel_entropy(&ps, 0), e);
	MR_CHECK_EQ(ps.path[0].repaths, 0);
}

/* MR-MP-8: a path silent for suspect_ns while another path progressed is
 * suspect: its packets are declared lost at once (resent elsewhere), it
 * carries no data (MR-PM-1: the path manager probes it with a data-free
 * packet, here one sent by hand with a probe ctx), and an ACK of it makes
 * it whole again. Without progress elsewhere nothing is armed (the RTO's
 * business). */
static void test_suspect(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[2];
	uint64_t seed = 99;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	struct mr_sack_block b;
	uint16_t old;
	uint32_t ppsn;

	selector(&ps, "spray", tx, 2, 0, 1, &rnd);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 1, 100, 0, 0, 1000, &ppsn), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 2, 100, 0, 0, 2000, &ppsn), 0);
	tx[1].suspect_ns = 50000;
	/* No progress elsewhere yet: not armed. */
	MR_CHECK(mr_pathtx_suspect_at(&tx[1]) == UINT64_MAX);
	MR_CHECK(mr_pathtx_next_deadline(&tx[1]) == 1000 + 1000000);
	/* Another path progressed at 5 us: suspect at 1 us + 50 us. */
	tx[1].conn_progress_at = 5000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx[1]), 51000);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx[1]), 51000);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx[1], 50999), 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx[1], 51000), MR_PATHTX_EV_SUSPECT);
	MR_CHECK_EQ(tx[1].lost_suspect, 2);
	MR_CHECK_EQ(tx[1].out_pkts, 0);
	MR_CHECK_EQ(tx[1].backoff, 0); /* not a timeout of the peer */
	old = mr_pathsel_entropy(&ps, 1);
	mr_pathsel_on_rto(&ps, 1, 51000);
	MR_CHECK(mr_pathsel_entropy(&ps, 1) != old);
	/* No data on the suspect path; the probe goes on it. */
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 51000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 51000), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 0, 48, 0, MR_PATHMGR_CTX_PATH, 51000,
				   &ppsn),
		    0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 51000), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 51000), 0);
	/* Its ACK returns: whole again. */
	memset(&b, 0, sizeof(b));
	b.path_id = 1;
	b.cum_ppsn = ppsn + 1;
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx[1], &b, 60000), 1);
	MR_CHECK_EQ(tx[1].suspect, 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 60000), 1);
	MR_CHECK(mr_pathtx_suspect_at(&tx[1]) == UINT64_MAX);
}

/* MR-MP-8: a path is overtaken when a packet sent after its oldest
 * outstanding one came back on another path (conn_sent_at later than
 * it); then it is suspect after overtake_ns. A packet of another path
 * acknowledged but sent before (the ACKs a thread finds waiting after it
 * lost the CPU) arms nothing. A suspicion is false when its witness, the
 * oldest packet, is ACKed after all; younger ones ACKed late prove
 * nothing (they were in flight behind it). */
static void test_suspect_overtaken(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[2];
	uint64_t seed = 98;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	struct mr_sack_block b;
	uint32_t p1, p2;

	selector(&ps, "spray", tx, 2, 0, 1, &rnd);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 1, 100, 0, 0, 1000, &p1), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[1], 2, 100, 0, 0, 2000, &p2), 0);
	tx[1].overtake_ns = 15000;
	/* Acknowledged on path 0, but sent before ours: not armed. */
	tx[1].conn_sent_at = 1000;
	MR_CHECK(mr_pathtx_suspect_at(&tx[1]) == UINT64_MAX);
	/* A packet sent at 1.5 us came back: suspect at 1 us + 15 us. */
	tx[1].conn_sent_at = 1500;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx[1]), 16000);
	MR_CHECK_EQ(mr_pathtx_next_deadline(&tx[1]), 16000);
	/* The tail rule, armed too, may come first. */
	tx[1].conn_progress_at = 3000;
	tx[1].suspect_ns = 12000;
	MR_CHECK_EQ(mr_pathtx_suspect_at(&tx[1]), 13000);
	tx[1].suspect_ns = 0;
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx[1], 15999), 0);
	MR_CHECK_EQ(mr_pathtx_on_timeout(&tx[1], 16000), MR_PATHTX_EV_SUSPECT);
	MR_CHECK_EQ(tx[1].lost_suspect, 2);
	/* The younger packet's late ACK: the suspicion is not proved false. */
	memset(&b, 0, sizeof(b));
	b.path_id = 1;
	b.cum_ppsn = p1;
	b.bitmap[0] = 1; /* p1 + 1 = p2 */
	MR_CHECK_EQ(p2, p1 + 1);
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx[1], &b, 20000), 0);
	MR_CHECK_EQ(tx[1].late_acked, 1);
	MR_CHECK_EQ(tx[1].suspect_false, 0);
	/* The witness's: it was late, not lost, counted once. */
	b.cum_ppsn = p2 + 1;
	b.bitmap[0] = 0;
	MR_CHECK_EQ(mr_pathtx_on_sack(&tx[1], &b, 21000), 0);
	MR_CHECK_EQ(tx[1].late_acked, 2);
	MR_CHECK_EQ(tx[1].suspect_false, 1);
	MR_CHECK_EQ(tx[1].acked_sent_at, 2000);
}

/* MR-MP-10: a path holds at most twice its weighted share of the
 * connection's window (+ one packet) in flight; the others keep sending. */
static void test_pathsel_share(void)
{
	struct mr_pathsel ps;
	struct mr_pathtx tx[4];
	uint64_t seed = 7;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint32_t ppsn;
	unsigned i;

	selector(&ps, "spray", tx, 4, 256, 1, &rnd);
	/* Window 8000 bytes over 4 full-weight paths: each under
	 * 2 x 8000 / 4 + 1000 = 5000 bytes. */
	ps.window = 8000;
	ps.pkt = 1000;
	for (i = 0; i < 4; i++)
		MR_CHECK_EQ(mr_pathtx_send(&tx[0], i, 1000, 0, 0, 0, &ppsn),
			    0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0); /* 4000 < 5000 */
	MR_CHECK_EQ(mr_pathtx_send(&tx[0], 4, 1000, 0, 0, 0, &ppsn), 0);
	/* Path 0 holds 5000: skipped while the others take turns. */
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 2);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 3);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	/* A path of weight 8 of 16 (the others full): its share is
	 * 2 x 8000 x 8 / 56 + 1000 = 3285 bytes: 4000 is over it. */
	ps.path[1].weight = 8;
	for (i = 0; i < 4; i++)
		MR_CHECK_EQ(mr_pathtx_send(&tx[1], 10 + i, 1000, 0, 0, 0,
					   &ppsn),
			    0);
	for (i = 0; i < 8; i++)
		MR_CHECK(mr_pathsel_pick(&ps, tx, 0) != 1);
	/* No share (window 0): only the path's own limit counts, path 0
	 * is taken again within a round. */
	ps.window = 0;
	ps.path[1].weight = MR_PATHSEL_WEIGHT_FULL;
	for (i = 0; i < 4 && mr_pathsel_pick(&ps, tx, 0) != 0; i++)
		;
	MR_CHECK(i < 4);
}

/* MR-MP-3: a turn is a run of path_run packets while the path may send;
 * a path that fills up mid-run passes the turn at once. */
static void test_pathsel_run(void)
{
	static const int want[] = { 0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 0 };
	struct mr_pathsel ps;
	struct mr_pathtx tx[4];
	uint64_t seed = 11;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint32_t ppsn;
	unsigned i;

	selector(&ps, "spray", tx, 4, 256, 1, &rnd);
	ps.run = 3;
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), want[i]);
	/* Room for two packets per path: path 1's run ends when it is full
	 * (path 0's run of 3 goes on above: it is at its second pick). */
	selector(&ps, "spray", tx, 4, 2, 1, &rnd);
	ps.run = 3;
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[0], 0, 1000, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathtx_send(&tx[0], 1, 1000, 0, 0, 0, &ppsn), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	/* run 0 or 1: plain round robin. */
	selector(&ps, "spray", tx, 4, 256, 1, &rnd);
	ps.run = 1;
	for (i = 0; i < 8; i++)
		MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), i % 4);
}

/* MR-MP-11: each connection's round robin starts at a path drawn from
 * the injected randomness, so the first packets of many connections
 * spread over the planes instead of all leaving on plane 0; from there
 * it is the round robin of MR-MP-3. */
static void test_spray_start(void)
{
	unsigned first[8] = { 0 }, i, k, max = 0;
	uint64_t seed = 2026;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	struct mr_pathsel ps;
	struct mr_pathtx tx[8];
	int s0 = -1, again;

	for (i = 0; i < 64; i++) {
		int p;

		paths(tx, 8, 4);
		MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 8,
					    8, &rnd),
			    0);
		p = mr_pathsel_pick(&ps, tx, 0);
		MR_CHECK(p >= 0 && p < 8);
		if (p < 0 || p >= 8)
			return;
		first[mr_pathsel_plane(&ps, (uint16_t)p)]++;
		/* then round robin from there */
		for (k = 1; k < 10; k++)
			MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0),
				    (int)((p + k) % 8));
		if (i == 0)
			s0 = p;
	}
	/* 64 connections over 8 planes: every plane has first packets and
	 * none has a third of them (path 0 for all would be 64 on plane 0). */
	for (k = 0; k < 8; k++) {
		MR_CHECK(first[k] > 0);
		if (first[k] > max)
			max = first[k];
	}
	MR_CHECK(max < 64 / 3);
	/* Deterministic: the same seed gives the same start. */
	seed = 2026;
	paths(tx, 8, 4);
	MR_CHECK_EQ(mr_pathsel_init(&ps, mr_pathsel_find("spray"), 8, 8, &rnd),
		    0);
	again = mr_pathsel_pick(&ps, tx, 0);
	MR_CHECK_EQ(again, s0);
}

/* MR-MP-12: while a path of a plane whose local port is free may send,
 * the paths of backlogged planes are passed over (and a run on one ends);
 * with every plane backlogged, or only a backlogged plane's path able to
 * send, it is MR-MP-3's round robin: a backlog never idles the QP. */
static void test_spray_backlogged(void)
{
	static const int free23[] = { 2, 3, 6, 7, 2, 3 };
	struct mr_pathsel ps;
	struct mr_pathtx tx[8];
	uint64_t seed = 5;
	struct mr_rand rnd = { .next = sm_next, .user = &seed };
	uint32_t ppsn;
	unsigned i;

	/* 8 paths on 4 planes: path i on plane i % 4. */
	selector(&ps, "spray", tx, 8, 2, 4, &rnd);
	ps.planes_backlogged = 0x3; /* planes 0 and 1 */
	for (i = 0; i < sizeof(free23) / sizeof(free23[0]); i++)
		MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), free23[i]);
	/* Planes 2 and 3 free again: the round robin goes on from path 3. */
	ps.planes_backlogged = 0;
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 4);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 5);
	/* Every plane backlogged: no preference. */
	ps.planes_backlogged = 0xf;
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 6);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 7);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	/* Only plane 0 free, its paths 0 and 4 full: a backlogged plane's
	 * path is taken rather than none. */
	ps.planes_backlogged = 0xe;
	for (i = 0; i < 2; i++) {
		MR_CHECK_EQ(mr_pathtx_send(&tx[0], i, 1, 0, 0, 0, &ppsn), 0);
		MR_CHECK_EQ(mr_pathtx_send(&tx[4], 9 + i, 1, 0, 0, 0, &ppsn),
			    0);
	}
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	/* A run on a plane that becomes backlogged passes the turn to a
	 * free plane's path. */
	selector(&ps, "spray", tx, 8, 256, 4, &rnd);
	ps.run = 4;
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 0);
	ps.planes_backlogged = 0x1;
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), 1);
	/* Plane bits past the planes in use change nothing. */
	selector(&ps, "spray", tx, 4, 256, 4, &rnd);
	ps.planes_backlogged = 0xfffffff0u;
	for (i = 0; i < 8; i++)
		MR_CHECK_EQ(mr_pathsel_pick(&ps, tx, 0), (int)(i % 4));
}

MR_TEST_MAIN(MR_TEST(test_suspect), MR_TEST(test_suspect_overtaken),
	     MR_TEST(test_init), MR_TEST(test_spray_round_robin),
	     MR_TEST(test_repath_and_probe), MR_TEST(test_single),
	     MR_TEST(test_pathsel_share), MR_TEST(test_pathsel_run),
	     MR_TEST(test_spray_start), MR_TEST(test_spray_backlogged))
