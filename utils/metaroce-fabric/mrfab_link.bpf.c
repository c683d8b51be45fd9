/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One direction of one fabric link, as a tc clsact classifier (direct
 * action). metaroce-fabric attaches one instance per link direction: on
 * the egress of the sending router's interface, or, where the sender is a
 * host (whose af_packet transmit bypasses tc), on the ingress of the
 * receiving router's interface (docs/fabric.md). Each instance owns its
 * two maps (the loader makes them per program); metaroce-fabric finds
 * them through the program id tc reports and writes the configuration
 * while traffic flows.
 *
 * What it does to every IPv4 packet, in this order: a link that is down
 * (now inside [down_from, down_until)) drops it; random loss drops it; a
 * phantom queue draining at the link rate decides ECN CE marking (queue
 * above ecn_bytes, ECT packets only) and, where no real queue follows
 * (police_bytes != 0), drop-tail at that queue size; random corruption
 * flips one payload byte (the receiver's checksum or ICRC finds it);
 * random duplication sends a clone on; random reordering puts the packet
 * in the slow lane (a second HTB class, tc classid in skb->priority) that
 * the packets behind it overtake. IPv6 packets meet the same (CE in the
 * traffic class); ARP and ICMPv6 (neighbour discovery, which must reach
 * the router's own interface) pass untouched unless the link is down.
 *
 * Randomness: bpf_get_prandom_u32 against thresholds out of 2^32.
 */
#include <linux/bpf.h>
#include <linux/if_ether.h>
#include <linux/in.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/pkt_cls.h>

#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "mrfab_link.h"

struct mrfab_queue {
	struct bpf_spin_lock lock;
	__u64 backlog; /* bytes */
	__u64 last_ns;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrfab_cfg);
} mrfab_cfg SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrfab_stats);
} mrfab_stats SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct mrfab_queue);
} mrfab_queue SEC(".maps");

static __always_inline int chance(__u32 p)
{
	return p && bpf_get_prandom_u32() < p;
}

/*
 * The phantom queue: backlog drains at rate_bps since the last packet,
 * then this packet joins unless it would overflow police_bytes. Returns
 * the backlog seen by the packet, or -1 if it is dropped.
 */
static __always_inline long phantom(const struct mrfab_cfg *c, __u64 now,
				    __u32 len)
{
	struct mrfab_queue *q;
	__u32 k = 0;
	__u64 drained, b;
	long ret;

	q = bpf_map_lookup_elem(&mrfab_queue, &k);
	if (!q)
		return 0;
	bpf_spin_lock(&q->lock);
	b = q->backlog;
	if (now > q->last_ns) {
		/* bytes = ns * bps / 8e9, without overflow for gaps up to
		 * ~18 s at 1 Tb/s */
		drained = (now - q->last_ns) * (c->rate_bps / 1000) / 8000000;
		b = drained >= b ? 0 : b - drained;
	}
	q->last_ns = now;
	if (c->police_bytes && b + len > c->police_bytes) {
		ret = -1;
	} else {
		b += len;
		ret = (long)b;
	}
	q->backlog = b;
	bpf_spin_unlock(&q->lock);
	return ret;
}

static __always_inline int set_ce(struct __sk_buff *skb, struct iphdr *ip)
{
	__u8 tos = ip->tos;
	__u16 oldw, neww;

	if ((tos & 3) == 0)
		return 0;
	if ((tos & 3) == 3)
		return 1;
	oldw = bpf_htons((__u16)(ip->version << 12 | ip->ihl << 8 | tos));
	neww = bpf_htons((__u16)(ip->version << 12 | ip->ihl << 8 | tos | 3));
	if (bpf_l3_csum_replace(skb, ETH_HLEN + offsetof(struct iphdr, check),
				oldw, neww, 2))
		return 0;
	tos |= 3;
	if (bpf_skb_store_bytes(skb, ETH_HLEN + offsetof(struct iphdr, tos),
				&tos, 1, 0))
		return 0;
	return 1;
}

/* ECN CE in an IPv6 header: the traffic class's low two bits are bits
 * 4-5 of the second byte (no header checksum to mend). */
static __always_inline int set_ce6(struct __sk_buff *skb, __u8 b1)
{
	if ((b1 & 0x30) == 0)
		return 0;
	if ((b1 & 0x30) == 0x30)
		return 1;
	b1 |= 0x30;
	return !bpf_skb_store_bytes(skb, ETH_HLEN + 1, &b1, 1, 0);
}

/* IPv4, or IPv6 but not ICMPv6: what the impairments and the delay line
 * act on (ARP and neighbour discovery pass). */
