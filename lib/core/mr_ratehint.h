/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receiver rate hint (docs/spec/reliability.md MR-CC-7, MR-CC-8): one
 * struct mr_ratehint per receiving port (endpoint), one struct
 * mr_ratehint_conn per connection. Time is cut into epochs of `epoch_ns`
 * (a few base RTTs); a connection is active if it delivered a data packet
 * in the current or the previous epoch, and the hint is link_mbps /
 * max(active now, active in the previous epoch). The hint is fair share,
 * so N senders of an incast each drop to 1/N of the link within the RTT
 * that carries the hint back (MR-CC-8).
 *
 * No allocation. Threading: none.
 */
#ifndef MR_RATEHINT_H
#define MR_RATEHINT_H

#include <stdint.h>

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

#endif /* MR_RATEHINT_H */
