// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion control (MR-CC-*): MetaRoCE ECN-AIMD with receiver rate
 * hints, a DCQCN-like rate controller for the gbn baseline, and a fixed
 * window; plus the receiver's rate hint.
 */
#include "mr_cc.h"

#include <string.h>

#include "mr_err.h"

/* Bytes in flight at `mbps` for `ns`: Mb/s x ns / 8000. */
static uint64_t bytes_at(uint64_t mbps, uint64_t ns)
{
	return mbps * ns / 8000;
}

static uint64_t rtt_of(const struct mr_cc *cc)
{
	return cc->srtt ? cc->srtt : cc->cfg.base_rtt_ns;
}

int mr_cc_init(struct mr_cc *cc, const struct mr_cc_ops *ops,
	       const struct mr_cc_config *cfg, uint64_t now)
{
	struct mr_cc_config c;
	uint64_t bdp;

	if (!cc || !cfg)
		return -MR_EINVAL;
	c = *cfg;
	if (!ops || !ops->init || !ops->on_ack || !ops->on_loss ||
	    !ops->on_sent || !c.mtu || !c.line_rate_mbps)
		return -MR_EINVAL;
	if (!c.base_rtt_ns)
		c.base_rtt_ns = 10000;
	bdp = bytes_at(c.line_rate_mbps, c.base_rtt_ns);
	if (bdp < c.mtu)
		bdp = c.mtu;
	if (!c.min_cwnd)
		c.min_cwnd = c.mtu;
	if (!c.max_cwnd)
		c.max_cwnd = 4 * bdp;
	if (!c.init_cwnd)
		c.init_cwnd = bdp;
	if (!c.ai_bytes)
		c.ai_bytes = c.mtu;
	if (!c.dcqcn_rai_mbps)
		c.dcqcn_rai_mbps = 40;
	if (!c.dcqcn_rhai_mbps)
		c.dcqcn_rhai_mbps = 200;
	if (c.min_cwnd > c.max_cwnd || c.init_cwnd < c.min_cwnd ||
	    c.init_cwnd > c.max_cwnd)
		return -MR_EINVAL;
	memset(cc, 0, sizeof(*cc));
	cc->ops = ops;
	cc->cfg = c;
	cc->hint_cap = UINT64_MAX;
	cc->round_start = now;
	cc->next_send = now;
	ops->init(cc, now);
	return 0;
}

uint64_t mr_cc_window(const struct mr_cc *cc)
{
	uint64_t w = cc->cwnd < cc->hint_cap ? cc->cwnd : cc->hint_cap;

	return w < cc->cfg.min_cwnd ? cc->cfg.min_cwnd : w;
}

uint32_t mr_cc_window_pkts(const struct mr_cc *cc)
{
	uint64_t p = mr_cc_window(cc) / cc->cfg.mtu;

	if (!p)
		return 1;
	return p > UINT32_MAX ? UINT32_MAX : (uint32_t)p;
}

int mr_cc_can_send(const struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	if (cc->inflight && cc->inflight + bytes > mr_cc_window(cc))
		return 0;
	if (cc->rate_mbps && now < cc->next_send)
		return 0;
	return 1;
}

void mr_cc_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	cc->inflight += bytes;
	cc->ops->on_sent(cc, bytes, now);
	if (cc->rate_mbps) {
		uint64_t credit = cc->cfg.pace_quantum * 8000 / cc->rate_mbps;
		uint64_t floor = now > credit ? now - credit : 0;
		uint64_t t = cc->next_send > floor ? cc->next_send : floor;

		cc->next_send = t + bytes * 8000 / cc->rate_mbps;
	}
}

void mr_cc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack, uint64_t now)
{
	cc->inflight -= ack->acked_bytes < cc->inflight ? ack->acked_bytes
							: cc->inflight;
	if (ack->srtt_ns)
		cc->srtt = ack->srtt_ns;
	cc->ce_seen += ack->ce_pkts;
	cc->ops->on_ack(cc, ack, now);
}

void mr_cc_on_loss(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now)
{
	cc->inflight -= bytes < cc->inflight ? bytes : cc->inflight;
	cc->ops->on_loss(cc, bytes, why, now);
}

/* ---- MetaRoCE: ECN-AIMD + receiver rate hint (MR-CC-1..6) ---- */

/* Pacing at 5/4 of window/RTT: the window is the real limit, pacing only
 * spreads a window over the RTT instead of a line-rate burst. */
