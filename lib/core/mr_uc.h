/* SPDX-License-Identifier: BSD-2-Clause */
/* Unreliable connected QPs (mr_uc.c, docs/spec/transport.md MR-UC-*). */
#ifndef MR_UC_H
#define MR_UC_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_wire.h"

struct mr_qp;

/* MR-UC-3: the message being received (qp->uc). */
struct mr_uc_rx {
	uint64_t vaddr;
	uint32_t next_ssn;
	uint32_t msn, len, bytes, rkey;
	uint8_t started; /* a packet arrived: next_ssn is valid */
	uint8_t in_msg;	 /* a message is being received */
	uint8_t op;	 /* its wire opcode */
};

size_t mr_uc_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta);
int mr_uc_rx(struct mr_qp *qp, const struct mr_pkt *pkt,
	     const struct mr_rx_meta *meta);
void mr_uc_rx_reset(struct mr_qp *qp);

#endif /* MR_UC_H */
