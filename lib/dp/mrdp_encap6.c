/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IPv6 framing (RoCE v2 over IPv6: Ethernet / IPv6 / UDP) and the two
 * neighbour-discovery messages a host needs to resolve and be resolved
 * (RFC 4861 neighbour solicitation and advertisement). Byte by byte,
 * big-endian through lib/core's mr_be.h, no packed structs. Rules:
 * docs/spec/wire.md MR-ENC-11..13, docs/spec/routing.md MR-ADDR-*.
 */
#include <string.h>

#include "mr_be.h"
#include "mrdp.h"
#include "mrdp_encap.h"

/* Offsets in the fixed IPv6 header. */
#define IP6_PLEN 4
#define IP6_NH 6
#define IP6_HOPS 7
#define IP6_SRC 8
#define IP6_DST 24

int mrdp_ip6_linklocal(const uint8_t a[16])
{
	return a[0] == 0xfe && (a[1] & 0xc0) == 0x80;
}

int mrdp_ip6_unicast(const uint8_t a[16])
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t zero[15];

	if (a[0] == 0xff) /* multicast */
		return 0;
	if (!memcmp(a, zero, 15) && a[15] <= 1) /* :: and ::1 */
		return 0;
	return memcmp(a, v4map, sizeof(v4map)) != 0;
}

/* The one's-complement sum of the IPv6 pseudo-header (RFC 8200 8.1). */
static uint32_t pseudo6(const uint8_t *ip, uint32_t ulen, uint8_t nh)
{
	uint8_t tail[8] = { 0 };

	mr_put32(tail, ulen);
	tail[7] = nh;
	return mrdp_csum_add(mrdp_csum_add(0, ip + IP6_SRC, 32), tail, 8);
}

/* The upper-layer checksum over pseudo-header and l4[0..len). */
static uint16_t l4_csum6(const uint8_t *ip, const uint8_t *l4, uint32_t len,
			 uint8_t nh)
{
	uint32_t sum = pseudo6(ip, len, nh) + mrdp_csum_add(0, l4, len);

	return (uint16_t)~mrdp_csum_fold(sum);
}

static void ip6_hdr(uint8_t *ip, uint8_t tclass, uint32_t flow, uint16_t plen,
		    uint8_t nh, uint8_t hops, const uint8_t src[16],
		    const uint8_t dst[16])
{
	mr_put32(ip, 6u << 28 | (uint32_t)tclass << 20 | (flow & 0xfffff));
	mr_put16(ip + IP6_PLEN, plen);
	ip[IP6_NH] = nh;
	ip[IP6_HOPS] = hops;
	memcpy(ip + IP6_SRC, src, 16);
	memcpy(ip + IP6_DST, dst, 16);
}

void mrdp_encap_write6(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		       int udp_csum)
{
	uint8_t *ip = frame + MRDP_ETH_LEN;
	uint8_t *udp = ip + MRDP_IP6_LEN;
	uint16_t ulen = (uint16_t)(MRDP_UDP_LEN + plen);
	uint16_t c;

	memcpy(frame, h->dst_mac, 6);
	memcpy(frame + 6, h->src_mac, 6);
	mr_put16(frame + 12, MRDP_ETHERTYPE_IPV6);
	/* MR-ENC-11: traffic class DSCP 0 + ECN, the flow label carries the
	 * path's entropy so that routers hashing the 3-tuple (flow label)
	 * spread paths as those hashing the 5-tuple do. */
	ip6_hdr(ip, h->ecn & 3, h->flow, ulen, MRDP_IPPROTO_UDP, MRDP_TTL,
		h->src6, h->dst6);
	mr_put16(udp, h->sport);
	mr_put16(udp + 2, h->dport);
	mr_put16(udp + 4, ulen);
	mr_put16(udp + 6, 0);
	if (!udp_csum) {
		/* For a port that offloads: the pseudo-header sum seeds it. */
		mr_put16(udp + 6,
			 mrdp_csum_fold(pseudo6(ip, ulen, MRDP_IPPROTO_UDP)));
		return;
	}
	c = l4_csum6(ip, udp, ulen, MRDP_IPPROTO_UDP);
	/* RFC 8200 8.1: a computed 0 is sent as all ones; 0 means none,
	 * which IPv6 does not allow. */
	mr_put16(udp + 6, c ? c : 0xffff);
}

