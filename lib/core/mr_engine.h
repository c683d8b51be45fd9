/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internal state of the transport engine (docs/spec/transport.md), shared
 * by mr_ep.c (endpoint, demux, scheduling, timers), mr_qp.c (state
 * machine, flush), mr_req.c (requester: WQEs, packets out, ACK/NAK in),
 * mr_resp.c (responder: placement, message order, READ/atomic records,
 * ACKs out), mr_rq.c (receive queues, SRQ) and mr_ud.c (datagrams).
 * Not installed: nothing outside lib/core includes it.
 *
 * Sequence spaces per RC QP and direction:
 *   ssn  every data packet we send (requests and responses), one space;
 *        the peer dedups it with its mr_ssnwin; ring txp[] keeps what
 *        each ssn carries from the peer's cum_ssn up to snd_nxt.
 *   msn  our requests = index of the send WQE (sq counter); responses
 *        carry the request's msn in the peer's space.
 *   rsn  receive-consuming requests (SEND*, WRITE_IMM) before this one;
 *        only SEND* carry it on the wire (MR-HDR-9), WRITE_IMM consumes
 *        its WQE at completion, which is in msn order anyway.
 */
#ifndef MR_ENGINE_H
#define MR_ENGINE_H

#include <stdint.h>

#include "mr_be.h"
#include "mr_cc.h"
#include "mr_core.h"
#include "mr_counters.h"
#include "mr_pathmgr.h"
#include "mr_pathrx.h"
#include "mr_pathsel.h"
#include "mr_pathtx.h"
#include "mr_qpout.h"
#include "mr_req.h"
#include "mr_ratehint.h"
#include "mr_resp.h"
#include "mr_ring.h"
#include "mr_rq.h"
#include "mr_sge.h"
#include "mr_sq.h"
#include "mr_sqlocal.h"
#include "mr_ssnwin.h"
#include "mr_timerq.h"
#include "mr_uc.h"
#include "mr_ud.h"
#include "mr_wire.h"

#define MR_MAX_RD_ATOMIC 64

struct mr_qp {
	struct mr_ep *ep;
	struct mr_qp_config cfg;
	struct mr_qp_attr attr;
	enum mr_qp_state state;
	struct mr_counters cnt;
	uint32_t mtu; /* effective path mtu */

	struct mr_sq sq; /* send queue (mr_sq.h) */
	/* UD send: packets waiting (sq.next..sq.tail); UC: packets sent */
	uint32_t ud_ssn;
	struct mr_sqlocal lq; /* BIND_MW, LOCAL_INV (mr_sqlocal.h) */

	struct mr_req req;  /* requester, our ssn space (mr_req.h) */
	struct mr_resp rsp; /* responder, receive side (mr_resp.h) */
	struct mr_rq rq;    /* receive WQEs (mr_rq.h) */

	/* The connection's paths, both directions (pm: mr_path*, mr_cc*). */
	struct mr_pathtx *ptx; /* [num_paths] */
	struct mr_pathsel ps;
	struct mr_pathmgr pm; /* probing paths, planes down (MR-PM-*) */
	struct mr_cc cc;
	uint16_t npaths;
	uint64_t now; /* time of the current entry point */

	uint8_t in_work; /* queued in ep->work */
	uint8_t in_ackq; /* queued in ep->ackq */
	/* In ep->timers, keyed by mr_qp_deadline() as the last entry point
	 * that touched the QP left it (mr_ep_timer_update). */
	struct mr_timerq_entry tmr;

	struct mr_uc_rx uc; /* UC receive (mr_uc.h) */

	/* What the parts above return to the QP floor: completions, the
	 * end of an SQ drain, a failure (mr_qpout.h, mr_qp_settle()). */
	struct mr_qpout out;
};

