/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A device: open/close, the lock, inline progress and the progress thread
 * with its adaptive idle sleep. No DPDK header here (mrdp_io.c and
 * mrdp_port.c hold the DPDK code).
 */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <time.h>

#include "mr_gid.h"
#include "mrdp_int.h"
#include "mrdp_pcap.h"

/* After the last work, poll without sleeping this long: a request and its
 * answer are microseconds apart, so a device in use stays hot. */
#define MRDP_SPIN_NS 200000ull
/* With a socket to sleep on (mrdp_wait.c), a frame wakes the thread, but
 * a wake costs 50-70 us on a loaded 2-core machine (tests/dp dp-echo
 * round trip p50 68 us with a 20 us spin against 12 us with 200 us), so
 * the spin stays; METAROCE_DP_SPIN_US overrides it. Its sleeps then last
 * until the next deadline, at most this long. */
#define MRDP_SPIN_FRAMES_NS MRDP_SPIN_NS
/* A yield that gave the CPU away past dp_spin_crowd_us found a thread
 * that wants our CPU for whole slices (a build, a nice 19 job: the
 * spare-CPU rule lets one such through). Each spin beside it loses a
 * slice while frames wait for the spinner, so none for this long. */
#define MRDP_SPIN_CROWD_HOLD_NS 100000000ull
#define MRDP_WAIT_MAX_NS 100000000ull
/* Then sleep, doubling from the first to the second figure; after a second
 * without work, up to the third: a wake costs 20-35 us on a loaded 2-core
 * machine, so 1000 wakes a second measured 2.2% of a core, 250 well under
 * 1%. The engine's deadlines still cut every sleep short. */
#define MRDP_SLEEP_MIN_NS 20000ull
#define MRDP_SLEEP_MAX_NS 1000000ull
#define MRDP_SLEEP_IDLE_NS 4000000ull
#define MRDP_IDLE_AFTER_NS 1000000000ull
/* An application that called mrdp_progress() this recently is polling
 * continuously (a poll_cq loop calls it every microsecond or so; one
 * post_send per round trip does not count); the thread then naps this
 * long between its own rounds. */
#define MRDP_INLINE_RECENT_NS 10000ull
#define MRDP_INLINE_NAP_NS 50000ull
/* The lease (mrdp_wait.c): an application whose last poll found nothing
 * and that has not polled for this long stopped polling without saying
 * so (no post, no completion, no req_notify_cq): the thread takes over.
 * It bounds what such an application's frames wait, and the thread wakes
 * once per this while an application waits in poll_cq (5,000 a second,
 * each a few us without the lock). */
#define MRDP_LEASE_GUARD_NS 200000ull
/* A lease starts once the application's polls have found nothing for
 * this long: a wait for an answer (a round trip is 15 us or more here),
 * not the gap between two bursts of a stream. */
#define MRDP_LEASE_AFTER_NS 5000ull
/* An application that called a verb this recently is in an exchange
 * (answer_round, exchange_sleep). */
#define MRDP_EXCHANGE_NS 1000000ull
/*
 * While an application is in an exchange, the thread's sleeps on its
 * sockets last at most this long (exchange_sleep), so every check that
 * the application would otherwise arm the thread's timer for from its
 * own verbs is already covered: a polling round's deferred transmit
 * (poll_round), a lease's guard (mrdp_polled), a post's engine deadline
 * later than this (tell_thread). Each of those was a timerfd_settime on
 * the application's path, 5-13 us on the test VM, one per iteration of
 * ib_write_lat, most of them between a completion and the application
 * seeing it, and each fired a real-time wake-up of the thread that found
 * nothing to do (bench/wire/FINDINGS.md 28-lat). The lease's guard:
 * the same bound.
 */
#define MRDP_EXCHANGE_CHECK_NS MRDP_LEASE_GUARD_NS
/* The progress thread's nice and slice, the spin when set, UDP checksums:
 * knobs (lib/devconf/mr_knobs.h), d->knobs. */

static pthread_mutex_t open_mu = PTHREAD_MUTEX_INITIALIZER;
static unsigned open_seq;
/* Names of the devices open in this process: the same device opened twice
 * would put two af_packet sockets of one fanout group on its interface
 * and each would see half the traffic. */
static char open_names[64][MR_DEVCONF_NAME_MAX];

uint64_t mrdp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void mrdp_lock(struct mrdp_dev *d)
{
	/* A dedicated poller (mrdp_busy.c) holds the lock almost always: it
	 * steps aside while someone waits. */
	if (d->busy_core >= 0) {
		atomic_fetch_add(&d->lock_wanted, 1);
		pthread_mutex_lock(&d->lock);
		atomic_fetch_sub(&d->lock_wanted, 1);
		return;
	}
	pthread_mutex_lock(&d->lock);
}

void mrdp_unlock(struct mrdp_dev *d)
{
	pthread_mutex_unlock(&d->lock);
}

uint32_t mrdp_local_ip(const struct mrdp_dev *d)
{
	return d->me.ip;
}

int mrdp_is_local(const struct mrdp_dev *d, uint32_t id)
{
	return id == d->me.ip || id == d->ll6_id ||
	       (d->me.has_ip6 && id == d->ip6_id);
}

struct mrdp_addrs *mrdp_dev_addrs(const struct mrdp_dev *d)
{
	return d->addrs;
}

unsigned mrdp_num_planes(const struct mrdp_dev *d)
{
	return d->nplanes;
}

/*
 * The `now` of a round, read with the lock held. Read before taking the
 * lock, a thread that waited for it would hand the engine a time earlier
 * than that of packets the lock holder just sent: RTT samples of
 * now - sent_at < 0 wrap to huge values (seen: srtt 22.9 s, pacing rate
 * 1 Mb/s, one 4 KiB packet every 33 ms in ib_write_bw). The engine's time
 * must never go backwards; the clamp keeps it so whatever the clock.
 */
uint64_t mrdp_locked_now(struct mrdp_dev *d)
{
	uint64_t t = mrdp_now();

	if (t < d->last_now)
		t = d->last_now;
	d->last_now = t;
	return t;
}

/* What an inline round is for (inline_round's flags). */
enum {
	/* The caller polls continuously (poll_cq): the thread naps off its
	 * sockets while it does (MRDP_INLINE_RECENT_NS). */
	ROUND_POLLING = 1,
	/* A completion this round pushes defers its transmit (mrdp_completed):
	 * the caller is about to see it and answer. */
	ROUND_DEFER = 2,
};

/* flags: ROUND_*; 0 for the round after a post. *deadline: the engine's
 * next deadline after the round (0: work is left for now, or the round
 * did not run). */
