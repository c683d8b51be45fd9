// SPDX-License-Identifier: BSD-2-Clause
/*
 * MetaRoCE's controller (MR-CC-1..6): ECN-driven AIMD per connection,
 * one round per RTT: + ai_bytes after a round without CE (under a
 * hint's cap, half the way to it if that is more), x (1 - F/2)
 * after a round where a fraction F of the acked packets was CE-marked;
 * never reduced on loss. The receiver's rate hint caps the window to
 * hint x min RTT + what the receiver holds for a coalesced ACK (the
 * smoothed RTT includes the queue: a cap from it would keep an incast's
 * queue standing instead of draining it) and the pacing rate to the hint.
 * A connection starts with one packet until the first hint, then takes
 * the hint's cap at once until its first CE round (MR-CC-5). Once the
 * network marked CE, and for as long as the latest RTT sample shows a
 * queue of more than a base RTT, cap and rate shrink by 2 base RTTs /
 * that RTT, so a standing queue drains (MR-CC-13); the drain ends with a
 * round without CE in which the queue was gone (MR-CC-15); the rate
 * may run 1/8 above the hint so a port whose senders fall short of
 * their share stays busy (MR-CC-13).
 *
 * Variant `metaroce-nohint`: the same AIMD, hints ignored.
 */
#include "mr_cc.h"

struct mrc_state {
	int use_hint;
	int started; /* a round ended with CE marks: the start is over */
	uint64_t round_start;
	uint32_t round_acked, round_ce;
	uint64_t rtt; /* latest RTT sample (0 = none), MR-CC-13 */
	/* CE seen, and no round since without CE and with the latest RTT
	 * sample at most 2 ref (MR-CC-13, MR-CC-15). */
	int marked;
};

_Static_assert(sizeof(struct mrc_state) <= MR_CC_STATE_MAX,
	       "metaroce state fits the base's area");

static struct mrc_state *st(struct mr_cc *cc)
{
	return MR_CC_STATE(cc, struct mrc_state);
}

/* MR-CC-13's ref: min(min RTT, base RTT). */
static uint64_t ref_rtt(const struct mr_cc *cc)
{
	return cc->min_rtt && cc->min_rtt < cc->cfg.base_rtt_ns
		       ? cc->min_rtt
		       : cc->cfg.base_rtt_ns;
}

/* The latest RTT sample shows more than ref of queue. */
static int queued(const struct mr_cc *cc, const struct mrc_state *s)
{
	return s->rtt && s->rtt > 2 * ref_rtt(cc);
}

/* MR-CC-13: x (2 ref) / RTT while the latest RTT sample shows more
 * than ref of queue, ref = min(min RTT, base RTT) (the base RTT too: an
 * incast sender whose first sample sat in the queue has an inflated min
 * RTT, and would drain less than the others; with the min RTT alone the
 * 64-to-1 incast's last flows finished 60 us after the rest). The hint
 * alone paces N senders at exactly the port's rate: that holds a queue,
 * it never drains it. The latest sample, not the smoothed RTT: srtt lags
 * a draining queue by many RTTs and the port goes idle. Only once the
 * network marked CE (until the queue is gone, MR-CC-15): a switch queue
 * above its threshold marks, and a delay never marked is the hosts' own (a software datapath's thread
 * waiting for a core: on a loaded veth link the latest sample is often
 * 5-20 x the min RTT, and draining on it cut ib_write_bw 2.5-4 x,
 * 13:44 UTC interleaved runs, bench/sim/results.md). */
static uint64_t drain(const struct mr_cc *cc, uint64_t x)
{
	const struct mrc_state *s = (const void *)cc->state;

	if (!s->marked || !queued(cc, s))
		return x;
	return x * 2 * ref_rtt(cc) / s->rtt;
}

/* Pacing at 5/4 of window/RTT (MR-CC-6): the window is the real limit,
 * pacing only spreads a window over the RTT instead of a line-rate burst.
 * Capped at 9/8 x the hint, drained (MR-CC-13): the hint is a fair
 * share, and senders held exactly at it leave the receiver's port short
 * whenever one of them falls behind (its own port shared with 62 other
 * connections in an all-to-all); the 1/8 above it is the drain's to
 * take back, as a queue of ref builds. */
