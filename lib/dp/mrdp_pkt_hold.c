/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The receive hold of a net_mrpkt rx=frame port (dp_rx_hold_us).
 *
 * Why: with rx=frame the kernel wakes the socket's sleeper at every frame.
 * With several processes per host, each steered to its own frames, each
 * progress thread is woken per 64 KiB message it receives and the
 * machine's CPU goes to switching: 4 ib_write_bw pairs moved 0.55-0.70 x
 * one pair, with 28.7% of their samples in schedule/ppoll and 144,000
 * switches in 3 s (bench/wire/FINDINGS.md 24). rx=block (TPACKET_V3)
 * wakes once per block (1.12-1.54 x) but makes a lone frame wait for the
 * kernel's 1 ms block timer: a ping-pong's one-way 1.1-1.5 ms. A hold
 * costs neither: it begins only for a one-way stream (mrdp_pkt_hold.h's
 * rules), so a ping-pong keeps its per-frame wake-up; while it holds, a
 * frame waits at most one period (about 256 KiB at the stream's rate,
 * at most dp_rx_hold_us) and the thread wakes once per period for every
 * frame of it, taken in one round (mrdp_pkt_rx_burst). A thread that spins or
 * an application that polls inline still takes each frame at once (they read
 * the ring, not the socket).
 *
 * How: the plane's wait_fd (what the progress thread sleeps on,
 * mrdp_wait.c) is an epoll set of the port's own holding the socket and a
 * timerfd. Holding = the socket's events off in that set and the timer
 * armed at the period's end; leaving = the socket's events back on (the
 * kernel reports a frame already waiting at once: nothing is stranded)
 * and the timer off. Costs: two system calls to begin or end a hold, one
 * timerfd_settime a period (it also clears the expiry), none per frame.
 * The progress loop is unchanged: it sleeps on wait_fd as before.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/timerfd.h>
#include <unistd.h>

#include "mrdp_pkt_int.h"

static void hold_reset(struct mrdp_pkt_hold *h)
{
	h->win_start = 0;
	h->rx = 0;
	h->tx = 0;
}

/* The next period after one of len ns that took rx bytes: what
 * MRDP_PKT_HOLD_BATCH takes at that rate, within [MIN, period_ns]. */
static uint64_t next_period(const struct mrdp_pkt_hold *h, uint64_t len)
{
	uint64_t p;

	if (!h->rx || !len)
		return h->period_ns;
	p = len * MRDP_PKT_HOLD_BATCH / h->rx;
	if (p > h->period_ns)
		p = h->period_ns;
	if (p < MRDP_PKT_HOLD_MIN_NS)
		p = MRDP_PKT_HOLD_MIN_NS;
	return p;
}

enum mrdp_pkt_hold_act mrdp_pkt_hold_step(struct mrdp_pkt_hold *h, uint64_t now)
{
	uint64_t len;

	if (!h->period_ns)
		return MRDP_PKT_HOLD_NONE;
	if (!h->held) {
		if (!h->rx)
			return MRDP_PKT_HOLD_NONE;
		if (!h->win_start)
			h->win_start = now;
		len = now - h->win_start;
		if (len > MRDP_PKT_HOLD_WIN_NS) {
			/* Too slow to be worth a timer: a new window. */
			hold_reset(h);
			return MRDP_PKT_HOLD_NONE;
		}
		if (h->rx < MRDP_PKT_HOLD_WIN_BYTES)
			return MRDP_PKT_HOLD_NONE;
		if (h->rx < (uint64_t)MRDP_PKT_HOLD_RATIO * h->tx) {
			hold_reset(h); /* answered: request/response */
			return MRDP_PKT_HOLD_NONE;
		}
		h->held = 1;
		h->empty = 0;
		h->start = now;
		h->until = now + next_period(h, len);
		hold_reset(h);
		return MRDP_PKT_HOLD_ENTER;
	}
	if ((int64_t)(now - h->until) < 0)
		return MRDP_PKT_HOLD_NONE;
	if (h->rx ? h->rx < (uint64_t)MRDP_PKT_HOLD_RATIO * h->tx
		  : ++h->empty >= MRDP_PKT_HOLD_EMPTY_MAX) {
		hold_reset(h);
		h->held = 0;
		return MRDP_PKT_HOLD_LEAVE;
	}
	if (h->rx)
		h->empty = 0;
	h->until = now + next_period(h, now - h->start);
	h->start = now;
	h->rx = 0;
	h->tx = 0;
	return MRDP_PKT_HOLD_REARM;
}

int mrdp_pkt_hold_open(struct mrdp_pkt *k, unsigned us)
{
	struct epoll_event ev = { .events = EPOLLIN };
	int e;

	k->hold_efd = epoll_create1(EPOLL_CLOEXEC);
	k->hold_tfd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (k->hold_efd < 0 || k->hold_tfd < 0)
		goto fail;
	ev.data.u32 = 0;
	if (epoll_ctl(k->hold_efd, EPOLL_CTL_ADD, k->fd, &ev))
		goto fail;
	ev.data.u32 = 1;
	if (epoll_ctl(k->hold_efd, EPOLL_CTL_ADD, k->hold_tfd, &ev))
		goto fail;
	memset(&k->hold, 0, sizeof(k->hold));
	k->hold.period_ns = (uint64_t)us * 1000ull;
	return k->hold_efd;
fail:
	e = -errno;
	mrdp_pkt_hold_close(k);
	return e;
}

void mrdp_pkt_hold_close(struct mrdp_pkt *k)
{
	if (k->hold_efd >= 0)
		close(k->hold_efd);
	if (k->hold_tfd >= 0)
		close(k->hold_tfd);
	k->hold_efd = -1;
	k->hold_tfd = -1;
	k->hold.period_ns = 0;
	k->hold.held = 0;
}

/* The timer at the absolute time at (CLOCK_MONOTONIC ns, mrdp_now's);
 * 0 disarms. Setting it clears an expiry not read. */
static void timer_at(struct mrdp_pkt *k, uint64_t at)
{
	struct itimerspec its;

	memset(&its, 0, sizeof(its));
	its.it_value.tv_sec = (time_t)(at / 1000000000ull);
	its.it_value.tv_nsec = (long)(at % 1000000000ull);
	if (timerfd_settime(k->hold_tfd, TFD_TIMER_ABSTIME, &its, NULL))
		MRDP_LOG("net_mrpkt: hold timer: %s\n", strerror(errno));
}

static void socket_wakes(struct mrdp_pkt *k, int on)
{
	struct epoll_event ev = { .events = on ? EPOLLIN : 0, .data.u32 = 0 };

	if (epoll_ctl(k->hold_efd, EPOLL_CTL_MOD, k->fd, &ev))
		MRDP_LOG("net_mrpkt: hold: epoll_ctl: %s\n", strerror(errno));
}

void mrdp_pkt_rx_hold(struct mrdp_pkt *k, uint64_t now)
{
	switch (mrdp_pkt_hold_step(&k->hold, now)) {
	case MRDP_PKT_HOLD_NONE:
		return;
	case MRDP_PKT_HOLD_ENTER:
		/* A frame coming in between the ring's last look and this
		 * is in the ring: the timer takes it. */
		socket_wakes(k, 0);
		timer_at(k, k->hold.until);
		k->c->rx_hold_starts++;
		return;
	case MRDP_PKT_HOLD_REARM:
		timer_at(k, k->hold.until);
		k->c->rx_hold_periods++;
		return;
	case MRDP_PKT_HOLD_LEAVE:
		socket_wakes(k, 1);
		timer_at(k, 0);
		k->c->rx_hold_periods++;
		return;
	}
}