static int inline_round(struct mrdp_dev *d, unsigned flags, uint64_t *deadline,
			int *deferred)
{
	uint64_t now, t = mrdp_now();
	int n;

	*deadline = 0;
	if (deferred)
		*deferred = 0;
	/* For the progress thread's spin rule (spin_allowed). */
	atomic_store_explicit(&d->last_verb_ns, t, memory_order_relaxed);
	/* A dedicated poller does every round itself; so does a real-time
	 * progress thread with dp_inline=no (woken by every frame and every
	 * kick, it preempts at once): an application thread that runs
	 * rounds inline does the transmit system calls at its own (CFS)
	 * priority, and on a crowded machine posted one message per 0.4 ms
	 * while the progress thread was idle (FINDINGS 9.4). Not the default:
	 * a CQ polled by the application while the thread pushes into it
	 * cost ib_send_lat milliseconds. */
	if (d->busy_core >= 0 ||
	    (d->no_inline &&
	     atomic_load_explicit(&d->rt_class, memory_order_relaxed)))
		return 0;
	/* Only a polling caller sends the thread into its naps: after a
	 * post_send the application may spin on its memory (ib_write_lat,
	 * NCCL's proxy) and the thread must then sleep on the sockets in
	 * SCHED_FIFO, ready for the answer. */
	if (flags & ROUND_POLLING)
		atomic_store_explicit(&d->last_inline_ns, t,
				      memory_order_relaxed);
	if (pthread_mutex_trylock(&d->lock) != 0) {
		/* A real-time progress thread holding the lock is running (no
		 * CFS thread preempts it) and loops while it has work; work
		 * just posted kicks it (mrdp_kick). Kicking it here too, at
		 * every failed try of a poll_cq loop, kept it in rounds
		 * without work and the application failing its tries: a
		 * livelock measured as ib_send_lat 4 ms typical. */
		if (atomic_load_explicit(&d->rt_class, memory_order_relaxed))
			return 0;
		/* The progress thread holds the lock, maybe past its transmit
		 * step: make it run another round before it sleeps, so work
		 * just posted goes out now. */
		atomic_store(&d->kicked, 1);
		/* The holder may be a thread the scheduler put aside: give
		 * it the CPU rather than spin against it. */
		sched_yield();
		return 0;
	}
	now = mrdp_locked_now(d);
	d->round_poll = (flags & ROUND_DEFER) != 0;
	n = mrdp_io_round(d, now);
	d->round_poll = 0;
	if (n)
		d->inline_rounds++;
	*deadline = mrdp_io_pending(d) ? 0 : mrdp_io_next_deadline(d);
	if (*deadline <= now)
		*deadline = 0;
	if (deferred)
		*deferred = atomic_load_explicit(&d->tx_deferred,
						 memory_order_relaxed);
	pthread_mutex_unlock(&d->lock);
	return n;
}

/*
 * After an inline round that ran: what the progress thread needs to know.
 * Work left for now (pacing, a port's backlog, a deferred transmit):
 * kick it. Otherwise only the engine's next deadline matters, and a
 * sleeping thread wakes at its own deadline or at a frame: if the new
 * deadline is earlier, move its wake (a timer, one system call) rather
 * than wake it now. Waking it after every post_send (an eventfd write)
 * cost a context switch and a round of the thread on the core the
 * application then wanted, 5 us scheduling delay on the same core and
 * 16 us across cores on the test VM, per message (docs/cost-budget.md,
 * "One round trip").
 */
static void tell_thread(struct mrdp_dev *d, uint64_t deadline, int hint)
{
	uint64_t until;

	/* A thread with no socket to sleep on (timed sleeps, backing off to
	 * 1 ms) sees no frame arrive: the kick is still its only wakeup. */
	if (!deadline || !d->has_thread || !mrdp_wait_on_frames(d)) {
		mrdp_kick(d);
		return;
	}
	if (atomic_load(&d->napping) && !d->no_inline)
		return; /* it looks again within MRDP_INLINE_NAP_NS */
	/* Paired with idle_sleep()'s store of sleep_until then load of
	 * kicked: an awake thread runs one more round (and sees the new
	 * deadline), an asleep one has published when it wakes. */
	atomic_store(&d->kicked, 1);
	until = atomic_load(&d->sleep_until);
	if (!until || deadline >= until)
		return;
	mrdp_wait_rearm(d, deadline);
	/* A deferred transmit's check (hint) is no deadline of the engine:
	 * a thread that finds it served sleeps on (progress_main). */
	if (hint)
		return;
	/* Lower the published wake so that later posts need not rearm for
	 * a deadline already covered (a racing thread that woke and slept
	 * again publishes its own; the timer only ever fires early). */
	while (deadline < until &&
	       !atomic_compare_exchange_weak(&d->sleep_until, &until, deadline))
		;
}

static int poll_round(struct mrdp_dev *d, unsigned flags)
{
	uint64_t deadline;
	int deferred, n;

	/* A poll of an armed CQ: the application blocks on its channel
	 * next, it does not spin (spin_allowed). */
	if (atomic_load_explicit(&d->chan_armed, memory_order_relaxed) !=
	    !(flags & ROUND_POLLING))
		atomic_store_explicit(&d->chan_armed, !(flags & ROUND_POLLING),
				      memory_order_relaxed);
	if (atomic_load_explicit(&d->app_polling, memory_order_relaxed) !=
	    !!(flags & ROUND_POLLING))
		atomic_store_explicit(&d->app_polling, !!(flags & ROUND_POLLING),
				      memory_order_relaxed);
	n = inline_round(d, flags, &deadline, &deferred);

	/* A polling application's rounds serve what they leave (it polls
	 * again within microseconds), except a transmit it deferred while
	 * the thread sleeps: the thread must send it if the application
	 * does not, but not now (an immediate kick woke it to race the
	 * application's own post_send for the lock): within the exchange's
	 * check, which the sleeping thread's own bound already covers
	 * (exchange_sleep), so nothing is armed here. */
	if (deferred) {
		uint64_t t = mrdp_now();

		atomic_store_explicit(&d->defer_ns, t, memory_order_relaxed);
		tell_thread(d, t + MRDP_EXCHANGE_CHECK_NS, 1);
	}
	return n;
}

int mrdp_progress(struct mrdp_dev *d)
{
	return poll_round(d, ROUND_POLLING | ROUND_DEFER);
}

int mrdp_progress_cq(struct mrdp_dev *d, int armed)
{
	/* A CQ armed for its channel's event: the application checks it
	 * before it blocks in ibv_get_cq_event (the verbs idiom: arm, poll,
	 * wait). It is not polling continuously, so the thread must not nap
	 * off its sockets: the frame the application will wait for has
	 * nobody else to take it. Counted as polling, qperf rc_lat's poll
	 * after every event sent the thread into a 50 us nap just before
	 * the answer arrived. */
	return poll_round(d, armed ? ROUND_DEFER : ROUND_POLLING | ROUND_DEFER);
}

void mrdp_posted(struct mrdp_dev *d)
{
	uint64_t deadline;

	if (d->busy_core >= 0) {
		mrdp_kick(d);
		return;
	}
	/* The poster may spin on its memory now: frames wake the thread. */
	atomic_store_explicit(&d->app_polling, 0, memory_order_relaxed);
	atomic_store_explicit(&d->app_waits, 0, memory_order_relaxed);
	/* An answer (answer_round): its round sends what a hold left. */
	atomic_store_explicit(&d->last_post_ns, mrdp_now(),
			      memory_order_relaxed);
	if (atomic_load_explicit(&d->hold_unanswered, memory_order_relaxed))
		atomic_store_explicit(&d->hold_unanswered, 0,
				      memory_order_relaxed);
	(void)mrdp_wait_lease(d, 0);
	(void)inline_round(d, 0, &deadline, NULL);
	tell_thread(d, deadline, 0);
}

