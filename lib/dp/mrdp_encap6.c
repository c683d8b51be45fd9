/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * IPv6 framing (RoCE v2 over IPv6: Ethernet / IPv6 / UDP) and the two
 * neighbour-discovery messages a host needs to resolve and be resolved
 * (RFC 4861 neighbour solicitation and advertisement), with DPDK's
 * rte_net header structs and checksums; the ND message body (which DPDK
 * does not describe) by offset. Rules: docs/spec/wire.md MR-ENC-11..13,
 * docs/spec/routing.md MR-ADDR-*.
 */
#include <string.h>

#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "mrdp.h"
#include "mrdp_encap.h"
#include "mrdp_encap_rte.h"

_Static_assert(sizeof(struct rte_ipv6_hdr) == MRDP_IP6_LEN, "ipv6");

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

/* The upper-layer sum over the pseudo-header (RFC 8200 8.1) and
 * l4[0..len), not inverted: 0xffff when it verifies. rte_ipv6_phdr_cksum
 * would take the length from the IPv6 header, which may exceed the UDP
 * datagram's, and ND needs it for ICMPv6 too. */
static uint16_t l4_sum6(const struct rte_ipv6_hdr *ip, const void *l4,
			uint32_t len, uint8_t nh)
{
	struct {
		rte_be32_t len;
		rte_be32_t nh; /* three zero bytes, then the next header */
	} tail = { rte_cpu_to_be_32(len), rte_cpu_to_be_32(nh) };
	uint16_t s = rte_raw_cksum(ip->src_addr, 32);

	s = mrdp_cksum_add(s, rte_raw_cksum(&tail, sizeof(tail)));
	return mrdp_cksum_add(s, rte_raw_cksum(l4, len));
}

static void ip6_hdr(struct rte_ipv6_hdr *ip, uint8_t tclass, uint32_t flow,
		    uint16_t plen, uint8_t nh, uint8_t hops,
		    const uint8_t src[16], const uint8_t dst[16])
{
	ip->vtc_flow = rte_cpu_to_be_32(6u << 28 | (uint32_t)tclass << 20 |
					(flow & 0xfffff));
	ip->payload_len = rte_cpu_to_be_16(plen);
	ip->proto = nh;
	ip->hop_limits = hops;
	memcpy(ip->src_addr, src, 16);
	memcpy(ip->dst_addr, dst, 16);
}

void mrdp_encap_ip6(uint8_t *ip, uint16_t plen, const uint8_t src[16],
		    const uint8_t dst[16])
{
	ip6_hdr((struct rte_ipv6_hdr *)ip, 0, 0, plen, IPPROTO_UDP, MRDP_TTL,
		src, dst);
}

