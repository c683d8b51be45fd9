/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Steering (mrdp_steer.c): the kernel runs the socket filter on frames
 * sent through an AF_UNIX datagram socket pair exactly as on an af_packet
 * socket (the datagram is the frame from its first byte), so no root and
 * no interface are needed to check which frames a process would get. And
 * the QPN slots: one holder each, freed on close.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mr_test.h"
#include "mrdp_int.h"
#include "mrdp_pkt.h"

/* mrdp_steer.c asks a net_mrpkt plane for its socket; this test's
 * planes have none (mrdp_pkt.c is not linked). */
int mrdp_pkt_fd(const struct mrdp_pkt *k)
{
	(void)k;
	return -1;
}

/* lib/dp defines it in mrdp_eal.c, not linked here. */
int mrdp_debug;

#define PORT 4797
#define LO 0x030000u
#define HI 0x040000u

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 1 };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 2 };

/* An IPv4 MetaRoCE frame to dqpn on UDP port dport, with ihl 32-bit words
 * of IPv4 header (5: no options); returns its length. */
static size_t frame4(uint8_t *f, uint32_t dqpn, uint16_t dport, unsigned ihl)
{
	struct mrdp_hdr h = { .src_ip = 0x0a000001, .dst_ip = 0x0a000002,
			      .sport = 0xc001, .dport = dport, .ecn = 2 };
	size_t plen = 12 + 16 + 4, opt = (ihl - 5) * 4;
	uint8_t *bth;

	memcpy(h.src_mac, mac_a, 6);
	memcpy(h.dst_mac, mac_b, 6);
	memset(f, 0, 256);
	mrdp_encap_write(f, &h, plen, 0);
	if (opt) {
		/* Move UDP and payload back and grow the header: the filter
		 * must find UDP after the options. */
		memmove(f + MRDP_HDR_LEN + opt - MRDP_UDP_LEN,
			f + MRDP_ETH_LEN + MRDP_IP4_LEN, MRDP_UDP_LEN);
		memset(f + MRDP_ETH_LEN + MRDP_IP4_LEN, 1, opt);
		f[MRDP_ETH_LEN] = (uint8_t)(0x40 | ihl);
	}
	bth = f + MRDP_HDR_LEN + opt;
	bth[0] = 0x0a;
	bth[4] = 0;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	return MRDP_HDR_LEN + opt + plen;
}

/* The same over IPv6 (next header nh: 17 UDP, 58 ICMPv6). */
static size_t frame6(uint8_t *f, uint32_t dqpn, uint16_t dport, uint8_t nh)
{
	uint8_t *ip = f + 14, *udp = ip + 40, *bth = udp + 8;

	memset(f, 0, 256);
	memcpy(f, mac_b, 6);
	memcpy(f + 6, mac_a, 6);
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[5] = 8 + 32;
	ip[6] = nh;
	ip[7] = 64;
	udp[2] = (uint8_t)(dport >> 8);
	udp[3] = (uint8_t)dport;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	return 14 + 40 + 8 + 32;
}

static int pair[2];

/* 1 if a frame sent into the pair comes out of the filtered end. */
static int passes(const uint8_t *f, size_t len)
{
	uint8_t buf[512];
	ssize_t n;

	if (send(pair[0], f, len, 0) != (ssize_t)len)
		return -1;
	n = recv(pair[1], buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0)
		return errno == EAGAIN ? 0 : -1;
	return n == (ssize_t)len && !memcmp(buf, f, len);
}