static void drop(struct mrdp_rx *out, int reason)
{
	out->kind = MRDP_PKT_DROP;
	out->drop = reason;
}

static int is_ours(const struct mrdp_local *me, const uint8_t a[16])
{
	return !memcmp(a, me->ll6, 16) ||
	       (me->has_ip6 && !memcmp(a, me->ip6, 16));
}

/* The link-layer address option of type want in opts[0..len), RFC 4861
 * 4.6.1; NULL if absent. A zero-length option makes the message invalid
 * (7.1.1): *bad is set. */
static const uint8_t *ll_option(const uint8_t *opts, size_t len, uint8_t want,
				int *bad)
{
	while (len >= 2) {
		size_t olen = (size_t)opts[1] * 8;

		if (olen == 0 || olen > len) {
			*bad = 1;
			return NULL;
		}
		if (opts[0] == want && olen == 8)
			return opts + 2;
		opts += olen;
		len -= olen;
	}
	return NULL;
}

static void classify_nd(const uint8_t *frame, const uint8_t *ip, size_t plen,
			const struct mrdp_local *me, struct mrdp_rx *out)
{
	const uint8_t *icmp = ip + MRDP_IP6_LEN, *ll;
	int bad = 0;

	/* RFC 4861 7.1: hop limit 255 (not routed), code 0, valid
	 * checksum, at least the fixed part. */
	if (plen < 24)
		return drop(out, MRDP_RXD_SHORT);
	if (ip[IP6_HOPS] != MRDP_ND_HOPS || icmp[1] != 0 ||
	    l4_csum6(ip, icmp, (uint32_t)plen, MRDP_IPPROTO_ICMPV6) != 0)
		return drop(out, MRDP_RXD_ARP);
	memcpy(out->src6, ip + IP6_SRC, 16);
	memcpy(out->target6, icmp + 8, 16);
	out->v6 = 1;
	if (icmp[0] == MRDP_ND_NS) {
		ll = ll_option(icmp + 24, plen - 24, 1, &bad);
		/* Duplicate address detection (source ::) and solicitations
		 * without a source link-layer address teach nothing we can
		 * answer to; neither does one for an address not ours. */
		if (bad || !ll || !mrdp_ip6_unicast(out->src6) ||
		    !is_ours(me, out->target6) || is_ours(me, out->src6))
			return drop(out, MRDP_RXD_ARP);
		memcpy(out->src_mac, ll, 6);
		if (out->src_mac[0] & 1)
			return drop(out, MRDP_RXD_ARP);
		out->kind = MRDP_PKT_ND_NS;
		return;
	}
	if (icmp[0] == MRDP_ND_NA) {
		ll = ll_option(icmp + 24, plen - 24, 2, &bad);
		if (bad || !mrdp_ip6_unicast(out->target6) ||
		    is_ours(me, out->target6))
			return drop(out, MRDP_RXD_ARP);
		memcpy(out->src_mac, ll ? ll : frame + 6, 6);
		if (out->src_mac[0] & 1)
			return drop(out, MRDP_RXD_ARP);
		out->solicited = !!(icmp[4] & 0x40);
		out->kind = MRDP_PKT_ND_NA;
		return;
	}
	drop(out, MRDP_RXD_NOT_OURS); /* router advertisements etc. */
}

void mrdp_encap_classify6(const uint8_t *frame, size_t len,
			  const struct mrdp_local *me, unsigned csum_flags,
			  struct mrdp_rx *out)
{
	const uint8_t *ip = frame + MRDP_ETH_LEN, *udp;
	size_t plen, ulen;

