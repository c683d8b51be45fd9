/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ethernet / IPv4 or IPv6 / UDP framing, ARP and IPv6 neighbour discovery
 * of the datapath, over plain byte buffers. The implementation uses
 * DPDK's rte_net headers and checksums (inline code, no EAL), this
 * interface no DPDK type, so the unit tests exercise exactly this code.
 * IPv4 in mrdp_encap.c, IPv6 and ND in mrdp_encap6.c (docs/spec/wire.md
 * MR-ENC-11..13, routing.md MR-ADDR-*).
 */
#ifndef MRDP_ENCAP_H
#define MRDP_ENCAP_H

#include <stddef.h>
#include <stdint.h>

#define MRDP_ETH_LEN 14
#define MRDP_IP4_LEN 20
#define MRDP_UDP_LEN 8
#define MRDP_HDR_LEN (MRDP_ETH_LEN + MRDP_IP4_LEN + MRDP_UDP_LEN)
#define MRDP_IP6_LEN 40
#define MRDP_HDR6_LEN (MRDP_ETH_LEN + MRDP_IP6_LEN + MRDP_UDP_LEN)
/* Room an engine packet leaves in front of itself: the larger header. */
#define MRDP_HDR_MAX MRDP_HDR6_LEN
/* A neighbour solicitation or advertisement with one link-layer address
 * option: ICMPv6 header 4, reserved/flags 4, target 16, option 8. */
#define MRDP_ND_LEN 32
#define MRDP_ND_FRAME (MRDP_ETH_LEN + MRDP_IP6_LEN + MRDP_ND_LEN)
#define MRDP_ARP_LEN 28
#define MRDP_ETH_MIN_FRAME 60 /* without FCS */

#define MRDP_IPPROTO_UDP 17
#define MRDP_ND_NS 135
#define MRDP_ND_NA 136
#define MRDP_ND_HOPS 255 /* RFC 4861 7.1.1: ND arrives unrouted */
#define MRDP_TTL 64
#define MRDP_ECN_ECT0 0x2
#define MRDP_ECN_CE 0x3

/* Who we are, for classification. */
struct mrdp_local {
	uint32_t ip; /* host order */
	uint8_t mac[6];
	uint16_t udp_port;
	/* IPv6 (MR-ADDR-1): the link-local address (always, from the MAC)
	 * and the global one when has_ip6 (else all zero). */
	uint8_t ll6[16];
	uint8_t ip6[16];
	int has_ip6;
};

/* The outer headers of one packet to send. */
struct mrdp_hdr {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip; /* host order (IPv4) */
	uint32_t dst_ip;
	uint16_t sport;
	uint16_t dport;
	uint8_t ecn; /* low two bits of the TOS / traffic class byte */
	/* IPv6 (v6 = 1): addresses, wire order; flow label (20 bits). */
	int v6;
	uint8_t src6[16];
	uint8_t dst6[16];
	uint32_t flow;
};

/* Write the 42 header bytes in front of payload (frame[0..42)); the payload
 * of plen bytes is already at frame + MRDP_HDR_LEN. The IPv4 header
 * checksum is always computed; the UDP checksum only if udp_csum (else 0,
 * "no checksum" in IPv4). */
void mrdp_encap_write(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		      int udp_csum);

/* The IPv6 form (h->v6): the 62 header bytes in front of the payload at
 * frame + MRDP_HDR6_LEN. The UDP checksum is mandatory over IPv6 (RFC
 * 8200 8.1): computed unless udp_csum is 0, which leaves the pseudo-header
 * sum (not inverted) in its place for a port that offloads the rest. */
void mrdp_encap_write6(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		       int udp_csum);

/* A bare IPv6 header (40 bytes at ip) of a UDP datagram of plen bytes,
 * traffic class and flow label 0, as write6 makes it (the GRH of a packet
 * looped back to ourselves). */
void mrdp_encap_ip6(uint8_t *ip, uint16_t plen, const uint8_t src[16],
		    const uint8_t dst[16]);

/* For a port that offloads both IPv4 checksums, after mrdp_encap_write
 * (udp_csum 0): the IPv4 checksum 0 and the UDP one seeded with the
 * pseudo-header sum, as the port wants them. */