void mrdp_polled(struct mrdp_dev *d, int got)
{
	/* -1: nothing, on a CQ of sends (mrdp.h). */
	const int waits = got < 0;

	if (waits)
		got = 0;
	/* A completion: the application may spin on its memory next
	 * (ib_write_lat) rather than poll again; a napping thread takes
	 * over at its nap's end unless it polls again by then. (Moving the
	 * nap's end to 10 us from now, a timer wake-up per completion, made
	 * ib_write_lat 169 against 81 us typical at load 9.) */
	if (got && atomic_load_explicit(&d->app_polling, memory_order_relaxed))
		atomic_store_explicit(&d->app_polling, 0, memory_order_relaxed);
	/* dp_inline=no: the application's rounds do not receive. */
	if (d->lease_fd < 0 || d->no_inline)
		return;
	if (atomic_load_explicit(&d->app_waits, memory_order_relaxed) != waits)
		atomic_store_explicit(&d->app_waits, waits,
				      memory_order_relaxed);
	/* Polling again after the completion that ended a lease: the
	 * application did not go away, the thread may nap again. */
	if (atomic_load_explicit(&d->lease_done, memory_order_relaxed))
		atomic_store_explicit(&d->lease_done, 0, memory_order_relaxed);
	if (!got) {
		uint64_t until, guard, now, since;

		/* Waiting: our own rounds receive; the thread sleeps on. Only
		 * a wait, not the gap between two bursts of a stream: a lease
		 * at every empty poll (two epoll_ctl per gap) measured
		 * ib_send_bw 1.02 / 0.90 against 1.25 / 1.23 Gb/s at load 11
		 * (FINDINGS 14). mrdp_progress() just stamped the time. */
		now = atomic_load_explicit(&d->last_inline_ns,
					   memory_order_relaxed);
		since = atomic_load_explicit(&d->empty_since,
					     memory_order_relaxed);
		if (!since) {
			atomic_store_explicit(&d->empty_since, now ? now : 1,
					      memory_order_relaxed);
			return;
		}
		if ((int64_t)(now - since) < (int64_t)MRDP_LEASE_AFTER_NS)
			return;
		/* A thread asleep for longer than the guard must look by
		 * then (in case we leave without a word). */
		if (!mrdp_wait_lease(d, 1))
			return;
		atomic_store_explicit(&d->lease_done, 0, memory_order_relaxed);
		guard = mrdp_now() + MRDP_LEASE_GUARD_NS;
		until = atomic_load(&d->sleep_until);
		if (!until || until <= guard || atomic_load(&d->napping))
			return;
		mrdp_wait_rearm(d, guard);
		/* Published lower too: woken by that timer, the thread must
		 * not take it for a deferred transmit's check and sleep on
		 * to its old wake (progress_main) with the sockets off. */
		while (guard < until &&
		       !atomic_compare_exchange_weak(&d->sleep_until, &until,
						     guard))
			;
		return;
	}
	/* A completion: the application may now spin on its memory
	 * (ib_write_lat) and the next frame is the thread's to take. A
	 * thread napping without its sockets (MRDP_INLINE_NAP_NS) would
	 * take it only at the nap's end: wake it. */
	if (atomic_load_explicit(&d->empty_since, memory_order_relaxed))
		atomic_store_explicit(&d->empty_since, 0,
				      memory_order_relaxed);
	if (!mrdp_wait_lease(d, 0))
		return;
	atomic_store_explicit(&d->lease_done, 1, memory_order_relaxed);
	if (atomic_load(&d->napping)) {
		atomic_store_explicit(&d->last_inline_ns, 0,
				      memory_order_relaxed);
		mrdp_wait_wake(d);
	}
}

void mrdp_kick(struct mrdp_dev *d)
{
	/* Paired with the sleeper's store of sleeping then load of kicked
	 * (both seq_cst): one of the two sides sees the other, and the
	 * eventfd stays readable until the sleeper drains it. */
	/* A thread napping while the application polls looks again within
	 * MRDP_INLINE_NAP_NS and takes over if the polling stopped: waking
	 * it for every post_send (ib_write_bw: 18,000 a second) cost a
	 * context switch and a fight for the lock each time. */
	if (atomic_load(&d->napping) && !d->no_inline)
		return;
	atomic_store(&d->kicked, 1);
	if (atomic_load(&d->sleeping))
		mrdp_wait_wake(d);
}

void mrdp_settle(struct mrdp_dev *d)
{
	if (!atomic_load_explicit(&d->tx_deferred, memory_order_relaxed))
		return;
	mrdp_lock(d);
	if (atomic_load_explicit(&d->tx_deferred, memory_order_relaxed))
		(void)mrdp_io_round(d, mrdp_locked_now(d));
	mrdp_unlock(d);
}

void mrdp_completed(struct mrdp_dev *d)
{
	d->round_completed = 1;
}

void mrdp_placed(struct mrdp_dev *d)
{
	if (d->round_place_defer)
		d->round_completed = 1;
}

void mrdp_handoff(struct mrdp_dev *d)
{
	atomic_store_explicit(&d->chan_armed, 1, memory_order_relaxed);
	atomic_store_explicit(&d->app_polling, 0, memory_order_relaxed);
	atomic_store_explicit(&d->app_waits, 0, memory_order_relaxed);
	(void)mrdp_wait_lease(d, 0);
	atomic_store_explicit(&d->last_inline_ns, 0, memory_order_relaxed);
	/* Paired with idle_sleep_until()'s store of sleeping then load of
	 * kicked: a thread about to nap does not, one napping is woken. */
	atomic_store(&d->kicked, 1);
	/* Only a thread that would not see the frame the application now
	 * waits for needs the wake: one napping off its sockets, or one
	 * with timed sleeps. A thread asleep on its sockets (ending the
	 * lease above turned them back on) is woken by that frame; waking
	 * it here as well (an eventfd write at every req_notify_cq) cost
	 * qperf rc_lat a context switch and an empty round of the thread
	 * per message on its application's core (docs/cost-budget.md). */
	if (atomic_load(&d->sleeping) &&
	    (atomic_load(&d->napping) || !mrdp_wait_on_frames(d)))
		mrdp_wait_wake(d);
}

int mrdp_resolve(struct mrdp_dev *d, uint32_t ip, uint8_t mac[6])
{
	int ret;

	pthread_mutex_lock(&d->lock);
	ret = mrdp_io_resolve(d, ip, mac, mrdp_locked_now(d));
	pthread_mutex_unlock(&d->lock);
	if (ret == 0)
		mrdp_kick(d);
	return ret;
}

void mrdp_get_counters(struct mrdp_dev *d, struct mrdp_counters *out)
{
	pthread_mutex_lock(&d->lock);
	mrdp_snapshot(d, out);
	pthread_mutex_unlock(&d->lock);
}

/* frames: also wake when a frame arrives (mrdp_wait.c). Returns what
 * woke it (MRDP_WOKE_*, -1: did not sleep); *until: its published wake
 * time as posters may have lowered it. */
static int idle_sleep_until(struct mrdp_dev *d, uint64_t ns, int frames,
			    uint64_t *until)
{
	int woke = -1;

	/* When we wake by ourselves, for tell_thread(): before kicked is
	 * read (both seq_cst). */
	atomic_store(&d->sleep_until, mrdp_now() + ns);
	atomic_store(&d->sleeping, 1);
	if (!atomic_load(&d->kicked) && !atomic_load(&d->stop))
		woke = mrdp_wait(d, ns, frames);
	*until = atomic_exchange(&d->sleep_until, 0);
	atomic_store(&d->sleeping, 0);
	atomic_store(&d->kicked, 0);
	d->sleeps++;
	if (woke >= 0) {
		d->wake_frame += (woke & MRDP_WOKE_FRAME) != 0;
		d->wake_kick += (woke & MRDP_WOKE_KICK) != 0;
		d->wake_timer += (woke & MRDP_WOKE_TIMER) != 0 || !woke;
	}
	return woke;
}

static void idle_sleep(struct mrdp_dev *d, uint64_t ns, int frames)
{
	uint64_t until;

	(void)idle_sleep_until(d, ns, frames, &until);
}

