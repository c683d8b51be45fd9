/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Congestion control of one connection (docs/spec/reliability.md MR-CC-*),
 * as a table of hooks so MetaRoCE and baselines run side by side:
 *
 *   mr_cc_ops_metaroce  sender-side ECN-driven AIMD: +ai_bytes per RTT
 *                       without CE; x (1 - F/2) at most once per RTT where
 *                       F is the fraction of CE-marked packets acked in that
 *                       RTT; NEVER reduced on loss (loss only drives
 *                       retransmission). The receiver's rate hint caps the
 *                       window to hint x srtt and the pacing rate to hint.
 *   mr_cc_ops_dcqcn     DCQCN-like rate controller (the RoCEv2 baseline for
 *                       gbn): CE acts as a CNP (at most one per 50 us),
 *                       alpha EWMA, Rc *= (1 - alpha/2); recovery every
 *                       55 us: 5 fast-recovery steps, then additive and
 *                       hyper increase. Window fixed at max_cwnd (in-flight
 *                       cap), rate = pacing. Ignores rate hints and loss.
 *   mr_cc_ops_fixed     fixed window init_cwnd, unpaced: a no-op control
 *                       for tests and benchmarks.
 *
 * The generic wrappers below keep the in-flight byte count and the
 * pacing clock; the ops only move cwnd / rate. Everything is driven by
 * `now` (ns); there is no timer of its own: time-based steps (DCQCN
 * recovery, alpha decay) are applied on the next call.
 *
 * Also the receiver's rate hint (struct mr_ratehint): the receiver's link
 * rate shared fairly among the connections that sent it data recently.
 *
 * No allocation. Threading: none.
 */
#ifndef MR_CC_H
#define MR_CC_H

#include <stdint.h>

struct mr_cc;

struct mr_cc_config {
	uint32_t mtu;		  /* payload bytes of a full packet */
	uint32_t line_rate_mbps;  /* the sender's port rate */
	uint64_t base_rtt_ns;	  /* unloaded RTT: the round before a sample
				   * (0 = 10 us) */
	uint64_t init_cwnd;	  /* bytes (0 = BDP = line rate x base RTT) */
	uint64_t min_cwnd;	  /* bytes (0 = mtu) */
	uint64_t max_cwnd;	  /* bytes (0 = 4 x BDP) */
	uint64_t ai_bytes;	  /* MetaRoCE additive increase per RTT
				   * (0 = mtu) */
	uint32_t dcqcn_rai_mbps;  /* DCQCN additive step (0 = 40) */
	uint32_t dcqcn_rhai_mbps; /* DCQCN hyper step (0 = 200) */
	/* Pacing credit (MR-CC-4): the clock may lag `now` by the time
	 * this many bytes take at the pacing rate, so a driver that polls
	 * in rounds sends what the rate allows since its last round in one
	 * burst instead of one packet per round (0 = none: a NIC that
	 * paces every packet). */
	uint64_t pace_quantum;
};

/* What one received ACK tells the controller. */
struct mr_cc_ack {
	uint64_t acked_bytes; /* newly acked (all paths) */
	uint32_t acked_pkts;
	uint32_t ce_pkts;	 /* AETH ecn_ce */
	uint32_t rate_hint_mbps; /* AETH rate_hint (0 = none) */
	uint64_t srtt_ns;	 /* the connection's smoothed RTT (0 = none) */
};

struct mr_cc_ops {
	const char *name;
	/* Set cwnd/rate from cc->cfg. */
	void (*init)(struct mr_cc *cc, uint64_t now);
	void (*on_ack)(struct mr_cc *cc, const struct mr_cc_ack *ack,
		       uint64_t now);
	/* A packet of `bytes` was declared lost (why: enum mr_pathtx_loss). */
	void (*on_loss)(struct mr_cc *cc, uint64_t bytes, int why,
			uint64_t now);
	/* A packet of `bytes` left (after the in-flight count was raised). */
	void (*on_sent)(struct mr_cc *cc, uint64_t bytes, uint64_t now);
};

extern const struct mr_cc_ops mr_cc_ops_metaroce;
extern const struct mr_cc_ops mr_cc_ops_dcqcn;
extern const struct mr_cc_ops mr_cc_ops_fixed;

struct mr_cc {
	const struct mr_cc_ops *ops;
	struct mr_cc_config cfg; /* with defaults filled in */
	uint64_t cwnd;		 /* bytes, from the control law */
	uint64_t hint_cap;  /* bytes, receiver hint x srtt; UINT64_MAX none */
	uint32_t hint_mbps; /* last rate hint (0 = none) */
	uint32_t rate_mbps; /* pacing rate (0 = unpaced) */
	uint64_t inflight;  /* bytes sent, not yet acked or lost */
	uint64_t next_send; /* pacing: earliest next transmission (ns) */
	uint64_t srtt;	    /* last srtt reported (ns) */
	/* MetaRoCE round (one RTT) accumulation. */
	uint64_t round_start;
	uint32_t round_acked, round_ce;
	/* DCQCN state: rates in Mb/s, alpha in 1/65536 units. */
	uint64_t dc_rc, dc_rt;
	uint32_t dc_alpha;
	uint64_t dc_last_cnp, dc_last_alpha, dc_last_inc;
	uint32_t dc_stage;
	/* Counters. */
	uint64_t decreases, increases, ce_seen, hint_limited;
};

/* Initialise with ops and cfg (copied; zero fields take the defaults).
 * Returns 0 or -MR_EINVAL (NULL ops or cfg, mtu 0, line_rate 0, min > max,
 * init_cwnd outside [min_cwnd, max_cwnd]). */
int mr_cc_init(struct mr_cc *cc, const struct mr_cc_ops *ops,
	       const struct mr_cc_config *cfg, uint64_t now);

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

/* Account one received ACK (after its SACK blocks were processed). */
void mr_cc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack, uint64_t now);

/* Account a packet declared lost (it leaves the in-flight count; the
 * retransmission is accounted by mr_cc_on_sent again). */
void mr_cc_on_loss(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now);

/*
 * Receiver rate hint (MR-CC-7): one struct mr_ratehint per receiving port
 * (endpoint), one struct mr_ratehint_conn per connection. Time is cut into
 * epochs of `epoch_ns` (a few base RTTs); a connection is active if it
 * delivered a data packet in the current or the previous epoch, and the
 * hint is link_mbps / max(active now, active in the previous epoch).
 * The hint is fair share, so N senders of an incast each drop to 1/N of
 * the link within the RTT that carries the hint back (MR-CC-8).
 */
struct mr_ratehint {
	uint32_t link_mbps;
	uint64_t epoch_ns;
	uint64_t epoch; /* current epoch number (now / epoch_ns) */
	uint32_t cur;	/* connections active in the current epoch */
	uint32_t prev;	/* ... in the previous epoch */
};

struct mr_ratehint_conn {
	uint64_t epoch; /* last epoch this connection was counted in, + 1 */
};

/* Returns 0 or -MR_EINVAL (link_mbps or epoch_ns 0). */
int mr_ratehint_init(struct mr_ratehint *h, uint32_t link_mbps,
		     uint64_t epoch_ns);

static inline void mr_ratehint_conn_init(struct mr_ratehint_conn *c)
{
	c->epoch = 0;
}

/* A data packet of connection c arrived at now. */
void mr_ratehint_on_rx(struct mr_ratehint *h, struct mr_ratehint_conn *c,
		       uint64_t now);

/* The hint (Mb/s) to put in the AETH of an ACK sent at now. */
uint32_t mr_ratehint_get(struct mr_ratehint *h, uint64_t now);

#endif /* MR_CC_H */
