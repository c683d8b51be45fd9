/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The net_mrpkt port's coalescing plan (mrdp_pkt.c): which frames of a
 * burst become one UDP GSO super-frame. Frames made by the datapath's own
 * encapsulation (mrdp_encap.c); the traffic itself is tested over veth
 * (dp_pkt.sh).
 */
#include <stdlib.h>
#include <string.h>

#include "mr_test.h"
#include "mrdp_encap.h"
#include "mrdp_pkt.h"

#define NF 80
#define BTH_LEN 12

static uint8_t buf[NF][9000];
static struct mrdp_pkt_frame fr[NF];
static unsigned grp[NF];

/* Frame i: a MetaRoCE packet of plen bytes (BTH first, dqpn) on UDP
 * source port sport, IPv4 or IPv6. */
static void frame(unsigned i, uint16_t sport, uint32_t dqpn, size_t plen,
		  int v6)
{
	struct mrdp_hdr h = { .src_ip = 0x0a000001,
			      .dst_ip = 0x0a000002,
			      .sport = sport,
			      .dport = 4791 + 6,
			      .ecn = 2,
			      .v6 = v6,
			      .flow = sport };
	size_t hl = v6 ? MRDP_HDR6_LEN : MRDP_HDR_LEN;
	uint8_t *bth = buf[i] + hl;

	memset(h.src_mac, 0x02, 6);
	memset(h.dst_mac, 0x04, 6);
	h.src6[0] = 0xfe;
	h.src6[1] = 0x80;
	h.src6[15] = 1;
	memcpy(h.dst6, h.src6, 16);
	h.dst6[15] = 2;
	memset(bth, (int)(i & 0xff), plen);
	bth[4] = 0;
	bth[5] = (uint8_t)(dqpn >> 16);
	bth[6] = (uint8_t)(dqpn >> 8);
	bth[7] = (uint8_t)dqpn;
	if (v6)
		mrdp_encap_write6(buf[i], &h, plen, 0);
	else
		mrdp_encap_write(buf[i], &h, plen, 0);
	fr[i].hdr = buf[i];
	fr[i].hdr_len = hl + plen;
	fr[i].len = hl + plen;
	fr[i].nseg = 1;
}

/* The pacer interleaves a connection's paths: each path's frames still
 * make one super-frame, in their order. */
static void test_interleaved_paths(void)
{
	unsigned i;

	for (i = 0; i < 16; i++)
		frame(i, (uint16_t)(0xc000 + i % 4), 0x10005, 4096 + BTH_LEN,
		      0);
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 16, grp), 4);
	for (i = 0; i < 16; i++)
		MR_CHECK_EQ(grp[i], i % 4);
}

/* A shorter frame ends a super-frame (only the last segment may be
 * short); a longer one starts the next, and nothing of the flow goes back
 * to the earlier one after it. */
static void test_sizes(void)
{
	frame(0, 0xc000, 7, 4108, 0);
	frame(1, 0xc000, 7, 4108, 0);
	frame(2, 0xc000, 7, 1000, 0);
	frame(3, 0xc000, 7, 4108, 0);
	frame(4, 0xc000, 7, 4108, 0);
	frame(5, 0xc000, 7, 200, 0);
	frame(6, 0xc000, 7, 4108, 0);
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 7, grp), 3);
	MR_CHECK_EQ(grp[0], 0);
	MR_CHECK_EQ(grp[1], 0);
	MR_CHECK_EQ(grp[2], 0);
	MR_CHECK_EQ(grp[3], 1);
	MR_CHECK_EQ(grp[4], 1);
	MR_CHECK_EQ(grp[5], 1);
	MR_CHECK_EQ(grp[6], 2);
	/* Bigger after smaller: two. */
	frame(0, 0xc000, 7, 1000, 0);
	frame(1, 0xc000, 7, 4108, 0);
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 2, grp), 2);
}

/* The receiver's steering filter reads the first segment's dqpn: frames
 * to another QP on the same path are another super-frame; so are other
 * addresses and ports. */
