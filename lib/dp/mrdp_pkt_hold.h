/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive hold of a net_mrpkt rx=frame port (mrdp_pkt_hold.c): while
 * a one-way stream comes in, the progress thread is woken by a timer once
 * per period (dp_rx_hold_us) for all the frames of the period, instead of
 * by the socket at every frame; request/response traffic keeps the
 * per-frame wake-up. A NIC's adaptive interrupt moderation, decided from
 * what the port itself sees (bytes in, bytes out). The decision is this
 * header's pure state machine (no clock, no system call: tests/dp
 * test_pkt.c drives it with literal times); mrdp_pkt_hold.c applies it to
 * the socket. Only lib/dp and its tests include this.
 *
 * Thread: the plane's, under the device lock (mrdp_io_round's).
 */
#ifndef MRDP_PKT_HOLD_H
#define MRDP_PKT_HOLD_H

#include <stdint.h>

/* A stream, to begin holding: at least this many bytes received within
 * MRDP_PKT_HOLD_WIN_NS (four 64 KiB messages; 0.2 Gb/s at least), and
 * MRDP_PKT_HOLD_RATIO x more received than sent. A receiver of a stream
 * sends only ACKs (a 64 KiB message: 65 KiB in, one or two ~80-byte ACKs
 * out); a ping-pong sends an answer per message (in ~= out), so it never
 * begins one, whatever its message size. */
#define MRDP_PKT_HOLD_WIN_BYTES (256u << 10)
#define MRDP_PKT_HOLD_WIN_NS 10000000ull
#define MRDP_PKT_HOLD_RATIO 8u
/* A period takes about a block of rx=block (mrdp_pkt_int.h's 256 KiB:
 * four 64 KiB messages) at the rate of the period before, within
 * [MRDP_PKT_HOLD_MIN_NS, dp_rx_hold_us]: at 9 Gb/s a fixed 500 us held
 * 560 KB and each ACK that long, where a block is retired when full
 * (230 us at that rate); at 2 Gb/s the bound decides. The floor: a
 * wake-up per 50 us at most. */
#define MRDP_PKT_HOLD_BATCH (256ull << 10)
#define MRDP_PKT_HOLD_MIN_NS 50000ull
/* Periods in a row with nothing received that end a hold (a stream that
 * paused for one is still a stream; two: it ended). */
#define MRDP_PKT_HOLD_EMPTY_MAX 2u

struct mrdp_pkt_hold {
	uint64_t period_ns; /* dp_rx_hold_us; 0: never held */
	int held;	    /* the socket does not wake; the timer does */
	uint64_t start;	    /* held: the period's beginning */
	uint64_t until;	    /* held: its end */
	unsigned empty;	    /* held: periods in a row with nothing in */
	uint64_t win_start; /* not held: when the window began (0: none) */
	uint64_t rx, tx;    /* bytes in and out in the window or period */
};

enum mrdp_pkt_hold_act {
	MRDP_PKT_HOLD_NONE,  /* nothing to change */
	MRDP_PKT_HOLD_ENTER, /* socket off, timer at until */
	MRDP_PKT_HOLD_REARM, /* a period ended: timer at the new until */
	MRDP_PKT_HOLD_LEAVE, /* a period ended: socket on, timer off */
};

/* Frames in and out of the port: their lengths. */
static inline void mrdp_pkt_hold_rx(struct mrdp_pkt_hold *h, uint64_t bytes)
{
	h->rx += bytes;
}

static inline void mrdp_pkt_hold_tx(struct mrdp_pkt_hold *h, uint64_t bytes)
{
	h->tx += bytes;
}

/* After a receive at now (ns): what to change. Rules:
 * - not held: the window's bytes say a stream (above): ENTER, the first
 *   period sized by the window's rate;
 * - held, the period ended (now >= until): it received at least
 *   RATIO x what it sent, or nothing for fewer than EMPTY_MAX periods:
 *   REARM, the next period sized by this one's rate; else (an answer
 *   went out: request/response; or the stream ended) LEAVE. A ping-pong
 *   that meets a hold pays it once. */
enum mrdp_pkt_hold_act mrdp_pkt_hold_step(struct mrdp_pkt_hold *h,
					  uint64_t now);

#endif /* MRDP_PKT_HOLD_H */
