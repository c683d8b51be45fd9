// SPDX-License-Identifier: BSD-2-Clause
/*
 * Congestion control base (MR-CC-4): defaults, the sending gate, the
 * in-flight count and the pacing clock around the algorithm's hooks.
 */
#include "mr_cc.h"

#include <string.h>

#include "mr_err.h"

uint64_t mr_cc_bdp(const struct mr_cc_config *cfg)
{
	uint64_t bdp = mr_cc_bytes_at(cfg->line_rate_mbps, cfg->base_rtt_ns);

	return bdp < cfg->mtu ? cfg->mtu : bdp;
}

uint64_t mr_cc_rtt(const struct mr_cc *cc)
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
	    !ops->on_sent || ops->state_size > MR_CC_STATE_MAX || !c.mtu ||
	    !c.line_rate_mbps)
		return -MR_EINVAL;
	if (!c.base_rtt_ns)
		c.base_rtt_ns = 10000;
	bdp = mr_cc_bdp(&c);
	if (!c.min_cwnd)
		c.min_cwnd = c.mtu;
	if (!c.max_cwnd)
		c.max_cwnd = 4 * bdp;
	if (!c.init_cwnd)
		c.init_cwnd = bdp;
	/* MR-CC-1: the step is a fixed share of the BDP, so a window
	 * climbs back from a halving in the same number of RTTs on a
	 * 10 Gb/s and a 400 Gb/s port. */
	if (!c.ai_bytes)
		c.ai_bytes = bdp / 32 > c.mtu ? bdp / 32 : c.mtu;
	if (!c.hint_slack)
		c.hint_slack = 4 * (uint64_t)c.mtu;
	if (!c.ack_hold_ns)
		c.ack_hold_ns = 2000;
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

		cc->next_send = t + (bytes + cc->cfg.wire_overhead) * 8000 /
					    cc->rate_mbps;
	}
	cc->sent_at = now;
	cc->sent_bytes = bytes;
}

/* MR-CC-4: a rate that rose re-spaces the gap after the last packet at
 * the new rate; a slow rate's gap (tens of us at a sub-packet share)
 * would otherwise hold the sender idle after its queue drained. */
static void respace(struct mr_cc *cc, uint32_t old_rate)
{
	uint64_t t;

	if (!cc->rate_mbps || !cc->sent_bytes)
		return;
	t = cc->sent_at +
	    (cc->sent_bytes + cc->cfg.wire_overhead) * 8000 / cc->rate_mbps;
	if (old_rate && cc->rate_mbps < old_rate) {
		/* MR-CC-17: a fall, too: the gap after the last packet is the
		 * new rate's (an incast's first senders got R/12..R/22 with
		 * their first hint, and their next packet left at R/64's
		 * next ACK, one RTT later instead of R/64's gap). */
		if (cc->cfg.slots_start && t > cc->next_send)
			cc->next_send = t;
		return;
	}
	if (old_rate && cc->rate_mbps == old_rate)
		return;
	if (t < cc->next_send)
		cc->next_send = t;
}

void mr_cc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack, uint64_t now)
{
	uint32_t old_rate = cc->rate_mbps;

	cc->inflight -= ack->acked_bytes < cc->inflight ? ack->acked_bytes
							: cc->inflight;
	if (ack->srtt_ns)
		cc->srtt = ack->srtt_ns;
	if (ack->min_rtt_ns)
		cc->min_rtt = ack->min_rtt_ns;
	cc->ce_seen += ack->ce_pkts;
	cc->acks++;
	cc->ops->on_ack(cc, ack, now);
	respace(cc, old_rate);
}

void mr_cc_on_loss(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now)
{
	cc->inflight -= bytes < cc->inflight ? bytes : cc->inflight;
	cc->ops->on_loss(cc, bytes, why, now);
}

uint32_t mr_cc_starts_note(struct mr_cc_starts *s, uint64_t now,
			   uint64_t win)
{
	if (now >= s->t0 + 2 * win || now < s->t0) {
		s->prev = 0;
		s->n = 0;
		s->t0 = now;
	} else if (now >= s->t0 + win) {
		s->prev = s->n;
		s->n = 0;
		s->t0 += win;
	}
	s->n++;
	return s->n + s->prev;
}

void mr_cc_loss_ignored(struct mr_cc *cc, uint64_t bytes, int why, uint64_t now)
{
	/* MR-CC-3: loss is not congestion; only retransmission reacts. */
	(void)cc;
	(void)bytes;
	(void)why;
	(void)now;
}
