/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ethernet / IPv4 / UDP / ARP framing with DPDK's rte_net header structs,
 * byte-order helpers and checksums (header-only inline code: the unit
 * tests still run exactly this over plain buffers, with no EAL).
 */
#include <string.h>

#include <rte_arp.h>
#include <rte_byteorder.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_udp.h>

#include "mrdp.h"
#include "mrdp_encap.h"
#include "mrdp_encap_rte.h"

_Static_assert(sizeof(struct rte_ether_hdr) == MRDP_ETH_LEN, "ether");
_Static_assert(sizeof(struct rte_ipv4_hdr) == MRDP_IP4_LEN, "ipv4");
_Static_assert(sizeof(struct rte_udp_hdr) == MRDP_UDP_LEN, "udp");
_Static_assert(sizeof(struct rte_arp_hdr) == MRDP_ARP_LEN, "arp");

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

void mrdp_encap_offload4(uint8_t *frame)
{
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(frame + MRDP_ETH_LEN);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);

	ip->hdr_checksum = 0;
	udp->dgram_cksum = rte_ipv4_phdr_cksum(ip, 0);
}

void mrdp_encap_write(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		      int udp_csum)
{
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_ipv4_hdr *ip = (struct rte_ipv4_hdr *)(eth + 1);
	struct rte_udp_hdr *udp = (struct rte_udp_hdr *)(ip + 1);
	uint16_t ulen = (uint16_t)(MRDP_UDP_LEN + plen);

	memcpy(&eth->dst_addr, h->dst_mac, 6);
	memcpy(&eth->src_addr, h->src_mac, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);

	ip->version_ihl = RTE_IPV4_VHL_DEF;
	ip->type_of_service = h->ecn & 3;
	ip->total_length = rte_cpu_to_be_16((uint16_t)(MRDP_IP4_LEN + ulen));
	/* id 0 with DF: never fragmented (RFC 6864). */
	ip->packet_id = 0;
	ip->fragment_offset = rte_cpu_to_be_16(RTE_IPV4_HDR_DF_FLAG);
	ip->time_to_live = MRDP_TTL;
	ip->next_proto_id = IPPROTO_UDP;
	ip->hdr_checksum = 0;
	ip->src_addr = rte_cpu_to_be_32(h->src_ip);
	ip->dst_addr = rte_cpu_to_be_32(h->dst_ip);
	ip->hdr_checksum = rte_ipv4_cksum(ip);

	udp->src_port = rte_cpu_to_be_16(h->sport);
	udp->dst_port = rte_cpu_to_be_16(h->dport);
	udp->dgram_len = rte_cpu_to_be_16(ulen);
	udp->dgram_cksum = 0; /* "no checksum" over IPv4 unless udp_csum */
	/* RFC 768's computed 0 sent as all ones is rte_ipv4_udptcp_cksum's. */
	if (udp_csum)
		udp->dgram_cksum = rte_ipv4_udptcp_cksum(ip, udp);
}

