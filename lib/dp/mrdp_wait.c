/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the progress thread sleeps on: an eventfd for kicks and, where a
 * port has one, the kernel socket behind it, so an idle thread wakes when
 * a frame arrives instead of when a timer says so.
 *
 * Why: a thread that spins (even with sched_yield) stays runnable, and on
 * a machine with more busy threads than cores every runnable thread waits
 * whole scheduler slices (milliseconds) for a CPU; a sleeping thread woken
 * by the kernel at a frame's arrival is scheduled at once (wakeup
 * preemption). A timed sleep that doubles up to 1 ms adds up to that
 * much to every packet that finds the thread asleep.
 *
 * DPDK's af_packet PMD does not expose its socket (no Rx interrupts), so
 * the socket is found as the AF_PACKET socket bound to the port's
 * interface that appeared while the port was probed. poll() on a
 * TPACKET ring socket reports POLLIN while a frame is waiting in the
 * ring, so no arrival between the last receive and the sleep is missed.
 * The AF_XDP PMD's socket is found the same way (the one AF_XDP socket
 * that appeared while its RX queue was set up: an XSK cannot tell its
 * interface through getsockname); poll() reports POLLIN while its RX ring
 * holds a frame.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/timerfd.h>
#include <linux/if_packet.h>
#include <time.h>
#include <unistd.h>

#include "mrdp_int.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif

/* The AF_PACKET socket fds of this process bound to ifindex (or, with
 * xsk, its AF_XDP sockets), at most max; returns how many. */
static unsigned packet_sockets(int ifindex, int xsk, int *out, unsigned max)
{
	DIR *dir = opendir("/proc/self/fd");
	struct dirent *de;
	unsigned n = 0;

	if (!dir)
		return 0;
	while ((de = readdir(dir)) != NULL && n < max) {
		struct sockaddr_ll sll;
		socklen_t len = sizeof(sll);
		int fd, dom = 0;
		socklen_t dlen = sizeof(dom);
		char *end;

		fd = (int)strtol(de->d_name, &end, 10);
		if (*end || end == de->d_name || fd == dirfd(dir))
			continue;
		if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &dom, &dlen) != 0 ||
		    dom != (xsk ? AF_XDP : AF_PACKET))
			continue;
		if (xsk) {
			out[n++] = fd;
			continue;
		}
		memset(&sll, 0, sizeof(sll));
		if (getsockname(fd, (struct sockaddr *)&sll, &len) != 0 ||
		    sll.sll_ifindex != ifindex)
			continue;
		out[n++] = fd;
	}
	closedir(dir);
	return n;
}

void mrdp_wait_probe_begin(struct mrdp_plane *p, const char *ifname, int xsk)
{
	p->wait_fd = -1;
	p->wait_xsk = xsk;
	p->wait_ifindex = xsk ? 1 : ifname ? (int)if_nametoindex(ifname) : 0;
	p->wait_nbefore = 0;
	if (p->wait_ifindex > 0)
		p->wait_nbefore =
			packet_sockets(p->wait_ifindex, xsk, p->wait_before,
				       MRDP_WAIT_SCAN_MAX);
}

void mrdp_wait_probe_end(struct mrdp_plane *p)
{
	int now[MRDP_WAIT_SCAN_MAX];
	unsigned n, i, k;

	if (p->wait_ifindex <= 0)
		return;
	n = packet_sockets(p->wait_ifindex, p->wait_xsk, now,
			   MRDP_WAIT_SCAN_MAX);
	for (i = 0; i < n; i++) {
		for (k = 0; k < p->wait_nbefore; k++)
			if (p->wait_before[k] == now[i])
				break;
		if (k < p->wait_nbefore)
			continue;
		/* Exactly one new socket (one queue pair): anything else
		 * and we cannot tell which is ours; timed sleeps then. */
		if (p->wait_fd >= 0) {
			p->wait_fd = -1;
			break;
		}
		p->wait_fd = now[i];
	}
	MRDP_LOG("plane %u: %s\n", p->port_id,
		 p->wait_fd >= 0 ? "progress thread sleeps on its socket"
				 : "no socket to sleep on: timed sleeps");
}

int mrdp_wait_init(struct mrdp_dev *d)
{
	atomic_store(&d->leased, 0);
	pthread_mutex_init(&d->lease_mu, NULL);
	d->timer_fd = -1;
	d->kick_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (d->kick_fd < 0)
		return -errno;
	d->timer_fd =
		timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	return d->timer_fd < 0 ? -errno : 0;
}

