/* SPDX-License-Identifier: BSD-2-Clause */
/* Unreliable datagram QPs (mr_ud.c, docs/spec/transport.md MR-UD-*). */
#ifndef MR_UD_H
#define MR_UD_H

#include <stddef.h>

#include "mr_core.h"
#include "mr_wire.h"

struct mr_qp;

#define MR_UD_GRH_LEN 40 /* verbs UD receive buffers start with a GRH */

size_t mr_ud_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta);
int mr_ud_rx(struct mr_qp *qp, const struct mr_pkt *pkt,
	     const struct mr_rx_meta *meta);

#endif /* MR_UD_H */