static void mrc_rate(struct mr_cc *cc)
{
	uint64_t rtt = mr_cc_rtt(cc);
	uint64_t r = mr_cc_window(cc) * 8000 / (rtt ? rtt : 1) * 5 / 4;

	if (r > cc->cfg.line_rate_mbps)
		r = cc->cfg.line_rate_mbps;
	if (cc->hint_mbps) {
		uint64_t h = cc->hint_mbps;

		/* MR-CC-17: at the hint until the first CE round: the 1/8
		 * above it is for a port whose senders fall short, and an
		 * incast's starting senders do not (64-to-1: 64 x 9/8 of
		 * R/64 filled the queue to the ECN threshold by 60 us,
		 * before the first marks could start the drain). */
		if (!cc->cfg.slots_start || st(cc)->started)
			h = h * 9 / 8;
		h = drain(cc, h);

		if (r > h)
			r = h;
	}
	cc->rate_mbps = r ? (uint32_t)r : 1;
}

static void mrc_init(struct mr_cc *cc, uint64_t now)
{
	st(cc)->use_hint = 1;
	st(cc)->round_start = now;
	cc->cwnd = cc->cfg.init_cwnd;
	/* MR-CC-5: one packet until the receiver's first hint says what
	 * share is free (64 senders of an incast starting at one BDP each
	 * would overflow the buffer in the first RTT). */
	cc->hint_cap = cc->cfg.min_cwnd;
	mrc_rate(cc);
}

static void nohint_init(struct mr_cc *cc, uint64_t now)
{
	st(cc)->use_hint = 0;
	st(cc)->round_start = now;
	cc->cwnd = cc->cfg.init_cwnd;
	mrc_rate(cc);
}

/* MR-CC-5: the receiver's share caps the window at once, so an incast is
 * resolved in the RTT that brings the hint. */
static void take_hint(struct mr_cc *cc, uint32_t hint)
{
	uint64_t rtt = cc->min_rtt ? cc->min_rtt : mr_cc_rtt(cc);
	uint64_t slack;

	if (!hint || !st(cc)->use_hint) {
		cc->hint_mbps = 0;
		cc->hint_cap = UINT64_MAX;
		return;
	}
	cc->hint_mbps = hint;
	/* What the receiver holds for a coalesced ACK is in flight but not
	 * in the pipe: at most ack_every packets, at most what arrives in
	 * its ACK delay (a slow sender's packets are ACKed one by one).
	 * Twice that: a lost ACK is covered by the next one, and the window
	 * must not stall meanwhile (MR-CC-3: random loss does not cut the
	 * rate; with one ACK's worth a long flow kept 86% of its lossless
	 * goodput at 5% loss, with two 92%). */
	slack = mr_cc_bytes_at(hint, cc->cfg.ack_hold_ns) + cc->cfg.mtu;
	if (slack > cc->cfg.hint_slack)
		slack = cc->cfg.hint_slack;
	/* MR-CC-17: the first hint's window is the share of the pipe alone
	 * (at least one packet): the receiver's later hints fit N senders'
	 * slack into its queue, but the first reach the senders it saw
	 * first before it has seen the rest of an incast (R/12..R/22 where
	 * 64 start together), and with the slack each of them sent its
	 * share of 12-22 senders' packets at once. */
	if (cc->cfg.slots_start && cc->acks == 1)
		slack = 0;
	cc->hint_cap = drain(cc, mr_cc_bytes_at(hint, rtt) + 2 * slack);
	if (cc->hint_cap < cc->cfg.min_cwnd)
		cc->hint_cap = cc->cfg.min_cwnd;
	/* MR-CC-5: until the first CE mark the window takes the receiver's
	 * share at once instead of climbing to it by additive steps. */
	if (!st(cc)->started && cc->cwnd < cc->hint_cap) {
		cc->cwnd = cc->hint_cap < cc->cfg.max_cwnd ? cc->hint_cap
							   : cc->cfg.max_cwnd;
		cc->increases++;
	}
}