size_t mrdp_arp_write(uint8_t *frame, int op, const uint8_t sha[6],
		      uint32_t spa, const uint8_t tha[6], uint32_t tpa)
{
	static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t zero[6];
	struct rte_ether_hdr *eth = (struct rte_ether_hdr *)frame;
	struct rte_arp_hdr *a = (struct rte_arp_hdr *)(eth + 1);

	memset(frame, 0, MRDP_ETH_MIN_FRAME);
	memcpy(&eth->dst_addr, op == RTE_ARP_OP_REQUEST ? bcast : tha, 6);
	memcpy(&eth->src_addr, sha, 6);
	eth->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
	a->arp_hardware = rte_cpu_to_be_16(RTE_ARP_HRD_ETHER);
	a->arp_protocol = rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4);
	a->arp_hlen = RTE_ETHER_ADDR_LEN;
	a->arp_plen = sizeof(a->arp_data.arp_sip);
	a->arp_opcode = rte_cpu_to_be_16((uint16_t)op);
	memcpy(&a->arp_data.arp_sha, sha, 6);
	a->arp_data.arp_sip = rte_cpu_to_be_32(spa);
	memcpy(&a->arp_data.arp_tha, op == RTE_ARP_OP_REQUEST ? zero : tha, 6);
	a->arp_data.arp_tip = rte_cpu_to_be_32(tpa);
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
	const struct rte_arp_hdr *a =
		(const struct rte_arp_hdr *)(frame + MRDP_ETH_LEN);
	uint16_t op;

	if (len < MRDP_ETH_LEN + MRDP_ARP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if (a->arp_hardware != rte_cpu_to_be_16(RTE_ARP_HRD_ETHER) ||
	    a->arp_protocol != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4) ||
	    a->arp_hlen != RTE_ETHER_ADDR_LEN || a->arp_plen != 4)
		return drop(out, MRDP_RXD_ARP);
	op = rte_be_to_cpu_16(a->arp_opcode);
	memcpy(out->src_mac, &a->arp_data.arp_sha, 6);
	out->src_ip = rte_be_to_cpu_32(a->arp_data.arp_sip);
	out->target_ip = rte_be_to_cpu_32(a->arp_data.arp_tip);
	/* A sender claiming our own address or a non-unicast one teaches
	 * us nothing we may use. */
	if (!mrdp_ip_unicast(out->src_ip) || out->src_ip == me->ip ||
	    (out->src_mac[0] & 1))
		return drop(out, MRDP_RXD_ARP);
	if (op == RTE_ARP_OP_REQUEST && out->target_ip == me->ip) {
		out->kind = MRDP_PKT_ARP_REQ;
		return;
	}
	if (op == RTE_ARP_OP_REPLY &&
	    (out->target_ip == me->ip || out->target_ip == out->src_ip)) {
		out->kind = MRDP_PKT_ARP_REPLY;
		return;
	}
	drop(out, MRDP_RXD_ARP);
}

/* The UDP checksum over the pseudo-header and udp[0..ulen), not inverted:
 * 0xffff when it verifies. rte_ipv4_udptcp_cksum would take the length
 * from the IP header, which may exceed the UDP datagram's (RFC 768 lets a
 * receiver accept the shorter datagram, as Linux does). Not inlined:
 * inside classify GCC 12 left rte_raw_cksum's loop scalar (3.7x the
 * instructions at 4 KiB, bench/dp/results.md). */
static __attribute__((noinline)) uint16_t
udp4_sum(const struct rte_ipv4_hdr *ip, const void *udp, uint16_t ulen)
{
	struct {
		rte_be32_t src, dst;
		uint8_t zero, proto;
		rte_be16_t len;
	} __rte_packed ph = { ip->src_addr, ip->dst_addr, 0, IPPROTO_UDP,
			      rte_cpu_to_be_16(ulen) };

	return mrdp_cksum_add(rte_raw_cksum(&ph, sizeof(ph)),
			      rte_raw_cksum(udp, ulen));
}

/* Why a frame shorter than its IPv4 header says is dropped: a MetaRoCE
 * packet for us whose headers arrived whole was cut by the port (a ring
 * slot smaller than the frame: what a peer's UDP GSO super-frame meets
 * on a port that takes one frame per slot), anything else is short. */
static int cut_short4(const struct rte_ipv4_hdr *ip, size_t ihl, size_t len,
		      const struct mrdp_local *me)
{
	const struct rte_udp_hdr *udp =
		(const struct rte_udp_hdr *)((const uint8_t *)ip + ihl);

	if (ihl < MRDP_IP4_LEN || len < MRDP_ETH_LEN + ihl + MRDP_UDP_LEN ||
	    rte_be_to_cpu_32(ip->dst_addr) != me->ip ||
	    ip->next_proto_id != IPPROTO_UDP ||
	    rte_be_to_cpu_16(udp->dst_port) != me->udp_port)
		return MRDP_RXD_SHORT;
	return MRDP_RXD_TRUNCATED;
}