/*
 * The spin after work, for both classes: a request and its answer are
 * microseconds apart, and a thread still on its CPU takes the next frame
 * with no wake-up at all, where a sleeping one pays the scheduler's
 * wake-up (cost-budget.md: 6 us from the same CPU, 54 us p50 from the
 * other at load 11). It spins in SCHED_OTHER at the application's nice
 * with sched_yield, so it never keeps a CPU from anyone who wants it;
 * then it sleeps (real-time where allowed, so a frame's wake-up
 * preempts). Three cases where a spin costs more than the wake-up it
 * saves, each cut by one rule:
 * - no spare CPU (dp_spin_spare_cpu): more threads runnable on the
 *   machine than its CPUs plus one; checked before each yield, since the
 *   yield would give the CPU to one of them for a slice and frames wait
 *   for the spinner meanwhile (mrdp_wait_runnable);
 * - an application that may spin on its memory (ib_write_lat, NCCL's
 *   proxy): it called a verb recently (dp_spin_memory_ms) and has not
 *   armed a channel (one that polls has the thread napping instead:
 *   app_polls). A CFS spinner beside it gets its CPU back only when its
 *   slice ends (ib_write_lat 2,000 us typical with dp_rtprio=0; with the
 *   spin allowed for 10 us after each verb, 178-1,999 against 83-88 at
 *   load 10-14): the thread sleeps at once instead, and the frame's
 *   real-time wake-up preempts the application;
 * - a crowded CPU: a sched_yield that gave the CPU away for longer than
 *   dp_spin_crowd_us says others want it; the spin ends until the next
 *   work (with it, four ib_write_bw pairs and a crowded machine do not
 *   lose their CPU time to spinners).
 */
static int spin_allowed(struct mrdp_dev *d, uint64_t now, uint64_t memory_ns)
{
	uint64_t verb;

	if (!memory_ns ||
	    atomic_load_explicit(&d->chan_armed, memory_order_relaxed))
		return 1;
	verb = atomic_load_explicit(&d->last_verb_ns, memory_order_relaxed);
	/* Signed: a verb stamped after our `now` was read is recent. */
	if (!verb || (int64_t)(now - verb) >= (int64_t)memory_ns)
		return 1;
	d->spin_cut_memory++;
	return 0;
}

/*
 * Is an application thread polling its CQ (so its own rounds take every
 * frame and the thread naps off its sockets)? Its last poll was within
 * MRDP_INLINE_RECENT_NS, or its last word was an empty poll of an
 * unarmed CQ (app_polling) within dp_poll_guard_us. Time alone misjudged
 * it whenever the thread and the application share a CPU: the thread
 * runs only while the application does not, so the application always
 * looked silent for more than 10 us, the thread slept on its sockets in
 * SCHED_FIFO and every frame's wake-up preempted the polling
 * application (ib_send_lat: 0.7 frame wake-ups per iteration, 83-87 us
 * typical against 6-7 with no real-time thread at all). The guard
 * bounds what a descheduled or departed application's frames wait.
 */
static int app_polls(struct mrdp_dev *d, uint64_t now, uint64_t guard_ns)
{
	int64_t ago = (int64_t)(now - atomic_load_explicit(&d->last_inline_ns,
							   memory_order_relaxed));

	/* Waiting on a CQ that leases: the thread sleeps on its sockets in
	 * SCHED_FIFO until the lease (5 us) turns them off. A nap in
	 * SCHED_OTHER was the wrong place to be at the wait's end: woken by
	 * the completion's hand-back it preempted the application just as
	 * it was to answer (23 us of a 50 us one-way), and demoted beside an
	 * application spinning on memory it waited for a tick (1-4 ms) with
	 * the next frame in its socket (bench/wire/FINDINGS.md 25). */
	if (atomic_load_explicit(&d->app_waits, memory_order_relaxed))
		return 0;
	if (ago < (int64_t)MRDP_INLINE_RECENT_NS)
		return 1;
	return guard_ns && ago < (int64_t)guard_ns &&
	       atomic_load_explicit(&d->app_polling, memory_order_relaxed);
}

/* The CPUs this thread may run on (the spare-CPU rule counts runnable
 * threads of the whole machine against them: fewer allowed than online
 * makes the rule stricter, never looser). */
static int spin_cpus(void)
{
	cpu_set_t set;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	int n = 1;

	if (sched_getaffinity(0, sizeof(set), &set) == 0)
		n = CPU_COUNT(&set);
	if (online > 0 && online < n)
		n = (int)online;
	return n > 0 ? n : 1;
}

static uint64_t spin_time(const struct mrdp_dev *d, int frames)
{
	if (d->knobs.src[MR_KNOB_DP_SPIN_US] != MR_KNOB_SRC_DEFAULT)
		return (uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_SPIN_US) *
		       1000ull;
	return frames ? MRDP_SPIN_FRAMES_NS : MRDP_SPIN_NS;
}

/* EEVDF (Linux 6.6+) lets a running thread finish its slice (0.75 ms x
 * (1 + log2 CPUs)) before a woken one preempts it, unless the woken one
 * asks for a shorter slice (6.12+, sched_attr.sched_runtime for
 * SCHED_OTHER; no privilege needed). METAROCE_DP_SLICE_US=100 asks for
 * a 100 us slice. Off by default: on 2 vCPUs (kernel 6.18) it did not
 * lower ib_write_lat measurably and made the lib/dp round trip worse in
 * some runs (FINDINGS section 8); older kernels refuse the call. */
static void progress_slice(const struct mrdp_dev *d)
{
	struct {
		uint32_t size;
		uint32_t sched_policy;
		uint64_t sched_flags;
		int32_t sched_nice;
		uint32_t sched_priority;
		uint64_t sched_runtime;
		uint64_t sched_deadline;
		uint64_t sched_period;
	} a;
	uint64_t us = (uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_SLICE_US);

	if (!us)
		return;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_OTHER;
	/* Keep the nice value set just before. */
	a.sched_nice = getpriority(PRIO_PROCESS, (id_t)gettid());
	a.sched_runtime = (uint64_t)us * 1000;
	(void)syscall(SYS_sched_setattr, 0, &a, 0);
}

/* The progress thread plays the NIC: when a frame arrives it must get the
 * core even from an application thread that spins on its memory
 * (ib_write_lat), so it sleeps at a higher weight (nice) and a woken
 * sleeper preempts. But while it spins (MRDP_SPIN_NS after work) it must
 * not take the core from that application, so it spins at the nice it
 * was given. Measured on 2 vCPUs: spinning at nice -10 made ib_write_lat
 * 1.9 ms typical, sleeping at nice 0 157 us, switching 73 us (FINDINGS
 * section 8). Raising the weight needs CAP_SYS_NICE or RLIMIT_NICE;
 * without them the thread keeps the application's priority
 * (METAROCE_DP_NICE=0 asks for that). */
struct progress_prio {
	pid_t tid;
	int base, wake, cur;
	int ok; /* the wake value could be set */
	int rt; /* SCHED_FIFO allowed: woken, it preempts at once; spins in
		 * SCHED_OTHER */
	int fifo; /* in SCHED_FIFO now (else SCHED_OTHER) */
	int rtprio;
};

/* The progress thread sleeps on its sockets in SCHED_FIFO (a frame's
 * wakeup preempts at once) but naps in SCHED_OTHER while an application
 * polls inline: a real-time thread waking from its 50 us naps preempted
 * the polling application 20,000 times a second, and on a crowded machine
 * each preemption could hand the core to another process for a tick
 * (ib_send_lat 6-8 ms typical against 42-48 us). One system call per
 * change of state, not per round. d->rt_class tells mrdp_progress(). */
static void class_set(struct mrdp_dev *d, struct progress_prio *pr, int fifo)
{
	struct sched_param sp = { .sched_priority = fifo ? pr->rtprio : 0 };

	if (!pr->rt || pr->fifo == fifo)
		return;
	if (sched_setscheduler(0,
			       (fifo ? SCHED_FIFO : SCHED_OTHER) |
				       SCHED_RESET_ON_FORK,
			       &sp) == 0) {
		pr->fifo = fifo;
		atomic_store_explicit(&d->rt_class, fifo,
				      memory_order_relaxed);
	}
}

static void prio_set(struct progress_prio *pr, int want)
{
	if (pr->ok && pr->cur != want &&
	    setpriority(PRIO_PROCESS, (id_t)pr->tid, want) == 0)
		pr->cur = want;
}

