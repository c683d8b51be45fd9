/* SPDX-License-Identifier: BSD-2-Clause */
/* The neighbour table with literal timestamps. */
#include <stdlib.h>
#include <string.h>

#include "mr_test.h"
#include "mrdp_neigh.h"

static uint32_t requests[64];
static unsigned nreq;
static void *dropped[64];
static unsigned ndrop;

static void on_req(void *u, uint32_t ip)
{
	(void)u;
	requests[nreq++ % 64] = ip;
}

static void on_drop(void *u, void *p)
{
	(void)u;
	dropped[ndrop++ % 64] = p;
}

static struct mrdp_neigh_table *fresh(void)
{
	static struct mrdp_neigh_table t;

	mrdp_neigh_init(&t);
	nreq = ndrop = 0;
	return &t;
}

static const uint8_t mac1[6] = { 2, 0, 0, 0, 0, 1 };
static const uint8_t mac2[6] = { 2, 0, 0, 0, 0, 2 };

static void test_resolve_and_release(void)
{
	struct mrdp_neigh_table *t = fresh();
	struct mrdp_neigh *e;
	int a, b;

	MR_CHECK(mrdp_neigh_find(t, 0x0a000002) == NULL);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), UINT64_MAX);
	e = mrdp_neigh_lookup(t, 0x0a000002, 1000);
	MR_CHECK(e != NULL);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_INCOMPLETE);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), 1000);
	MR_CHECK_EQ(mrdp_neigh_enqueue(e, &a), 0);
	MR_CHECK_EQ(mrdp_neigh_enqueue(e, &b), 0);
	mrdp_neigh_tick(t, 1000, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, 1);
	MR_CHECK_EQ(requests[0], 0x0a000002);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), 1000 + MRDP_ARP_RETRY_NS);
	/* Not due yet: nothing sent. */
	mrdp_neigh_tick(t, 1000 + MRDP_ARP_RETRY_NS - 1, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, 1);
	mrdp_neigh_tick(t, 1000 + MRDP_ARP_RETRY_NS, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, 2);
	e = mrdp_neigh_learn(t, 0x0a000002, mac1, 0, 5000);
	MR_CHECK(e != NULL);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_REACHABLE);
	MR_CHECK_MEM(e->mac, mac1, 6);
	MR_CHECK_EQ(e->nq, 2);
	MR_CHECK(e->q[0] == &a && e->q[1] == &b);
	e->nq = 0;
	MR_CHECK_EQ(t->resolved, 1);
	MR_CHECK_EQ(t->incomplete, 0);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), UINT64_MAX);
	/* Enqueue on a resolved entry is refused (send it instead). */
	MR_CHECK_EQ(mrdp_neigh_enqueue(e, &a), -1);
	/* The peer moved: learning updates the MAC. */
	e = mrdp_neigh_learn(t, 0x0a000002, mac2, 0, 6000);
	MR_CHECK_MEM(e->mac, mac2, 6);
	MR_CHECK_EQ(t->resolved, 1);
}

static void test_failure_and_retry(void)
{
	struct mrdp_neigh_table *t = fresh();
	struct mrdp_neigh *e;
	uint64_t now = 0;
	int pk[MRDP_NEIGH_QLEN + 1];
	unsigned i;

	e = mrdp_neigh_lookup(t, 0x0a000003, now);
	for (i = 0; i < MRDP_NEIGH_QLEN; i++)
		MR_CHECK_EQ(mrdp_neigh_enqueue(e, &pk[i]), 0);
	MR_CHECK_EQ(mrdp_neigh_enqueue(e, &pk[i]), -1); /* bounded */
	for (i = 0; i < MRDP_ARP_TRIES; i++) {
		mrdp_neigh_tick(t, now, on_req, on_drop, NULL);
		now += MRDP_ARP_RETRY_NS;
	}
	MR_CHECK_EQ(nreq, MRDP_ARP_TRIES);
	MR_CHECK_EQ(ndrop, 0);
	mrdp_neigh_tick(t, now, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, MRDP_ARP_TRIES);
	MR_CHECK_EQ(ndrop, MRDP_NEIGH_QLEN);
	MR_CHECK(dropped[0] == &pk[0]);
	MR_CHECK(dropped[MRDP_NEIGH_QLEN - 1] == &pk[MRDP_NEIGH_QLEN - 1]);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_FAILED);
	MR_CHECK_EQ(e->nq, 0);
	/* Held FAILED for a while: lookups do not restart resolution. */
	e = mrdp_neigh_lookup(t, 0x0a000003, now + MRDP_NEIGH_HOLD_NS - 1);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_FAILED);
	e = mrdp_neigh_lookup(t, 0x0a000003, now + MRDP_NEIGH_HOLD_NS);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_INCOMPLETE);
	MR_CHECK_EQ(e->tries, 0);
	mrdp_neigh_tick(t, now + MRDP_NEIGH_HOLD_NS, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, MRDP_ARP_TRIES + 1);
}

