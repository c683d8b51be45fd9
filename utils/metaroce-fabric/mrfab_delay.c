/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * mrfab-delay: the delay line of one fabric link direction (docs/fabric.md,
 * "Delay"). This kernel has no netem, fq or etf, so nothing in it holds a
 * packet for a time; this process does, and sleeps between frames.
 *
 * The direction's program (mrfab_link.bpf.c) redirects IP packets to a tap
 * device this process owns (so the tap goes when it exits). Each frame read
 * from the tap is due at its arrival + the delay; frames leave in arrival
 * order (a delay made shorter applies behind the frames already held). A
 * timerfd set to the head's due time (absolute CLOCK_MONOTONIC, timer slack
 * 1 ns) wakes it: no polling thread, as two cores require. Frames leave
 *   egress:  out of DEV through an AF_PACKET socket with SO_MARK =
 *            MRFAB_DELAY_MARK: the program passes them on to the link's
 *            impairments and its real queue (HTB + bfifo);
 *   ingress: back through the tap, whose MAC address is DEV's: the router
 *            forwards them as if they had just arrived on DEV.
 * The delay is read from the program's configuration map (by id) at start
 * and on SIGHUP (metaroce-fabric set). Frames that do not fit the held
 * bytes (RING_BYTES) are dropped and counted. Counters go to STATS_FILE
 * (rewritten at most once a second, when they changed).
 *
 * Usage: mrfab-delay TAP ingress|egress DEV CFG_MAP_ID MTU STATS_FILE
 * Prints "ready IFINDEX" (the tap's) on stdout once the tap is up.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/bpf.h>
#include <linux/if.h>
#include <linux/if_packet.h>
#include <linux/if_tun.h>
#include <linux/sched.h>
#include <linux/sched/types.h>
#include <net/ethernet.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "mrfab_link.h"

#define RING_BYTES (64u << 20) /* touched only as far as frames are held */
#define MAX_FRAME 65536

struct held {
	uint64_t due; /* CLOCK_MONOTONIC ns */
	uint32_t len; /* 0: wrap to the ring's start */
	uint32_t pad;
};

struct line {
	int tap, out, tfd, sfd, map;
	int egress;
	uint8_t mac[6]; /* ingress: the tap's, which is DEV's */
	uint64_t delay;
	uint8_t *ring;
	size_t head, tail, used; /* byte offsets; used = bytes held */
	uint64_t n_in, n_out, n_drop, n_drop_bytes, n_held_max;
	/* The timer wakes late (scheduling, a halted vCPU): by late_ns on
	 * average, so it is armed that much before a frame is due. */
	uint64_t armed, late_ns;
	const char *stats;
	uint64_t stats_at, stats_sig;
};

static void die(const char *what)
{
	fprintf(stderr, "mrfab-delay: %s: %s\n", what, strerror(errno));
	exit(1);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int bpf_map_fd(uint32_t id)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.map_id = id;
	return (int)syscall(SYS_bpf, BPF_MAP_GET_FD_BY_ID, &a, sizeof(a));
}

static void read_delay(struct line *l)
{
	struct mrfab_cfg c;
	union bpf_attr a;
	uint32_t key = 0;

	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)l->map;
	a.key = (uint64_t)(uintptr_t)&key;
	a.value = (uint64_t)(uintptr_t)&c;
	if (syscall(SYS_bpf, BPF_MAP_LOOKUP_ELEM, &a, sizeof(a)) != 0)
		die("reading the link's configuration map");
	l->delay = c.delay_ns;
}

/*
 * Ask the scheduler (EEVDF, Linux 6.12+) for a short slice: a waking task
 * with a short slice preempts the running one instead of waiting for its
 * slice to end, which on a loaded two-core machine added milliseconds to
 * every frame. Not a real-time class: it still gets only its fair share.
 * Older kernels refuse or ignore it; the line works either way.
 */