/* The real-time class for the progress thread (SCHED_FIFO at a low
 * priority): a frame's wakeup then preempts whatever CFS thread runs on
 * the core at once, instead of at the running thread's next tick (HZ=250:
 * 4 ms). Measured in bench/wire (FINDINGS section 9): with nice -10 the
 * hops of an ib_write_bw start-up landed on 4 ms tick boundaries, each
 * round trip of a window 8-20 ms; SCHED_FIFO 1 made them 0.5-1 ms on the
 * same loaded machine. The cost is known: a thread that runs only when
 * there is work, one wakeup (context switch) per burst of frames, and its
 * spin after work in SCHED_OTHER with sched_yield where a CPU is spare
 * (a spinning real-time thread would take the core from the
 * application). Needs CAP_SYS_NICE or RLIMIT_RTPRIO; without them (or
 * with METAROCE_DP_RTPRIO=0) the thread uses the nice/spin scheme below. */
static int progress_rt(const struct mrdp_dev *d)
{
	long v = (long)mr_knob_get(&d->knobs, MR_KNOB_DP_RTPRIO);
	struct sched_param sp;

	if (!v)
		return 0;
	memset(&sp, 0, sizeof(sp));
	sp.sched_priority = (int)v;
	/* SCHED_RESET_ON_FORK: a child the application forks from this
	 * thread (none should) would not inherit the class. */
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp)) {
		MRDP_LOG("SCHED_FIFO %ld refused (%s): nice and spin\n", v,
			 strerror(errno));
		return 0;
	}
	MRDP_LOG("progress thread at SCHED_FIFO %ld\n", v);
	return 1;
}

static void progress_priority(const struct mrdp_dev *d,
			      struct progress_prio *pr)
{
	long v = (long)mr_knob_get(&d->knobs, MR_KNOB_DP_NICE);

	memset(pr, 0, sizeof(*pr));
	pr->tid = gettid();
	pr->rt = progress_rt(d);
	if (pr->rt) {
		pr->fifo = 1;
		pr->rtprio = (int)mr_knob_get(&d->knobs, MR_KNOB_DP_RTPRIO);
		return;
	}
	errno = 0;
	pr->base = getpriority(PRIO_PROCESS, (id_t)pr->tid);
	if (errno)
		pr->base = 0;
	pr->cur = pr->base;
	pr->wake = (int)v;
	pr->ok = v != pr->base &&
		 setpriority(PRIO_PROCESS, (id_t)pr->tid, (int)v) == 0;
	if (pr->ok)
		pr->cur = (int)v;
	progress_slice(d);
}

/* dp_cpu: the progress thread on a CPU of its own choosing. On 2 vCPUs a
 * spinning sender's throughput followed its share of its CPU, and a
 * real-time progress thread (its own or its peer's) woken there at every
 * frame preempted it 40,000-90,000 times in 5 s; the progress threads on
 * one CPU and the applications on the other (taskset) moved 1.1-1.6 x
 * more (bench/wire/FINDINGS.md 22). A placement, so opt-in. */
static void progress_cpu(const struct mrdp_dev *d)
{
	long v = (long)mr_knob_get(&d->knobs, MR_KNOB_DP_CPU);
	cpu_set_t one;

	if (v < 0)
		return;
	CPU_ZERO(&one);
	CPU_SET((int)v, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one))
		MRDP_LOG("%s: dp_cpu %ld refused: the thread stays where it "
			 "was\n", d->conf.name, v);
}

/*
 * The progress thread's round, with the answer hold: when the
 * application is in an exchange (it posted within MRDP_EXCHANGE_NS and
 * armed no channel), a round that placed data in its memory leaves its
 * transmit step as a polling round that pushed a completion does
 * (mrdp_completed, mrdp_io.c): an application spinning on that memory
 * (ib_write_lat, NCCL's proxy) sees it and posts its answer, whose
 * round sends the ACK with it in one transmit call. Sent at once, the
 * ACK cost the answer a transmit call on the critical path (10-20 us,
 * the thread holding the application's CPU meanwhile), and the peer got
 * the ACK and the answer apart: its polling application took the ACK's
 * completion, went back to spinning on memory, and its thread had to be
 * woken for the answer and send its own ACK alone, every one-way
 * (docs/cost-budget.md, "The memory-spinning one-way"). Together they
 * land in one round of the peer's polling application, which then
 * defers its own ACK to its answer: no progress thread on the way.
 * Returns 1 if the transmit was left (the caller sleeps up to the hold;
 * a deferral of the application's own still younger than the hold is
 * taken over, so ACK and answer pair up again after a split); *n: the
 * round's work. Lock held.
 */
static int answer_round(struct mrdp_dev *d, uint64_t now, uint64_t answer_ns,
			int *n)
{
	uint64_t post = atomic_load_explicit(&d->last_post_ns,
					     memory_order_relaxed);
	int hold = answer_ns && post &&
		   (int64_t)(now - post) < (int64_t)MRDP_EXCHANGE_NS &&
		   !atomic_load_explicit(&d->chan_armed, memory_order_relaxed) &&
		   !atomic_load_explicit(&d->hold_unanswered,
					 memory_order_relaxed);

	if (hold && atomic_load_explicit(&d->tx_deferred,
					 memory_order_relaxed)) {
		uint64_t since = atomic_load_explicit(&d->defer_ns,
						      memory_order_relaxed);

		if (post >= since) {
			/* Answered, but its round found the lock ours. */
			hold = 0;
		} else if (since != d->hold_stamp) {
			/* The application's own deferral (its poll took a
			 * completion): taken over, once. */
			d->hold_first = now;
		} else if (now - d->hold_first >= answer_ns) {
			/* Ours, and nobody answered: no hold until the next
			 * post (a one-way stream's ACKs must not wait). */
			atomic_store_explicit(&d->hold_unanswered, 1,
					      memory_order_relaxed);
			d->answer_expired++;
			hold = 0;
		}
	} else if (hold) {
		d->hold_first = now;
	}
	if (!hold) {
		*n = mrdp_io_round(d, now);
		return 0;
	}
	atomic_store_explicit(&d->tx_deferred, 0, memory_order_relaxed);
	d->round_poll = 1;
	d->round_place_defer = 1;
	*n = mrdp_io_round(d, now);
	d->round_poll = 0;
	d->round_place_defer = 0;
	if (!atomic_load_explicit(&d->tx_deferred, memory_order_relaxed))
		return 0;
	d->hold_stamp = now;
	atomic_store_explicit(&d->defer_ns, now, memory_order_relaxed);
	return 1;
}

/*
 * The thread's sleep after a round without work: ns at most, until the
 * engine's deadline (absolute; the round's, under the lock), a frame or
 * a kick. Woken by the check of a deferred transmit alone (tell_thread)
 * that the application has served since: no round (it would block on
 * the lock of the application's own rounds), sleep on to our wake. In
 * an exchange (a verb within MRDP_EXCHANGE_NS) on a port with frames to
 * wake it, each sleep lasts at most MRDP_EXCHANGE_CHECK_NS, so the
 * application's checks need no timer of their own (tell_thread finds
 * the published wake earlier than theirs); at that bound's end with no
 * deferred transmit, no engine deadline due (read with a trylock: a
 * holder is an application's round, which serves its deadlines) and
 * the wake not lowered by anyone, it sleeps on without a round.
 */
