/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Silencing the kernel stack (mrdp_silence.c). The program's verdicts,
 * run by the kernel on crafted frames (BPF_PROG_TEST_RUN); then the real
 * thing on a private network namespace's loopback: while the device's
 * program is attached, a UDP datagram to the device's port reaches an
 * ETH_P_ALL packet socket on its way in (our af_packet port's view) but
 * not the kernel's UDP socket on that port, a datagram to another port
 * reaches both, and after close nothing is left (the socket gets it
 * again). Needs root (CAP_BPF, CAP_NET_ADMIN, a namespace) and Linux
 * 6.6 (tcx): skipped (77) otherwise.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mr_test.h"
#include "mrdp_int.h"

/* lib/dp defines it in mrdp_eal.c, not linked here. */
int mrdp_debug;

#define PORT 4797

static int skipped;

static int prog_load(void)
{
	struct bpf_insn prog[MRDP_SILENCE_PROG_MAX];
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = mrdp_silence_program(prog, PORT);
	a.license = (uint64_t)(uintptr_t) "BSD";
	return (int)syscall(SYS_bpf, BPF_PROG_LOAD, &a, sizeof(a));
}

/* The program's return value for frame f, or INT32_MIN on error. */
static int32_t verdict(int fd, const uint8_t *f, size_t len)
{
	union bpf_attr a;

	memset(&a, 0, sizeof(a));
	a.test.prog_fd = (uint32_t)fd;
	a.test.data_in = (uint64_t)(uintptr_t)f;
	a.test.data_size_in = (uint32_t)len;
	a.test.repeat = 1;
	if (syscall(SYS_bpf, BPF_PROG_TEST_RUN, &a, sizeof(a)) != 0)
		return INT32_MIN;
	return (int32_t)a.test.retval;
}

/* Ethernet + IPv4 (ihl words, frag field) + transport proto + dport. */
static size_t frame4(uint8_t *f, uint8_t proto, uint16_t dport, unsigned ihl,
		     uint16_t frag)
{
	uint8_t *ip = f + 14, *l4 = ip + ihl * 4;

	memset(f, 0, 256);
	f[0] = 0x02;
	f[6] = 0x02;
	f[12] = 0x08;
	ip[0] = (uint8_t)(0x40 | ihl);
	ip[6] = (uint8_t)(frag >> 8);
	ip[7] = (uint8_t)frag;
	ip[8] = 64;
	ip[9] = proto;
	l4[2] = (uint8_t)(dport >> 8);
	l4[3] = (uint8_t)dport;
	return (size_t)(l4 - f) + 8 + 32;
}

static size_t frame6(uint8_t *f, uint8_t nh, uint16_t dport)
{
	uint8_t *ip = f + 14, *udp = ip + 40;

	memset(f, 0, 256);
	f[0] = 0x02;
	f[6] = 0x02;
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 40;
	ip[6] = nh;
	ip[7] = 64;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	return 14 + 40 + 8 + 32;
}

static void test_verdicts(void)
{
	const int32_t shot = 2, next = -1;
	uint8_t f[256];
	int fd = prog_load();

	if (fd < 0) {
		fprintf(stderr, "skip: BPF_PROG_LOAD: %s\n", strerror(errno));
		skipped = 1;
		return;
	}
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 17, PORT, 5, 0)), shot);
	/* options: the port is found after them */
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 17, PORT, 7, 0)), shot);
	/* DF set is no fragment */
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 17, PORT, 5, 0x4000)), shot);
	MR_CHECK_EQ(verdict(fd, f, frame6(f, 17, PORT)), shot);
	/* not ours: the next program (or the stack) decides */
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 17, PORT + 1, 5, 0)), next);
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 6, PORT, 5, 0)), next);
	MR_CHECK_EQ(verdict(fd, f, frame4(f, 17, PORT, 5, 0x0010)), next);
	MR_CHECK_EQ(verdict(fd, f, frame6(f, 17, PORT + 1)), next);
	MR_CHECK_EQ(verdict(fd, f, frame6(f, 58, PORT)), next);
	frame4(f, 17, PORT, 5, 0);
	f[12] = 0x08;
	f[13] = 0x06; /* ARP */
	MR_CHECK_EQ(verdict(fd, f, 60), next);
	close(fd);
}

/* Wait up to 200 ms for fd to be readable: 1, or 0. */
static int readable(int fd)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };

	return poll(&p, 1, 200) == 1;
}

