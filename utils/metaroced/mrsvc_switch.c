/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The switch of the datapath service: the same rule as the steering
 * filter of mrdp_steer.c (MR-HDR-6: a packet's BTH dqpn is always the QP
 * that receives it, requests, responses and ACKs alike, so its 2^16-QPN
 * slot names the one application it is for), applied in the daemon to
 * frames of a port it alone owns. Neighbour traffic: the daemon answers
 * ARP requests for the device's address itself (one answer, not one per
 * application), and passes ARP replies and IPv6 ICMP (neighbour
 * discovery) to every application, each of which resolves its own peers
 * as it would on a port of its own.
 */
#include <string.h>

#include "mrsvc_switch.h"

#define ETH_LEN 14
#define IP4_MIN 20
#define IP6_LEN 40
#define UDP_LEN 8
#define BTH_LEN 12
#define ARP_LEN 28

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static enum mrsvc_verdict by_bth(const uint8_t *udp, size_t left,
				 uint16_t udp_port, unsigned *slot)
{
	if (left < UDP_LEN)
		return MRSVC_MALFORMED;
	if (be16(udp + 2) != udp_port)
		return MRSVC_NOT_OURS;
	if (left < UDP_LEN + BTH_LEN)
		return MRSVC_MALFORMED;
	/* BTH word 2: reserved byte, then the 24-bit dqpn. */
	*slot = (be32(udp + UDP_LEN + 4) & 0xffffffu) >> 16;
	return MRSVC_TO_SLOT;
}

enum mrsvc_verdict mrsvc_classify(const uint8_t *f, size_t len,
				  uint16_t udp_port, uint32_t ip,
				  unsigned *slot)
{
	uint16_t type;

	if (len < ETH_LEN)
		return MRSVC_MALFORMED;
	type = be16(f + 12);
	if (type == 0x0806) {
		const uint8_t *a = f + ETH_LEN;

		if (len < ETH_LEN + ARP_LEN)
			return MRSVC_MALFORMED;
		/* Ethernet / IPv4 only. */
		if (be16(a) != 1 || be16(a + 2) != 0x0800 || a[4] != 6 ||
		    a[5] != 4)
			return MRSVC_NOT_OURS;
		if (be16(a + 6) == 1)
			return be32(a + 24) == ip ? MRSVC_ARP_ASK
						  : MRSVC_NOT_OURS;
		return be16(a + 6) == 2 ? MRSVC_TO_ALL : MRSVC_NOT_OURS;
	}
	if (type == 0x0800) {
		const uint8_t *h = f + ETH_LEN;
		size_t ihl;

		if (len < ETH_LEN + IP4_MIN)
			return MRSVC_MALFORMED;
		ihl = (size_t)(h[0] & 15) * 4;
		if ((h[0] >> 4) != 4 || ihl < IP4_MIN || len < ETH_LEN + ihl)
			return MRSVC_MALFORMED;
		if (h[9] != 17 || be32(h + 16) != ip)
			return MRSVC_NOT_OURS;
		if (be16(h + 6) & 0x3fff) /* MF or an offset: a fragment */
			return MRSVC_MALFORMED;
		return by_bth(h + ihl, len - ETH_LEN - ihl, udp_port, slot);
	}
	if (type == 0x86dd) {
		const uint8_t *h = f + ETH_LEN;

		if (len < ETH_LEN + IP6_LEN)
			return MRSVC_MALFORMED;
		if (h[6] == 58)
			return MRSVC_TO_ALL;
		if (h[6] != 17)
			return MRSVC_NOT_OURS;
		return by_bth(h + IP6_LEN, len - ETH_LEN - IP6_LEN, udp_port,
			      slot);
	}
	return MRSVC_NOT_OURS;
}

size_t mrsvc_arp_reply(const uint8_t *req, const uint8_t mac[6], uint32_t ip,
		       uint8_t *out)
{
	const uint8_t *ra = req + ETH_LEN;
	uint8_t *a = out + ETH_LEN;

	memset(out, 0, MRSVC_ARP_FRAME);
	memcpy(out, ra + 8, 6); /* to the asker's hardware address */
	memcpy(out + 6, mac, 6);
	out[12] = 0x08;
	out[13] = 0x06;
	a[1] = 1;    /* Ethernet */
	a[2] = 0x08; /* IPv4 */
	a[4] = 6;
	a[5] = 4;
	a[7] = 2; /* reply */
	memcpy(a + 8, mac, 6);
	a[14] = (uint8_t)(ip >> 24);
	a[15] = (uint8_t)(ip >> 16);
	a[16] = (uint8_t)(ip >> 8);
	a[17] = (uint8_t)ip;
	memcpy(a + 18, ra + 8, 10); /* the asker's sha and spa */
	return MRSVC_ARP_FRAME;
}
