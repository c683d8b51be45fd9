// SPDX-License-Identifier: BSD-2-Clause
/*
 * The requester's input side (docs/spec/transport.md MR-REQ-*, MR-ERR-*):
 * ACKs and NAKs (settling packets, completing WRs, RNR waits, gbn
 * go-back), READ/atomic responses, and the timers (path RTOs, RNR wait,
 * stall probe, retry exhaustion). Transmit and posting: mr_req.c.
 */
#include <string.h>

#include "mr_atomicw.h"
#include "mr_engine.h"

/* ---- ACKs and NAKs in -----------------------------------------------------
 */

static uint32_t rewind_from(struct mr_qp *qp, uint32_t msn)
{
	uint32_t s, n = 0;

	/* MR-REQ-12: after an RNR wait, everything of message msn and later
	 * that the peer may have refused is sent again; what it had taken
	 * is dropped there as a duplicate. */
	for (s = qp->req.snd_una; mr_seq_lt(s, qp->req.snd_nxt); s++) {
		struct mr_txp *t = mr_txp_of(qp, s);

		if (t->kind != MR_TXP_REQ || mr_seq_lt(t->owner, msn) ||
		    t->state != MR_TXP_ACKED)
			continue;
		t->state = MR_TXP_LOST;
		qp->req.lost_cnt++;
		n++;
		if (mr_seq_lt(s, qp->req.retx_from))
			qp->req.retx_from = s;
	}
	return n;
}

static uint64_t rnr_timer_ns(uint8_t code)
{
	/* IB's RNR timer encoding (table 45), in microseconds x 100; 0 means
	 * 655.36 ms. */
	static const uint32_t us100[32] = {
		65536, 1,    2,	   3,	  4,	 6,	8,     12,
		16,    24,   32,   48,	  64,	 96,	128,   192,
		256,   384,  512,  768,	  1024,	 1536,	2048,  3072,
		4096,  6144, 8192, 12288, 16384, 24576, 32768, 49152,
	};
	return (uint64_t)us100[code & 31] * 10000;
}

static void on_nak(struct mr_qp *qp, const struct mr_aeth *a, uint64_t now)
{
	uint32_t m = a->nak_msn;
	struct mr_swqe *w;
	uint16_t i;

	MR_CNT(qp, nak_rcvd[a->syndrome], 1);
	switch (a->syndrome) {
	case MR_NAK_SEQ_ERR: {
		struct mr_txp *t;

		if (!mr_qp_is_gbn(qp) || !mr_in_flight_window(qp, a->cum_ssn))
			return;
		/* MR-GBN-3: a NAK for an ssn already sent again is stale. */
		t = mr_txp_of(qp, a->cum_ssn);
		if (t->state == MR_TXP_OUT && t->retx)
			return;
		for (i = 0; i < qp->npaths; i++)
			mr_pathtx_lose_all(&qp->ptx[i], now);
		qp->req.retx_from = qp->req.snd_una;
		MR_CNT(qp, gbn_rewinds, 1);
		return;
	}
	case MR_NAK_RNR:
		if (!mr_req_started(qp, m))
			return;
		if (qp->req.rnr_wait && !mr_seq_lt(m, qp->req.rnr_msn))
			return; /* the wait already covers it */
		w = mr_sq_wqe(qp, m);
		w->rnr_count++;
		if (qp->attr.rnr_retry != 7 &&
		    w->rnr_count > qp->attr.rnr_retry) {
			mr_req_mark_err(qp, m, MR_WC_RNR_RETRY_EXC_ERR);
			return;
		}
		qp->req.rnr_wait = 1;
		qp->req.rnr_probe = 0;
		qp->req.rnr_probe_at = UINT64_MAX;
		qp->req.rnr_msn = m;
		qp->req.rnr_until = now + rnr_timer_ns(a->rnr_timer);
		MR_CNT(qp, rnr_waits, 1);
		return;
	case MR_NAK_REM_ACCESS:
		mr_req_mark_err(qp, m, MR_WC_REM_ACCESS_ERR);
		return;
	case MR_NAK_INV_REQ:
		mr_req_mark_err(qp, m, MR_WC_REM_INV_REQ_ERR);
		return;
	case MR_NAK_REM_OP:
		mr_req_mark_err(qp, m, MR_WC_REM_OP_ERR);
		return;
	default:
		return;
	}
}

