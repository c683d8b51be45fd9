/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The datapath service without processes: metaroced's switch
 * (mrsvc_switch.c) on crafted frames, its ARP answer against lib/dp's own
 * ARP writer, and the shared rings of mrdp_svc.h: order across the index
 * wrap, a full ring, corrupt indices, and the wake-up rule (a producer is
 * told to write the eventfd once per arming, never while the consumer is
 * awake).
 */
#include <stdlib.h>
#include <string.h>

#include "mr_test.h"
#include "mrdp_encap.h"
#include "mrdp_svc.h"
#include "mrsvc_switch.h"

#define PORT 4797
#define MY_IP 0x0a4e0002u
static const uint8_t mac_a[6] = { 0x02, 0, 0x0a, 0x4e, 0, 1 };
static const uint8_t mac_b[6] = { 0x02, 0, 0x0a, 0x4e, 0, 2 };

/* IPv4 UDP to dport, BTH dqpn; frag: the IPv4 fragment field. */
static size_t frame4(uint8_t *f, uint32_t dst, uint16_t dport, uint32_t dqpn,
		     uint16_t frag)
{
	struct mrdp_hdr h = { .src_ip = 0x0a4e0001,
			      .dst_ip = dst,
			      .sport = 0xc001,
			      .dport = dport,
			      .ecn = 2 };
	uint8_t *bth = f + MRDP_HDR_LEN;

	memcpy(h.src_mac, mac_a, 6);
	memcpy(h.dst_mac, mac_b, 6);
	memset(f, 0, 256);
	mrdp_encap_write(f, &h, 12 + 16 + 4, 0);
	f[MRDP_ETH_LEN + 6] = (uint8_t)(frag >> 8);
	f[MRDP_ETH_LEN + 7] = (uint8_t)frag;
	bth[0] = 0x0a;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	return MRDP_HDR_LEN + 12 + 16 + 4;
}

static void test_classify_v4(void)
{
	uint8_t f[256];
	unsigned slot = 0;
	size_t n = frame4(f, MY_IP, PORT, 0x07abcd, 0);

	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_TO_SLOT);
	MR_CHECK_EQ(slot, 7);
	/* The top of the QPN space, DF set (the fragment test ignores it). */
	n = frame4(f, MY_IP, PORT, 0xffffff, 0x4000);
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_TO_SLOT);
	MR_CHECK_EQ(slot, 255);
	/* Another UDP port, another address: the host's. */
	n = frame4(f, MY_IP, 4791, 0x010000, 0);
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_NOT_OURS);
	n = frame4(f, MY_IP + 1, PORT, 0x010000, 0);
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_NOT_OURS);
	/* A fragment (MF, or an offset) and frames cut short. */
	n = frame4(f, MY_IP, PORT, 0x010000, 0x2000);
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_MALFORMED);
	n = frame4(f, MY_IP, PORT, 0x010000, 0x0001);
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_MALFORMED);
	n = frame4(f, MY_IP, PORT, 0x010000, 0);
	MR_CHECK_EQ(mrsvc_classify(f, MRDP_HDR_LEN + 11, PORT, MY_IP, &slot),
		    MRSVC_MALFORMED);
	MR_CHECK_EQ(mrsvc_classify(f, 13, PORT, MY_IP, &slot), MRSVC_MALFORMED);
	/* TCP to our address. */
	f[MRDP_ETH_LEN + 9] = 6;
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_NOT_OURS);
	/* A VLAN tag or LLDP: not ours. */
	f[12] = 0x81;
	f[13] = 0x00;
	MR_CHECK_EQ(mrsvc_classify(f, n, PORT, MY_IP, &slot), MRSVC_NOT_OURS);
}