static void end_round(struct mr_cc *cc, struct mrc_state *s)
{
	uint64_t ce =
		s->round_ce < s->round_acked ? s->round_ce : s->round_acked;

	if (ce) {
		/* MR-CC-2: x (1 - F/2), F = CE fraction of the round. */
		uint64_t cut;

		/* From the window in use: an AIMD window above the hint's
		 * cap would otherwise take rounds of cuts to bind again. */
		if (cc->cwnd > cc->hint_cap)
			cc->cwnd = cc->hint_cap;
		cut = cc->cwnd * ce / (2 * s->round_acked);
		cc->cwnd -= cut;
		s->started = 1;
		if (cc->cwnd < cc->cfg.min_cwnd)
			cc->cwnd = cc->cfg.min_cwnd;
		cc->decreases++;
	} else if (cc->cwnd < cc->hint_cap) {
		/* MR-CC-1: + ai per RTT, unless the hint is the binding
		 * limit (growth there would be fiction); under a hint's cap,
		 * half the way to it if that is more: the cap is the
		 * receiver's share, and a window cut by a burst of CE
		 * climbing back by BDP/32 per RTT was what ended an
		 * all-to-all last (its last flows at 8-14 KB windows with a
		 * 92 KB cap, 16 hosts: 120.8 us, 113.7 with this). */
		uint64_t step = cc->cfg.ai_bytes;

		if (cc->hint_cap != UINT64_MAX &&
		    (cc->hint_cap - cc->cwnd) / 2 > step)
			step = (cc->hint_cap - cc->cwnd) / 2;
		cc->cwnd += step;
		if (cc->cwnd > cc->cfg.max_cwnd)
			cc->cwnd = cc->cfg.max_cwnd;
		cc->increases++;
	} else {
		cc->hint_limited++;
	}
}

static void mrc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack,
		       uint64_t now)
{
	struct mrc_state *s = st(cc);
	uint64_t rtt = mr_cc_rtt(cc);

	if (ack->rtt_ns)
		s->rtt = ack->rtt_ns;
	if (ack->ce_pkts)
		s->marked = 1;
	take_hint(cc, ack->rate_hint_mbps);
	s->round_acked += ack->acked_pkts;
	s->round_ce += ack->ce_pkts;
	if (now - s->round_start >= rtt) {
		/* A round with nothing acked says nothing: start afresh so
		 * the next round is a full RTT of evidence. */
		if (s->round_acked)
			end_round(cc, s);
		/* MR-CC-15: the drain ends once the queue is gone, not as
		 * soon as it is under the switch's marking threshold: ended
		 * there, the senders' 9/8 of their share (MR-CC-6) filled it
		 * back to the threshold, and the threshold, not the drain's
		 * 2 ref, was where the queue stood (64-to-1: over it in 454
		 * of 654 samples after 100 us, 113 KB on average). */
		if (!s->round_ce && !queued(cc, s))
			s->marked = 0;
		s->round_start = now;
		s->round_acked = 0;
		s->round_ce = 0;
	}
	mrc_rate(cc);
}

static void mrc_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	(void)cc;
	(void)bytes;
	(void)now;
}

const struct mr_cc_ops mr_cc_ops_metaroce = {
	.name = "metaroce",
	.help = "ECN AIMD (AI scaled to the BDP) capped by the receiver's "
		"rate hint x min RTT",
	.state_size = sizeof(struct mrc_state),
	.init = mrc_init,
	.on_ack = mrc_on_ack,
	.on_loss = mr_cc_loss_ignored,
	.on_sent = mrc_on_sent,
};

const struct mr_cc_ops mr_cc_ops_metaroce_nohint = {
	.name = "metaroce-nohint",
	.help = "MetaRoCE's ECN AIMD without the receiver's rate hints",
	.state_size = sizeof(struct mrc_state),
	.init = nohint_init,
	.on_ack = mrc_on_ack,
	.on_loss = mr_cc_loss_ignored,
	.on_sent = mrc_on_sent,
};