static void free_resp_records(struct mr_qp *qp)
{
	while (qp->rsp.rec_head != qp->rsp.rec_send) {
		struct mr_resp_rec *r = mr_resp_rec_of(qp, qp->rsp.rec_head);

		if (!mr_seq_lt(r->last_ssn, qp->req.snd_una))
			break;
		qp->rsp.rec_head++;
	}
}

/*
 * MR-MP-8: a path made progress at now. Every path learns the send time
 * of the latest-sent packet the others had acknowledged: once one sent
 * after a path's oldest outstanding packet is back (it was overtaken),
 * that packet may stay out 3/2 x the largest smoothed RTT of the paths
 * on its plane from its send (its own route's RTT, or its plane's if it
 * moved there: MR-PM-5; the best path's if none has one), or 3/2 x 4/5 of
 * the largest recent delay of the other paths that carry data if that is
 * more (MR-MP-13: a queue building in the fabric shows in their latest
 * packets' delays long before the smoothed RTTs follow), and half again
 * for each suspicion a late ACK proved false since; the path itself may
 * go without an ACK half that long. A path that holds the connection's
 * only outstanding packets cannot be overtaken (the tail of a transfer): it may
 * stay silent about two RTTs of the best path, plus four times its own RTT
 * variation, after an ACK that came after them. Beyond that it is suspect
 * (mr_pathtx_suspect_at()).
 */
#define SUSP_WIDEN_MAX 6 /* own RTT x 4 at most */

/* The largest and second largest of a value over paths, with the path of
 * the largest: "the others' latest" is top2_other(). */
struct top2 {
	uint64_t v1, v2;
	uint16_t at1;
};

static void top2_add(struct top2 *t, uint64_t v, uint16_t i)
{
	if (v > t->v1) {
		t->v2 = t->v1;
		t->v1 = v;
		t->at1 = i;
	} else if (v > t->v2) {
		t->v2 = v;
	}
}

static uint64_t top2_other(const struct top2 *t, uint16_t i)
{
	return i == t->at1 ? t->v2 : t->v1;
}

static void suspect_arm(struct mr_qp *qp, uint64_t now)
{
	static const struct top2 zero;
	struct top2 conn = zero, recent = zero, psent[MR_MAX_PATHS],
		    pprog[MR_MAX_PATHS];
	uint64_t best = 0, out = 0, plane[MR_MAX_PATHS];
	uint16_t i;

	memset(plane, 0, sizeof(plane));
	for (i = 0; i < qp->ps.num_planes && i < MR_MAX_PATHS; i++)
		psent[i] = pprog[i] = zero;
	for (i = 0; i < qp->npaths; i++) {
		const struct mr_pathtx *tx = &qp->ptx[i];
		uint8_t pl = mr_pathsel_plane(&qp->ps, i);

		if (tx->srtt && (!best || tx->srtt < best))
			best = tx->srtt;
		if (tx->srtt > plane[pl])
			plane[pl] = tx->srtt;
		top2_add(&conn, tx->acked_sent_at, i);
		top2_add(&psent[pl], tx->acked_sent_at, i);
		top2_add(&pprog[pl], tx->last_ack_at, i);
		if (mr_pathmgr_carries_data(&qp->pm, i) && !tx->suspect)
			top2_add(&recent,
				 tx->latest_delay > tx->latest_rtt
					 ? tx->latest_delay
					 : tx->latest_rtt,
				 i);
		out += tx->out_pkts;
	}
	if (!best)
		return; /* no RTT yet: the RTO covers the start */
	/* A suspicion a late ACK proved false widens the allowance (the
	 * routes' RTTs spread more than it allowed: a queue building on
	 * some); 256 ACKs of progress without one narrow it again. */
	if (qp->cnt.path_suspects_false != qp->req.susp_false_seen) {
		uint64_t w = qp->req.susp_widen + (qp->cnt.path_suspects_false -
						   qp->req.susp_false_seen);

		qp->req.susp_widen =
			(uint8_t)(w > SUSP_WIDEN_MAX ? SUSP_WIDEN_MAX : w);
		qp->req.susp_false_seen = qp->cnt.path_suspects_false;
		qp->req.susp_calm = 0;
	} else if (++qp->req.susp_calm >= 256) {
		qp->req.susp_calm = 0;
		if (qp->req.susp_widen > 1)
			qp->req.susp_widen--;
	}
	for (i = 0; i < qp->npaths; i++) {
		struct mr_pathtx *tx = &qp->ptx[i];
		uint64_t own = plane[mr_pathsel_plane(&qp->ps, i)];
		uint64_t others = top2_other(&recent, i) * 4 / 5;

		if (own < others)
			own = others;
		if (own < best)
			own = best;
		/* the others' latest: the second latest for the latest's */
		tx->conn_sent_at = top2_other(&conn, i);
		tx->plane_sent_at =
			top2_other(&psent[mr_pathsel_plane(&qp->ps, i)], i);
		tx->plane_progress_at =
			top2_other(&pprog[mr_pathsel_plane(&qp->ps, i)], i);
		tx->overtake_ns = own + own * qp->req.susp_widen / 2;
		if (out == tx->out_pkts) {
			tx->conn_progress_at = now;
			tx->suspect_ns = 2 * best + 4 * tx->rttvar;
		} else {
			tx->suspect_ns = 0;
		}
	}
}