/* An incoming (not PACKET_OUTGOING) UDP frame to dport on the tap. */
static int tap_saw(int tap, uint16_t dport)
{
	uint8_t buf[2048];
	struct sockaddr_ll sll;
	socklen_t sl;
	ssize_t n;

	while (readable(tap)) {
		sl = sizeof(sll);
		n = recvfrom(tap, buf, sizeof(buf), 0, (struct sockaddr *)&sll,
			     &sl);
		if (n < 14 + 20 + 8 || sll.sll_pkttype == PACKET_OUTGOING)
			continue;
		if (buf[12] == 0x08 && buf[13] == 0 && buf[14 + 9] == 17 &&
		    ((buf[14 + 22] << 8) | buf[14 + 23]) == dport)
			return 1;
	}
	return 0;
}

/* Send one datagram to 127.0.0.1:dport; 1 if rx (bound there) got it. */
static int udp_got(int rx, uint16_t dport)
{
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(dport),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int tx = socket(AF_INET, SOCK_DGRAM, 0);
	char b[64];
	int got;

	memset(b, 7, sizeof(b));
	if (tx < 0 || sendto(tx, b, sizeof(b), 0, (struct sockaddr *)&to,
			     sizeof(to)) != (ssize_t)sizeof(b)) {
		if (tx >= 0)
			close(tx);
		return -1;
	}
	close(tx);
	got = readable(rx) && recv(rx, b, sizeof(b), 0) == (ssize_t)sizeof(b);
	return got;
}

static int bound_udp(uint16_t port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
				 .sin_port = htons(port),
				 .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_DGRAM, 0);

	if (fd >= 0 && bind(fd, (struct sockaddr *)&a, sizeof(a)) != 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static void test_loopback(void)
{
	struct mrdp_dev *d;
	struct ifreq ifr;
	int s, tap, rx, rx2;

	if (skipped)
		return;
	if (unshare(CLONE_NEWNET) != 0) {
		fprintf(stderr, "skip: unshare: %s\n", strerror(errno));
		skipped = 1;
		return;
	}
	s = socket(AF_INET, SOCK_DGRAM, 0);
	memset(&ifr, 0, sizeof(ifr));
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "lo");
	MR_CHECK(s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0);
	ifr.ifr_flags |= IFF_UP;
	MR_CHECK(ioctl(s, SIOCSIFFLAGS, &ifr) == 0);
	close(s);

	d = calloc(1, sizeof(*d));
	MR_CHECK(d != NULL);
	if (!d)
		return;
	d->nplanes = 1;
	d->conf.udp_port = PORT;
	snprintf(d->conf.ports[0], sizeof(d->conf.ports[0]),
		 "net_af_packet0,iface=lo");
	snprintf(d->conf.name, sizeof(d->conf.name), "sil0");
	d->plane[0].ifindex = (int)if_nametoindex("lo");

	tap = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	rx = bound_udp(PORT);
	rx2 = bound_udp(PORT + 1);
	MR_CHECK(tap >= 0 && rx >= 0 && rx2 >= 0);

	/* before: the kernel delivers to its socket */
	MR_CHECK_EQ(udp_got(rx, PORT), 1);
	if (mrdp_silence_open(d) != 1) {
		fprintf(stderr, "skip: no tcx attach on this kernel\n");
		skipped = 1;
		goto out;
	}
	MR_CHECK(d->plane[0].silence_fd >= 0);
	while (readable(tap) && recv(tap, (char[2048]){ 0 }, 2048, 0) > 0)
		;
	/* attached: the tap (ptype_all, our af_packet socket) sees the frame
	 * come in, the kernel's UDP does not */
	MR_CHECK_EQ(udp_got(rx, PORT), 0);
	MR_CHECK_EQ(tap_saw(tap, PORT), 1);
	/* another port: untouched */
	MR_CHECK_EQ(udp_got(rx2, PORT + 1), 1);
	mrdp_silence_close(d);
	MR_CHECK_EQ(d->plane[0].silence_fd, -1);
	/* closed: nothing left behind */
	MR_CHECK_EQ(udp_got(rx, PORT), 1);
out:
	close(tap);
	close(rx);
	close(rx2);
	free(d);
}

static void test_skip(void)
{
	if (skipped) {
		printf("skipped: needs root and Linux 6.6 (tcx)\n");
		exit(77);
	}
}

MR_TEST_MAIN(MR_TEST(test_verdicts), MR_TEST(test_loopback),
	     MR_TEST(test_skip))