static void short_slice(void)
{
	struct sched_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.sched_policy = SCHED_NORMAL;
	a.sched_runtime = 100000; /* ns: the shortest slice allowed */
	syscall(SYS_sched_setattr, 0, &a, 0);
}

static void ifreq_of(struct ifreq *r, const char *name)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->ifr_name, sizeof(r->ifr_name), "%s", name);
}

static void sysctl_tap(const char *tap, const char *key, const char *v)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/%s", tap, key);
	f = fopen(path, "w");
	if (f) {
		fputs(v, f);
		fclose(f);
	}
}

/* The tap: created, MTU, MAC (ingress: DEV's), no ARP, no IPv6 address
 * (the kernel's own frames would reach the reader), a deep queue, up. */
static int open_tap(const char *name, const char *dev, int egress, int mtu,
		    int *ifindex, uint8_t mac[6])
{
	struct ifreq r, m;
	int fd = open("/dev/net/tun", O_RDWR | O_NONBLOCK | O_CLOEXEC);
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || s < 0)
		die("/dev/net/tun");
	ifreq_of(&r, name);
	r.ifr_flags = IFF_TAP | IFF_NO_PI;
	if (ioctl(fd, TUNSETIFF, &r) != 0)
		die("TUNSETIFF");
	/* Egress: the kernel never receives on the tap, so no IPv6 at all.
	 * Ingress: it forwards IPv6 arriving there, so IPv6 stays on, but
	 * with no address (no link-local, DAD, router solicitations). */
	sysctl_tap(name, "addr_gen_mode", "1");
	sysctl_tap(name, "accept_ra", "0");
	if (egress)
		sysctl_tap(name, "disable_ipv6", "1");
	ifreq_of(&r, name);
	r.ifr_mtu = mtu;
	if (ioctl(s, SIOCSIFMTU, &r) != 0)
		die("tap MTU");
	if (!egress) {
		ifreq_of(&m, dev);
		if (ioctl(s, SIOCGIFHWADDR, &m) != 0)
			die(dev);
		ifreq_of(&r, name);
		r.ifr_hwaddr = m.ifr_hwaddr;
		memcpy(mac, m.ifr_hwaddr.sa_data, 6);
		if (ioctl(s, SIOCSIFHWADDR, &r) != 0)
			die("tap MAC");
	}
	ifreq_of(&r, name);
	r.ifr_qlen = 10000;
	if (ioctl(s, SIOCSIFTXQLEN, &r) != 0)
		die("tap queue length");
	ifreq_of(&r, name);
	if (ioctl(s, SIOCGIFFLAGS, &r) != 0)
		die("tap flags");
	r.ifr_flags |= IFF_UP | IFF_NOARP;
	if (ioctl(s, SIOCSIFFLAGS, &r) != 0)
		die("tap up");
	ifreq_of(&r, name);
	if (ioctl(s, SIOCGIFINDEX, &r) != 0)
		die("tap index");
	*ifindex = r.ifr_ifindex;
	close(s);
	return fd;
}

/* Egress: a raw socket on DEV whose frames carry the delay mark. */
static int open_out(const char *dev)
{
	struct sockaddr_ll sa;
	struct ifreq r;
	int mark = (int)MRFAB_DELAY_MARK;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);

	if (fd < 0)
		die("AF_PACKET socket");
	ifreq_of(&r, dev);
	if (ioctl(fd, SIOCGIFINDEX, &r) != 0)
		die(dev);
	if (setsockopt(fd, SOL_SOCKET, SO_MARK, &mark, sizeof(mark)) != 0)
		die("SO_MARK");
	memset(&sa, 0, sizeof(sa));
	sa.sll_family = AF_PACKET;
	sa.sll_ifindex = r.ifr_ifindex;
	/* Protocol 0: this socket only sends. */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
		die("bind");
	return fd;
}

static size_t slot(uint32_t len)
{
	return sizeof(struct held) + ((len + 7u) & ~7u);
}