/* MR-TMR-2: a path with no RTT sample of its own takes the RTO of the
 * connection's best path (same peer, same fabric) instead of the initial
 * one: the first packet a path carries may be a retransmission, and its
 * loss should not cost the initial RTO. Its own first sample replaces it. */
static void rto_seed(struct mr_qp *qp)
{
	uint64_t best = 0, rto = 0;
	uint16_t i;

	for (i = 0; i < qp->npaths; i++)
		if (qp->ptx[i].srtt && (!best || qp->ptx[i].srtt < best)) {
			best = qp->ptx[i].srtt;
			rto = qp->ptx[i].rto;
		}
	for (i = 0; best && i < qp->npaths; i++)
		if (!qp->ptx[i].srtt && rto < qp->ptx[i].rto)
			qp->ptx[i].rto = rto;
}

/* MR-CC-17: the drain's q (MR-CC-13) from the paths whose latest
 * acknowledged packet left within one RTT (the latest sample) of the
 * connection's latest acknowledged one; `all` (the least over every
 * path) when none has a sample. A sender paced at a small share sends
 * a packet every 20 us, so each of 4 paths keeps the sample of a packet
 * 60-80 us old: the drain judged a growing queue by its past (64-to-1,
 * first ACKs in slots: 189 KB at 104 us). */
static uint64_t recent_rtt(const struct mr_qp *qp, uint64_t all)
{
	uint64_t newest = 0, rtt = 0, q = 0;
	unsigned i;

	for (i = 0; i < qp->npaths; i++)
		if (qp->ptx[i].latest_rtt &&
		    qp->ptx[i].acked_sent_at >= newest) {
			newest = qp->ptx[i].acked_sent_at;
			rtt = qp->ptx[i].latest_rtt;
		}
	for (i = 0; i < qp->npaths; i++)
		if (qp->ptx[i].latest_rtt &&
		    qp->ptx[i].acked_sent_at + rtt >= newest &&
		    (!q || qp->ptx[i].latest_rtt < q))
			q = qp->ptx[i].latest_rtt;
	return q ? q : all;
}

