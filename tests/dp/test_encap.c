/* SPDX-License-Identifier: BSD-2-Clause */
/* Ethernet / IPv4 / UDP / ARP framing and classification, byte-exact. */
#include <string.h>

#include "mr_test.h"
#include "mrdp.h"
#include "mrdp_encap.h"
#include "mr_gid.h"

static const uint8_t mac_a[6] = { 0x02, 0x00, 0xc0, 0x00, 0x02, 0x01 };
static const uint8_t mac_b[6] = { 0x02, 0x00, 0xc0, 0x00, 0x02, 0x02 };
#define IP_A 0xc0a80001u /* 192.168.0.1 */
#define IP_B 0xc0a800c7u /* 192.168.0.199 */

/* A plain 16-bit-at-a-time RFC 1071 sum: the reference for the fast one. */
static uint16_t ref_csum(const uint8_t *p, size_t n, uint32_t sum)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		sum += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		sum += (uint32_t)p[n - 1] << 8;
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint8_t rnd8(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint8_t)rng;
}

/* The IPv4 pseudo-header (RFC 768) of the frame f, summed by ref_csum. */
static uint16_t ref_pseudo4(const uint8_t *f, size_t ulen)
{
	uint8_t pseudo[12];

	memcpy(pseudo, f + 26, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	pseudo[10] = (uint8_t)(ulen >> 8);
	pseudo[11] = (uint8_t)ulen;
	return ref_csum(pseudo, 12, 0);
}

static void fill_hdr(struct mrdp_hdr *h, uint8_t ecn);

/*
 * The checksums the framing computes (rte_ipv4_cksum, rte_ipv4_udptcp_
 * cksum, and mrdp_encap_offload4's seed) against the plain reference,
 * at every payload length from 0 to 80 (odd lengths: the last byte is
 * the high byte of a word) and at the largest data packets; and
 * classify takes what write made.
 */
static void test_csum_matches_reference(void)
{
	static const size_t big[] = { 4171, 4172 };
	static uint8_t f[MRDP_HDR_LEN + 4200];
	struct mrdp_local me = { .ip = 0xc0a800c7u, .udp_port = 4797 };
	struct mrdp_hdr h;
	struct mrdp_rx r;
	size_t n, i;

	memcpy(me.mac, mac_b, 6);
	for (n = 0; n < 80 + 2; n++) {
		size_t plen = n < 80 ? n : big[n - 80];

		for (i = 0; i < plen; i++)
			f[MRDP_HDR_LEN + i] = rnd8();
		fill_hdr(&h, MRDP_ECN_ECT0);
		h.sport = (uint16_t)(0xc000 + n);
		mrdp_encap_write(f, &h, plen, 1);
		MR_CHECK_EQ(ref_csum(f + 14, 20, 0), 0xffff);
		MR_CHECK_EQ(
			ref_csum(f + 34, 8 + plen, ref_pseudo4(f, 8 + plen)),
			0xffff);
		MR_CHECK((f[40] | f[41]) != 0);
		mrdp_encap_classify(f, MRDP_HDR_LEN + plen, &me, 0, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
		MR_CHECK_EQ(r.len, plen);
		/* One bit flipped in the payload: the UDP checksum fails. */
		if (plen) {
			f[MRDP_HDR_LEN + plen - 1] ^= 0x10;
			mrdp_encap_classify(f, MRDP_HDR_LEN + plen, &me, 0, &r);
			MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
			MR_CHECK_EQ(r.drop, MRDP_RXD_UDP_CSUM);
		}
		/* Offload: IPv4 checksum 0, UDP seeded with the pseudo-
		 * header sum (big-endian on the wire). */
		mrdp_encap_write(f, &h, plen, 0);
		mrdp_encap_offload4(f);
		MR_CHECK_EQ(f[24] | f[25], 0);
		MR_CHECK_EQ((unsigned)(f[40] << 8 | f[41]),
			    ref_pseudo4(f, 8 + plen));
	}
}

static void fill_hdr(struct mrdp_hdr *h, uint8_t ecn)
{
	memcpy(h->src_mac, mac_a, 6);
	memcpy(h->dst_mac, mac_b, 6);
	h->src_ip = IP_A;
	h->dst_ip = IP_B;
	h->sport = 0xc123;
	h->dport = 4797;
	h->ecn = ecn;
}

/* The IPv4 header of a well-known worked example (total length 0x73,
 * DF, TTL 64, UDP, 192.168.0.1 -> 192.168.0.199) has checksum 0xb861. */
static void test_ipv4_header_known_vector(void)
{
	static const uint8_t want[20] = { 0x45, 0x00, 0x00, 0x73, 0x00,
					  0x00, 0x40, 0x00, 0x40, 0x11,
					  0xb8, 0x61, 0xc0, 0xa8, 0x00,
					  0x01, 0xc0, 0xa8, 0x00, 0xc7 };
	uint8_t f[MRDP_HDR_LEN + 87];
	struct mrdp_hdr h;

	memset(f, 0x5a, sizeof(f));
	fill_hdr(&h, 0);
	mrdp_encap_write(f, &h, 87, 0);
	MR_CHECK_MEM(f, mac_b, 6);
	MR_CHECK_MEM(f + 6, mac_a, 6);
	MR_CHECK_EQ(f[12], 0x08);
	MR_CHECK_EQ(f[13], 0x00);
	MR_CHECK_MEM(f + 14, want, 20);
	/* UDP: 0xc123 -> 4797 (0x12bd), length 95, checksum 0 (off). */
	MR_CHECK_EQ(f[34], 0xc1);
	MR_CHECK_EQ(f[35], 0x23);
	MR_CHECK_EQ(f[36], 0x12);
	MR_CHECK_EQ(f[37], 0xbd);
	MR_CHECK_EQ(f[38], 0);
	MR_CHECK_EQ(f[39], 95);
	MR_CHECK_EQ(f[40], 0);
	MR_CHECK_EQ(f[41], 0);
}

static void test_udp_checksum_and_ecn(void)
{
	uint8_t f[MRDP_HDR_LEN + 333], pseudo[12];
	struct mrdp_hdr h;
	uint32_t s;
	size_t i;

	for (i = 0; i < sizeof(f); i++)
		f[i] = rnd8();
	fill_hdr(&h, MRDP_ECN_ECT0);
	mrdp_encap_write(f, &h, 333, 1);
	MR_CHECK_EQ(f[15], 0x02); /* TOS: DSCP 0, ECT(0) */
	MR_CHECK_EQ(ref_csum(f + 14, 20, 0), 0xffff);
	memcpy(pseudo, f + 26, 8);
	pseudo[8] = 0;
	pseudo[9] = 17;
	pseudo[10] = (uint8_t)((8 + 333) >> 8);
	pseudo[11] = (uint8_t)(8 + 333);
	s = ref_csum(pseudo, 12, 0);
	MR_CHECK_EQ(ref_csum(f + 34, 8 + 333, s), 0xffff);
	MR_CHECK((f[40] | f[41]) != 0);
}

static void make_data(uint8_t *f, size_t plen, uint8_t ecn, int csum)
{
	struct mrdp_hdr h;
	size_t i;

	for (i = 0; i < plen; i++)
		f[MRDP_HDR_LEN + i] = (uint8_t)(i * 7 + 1);
	memcpy(h.src_mac, mac_a, 6);
	memcpy(h.dst_mac, mac_b, 6);
	h.src_ip = IP_A;
	h.dst_ip = IP_B;
	h.sport = 0xc001;
	h.dport = 4797;
	h.ecn = ecn;
	mrdp_encap_write(f, &h, plen, csum);
}

static const struct mrdp_local me_b = {
	.ip = IP_B,
	.mac = { 0x02, 0x00, 0xc0, 0x00, 0x02, 0x02 },
	.udp_port = 4797,
};

static void test_classify_data(void)
{
	uint8_t f[MRDP_HDR_LEN + 100];
	struct mrdp_rx r;

	make_data(f, 100, MRDP_ECN_ECT0, 1);
	mrdp_encap_classify(f, sizeof(f), &me_b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	MR_CHECK_EQ(r.off, MRDP_HDR_LEN);
	MR_CHECK_EQ(r.len, 100);
	MR_CHECK_EQ(r.src_ip, IP_A);
	MR_CHECK_MEM(r.src_mac, mac_a, 6);
	MR_CHECK_EQ(r.sport, 0xc001);
	MR_CHECK_EQ(r.ce, 0);
	/* Ethernet padding after the IP packet is ignored. */
	mrdp_encap_classify(f, sizeof(f), &me_b, 0, &r);
	MR_CHECK_EQ(r.len, 100);

	make_data(f, 100, MRDP_ECN_CE, 0);
	/* CE set: the IPv4 checksum covers it; still valid. */
	mrdp_encap_classify(f, sizeof(f), &me_b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	MR_CHECK_EQ(r.ce, 1);
}

static void expect_drop(const uint8_t *f, size_t len, int reason)
{
	struct mrdp_rx r;

	mrdp_encap_classify(f, len, &me_b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
	MR_CHECK_EQ(r.drop, reason);
}

static void test_classify_drops(void)
{
	uint8_t f[MRDP_HDR_LEN + 64], g[sizeof(f)];
	size_t n;

	make_data(f, 64, MRDP_ECN_ECT0, 1);
	memcpy(g, f, sizeof(f));
	g[12] = 0x86; /* IPv6 ethertype, IPv4 header: bad version */
	g[13] = 0xdd;
	expect_drop(g, sizeof(g), MRDP_RXD_IP_HDR);
	memcpy(g, f, sizeof(f));
	g[12] = 0x88; /* another ethertype (LLDP) */
	g[13] = 0xcc;
	expect_drop(g, sizeof(g), MRDP_RXD_NOT_IPV4);
	memcpy(g, f, sizeof(f));
	g[5] ^= 1; /* other MAC */
	expect_drop(g, sizeof(g), MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[33] ^= 1; /* other destination IP (checksum not reached) */
	expect_drop(g, sizeof(g), MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[37] ^= 1; /* other UDP port */
	expect_drop(g, sizeof(g), MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[23] = 6; /* TCP */
	expect_drop(g, sizeof(g), MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[22] ^= 1; /* TTL changed: IPv4 checksum wrong */
	expect_drop(g, sizeof(g), MRDP_RXD_IP_CSUM);
	memcpy(g, f, sizeof(f));
	g[MRDP_HDR_LEN + 10] ^= 0x40; /* payload bit: UDP checksum wrong */
	expect_drop(g, sizeof(g), MRDP_RXD_UDP_CSUM);
	memcpy(g, f, sizeof(f));
	g[20] |= 0x20; /* MF: a fragment */
	expect_drop(g, sizeof(g), MRDP_RXD_IP_HDR);
	memcpy(g, f, sizeof(f));
	g[14] = 0x65; /* IP version 6 in an IPv4 ethertype */
	expect_drop(g, sizeof(g), MRDP_RXD_IP_HDR);
	for (n = 0; n < sizeof(f); n++) {
		struct mrdp_rx r;

		/* Every truncation is refused, never read past; once the
		 * headers are whole it is a MetaRoCE frame the port cut
		 * (a super-frame in a slot too small), before that a short
		 * one. */
		mrdp_encap_classify(f, n, &me_b, 0, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
		if (n >= MRDP_HDR_LEN)
			MR_CHECK_EQ(r.drop, MRDP_RXD_TRUNCATED);
		else if (n >= MRDP_ETH_LEN + 20)
			MR_CHECK_EQ(r.drop, MRDP_RXD_SHORT);
	}
	/* Cut, but to another UDP port (the host's traffic): short. */
	memcpy(g, f, sizeof(f));
	g[37] ^= 1;
	expect_drop(g, MRDP_HDR_LEN + 10, MRDP_RXD_SHORT);
	/* A UDP checksum of 0 means none: accepted. */
	make_data(g, 64, MRDP_ECN_ECT0, 0);
	{
		struct mrdp_rx r;

		g[MRDP_HDR_LEN + 10] ^= 0x40;
		mrdp_encap_classify(g, sizeof(g), &me_b, 0, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
		/* Hardware said good: the software check is skipped. */
		make_data(g, 64, MRDP_ECN_ECT0, 1);
		g[MRDP_HDR_LEN + 10] ^= 0x40;
		mrdp_encap_classify(g, sizeof(g), &me_b,
				    MRDP_CSUM_IP_GOOD | MRDP_CSUM_L4_GOOD, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	}
}

static void test_arp(void)
{
	static const uint8_t zero[6];
	static const uint8_t want_req[42] = {
		0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x02, 0x00, 0xc0,
		0x00, 0x02, 0x01, 0x08, 0x06, 0x00, 0x01, 0x08, 0x00,
		0x06, 0x04, 0x00, 0x01, 0x02, 0x00, 0xc0, 0x00, 0x02,
		0x01, 0xc0, 0xa8, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00,
		0x00, 0x00, 0xc0, 0xa8, 0x00, 0xc7
	};
	uint8_t f[MRDP_ETH_MIN_FRAME];
	struct mrdp_local me_a = { .ip = IP_A, .udp_port = 4797 };
	struct mrdp_rx r;
	size_t i;

	memcpy(me_a.mac, mac_a, 6);
	MR_CHECK_EQ(mrdp_arp_write(f, 1, mac_a, IP_A, zero, IP_B), 60);
	MR_CHECK_MEM(f, want_req, 42);
	for (i = 42; i < 60; i++)
		MR_CHECK_EQ(f[i], 0);
	mrdp_encap_classify(f, 60, &me_b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_ARP_REQ);
	MR_CHECK_EQ(r.src_ip, IP_A);
	MR_CHECK_MEM(r.src_mac, mac_a, 6);
	/* Not for us: dropped. */
	mrdp_encap_classify(f, 60, &me_a, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
	MR_CHECK_EQ(r.drop, MRDP_RXD_ARP);

	/* B's reply to A. */
	mrdp_arp_write(f, 2, mac_b, IP_B, mac_a, IP_A);
	MR_CHECK_MEM(f, mac_a, 6);
	MR_CHECK_MEM(f + 6, mac_b, 6);
	MR_CHECK_EQ(f[21], 2);
	MR_CHECK_MEM(f + 32, mac_a, 6);
	mrdp_encap_classify(f, 60, &me_a, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_ARP_REPLY);
	MR_CHECK_EQ(r.src_ip, IP_B);
	MR_CHECK_MEM(r.src_mac, mac_b, 6);
	MR_CHECK_EQ(r.target_ip, IP_A);
	/* Truncated ARP. */
	mrdp_encap_classify(f, 41, &me_a, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_SHORT);
	/* Someone claiming our own address teaches nothing. */
	mrdp_arp_write(f, 1, mac_b, IP_A, zero, IP_A);
	mrdp_encap_classify(f, 60, &me_a, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
}

static void test_unicast(void)
{
	MR_CHECK(!mrdp_ip_unicast(0));
	MR_CHECK(!mrdp_ip_unicast(0xffffffffu));
	MR_CHECK(!mrdp_ip_unicast(0xe0000001u));
	MR_CHECK(mrdp_ip_unicast(0x0a000001u));
}

static void test_json(void)
{
	struct mrdp_counters c;
	char buf[4096], small[40];
	int n;

	memset(&c, 0, sizeof(c));
	c.nplanes = 1;
	c.plane[0].rx_pkts = 7;
	c.plane[0].rx_drop[MRDP_RXD_UDP_CSUM] = 3;
	c.plane[0].tx_drop[MRDP_TXD_NEIGH_FAIL] = 2;
	n = mrdp_counters_json(&c, "mr0", buf, sizeof(buf));
	MR_CHECK(n > 0);
	MR_CHECK_EQ((size_t)n, strlen(buf));
	MR_CHECK(strstr(buf, "{\"device\":\"mr0\"") == buf);
	MR_CHECK(strstr(buf, "\"rx_pkts\":7,") != NULL);
	MR_CHECK(strstr(buf, "\"udp_checksum\":3") != NULL);
	MR_CHECK(strstr(buf, "\"neighbour_unreachable\":2") != NULL);
	MR_CHECK(strcmp(buf + n - 3, "]}\n") == 0);
	MR_CHECK_EQ(mrdp_counters_json(&c, "mr0", small, sizeof(small)),
		    -28 /* -ENOSPC */);
}

/* IPv6 (MR-ENC-11..13). A: 2001:db8::1, B: 2001:db8::c7. */
static const uint8_t ip6_a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0x01 };
static const uint8_t ip6_b[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 0xc7 };

static void local6(struct mrdp_local *me, const uint8_t mac[6],
		   const uint8_t ip6[16])
{
	memset(me, 0, sizeof(*me));
	memcpy(me->mac, mac, 6);
	me->udp_port = 4797;
	mr_gid_ll6_of_mac(mac, me->ll6);
	if (ip6) {
		memcpy(me->ip6, ip6, 16);
		me->has_ip6 = 1;
	}
}

static void make_data6(uint8_t *f, size_t plen, uint8_t ecn,
		       const uint8_t src[16], const uint8_t dst[16])
{
	struct mrdp_hdr h;
	size_t i;

	memset(&h, 0, sizeof(h));
	for (i = 0; i < plen; i++)
		f[MRDP_HDR6_LEN + i] = (uint8_t)(i * 7 + 1);
	memcpy(h.src_mac, mac_a, 6);
	memcpy(h.dst_mac, mac_b, 6);
	h.v6 = 1;
	memcpy(h.src6, src, 16);
	memcpy(h.dst6, dst, 16);
	h.flow = 0xc001;
	h.sport = 0xc001;
	h.dport = 4797;
	h.ecn = ecn;
	mrdp_encap_write6(f, &h, plen, 1);
}

static void test_ll6_of_mac(void)
{
	/* RFC 4291 appendix A: 02:00:c0:00:02:01 -> fe80::c0:ff:fe00:201 */
	static const uint8_t want[16] = { 0xfe, 0x80, 0,    0,	  0,	0,
					  0,	0,    0x00, 0x00, 0xc0, 0xff,
					  0xfe, 0x00, 0x02, 0x01 };
	uint8_t ll[16];

	mr_gid_ll6_of_mac(mac_a, ll);
	MR_CHECK_MEM(ll, want, 16);
	MR_CHECK(mrdp_ip6_linklocal(ll));
	MR_CHECK(!mrdp_ip6_linklocal(ip6_a));
	MR_CHECK(mrdp_ip6_unicast(ip6_a));
	MR_CHECK(mrdp_ip6_unicast(ll));
	{
		uint8_t a[16] = { 0 };

		MR_CHECK(!mrdp_ip6_unicast(a)); /* :: */
		a[15] = 1;
		MR_CHECK(!mrdp_ip6_unicast(a)); /* ::1 */
		a[10] = a[11] = 0xff;
		MR_CHECK(!mrdp_ip6_unicast(a)); /* ::ffff:0.0.0.1 */
		memset(a, 0, 16);
		a[0] = 0xff;
		a[1] = 0x02;
		MR_CHECK(!mrdp_ip6_unicast(a)); /* multicast */
	}
}

/* MR-ENC-11, MR-ENC-12 */
static void test_ipv6_header(void)
{
	uint8_t f[MRDP_HDR6_LEN + 333], pseudo[40];
	size_t i;

	for (i = 0; i < sizeof(f); i++)
		f[i] = rnd8();
	make_data6(f, 333, MRDP_ECN_ECT0, ip6_a, ip6_b);
	MR_CHECK_MEM(f, mac_b, 6);
	MR_CHECK_MEM(f + 6, mac_a, 6);
	MR_CHECK_EQ(f[12], 0x86);
	MR_CHECK_EQ(f[13], 0xdd);
	/* Version 6, traffic class 0x02 (ECT(0)), flow label 0x0c001. */
	MR_CHECK_EQ(f[14], 0x60);
	MR_CHECK_EQ(f[15], 0x20);
	MR_CHECK_EQ(f[16], 0xc0);
	MR_CHECK_EQ(f[17], 0x01);
	/* Payload length = UDP length 341, next header UDP, hop limit 64. */
	MR_CHECK_EQ(f[18] << 8 | f[19], 8 + 333);
	MR_CHECK_EQ(f[20], 17);
	MR_CHECK_EQ(f[21], 64);
	MR_CHECK_MEM(f + 22, ip6_a, 16);
	MR_CHECK_MEM(f + 38, ip6_b, 16);
	MR_CHECK_EQ(f[54] << 8 | f[55], 0xc001);
	MR_CHECK_EQ(f[56] << 8 | f[57], 4797);
	MR_CHECK_EQ(f[58] << 8 | f[59], 8 + 333);
	/* The UDP checksum over the RFC 8200 pseudo-header, by the plain
	 * reference sum: src, dst, 32-bit length, 3 zero bytes, 17. */
	memcpy(pseudo, f + 22, 32);
	memset(pseudo + 32, 0, 8);
	pseudo[34] = (uint8_t)((8 + 333) >> 8);
	pseudo[35] = (uint8_t)(8 + 333);
	pseudo[39] = 17;
	MR_CHECK_EQ(ref_csum(f + 54, 8 + 333, ref_csum(pseudo, 40, 0)), 0xffff);
	MR_CHECK((f[60] | f[61]) != 0);
	/* Offload form: the field holds the pseudo-header sum only. */
	{
		struct mrdp_hdr h;

		memset(&h, 0, sizeof(h));
		h.v6 = 1;
		memcpy(h.src6, ip6_a, 16);
		memcpy(h.dst6, ip6_b, 16);
		mrdp_encap_write6(f, &h, 333, 0);
		MR_CHECK_EQ(f[60] << 8 | f[61], ref_csum(pseudo, 40, 0));
		/* The bare header of a looped-back packet: the same 40
		 * bytes (traffic class and flow label 0 here too). */
		{
			uint8_t ip[MRDP_IP6_LEN];

			memset(ip, 0xa5, sizeof(ip));
			mrdp_encap_ip6(ip, 8 + 333, ip6_a, ip6_b);
			MR_CHECK_MEM(ip, f + MRDP_ETH_LEN, MRDP_IP6_LEN);
		}
	}
}

static void test_classify_data6(void)
{
	uint8_t f[MRDP_HDR6_LEN + 100], g[sizeof(f)];
	struct mrdp_local b, a;
	struct mrdp_rx r;
	size_t n;

	local6(&b, mac_b, ip6_b);
	local6(&a, mac_a, ip6_a);
	make_data6(f, 100, MRDP_ECN_CE, ip6_a, ip6_b);
	mrdp_encap_classify(f, sizeof(f), &b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	MR_CHECK_EQ(r.v6, 1);
	MR_CHECK_EQ(r.off, MRDP_HDR6_LEN);
	MR_CHECK_EQ(r.len, 100);
	MR_CHECK_EQ(r.l3_off, MRDP_ETH_LEN);
	MR_CHECK_MEM(r.src6, ip6_a, 16);
	MR_CHECK_MEM(r.dst6, ip6_b, 16);
	MR_CHECK_MEM(r.src_mac, mac_a, 6);
	MR_CHECK_EQ(r.sport, 0xc001);
	MR_CHECK_EQ(r.ce, 1);
	/* To our link-local address: ours too. */
	make_data6(g, 100, 0, a.ll6, b.ll6);
	mrdp_encap_classify(g, sizeof(g), &b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	MR_CHECK_EQ(r.ce, 0);
	MR_CHECK_MEM(r.dst6, b.ll6, 16);
	/* Not ours: another address, MAC, port, next header. */
	mrdp_encap_classify(f, sizeof(f), &a, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[57] ^= 1;
	mrdp_encap_classify(g, sizeof(g), &b, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_NOT_OURS);
	memcpy(g, f, sizeof(f));
	g[20] = 0; /* hop-by-hop options: an extension header */
	mrdp_encap_classify(g, sizeof(g), &b, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_NOT_OURS);
	/* A payload bit flipped: checksum wrong; a 0 checksum: illegal. */
	memcpy(g, f, sizeof(f));
	g[MRDP_HDR6_LEN + 3] ^= 0x10;
	mrdp_encap_classify(g, sizeof(g), &b, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_UDP_CSUM);
	mrdp_encap_classify(g, sizeof(g), &b, MRDP_CSUM_L4_GOOD, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_DATA);
	memcpy(g, f, sizeof(f));
	g[60] = g[61] = 0;
	mrdp_encap_classify(g, sizeof(g), &b, MRDP_CSUM_L4_GOOD, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_UDP_CSUM);
	/* From a multicast source: refused. */
	memcpy(g, f, sizeof(f));
	g[22] = 0xff;
	mrdp_encap_classify(g, sizeof(g), &b, MRDP_CSUM_L4_GOOD, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_NOT_OURS);
	for (n = 0; n < sizeof(f); n++) {
		mrdp_encap_classify(f, n, &b, 0, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
		if (n >= MRDP_HDR6_LEN)
			MR_CHECK_EQ(r.drop, MRDP_RXD_TRUNCATED);
		else if (n >= MRDP_ETH_LEN + 40)
			MR_CHECK_EQ(r.drop, MRDP_RXD_SHORT);
	}
	/* Cut, to another address: short, not ours to report. */
	mrdp_encap_classify(f, MRDP_HDR6_LEN + 10, &a, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_SHORT);
}

/* MR-ENC-13 */
static void test_nd(void)
{
	uint8_t f[MRDP_ND_FRAME], pseudo[40];
	struct mrdp_local a, b;
	struct mrdp_rx r;
	size_t n;

	local6(&a, mac_a, ip6_a);
	local6(&b, mac_b, ip6_b);
	/* A asks for B's global address from its link-local one. */
	MR_CHECK_EQ(mrdp_nd_write_ns(f, mac_a, a.ll6, ip6_b), 86);
	/* To 33:33:ff:00:00:c7 and ff02::1:ff00:c7, hop limit 255. */
	MR_CHECK_EQ(f[0], 0x33);
	MR_CHECK_EQ(f[1], 0x33);
	MR_CHECK_EQ(f[2], 0xff);
	MR_CHECK_EQ(f[5], 0xc7);
	MR_CHECK_EQ(f[20], 58);
	MR_CHECK_EQ(f[21], 255);
	MR_CHECK_EQ(f[38], 0xff);
	MR_CHECK_EQ(f[39], 0x02);
	MR_CHECK_EQ(f[49], 0x01);
	MR_CHECK_EQ(f[50], 0xff);
	MR_CHECK_EQ(f[53], 0xc7);
	MR_CHECK_EQ(f[54], 135);
	MR_CHECK_MEM(f + 62, ip6_b, 16);
	MR_CHECK_EQ(f[78], 1); /* source link-layer address option */
	MR_CHECK_EQ(f[79], 1);
	MR_CHECK_MEM(f + 80, mac_a, 6);
	memcpy(pseudo, f + 22, 32);
	memset(pseudo + 32, 0, 8);
	pseudo[35] = 32;
	pseudo[39] = 58;
	MR_CHECK_EQ(ref_csum(f + 54, 32, ref_csum(pseudo, 40, 0)), 0xffff);
	mrdp_encap_classify(f, sizeof(f), &b, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_ND_NS);
	MR_CHECK_MEM(r.src6, a.ll6, 16);
	MR_CHECK_MEM(r.target6, ip6_b, 16);
	MR_CHECK_MEM(r.src_mac, mac_a, 6);
	/* Not for A's addresses: dropped by A. */
	mrdp_encap_classify(f, sizeof(f), &a, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_ARP);
	/* Routed (hop limit changed): invalid, as RFC 4861 7.1.1 says. */
	f[21] = 254;
	mrdp_encap_classify(f, sizeof(f), &b, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_ARP);

	/* B answers to A's link-local address. */
	MR_CHECK_EQ(mrdp_nd_write_na(f, mac_b, ip6_b, mac_a, a.ll6), 86);
	MR_CHECK_MEM(f, mac_a, 6);
	MR_CHECK_MEM(f + 22, ip6_b, 16);
	MR_CHECK_MEM(f + 38, a.ll6, 16);
	MR_CHECK_EQ(f[54], 136);
	MR_CHECK_EQ(f[58], 0x60); /* solicited, override */
	MR_CHECK_EQ(f[78], 2);	  /* target link-layer address option */
	mrdp_encap_classify(f, sizeof(f), &a, 0, &r);
	MR_CHECK_EQ(r.kind, MRDP_PKT_ND_NA);
	MR_CHECK_EQ(r.solicited, 1);
	MR_CHECK_MEM(r.target6, ip6_b, 16);
	MR_CHECK_MEM(r.src_mac, mac_b, 6);
	/* Corrupted: checksum wrong. */
	f[70] ^= 1;
	mrdp_encap_classify(f, sizeof(f), &a, 0, &r);
	MR_CHECK_EQ(r.drop, MRDP_RXD_ARP);
	f[70] ^= 1;
	for (n = 0; n < sizeof(f); n++) {
		mrdp_encap_classify(f, n, &a, 0, &r);
		MR_CHECK_EQ(r.kind, MRDP_PKT_DROP);
	}
}

MR_TEST_MAIN(MR_TEST(test_csum_matches_reference),
	     MR_TEST(test_ipv4_header_known_vector),
	     MR_TEST(test_udp_checksum_and_ecn), MR_TEST(test_classify_data),
	     MR_TEST(test_classify_drops), MR_TEST(test_arp),
	     MR_TEST(test_unicast), MR_TEST(test_json),
	     MR_TEST(test_ll6_of_mac), MR_TEST(test_ipv6_header),
	     MR_TEST(test_classify_data6), MR_TEST(test_nd))