/* Room for a frame of len bytes at the tail: its offset, or -1. */
static long reserve(struct line *l, uint32_t len)
{
	size_t need = slot(len);

	if (l->used + need > RING_BYTES)
		return -1;
	if (l->tail + need > RING_BYTES) {
		/* Wrap: the rest of the ring is skipped, if the start has
		 * room (counted as held until the head passes it). */
		size_t skip = RING_BYTES - l->tail;

		if (l->used + skip + need > RING_BYTES)
			return -1;
		if (skip >= sizeof(struct held))
			((struct held *)(l->ring + l->tail))->len = 0;
		l->used += skip;
		l->tail = 0;
	}
	return (long)l->tail;
}

static void send_frame(struct line *l, const uint8_t *p, uint32_t len)
{
	ssize_t n = l->egress ? send(l->out, p, len, 0) : write(l->tap, p, len);

	if (n == (ssize_t)len) {
		l->n_out++;
		return;
	}
	if (n < 0 && (errno == ENXIO || errno == ENODEV))
		die("the link's interface is gone");
	l->n_drop++; /* its queue is full: the link drops it */
	l->n_drop_bytes += len;
}

/* Send every frame due by now (less the wake-up lateness); arm the timer
 * for the next one. */
static void flush(struct line *l, uint64_t now)
{
	uint64_t early = l->late_ns < l->delay / 2 ? l->late_ns : l->delay / 2;
	struct itimerspec it;

	while (l->used) {
		struct held *h = (struct held *)(l->ring + l->head);
		size_t rest = RING_BYTES - l->head;

		if (rest < sizeof(struct held) || h->len == 0) {
			l->used -= rest;
			l->head = 0;
			continue;
		}
		if (h->due > now + early)
			break;
		send_frame(l, (uint8_t *)(h + 1), h->len);
		l->used -= slot(h->len);
		l->head += slot(h->len);
		if (l->head == RING_BYTES)
			l->head = 0;
	}
	if (!l->used)
		l->head = l->tail = 0;
	memset(&it, 0, sizeof(it));
	if (l->used) {
		struct held *h = (struct held *)(l->ring + l->head);

		l->armed = h->due - early;
		it.it_value.tv_sec = (time_t)(l->armed / 1000000000u);
		it.it_value.tv_nsec = (long)(l->armed % 1000000000u);
	}
	timerfd_settime(l->tfd, TFD_TIMER_ABSTIME, &it, NULL);
}

static void receive(struct line *l)
{
	static uint8_t buf[MAX_FRAME];
	int i;

	for (i = 0; i < 256; i++) {
		ssize_t n = read(l->tap, buf, sizeof(buf));
		uint64_t now;
		struct held *h;
		long off;

		if (n <= 0)
			break;
		/* Ingress: only what the program redirected (from the link's
		 * peer), not the kernel's own frames out of the tap, which
		 * carry our (the interface's) address as their source. */
		if (!l->egress && n >= 12 && !memcmp(buf + 6, l->mac, 6))
			continue;
		now = now_ns();
		l->n_in++;
		if (!l->delay && !l->used) {
			send_frame(l, buf, (uint32_t)n);
			continue;
		}
		off = reserve(l, (uint32_t)n);
		if (off < 0) {
			l->n_drop++;
			l->n_drop_bytes += (uint64_t)n;
			continue;
		}
		h = (struct held *)(l->ring + off);
		h->due = now + l->delay;
		h->len = (uint32_t)n;
		memcpy(h + 1, buf, (size_t)n);
		l->used += slot((uint32_t)n);
		l->tail = (size_t)off + slot((uint32_t)n);
		if (l->used > l->n_held_max)
			l->n_held_max = l->used;
	}
	flush(l, now_ns());
}