int mr_req_on_ack(struct mr_qp *qp, const struct mr_pkt *pkt, uint64_t now)
{
	const struct mr_aeth *a = &pkt->aeth;
	struct mr_cc_ack ca;
	uint32_t ce = 0;
	int progress = 0, path_progress = 0;
	uint8_t i;

	if (qp->state == MR_QPS_ERR) {
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	/* MR-REQ-10: an ACK for what we never sent is not trusted. */
	if (mr_seq_lt(qp->req.snd_nxt, a->cum_ssn) ||
	    mr_seq_lt(qp->sq.next, a->cum_msn)) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	for (i = 0; i < a->nblocks; i++)
		if (a->blocks[i].path_id >= qp->npaths) {
			MR_CNT(qp, drop_invalid, 1);
			return -MR_EPROTO;
		}
	qp->req.cc_acked_bytes = 0;
	qp->req.cc_acked_pkts = 0;
	for (i = 0; i < a->nblocks; i++) {
		const struct mr_sack_block *b = &a->blocks[i];
		struct mr_pathtx *tx = &qp->ptx[b->path_id];
		uint64_t late = tx->late_acked, sfalse = tx->suspect_false;
		/* MR-MP-7: RTT samples from the block of the path the ACK
		 * came on only. */
		unsigned fl = b->path_id == pkt->pth.path_id
				      ? 0
				      : MR_PATHTX_SACK_NO_RTT;

		/* MR-ERR-2: an ACK of a transmission the RTO had given up
		 * (MR-TMR-8) is progress too: the peer is receiving. */
		if (mr_pathtx_on_sack_flags(tx, b, now, fl) > 0)
			path_progress = 1;
		if (tx->late_acked != late)
			path_progress = progress = 1;
		ce += tx->ce_new;
		tx->ce_new = 0;
		MR_CNT(qp, path_suspects_false, tx->suspect_false - sfalse);
	}
	/* MR-TMR-7: data acknowledged is progress of the peer; a probe's
	 * ACK (on_acked() counts no data for it) only shows its path alive,
	 * and must not keep a peer that takes no data from its retry limit. */
	if (qp->req.cc_acked_pkts)
		progress = 1;
	if (path_progress && qp->npaths > 1) {
		suspect_arm(qp, now);
		rto_seed(qp);
	}
	/* MR-PM-7, MR-PM-8: weights and re-draws from the paths' health. */
	MR_CNT(qp, path_redraws,
	       mr_pathmgr_on_acks(&qp->pm, &qp->ps, qp->ptx, now));
	if (mr_seq_lt(qp->req.snd_una, a->cum_ssn)) {
		qp->req.stall_ref = now;
		while (qp->req.snd_una != a->cum_ssn) {
			struct mr_txp *t = mr_txp_of(qp, qp->req.snd_una);

			if (t->state == MR_TXP_LOST)
				qp->req.lost_cnt--;
			t->state = MR_TXP_ACKED;
			qp->req.snd_una++;
		}
		progress = 1;
		free_resp_records(qp);
	}
	if (mr_seq_lt(qp->req.peer_cum_msn, a->cum_msn)) {
		qp->req.peer_cum_msn = a->cum_msn;
		progress = 1;
	}
	if (progress) {
		qp->req.retries = 0;
		qp->req.progress_at = now;
	}
	memset(&ca, 0, sizeof(ca));
	ca.acked_bytes = qp->req.cc_acked_bytes;
	ca.acked_pkts = qp->req.cc_acked_pkts;
	ca.ce_pkts = ce;
	ca.rate_hint_mbps = a->rate_hint;
	/* The connection's RTTs: the best path's smoothed RTT for the
	 * round, the least RTT seen on any path for the hint cap (MR-CC-5),
	 * and the least of the paths' latest samples (MR-CC-13: the queue
	 * all paths share, the receiver's port, is the hint's business; one
	 * path's queue, a spine's, is the path manager's, MR-PM-7; latest
	 * samples, since the smoothed RTTs lag a draining queue). */
	ca.srtt_ns = qp->ptx[0].srtt;
	ca.min_rtt_ns = qp->ptx[0].min_rtt;
	ca.rtt_ns = qp->ptx[0].latest_rtt;
	for (i = 1; i < qp->npaths; i++) {
		if (qp->ptx[i].srtt &&
		    (!ca.srtt_ns || qp->ptx[i].srtt < ca.srtt_ns))
			ca.srtt_ns = qp->ptx[i].srtt;
		if (qp->ptx[i].min_rtt &&
		    (!ca.min_rtt_ns || qp->ptx[i].min_rtt < ca.min_rtt_ns))
			ca.min_rtt_ns = qp->ptx[i].min_rtt;
		if (qp->ptx[i].latest_rtt &&
		    (!ca.rtt_ns || qp->ptx[i].latest_rtt < ca.rtt_ns))
			ca.rtt_ns = qp->ptx[i].latest_rtt;
	}
	if (qp->ep->cfg.cc_start == MR_CC_START_SLOTS)
		ca.rtt_ns = recent_rtt(qp, ca.rtt_ns);
	mr_cc_on_ack(&qp->cc, &ca, now);
	MR_CNT(qp, ecn_ce_echoed, ce);
	if (a->syndrome != MR_NAK_NONE)
		on_nak(qp, a, now);
	mr_req_complete(qp);
	if (!mr_qp_failed(qp))
		mr_resp_advance(qp, now); /* records may have been freed */
	return 0;
}

/* A READ_RESP or ATOMIC_RESP for one of our WQEs (MR-REQ-7). */
int mr_req_on_resp(struct mr_qp *qp, const struct mr_pkt *pkt,
		   const struct mr_rx_meta *meta, uint64_t now)
{
	const struct mr_bth *b = &pkt->bth;
	struct mr_swqe *w = NULL;
	int rc, known;

	if (qp->state == MR_QPS_ERR) {
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	known = !mr_seq_lt(b->msn, qp->sq.head) &&
		mr_seq_lt(b->msn, qp->sq.next);
	if (known) {
		w = mr_sq_wqe(qp, b->msn);
		if (b->opcode == MR_OP_READ_RESP
			    ? w->opcode != MR_WR_RDMA_READ ||
				      b->msg_len != w->len
			    : !mr_atomicw_is_atomic(w->opcode)) {
			MR_CNT(qp, drop_invalid, 1);
			return -MR_EPROTO;
		}
	} else if (!mr_seq_lt(b->msn, qp->sq.head)) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	if (known)
		mr_resp_rebase(qp, b->rsn); /* MR-RSP-11 */
	rc = mr_rx_check(qp, pkt, meta, now);
	if (rc)
		return rc < 0 ? rc : 0;
	mr_rx_accept(qp, pkt, meta, now);
	if (!known || w->resp_done || w->err)
		return 0; /* completed or failed already: nothing to place */
	MR_CNT(qp, rx_payload_bytes, pkt->payload_len);
	if (b->opcode == MR_OP_ATOMIC_RESP) {
		uint64_t v = pkt->atomic_orig;

		/* MR-AW-3: an ATOMIC_WRITE's response places nothing. */
		if (w->opcode != MR_WR_ATOMIC_WRITE &&
		    mr_sge_place(MR_QP_MEM(qp), w->sge, w->num_sge, 0,
				 (uint8_t *)&v, 8))
			mr_req_mark_err(qp, w->msn, MR_WC_LOC_PROT_ERR);
		w->resp_done = 1;
	} else {
		if (pkt->payload_len &&
		    mr_sge_place(MR_QP_MEM(qp), w->sge, w->num_sge, b->offset,
				 pkt->payload, pkt->payload_len))
			mr_req_mark_err(qp, w->msn, MR_WC_LOC_PROT_ERR);
		w->resp_bytes += pkt->payload_len;
		if (w->resp_bytes >= w->len)
			w->resp_done = 1;
	}
	/* MR-ERR-2: response data is progress (MR-REQ-15 waits for it). */
	qp->req.retries = 0;
	qp->req.progress_at = now;
	mr_req_complete(qp);
	return 0;
}

/* ---- timers ---------------------------------------------------------------
 */

/* Everything we sent arrived on its path, yet the peer's cum_ssn does not
 * move: some of it was refused (RNR with the NAK lost). Returns the time
 * to send all of it again, or UINT64_MAX (MR-REQ-13). */
static uint64_t stall_at(const struct mr_qp *qp)
{
	uint64_t rto = 0;
	uint16_t i;

	if (qp->req.snd_una == qp->req.snd_nxt || qp->req.lost_cnt ||
	    qp->req.rnr_wait)
		return UINT64_MAX;
	for (i = 0; i < qp->npaths; i++) {
		if (qp->ptx[i].out_pkts)
			return UINT64_MAX;
		if (qp->ptx[i].rto > rto)
			rto = qp->ptx[i].rto; /* without backoff: be quick */
	}
	if (rto < qp->ep->cfg.min_rto_ns)
		rto = qp->ep->cfg.min_rto_ns;
	return qp->req.stall_ref + 2 * rto;
}

/* MR-REQ-15: the oldest WR is a READ or atomic whose request the peer
 * acknowledged, and no response byte (nor other progress) came for the
 * local ACK timeout: returns 1 when it is time to probe. */
static uint64_t rd_stall_at(const struct mr_qp *qp)
{
	uint64_t to = mr_ib_timeout_ns(qp->attr.timeout);
	const struct mr_swqe *w;

	if (!to || qp->sq.head == qp->sq.next || qp->req.rnr_wait ||
	    qp->req.rnr_probe || qp->req.rnr_probe_at != UINT64_MAX)
		return UINT64_MAX;
	w = mr_sq_wqe(qp, qp->sq.head);
	if ((w->opcode != MR_WR_RDMA_READ &&
	     !mr_atomicw_is_atomic(w->opcode)) ||
	    w->resp_done || w->err || w->state != MR_SWQE_SENT ||
	    !mr_seq_lt(w->last_ssn, qp->req.snd_una))
		return UINT64_MAX;
	return qp->req.progress_at + to;
}

static int rd_stalled(const struct mr_qp *qp, uint64_t now)
{
	return rd_stall_at(qp) <= now;
}

/* MR-ERR-8: our responses (or packets of WRs already complete) went
 * unacknowledged through every retry: the peer's requester is gone. The
 * QP enters ERR with the async fatal event (no CQE can say it), and
 * NAKs REM_OP for the response's request if the peer asks again. */
static void resp_fail(struct mr_qp *qp)
{
	mr_resp_peer_gone(qp);
	mr_qpout_fail(&qp->out, 1);
}

/*
 * MR-TMR-9: the tail-loss probe. When nothing came back for a probe
 * timeout after the connection's newest transmission (and its last
 * progress), nothing is in flight behind that packet to reveal its loss:
 * the others' ACKs would have been progress. That packet is declared lost
 * and resent on the next path, once per silence: its ACK is progress and
 * overtakes what else is out (MR-MP-8); after that the RTO and retry_cnt
 * have it. The probe timeout is
 * 2 x the best path's smoothed RTT + 4 x its variation, or half the
 * initial RTO before any sample (a connection's first packet: its RTT is
 * the start's queue too, several base RTTs under an incast), plus
 * the receiver's ACK delay (a lone packet's ACK waits for it), and at least
 * the RTO floor late ACKs taught (MR-TMR-8: a receiver that stalls). Returns
 * the time and the path via *path, or UINT64_MAX.
 */
static uint64_t tlp_at(const struct mr_qp *qp, uint16_t *path)
{
	uint64_t newest = 0, best = 0, var = 0, floor = 0, ref, pto, s;
	const struct mr_pathtx *t;
	int found = 0;
	uint16_t i;

	*path = 0;
	if (mr_qp_is_gbn(qp) || qp->req.tlp_progress == qp->req.progress_at)
		return UINT64_MAX;
	for (i = 0; i < qp->npaths; i++) {
		t = &qp->ptx[i];
		if (t->srtt && (!best || t->srtt < best)) {
			best = t->srtt;
			var = t->rttvar;
		}
		if (t->rto_floor > floor)
			floor = t->rto_floor;
		if (!mr_pathmgr_carries_data(&qp->pm, i) ||
		    !mr_pathtx_newest_out(t, &s) || (found && s < newest))
			continue;
		newest = s;
		*path = i;
		found = 1;
	}
	if (!found)
		return UINT64_MAX;
	t = &qp->ptx[*path];
	pto = best ? 2 * best + 4 * var : t->cfg.rto_init_ns / 2;
	pto += qp->ep->cfg.ack_delay_ns;
	/* A receiver whose ACKs came late (MR-TMR-8) may be silent so long. */
	if (pto < floor)
		pto = floor;
	ref = newest > qp->req.progress_at ? newest : qp->req.progress_at;
	/* Not when the path's own RTO comes first. */
	if (ref + pto >= t->rto_start + mr_pathtx_rto(t))
		return UINT64_MAX;
	return ref + pto;
}

uint64_t mr_req_deadline(const struct mr_qp *qp)
{
	uint64_t d = qp->req.pace_at, st = stall_at(qp);
	uint16_t i;

	if (st < d)
		d = st;
	st = tlp_at(qp, &i);
	if (st < d)
		d = st;

	if (qp->req.rnr_wait && qp->req.rnr_until < d)
		d = qp->req.rnr_until;
	if (qp->req.rnr_probe_at < d)
		d = qp->req.rnr_probe_at;
	if (rd_stall_at(qp) < d)
		d = rd_stall_at(qp);
	for (i = 0; i < qp->npaths; i++) {
		uint64_t t = mr_pathtx_next_deadline(&qp->ptx[i]);

		if (t < d)
			d = t;
	}
	st = mr_pathmgr_deadline(&qp->pm, qp->ptx);
	return st < d ? st : d;
}

/* 1 if a path other than path carries data (not probing, not suspect). */
static int other_carrier(const struct mr_qp *qp, uint16_t path)
{
	uint16_t j;

	for (j = 0; j < qp->npaths; j++)
		if (j != path && mr_pathmgr_carries_data(&qp->pm, j) &&
		    !qp->ptx[j].suspect)
			return 1;
	return 0;
}

/*
 * MR-MP-4, MR-PM-1: the RTO of a path that carries data while another
 * path does: the path is suspect like one silent while others progress
 * (MR-MP-8): no data, probes only, its plane may be down (MR-PM-4). Its
 * packets were declared lost by the RTO and go to the other paths. Before,
 * such a path went on carrying one packet at a time: with a window of a
 * few packets all on the dead paths (nothing sent after them came back,
 * so no evidence rule of MR-MP-8 armed) and a run of the spray keeping
 * the turn, every retransmission went back to a dead path and the backed
 * off RTOs exhausted retry_cnt with the other plane idle (bench/wire
 * plane_fail, test_pathmgr.c test_rto_plane_small_window).
 */
static void rto_suspect(struct mr_qp *qp, uint16_t i, uint64_t now)
{
	unsigned pev;

	qp->ptx[i].suspect = 1;
	pev = mr_pathmgr_on_suspect(&qp->pm, &qp->ps, qp->ptx, i, now);
	if (pev & MR_PATHMGR_EV_PROBING)
		MR_CNT(qp, path_suspects, 1);
	mr_req_on_pathmgr_ev(qp, pev);
}

void mr_req_expiry(struct mr_qp *qp, uint64_t now)
{
	struct mr_txp *t;
	uint64_t limit;
	int rto = 0;
	uint16_t i;

	if (tlp_at(qp, &i) <= now) {
		/* MR-TMR-9: before the paths' timers, which it pre-empts. */
		qp->req.tlp_progress = qp->req.progress_at;
		if (mr_pathtx_tail_probe(&qp->ptx[i]))
			MR_CNT(qp, tail_probes, 1);
	}
	for (i = 0; i < qp->npaths; i++) {
		unsigned ev;

		/* Only the paths that are due (expiry visits a QP for any of
		 * its deadlines, a delayed ACK among them). */
		if (mr_pathtx_next_deadline(&qp->ptx[i]) > now)
			continue;
		ev = mr_pathtx_on_timeout(&qp->ptx[i], now);

		if (ev & MR_PATHTX_EV_SUSPECT) {
			/* MR-MP-8: its packets are resent elsewhere (they
			 * are LOST now); a new route for it; no retry. It
			 * probes from now on (MR-PM-1), and its plane may
			 * be down (MR-PM-4). */
			unsigned pev;

			mr_pathsel_on_rto(&qp->ps, i, now);
			pev = mr_pathmgr_on_suspect(&qp->pm, &qp->ps, qp->ptx,
						    i, now);
			if (pev & MR_PATHMGR_EV_PROBING)
				MR_CNT(qp, path_suspects, 1);
			mr_req_on_pathmgr_ev(qp, pev);
		}
		if (!(ev & MR_PATHTX_EV_RTO))
			continue;
		if (!mr_pathmgr_carries_data(&qp->pm, i)) {
			/* A probe timed out (the peer may be fine: the
			 * others progress): a new route for the next probe,
			 * no retry (MR-PM-2). */
			mr_pathsel_on_rto(&qp->ps, i, now);
			continue;
		}
		MR_CNT(qp, timeouts, 1);
		rto = 1;
		mr_pathsel_on_rto(&qp->ps, i, now);
		if (mr_qp_is_gbn(qp))
			qp->req.retx_from = qp->req.snd_una;
		else if (other_carrier(qp, i))
			rto_suspect(qp, i, now);
	}
	/* MR-ERR-2: one retry per expiry, however many paths timed out
	 * together (a peer that stops answering times out every path at
	 * once: that is one retry, as the single timer of IB would see). */
	if (rto)
		qp->req.retries++;
	/* MR-ERR-2: retry_cnt retries without progress, and at least the
	 * local ACK timeout per try: the oldest WQE fails. timeout 0 is
	 * infinite (verbs). */
	limit = mr_ib_timeout_ns(qp->attr.timeout) *
		((uint64_t)qp->attr.retry_cnt + 1);
	if (limit && qp->req.retries > qp->attr.retry_cnt &&
	    now - qp->req.progress_at >= limit) {
		if (mr_req_started(qp, qp->sq.head)) {
			mr_req_mark_err(qp, qp->sq.head, MR_WC_RETRY_EXC_ERR);
			mr_req_complete(qp);
			return;
		}
		if (qp->req.snd_una != qp->req.snd_nxt ||
		    qp->rsp.rec_head != qp->rsp.rec_tail) {
			resp_fail(qp);
			return;
		}
	}
	if (qp->req.rnr_wait && now >= qp->req.rnr_until) {
		qp->req.rnr_wait = 0;
		if (!rewind_from(qp, qp->req.rnr_msn))
			qp->req.rnr_probe = 1; /* MR-REQ-14 */
	}
	if (qp->req.rnr_probe_at <= now) {
		/* MR-REQ-14: the probe or its answer was lost (or the peer
		 * is gone): a timeout like any other (MR-ERR-2). */
		qp->req.rnr_probe_at = UINT64_MAX;
		if (mr_req_started(qp, qp->req.rnr_msn) &&
		    !mr_seq_lt(qp->req.rnr_probe_sent, qp->req.progress_at)) {
			MR_CNT(qp, timeouts, 1);
			qp->req.retries++;
			qp->req.rnr_probe = 1;
			if (limit && qp->req.retries > qp->attr.retry_cnt &&
			    now - qp->req.progress_at >= limit) {
				mr_req_mark_err(qp, qp->sq.head,
						MR_WC_RETRY_EXC_ERR);
				mr_req_complete(qp);
				return;
			}
		}
	}
	if (rd_stalled(qp, now)) {
		/* MR-REQ-15: ask the responder with the request again (its
		 * duplicate is ACKed, or NAKed by a failed responder). */
		MR_CNT(qp, timeouts, 1);
		qp->req.retries++;
		qp->req.rnr_msn = qp->sq.head;
		qp->req.rnr_probe = 1;
	}
	if (stall_at(qp) <= now) {
		MR_CNT(qp, timeouts, 1);
		qp->req.retries++;
		qp->req.stall_ref = now;
		/* Probe with the oldest packet: the peer answers a duplicate
		 * with an ACK (and a refused one with its NAK). */
		t = mr_txp_of(qp, qp->req.snd_una);
		if (t->state == MR_TXP_ACKED) {
			t->state = MR_TXP_LOST;
			t->probe = 1;
			qp->req.lost_cnt++;
			qp->req.retx_from = qp->req.snd_una;
		}
	}
	if (qp->req.pace_at <= now)
		qp->req.pace_at = UINT64_MAX;
}