static void test_filter(void)
{
	struct sock_filter prog[MRDP_STEER_PROG_MAX];
	struct sock_fprog fp;
	uint8_t f[256];
	size_t len;

	MR_CHECK_EQ(socketpair(AF_UNIX, SOCK_DGRAM, 0, pair), 0);
	fp.len = (unsigned short)mrdp_steer_program(prog, PORT, LO, HI);
	fp.filter = prog;
	MR_CHECK(fp.len <= MRDP_STEER_PROG_MAX);
	MR_CHECK_EQ(setsockopt(pair[1], SOL_SOCKET, SO_ATTACH_FILTER, &fp,
			       sizeof(fp)),
		    0);

	/* Our slot: its first and last QPN; the reserved high byte of the
	 * dqpn word does not matter. */
	MR_CHECK_EQ(passes(f, frame4(f, LO, PORT, 5)), 1);
	MR_CHECK_EQ(passes(f, frame4(f, HI - 1, PORT, 5)), 1);
	len = frame4(f, LO + 5, PORT, 5);
	f[MRDP_HDR_LEN + 4] = 0xff;
	MR_CHECK_EQ(passes(f, len), 1);
	/* Another process's QPNs, on either side of the slot. */
	MR_CHECK_EQ(passes(f, frame4(f, LO - 1, PORT, 5)), 0);
	MR_CHECK_EQ(passes(f, frame4(f, HI, PORT, 5)), 0);
	MR_CHECK_EQ(passes(f, frame4(f, 0x11, PORT, 5)), 0);
	/* Another UDP port, TCP, a fragment: not ours. */
	MR_CHECK_EQ(passes(f, frame4(f, LO, PORT + 1, 5)), 0);
	len = frame4(f, LO, PORT, 5);
	f[MRDP_ETH_LEN + 9] = 6;
	MR_CHECK_EQ(passes(f, len), 0);
	len = frame4(f, LO, PORT, 5);
	f[MRDP_ETH_LEN + 7] = 0x10; /* fragment offset 16 */
	MR_CHECK_EQ(passes(f, len), 0);
	/* IPv4 options: UDP and the BTH are found after them. */
	MR_CHECK_EQ(passes(f, frame4(f, LO + 7, PORT, 7)), 1);
	MR_CHECK_EQ(passes(f, frame4(f, HI + 7, PORT, 7)), 0);
	/* ARP: every process. */
	len = mrdp_arp_write(f, 1, mac_a, 0x0a000001, mac_b, 0x0a000002);
	MR_CHECK_EQ(passes(f, len), 1);
	/* IPv6: UDP by QPN as IPv4; neighbour discovery to everyone. */
	MR_CHECK_EQ(passes(f, frame6(f, LO + 1, PORT, 17)), 1);
	MR_CHECK_EQ(passes(f, frame6(f, HI + 1, PORT, 17)), 0);
	MR_CHECK_EQ(passes(f, frame6(f, LO + 1, PORT + 1, 17)), 0);
	MR_CHECK_EQ(passes(f, frame6(f, 0, 0, 58)), 1);
	/* Other ethertypes (VLAN, LLDP): no. */
	len = frame4(f, LO, PORT, 5);
	f[12] = 0x88;
	f[13] = 0xcc;
	MR_CHECK_EQ(passes(f, len), 0);
	close(pair[0]);
	close(pair[1]);
}

static void test_slots(void)
{
	char dir[] = "/tmp/mrdp-steer.XXXXXX";
	struct mrdp_dev *a = calloc(1, sizeof(*a));
	struct mrdp_dev *b = calloc(1, sizeof(*b));
	struct mrdp_dev *c = calloc(1, sizeof(*c));
	uint32_t base, count;
	char err[256], path[64];

	MR_CHECK(a && b && c && mkdtemp(dir));
	snprintf(a->conf.name, sizeof(a->conf.name), "st");
	b->conf = c->conf = a->conf;
	a->conf.udp_port = b->conf.udp_port = c->conf.udp_port = PORT;
	MR_CHECK_EQ(mrdp_qpn_range(a, &base, &count), -ENOENT);
	/* The first free slot is 1, then 2: each holder its own QPNs. */
	MR_CHECK_EQ(mrdp_steer_open(a, dir, 0, err, sizeof(err)), 0);
	MR_CHECK_EQ(mrdp_steer_open(b, dir, 0, err, sizeof(err)), 0);
	MR_CHECK_EQ(mrdp_qpn_range(a, &base, &count), 0);
	MR_CHECK_EQ(base, 1u << MRDP_STEER_SLOT_BITS);
	MR_CHECK_EQ(count, 1u << MRDP_STEER_SLOT_BITS);
	MR_CHECK_EQ(mrdp_qpn_range(b, &base, &count), 0);
	MR_CHECK_EQ(base, 2u << MRDP_STEER_SLOT_BITS);
	/* A slot held elsewhere is refused, with the reason. */
	MR_CHECK_EQ(mrdp_steer_open(c, dir, 1, err, sizeof(err)), -EBUSY);
	MR_CHECK(strstr(err, "in use") != NULL);
	MR_CHECK_EQ(mrdp_steer_open(c, dir, 256, err, sizeof(err)), -EINVAL);
	/* Closing frees it (as the exit of a process does). */
	mrdp_steer_close(a);
	MR_CHECK_EQ(mrdp_steer_open(c, dir, 1, err, sizeof(err)), 0);
	MR_CHECK_EQ(mrdp_qpn_range(c, &base, &count), 0);
	MR_CHECK_EQ(base, 1u << MRDP_STEER_SLOT_BITS);
	/* A directory that does not exist: a clear error. */
	MR_CHECK(mrdp_steer_open(a, "/nonexistent/x", 0, err, sizeof(err)) <
		 0);
	MR_CHECK(strstr(err, "no QPN slot") != NULL);
	mrdp_steer_close(b);
	mrdp_steer_close(c);
	for (unsigned s = 1; s <= 2; s++) {
		snprintf(path, sizeof(path), "%s/qpn-slot.%u", dir, s);
		MR_CHECK_EQ(unlink(path), 0);
	}
	MR_CHECK_EQ(rmdir(dir), 0);
	free(a);
	free(b);
	free(c);
}

MR_TEST_MAIN(MR_TEST(test_filter), MR_TEST(test_slots))
