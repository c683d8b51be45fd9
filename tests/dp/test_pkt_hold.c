/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive hold's decisions (lib/dp/mrdp_pkt_hold.h), with literal
 * times: a one-way stream begins a hold and keeps it, request/response
 * never begins one and ends one at its first period, a stream too slow or
 * ended does not keep it. The socket and the timer are tested over veth
 * (dp_pkt.sh).
 */
#include <stdint.h>
#include <string.h>

#include "mr_test.h"
#include "mrdp_pkt_hold.h"

#define US 1000ull
#define MSG (64u << 10) /* an ib_write_bw message */
#define ACK 80u		/* an ACK frame */

static struct mrdp_pkt_hold h;

static void fresh(uint64_t period_ns)
{
	memset(&h, 0, sizeof(h));
	h.period_ns = period_ns;
}

/* A message of rx bytes in and tx out, at t: the step's answer. */
static enum mrdp_pkt_hold_act msg(uint64_t t, uint64_t rx, uint64_t tx)
{
	mrdp_pkt_hold_rx(&h, rx);
	mrdp_pkt_hold_tx(&h, tx);
	return mrdp_pkt_hold_step(&h, t);
}

/* 64 KiB messages every 250 us (2 Gb/s), one ACK each: the fourth
 * fills the window and begins the hold; each period with messages in it
 * keeps it, the steps inside a period change nothing. */
static void test_stream_holds(void)
{
	uint64_t t = 1000 * US;
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 3; i++, t += 250 * US)
		MR_CHECK_EQ(msg(t, MSG, ACK), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(msg(t, MSG, ACK), MRDP_PKT_HOLD_ENTER);
	MR_CHECK_EQ(h.held, 1);
	MR_CHECK_EQ(h.until, t + 500 * US);
	/* Woken at the period's end (frames came in it); a round before
	 * it (an inline poll) changes nothing. */
	MR_CHECK_EQ(msg(t + 250 * US, MSG, ACK), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(msg(t + 500 * US, MSG, ACK), MRDP_PKT_HOLD_REARM);
	MR_CHECK_EQ(h.until, t + 1000 * US);
	for (i = 0; i < 20; i++) {
		t += 500 * US;
		MR_CHECK_EQ(msg(t + 500 * US, 2 * MSG, 2 * ACK),
			    MRDP_PKT_HOLD_REARM);
	}
	MR_CHECK_EQ(h.held, 1);
}

/* Ping-pong, small or large: every message answered, so rx never
 * reaches 8 x tx and no hold begins, however long it runs. */
static void test_pingpong_never_holds(void)
{
	uint64_t t = 5 * US;
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 20000; i++, t += 15 * US)
		MR_CHECK_EQ(msg(t, 64 + 58, 64 + 58 + ACK), MRDP_PKT_HOLD_NONE);
	for (i = 0; i < 200; i++, t += 150 * US)
		MR_CHECK_EQ(msg(t, MSG, MSG), MRDP_PKT_HOLD_NONE);
	/* An ib_write_bw sender: ACKs in, data out. */
	for (i = 0; i < 200; i++, t += 100 * US)
		MR_CHECK_EQ(msg(t, ACK, MSG), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(h.held, 0);
}

/* A stream too slow to be worth a timer (a message per 5 ms): the
 * window never holds 256 KiB within 10 ms. */
static void test_slow_stream(void)
{
	uint64_t t = 0;
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 100; i++, t += 5000 * US)
		MR_CHECK_EQ(msg(t + 1, MSG, 0), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(h.held, 0);
}

/* A hold begun by four messages from t on: its period's end (0: none
 * begun, which the caller's checks then fail on). */
static uint64_t enter(uint64_t t)
{
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 4; i++, t += 100 * US)
		(void)msg(t, MSG, ACK);
	return h.held ? h.until : 0;
}

/* Held, and the traffic turns to request/response: the first period
 * that sent an answer ends the hold (its request paid one period). */