	if (len < MRDP_ETH_LEN + MRDP_IP6_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if ((ip[0] >> 4) != 6)
		return drop(out, MRDP_RXD_IP_HDR);
	plen = mr_get16(ip + IP6_PLEN);
	if (MRDP_ETH_LEN + MRDP_IP6_LEN + plen > len)
		return drop(out, MRDP_RXD_SHORT);
	if (ip[IP6_NH] == MRDP_IPPROTO_ICMPV6)
		return classify_nd(frame, ip, plen, me, out);
	/* We send no extension headers (MR-ENC-11): a packet with one is
	 * not a MetaRoCE packet we can use. */
	if (ip[IP6_NH] != MRDP_IPPROTO_UDP || !is_ours(me, ip + IP6_DST))
		return drop(out, MRDP_RXD_NOT_OURS);
	if (memcmp(frame, me->mac, 6) != 0)
		return drop(out, MRDP_RXD_NOT_OURS);
	if (plen < MRDP_UDP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	udp = ip + MRDP_IP6_LEN;
	if (mr_get16(udp + 2) != me->udp_port)
		return drop(out, MRDP_RXD_NOT_OURS);
	ulen = mr_get16(udp + 4);
	if (ulen < MRDP_UDP_LEN || ulen > plen)
		return drop(out, MRDP_RXD_SHORT);
	/* MR-ENC-12: checksum 0 is illegal over IPv6; a wrong one is loss. */
	if (mr_get16(udp + 6) == 0)
		return drop(out, MRDP_RXD_UDP_CSUM);
	if (!(csum_flags & MRDP_CSUM_L4_GOOD) &&
	    l4_csum6(ip, udp, (uint32_t)ulen, MRDP_IPPROTO_UDP) != 0)
		return drop(out, MRDP_RXD_UDP_CSUM);
	if (!mrdp_ip6_unicast(ip + IP6_SRC) || is_ours(me, ip + IP6_SRC))
		return drop(out, MRDP_RXD_NOT_OURS);
	out->kind = MRDP_PKT_DATA;
	out->v6 = 1;
	memcpy(out->src6, ip + IP6_SRC, 16);
	memcpy(out->dst6, ip + IP6_DST, 16);
	memcpy(out->src_mac, frame + 6, 6);
	out->l3_off = MRDP_ETH_LEN;
	out->sport = mr_get16(udp);
	out->ce = ((mr_get32(ip) >> 20) & 3) == MRDP_ECN_CE;
	out->off = MRDP_HDR6_LEN;
	out->len = ulen - MRDP_UDP_LEN;
}

/* The frame of an ND message: Ethernet, IPv6 (hop limit 255), ICMPv6
 * type, flags word, target, one link-layer option. */
static size_t nd_write(uint8_t *frame, const uint8_t eth_dst[6],
		       const uint8_t sha[6], const uint8_t src6[16],
		       const uint8_t dst6[16], uint8_t type, uint32_t flags,
		       const uint8_t target6[16], uint8_t opt)
{
	uint8_t *ip = frame + MRDP_ETH_LEN, *icmp = ip + MRDP_IP6_LEN;

	memset(frame, 0, MRDP_ND_FRAME);
	memcpy(frame, eth_dst, 6);
	memcpy(frame + 6, sha, 6);
	mr_put16(frame + 12, MRDP_ETHERTYPE_IPV6);
	ip6_hdr(ip, 0, 0, MRDP_ND_LEN, MRDP_IPPROTO_ICMPV6, MRDP_ND_HOPS, src6,
		dst6);
	icmp[0] = type;
	mr_put32(icmp + 4, flags);
	memcpy(icmp + 8, target6, 16);
	icmp[24] = opt;
	icmp[25] = 1; /* 8 bytes */
	memcpy(icmp + 26, sha, 6);
	mr_put16(icmp + 2,
		 l4_csum6(ip, icmp, MRDP_ND_LEN, MRDP_IPPROTO_ICMPV6));
	return MRDP_ND_FRAME;
}

size_t mrdp_nd_write_ns(uint8_t *frame, const uint8_t sha[6],
			const uint8_t src6[16], const uint8_t target6[16])
{
	/* The solicited-node group ff02::1:ffXX:XXXX of the target and its
	 * Ethernet multicast address 33:33:ff:XX:XX:XX (RFC 2464 7). */
	uint8_t dst6[16] = { 0xff, 0x02, [11] = 0x01, [12] = 0xff };
	uint8_t eth[6] = { 0x33, 0x33, 0xff };

	memcpy(dst6 + 13, target6 + 13, 3);
	memcpy(eth + 3, target6 + 13, 3);
	return nd_write(frame, eth, sha, src6, dst6, MRDP_ND_NS, 0, target6, 1);
}

size_t mrdp_nd_write_na(uint8_t *frame, const uint8_t sha[6],
			const uint8_t target6[16], const uint8_t tha[6],
			const uint8_t dst6[16])
{
	/* Solicited (S) and override (O): RFC 4861 7.2.4. */
	return nd_write(frame, tha, sha, target6, dst6, MRDP_ND_NA, 0x60000000u,
			target6, 2);
}