static void test_learn_create_and_full(void)
{
	struct mrdp_neigh_table *t = fresh();
	uint32_t ip;

	/* Without create, an unknown peer is not added. */
	MR_CHECK(mrdp_neigh_learn(t, 0x0a000009, mac1, 0, 0) == NULL);
	MR_CHECK_EQ(t->count, 0);
	for (ip = 1; ip < MRDP_NEIGH_SIZE; ip++)
		MR_CHECK(mrdp_neigh_learn(t, 0x0b000000 + ip, mac1, 1, 0) !=
			 NULL);
	/* One slot stays free; the table is full. */
	MR_CHECK(mrdp_neigh_learn(t, 0x0c000001, mac1, 1, 0) == NULL);
	MR_CHECK(mrdp_neigh_lookup(t, 0x0c000001, 0) == NULL);
	for (ip = 1; ip < MRDP_NEIGH_SIZE; ip++) {
		struct mrdp_neigh *e = mrdp_neigh_find(t, 0x0b000000 + ip);

		MR_CHECK(e != NULL);
		MR_CHECK_EQ(e->ip, 0x0b000000 + ip);
	}
	MR_CHECK(mrdp_neigh_find(t, 0x0c000001) == NULL);
}

/* MR-ROUTE-8: an entry not confirmed for MRDP_NEIGH_REACHABLE_NS is
 * re-verified (PROBE) while still used; an answer (at a new MAC: the
 * peer moved) makes it REACHABLE again, silence makes it FAILED. */
static void test_expiry(void)
{
	struct mrdp_neigh_table *t = fresh();
	const uint64_t T = 5000, R = MRDP_NEIGH_REACHABLE_NS;
	struct mrdp_neigh *e;
	unsigned k;

	MR_CHECK(mrdp_neigh_learn(t, 0x0a000002, mac1, 1, T) != NULL);
	/* Confirmed at T; still REACHABLE just before T + R. */
	e = mrdp_neigh_lookup(t, 0x0a000002, T + R - 1);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_REACHABLE);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), UINT64_MAX);
	e = mrdp_neigh_lookup(t, 0x0a000002, T + R);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_PROBE);
	MR_CHECK(mrdp_neigh_usable(e));
	MR_CHECK_MEM(e->mac, mac1, 6);
	MR_CHECK_EQ(t->expired, 1);
	MR_CHECK_EQ(t->resolved, 0);
	MR_CHECK_EQ(mrdp_neigh_next_deadline(t), T + R);
	mrdp_neigh_tick(t, T + R, on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, 1);
	MR_CHECK_EQ(requests[0], 0x0a000002);
	/* The answer comes from a new MAC. */
	e = mrdp_neigh_learn(t, 0x0a000002, mac2, 0, T + R + 10);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_REACHABLE);
	MR_CHECK_MEM(e->mac, mac2, 6);
	MR_CHECK_EQ(t->resolved, 1);
	MR_CHECK_EQ(t->incomplete, 0);
	/* Expires again after its new confirmation; nobody answers. */
	e = mrdp_neigh_lookup(t, 0x0a000002, T + 2 * R + 10);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_PROBE);
	for (k = 0; k <= MRDP_ARP_TRIES; k++)
		mrdp_neigh_tick(t, T + 2 * R + 10 + k * MRDP_ARP_RETRY_NS,
				on_req, on_drop, NULL);
	MR_CHECK_EQ(nreq, 1 + MRDP_ARP_TRIES);
	MR_CHECK_EQ(e->state, MRDP_NEIGH_FAILED);
	MR_CHECK(!mrdp_neigh_usable(e));
	MR_CHECK_EQ(t->incomplete, 0);
	MR_CHECK_EQ(t->resolved, 0);
	MR_CHECK_EQ(ndrop, 0); /* nothing was queued: it was still used */
}

MR_TEST_MAIN(MR_TEST(test_expiry), MR_TEST(test_resolve_and_release), MR_TEST(test_failure_and_retry),
	     MR_TEST(test_learn_create_and_full))