static __always_inline int is_ip(const struct __sk_buff *skb)
{
	__u8 nh;

	if (skb->protocol == bpf_htons(ETH_P_IP))
		return 1;
	if (skb->protocol != bpf_htons(ETH_P_IPV6))
		return 0;
	if (bpf_skb_load_bytes(
		    skb, ETH_HLEN + offsetof(struct ipv6hdr, nexthdr), &nh, 1))
		return 0;
	return nh != IPPROTO_ICMPV6;
}

/* Leave on the link: counted as delivered by this program, into the
 * delay line when the line comes last (ingress). */
static __always_inline int
pass(struct __sk_buff *skb, const struct mrfab_cfg *c, struct mrfab_stats *s)
{
	__sync_fetch_and_add(&s->tx_pkts, 1);
	__sync_fetch_and_add(&s->tx_bytes, skb->len);
	if (c->ingress && c->delay_ns && c->delay_ifindex && is_ip(skb)) {
		__sync_fetch_and_add(&s->delayed, 1);
		return bpf_redirect(c->delay_ifindex, 0);
	}
	return TC_ACT_OK;
}

SEC("tc")
int mrfab_link(struct __sk_buff *skb)
{
	struct mrfab_stats *s;
	struct mrfab_cfg *c;
	struct iphdr *ip;
	void *data, *end;
	__u64 now = bpf_ktime_get_ns();
	__u32 k = 0, len = skb->len;
	long backlog;
	int v6;

	c = bpf_map_lookup_elem(&mrfab_cfg, &k);
	s = bpf_map_lookup_elem(&mrfab_stats, &k);
	if (!c || !s)
		return TC_ACT_OK;
	if (skb->mark == MRFAB_DUP_MARK) {
		skb->mark = 0;
		return pass(skb, c, s);
	}
	if (skb->mark == MRFAB_DELAY_MARK) {
		/* Back from the delay line (egress): the rest of the path. */
		skb->mark = 0;
	} else if (!c->ingress && c->delay_ns && c->delay_ifindex &&
		   is_ip(skb)) {
		__sync_fetch_and_add(&s->delayed, 1);
		return bpf_redirect(c->delay_ifindex, 0);
	}
	__sync_fetch_and_add(&s->pkts, 1);
	__sync_fetch_and_add(&s->bytes, len);
	if (now >= c->down_from && now < c->down_until) {
		__sync_fetch_and_add(&s->drop_down, 1);
		return TC_ACT_SHOT;
	}
	if (!is_ip(skb))
		return pass(skb, c, s);
	v6 = skb->protocol == bpf_htons(ETH_P_IPV6);
	/* af_packet frames carry only L2 in the linear area: pull the IP
	 * header in before reading it. */
	if (bpf_skb_pull_data(skb, ETH_HLEN + (v6 ? sizeof(struct ipv6hdr)
						  : sizeof(struct iphdr))))
		return pass(skb, c, s);
	data = (void *)(long)skb->data;
	end = (void *)(long)skb->data_end;
	if (data + ETH_HLEN + sizeof(struct ipv6hdr) > end &&
	    (v6 || data + ETH_HLEN + sizeof(*ip) > end))
		return pass(skb, c, s);
	ip = data + ETH_HLEN;
	if (chance(c->loss)) {
		__sync_fetch_and_add(&s->drop_loss, 1);
		return TC_ACT_SHOT;
	}
	if (c->rate_bps) {
		backlog = phantom(c, now, len);
		if (backlog < 0) {
			__sync_fetch_and_add(&s->drop_police, 1);
			return TC_ACT_SHOT;
		}
		if (c->ecn_bytes && (__u64)backlog > c->ecn_bytes) {
			if (v6 ? set_ce6(skb, ((__u8 *)ip)[1])
			       : set_ce(skb, ip))
				__sync_fetch_and_add(&s->ecn_marked, 1);
			else
				__sync_fetch_and_add(&s->not_ect, 1);
		}
	}
	if (chance(c->corrupt)) {
		/* The last byte: the payload's end (ICRC or data), never a
		 * header the fabric's own routing reads. */
		__u8 b;

		if (len > ETH_HLEN + 28 &&
		    !bpf_skb_load_bytes(skb, len - 1, &b, 1)) {
			b ^= 0x5a;
			bpf_skb_store_bytes(skb, len - 1, &b, 1,
					    BPF_F_INVALIDATE_HASH);
			__sync_fetch_and_add(&s->corrupted, 1);
		}
	}
	if (chance(c->dup)) {
		skb->mark = MRFAB_DUP_MARK;
		if (!bpf_clone_redirect(skb, c->ifindex,
					c->ingress ? BPF_F_INGRESS : 0))
			__sync_fetch_and_add(&s->duplicated, 1);
		skb->mark = 0;
	}
	if (c->lane_prio && chance(c->reorder)) {
		skb->priority = c->lane_prio;
		__sync_fetch_and_add(&s->reordered, 1);
	}
	return pass(skb, c, s);
}

char _license[] SEC("license") = "Dual BSD/GPL";
