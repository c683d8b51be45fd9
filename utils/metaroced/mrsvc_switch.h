/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroced's switch (mrsvc_switch.c): what to do with a frame received
 * from a port. Sans-IO: the unit test drives it with crafted frames.
 */
#ifndef MRSVC_SWITCH_H
#define MRSVC_SWITCH_H

#include <stddef.h>
#include <stdint.h>

enum mrsvc_verdict {
	MRSVC_TO_SLOT,	 /* MetaRoCE to the device's port: BTH dqpn's slot */
	MRSVC_TO_ALL,	 /* ARP reply, IPv6 ICMP (ND): every application */
	MRSVC_ARP_ASK,	 /* ARP request for the device's address */
	MRSVC_NOT_OURS,	 /* host traffic, other addresses or UDP ports */
	MRSVC_MALFORMED, /* shorter than its headers say, a fragment */
};

/* Frame f of len bytes on a device with address ip (host order) and UDP
 * port udp_port; *slot for MRSVC_TO_SLOT. */
enum mrsvc_verdict mrsvc_classify(const uint8_t *f, size_t len,
				  uint16_t udp_port, uint32_t ip,
				  unsigned *slot);
/* The ARP reply to request req (verdict MRSVC_ARP_ASK) from mac/ip into
 * out (room for MRSVC_ARP_FRAME bytes); its length. */
#define MRSVC_ARP_FRAME 60u
size_t mrsvc_arp_reply(const uint8_t *req, const uint8_t mac[6], uint32_t ip,
		       uint8_t *out);

#endif /* MRSVC_SWITCH_H */
