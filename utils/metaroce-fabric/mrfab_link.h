/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The maps of one link direction's program (mrfab_link.bpf.c), shared with
 * its delay line (mrfab_delay.c). mrfab_bpf.py packs the same layouts
 * (CFG_FMT, STATS_FIELDS): change them together.
 */
#ifndef MRFAB_LINK_H
#define MRFAB_LINK_H

#include <linux/types.h>

/* Set on a duplicate while it passes the program again. */
#define MRFAB_DUP_MARK 0x4d524642u
/* Set by the delay line on a frame it sends back out of an egress. */
#define MRFAB_DELAY_MARK 0x4d524644u

struct mrfab_cfg {
	__u64 down_from;    /* CLOCK_MONOTONIC ns; down while from <= now */
	__u64 down_until;   /* ... < until */
	__u64 rate_bps;	    /* phantom queue drain rate; 0: no phantom queue */
	__u64 ecn_bytes;    /* CE above this phantom backlog; 0: never */
	__u64 police_bytes; /* drop above this phantom backlog; 0: never */
	__u32 loss;	    /* probabilities, out of 2^32 */
	__u32 corrupt;
	__u32 dup;
	__u32 reorder;
	__u32 lane_prio; /* skb->priority of the slow lane (HTB classid) */
	__u32 ifindex;	 /* where duplicates are sent (this interface) */
	__u32 ingress;	 /* attached on ingress: duplicates go there */
	__u32 pad;
	__u64 delay_ns;	     /* the delay line's delay; 0: none */
	__u32 delay_ifindex; /* its tap; 0: no delay line */
	__u32 pad2;
};

struct mrfab_stats {
	__u64 pkts; /* arrived (after the delay line on an egress) */
	__u64 bytes;
	__u64 ecn_marked;
	__u64 drop_down;
	__u64 drop_loss;
	__u64 drop_police;
	__u64 corrupted;
	__u64 duplicated;
	__u64 reordered;
	__u64 not_ect; /* above the threshold but not ECN-capable */
	__u64 tx_pkts; /* passed on (duplicates included) */
	__u64 tx_bytes;
	__u64 delayed; /* handed to the delay line */
};

#endif /* MRFAB_LINK_H */