static void write_stats(struct line *l, uint64_t now)
{
	uint64_t sig =
		l->n_in * 3 + l->n_out * 5 + l->n_drop * 7 + l->delay + l->used;
	char tmp[4096];
	FILE *f;

	if (now - l->stats_at < 1000000000u || sig == l->stats_sig)
		return;
	l->stats_at = now;
	l->stats_sig = sig;
	snprintf(tmp, sizeof(tmp), "%s.tmp", l->stats);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fprintf(f,
		"{\"delay_ns\": %llu, \"in\": %llu, \"out\": %llu, "
		"\"dropped\": %llu, \"dropped_bytes\": %llu, "
		"\"held_bytes\": %zu, \"wake_late_ns\": %llu, "
		"\"held_bytes_max\": %llu}\n",
		(unsigned long long)l->delay, (unsigned long long)l->n_in,
		(unsigned long long)l->n_out, (unsigned long long)l->n_drop,
		(unsigned long long)l->n_drop_bytes, l->used,
		(unsigned long long)l->late_ns,
		(unsigned long long)l->n_held_max);
	if (fclose(f) == 0)
		rename(tmp, l->stats);
}

int main(int argc, char **argv)
{
	struct line l;
	sigset_t ss;
	int ifindex;

	if (argc != 7 ||
	    (strcmp(argv[2], "ingress") && strcmp(argv[2], "egress"))) {
		fprintf(stderr, "usage: mrfab-delay TAP ingress|egress DEV "
				"CFG_MAP_ID MTU STATS_FILE\n");
		return 2;
	}
	memset(&l, 0, sizeof(l));
	l.egress = !strcmp(argv[2], "egress");
	l.stats = argv[6];
	/* Frames are due to the nanosecond: the default 50 us of timer
	 * slack would be most of a 100 us delay. */
	prctl(PR_SET_TIMERSLACK, 1UL);
	short_slice();
	sigemptyset(&ss);
	sigaddset(&ss, SIGHUP);
	sigaddset(&ss, SIGTERM);
	sigaddset(&ss, SIGINT);
	sigprocmask(SIG_BLOCK, &ss, NULL);
	l.sfd = signalfd(-1, &ss, SFD_CLOEXEC);
	l.map = bpf_map_fd((uint32_t)strtoul(argv[4], NULL, 10));
	if (l.sfd < 0 || l.map < 0)
		die("the link's configuration map");
	read_delay(&l);
	l.ring = malloc(RING_BYTES);
	l.tfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	if (!l.ring || l.tfd < 0)
		die("setup");
	l.tap = open_tap(argv[1], argv[3], l.egress, atoi(argv[5]), &ifindex,
			 l.mac);
	l.out = l.egress ? open_out(argv[3]) : -1;
	printf("ready %d\n", ifindex);
	fflush(stdout);
	for (;;) {
		struct pollfd p[3] = { { l.tap, POLLIN, 0 },
				       { l.tfd, POLLIN, 0 },
				       { l.sfd, POLLIN, 0 } };

		if (poll(p, 3, 1000) < 0 && errno != EINTR)
			die("poll");
		if (p[2].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(l.sfd, &si, sizeof(si)) == sizeof(si)) {
				if (si.ssi_signo != SIGHUP)
					break;
				read_delay(&l);
			}
		}
		if (p[0].revents & POLLIN)
			receive(&l);
		if (p[1].revents & POLLIN) {
			uint64_t ticks;

			uint64_t t = now_ns();

			if (read(l.tfd, &ticks, sizeof(ticks)) < 0 &&
			    errno != EAGAIN)
				die("timerfd");
			/* An average over the last ~8 wake-ups. */
			if (t >= l.armed && t - l.armed < 10000000u)
				l.late_ns = l.late_ns - l.late_ns / 8 +
					    (t - l.armed) / 8;
			flush(&l, t);
		}
		write_stats(&l, now_ns());
	}
	l.stats_at = 0;
	l.stats_sig = ~0ull;
	write_stats(&l, now_ns());
	return 0;
}