void mrdp_encap_classify(const uint8_t *frame, size_t len,
			 const struct mrdp_local *me, unsigned csum_flags,
			 struct mrdp_rx *out)
{
	const struct rte_ether_hdr *eth = (const struct rte_ether_hdr *)frame;
	const struct rte_ipv4_hdr *ip = (const struct rte_ipv4_hdr *)(eth + 1);
	const struct rte_udp_hdr *udp;
	size_t ihl, tot, ulen;
	uint16_t et;

	memset(out, 0, sizeof(*out));
	if (len < MRDP_ETH_LEN)
		return drop(out, MRDP_RXD_SHORT);
	et = rte_be_to_cpu_16(eth->ether_type);
	if (et == RTE_ETHER_TYPE_ARP)
		return classify_arp(frame, len, me, out);
	if (et == RTE_ETHER_TYPE_IPV6)
		return mrdp_encap_classify6(frame, len, me, csum_flags, out);
	if (et != RTE_ETHER_TYPE_IPV4)
		return drop(out, MRDP_RXD_NOT_IPV4);
	if (memcmp(&eth->dst_addr, me->mac, 6) != 0)
		return drop(out, MRDP_RXD_NOT_OURS);
	if (len < MRDP_ETH_LEN + MRDP_IP4_LEN)
		return drop(out, MRDP_RXD_SHORT);
	if ((ip->version_ihl >> 4) != 4)
		return drop(out, MRDP_RXD_IP_HDR);
	ihl = rte_ipv4_hdr_len(ip);
	tot = rte_be_to_cpu_16(ip->total_length);
	if (ihl < MRDP_IP4_LEN || tot < ihl)
		return drop(out, MRDP_RXD_IP_HDR);
	if (MRDP_ETH_LEN + tot > len)
		return drop(out, cut_short4(ip, ihl, len, me));
	if (rte_be_to_cpu_32(ip->dst_addr) != me->ip ||
	    ip->next_proto_id != IPPROTO_UDP)
		return drop(out, MRDP_RXD_NOT_OURS);
	/* MF set or a nonzero fragment offset: we never fragment, so a
	 * fragment is not a MetaRoCE packet we can use. */
	if (ip->fragment_offset &
	    rte_cpu_to_be_16(RTE_IPV4_HDR_MF_FLAG | RTE_IPV4_HDR_OFFSET_MASK))
		return drop(out, MRDP_RXD_IP_HDR);
	if (tot < ihl + MRDP_UDP_LEN)
		return drop(out, MRDP_RXD_SHORT);
	udp = (const struct rte_udp_hdr *)((const uint8_t *)ip + ihl);
	if (rte_be_to_cpu_16(udp->dst_port) != me->udp_port)
		return drop(out, MRDP_RXD_NOT_OURS);
	/* Over the whole header, its checksum included, the sum is 0xffff:
	 * rte_ipv4_cksum (the inverse) is 0. */
	if (!(csum_flags & MRDP_CSUM_IP_GOOD) && rte_ipv4_cksum(ip) != 0)
		return drop(out, MRDP_RXD_IP_CSUM);
	ulen = rte_be_to_cpu_16(udp->dgram_len);
	if (ulen < MRDP_UDP_LEN || ulen > tot - ihl)
		return drop(out, MRDP_RXD_SHORT);
	if (!(csum_flags & MRDP_CSUM_L4_GOOD) && udp->dgram_cksum != 0 &&
	    udp4_sum(ip, udp, (uint16_t)ulen) != 0xffff)
		return drop(out, MRDP_RXD_UDP_CSUM);
	out->kind = MRDP_PKT_DATA;
	out->src_ip = rte_be_to_cpu_32(ip->src_addr);
	memcpy(out->src_mac, &eth->src_addr, 6);
	out->sport = rte_be_to_cpu_16(udp->src_port);
	out->ce = (ip->type_of_service & 3) == MRDP_ECN_CE;
	out->off = (size_t)((const uint8_t *)udp - frame) + MRDP_UDP_LEN;
	out->len = ulen - MRDP_UDP_LEN;
}