/*
 * The lease (docs/cost-budget.md, "One round trip"): while an application
 * waits in poll_cq (its last poll found nothing) its own rounds receive
 * every frame, so a frame must not wake the progress thread: that wake
 * cost 5 us (same core) to 16 us (other core) of scheduling delay, and
 * the woken real-time thread then did the receive, took the lock and sent
 * the ACK before the polling application saw the completion (FINDINGS
 * 12.1). The thread sleeps on one epoll fd that holds the planes' sockets
 * (in its ppoll set beside the kick and the timer); the application
 * turns the sockets' events off in it when a poll finds nothing and back
 * on when a poll returns a completion (it may now spin on memory:
 * ib_write_lat) or it posts or arms the CQ. Each is one epoll_ctl per
 * plane, on a change only; turning them on with a frame waiting wakes
 * the thread at once (the kernel's epoll_ctl checks readiness), so no
 * frame is stranded. Service ports keep their own arm protocol: no
 * lease there.
 */
void mrdp_wait_lease_init(struct mrdp_dev *d)
{
	unsigned i;

	if (!mrdp_wait_on_frames(d))
		return;
	for (i = 0; i < d->nplanes; i++)
		if (d->plane[i].svc)
			return;
	d->lease_fd = epoll_create1(EPOLL_CLOEXEC);
	if (d->lease_fd < 0)
		return;
	for (i = 0; i < d->nplanes; i++) {
		struct epoll_event ev = { .events = EPOLLIN, .data.u32 = i };

		if (epoll_ctl(d->lease_fd, EPOLL_CTL_ADD, d->plane[i].wait_fd,
			      &ev) != 0) {
			MRDP_LOG("%s: epoll: %s: no lease\n", d->conf.name,
				 strerror(errno));
			close(d->lease_fd);
			d->lease_fd = -1;
			return;
		}
	}
}

int mrdp_wait_lease(struct mrdp_dev *d, int on)
{
	unsigned i;
	int changed = 0;

	if (d->lease_fd < 0 ||
	    atomic_load_explicit(&d->leased, memory_order_relaxed) == on)
		return 0;
	/* The application's change and the thread's (lease expired) must
	 * reach the kernel in the order of the flag's. */
	pthread_mutex_lock(&d->lease_mu);
	if (atomic_load(&d->leased) != on) {
		for (i = 0; i < d->nplanes; i++) {
			struct epoll_event ev = { .events = on ? 0 : EPOLLIN,
						  .data.u32 = i };

			if (epoll_ctl(d->lease_fd, EPOLL_CTL_MOD,
				      d->plane[i].wait_fd, &ev) != 0)
				MRDP_LOG("%s: epoll_ctl: %s\n", d->conf.name,
					 strerror(errno));
		}
		atomic_store(&d->leased, on);
		changed = 1;
	}
	pthread_mutex_unlock(&d->lease_mu);
	return changed;
}

void mrdp_wait_fini(struct mrdp_dev *d)
{
	if (d->lease_fd >= 0)
		close(d->lease_fd);
	d->lease_fd = -1;
	if (d->kick_fd >= 0)
		close(d->kick_fd);
	if (d->timer_fd >= 0)
		close(d->timer_fd);
	d->kick_fd = -1;
	d->timer_fd = -1;
}

/* A system call on the poster's side (about 1 us) instead of a wakeup,
 * a context switch and a round of the thread on a core the application
 * wants (5 us same-core, 16 us cross-core scheduling delay alone on the
 * test VM: docs/cost-budget.md, "One round trip"). */