static void exchange_sleep(struct mrdp_dev *d, uint64_t now, uint64_t ns,
			   uint64_t deadline, int frames)
{
	for (;;) {
		uint64_t until, t, planned;
		int woke, capped = 0;

		if (frames && ns > MRDP_EXCHANGE_CHECK_NS &&
		    (int64_t)(now -
			      atomic_load_explicit(&d->last_verb_ns,
						   memory_order_relaxed)) <
			    (int64_t)MRDP_EXCHANGE_NS) {
			ns = MRDP_EXCHANGE_CHECK_NS;
			capped = 1;
		}
		planned = now + ns;
		woke = idle_sleep_until(d, ns, frames, &until);
		if (woke != MRDP_WOKE_TIMER ||
		    atomic_load_explicit(&d->tx_deferred, memory_order_relaxed))
			return;
		t = mrdp_now();
		if (t + MRDP_SLEEP_MIN_NS < until) {
			/* An early check: on to our wake. */
			ns = until - t;
			now = t;
			continue;
		}
		/* Our own wake: the engine's deadline, the stats file's, or a
		 * wake someone lowered: a round. */
		if (!capped || until < planned)
			return;
		if (pthread_mutex_trylock(&d->lock) == 0) {
			deadline = mrdp_io_next_deadline(d);
			pthread_mutex_unlock(&d->lock);
		}
		if (deadline <= t + MRDP_SLEEP_MIN_NS ||
		    (d->has_stats && d->next_stats_ns <= t + MRDP_SLEEP_MIN_NS))
			return;
		ns = deadline - t;
		if (d->has_stats && d->next_stats_ns - t < ns)
			ns = d->next_stats_ns - t;
		now = t;
	}
}

static void *progress_main(void *arg)
{
	struct mrdp_dev *d = arg;
	uint64_t last_work = mrdp_now(), backoff = MRDP_SLEEP_MIN_NS;
	struct progress_prio pr;
	const int frames = mrdp_wait_on_frames(d);
	uint64_t spin_ns, spin_cut = 0;
	const uint64_t poll_guard_ns =
		(uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_POLL_GUARD_US) *
		1000ull;
	const uint64_t memory_ns =
		(uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_SPIN_MEMORY_MS) *
		1000000ull;
	const uint64_t crowd_ns =
		(uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_SPIN_CROWD_US) *
		1000ull;
	/* The spare-CPU rule (mrdp_wait_runnable): at most one runnable
	 * thread more than our CPUs (an application our completion just
	 * woke, about to block again; a napping thread's look). */
	const int load_fd =
		mr_knob_get(&d->knobs, MR_KNOB_DP_SPIN_SPARE_CPU)
			? mrdp_wait_load_open()
			: -1;
	const int spare_max = spin_cpus() + 1;
	uint64_t spin_off_until = 0;
	const uint64_t answer_ns =
		(uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_ANSWER_HOLD_US) *
		1000ull;
	char tname[16];

	/* Thread names hold 15 characters. */
	snprintf(tname, sizeof(tname), "mrdp-%.10s", d->conf.name);
	pthread_setname_np(pthread_self(), tname);
	/* Short sleeps must be short: the default 50 us slack would make
	 * every idle sleep at least that. */
	prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
	progress_priority(d, &pr);
	progress_cpu(d);
	atomic_store(&d->rt_class, pr.fifo);
	/* A real-time thread spins too (in SCHED_OTHER, spin_allowed): on
	 * a quiet host its sleep after each answer made the next frame pay
	 * a cross-CPU wake-up (ib_read_lat 35-49 us typical against 16-24
	 * with the spin, udp_lat 12-18; FINDINGS 19). Without the
	 * spare-CPU rule it took half of ib_write_bw's rate under load (a
	 * runnable CFS thread waits for a slice where a sleeping real-time
	 * one is run at once; FINDINGS 18.3), so that rule goes first. */
	spin_ns = spin_time(d, frames);
	while (!atomic_load(&d->stop)) {
		uint64_t now = mrdp_now(), deadline;
		int n, spin, held;

		/* Before the nap below: the counters file must stay current
		 * while an application polls inline. */
		if (d->has_stats && now >= d->next_stats_ns) {
			mrdp_stats_write(d);
			d->next_stats_ns = now + MRDP_STATS_PERIOD_NS;
		}

		/* Leased (mrdp_wait.c): an application waits in poll_cq and
		 * its rounds receive; the planes' sockets are off in our
		 * poll set, so sleep (real-time, ready for the frame after
		 * the lease ends) until a kick, a frame once the lease ended
		 * with one waiting, or the guard; no lock, no round. An
		 * application silent past the guard has stopped polling: end
		 * the lease and take over. */
		if (atomic_load(&d->leased) && !atomic_load(&d->kicked)) {
			uint64_t last = atomic_load_explicit(
				&d->last_inline_ns, memory_order_relaxed);
			uint64_t until;
			int woke;

			if ((int64_t)(now - last) < (int64_t)MRDP_LEASE_GUARD_NS) {
				prio_set(&pr, pr.wake);
				class_set(d, &pr, 1);
				woke = idle_sleep_until(
					d, last + MRDP_LEASE_GUARD_NS - now,
					frames, &until);
				d->lease_sleeps++;
				if (woke >= 0 &&
				    !(woke & (MRDP_WOKE_KICK | MRDP_WOKE_FRAME)))
					continue;
			} else if (mrdp_wait_lease(d, 0)) {
				d->lease_expired++;
			}
		}
		/* No nap right after a poll that ended a lease with a
		 * completion (until the application polls again): it may spin
		 * on its memory now and the next frame would wait for the
		 * nap's end; the thread sleeps on its sockets instead. */
		const int may_nap =
			!(pr.rt && d->no_inline) &&
			!atomic_load_explicit(&d->lease_done,
					      memory_order_relaxed);

		/* An application thread polling continuously does the rounds
		 * itself. Taking the lock here too would let the scheduler
		 * preempt us while we hold it, and the application would
		 * then spin on a busy lock for whole time slices (seen: the
		 * ib_write_bw client at 100% CPU moving 3 MB/s). */
		if (may_nap && !atomic_load(&d->kicked) &&
		    app_polls(d, now, poll_guard_ns)) {
			atomic_store(&d->napping, 1);
			class_set(d, &pr, 0);
			idle_sleep(d, MRDP_INLINE_NAP_NS, 0);
			atomic_store(&d->napping, 0);
			continue;
		}
		pthread_mutex_lock(&d->lock);
		now = mrdp_locked_now(d);
		held = answer_round(d, now, answer_ns, &n);
		deadline = mrdp_io_next_deadline(d);
		pthread_mutex_unlock(&d->lock);
		if (held) {
			/* Real-time, on the sockets, to the hold's end: the
			 * answer's post sends the ACK (its round), a frame or
			 * a kick makes us look again (answer_round). */
			uint64_t until, ns = d->hold_first + answer_ns - now;

			d->answer_holds++;
			last_work = now;
			backoff = MRDP_SLEEP_MIN_NS;
			if (deadline > now && deadline - now < ns)
				ns = deadline - now;
			prio_set(&pr, pr.wake);
			class_set(d, &pr, 1);
			(void)idle_sleep_until(d, ns, frames, &until);
			continue;
		}
		if (n) {
			last_work = now;
			backoff = MRDP_SLEEP_MIN_NS;
			continue;
		}
		{
			uint64_t lw = atomic_load_explicit(
				&d->last_work_ns, memory_order_relaxed);

			if (lw > last_work) {
				last_work = lw;
				backoff = MRDP_SLEEP_MIN_NS;
			}
		}
		if (atomic_exchange(&d->kicked, 0))
			continue;
		/* An application thread is polling (poll_cq): it does the
		 * receive and timer work inline, so spinning here too would
		 * only take the CPU from it (two cores, several processes).
		 * Nap instead, short enough to take over when it stops. */
		if (may_nap && app_polls(d, now, poll_guard_ns)) {
			if (deadline > now) {
				atomic_store(&d->napping, 1);
				class_set(d, &pr, 0);
				idle_sleep(d,
					   deadline - now < MRDP_INLINE_NAP_NS
						   ? deadline - now
						   : MRDP_INLINE_NAP_NS,
					   0);
				atomic_store(&d->napping, 0);
			}
			continue;
		}
		spin = now - last_work < spin_ns && last_work != spin_cut &&
		       (int64_t)(now - spin_off_until) >= 0 &&
		       spin_allowed(d, now, memory_ns);
		/* Before the yield, which would hand our CPU to a waiting
		 * thread for a slice. Cut: sleep now, without another round
		 * (the round just done found nothing; one more per burst of
		 * a stream is system calls for nothing). */
		if (spin && load_fd >= 0 &&
		    mrdp_wait_runnable(load_fd) > spare_max) {
			spin_cut = last_work;
			d->spin_cut_crowd++;
			spin = 0;
		}
		if (spin) {
			uint64_t t;

			/* Let a thread that shares our core run; spin at the
			 * application's weight (progress_priority()) in
			 * SCHED_OTHER (spin_allowed). */
			class_set(d, &pr, 0);
			prio_set(&pr, pr.base);
			sched_yield();
			d->spins++;
			t = mrdp_now();
			if (crowd_ns && t - now > crowd_ns) {
				spin_cut = last_work;
				spin_off_until = t + MRDP_SPIN_CROWD_HOLD_NS;
				d->spin_cut_crowd++;
			}
			continue;
		}
		if (deadline <= now) {
			/* A deadline the round did not clear: look again, but
			 * never in a tight loop at real-time priority. */
			if (pr.rt)
				idle_sleep(d, MRDP_SLEEP_MIN_NS, 0);
			continue;
		}
		{
			uint64_t ns = frames ? MRDP_WAIT_MAX_NS : backoff;

			if (deadline - now < ns)
				ns = deadline - now;
			if (d->has_stats && d->next_stats_ns > now &&
			    d->next_stats_ns - now < ns)
				ns = d->next_stats_ns - now;
			prio_set(&pr, pr.wake);
			class_set(d, &pr, 1);
			exchange_sleep(d, now, ns, deadline, frames);
		}
		{
			uint64_t cap = now - last_work > MRDP_IDLE_AFTER_NS
					       ? MRDP_SLEEP_IDLE_NS
					       : MRDP_SLEEP_MAX_NS;

			backoff *= 2;
			if (backoff > cap)
				backoff = cap;
		}
	}
	if (load_fd >= 0)
		close(load_fd);
	return NULL;
}

