/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The endpoint's bookkeeping of its QPs, one floor above the QP parts
 * (docs/architecture.md): the transmit work queue, the timer heap keyed
 * by each QP's deadline, the qpn table, and the path counters a
 * destroyed QP leaves (mr_ep_stats.c). The QP floor (mr_qp.c, mr_srq.c)
 * and the endpoint (mr_ep.c) use them; nothing below does: a QP part that
 * gives its QP work returns, and the entry point that called it queues
 * the QP.
 */
#ifndef MR_SCHED_H
#define MR_SCHED_H

#include "mr_engine.h"

/* Queue qp for the transmit scheduler (idempotent); forget it. */
void mr_ep_kick(struct mr_qp *qp);
void mr_ep_unkick(struct mr_qp *qp);
/* Queue qp's due ACK ahead of the round robin (MR-REQ-5; idempotent,
 * nothing if no ACK is due at now). mr_ep_unkick() forgets it too. */
void mr_ep_kick_ack(struct mr_qp *qp, uint64_t now);

/* The earliest time qp has work waiting on time (UINT64_MAX:
 * none), computed from its state in O(num_paths). */
uint64_t mr_qp_deadline(const struct mr_qp *qp);
/* Re-key qp in ep->timers. Every public entry point calls it,
 * before it returns, for each QP whose state it may have changed (a QP's
 * deadline changes only when its state does). */
void mr_ep_timer_update(struct mr_qp *qp);
/* 0 if every QP's queued deadline equals mr_qp_deadline() and
 * the heap is well formed, else -1 (unit tests call it after each step:
 * an entry point that forgot mr_ep_timer_update() shows here). */
int mr_ep_timers_check(const struct mr_ep *ep);

/* The qpn table (demultiplexing). */
void mr_ep_qpn_insert(struct mr_ep *ep, struct mr_qp *qp);
void mr_ep_qpn_remove(struct mr_ep *ep, struct mr_qp *qp);
struct mr_qp *mr_ep_qpn_find(const struct mr_ep *ep, uint32_t qpn);

/* mr_ep_stats.c: keep a QP's use of each path when it is destroyed. */
void mr_ep_stats_qp_gone(struct mr_qp *qp);

#endif /* MR_SCHED_H */