void mrdp_encap_write6(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		       int udp_csum)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t ulen = (uint16_t)(MRDP_UDP_LEN + plen);

	memcpy(&eth->dst_addr, h->dst_mac, 6);
	memcpy(&eth->src_addr, h->src_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	/* MR-ENC-11: traffic class DSCP 0 + ECN, the flow label carries the
	 * path's entropy so that routers hashing the 3-tuple (flow label)
	 * spread paths as those hashing the 5-tuple do. */
	ip6_hdr(ip, h->ecn & 3, h->flow, ulen, IPPROTO_UDP, MRDP_TTL, h->src6,
		h->dst6);
	udp->src_port = rte_cpu_to_be_16(h->sport);
	udp->dst_port = rte_cpu_to_be_16(h->dport);
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0;
	if (!udp_csum) {
		/* For a port that offloads: the pseudo-header sum seeds it. */
		udp->dgram_cksum = rte_ipv6_phdr_cksum(ip, 0);
		return;
	}
	/* RFC 8200 8.1: a computed 0 is sent as all ones (0 means none,
	 * which IPv6 does not allow): rte_ipv6_udptcp_cksum does so. */
	udp->dgram_cksum = rte_ipv6_udptcp_cksum(ip, udp);
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

static void classify_nd(const uint8_t *frame, const struct rte_ipv6_hdr *ip,
			size_t plen, const struct mrdp_local *me,
			struct mrdp_rx *out)
{
	const uint8_t *icmp = (const uint8_t *)(ip + 1), *ll;
	int bad = 0;

	/* RFC 4861 7.1: hop limit 255 (not routed), code 0, valid
	 * checksum, at least the fixed part. */
	if (plen < 24)
		return drop(out, MRDP_RXD_SHORT);
	if (ip->hop_limits != MRDP_ND_HOPS || icmp[1] != 0 ||
	    l4_sum6(ip, icmp, (uint32_t)plen, IPPROTO_ICMPV6) != 0xffff)
		return drop(out, MRDP_RXD_ARP);
	memcpy(out->src6, ip->src_addr, 16);
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

/* As cut_short4() (mrdp_encap.c): a MetaRoCE packet for us whose
 * headers arrived whole but not its payload was cut by the port. */
static int cut_short6(const struct rte_ipv6_hdr *ip, size_t len,
		      const struct mrdp_local *me)
{
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);

	if (len < MRDP_ETH_LEN + MRDP_IP6_LEN + MRDP_UDP_LEN ||
	    ip->proto != IPPROTO_UDP || !is_ours(me, ip->dst_addr) ||
	    rte_be_to_cpu_16(udp->dst_port) != me->udp_port)
		return MRDP_RXD_SHORT;
	return MRDP_RXD_TRUNCATED;
}

void mrdp_encap_classify6(const uint8_t *frame, size_t len,
			  const struct mrdp_local *me, unsigned csum_flags,
			  struct mrdp_rx *out)
{
	const struct rte_ipv6_hdr *ip =
		(const struct rte_ipv6_hdr *)(frame + MRDP_ETH_LEN);
	const struct rte_udp_hdr *udp = (const struct rte_udp_hdr *)(ip + 1);
	size_t plen, ulen;

	if (len < MRDP_ETH_LEN + MRDP_IP6_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if ((rte_be_to_cpu_32(ip->vtc_flow) >> 28) != 6)
		return drop(out, MRDP_RXD_IP_HDR);
	plen = rte_be_to_cpu_16(ip->payload_len);
	if (MRDP_ETH_LEN + MRDP_IP6_LEN + plen > len)
		return drop(out, cut_short6(ip, len, me));
	if (ip->proto == IPPROTO_ICMPV6)
		return classify_nd(frame, ip, plen, me, out);
	/* We send no extension headers (MR-ENC-11): a packet with one is
	 * not a MetaRoCE packet we can use. */
	if (ip->proto != IPPROTO_UDP || !is_ours(me, ip->dst_addr))
		return drop(out, MRDP_RXD_NOT_OURS);
	if (memcmp(frame, me->mac, 6) != 0)
		return drop(out, MRDP_RXD_NOT_OURS);
	if (plen < MRDP_UDP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if (rte_be_to_cpu_16(udp->dst_port) != me->udp_port)
		return drop(out, MRDP_RXD_NOT_OURS);
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < MRDP_UDP_LEN || ulen > plen)
		return drop(out, MRDP_RXD_SHORT);
	/* MR-ENC-12: checksum 0 is illegal over IPv6; a wrong one is loss. */
	if (udp->dgram_cksum == 0)
		return drop(out, MRDP_RXD_UDP_CSUM);
	if (!(csum_flags & MRDP_CSUM_L4_GOOD) &&
	    l4_sum6(ip, udp, (uint32_t)ulen, IPPROTO_UDP) != 0xffff)
		return drop(out, MRDP_RXD_UDP_CSUM);
	if (!mrdp_ip6_unicast(ip->src_addr) || is_ours(me, ip->src_addr))
		return drop(out, MRDP_RXD_NOT_OURS);
	out->kind = MRDP_PKT_DATA;
	out->v6 = 1;
	memcpy(out->src6, ip->src_addr, 16);
	memcpy(out->dst6, ip->dst_addr, 16);
	memcpy(out->src_mac, frame + 6, 6);
	out->l3_off = MRDP_ETH_LEN;
	out->sport = rte_be_to_cpu_16(udp->src_port);
	out->ce = ((rte_be_to_cpu_32(ip->vtc_flow) >> 20) & 3) == MRDP_ECN_CE;
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
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ipv6_hdr *ip = (struct rte_ipv6_hdr *)(eth + 1);
	uint8_t *icmp = (uint8_t *)(ip + 1);
	rte_be32_t fl = rte_cpu_to_be_32(flags);
	uint16_t c;

	memset(frame, 0, MRDP_ND_FRAME);
	memcpy(&eth->dst_addr, eth_dst, 6);
	memcpy(&eth->src_addr, sha, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV6);
	ip6_hdr(ip, 0, 0, MRDP_ND_LEN, IPPROTO_ICMPV6, MRDP_ND_HOPS, src6,
		dst6);
	icmp[0] = type;
	memcpy(icmp + 4, &fl, 4);
	memcpy(icmp + 8, target6, 16);
	icmp[24] = opt;
	icmp[25] = 1; /* 8 bytes */
	memcpy(icmp + 26, sha, 6);
	c = (uint16_t)~l4_sum6(ip, icmp, MRDP_ND_LEN, IPPROTO_ICMPV6);
	memcpy(icmp + 2, &c, 2); /* in memory order, as rte_raw_cksum sums */
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