static int start_thread_call(void *p)
{
	struct mrdp_dev *d = p;

	return pthread_create(&d->thread, NULL,
			      d->busy_core >= 0 ? mrdp_busy_main
						: progress_main,
			      d);
}

static int validate(const struct mrdp_config *cfg, char *err, size_t errlen)
{
	const struct mr_devconf *c = cfg->conf;
	unsigned i;

	if (!c) {
		snprintf(err, errlen, "no device record");
		return -EINVAL;
	}
	if (!mr_devconf_valid_name(c->name)) {
		snprintf(err, errlen, "bad device name");
		return -EINVAL;
	}
	if (c->nports == 0 || c->nports > MR_DEVCONF_MAX_PORTS) {
		snprintf(err, errlen, "%s: record has %u ports (1..%d)",
			 c->name, c->nports, MR_DEVCONF_MAX_PORTS);
		return -EINVAL;
	}
	for (i = 0; i < c->nports; i++) {
		if (c->ports[i][0] == 0 ||
		    strnlen(c->ports[i], MR_DEVCONF_ARGS_MAX) ==
			    MR_DEVCONF_ARGS_MAX) {
			snprintf(err, errlen,
				 "%s: port %u is empty or too "
				 "long",
				 c->name, i);
			return -EINVAL;
		}
	}
	if (!mrdp_ip_unicast(c->ip)) {
		snprintf(err, errlen,
			 "%s: address is not a unicast IPv4 "
			 "address",
			 c->name);
		return -EINVAL;
	}
	if ((c->mac[0] & 1) || !memcmp(c->mac, "\0\0\0\0\0\0", 6)) {
		snprintf(err, errlen, "%s: MAC is multicast or zero", c->name);
		return -EINVAL;
	}
	if (c->mtu != 256 && c->mtu != 512 && c->mtu != 1024 &&
	    c->mtu != 2048 && c->mtu != 4096) {
		snprintf(err, errlen,
			 "%s: mtu %u is not 256..4096 (power of "
			 "two)",
			 c->name, c->mtu);
		return -EINVAL;
	}
	if (c->udp_port == 0) {
		snprintf(err, errlen, "%s: udp_port is 0", c->name);
		return -EINVAL;
	}
	if (!cfg->ops.rx || !cfg->ops.tx) {
		snprintf(err, errlen, "%s: ops rx and tx are required",
			 c->name);
		return -EINVAL;
	}
	if (cfg->stats_path && strlen(cfg->stats_path) >= PATH_MAX - 32) {
		snprintf(err, errlen, "%s: stats path too long", c->name);
		return -EINVAL;
	}
	return 0;
}

static int claim_name(const char *name)
{
	unsigned i, freei = 64;

	for (i = 0; i < 64; i++) {
		if (!open_names[i][0]) {
			if (freei == 64)
				freei = i;
		} else if (!strcmp(open_names[i], name)) {
			return -EBUSY;
		}
	}
	if (freei == 64)
		return -EMFILE;
	snprintf(open_names[freei], MR_DEVCONF_NAME_MAX, "%s", name);
	return 0;
}

static void release_name(const char *name)
{
	unsigned i;

	for (i = 0; i < 64; i++)
		if (!strcmp(open_names[i], name))
			open_names[i][0] = 0;
}

/* Undo whatever open did (any prefix of it). open_mu held. */
/* The capture switch: knob dp_pcap_mb > 0 and a file name. */
static int capture_open(struct mrdp_dev *d, const struct mrdp_config *cfg,
			char *err, size_t errlen)
{
	const char *ports[MR_DEVCONF_MAX_PORTS];
	int64_t mb = mr_knob_get(&d->knobs, MR_KNOB_DP_PCAP_MB);

	if (!mb || !cfg->pcap_path)
		return 0;
	for (unsigned i = 0; i < d->nplanes; i++)
		ports[i] = d->conf.ports[i];
	d->pcap = mrdp_pcap_open(cfg->pcap_path, (uint64_t)mb << 20, d->nplanes,
				 ports);
	if (!d->pcap) {
		snprintf(err, errlen, "capture file %s: %s", cfg->pcap_path,
			 strerror(errno));
		return -errno;
	}
	snprintf(d->pcap_path, sizeof(d->pcap_path), "%s", cfg->pcap_path);
	return 0;
}

static void capture_close(struct mrdp_dev *d)
{
	uint64_t written, skipped;

	if (!d->pcap)
		return;
	mrdp_pcap_close(d->pcap, &written, &skipped);
	d->pcap = NULL;
	/* Whoever turned the switch on reads this. */
	if (skipped)
		fprintf(stderr,
			"mrdp: %s: captured %llu frames in %s (dp_pcap_mb "
			"reached: %llu not written)\n",
			d->conf.name, (unsigned long long)written, d->pcap_path,
			(unsigned long long)skipped);
	else
		fprintf(stderr, "mrdp: %s: captured %llu frames in %s\n",
			d->conf.name, (unsigned long long)written,
			d->pcap_path);
}