void mrdp_wait_rearm(struct mrdp_dev *d, uint64_t at_ns)
{
	struct itimerspec its = {
		.it_value = { .tv_sec = (time_t)(at_ns / 1000000000ull),
			      .tv_nsec = (long)(at_ns % 1000000000ull) },
	};

	/* 0 would disarm: the deadline is already due, wake at once. */
	if (!at_ns)
		its.it_value.tv_nsec = 1;
	if (timerfd_settime(d->timer_fd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		MRDP_LOG("%s: timerfd: %s\n", d->conf.name, strerror(errno));
}

int mrdp_wait_on_frames(const struct mrdp_dev *d)
{
	unsigned i;

	if (d->kick_fd < 0 || d->nplanes == 0)
		return 0;
	for (i = 0; i < d->nplanes; i++)
		if (d->plane[i].wait_fd < 0)
			return 0;
	return 1;
}

void mrdp_wait_wake(struct mrdp_dev *d)
{
	uint64_t one = 1;

	if (write(d->kick_fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
		MRDP_LOG("%s: kick: %s\n", d->conf.name, strerror(errno));
}

int mrdp_wait(struct mrdp_dev *d, uint64_t ns, int frames)
{
	struct pollfd pfd[2 + MR_DEVCONF_MAX_PORTS];
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull),
			       .tv_nsec = (long)(ns % 1000000000ull) };
	unsigned n = 0, i;
	uint64_t v;
	int woke = 0;

	pfd[n].fd = d->kick_fd;
	pfd[n++].events = POLLIN;
	pfd[n].fd = d->timer_fd;
	pfd[n++].events = POLLIN;
	if (frames && d->lease_fd >= 0) {
		pfd[n].fd = d->lease_fd;
		pfd[n++].events = POLLIN;
	} else if (frames) {
		for (i = 0; i < d->nplanes; i++) {
			pfd[n].fd = d->plane[i].wait_fd;
			pfd[n++].events = POLLIN;
		}
	}
	pfd[0].revents = 0;
	pfd[1].revents = 0;
	/* A service port's daemon writes its eventfd only when asked. */
	for (i = 0; frames && i < d->nplanes; i++)
		if (d->plane[i].svc && !mrdp_svc_arm(d, i))
			ts.tv_sec = ts.tv_nsec = 0;
	if (ppoll(pfd, n, &ts, NULL) < 0 && errno != EINTR)
		MRDP_LOG("%s: ppoll: %s\n", d->conf.name, strerror(errno));
	/* Drain the kick counter: the kick it stood for is now served. Only
	 * when it was readable: a frame's wakeup otherwise paid a second
	 * system call for nothing (one read per ppoll, 6,000 a second on an
	 * ib_write_bw receiver). */
	if ((pfd[0].revents & POLLIN) && read(d->kick_fd, &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		MRDP_LOG("%s: kick read: %s\n", d->conf.name, strerror(errno));
	/* A service port's eventfd is drained the same way (mrdp_svc.h);
	 * no service port has a lease fd. */
	for (i = 0; frames && d->lease_fd < 0 && i < d->nplanes; i++)
		if (d->plane[i].svc && (pfd[2 + i].revents & POLLIN))
			mrdp_svc_woken(d, i);
	/* An expired rearm: its deadline is now the engine's to serve. */
	if ((pfd[1].revents & POLLIN) && read(d->timer_fd, &v, sizeof(v)) < 0 &&
	    errno != EAGAIN)
		MRDP_LOG("%s: timer read: %s\n", d->conf.name, strerror(errno));
	if (pfd[0].revents & POLLIN)
		woke |= MRDP_WOKE_KICK;
	if (pfd[1].revents & POLLIN)
		woke |= MRDP_WOKE_TIMER;
	for (i = 2; i < n; i++)
		if (pfd[i].revents)
			woke |= MRDP_WOKE_FRAME;
	return woke;
}

/*
 * Is there a CPU for the spin after work? A spinning SCHED_OTHER thread
 * takes nothing from anyone on a CPU nobody else wants, and on a quiet
 * host it keeps the next frame of a ping-pong from paying a cross-CPU
 * wake-up of a sleeping thread (ib_read_lat 16-24 us spinning against
 * 35-49 sleeping, FINDINGS 19). On a crowded one it costs twice: its
 * sched_yield hands its CPU to a runnable thread for a whole slice while
 * frames wait for it (a runnable thread is not woken), and that thread
 * loses the CPU to it again (four ib_write_bw pairs 2.6-3.2 against
 * 4.6-5.1 Gb/s, FINDINGS 21). The kernel's count of runnable threads
 * (/proc/loadavg's fourth field, all CPUs, this one included) says which
 * before the yield; one pread of a seq_file, no lock of ours.
 */
int mrdp_wait_load_open(void)
{
	return open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
}

int mrdp_wait_runnable(int fd)
{
	char buf[128];
	ssize_t n;
	char *p;
	unsigned sp = 0;

	if (fd < 0)
		return -1;
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "0.50 0.40 0.30 2/345 12345": the number after the third space. */
	for (p = buf; *p && sp < 3; p++)
		sp += *p == ' ';
	if (sp < 3 || *p < '0' || *p > '9')
		return -1;
	return (int)strtol(p, NULL, 10);
}