static void test_classify_v6(void)
{
	uint8_t f[256];
	uint8_t *ip = f + 14, *udp = ip + 40, *bth = udp + 8;
	unsigned slot = 0;

	memset(f, 0, sizeof(f));
	f[12] = 0x86;
	f[13] = 0xdd;
	ip[0] = 0x60;
	ip[6] = 17;
	udp[2] = PORT >> 8;
	udp[3] = PORT & 255;
	bth[5] = 0x2a;
	MR_CHECK_EQ(mrsvc_classify(f, 14 + 40 + 8 + 32, PORT, MY_IP, &slot),
		    MRSVC_TO_SLOT);
	MR_CHECK_EQ(slot, 0x2a);
	MR_CHECK_EQ(mrsvc_classify(f, 14 + 40 + 8 + 11, PORT, MY_IP, &slot),
		    MRSVC_MALFORMED);
	ip[6] = 58; /* ICMPv6: neighbour discovery, to everyone */
	MR_CHECK_EQ(mrsvc_classify(f, 14 + 40 + 32, PORT, MY_IP, &slot),
		    MRSVC_TO_ALL);
	ip[6] = 6;
	MR_CHECK_EQ(mrsvc_classify(f, 14 + 40 + 32, PORT, MY_IP, &slot),
		    MRSVC_NOT_OURS);
}

static void test_arp(void)
{
	uint8_t req[64], want[64], got[64];
	unsigned slot = 0;

	mrdp_arp_write(req, 1, mac_a, 0x0a4e0001, NULL, MY_IP);
	MR_CHECK_EQ(mrsvc_classify(req, 60, PORT, MY_IP, &slot), MRSVC_ARP_ASK);
	/* Our answer is the one lib/dp itself would send. */
	MR_CHECK_EQ(mrsvc_arp_reply(req, mac_b, MY_IP, got), 60);
	mrdp_arp_write(want, 2, mac_b, MY_IP, mac_a, 0x0a4e0001);
	MR_CHECK_MEM(got, want, 60);
	/* A request for another address is not ours; a reply is for
	 * every application; a short one is malformed. */
	mrdp_arp_write(req, 1, mac_a, 0x0a4e0001, NULL, MY_IP + 1);
	MR_CHECK_EQ(mrsvc_classify(req, 60, PORT, MY_IP, &slot),
		    MRSVC_NOT_OURS);
	MR_CHECK_EQ(mrsvc_classify(want, 60, PORT, MY_IP, &slot), MRSVC_TO_ALL);
	MR_CHECK_EQ(mrsvc_classify(want, 14 + 27, PORT, MY_IP, &slot),
		    MRSVC_MALFORMED);
}

static struct mrsvc_ring *new_ring(void)
{
	struct mrsvc_ring *r = aligned_alloc(64, sizeof(*r));

	memset(r, 0, sizeof(*r));
	return r;
}

/* Frames keep their order and lengths across the 32-bit index wrap, and a
 * full ring takes nothing more. */
static void test_ring_order(void)
{
	struct mrsvc_ring *r = new_ring();
	uint32_t head, tail, i, k, seq = 0, next = 0;

	atomic_store(&r->head, UINT32_MAX - 700);
	atomic_store(&r->tail, UINT32_MAX - 700);
	for (k = 0; k < 7; k++) {
		uint32_t room = mrsvc_ring_room(r, &head), n;

		MR_CHECK_EQ(room, MRSVC_RING_SLOTS);
		n = 300 + k * 97 > room ? room : 300 + k * 97;
		for (i = 0; i < n; i++)
			r->len[(head + i) & (MRSVC_RING_SLOTS - 1)] = seq++;
		MR_CHECK_EQ(mrsvc_ring_publish(r, head, n), 0);
		MR_CHECK_EQ(mrsvc_ring_ready(r, &tail), n);
		for (i = 0; i < n; i++)
			MR_CHECK_EQ(r->len[(tail + i) & (MRSVC_RING_SLOTS - 1)],
				    next++);
		mrsvc_ring_consume(r, tail, n);
	}
	MR_CHECK(atomic_load(&r->head) < 4096); /* it wrapped */
	head = atomic_load(&r->head);
	MR_CHECK_EQ(mrsvc_ring_publish(r, head, MRSVC_RING_SLOTS), 0);
	MR_CHECK_EQ(mrsvc_ring_room(r, &head), 0);
	free(r);
}

/* An application may write anything in its region: the daemon's view of
 * a ring with impossible indices is "empty, resynchronised", never a read
 * or a write past the ring. */
