// SPDX-License-Identifier: BSD-2-Clause
/*
 * DCQCN-like rate controller, the RoCEv2 baseline of gbn mode (MR-CC-9):
 * CE acts as a CNP (at most one per 50 us), alpha EWMA,
 * Rc *= (1 - alpha/2); recovery every 55 us: 5 fast-recovery steps, then
 * additive and hyper increase. Window fixed at max_cwnd (the in-flight
 * cap), rate = pacing. Ignores rate hints and loss.
 */
#include "mr_cc_dcqcn.h"

_Static_assert(sizeof(struct mr_cc_dcqcn) <= MR_CC_STATE_MAX,
	       "dcqcn state fits the base's area");

#define DC_ONE 65536u	     /* alpha = 1.0 */
#define DC_G_SHIFT 8	     /* g = 1/256 */
#define DC_CNP_NS 50000ull   /* one CNP per 50 us at most */
#define DC_ALPHA_NS 55000ull /* alpha decay period */
#define DC_TIMER_NS 55000ull /* rate increase period */
#define DC_FAST_STAGES 5     /* fast recovery steps */
#define DC_STEPS_MAX 4096    /* lazy catch-up bound */

static struct mr_cc_dcqcn *st(struct mr_cc *cc)
{
	return MR_CC_STATE(cc, struct mr_cc_dcqcn);
}

static uint64_t dc_min_rate(const struct mr_cc *cc)
{
	uint64_t m = cc->cfg.line_rate_mbps / 1000;

	return m ? m : 1;
}

/* Apply the alpha decays and rate increases whose periods elapsed. */
static void dc_advance(struct mr_cc *cc, uint64_t now)
{
	struct mr_cc_dcqcn *d = st(cc);
	uint32_t n;

	for (n = 0; now - d->last_alpha >= DC_ALPHA_NS && n < DC_STEPS_MAX;
	     n++) {
		d->alpha -= d->alpha >> DC_G_SHIFT;
		d->last_alpha += DC_ALPHA_NS;
	}
	if (n == DC_STEPS_MAX)
		d->last_alpha = now;
	for (n = 0; now - d->last_inc >= DC_TIMER_NS && n < DC_STEPS_MAX; n++) {
		d->last_inc += DC_TIMER_NS;
		d->stage++;
		if (d->stage > 2 * DC_FAST_STAGES)
			d->rt += cc->cfg.dcqcn_rhai_mbps;
		else if (d->stage > DC_FAST_STAGES)
			d->rt += cc->cfg.dcqcn_rai_mbps;
		if (d->rt > cc->cfg.line_rate_mbps)
			d->rt = cc->cfg.line_rate_mbps;
		d->rc = (d->rt + d->rc) / 2;
		cc->increases++;
	}
	if (n == DC_STEPS_MAX)
		d->last_inc = now;
	cc->rate_mbps = (uint32_t)d->rc;
}

static void dc_init(struct mr_cc *cc, uint64_t now)
{
	struct mr_cc_dcqcn *d = st(cc);

	cc->cwnd = cc->cfg.max_cwnd;
	d->rc = cc->cfg.line_rate_mbps;
	d->rt = cc->cfg.line_rate_mbps;
	d->alpha = DC_ONE;
	d->last_cnp = now - DC_CNP_NS;
	d->last_alpha = now;
	d->last_inc = now;
	cc->rate_mbps = cc->cfg.line_rate_mbps;
}

static void dc_on_ack(struct mr_cc *cc, const struct mr_cc_ack *ack,
		      uint64_t now)
{
	struct mr_cc_dcqcn *d = st(cc);

	dc_advance(cc, now);
	if (ack->ce_pkts && now - d->last_cnp >= DC_CNP_NS) {
		/* A CE echo stands for a CNP: cut, restart recovery. */
		d->last_cnp = now;
		d->alpha = d->alpha - (d->alpha >> DC_G_SHIFT) +
			   (DC_ONE >> DC_G_SHIFT);
		d->rt = d->rc;
		d->rc -= d->rc * d->alpha / (2 * DC_ONE);
		if (d->rc < dc_min_rate(cc))
			d->rc = dc_min_rate(cc);
		d->stage = 0;
		d->last_alpha = now;
		d->last_inc = now;
		cc->rate_mbps = (uint32_t)d->rc;
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
	.help = "DCQCN-like rate control (the RoCEv2 baseline of gbn mode)",
	.state_size = sizeof(struct mr_cc_dcqcn),
	.init = dc_init,
	.on_ack = dc_on_ack,
	.on_loss = mr_cc_loss_ignored,
	.on_sent = dc_on_sent,
};
