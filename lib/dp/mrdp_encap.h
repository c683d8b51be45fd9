/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Ethernet / IPv4 / UDP / ARP framing of the datapath, over plain byte
 * buffers: no DPDK here, so the unit tests exercise exactly this code.
 */
#ifndef MRDP_ENCAP_H
#define MRDP_ENCAP_H

#include <stddef.h>
#include <stdint.h>

#define MRDP_ETH_LEN 14
#define MRDP_IP4_LEN 20
#define MRDP_UDP_LEN 8
#define MRDP_HDR_LEN (MRDP_ETH_LEN + MRDP_IP4_LEN + MRDP_UDP_LEN)
#define MRDP_ARP_LEN 28
#define MRDP_ETH_MIN_FRAME 60 /* without FCS */

#define MRDP_ETHERTYPE_IPV4 0x0800
#define MRDP_ETHERTYPE_ARP 0x0806
#define MRDP_IPPROTO_UDP 17
#define MRDP_TTL 64
#define MRDP_ECN_ECT0 0x2
#define MRDP_ECN_CE 0x3

/* Who we are, for classification. */
struct mrdp_local {
	uint32_t ip; /* host order */
	uint8_t mac[6];
	uint16_t udp_port;
};

/* The outer headers of one packet to send. */
struct mrdp_hdr {
	uint8_t src_mac[6];
	uint8_t dst_mac[6];
	uint32_t src_ip; /* host order */
	uint32_t dst_ip;
	uint16_t sport;
	uint16_t dport;
	uint8_t ecn; /* low two bits of the TOS byte */
};

/* Write the 42 header bytes in front of payload (frame[0..42)); the payload
 * of plen bytes is already at frame + MRDP_HDR_LEN. The IPv4 header
 * checksum is always computed; the UDP checksum only if udp_csum (else 0,
 * "no checksum" in IPv4). */
void mrdp_encap_write(uint8_t *frame, const struct mrdp_hdr *h, size_t plen,
		      int udp_csum);

/* Only rewrite the destination MAC (a packet queued while its neighbour
 * was unresolved). */
void mrdp_encap_set_dst_mac(uint8_t *frame, const uint8_t mac[6]);

enum mrdp_pkt_kind {
	MRDP_PKT_DROP = 0,
	MRDP_PKT_DATA,	    /* MetaRoCE packet for us */
	MRDP_PKT_ARP_REQ,   /* ARP request for our address */
	MRDP_PKT_ARP_REPLY, /* ARP reply (to us or gratuitous) */
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
};

/* Classify one received frame. Never reads outside [frame, frame+len). */
void mrdp_encap_classify(const uint8_t *frame, size_t len,
			 const struct mrdp_local *me, unsigned csum_flags,
			 struct mrdp_rx *out);

/* Write an ARP frame (request: op 1, tha zero, to broadcast; reply: op 2 to
 * tha), padded to the Ethernet minimum. Returns the frame length (60);
 * frame must hold MRDP_ETH_MIN_FRAME bytes. */
size_t mrdp_arp_write(uint8_t *frame, int op, const uint8_t sha[6],
		      uint32_t spa, const uint8_t tha[6], uint32_t tpa);

/* The Internet checksum (RFC 1071) of buf, folded, not inverted, starting
 * from sum. */
uint32_t mrdp_csum_add(uint32_t sum, const void *buf, size_t len);
uint16_t mrdp_csum_fold(uint32_t sum);

/* Is ip usable as a unicast peer (not 0, multicast, broadcast)? */
int mrdp_ip_unicast(uint32_t ip);

#endif /* MRDP_ENCAP_H */