static void test_ring_corrupt(void)
{
	struct mrsvc_ring *r = new_ring();
	uint32_t tail, head;

	atomic_store(&r->head, 5000);
	atomic_store(&r->tail, 10);
	MR_CHECK_EQ(mrsvc_ring_ready(r, &tail), 0);
	MR_CHECK_EQ(atomic_load(&r->tail), 5000);
	MR_CHECK_EQ(mrsvc_ring_ready(r, &tail), 0);
	atomic_store(&r->tail, 9000); /* tail ahead of head */
	MR_CHECK_EQ(mrsvc_ring_room(r, &head), 0);
	free(r);
}

/* The wake-up rule: no eventfd while the consumer is awake; one per
 * arming once it sleeps; an arming that finds a frame says "do not
 * sleep". */
static void test_ring_wake(void)
{
	struct mrsvc_ring *r = new_ring();
	uint32_t head, tail;

	mrsvc_ring_room(r, &head);
	MR_CHECK_EQ(mrsvc_ring_publish(r, head, 1), 0);
	MR_CHECK_EQ(mrsvc_ring_arm(r), 0); /* a frame is there */
	MR_CHECK_EQ(mrsvc_ring_ready(r, &tail), 1);
	mrsvc_ring_consume(r, tail, 1);
	atomic_store(&r->sleeping, 0);
	MR_CHECK_EQ(mrsvc_ring_arm(r), 1); /* empty: may sleep */
	mrsvc_ring_room(r, &head);
	MR_CHECK_EQ(mrsvc_ring_publish(r, head, 1), 1); /* write it */
	mrsvc_ring_room(r, &head);
	MR_CHECK_EQ(mrsvc_ring_publish(r, head, 1), 0); /* once */
	MR_CHECK_EQ(atomic_load(&r->sleeping), 0);
	free(r);
}

static void test_layout(void)
{
	struct mrsvc_layout l, l2;
	uint8_t *base = (uint8_t *)0x100000;

	MR_CHECK_EQ(mrsvc_layout_of(&l, 2, 4222), 0);
	MR_CHECK_EQ(l.buf_size, 4224);
	MR_CHECK_EQ(l.bufs_off % 4096, 0);
	MR_CHECK(l.bufs_off >= l.rings_off + 4 * sizeof(struct mrsvc_ring));
	MR_CHECK_EQ(l.len, l.bufs_off + 4ull * MRSVC_RING_SLOTS * 4224);
	/* The last buffer of the last ring ends at the region's end; a
	 * descriptor index is taken modulo the ring. */
	MR_CHECK(mrsvc_buf_at(base, &l, 3, MRSVC_RING_SLOTS - 1) + 4224 ==
		 base + l.len);
	MR_CHECK(mrsvc_buf_at(base, &l, 1, 5 + MRSVC_RING_SLOTS) ==
		 mrsvc_buf_at(base, &l, 1, 5));
	MR_CHECK(mrsvc_layout_of(&l2, 0, 4222) != 0);
	MR_CHECK(mrsvc_layout_of(&l2, MRSVC_MAX_PLANES + 1, 4222) != 0);
	MR_CHECK(mrsvc_layout_of(&l2, 1, 70000) != 0);
}

static void test_port_path(void)
{
	char p[16];

	MR_CHECK_EQ(mrsvc_port_path("service:/run/a.sock", p, sizeof(p)), 1);
	MR_CHECK(strcmp(p, "/run/a.sock") == 0);
	MR_CHECK_EQ(mrsvc_port_path("service:/run/a.sock,x=1", p, sizeof(p)),
		    1);
	MR_CHECK(strcmp(p, "/run/a.sock") == 0);
	MR_CHECK_EQ(
		mrsvc_port_path("service:/a/very/long/path.sock", p, sizeof(p)),
		-1);
	MR_CHECK_EQ(mrsvc_port_path("service:", p, sizeof(p)), -1);
	MR_CHECK_EQ(mrsvc_port_path("net_af_packet0,iface=x", p, sizeof(p)), 0);
}

MR_TEST_MAIN(MR_TEST(test_classify_v4), MR_TEST(test_classify_v6),
	     MR_TEST(test_arp), MR_TEST(test_ring_order),
	     MR_TEST(test_ring_corrupt), MR_TEST(test_ring_wake),
	     MR_TEST(test_layout), MR_TEST(test_port_path))
