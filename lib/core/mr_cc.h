/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Congestion control of one connection (docs/spec/reliability.md MR-CC-*),
 * as plug-ins so MetaRoCE and baselines run side by side in one binary.
 *
 * Each algorithm is one file (mr_cc_<name>.c) with its own state struct,
 * kept in the `state` area of the common base struct mr_cc (so a QP
 * embeds one struct mr_cc whatever the algorithm, and nothing is
 * allocated); the base holds what every algorithm and the sending gate
 * share: cwnd, the receiver's hint cap, the pacing rate and clock, bytes
 * in flight, the RTTs and the counters. Algorithms are found by name in
 * one registry (mr_cc_registry.c): a new policy is one file plus one line
 * there. The registered algorithms:
 *
 *   metaroce         sender-side ECN-driven AIMD (MR-CC-1, -2), additive
 *                    increase scaled to the BDP, never reduced on loss
 *                    (MR-CC-3); the receiver's rate hint caps the window
 *                    to hint x min RTT and the pacing rate to the hint
 *                    (MR-CC-5); a standing queue, seen in the latest RTT
 *                    sample, shrinks both until it drains (MR-CC-13, -15).
 *   metaroce-nohint  the same AIMD without the receiver's hints (a
 *                    variant, to measure what the hints give).
 *   dcqcn            DCQCN-like rate controller (the RoCEv2 baseline of
 *                    gbn mode, MR-CC-9).
 *   fixed            fixed window init_cwnd, unpaced (MR-CC-10).
 *
 * The generic wrappers below keep the in-flight byte count and the
 * pacing clock; the ops only move cwnd / rate. Everything is driven by
 * `now` (ns); there is no timer of its own: time-based steps (DCQCN
 * recovery, alpha decay) are applied on the next call.
 *
 * No allocation. Threading: none.
 */
#ifndef MR_CC_H
#define MR_CC_H

#include <stddef.h>
#include <stdint.h>

struct mr_cc;

struct mr_cc_config {
	uint32_t mtu;		  /* bytes of a full packet on the wire */
	uint32_t line_rate_mbps;  /* the sender's port rate */
	uint64_t base_rtt_ns;	  /* unloaded RTT: the round before a sample
				   * (0 = 10 us) */
	uint64_t init_cwnd;	  /* bytes (0 = BDP = line rate x base RTT) */
	uint64_t min_cwnd;	  /* bytes (0 = mtu) */
	uint64_t max_cwnd;	  /* bytes (0 = 4 x BDP) */
	uint64_t ai_bytes;	  /* MetaRoCE additive increase per RTT
				   * (0 = max(mtu, BDP / 32), MR-CC-1) */
	uint32_t dcqcn_rai_mbps;  /* DCQCN additive step (0 = 40) */
	uint32_t dcqcn_rhai_mbps; /* DCQCN hyper step (0 = 200) */
	/* Pacing credit (MR-CC-4): the clock may lag `now` by the time
	 * this many bytes take at the pacing rate, so a driver that polls
	 * in rounds sends what the rate allows since its last round in one
	 * burst instead of one packet per round (0 = none: a NIC that
	 * paces every packet). */
	uint64_t pace_quantum;
	/* Bytes the hint cap allows above hint x min RTT (MR-CC-5): what
	 * the receiver holds before it ACKs, at most (0 = 4 x mtu) ... */
	uint64_t hint_slack;
	/* ... and at most what arrives at the hint's rate in this long
	 * (the receiver's ACK delay) plus one packet (0 = 2 us). */
	uint64_t ack_hold_ns;
	/* MR-CC-17 (0: MR-CC-5 alone): the first hint's cap is hint x min
	 * RTT, without the slack, and the pacing cap is the hint, not 9/8
	 * of it, until the first round with CE marks. */
	int slots_start;
	/* Bytes the link spends on each packet beyond those the core
	 * counts (its headers from the BTH, the payload and the ICRC), in
	 * the pacing clock only (0: none; MR-CC-17 (g)). */
	uint32_t wire_overhead;
};

/* Ethernet 14 + IPv4 20 + UDP 8 + FCS 4, preamble and inter-frame gap
 * 20: what an Ethernet port spends around a packet of the core. */
#define MR_CC_WIRE_OVERHEAD 66

/* What one received ACK tells the controller. */
struct mr_cc_ack {
	uint64_t acked_bytes; /* newly acked (all paths) */
	uint32_t acked_pkts;
	uint32_t ce_pkts;	 /* newly CE-marked (from the cumulative
				  * counts of the ACK's blocks, MR-ACK-8) */
	uint32_t rate_hint_mbps; /* AETH rate_hint (0 = none) */
	uint64_t srtt_ns;	 /* the connection's smoothed RTT (0 = none) */
	uint64_t min_rtt_ns;	 /* the connection's minimum RTT (0 = none):
				  * the hint cap's RTT, MR-CC-5 */
	uint64_t rtt_ns;	 /* the least of the paths' latest RTT samples
				  * (0 = none): the queue they share now,
				  * MR-CC-13 */
};

/* Size of the per-algorithm state area in struct mr_cc. */
#define MR_CC_STATE_MAX 128

struct mr_cc_ops {
	const char *name;
	const char *help;  /* one line for listings */
	size_t state_size; /* bytes of its state (<= MR_CC_STATE_MAX) */
	/* Set cwnd/rate from cc->cfg; the state area is zeroed before. */
	void (*init)(struct mr_cc *cc, uint64_t now);
	void (*on_ack)(struct mr_cc *cc, const struct mr_cc_ack *ack,
		       uint64_t now);
	/* A packet of `bytes` was declared lost (why: enum mr_pathtx_loss). */
	void (*on_loss)(struct mr_cc *cc, uint64_t bytes, int why,
			uint64_t now);
	/* A packet of `bytes` left (after the in-flight count was raised). */
	void (*on_sent)(struct mr_cc *cc, uint64_t bytes, uint64_t now);
};

