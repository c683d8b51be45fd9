// SPDX-License-Identifier: BSD-2-Clause
/* The receiver's rate hint (MR-CC-7, MR-CC-8). */
#include "mr_ratehint.h"

#include <string.h>

#include "mr_err.h"

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