static void test_answer_leaves(void)
{
	uint64_t end = enter(100 * US);

	MR_CHECK(end != 0);
	MR_CHECK_EQ(msg(end + 3 * US, 122, 122 + ACK), MRDP_PKT_HOLD_LEAVE);
	MR_CHECK_EQ(h.held, 0);
	/* and per-frame wake-ups go on: no hold for the ping-pong */
	MR_CHECK_EQ(msg(end + 20 * US, 122, 122), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(h.held, 0);
}

/* Held, and the stream ends: one empty period keeps the hold (a pause),
 * the second ends it. An empty period between full ones does not add
 * up with a later one. */
static void test_end_leaves(void)
{
	uint64_t end = enter(100 * US);

	MR_CHECK(end != 0);
	MR_CHECK_EQ(msg(end, 0, 0), MRDP_PKT_HOLD_REARM);
	end = h.until;
	MR_CHECK_EQ(msg(end, MSG, ACK), MRDP_PKT_HOLD_REARM);
	end = h.until;
	MR_CHECK_EQ(msg(end, 0, ACK), MRDP_PKT_HOLD_REARM);
	end = h.until;
	MR_CHECK_EQ(msg(end, 0, 0), MRDP_PKT_HOLD_LEAVE);
	MR_CHECK_EQ(h.held, 0);
}

/* A period takes about 256 KiB at the rate of the one before: 64 KiB
 * per 50 us (10 Gb/s) gives 200 us periods, 64 KiB per 10 us the 50 us
 * floor, a slow stream the dp_rx_hold_us bound. */
static void test_period_follows_rate(void)
{
	uint64_t t = 1000 * US;
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 4; i++, t += 50 * US)
		(void)msg(t, MSG, ACK);
	MR_CHECK_EQ(h.held, 1);
	t -= 50 * US; /* the fourth's time: 4 in 150 us */
	MR_CHECK_EQ(h.until, t + 150 * US);
	t = h.until;
	/* three more in that period: 192 KiB in 150 us */
	MR_CHECK_EQ(msg(t, 3 * MSG, 3 * ACK), MRDP_PKT_HOLD_REARM);
	MR_CHECK_EQ(h.until, t + 200 * US);
	t = h.until;
	MR_CHECK_EQ(msg(t, 20 * MSG, 20 * ACK), MRDP_PKT_HOLD_REARM);
	MR_CHECK_EQ(h.until, t + 50 * US);
	t = h.until;
	MR_CHECK_EQ(msg(t, MSG / 16, ACK / 16), MRDP_PKT_HOLD_REARM);
	MR_CHECK_EQ(h.until, t + 500 * US);
}

/* Off (dp_rx_hold_us=0): never. */
static void test_off(void)
{
	uint64_t t = 0;
	unsigned i;

	fresh(0);
	for (i = 0; i < 100; i++, t += 10 * US)
		MR_CHECK_EQ(msg(t, MSG, 0), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(h.held, 0);
}

/* The clock just below its wrap: the window and the period's end are
 * differences, not comparisons of times. */
static void test_wrap(void)
{
	uint64_t t = UINT64_MAX - 400 * US, end;
	unsigned i;

	fresh(500 * US);
	for (i = 0; i < 4; i++, t += 100 * US)
		(void)msg(t, MSG, ACK);
	MR_CHECK_EQ(h.held, 1);
	end = h.until; /* past the wrap */
	MR_CHECK(end < t);
	MR_CHECK_EQ(msg(end - 1, MSG, ACK), MRDP_PKT_HOLD_NONE);
	MR_CHECK_EQ(msg(end, MSG, ACK), MRDP_PKT_HOLD_REARM);
}

MR_TEST_MAIN(MR_TEST(test_stream_holds), MR_TEST(test_pingpong_never_holds),
	     MR_TEST(test_slow_stream), MR_TEST(test_answer_leaves),
	     MR_TEST(test_end_leaves), MR_TEST(test_period_follows_rate),
	     MR_TEST(test_off), MR_TEST(test_wrap))