struct mr_ep {
	struct mr_ep_config cfg;
	struct mr_mem mem;
	struct mr_rand rnd;
	struct mr_memreg memreg;
	struct mr_callbacks cb;
	struct mr_counters cnt;
	struct mr_qp **qps; /* [max_qp] */
	uint32_t nqp;
	struct mr_qp **qpn_tab; /* open addressing by qpn, linear probing */
	uint32_t qpn_mask;	/* table size - 1 (>= 2 x max_qp) */
	/* QPs that may have something to send, FIFO (round robin): a QP is
	 * queued by every event that can give it work (post, received
	 * packet, timer, modify) and leaves when it has nothing to send. */
	struct mr_qp **work;
	uint32_t work_head, work_n;
	/* QPs whose ACK fell due, FIFO: served before the round robin
	 * (MR-REQ-5), so an ACK never waits for every other QP's data
	 * packet. A QP may be in both queues. */
	struct mr_qp **ackq;
	uint32_t ackq_head, ackq_n;
	/* Every QP with a deadline, earliest first: the next-deadline query
	 * reads its top and expiry pops only what is due. due[] is the
	 * scratch list of one mr_ep_handle_expiry() call. */
	struct mr_timerq timers;
	struct mr_qp **due; /* [max_qp] */
	uint32_t nsrq;
	struct mr_ratehint rh;
	struct mr_cc_starts starts; /* MR-CC-16's first_pkt_starts */
	struct mr_ratehint_conn **rh_act; /* [max_qp]: rh's lists */
	uint32_t *rh_demand;		  /* [max_qp] */
	/* Use of each path by QPs destroyed already (mr_ep_stats.c). */
	struct mr_path_counters paths_gone[MR_MAX_PATHS];
	uint64_t now_max; /* latest now any entry point was given */
	uint32_t planes_backlogged; /* MR-MP-12, from the datapath */
	uint32_t plane_turn; /* MR-MP-14: its connections start in turn */
};

/* The core's clock never goes back (MR-QP-7): a caller whose threads
 * read the clock before taking the endpoint's lock can pass an older now
 * than the call before. Every entry point takes its time through here. */
static inline uint64_t mr_ep_now(struct mr_ep *ep, uint64_t now)
{
	if (now < ep->now_max)
		return ep->now_max;
	ep->now_max = now;
	return now;
}

/* Count an event on a QP and its endpoint. */
#define MR_CNT(qp, field, n)                \
	do {                                \
		(qp)->cnt.field += (n);     \
		(qp)->ep->cnt.field += (n); \
	} while (0)

/* Count what the path manager reported (enum mr_pathmgr_event). */
static inline void mr_req_on_pathmgr_ev(struct mr_qp *qp, unsigned ev)
{
	if (ev & MR_PATHMGR_EV_PATH_BACK)
		MR_CNT(qp, paths_back, 1);
	if (ev & MR_PATHMGR_EV_PLANE_DOWN)
		MR_CNT(qp, planes_down, 1);
	if (ev & MR_PATHMGR_EV_PLANE_UP)
		MR_CNT(qp, planes_up, 1);
}

static inline uint32_t mr_ssn_slot(const struct mr_qp *qp, uint32_t ssn)
{
	return ssn & (qp->ep->cfg.ssn_window - 1);
}

static inline struct mr_swqe *mr_sq_wqe(const struct mr_qp *qp, uint32_t i)
{
	return mr_sq_at(&qp->sq, i);
}

static inline struct mr_resp_rec *mr_resp_rec_of(const struct mr_qp *qp,
						 uint32_t i)
{
	return &qp->rsp.rec[i & qp->rsp.rec_mask];
}

static inline int mr_qp_is_gbn(const struct mr_qp *qp)
{
	return qp->cfg.mode == MR_MODE_GBN;
}

static inline uint64_t mr_ib_timeout_ns(uint8_t t)
{
	return t ? 4096ull << (t > 31 ? 31 : t) : 0;
}

/* The QP is in ERR, or a part reported a failure the QP floor has not
 * acted on yet (mr_qpout_fail): the parts' work loops stop as in ERR. */
static inline int mr_qp_failed(const struct mr_qp *qp)
{
	return qp->state == MR_QPS_ERR || qp->out.fail || qp->out.overflow;
}

/* The memory a QP's keys name (its protection domain), for mr_sge.h. */
#define MR_QP_MEM(qp)                                         \
	(&(const struct mr_memctx){ .reg = &(qp)->ep->memreg, \
				    .cb = &(qp)->ep->cb,      \
				    .pd = (qp)->cfg.pd })

static inline int mr_qp_lookup(const struct mr_qp *qp, uint32_t key, int remote,
			       uint64_t addr, uint64_t len, unsigned need,
			       uint8_t **host)
{
	/* MR-MW-3: a remote access names the QP it arrived at. */
	return mr_mem_lookup(MR_QP_MEM(qp), key, remote ? (int)qp->cfg.qpn : 0,
			     addr, len, need, host);
}

static inline struct mr_txp *mr_txp_of(struct mr_qp *qp, uint32_t ssn)
{
	return &qp->req.txp[mr_ssn_slot(qp, ssn)];
}

static inline int mr_in_flight_window(const struct mr_qp *qp, uint32_t ssn)
{
	return !mr_seq_lt(ssn, qp->req.snd_una) &&
	       mr_seq_lt(ssn, qp->req.snd_nxt);
}

#endif /* MR_ENGINE_H */