void mrdp_encap_offload4(uint8_t *frame);

/* Only rewrite the destination MAC (a packet queued while its neighbour
 * was unresolved). */
void mrdp_encap_set_dst_mac(uint8_t *frame, const uint8_t mac[6]);

enum mrdp_pkt_kind {
	MRDP_PKT_DROP = 0,
	MRDP_PKT_DATA,	    /* MetaRoCE packet for us */
	MRDP_PKT_ARP_REQ,   /* ARP request for our address */
	MRDP_PKT_ARP_REPLY, /* ARP reply (to us or gratuitous) */
	MRDP_PKT_ND_NS,	    /* neighbour solicitation for one of ours */
	MRDP_PKT_ND_NA,	    /* neighbour advertisement */
};

/* Flags telling classify what the port already verified. */
enum mrdp_csum_flag {
	MRDP_CSUM_IP_GOOD = 1u << 0,
	MRDP_CSUM_L4_GOOD = 1u << 1,
};

struct mrdp_rx {
	enum mrdp_pkt_kind kind;
	int drop; /* enum mrdp_rx_drop when kind == MRDP_PKT_DROP */
	/* DATA */
	size_t off; /* payload (BTH) offset in the frame */
	size_t len; /* payload length (BTH..ICRC) */
	uint16_t sport;
	uint8_t ce;
	/* DATA and ARP: the sender */
	uint32_t src_ip;
	uint8_t src_mac[6];
	/* ARP */
	uint32_t target_ip;
	/* IPv6 (v6 = 1): DATA: src6/dst6 and the IPv6 header at l3_off;
	 * ND: src6 the sender, target6 the address asked for or
	 * advertised, src_mac the link-layer address it carried (NS: the
	 * source option; NA: the target option, else the frame's source),
	 * solicited the NA's S flag. */
	int v6;
	uint8_t src6[16];
	uint8_t dst6[16];
	uint8_t target6[16];
	size_t l3_off;
	int solicited;
};

/* Classify one received frame. Never reads outside [frame, frame+len). */
void mrdp_encap_classify(const uint8_t *frame, size_t len,
			 const struct mrdp_local *me, unsigned csum_flags,
			 struct mrdp_rx *out);

/* Classify an IPv6 frame (ethertype 0x86dd; called by classify). */
void mrdp_encap_classify6(const uint8_t *frame, size_t len,
			  const struct mrdp_local *me, unsigned csum_flags,
			  struct mrdp_rx *out);

/* Write a neighbour solicitation from sha / our link-local address
 * src6 for target6 to its solicited-node multicast group (RFC 4861
 * 4.3), or (na) an advertisement of target6 at sha to dst6 / tha,
 * solicited and override (4.4). Returns the frame length
 * (MRDP_ND_FRAME); frame must hold that many bytes. */
size_t mrdp_nd_write_ns(uint8_t *frame, const uint8_t sha[6],
			const uint8_t src6[16], const uint8_t target6[16]);
size_t mrdp_nd_write_na(uint8_t *frame, const uint8_t sha[6],
			const uint8_t target6[16], const uint8_t tha[6],
			const uint8_t dst6[16]);

/* Is a a unicast IPv6 address usable as a peer (not ::, ::1,
 * multicast, IPv4-mapped)? Is it link-local (fe80::/10)? */
int mrdp_ip6_unicast(const uint8_t a[16]);
int mrdp_ip6_linklocal(const uint8_t a[16]);

/* Write an ARP frame (request: op 1, tha zero, to broadcast; reply: op 2 to
 * tha), padded to the Ethernet minimum. Returns the frame length (60);
 * frame must hold MRDP_ETH_MIN_FRAME bytes. */
size_t mrdp_arp_write(uint8_t *frame, int op, const uint8_t sha[6],
		      uint32_t spa, const uint8_t tha[6], uint32_t tpa);

/* Is ip usable as a unicast peer (not 0, multicast, broadcast)? */
int mrdp_ip_unicast(uint32_t ip);

#endif /* MRDP_ENCAP_H */
