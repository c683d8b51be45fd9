// SPDX-License-Identifier: BSD-2-Clause
/* Fixed window (MR-CC-10): init_cwnd bytes, unpaced; a no-op control for
 * tests and benchmarks. */
#include "mr_cc.h"

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

static void fixed_on_sent(struct mr_cc *cc, uint64_t bytes, uint64_t now)
{
	(void)cc;
	(void)bytes;
	(void)now;
}

const struct mr_cc_ops mr_cc_ops_fixed = {
	.name = "fixed",
	.help = "fixed window (the initial BDP), unpaced",
	.state_size = 0,
	.init = fixed_init,
	.on_ack = fixed_on_ack,
	.on_loss = mr_cc_loss_ignored,
	.on_sent = fixed_on_sent,
};
