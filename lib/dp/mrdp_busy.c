/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Dedicated-core mode (knob dp_core = N, METAROCE_DP_CORE=N): for hosts with a core to
 * spare, the progress thread is pinned to core N and polls without ever
 * sleeping, as a DPDK application's lcore does; application threads then
 * never run rounds themselves (mrdp_progress() returns at once, so no
 * application thread fights the poller for the lock), and post_send only
 * queues under the lock.
 *
 * Costs, known by construction: one core at 100% while the device is
 * open (an idle device too), no wakeup on any path (a frame waits at
 * most one round of the poller), and the lock taken by the application
 * only to post. The poller gives the lock up after every round and waits
 * (pause, never a system call) while an application thread wants it, so
 * a post never waits for more than one round. Without a core to spare
 * this mode is wrong: the poller would take the core from the
 * application (bench/wire FINDINGS section 9).
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#include "mrdp_int.h"

/* A waiting application thread gets the lock within this many pauses
 * (a few microseconds) or the poller goes on. */
#define MRDP_BUSY_YIELD_SPINS 4096

int mrdp_busy_config(struct mrdp_dev *d, char *err, size_t errlen)
{
	long v = (long)mr_knob_get(&d->knobs, MR_KNOB_DP_CORE);
	cpu_set_t allowed;

	d->busy_core = -1;
	if (v < 0)
		return 0;
	if (v >= CPU_SETSIZE ||
	    sched_getaffinity(0, sizeof(allowed), &allowed) != 0 ||
	    !CPU_ISSET((int)v, &allowed)) {
		snprintf(err, errlen,
			 "%s: dp_core %ld is not a CPU this process may run on",
			 d->conf.name, v);
		return -EINVAL;
	}
	d->busy_core = (int)v;
	return 0;
}

static inline void cpu_pause(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ volatile("yield");
#endif
}

void *mrdp_busy_main(void *arg)
{
	struct mrdp_dev *d = arg;
	char tname[16];
	cpu_set_t one;

	snprintf(tname, sizeof(tname), "mrdp-%.10s", d->conf.name);
	pthread_setname_np(pthread_self(), tname);
	CPU_ZERO(&one);
	CPU_SET(d->busy_core, &one);
	if (pthread_setaffinity_np(pthread_self(), sizeof(one), &one) != 0)
		MRDP_LOG("%s: cannot pin the poller to CPU %d\n", d->conf.name,
			 d->busy_core);
	MRDP_LOG("%s: dedicated poller on CPU %d\n", d->conf.name,
		 d->busy_core);
	while (!atomic_load_explicit(&d->stop, memory_order_relaxed)) {
		uint64_t now;
		unsigned i;

		pthread_mutex_lock(&d->lock);
		now = mrdp_locked_now(d);
		mrdp_io_round(d, now);
		pthread_mutex_unlock(&d->lock);
		for (i = 0; i < MRDP_BUSY_YIELD_SPINS &&
			    atomic_load_explicit(&d->lock_wanted,
						 memory_order_relaxed);
		     i++)
			cpu_pause();
		if (d->has_stats && now >= d->next_stats_ns) {
			mrdp_stats_write(d);
			d->next_stats_ns = now + MRDP_STATS_PERIOD_NS;
		}
	}
	return NULL;
}