static void test_flow_key(void)
{
	frame(0, 0xc000, 0x10001, 4108, 0);
	frame(1, 0xc000, 0x20001, 4108, 0);
	frame(2, 0xc001, 0x10001, 4108, 0);
	frame(3, 0xc000, 0x10001, 4108, 0);
	frame(4, 0xc000, 0x10001, 4108, 0);
	buf[4][30 + 3] ^= 1; /* IPv4 destination */
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 5, grp), 4);
	MR_CHECK_EQ(grp[0], 0);
	MR_CHECK_EQ(grp[1], 1);
	MR_CHECK_EQ(grp[2], 2);
	MR_CHECK_EQ(grp[3], 0);
	MR_CHECK_EQ(grp[4], 3);
}

/* At most MRDP_PKT_MAX_SEGS segments, at most an IP packet's 64 KiB and
 * a receiver's ring slot. */
static void test_limits(void)
{
	unsigned i;

	for (i = 0; i < 70; i++)
		frame(i, 0xc000, 9, 512, 0);
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 70, grp), 2);
	MR_CHECK_EQ(grp[MRDP_PKT_MAX_SEGS - 1], 0);
	MR_CHECK_EQ(grp[MRDP_PKT_MAX_SEGS], 1);
	/* 8 x 8000 + 28 fits an IPv4 packet, 9 do not. */
	for (i = 0; i < 10; i++)
		frame(i, 0xc000, 9, 8000, 0);
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 10, grp), 2);
	MR_CHECK_EQ(grp[7], 0);
	MR_CHECK_EQ(grp[8], 1);
	/* And within the receiver's 64 KiB ring slot (MRDP_PKT_FRAME_MAX):
	 * 16 x 4092 B would fit an IPv4 packet, not the slot. */
	{
		unsigned fit = (MRDP_PKT_FRAME_MAX - MRDP_HDR_LEN) / 4092;

		MR_CHECK(16 * 4092 + 28 <= 65535);
		MR_CHECK(fit < 16);
		for (i = 0; i < 17; i++)
			frame(i, 0xc000, 9, 4092, 0);
		MR_CHECK_EQ(mrdp_pkt_plan(fr, 17, grp), 2);
		MR_CHECK_EQ(grp[fit - 1], 0);
		MR_CHECK_EQ(grp[fit], 1);
	}
	/* A frame of more mbuf segments than one message's iovecs. */
	for (i = 0; i < 3; i++) {
		frame(i, 0xc000, 9, 4108, 0);
		fr[i].nseg = 400;
	}
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 3, grp), 2);
	MR_CHECK_EQ(grp[1], 0);
	MR_CHECK_EQ(grp[2], 1);
}

/* Not a MetaRoCE UDP frame (ARP, padded, an IPv4 fragment): alone, and
 * it does not stop the flows around it from coalescing. */
static void test_others_alone(void)
{
	frame(0, 0xc000, 9, 4108, 0);
	memset(buf[1], 0, 60);
	buf[1][12] = 0x08;
	buf[1][13] = 0x06;
	fr[1].hdr = buf[1];
	fr[1].hdr_len = fr[1].len = 60;
	fr[1].nseg = 1;
	frame(2, 0xc000, 9, 4108, 0);
	frame(3, 0xc001, 9, 4108, 0);
	fr[3].len += 4; /* Ethernet padding after the IP packet */
	frame(4, 0xc002, 9, 4108, 0);
	buf[4][20] |= 0x20; /* more fragments */
	frame(5, 0xc002, 9, 4108, 0);
	buf[5][20] |= 0x20;
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 6, grp), 5);
	MR_CHECK_EQ(grp[0], 0);
	MR_CHECK_EQ(grp[1], 1);
	MR_CHECK_EQ(grp[2], 0);
	MR_CHECK_EQ(grp[3], 2);
	MR_CHECK_EQ(grp[4], 3);
	MR_CHECK_EQ(grp[5], 4);
}

static void test_ipv6(void)
{
	unsigned i;

	for (i = 0; i < 6; i++)
		frame(i, (uint16_t)(0xc000 + i % 2), 0x10005, 4108, 1);
	frame(6, 0xc000, 0x10005, 4108, 0); /* the same path over IPv4 */
	MR_CHECK_EQ(mrdp_pkt_plan(fr, 7, grp), 3);
	for (i = 0; i < 6; i++)
		MR_CHECK_EQ(grp[i], i % 2);
	MR_CHECK_EQ(grp[6], 2);
}

MR_TEST_MAIN(MR_TEST(test_interleaved_paths), MR_TEST(test_sizes),
	     MR_TEST(test_flow_key), MR_TEST(test_limits),
	     MR_TEST(test_others_alone), MR_TEST(test_ipv6))