/* The common base. Algorithms read cfg and move cwnd, hint_cap,
 * hint_mbps, rate_mbps and the counters; inflight, next_send, srtt and
 * min_rtt are kept by the wrappers. */
struct mr_cc {
	const struct mr_cc_ops *ops;
	struct mr_cc_config cfg; /* with defaults filled in */
	uint64_t cwnd;		 /* bytes, from the control law */
	uint64_t hint_cap; /* bytes, receiver hint x min RTT; UINT64_MAX none */
	uint32_t hint_mbps; /* last rate hint (0 = none) */
	uint32_t rate_mbps; /* pacing rate (0 = unpaced) */
	uint64_t inflight;  /* bytes sent, not yet acked or lost */
	uint64_t next_send; /* pacing: earliest next transmission (ns) */
	uint64_t srtt;	    /* last srtt reported (ns) */
	uint64_t min_rtt;   /* last min RTT reported (ns) */
	uint64_t sent_at;   /* the last transmission: when, and its bytes */
	uint64_t sent_bytes; /* (the pacing clock is re-spaced from it) */
	/* Counters. acks: ACKs accounted (the first brings the receiver's
	 * first rate hint, MR-CC-7; until then a connection's packets may
	 * be small, MR-CC-16). */
	uint64_t decreases, increases, ce_seen, hint_limited, acks;
	/* MR-CC-16: the connection's first packet left (counted in the
	 * endpoint's starts), and its packets before the first ACK are
	 * small. */
	uint8_t start_counted, start_small;
	/* The algorithm's own state (ops->state_size bytes). */
	_Alignas(8) unsigned char state[MR_CC_STATE_MAX];
};

/* The algorithm registered under name, or NULL. */
const struct mr_cc_ops *mr_cc_find(const char *name);

/* The i-th registered algorithm (0..), NULL past the last: listings. */
const struct mr_cc_ops *mr_cc_algo(unsigned i);

/* Initialise with ops and cfg (copied; zero fields take the defaults).
 * Returns 0 or -MR_EINVAL (NULL ops or cfg, an ops table without its
 * hooks or with a state larger than MR_CC_STATE_MAX, mtu 0, line_rate 0,
 * min > max, init_cwnd outside [min_cwnd, max_cwnd]). */
int mr_cc_init(struct mr_cc *cc, const struct mr_cc_ops *ops,
	       const struct mr_cc_config *cfg, uint64_t now);

/* The RTT the control law uses: srtt, or base_rtt before a sample. */
uint64_t mr_cc_rtt(const struct mr_cc *cc);

/* The bandwidth-delay product of the port at base_rtt (>= mtu), bytes. */
uint64_t mr_cc_bdp(const struct mr_cc_config *cfg);

/* Bytes the connection may have in flight now: min(cwnd, hint_cap),
 * never below min_cwnd. */
uint64_t mr_cc_window(const struct mr_cc *cc);

/* The same in packets of cfg.mtu (>= 1). */
uint32_t mr_cc_window_pkts(const struct mr_cc *cc);

/* Pacing rate in Mb/s (0 = unpaced). */
static inline uint32_t mr_cc_rate_mbps(const struct mr_cc *cc)
{
	return cc->rate_mbps;
}

/* 1 if a packet of `bytes` may be sent at now: window space (a packet is
 * always allowed when nothing is in flight) and pacing clock reached. */
int mr_cc_can_send(const struct mr_cc *cc, uint64_t bytes, uint64_t now);

/* Earliest time the pacing clock allows a send (<= now: already). */
static inline uint64_t mr_cc_next_send(const struct mr_cc *cc)
{
	return cc->next_send;
}

/* Account a transmission (first or retransmission) of bytes at now. */
void mr_cc_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now);

/* 1 once an ACK was accounted: the receiver's first rate hint (every
 * ACK of a MetaRoCE receiver carries one, MR-CC-7) is known. */
static inline int mr_cc_hinted(const struct mr_cc *cc)
{
	return cc->acks != 0;
}

/* Account one received ACK (after its SACK blocks were processed). */
void mr_cc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack, uint64_t now);

/* Account a packet declared lost (it leaves the in-flight count; the
 * retransmission is accounted by mr_cc_on_sent again). */
void mr_cc_on_loss(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now);

/* MR-CC-16: connections of one endpoint whose first packet left in the
 * current or the previous window of `win` ns (two counters: no list). */
struct mr_cc_starts {
	uint64_t t0; /* the current window's start */
	uint32_t n, prev;
};

/* A connection's first packet leaves at now: returns the starts of the
 * current and the previous window, this one included. */
uint32_t mr_cc_starts_note(struct mr_cc_starts *s, uint64_t now,
			   uint64_t win);

/* For algorithm files: their state, and a loss hook that does nothing
 * (MR-CC-3: loss is not congestion). */
#define MR_CC_STATE(cc, type) ((type *)(void *)(cc)->state)
void mr_cc_loss_ignored(struct mr_cc *cc, uint64_t bytes, int why,
			uint64_t now);
/* Mb/s x ns in bytes. */
static inline uint64_t mr_cc_bytes_at(uint64_t mbps, uint64_t ns)
{
	return mbps * ns / 8000;
}

#endif /* MR_CC_H */