static void teardown(struct mrdp_dev *d)
{
	unsigned i;

	if (d->has_thread) {
		atomic_store(&d->stop, 1);
		mrdp_kick(d);
		pthread_join(d->thread, NULL);
		d->has_thread = 0;
	}
	capture_close(d);
	mrdp_silence_close(d);
	for (i = 0; i < d->nplanes; i++)
		mrdp_port_close(d, i);
	mrdp_steer_close(d);
	mrdp_io_release(d);
	mrdp_nexthop_fini(d);
	if (d->pool)
		mrdp_pool_free(d);
	free(d->scratch);
	free(d->neigh);
	pthread_mutex_destroy(&d->lock);
	mrdp_wait_fini(d);
	mrdp_addrs_free(d->own_addrs);
	free(d);
}

void mrdp_dev_blank(struct mrdp_dev *d)
{
	unsigned i;

	d->max_pkt = MR_TX_BUF_MIN(d->conf.mtu);
	/* Room for the larger (IPv6) header: any peer may be IPv6. */
	d->max_frame = MRDP_HDR_MAX + d->max_pkt;
	d->kick_fd = -1;
	d->timer_fd = -1;
	d->lease_fd = -1;
	d->steer_fd = -1;
	for (i = 0; i < MR_DEVCONF_MAX_PORTS; i++) {
		d->plane[i].wait_fd = -1;
		d->plane[i].silence_fd = -1;
	}
}

int mrdp_open(const struct mrdp_config *cfg, struct mrdp_dev **out, char *err,
	      size_t errlen)
{
	char dummy[8];
	struct mrdp_dev *d;
	struct mr_knobs knobs;
	unsigned seq, i;
	int ret;

	if (!err || !errlen) {
		err = dummy;
		errlen = sizeof(dummy);
	}
	err[0] = 0;
	if (!cfg || !out) {
		snprintf(err, errlen, "no config");
		return -EINVAL;
	}
	ret = validate(cfg, err, errlen);
	if (ret)
		return ret;
	if (cfg->knobs)
		knobs = *cfg->knobs;
	else if (mr_knobs_resolve(&knobs, &cfg->conf->opts, err, errlen))
		return -EINVAL;
	pthread_mutex_lock(&open_mu);
	ret = claim_name(cfg->conf->name);
	if (ret) {
		pthread_mutex_unlock(&open_mu);
		snprintf(err, errlen,
			 ret == -EBUSY
				 ? "%s is already open in this process"
				 : "too many devices open in this process (%s)",
			 cfg->conf->name);
		return ret;
	}
	seq = open_seq++;
	ret = mrdp_eal_start(cfg->conf, &knobs, err, errlen);
	if (ret) {
		release_name(cfg->conf->name);
		pthread_mutex_unlock(&open_mu);
		return ret;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		release_name(cfg->conf->name);
		pthread_mutex_unlock(&open_mu);
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	d->conf = *cfg->conf;
	d->knobs = knobs;
	d->ops = cfg->ops;
	d->me.ip = d->conf.ip;
	memcpy(d->me.mac, d->conf.mac, 6);
	d->me.udp_port = d->conf.udp_port;
	/* MR-ADDR-1: the link-local address always, the global one when
	 * the record has it; their ids name them as sources. */
	mr_gid_ll6_of_mac(d->conf.mac, d->me.ll6);
	d->me.has_ip6 = d->conf.has_ip6;
	if (d->me.has_ip6)
		memcpy(d->me.ip6, d->conf.ip6, 16);
	d->addrs = cfg->addrs;
	if (!d->addrs) {
		d->addrs = d->own_addrs = mrdp_addrs_new();
		if (!d->addrs) {
			release_name(cfg->conf->name);
			pthread_mutex_unlock(&open_mu);
			free(d);
			snprintf(err, errlen, "out of memory");
			return -ENOMEM;
		}
	}
	d->has_stats = cfg->stats_path != NULL;
	if (d->has_stats)
		mrdp_stats_open(d, cfg->stats_path);
	/* MR-ENC-4: zero by default, the ICRC covers the packet; a
	 * checksum costs a pass over every payload byte on both ends. */
	d->udp_csum = (int)mr_knob_get(&d->knobs, MR_KNOB_DP_UDP_CSUM);
	d->no_inline = !mr_knob_get(&d->knobs, MR_KNOB_DP_INLINE);
	mrdp_dev_blank(d);
	pthread_mutex_init(&d->lock, NULL);
	ret = mrdp_busy_config(d, err, errlen);
	if (ret)
		goto fail;
	d->neigh = malloc(sizeof(*d->neigh));
	d->scratch = malloc(d->max_frame);
	if (!d->neigh || !d->scratch) {
		snprintf(err, errlen, "out of memory");
		ret = -ENOMEM;
		goto fail;
	}
	ret = mrdp_wait_init(d);
	if (ret) {
		snprintf(err, errlen, "eventfd: %s", strerror(-ret));
		goto fail;
	}
	if (mrdp_addrs_id(d->addrs, d->me.ll6, 0, 1, &d->ll6_id) ||
	    (d->me.has_ip6 &&
	     mrdp_addrs_id(d->addrs, d->me.ip6, 0, 1, &d->ip6_id))) {
		snprintf(err, errlen, "address book full");
		ret = -ENOSPC;
		goto fail;
	}
	mrdp_neigh_init(d->neigh);
	d->neigh->reach_ns =
		(uint64_t)mr_knob_get(&d->knobs, MR_KNOB_DP_NEIGH_REACH_MS) *
		1000000ull;
	d->nplanes = d->conf.nports;
	/* A service port asks its daemon for this QPN slot (0: any). */
	d->steer_slot = cfg->steer_slot;
	ret = mrdp_pool_create(d, seq, err, errlen);
	if (ret)
		goto fail;
	for (i = 0; i < d->nplanes; i++) {
		ret = mrdp_port_open(d, i, seq, err, errlen);
		if (ret)
			goto fail;
	}
	ret = mrdp_nexthop_init(d, err, errlen);
	if (ret)
		goto fail;
	/* Not fatal: without the privilege or the kernel for it, the
	 * interface's stack goes on processing our frames (mrdp_silence.c). */
	if (mr_knob_get(&d->knobs, MR_KNOB_DP_SILENCE))
		(void)mrdp_silence_open(d);
	/* Service ports: the daemon gave the slot and steers (qpn_count). */
	if (cfg->steer_dir && mr_knob_get(&d->knobs, MR_KNOB_DP_STEER) &&
	    !d->qpn_count) {
		ret = mrdp_steer_open(d, cfg->steer_dir, cfg->steer_slot, err,
				      errlen);
		if (ret)
			goto fail;
		/* Frames that reached a socket between its creation (the
		 * port's probe) and its filter were not filtered: other
		 * processes'. None can be ours (no QP exists before the
		 * device is open; an ARP answer lost here is asked again). */
		mrdp_io_drain(d);
	}
	ret = capture_open(d, cfg, err, errlen);
	if (ret)
		goto fail;
	if (!cfg->no_thread) {
		/* A dedicated poller sleeps on nothing. */
		if (d->busy_core < 0)
			mrdp_wait_lease_init(d);
		/* Our thread takes none of the application's signals. */
		ret = mrdp_with_signals_blocked(start_thread_call, d);
		if (ret) {
			snprintf(err, errlen,
				 "cannot start the progress "
				 "thread: %s",
				 strerror(ret));
			ret = -ret;
			goto fail;
		}
		d->has_thread = 1;
	}
	pthread_mutex_unlock(&open_mu);
	*out = d;
	return 0;
fail:
	release_name(d->conf.name);
	teardown(d);
	pthread_mutex_unlock(&open_mu);
	return ret;
}

void mrdp_close(struct mrdp_dev *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&open_mu);
	if (d->has_thread) {
		atomic_store(&d->stop, 1);
		mrdp_kick(d);
		pthread_join(d->thread, NULL);
		d->has_thread = 0;
	}
	if (d->has_stats)
		mrdp_stats_write(d);
	release_name(d->conf.name);
	teardown(d);
	pthread_mutex_unlock(&open_mu);
}