static void mrc_rate(struct mr_cc *cc)
{
	uint64_t rtt = rtt_of(cc);
	uint64_t r = mr_cc_window(cc) * 8000 / (rtt ? rtt : 1) * 5 / 4;
	if (r > cc->cfg.line_rate_mbps)
		r = cc->cfg.line_rate_mbps;
	if (cc->hint_mbps && r > cc->hint_mbps)
		r = cc->hint_mbps;
	cc->rate_mbps = r ? (uint32_t)r : 1;
}

static void mrc_init(struct mr_cc *cc, uint64_t now)
{
	(void)now;
	cc->cwnd = cc->cfg.init_cwnd;
	mrc_rate(cc);
}

static void mrc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack,
		       uint64_t now)
{
	uint64_t rtt = rtt_of(cc);

	if (ack->rate_hint_mbps) {
		/* The receiver's fair share caps the window at once: an
		 * incast is resolved in the RTT that brings the hint
		 * (MR-CC-5). */
		cc->hint_mbps = ack->rate_hint_mbps;
		cc->hint_cap = bytes_at(ack->rate_hint_mbps, rtt);
		if (cc->hint_cap < cc->cfg.min_cwnd)
			cc->hint_cap = cc->cfg.min_cwnd;
	} else {
		cc->hint_mbps = 0;
		cc->hint_cap = UINT64_MAX;
	}
	cc->round_acked += ack->acked_pkts;
	cc->round_ce += ack->ce_pkts;
	if (now - cc->round_start >= rtt && !cc->round_acked) {
		/* An RTT with nothing acked says nothing: start afresh so
		 * the next round is a full RTT of evidence. */
		cc->round_start = now;
		cc->round_ce = 0;
	} else if (now - cc->round_start >= rtt) {
		uint64_t ce = cc->round_ce < cc->round_acked ? cc->round_ce
							     : cc->round_acked;

		if (ce) {
			/* MR-CC-2: x (1 - F/2), F = CE fraction of the
			 * round, at most once per RTT. */
			uint64_t cut = cc->cwnd * ce / (2 * cc->round_acked);

			cc->cwnd -= cut;
			if (cc->cwnd < cc->cfg.min_cwnd)
				cc->cwnd = cc->cfg.min_cwnd;
			cc->decreases++;
		} else if (cc->cwnd < cc->hint_cap) {
			/* MR-CC-1: + ai per RTT, unless the hint is the
			 * binding limit (growth there would be fiction). */
			cc->cwnd += cc->cfg.ai_bytes;
			if (cc->cwnd > cc->cfg.max_cwnd)
				cc->cwnd = cc->cfg.max_cwnd;
			cc->increases++;
		} else {
			cc->hint_limited++;
		}
		cc->round_start = now;
		cc->round_acked = 0;
		cc->round_ce = 0;
	}
	mrc_rate(cc);
}

static void mrc_on_loss(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now)
{
	/* MR-CC-3: loss is not congestion; only retransmission reacts. */
	(void)cc;
	(void)bytes;
	(void)why;
	(void)now;
}

static void mrc_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	(void)cc;
	(void)bytes;
	(void)now;
}

const struct mr_cc_ops mr_cc_ops_metaroce = {
	.name = "metaroce",
	.init = mrc_init,
	.on_ack = mrc_on_ack,
	.on_loss = mrc_on_loss,
	.on_sent = mrc_on_sent,
};

/* ---- DCQCN-like baseline (MR-CC-9) ---- */

#define DC_ONE 65536u	     /* alpha = 1.0 */
#define DC_G_SHIFT 8	     /* g = 1/256 */
#define DC_CNP_NS 50000ull   /* one CNP per 50 us at most */
#define DC_ALPHA_NS 55000ull /* alpha decay period */
#define DC_TIMER_NS 55000ull /* rate increase period */
#define DC_FAST_STAGES 5     /* fast recovery steps */
#define DC_STEPS_MAX 4096    /* lazy catch-up bound */

static uint64_t dc_min_rate(const struct mr_cc *cc)
{
	uint64_t m = cc->cfg.line_rate_mbps / 1000;

	return m ? m : 1;
}

