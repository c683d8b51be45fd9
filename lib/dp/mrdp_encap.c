/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ethernet / IPv4 / UDP / ARP framing. Byte by byte, big-endian on the
 * wire, no packed structs (as lib/core's wire code).
 */
#include <string.h>

#include "mrdp.h"
#include "mrdp_encap.h"

uint16_t mrdp_csum_fold(uint32_t sum)
{
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return (uint16_t)sum;
}

static inline void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

/*
 * One's-complement sum in 16-bit big-endian words. Summing 32-bit words
 * into a 64-bit accumulator gives the same folded result (RFC 1071 s.2)
 * and is several times faster on the 4 KiB payloads of a data packet.
 */
uint32_t mrdp_csum_add(uint32_t sum, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	uint64_t acc;

	/* sum is a big-endian value; the loop adds native words. */
	sum = mrdp_csum_fold(sum);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	sum = (uint16_t)((sum >> 8) | (sum << 8));
#endif
	acc = sum;

	while (len >= 8) {
		uint32_t a, b;

		memcpy(&a, p, 4);
		memcpy(&b, p + 4, 4);
		acc += (uint64_t)a + b;
		p += 8;
		len -= 8;
	}
	if (len >= 4) {
		uint32_t a;

		memcpy(&a, p, 4);
		acc += a;
		p += 4;
		len -= 4;
	}
	if (len >= 2) {
		uint16_t a;

		memcpy(&a, p, 2);
		acc += a;
		p += 2;
		len -= 2;
	}
	if (len) {
		/* The odd byte is the high byte of a big-endian word; in
		 * host (little-endian) order it is the low byte. */
		uint16_t a = 0;

		memcpy(&a, p, 1);
		acc += a;
	}
	/* The accumulated words are in host (native) order; fold to 16
	 * bits, then swap to a big-endian value on little-endian hosts. */
	while (acc >> 16)
		acc = (acc & 0xffff) + (acc >> 16);
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	acc = (uint16_t)((acc >> 8) | (acc << 8));
#endif
	return (uint32_t)acc;
}

/* Combine two partial sums (each already a big-endian value). */
static uint32_t csum_combine(uint32_t a, uint32_t b)
{
	return mrdp_csum_fold(a + b);
}

int mrdp_ip_unicast(uint32_t ip)
{
	if (ip == 0 || ip == 0xffffffffu)
		return 0;
	if ((ip >> 28) == 0xe) /* 224.0.0.0/4 multicast */
		return 0;
	return 1;
}

void mrdp_encap_set_dst_mac(uint8_t *frame, const uint8_t mac[6])
{
	memcpy(frame, mac, 6);
}

void mrdp_encap_write(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		      int udp_csum)
{
	uint8_t *ip = frame + MRDP_ETH_LEN;
	uint8_t *udp = ip + MRDP_IP4_LEN;
	uint16_t ulen = (uint16_t)(MRDP_UDP_LEN + plen);
	uint32_t sum;

	memcpy(frame, h->dst_mac, 6);
	memcpy(frame + 6, h->src_mac, 6);
	put16(frame + 12, MRDP_ETHERTYPE_IPV4);

	ip[0] = 0x45;
	ip[1] = h->ecn & 3;
	put16(ip + 2, (uint16_t)(MRDP_IP4_LEN + ulen));
	put16(ip + 4, 0);      /* id: DF set, never fragmented (RFC 6864) */
	put16(ip + 6, 0x4000); /* DF */
	ip[8] = MRDP_TTL;
	ip[9] = MRDP_IPPROTO_UDP;
	put16(ip + 10, 0);
	put32(ip + 12, h->src_ip);
	put32(ip + 16, h->dst_ip);
	put16(ip + 10,
	      (uint16_t)~mrdp_csum_fold(mrdp_csum_add(0, ip, MRDP_IP4_LEN)));

	put16(udp, h->sport);
	put16(udp + 2, h->dport);
	put16(udp + 4, ulen);
	put16(udp + 6, 0);
	if (udp_csum) {
		uint8_t pseudo[12];
		uint16_t c;

		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = MRDP_IPPROTO_UDP;
		put16(pseudo + 10, ulen);
		sum = csum_combine(mrdp_csum_add(0, pseudo, sizeof(pseudo)),
				   mrdp_csum_add(0, udp, ulen));
		c = (uint16_t)~mrdp_csum_fold(sum);
		/* RFC 768: a computed 0 is sent as all ones. */
		put16(udp + 6, c ? c : 0xffff);
	}
}

size_t mrdp_arp_write(uint8_t *frame, int op, const uint8_t sha[6],
		      uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[6];
	uint8_t *a = frame + MRDP_ETH_LEN;

	memset(frame, 0, MRDP_ETH_MIN_FRAME);
	memcpy(frame, op == 1 ? bcast : tha, 6);
	memcpy(frame + 6, sha, 6);
	put16(frame + 12, MRDP_ETHERTYPE_ARP);
	put16(a, 1); /* hardware: Ethernet */
	put16(a + 2, MRDP_ETHERTYPE_IPV4);
	a[4] = 6;
	a[5] = 4;
	put16(a + 6, (uint16_t)op);
	memcpy(a + 8, sha, 6);
	put32(a + 14, spa);
	memcpy(a + 18, op == 1 ? zero : tha, 6);
	put32(a + 24, tpa);
	return MRDP_ETH_MIN_FRAME;
}

static void drop(struct mrdp_rx *out, int reason)
{
	out->kind = MRDP_PKT_DROP;
	out->drop = reason;
}

static void classify_arp(const uint8_t *frame, size_t len,
			 const struct mrdp_local *me, struct mrdp_rx *out)
{
	const uint8_t *a = frame + MRDP_ETH_LEN;
	uint16_t op;

	if (len < MRDP_ETH_LEN + MRDP_ARP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if (get16(a) != 1 || get16(a + 2) != MRDP_ETHERTYPE_IPV4 || a[4] != 6 ||
	    a[5] != 4)
		return drop(out, MRDP_RXD_ARP);
	op = get16(a + 6);
	memcpy(out->src_mac, a + 8, 6);
	out->src_ip = get32(a + 14);
	out->target_ip = get32(a + 24);
	/* A sender claiming our own address or a non-unicast one teaches
	 * us nothing we may use. */
	if (!mrdp_ip_unicast(out->src_ip) || out->src_ip == me->ip ||
	    (out->src_mac[0] & 1))
		return drop(out, MRDP_RXD_ARP);
	if (op == 1 && out->target_ip == me->ip) {
		out->kind = MRDP_PKT_ARP_REQ;
		return;
	}
	if (op == 2 &&
	    (out->target_ip == me->ip || out->target_ip == out->src_ip)) {
		out->kind = MRDP_PKT_ARP_REPLY;
		return;
	}
	drop(out, MRDP_RXD_ARP);
}

void mrdp_encap_classify(const uint8_t *frame, size_t len,
			 const struct mrdp_local *me, unsigned csum_flags,
			 struct mrdp_rx *out)
{
	const uint8_t *ip, *udp;
	size_t ihl, tot, ulen;
	uint16_t et;

	memset(out, 0, sizeof(*out));
	if (len < MRDP_ETH_LEN)
		return drop(out, MRDP_RXD_SHORT);
	et = get16(frame + 12);
	if (et == MRDP_ETHERTYPE_ARP)
		return classify_arp(frame, len, me, out);
	if (et == MRDP_ETHERTYPE_IPV6)
		return mrdp_encap_classify6(frame, len, me, csum_flags, out);
	if (et != MRDP_ETHERTYPE_IPV4)
		return drop(out, MRDP_RXD_NOT_IPV4);
	if (memcmp(frame, me->mac, 6) != 0)
		return drop(out, MRDP_RXD_NOT_OURS);
	ip = frame + MRDP_ETH_LEN;
	if (len < MRDP_ETH_LEN + MRDP_IP4_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if ((ip[0] >> 4) != 4)
		return drop(out, MRDP_RXD_IP_HDR);
	ihl = (size_t)(ip[0] & 0xf) * 4;
	tot = get16(ip + 2);
	if (ihl < MRDP_IP4_LEN || tot < ihl)
		return drop(out, MRDP_RXD_IP_HDR);
	if (MRDP_ETH_LEN + tot > len)
		return drop(out, MRDP_RXD_SHORT);
	if (get32(ip + 16) != me->ip || ip[9] != MRDP_IPPROTO_UDP)
		return drop(out, MRDP_RXD_NOT_OURS);
	/* MF set or a nonzero fragment offset: we never fragment, so a
	 * fragment is not a MetaRoCE packet we can use. */
	if (get16(ip + 6) & 0x3fff)
		return drop(out, MRDP_RXD_IP_HDR);
	if (tot < ihl + MRDP_UDP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	udp = ip + ihl;
	if (get16(udp + 2) != me->udp_port)
		return drop(out, MRDP_RXD_NOT_OURS);
	if (!(csum_flags & MRDP_CSUM_IP_GOOD) &&
	    mrdp_csum_fold(mrdp_csum_add(0, ip, ihl)) != 0xffff)
		return drop(out, MRDP_RXD_IP_CSUM);
	ulen = get16(udp + 4);
	if (ulen < MRDP_UDP_LEN || ulen > tot - ihl)
		return drop(out, MRDP_RXD_SHORT);
	if (!(csum_flags & MRDP_CSUM_L4_GOOD) && get16(udp + 6) != 0) {
		uint8_t pseudo[12];
		uint32_t sum;

		memcpy(pseudo, ip + 12, 8);
		pseudo[8] = 0;
		pseudo[9] = MRDP_IPPROTO_UDP;
		put16(pseudo + 10, (uint16_t)ulen);
		sum = csum_combine(mrdp_csum_add(0, pseudo, sizeof(pseudo)),
				   mrdp_csum_add(0, udp, ulen));
		if (mrdp_csum_fold(sum) != 0xffff)
			return drop(out, MRDP_RXD_UDP_CSUM);
	}
	out->kind = MRDP_PKT_DATA;
	out->src_ip = get32(ip + 12);
	memcpy(out->src_mac, frame + 6, 6);
	out->sport = get16(udp);
	out->ce = (ip[1] & 3) == MRDP_ECN_CE;
	out->off = (size_t)(udp - frame) + MRDP_UDP_LEN;
	out->len = ulen - MRDP_UDP_LEN;
}