/* Apply the alpha decays and rate increases whose periods elapsed. */
static void dc_advance(struct mr_cc *cc, uint64_t now)
{
	uint32_t n;

	for (n = 0; now - cc->dc_last_alpha >= DC_ALPHA_NS && n < DC_STEPS_MAX;
	     n++) {
		cc->dc_alpha -= cc->dc_alpha >> DC_G_SHIFT;
		cc->dc_last_alpha += DC_ALPHA_NS;
	}
	if (n == DC_STEPS_MAX)
		cc->dc_last_alpha = now;
	for (n = 0; now - cc->dc_last_inc >= DC_TIMER_NS && n < DC_STEPS_MAX;
	     n++) {
		cc->dc_last_inc += DC_TIMER_NS;
		cc->dc_stage++;
		if (cc->dc_stage > 2 * DC_FAST_STAGES)
			cc->dc_rt += cc->cfg.dcqcn_rhai_mbps;
		else if (cc->dc_stage > DC_FAST_STAGES)
			cc->dc_rt += cc->cfg.dcqcn_rai_mbps;
		if (cc->dc_rt > cc->cfg.line_rate_mbps)
			cc->dc_rt = cc->cfg.line_rate_mbps;
		cc->dc_rc = (cc->dc_rt + cc->dc_rc) / 2;
		cc->increases++;
	}
	if (n == DC_STEPS_MAX)
		cc->dc_last_inc = now;
	cc->rate_mbps = (uint32_t)cc->dc_rc;
}

static void dc_init(struct mr_cc *cc, uint64_t now)
{
	cc->cwnd = cc->cfg.max_cwnd;
	cc->dc_rc = cc->cfg.line_rate_mbps;
	cc->dc_rt = cc->cfg.line_rate_mbps;
	cc->dc_alpha = DC_ONE;
	cc->dc_last_cnp = now - DC_CNP_NS;
	cc->dc_last_alpha = now;
	cc->dc_last_inc = now;
	cc->rate_mbps = cc->cfg.line_rate_mbps;
}

static void dc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack,
		      uint64_t now)
{
	dc_advance(cc, now);
	if (ack->ce_pkts && now - cc->dc_last_cnp >= DC_CNP_NS) {
		/* A CE echo stands for a CNP: cut, restart recovery. */
		cc->dc_last_cnp = now;
		cc->dc_alpha = cc->dc_alpha - (cc->dc_alpha >> DC_G_SHIFT) +
			       (DC_ONE >> DC_G_SHIFT);
		cc->dc_rt = cc->dc_rc;
		cc->dc_rc -= cc->dc_rc * cc->dc_alpha / (2 * DC_ONE);
		if (cc->dc_rc < dc_min_rate(cc))
			cc->dc_rc = dc_min_rate(cc);
		cc->dc_stage = 0;
		cc->dc_last_alpha = now;
		cc->dc_last_inc = now;
		cc->rate_mbps = (uint32_t)cc->dc_rc;
		cc->decreases++;
	}
}

static void dc_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	(void)bytes;
	dc_advance(cc, now);
}

const struct mr_cc_ops mr_cc_ops_dcqcn = {
	.name = "dcqcn",
	.init = dc_init,
	.on_ack = dc_on_ack,
	.on_loss = mrc_on_loss,
	.on_sent = dc_on_sent,
};

/* ---- Fixed window (MR-CC-10) ---- */

static void fixed_init(struct mr_cc *cc, uint64_t now)
{
	(void)now;
	cc->cwnd = cc->cfg.init_cwnd;
	cc->rate_mbps = 0;
}

static void fixed_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack,
			 uint64_t now)
{
	(void)cc;
	(void)ack;
	(void)now;
}

const struct mr_cc_ops mr_cc_ops_fixed = {
	.name = "fixed",
	.init = fixed_init,
	.on_ack = fixed_on_ack,
	.on_loss = mrc_on_loss,
	.on_sent = mrc_on_sent,
};

/* ---- Receiver rate hint (MR-CC-7, MR-CC-8) ---- */

int mr_ratehint_init(struct mr_ratehint *h, uint32_t link_mbps,
		     uint64_t epoch_ns)
{
	if (!h || !link_mbps || !epoch_ns)
		return -MR_EINVAL;
	memset(h, 0, sizeof(*h));
	h->link_mbps = link_mbps;
	h->epoch_ns = epoch_ns;
	return 0;
}

static void hint_roll(struct mr_ratehint *h, uint64_t now)
{
	uint64_t e = now / h->epoch_ns;

	if (e <= h->epoch)
		return;
	h->prev = e == h->epoch + 1 ? h->cur : 0;
	h->cur = 0;
	h->epoch = e;
}

void mr_ratehint_on_rx(struct mr_ratehint *h, struct mr_ratehint_conn *c,
		       uint64_t now)
{
	hint_roll(h, now);
	if (c->epoch != h->epoch + 1) {
		c->epoch = h->epoch + 1;
		h->cur++;
	}
}

uint32_t mr_ratehint_get(struct mr_ratehint *h, uint64_t now)
{
	uint32_t n;

	hint_roll(h, now);
	n = h->cur > h->prev ? h->cur : h->prev;
	return h->link_mbps / (n ? n : 1);
}
