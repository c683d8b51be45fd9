// SPDX-License-Identifier: BSD-2-Clause
/*
 * The requester (docs/spec/transport.md MR-REQ-*, MR-ORD-*, MR-ERR-*):
 * send WQEs become packets (new ssn each, a path and ppsn from the
 * per-path sender), ACKs settle them, losses the per-path senders report
 * are resent (same ssn, new path/ppsn), and WQEs complete in posting
 * order. The same ssn space also carries the responses of mr_resp.c.
 * ACK/NAK and response processing and the timers are in mr_req_rx.c.
 */
#include <string.h>

#include "mr_atomicw.h"
#include "mr_crc32c.h"
#include "mr_engine.h"

static void on_acked(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		     uint64_t ctx, uint64_t rtt_ns)
{
	struct mr_qp *qp = user;
	struct mr_txp *t;

	if (MR_PATHMGR_CTX_IS_PROBE(ctx)) {
		/* MR-PM-3, MR-PM-6: a probe came back; no data, no CC. */
		mr_req_on_pathmgr_ev(qp,
				     mr_pathmgr_on_acked(&qp->pm, &qp->ps, path,
							 ctx, qp->now));
		return;
	}
	mr_req_on_pathmgr_ev(qp, mr_pathmgr_on_progress(&qp->pm, path));
	qp->req.cc_acked_bytes += bytes;
	qp->req.cc_acked_pkts++;
	if (!mr_in_flight_window(qp, ssn))
		return;
	t = mr_txp_of(qp, ssn);
	if (t->state == MR_TXP_LOST)
		qp->req.lost_cnt--;
	t->state = MR_TXP_ACKED;
}

static void on_lost(void *user, uint16_t path, uint32_t ssn, uint32_t bytes,
		    uint64_t ctx, int why)
{
	struct mr_qp *qp = user;
	struct mr_txp *t;

	if (MR_PATHMGR_CTX_IS_PROBE(ctx)) {
		/* A probe carries nothing to resend (MR-PM-2). */
		mr_pathmgr_on_lost(&qp->pm, path, ctx, qp->now);
		return;
	}
	mr_cc_on_loss(&qp->cc, bytes, why, qp->now);
	if (why == MR_PATHTX_LOSS_REORDER || why == MR_PATHTX_LOSS_TIME)
		MR_CNT(qp, sack_holes, 1);
	if (!mr_in_flight_window(qp, ssn))
		return;
	t = mr_txp_of(qp, ssn);
	if (t->state != MR_TXP_OUT)
		return;
	t->state = MR_TXP_LOST;
	qp->req.lost_cnt++;
	if (mr_seq_lt(ssn, qp->req.retx_from))
		qp->req.retx_from = ssn;
}

/* MR-TMR-2: the RTO before a connection's first RTT sample,
 * RTO_INIT_RTTS x the configured unloaded RTT, between the minimum RTO
 * and RTO_INIT_MAX (the RTT is the operator's to know, not RFC 6298's
 * unknown network: its 1 s, or our 1 ms, is a hundred RTTs of a fabric). */
#define RTO_INIT_RTTS 10
#define RTO_INIT_MAX 1000000 /* ns */

static uint64_t rto_init(const struct mr_ep *ep)
{
	uint64_t r = RTO_INIT_RTTS * ep->cfg.base_rtt_ns;

	if (r > RTO_INIT_MAX)
		r = RTO_INIT_MAX;
	return r < ep->cfg.min_rto_ns ? ep->cfg.min_rto_ns : r;
}

void mr_req_reset(struct mr_qp *qp, uint64_t now)
{
	struct mr_ep *ep = qp->ep;
	struct mr_pathtx_cb cb = { .acked = on_acked,
				   .lost = on_lost,
				   .user = qp };
	struct mr_cc_config ccfg;
	uint16_t i;

	qp->req.snd_base = qp->attr.sq_psn;
	qp->req.snd_una = qp->req.snd_nxt = qp->req.retx_from = qp->attr.sq_psn;
	qp->req.lost_cnt = 0;
	qp->req.susp_false_seen = qp->cnt.path_suspects_false;
	qp->req.tlp_progress = UINT64_MAX;
	qp->req.susp_calm = 0;
	qp->req.susp_widen = 1;
	qp->req.peer_cum_msn = 0;
	qp->req.retries = 0;
	qp->req.progress_at = now;
	qp->req.rnr_wait = 0;
	qp->req.rnr_probe = 0;
	qp->req.rnr_probe_at = UINT64_MAX;
	qp->req.pace_at = UINT64_MAX;
	qp->req.cc_acked_bytes = 0;
	qp->req.cc_acked_pkts = 0;
	for (i = 0; i < qp->npaths; i++) {
		struct mr_pathtx_config pc = {
			.path_id = i,
			.init_ppsn = qp->attr.sq_psn,
			.rto_min_ns = ep->cfg.min_rto_ns,
		};

		if (mr_qp_is_gbn(qp) && ep->cfg.gbn_ib_timeout &&
		    qp->attr.timeout)
			pc.rto_init_ns = pc.rto_min_ns = pc.rto_max_ns =
				mr_ib_timeout_ns(qp->attr.timeout);
		else
			pc.rto_init_ns = rto_init(ep);

		mr_pathtx_init(&qp->ptx[i], &pc, &cb);
	}
	mr_pathsel_init(&qp->ps,
			mr_qp_is_gbn(qp) ? mr_pathsel_find("single")
					 : ep->cfg.pathsel,
			qp->npaths,
			ep->cfg.num_planes < qp->npaths ? ep->cfg.num_planes
							: (uint8_t)qp->npaths,
			&ep->rnd);
	qp->ps.run = ep->cfg.path_run;
	/* MR-PM-2: probes of one path at least a quarter of the unloaded
	 * RTT apart (a silence limit is about two RTTs anyway). MR-PM-5:
	 * the remap's first plane from path 0's drawn entropy (a value of
	 * this connection's own; a further draw would shift every later
	 * connection's entropies). */
	mr_pathmgr_init(&qp->pm, qp->npaths, qp->ps.num_planes,
			ep->cfg.base_rtt_ns / 4, qp->ps.path[0].entropy);
	memset(&ccfg, 0, sizeof(ccfg));
	ccfg.mtu = qp->mtu + MR_MAX_HDR_LEN + MR_ICRC_LEN;
	ccfg.line_rate_mbps = ep->cfg.link_rate_mbps;
	ccfg.base_rtt_ns = ep->cfg.base_rtt_ns;
	ccfg.pace_quantum = ep->cfg.pace_quantum;
	/* MR-CC-5: the packets the peer holds for one coalesced ACK are in
	 * flight but not in the pipe (its ack_every is taken to be ours). */
	ccfg.hint_slack = (uint64_t)ep->cfg.ack_every * ccfg.mtu;
	ccfg.ack_hold_ns = ep->cfg.ack_delay_ns;
	ccfg.slots_start = ep->cfg.cc_start == MR_CC_START_SLOTS;
	/* MR-CC-17 (g): paced at R/N of the receiver's count, N senders
	 * put 66 bytes a packet more on its port than R (1.6% at 4096). */
	if (ccfg.slots_start)
		ccfg.wire_overhead = MR_CC_WIRE_OVERHEAD;
	mr_cc_init(&qp->cc,
		   mr_qp_is_gbn(qp) ? ep->cfg.cc_gbn : ep->cfg.cc_metaroce,
		   &ccfg, now);
}

/* ---- posting ---------------------------------------------------------- */

static int post_check(const struct mr_qp *qp, const struct mr_send_wr *wr,
		      uint64_t *len)
{
	const struct mr_qp_config *c = &qp->cfg;
	unsigned i;

	*len = 0;
	if (wr->num_sge > c->max_send_sge || (wr->num_sge && !wr->sg_list))
		return -MR_EINVAL;
	if (wr->flags & ~(unsigned)(MR_SEND_FENCE | MR_SEND_SIGNALED |
				    MR_SEND_SOLICITED | MR_SEND_INLINE))
		return -MR_EINVAL;
	for (i = 0; i < wr->num_sge; i++)
		*len += wr->sg_list[i].length;
	if (c->type == MR_QPT_UD) {
		if (wr->opcode != MR_WR_SEND &&
		    wr->opcode != MR_WR_SEND_WITH_IMM)
			return -MR_EINVAL;
		if (*len > qp->ep->cfg.mtu)
			return -MR_EMSGSIZE;
	}
	/* MR-UC-6: UC has no READ and no atomics (IB: no response path). */
	if (c->type == MR_QPT_UC && wr->opcode != MR_WR_SEND &&
	    wr->opcode != MR_WR_SEND_WITH_IMM &&
	    wr->opcode != MR_WR_RDMA_WRITE &&
	    wr->opcode != MR_WR_RDMA_WRITE_WITH_IMM)
		return -MR_EINVAL;
	switch (wr->opcode) {
	case MR_WR_SEND:
	case MR_WR_SEND_WITH_IMM:
	case MR_WR_RDMA_WRITE:
	case MR_WR_RDMA_WRITE_WITH_IMM:
		break;
	case MR_WR_SEND_WITH_INV:
		/* MR-MW-4: RC only (IB has no UC or UD form of it). */
		if (c->type != MR_QPT_RC)
			return -MR_EINVAL;
		break;
	case MR_WR_RDMA_READ:
		if (wr->flags & MR_SEND_INLINE)
			return -MR_EINVAL;
		break;
	case MR_WR_ATOMIC_CMP_AND_SWP:
	case MR_WR_ATOMIC_FETCH_AND_ADD:
		/* MR-REQ-9: 64-bit, 8-byte aligned, result into 8 bytes. */
		if ((wr->flags & MR_SEND_INLINE) || *len != 8 ||
		    (wr->remote_addr & 7))
			return -MR_EINVAL;
		break;
	case MR_WR_ATOMIC_WRITE:
		if (mr_atomicw_check_wr(c->type, wr, *len))
			return -MR_EINVAL;
		break;
	default:
		return -MR_EINVAL;
	}
	if (*len > MR_WIRE_MAX_MSG_LEN)
		return -MR_EMSGSIZE;
	if ((wr->flags & MR_SEND_INLINE) && *len > c->max_inline)
		return -MR_EMSGSIZE;
	return 0;
}

static unsigned need_of(enum mr_wr_opcode op)
{
	return op == MR_WR_RDMA_READ || op == MR_WR_ATOMIC_CMP_AND_SWP ||
			       op == MR_WR_ATOMIC_FETCH_AND_ADD
		       ? MR_ACCESS_LOCAL_WRITE
		       : 0;
}

static int consumes_rwqe(uint8_t op)
{
	return op == MR_WR_SEND || op == MR_WR_SEND_WITH_IMM ||
	       op == MR_WR_SEND_WITH_INV || op == MR_WR_RDMA_WRITE_WITH_IMM;
}

/* READ requests and atomics are one packet without payload whatever
 * their length says. */
static int one_pkt(const struct mr_swqe *w)
{
	return w->opcode == MR_WR_RDMA_READ || mr_atomicw_is_atomic(w->opcode);
}

/* MTU-sized packets: UC's count (mr_uc.c); RC's until it is known. */
static uint32_t npkts_of(const struct mr_qp *qp, const struct mr_swqe *w)
{
	if (one_pkt(w) || !w->len)
		return 1;
	return (uint32_t)(((uint64_t)w->len + qp->mtu - 1) / qp->mtu);
}

/* RC: the packet at off of plen bytes is w's last (MR-CC-16: packets
 * are counted by bytes, not by MTUs, since the first ones may be
 * small). */
static int wqe_ends(const struct mr_swqe *w, uint32_t off, uint32_t plen)
{
	return one_pkt(w) || (uint64_t)off + plen >= w->len;
}

/* RC: every packet of w has been sent once. */
static int wqe_sent_all(const struct mr_swqe *w)
{
	return w->sent_pkts && (one_pkt(w) || w->sent_off >= w->len);
}

/* MR-CC-16: the most payload a new request packet carries. Until the
 * connection's first ACK brings the receiver's first hint, every sender
 * of an incast has one packet out (MR-CC-5) and the receiver's queue
 * holds one from each; smaller ones put less into it. Not in gbn mode:
 * the baseline is RoCEv2's, MTU-sized packets. */
static uint32_t new_pkt_cap(struct mr_qp *qp, uint64_t now)
{
	uint32_t f = qp->ep->cfg.first_pkt_bytes;

	if (!f || f >= qp->mtu || mr_qp_is_gbn(qp) || mr_cc_hinted(&qp->cc))
		return qp->mtu;
	/* With first_pkt_starts K, only while the endpoint started at most K
	 * connections within two to four base RTTs (this one included): a
	 * sender starting many at once spaces their first packets over its
	 * own port (an all-to-all's 63: 21 us at 100 Gb/s), and those
	 * packets were what kept the receivers' ports busy until the
	 * hints came back (64-host all-to-all of 64 KiB, first_pkt 1024 for
	 * all: 364.2 -> 371.8 us; for the first 4 of a sender's: 364.5). */
	if (qp->ep->cfg.first_pkt_starts) {
		if (!qp->cc.start_counted) {
			qp->cc.start_counted = 1;
			qp->cc.start_small =
				mr_cc_starts_note(&qp->ep->starts, now,
						  2 * qp->ep->cfg.base_rtt_ns) <=
				qp->ep->cfg.first_pkt_starts;
		}
		if (!qp->cc.start_small)
			return qp->mtu;
	}
	return f;
}

static enum mr_wc_opcode wc_opcode(uint8_t op)
{
	switch (op) {
	case MR_WR_RDMA_WRITE:
	case MR_WR_RDMA_WRITE_WITH_IMM:
		return MR_WC_RDMA_WRITE;
	case MR_WR_RDMA_READ:
		return MR_WC_RDMA_READ;
	case MR_WR_ATOMIC_CMP_AND_SWP:
		return MR_WC_COMP_SWAP;
	case MR_WR_ATOMIC_FETCH_AND_ADD:
		return MR_WC_FETCH_ADD;
	case MR_WR_ATOMIC_WRITE:
		return MR_WC_ATOMIC_WRITE;
	default:
		return MR_WC_SEND;
	}
}

static void sq_cqe(struct mr_qp *qp, const struct mr_swqe *w,
		   enum mr_wc_status st)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = w->wr_id;
	c.status = st;
	c.opcode = wc_opcode(w->opcode);
	if (st == MR_WC_SUCCESS)
		c.byte_len = w->len;
	mr_qpout_cqe(&qp->out, &c);
}

int mr_req_post(struct mr_qp *qp, const struct mr_send_wr *wr, uint64_t now)
{
	struct mr_swqe *w;
	uint64_t len;
	unsigned i;
	int rc;

	if (!qp || !wr)
		return -MR_EINVAL;
	if (qp->state != MR_QPS_RTS && qp->state != MR_QPS_SQD &&
	    qp->state != MR_QPS_ERR)
		return -MR_ESTATE;
	qp->now = mr_ep_now(qp->ep, now);
	/* Completions not yet delivered hold their room (mr_qpout.h). */
	if (qp->sq.tail - qp->sq.head + mr_sqlocal_count(qp) + qp->out.sends >=
	    qp->cfg.max_send_wr)
		return -MR_EAGAIN;
	if (mr_sqlocal_is_local(wr->opcode))
		return mr_sqlocal_post(qp, wr); /* MR-MW-6 */
	rc = post_check(qp, wr, &len);
	if (rc)
		return rc;
	if (!(wr->flags & MR_SEND_INLINE)) {
		for (i = 0; i < wr->num_sge; i++) {
			const struct mr_sge *s = &wr->sg_list[i];
			uint8_t *host;

			if (mr_qp_lookup(qp, s->lkey, 0, s->addr, s->length,
					 need_of(wr->opcode), &host))
				return -MR_EACCESS;
		}
	}
	w = mr_sq_wqe(qp, qp->sq.tail);
	w->wr_id = wr->wr_id;
	w->opcode = (uint8_t)wr->opcode;
	w->state = MR_SWQE_POSTED;
	w->signaled = (wr->flags & MR_SEND_SIGNALED) || qp->cfg.sq_sig_all;
	w->is_inline = !!(wr->flags & MR_SEND_INLINE);
	w->fence = !!(wr->flags & MR_SEND_FENCE);
	w->solicited = !!(wr->flags & MR_SEND_SOLICITED);
	w->resp_done = 0;
	w->rnr_count = 0;
	w->err = 0;
	w->msn = qp->sq.tail;
	w->len = (uint32_t)len;
	w->imm = wr->imm;
	w->remote_addr = wr->remote_addr;
	/* A SEND_WITH_INV carries no RETH: its rkey field holds the key
	 * it invalidates. */
	w->rkey = wr->opcode == MR_WR_SEND_WITH_INV ? wr->invalidate_rkey
						    : wr->rkey;
	w->compare_add = wr->compare_add;
	w->swap = wr->swap;
	w->num_sge = wr->num_sge;
	w->sent_pkts = 0;
	w->sent_off = 0;
	w->last_off = 0;
	w->resp_bytes = 0;
	w->ud_qpn = wr->ud_remote_qpn & MR_QPN_MASK;
	w->ud_qkey = wr->ud_remote_qkey;
	w->ud_dest = wr->ud_dest;
	if (w->is_inline) {
		uint8_t *p = w->inl;

		/* MR-REQ-2: inline data is copied now; the caller may reuse
		 * its buffers when this returns. */
		for (i = 0; i < wr->num_sge; i++) {
			if (wr->sg_list[i].length)
				memcpy(p,
				       (const void *)(uintptr_t)wr->sg_list[i]
					       .addr,
				       wr->sg_list[i].length);
			p += wr->sg_list[i].length;
		}
		w->num_sge = 0;
	} else if (wr->num_sge) {
		memcpy(w->sge, wr->sg_list, wr->num_sge * sizeof(*w->sge));
	}
	if (w->opcode == MR_WR_ATOMIC_WRITE && mr_atomicw_capture(qp, wr, w))
		return -MR_EACCESS; /* MR-AW-2; nothing posted yet */
	w->npkts = npkts_of(qp, w);
	w->rsn = 0;
	if (qp->cfg.type == MR_QPT_RC && consumes_rwqe(w->opcode))
		w->rsn = qp->req.snd_rsn++;
	qp->sq.tail++;
	if (qp->state == MR_QPS_ERR) {
		/* MR-ERR-4 */
		qp->sq.head = qp->sq.next = qp->sq.tail;
		sq_cqe(qp, w, MR_WC_WR_FLUSH_ERR);
	}
	return 0;
}

/* ---- completion and errors ---------------------------------------------- */

/* A WQE of ours that has put at least one packet on the wire and has not
 * completed: the only ones a NAK can be about. */
int mr_req_started(const struct mr_qp *qp, uint32_t msn)
{
	if (mr_seq_lt(msn, qp->sq.head) || !mr_seq_lt(msn, qp->sq.tail))
		return 0;
	return mr_seq_lt(msn, qp->sq.next) || mr_sq_wqe(qp, msn)->sent_pkts > 0;
}

void mr_req_mark_err(struct mr_qp *qp, uint32_t msn, enum mr_wc_status st)
{
	struct mr_swqe *w;

	if (!mr_req_started(qp, msn))
		return;
	w = mr_sq_wqe(qp, msn);
	if (!w->err)
		w->err = (uint8_t)st;
	if (!qp->req.have_err || mr_seq_lt(msn, qp->req.err_msn)) {
		qp->req.have_err = 1;
		qp->req.err_msn = msn;
	}
}

static int wqe_done(const struct mr_qp *qp, const struct mr_swqe *w)
{
	switch (w->opcode) {
	case MR_WR_RDMA_READ:
	case MR_WR_ATOMIC_CMP_AND_SWP:
	case MR_WR_ATOMIC_FETCH_AND_ADD:
	case MR_WR_ATOMIC_WRITE: /* MR-AW-3: its response says placed */
		return w->resp_done;
	default:
		/* MR-REQ-6: the peer's cum_msn says the message is complete
		 * there, i.e. in remote memory / in a receive buffer. */
		return w->state == MR_SWQE_SENT &&
		       mr_seq_lt(w->msn, qp->req.peer_cum_msn);
	}
}

static int is_rd_atomic(uint8_t op)
{
	return op == MR_WR_RDMA_READ || mr_atomicw_is_atomic(op);
}

int mr_req_sq_draining(const struct mr_qp *qp)
{
	struct mr_qp *q = (struct mr_qp *)qp;

	if (qp->state != MR_QPS_SQD)
		return 0;
	if (qp->sq.head != qp->sq.next)
		return 1;
	return qp->sq.next != qp->sq.tail &&
	       mr_sq_wqe(q, qp->sq.next)->sent_pkts != 0;
}

void mr_req_sqd_check(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;

	if (qp->state != MR_QPS_SQD || mr_qp_failed(qp) ||
	    qp->req.sqd_drained || mr_req_sq_draining(qp))
		return;
	qp->req.sqd_drained = 1;
	if (ep->cb.sq_drained)
		mr_qpout_sq_drained(&qp->out); /* after the CQEs before it */
}

void mr_req_complete(struct mr_qp *qp)
{
	/* MR-MW-6: the local WRs before sq.head complete first. */
	while (!mr_sqlocal_complete(qp) && !mr_qp_failed(qp) &&
	       qp->sq.head != qp->sq.tail) {
		struct mr_swqe *w = mr_sq_wqe(qp, qp->sq.head);

		if (w->err) {
			/* MR-ERR-1: the failed WQE completes with its status
			 * in order, the QP goes to ERR, the rest flush. The
			 * error CQE is the report: no async fatal event. */
			enum mr_wc_status st = (enum mr_wc_status)w->err;

			if (is_rd_atomic(w->opcode))
				qp->req.rd_out--;
			qp->sq.head++;
			sq_cqe(qp, w, st);
			mr_qpout_fail(&qp->out, 0);
			return;
		}
		if (!wqe_done(qp, w))
			break;
		if (is_rd_atomic(w->opcode))
			qp->req.rd_out--;
		qp->sq.head++;
		MR_CNT(qp, msgs_sent, 1);
		if (w->signaled)
			sq_cqe(qp, w, MR_WC_SUCCESS);
	}
	mr_req_sqd_check(qp);
}

void mr_req_flush(struct mr_qp *qp)
{
	while (qp->sq.head != qp->sq.tail) {
		struct mr_swqe *w = mr_sq_wqe(qp, qp->sq.head);

		mr_sqlocal_flush(qp, qp->sq.head, 0);
		qp->sq.head++;
		sq_cqe(qp, w, MR_WC_WR_FLUSH_ERR);
	}
	mr_sqlocal_flush(qp, 0, 1);
	qp->sq.next = qp->sq.tail;
	qp->req.rd_out = 0;
	qp->req.lost_cnt = 0;
	qp->req.rnr_wait = 0;
	qp->req.rnr_probe = 0;
	qp->req.rnr_probe_at = UINT64_MAX;
	qp->req.pace_at = UINT64_MAX;
}

/* ---- transmit ----------------------------------------------------------- */

static uint8_t wire_opcode(const struct mr_swqe *w)
{
	static const uint8_t map[] = {
		[MR_WR_RDMA_WRITE] = MR_OP_WRITE,
		[MR_WR_RDMA_WRITE_WITH_IMM] = MR_OP_WRITE_IMM,
		[MR_WR_SEND] = MR_OP_SEND,
		[MR_WR_SEND_WITH_IMM] = MR_OP_SEND_IMM,
		[MR_WR_RDMA_READ] = MR_OP_READ_REQ,
		[MR_WR_ATOMIC_CMP_AND_SWP] = MR_OP_ATOMIC_CS,
		[MR_WR_ATOMIC_FETCH_AND_ADD] = MR_OP_ATOMIC_FA,
		[MR_WR_SEND_WITH_INV] = MR_OP_SEND_INV,
		[MR_WR_ATOMIC_WRITE] = MR_OP_ATOMIC_WRITE,
	};
	return map[w->opcode];
}

static void base_hdr(const struct mr_qp *qp, struct mr_pkt *pkt, uint8_t op,
		     uint32_t ssn)
{
	memset(pkt, 0, sizeof(*pkt));
	pkt->bth.version = MR_WIRE_VERSION;
	pkt->bth.opcode = op;
	pkt->bth.flags = mr_qp_is_gbn(qp) ? MR_BTH_F_GBN : 0;
	pkt->bth.dqpn = qp->attr.dest_qpn;
	pkt->bth.sqpn = qp->cfg.qpn;
	pkt->bth.ssn = ssn;
}

/* Where a packet's payload goes: copied after the headers in buf, or,
 * for zero-copy transmit of a payload of at least zc->min_len, described
 * as segments of registered memory (more than MR_TX_ZC_MAX_SEGS pieces:
 * copied). One decision for every builder, so both forms carry the same
 * bytes. Returns 0 or a negative MR_E*. */
static int payload_sge(struct mr_qp *qp, const struct mr_sge *sge,
		       uint32_t nsge, uint64_t off, uint8_t *buf, size_t h,
		       uint32_t plen, struct mr_tx_zc *zc)
{
	if (zc && plen >= zc->min_len) {
		int n = mr_sge_segs(MR_QP_MEM(qp), sge, nsge, off, zc->seg,
				    MR_TX_ZC_MAX_SEGS, plen);

		if (n > 0) {
			zc->nseg = (unsigned)n;
			zc->hdr_len = (uint32_t)h;
			return 0;
		}
		if (n != -MR_EAGAIN)
			return n;
	}
	return mr_sge_gather(MR_QP_MEM(qp), sge, nsge, off, buf + h, plen);
}

/* Append the ICRC (MR-ICRC-1) over the headers in buf and the payload,
 * wherever it lies; len excludes the ICRC. Returns the packet length. */
static size_t seal(uint8_t *buf, size_t len, struct mr_tx_zc *zc)
{
	uint32_t crc;
	unsigned i;

	if (!zc || !zc->nseg)
		return mr_wire_seal(buf, len);
	crc = mr_crc32c(0, buf, zc->hdr_len);
	for (i = 0; i < zc->nseg; i++)
		crc = mr_crc32c(crc, zc->seg[i].addr, zc->seg[i].len);
	mr_put32(zc->icrc, crc);
	return len + MR_ICRC_LEN;
}

/* Build the request packet at `offset` of WQE w, of at most max_plen
 * payload bytes, into buf (payload as payload_sge() decides). Returns
 * its length without ICRC, or 0. */
static size_t build_req(struct mr_qp *qp, const struct mr_swqe *w,
			uint32_t offset, uint32_t max_plen, uint32_t ssn,
			int retx, uint8_t *buf, size_t cap, uint32_t *plen_out,
			struct mr_tx_zc *zc)
{
	struct mr_pkt pkt;
	uint32_t plen = 0;
	size_t h;
	int last;

	base_hdr(qp, &pkt, wire_opcode(w), ssn);
	pkt.bth.msn = w->msn;
	pkt.bth.msg_len = w->len;
	pkt.bth.offset = offset;
	switch (w->opcode) {
	case MR_WR_SEND_WITH_INV:
		pkt.inv_rkey = w->rkey; /* MR-EXT-8 */
		/* fallthrough */
	case MR_WR_SEND:
	case MR_WR_SEND_WITH_IMM:
		pkt.bth.rsn = w->rsn;
		/* fallthrough */
	case MR_WR_RDMA_WRITE:
	case MR_WR_RDMA_WRITE_WITH_IMM:
		plen = w->len - offset;
		if (plen > max_plen)
			plen = max_plen;
		break;
	case MR_WR_RDMA_READ:
		pkt.bth.offset = 0;
		break;
	default:
		pkt.bth.offset = 0;
		pkt.bth.msg_len = MR_WIRE_ATOMIC_LEN;
		pkt.atom.vaddr = w->remote_addr;
		pkt.atom.rkey = w->rkey;
		if (w->opcode == MR_WR_ATOMIC_CMP_AND_SWP) {
			pkt.atom.swap_add = w->swap;
			pkt.atom.compare = w->compare_add;
		} else if (w->opcode == MR_WR_ATOMIC_WRITE) {
			pkt.atom.swap_add = mr_atomicw_wire_value(w);
		} else {
			pkt.atom.swap_add = w->compare_add;
		}
		break;
	}
	if (w->opcode == MR_WR_RDMA_WRITE ||
	    w->opcode == MR_WR_RDMA_WRITE_WITH_IMM ||
	    w->opcode == MR_WR_RDMA_READ) {
		pkt.reth.vaddr = w->remote_addr;
		pkt.reth.rkey = w->rkey;
		pkt.reth.dma_len = w->len;
	}
	pkt.imm = w->imm;
	last = wqe_ends(w, offset, plen);
	if (last) {
		pkt.bth.flags |= MR_BTH_F_ACK_REQ;
		if (w->solicited && (w->opcode == MR_WR_SEND ||
				     w->opcode == MR_WR_SEND_WITH_IMM ||
				     w->opcode == MR_WR_SEND_WITH_INV ||
				     w->opcode == MR_WR_RDMA_WRITE_WITH_IMM))
			pkt.bth.flags |= MR_BTH_F_SOLICITED;
	}
	if (retx)
		pkt.bth.flags |= MR_BTH_F_RETX;
	pkt.payload_len = plen;
	h = mr_wire_hdr_len(&pkt);
	if (!h || h + plen + MR_ICRC_LEN > cap)
		return 0;
	if (plen) {
		if (w->is_inline)
			memcpy(buf + h, w->inl + offset, plen);
		else if (payload_sge(qp, w->sge, w->num_sge, offset, buf, h,
				     plen, zc))
			return 0;
	}
	if (mr_wire_encode_hdr(&pkt, buf, cap) != h)
		return 0;
	*plen_out = plen;
	return h + plen;
}

/* A stall probe for a message that already completed (its WQE slot may
 * hold a newer WQE): an empty SEND header with the old msn and ssn, which
 * the peer can only take as a duplicate and answer with an ACK. */
static size_t build_probe(struct mr_qp *qp, uint32_t msn, uint32_t ssn,
			  uint8_t *buf, size_t cap, uint32_t *plen_out)
{
	struct mr_pkt pkt;

	base_hdr(qp, &pkt, MR_OP_SEND, ssn);
	pkt.bth.msn = msn;
	pkt.bth.flags |= MR_BTH_F_RETX | MR_BTH_F_ACK_REQ;
	*plen_out = 0;
	return mr_wire_encode_hdr(&pkt, buf, cap);
}

/* Build a response packet (READ_RESP / ATOMIC_RESP) from record r. READ
 * data is read from memory again on every (re)transmission (MR-RSP-6). */
static size_t build_resp(struct mr_qp *qp, const struct mr_resp_rec *r,
			 uint32_t offset, uint32_t ssn, int retx, uint8_t *buf,
			 size_t cap, uint32_t *plen_out, struct mr_tx_zc *zc)
{
	struct mr_pkt pkt;
	uint32_t plen = 0;
	uint8_t *host;
	size_t h;

	base_hdr(qp, &pkt, r->opcode, ssn);
	pkt.bth.msn = r->msn;
	/* MR-HDR-9, MR-RSP-11: where our stream began, so a requester can
	 * adopt it when we answer from RTR, before any sq_psn was given. */
	pkt.bth.rsn = qp->req.snd_base;
	if (r->opcode == MR_OP_ATOMIC_RESP) {
		pkt.bth.msg_len = MR_WIRE_ATOMIC_LEN;
		pkt.atomic_orig = r->orig;
	} else {
		pkt.bth.msg_len = r->len;
		pkt.bth.offset = offset;
		plen = r->len - offset;
		if (plen > qp->mtu)
			plen = qp->mtu;
	}
	if (offset + plen >= r->len)
		pkt.bth.flags |= MR_BTH_F_ACK_REQ;
	if (retx)
		pkt.bth.flags |= MR_BTH_F_RETX;
	pkt.payload_len = plen;
	h = mr_wire_hdr_len(&pkt);
	if (!h || h + plen + MR_ICRC_LEN > cap)
		return 0;
	if (plen) {
		if (mr_qp_lookup(qp, r->rkey, 1, r->vaddr + offset, plen,
				 MR_ACCESS_REMOTE_READ, &host))
			return 0;
		if (zc && plen >= zc->min_len) {
			/* One key, one contiguous piece: one segment. */
			zc->seg[0].addr = host;
			zc->seg[0].len = plen;
			zc->nseg = 1;
			zc->hdr_len = (uint32_t)h;
		} else {
			memcpy(buf + h, host, plen);
		}
	}
	if (mr_wire_encode_hdr(&pkt, buf, cap) != h)
		return 0;
	*plen_out = plen;
	return h + plen;
}

/* The lowest ssn waiting for retransmission that still matters, or -1.
 * Entries of WQEs that completed or failed are settled on the way. */
static int next_lost(struct mr_qp *qp, uint32_t *out)
{
	uint32_t s = qp->req.retx_from, hold = 0;
	int held = 0;

	if (mr_seq_lt(s, qp->req.snd_una))
		s = qp->req.snd_una;
	for (; qp->req.lost_cnt && mr_seq_lt(s, qp->req.snd_nxt); s++) {
		struct mr_txp *t = mr_txp_of(qp, s);

		if (t->state != MR_TXP_LOST)
			continue;
		if (qp->req.rnr_wait && t->kind == MR_TXP_REQ &&
		    !mr_seq_lt(t->owner, qp->req.rnr_msn)) {
			/* MR-REQ-12: requests wait out the RNR timer;
			 * responses do not. */
			if (!held) {
				held = 1;
				hold = s;
			}
			continue;
		}
		if (t->kind == MR_TXP_REQ && !t->probe &&
		    (mr_seq_lt(t->owner, qp->sq.head) ||
		     (qp->req.have_err &&
		      !mr_seq_lt(t->owner, qp->req.err_msn)) ||
		     mr_sq_wqe(qp, t->owner)->err)) {
			t->state = MR_TXP_ACKED;
			qp->req.lost_cnt--;
			continue;
		}
		if (t->kind == MR_TXP_RESP && !t->probe &&
		    mr_seq_lt(t->owner, qp->rsp.rec_head)) {
			t->state = MR_TXP_ACKED;
			qp->req.lost_cnt--;
			continue;
		}
		qp->req.retx_from = held ? hold : s;
		*out = s;
		return 0;
	}
	qp->req.retx_from = held ? hold : s;
	return -1;
}

/* Can the WQE at sq_next start (or continue) sending? MR-ORD-3 (fence),
 * MR-REQ-8 (max_rd_atomic), MR-REQ-4 (message window). */
static struct mr_swqe *next_new(struct mr_qp *qp)
{
	struct mr_swqe *w;
	uint32_t max_rd;

	if (qp->sq.next == qp->sq.tail || qp->req.rnr_wait)
		return NULL;
	/* SQD (IB 10.3.1): no new message starts; one already started
	 * finishes. */
	if (qp->state != MR_QPS_RTS &&
	    !(qp->state == MR_QPS_SQD && mr_sq_wqe(qp, qp->sq.next)->sent_pkts))
		return NULL;
	if (qp->req.have_err && !mr_seq_lt(qp->sq.next, qp->req.err_msn))
		return NULL;
	if (qp->sq.next - qp->req.peer_cum_msn >= qp->ep->cfg.msg_window)
		return NULL;
	w = mr_sq_wqe(qp, qp->sq.next);
	if (w->sent_pkts)
		return w;
	max_rd = qp->attr.max_rd_atomic ? qp->attr.max_rd_atomic : 1;
	if (is_rd_atomic(w->opcode) && qp->req.rd_out >= max_rd)
		return NULL;
	if (w->fence && qp->req.rd_out)
		return NULL;
	return w;
}

/* MR-CC-14: no new data queued once this packet is sent: w (or r) is
 * the new packet's WQE (response record), NULL for a retransmission;
 * plen its payload. */
static int drained_after(const struct mr_qp *qp, const struct mr_swqe *w,
			 const struct mr_resp_rec *r, uint32_t plen)
{
	uint32_t sq_left = qp->sq.tail - qp->sq.next;
	uint32_t rec_left = qp->rsp.rec_tail - qp->rsp.rec_send;

	if (w)
		return wqe_ends(w, w->sent_off, plen) && sq_left == 1 &&
		       !rec_left;
	if (r)
		return r->sent_pkts + 1 == r->npkts && rec_left == 1 &&
		       !sq_left;
	return !sq_left && !rec_left;
}

/* MR-REQ-14: the WQE an RNR probe is for, if it still needs one: all
 * its packets sent, not complete, not failed. Clears the probe if not. */
static struct mr_swqe *rnr_probe_wqe(struct mr_qp *qp)
{
	struct mr_swqe *w;

	if (!qp->req.rnr_probe || qp->req.rnr_wait)
		return NULL;
	w = mr_sq_wqe(qp, qp->req.rnr_msn);
	if (mr_seq_lt(qp->req.rnr_msn, qp->sq.head) ||
	    !mr_seq_lt(qp->req.rnr_msn, qp->sq.next) || w->err ||
	    wqe_done(qp, w) ||
	    (qp->req.have_err &&
	     !mr_seq_lt(qp->req.rnr_msn, qp->req.err_msn))) {
		qp->req.rnr_probe = 0;
		return NULL;
	}
	return w;
}

int mr_req_has_data(const struct mr_qp *qp, uint64_t now)
{
	struct mr_qp *q = (struct mr_qp *)qp;

	struct mr_pathmgr_probe p;

	return qp->req.lost_cnt || qp->rsp.rec_send != qp->rsp.rec_tail ||
	       next_new(q) || rnr_probe_wqe(q) ||
	       mr_pathmgr_next_probe(&q->pm, qp->ptx, now, &p);
}

/* MR-PRB-1, MR-PM-2: a data-free probe of a path or a plane: BTH + PTH,
 * ACK_REQ, outside the congestion window and the ssn space. */
static size_t probe_tx(struct mr_qp *qp, const struct mr_pathmgr_probe *p,
		       uint64_t now, uint8_t *buf, size_t cap,
		       struct mr_tx_meta *meta)
{
	struct mr_pkt pkt;
	uint32_t ppsn;
	size_t len;

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.version = MR_WIRE_VERSION;
	pkt.bth.opcode = MR_OP_PROBE;
	pkt.bth.flags = MR_BTH_F_ACK_REQ;
	pkt.bth.dqpn = qp->attr.dest_qpn;
	pkt.bth.sqpn = qp->cfg.qpn;
	pkt.pth.path_id = p->path;
	pkt.pth.plane = (p->ctx & MR_PATHMGR_CTX_PLANE)
				? p->plane
				: mr_pathsel_plane(&qp->ps, p->path);
	len = mr_wire_hdr_len(&pkt) + MR_ICRC_LEN;
	if (len > cap)
		return 0;
	/* A plane probe's RTT is another plane's: no sample (retx 1). */
	if (mr_pathtx_send(&qp->ptx[p->path], 0, (uint32_t)len,
			   (p->ctx & MR_PATHMGR_CTX_PLANE) ? 1u : 0u, p->ctx,
			   now, &ppsn))
		return 0;
	pkt.pth.ppsn = ppsn;
	len = mr_wire_encode(&pkt, buf, cap);
	mr_pathmgr_on_probe_sent(&qp->pm, p, now);
	MR_CNT(qp, probes_sent, 1);
	meta->dest = qp->attr.dest;
	meta->path_id = p->path;
	meta->entropy = mr_pathsel_entropy(&qp->ps, p->path);
	meta->plane = pkt.pth.plane;
	return len;
}

size_t mr_req_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		 struct mr_tx_meta *meta, struct mr_tx_zc *zc)
{
	uint32_t ssn = 0, plen = 0, bytes, off = 0;
	struct mr_txp *t = NULL;
	struct mr_swqe *w = NULL;
	struct mr_resp_rec *r = NULL;
	int path, retx = 0, have_lost, probe = 0;
	struct mr_pathmgr_probe pp;
	size_t len;
	uint32_t ppsn;

	if (mr_pathmgr_next_probe(&qp->pm, qp->ptx, now, &pp))
		return probe_tx(qp, &pp, now, buf, cap, meta);
	have_lost = !next_lost(qp, &ssn);
	if (!have_lost) {
		w = rnr_probe_wqe(qp);
		if (w) {
			probe = 1;
			ssn = w->last_ssn;
		}
	}
	if (!have_lost && !probe) {
		if (qp->rsp.rec_send != qp->rsp.rec_tail)
			r = mr_resp_rec_of(qp, qp->rsp.rec_send);
		else
			w = next_new(qp);
		if (!r && !w)
			return 0;
		/* MR-REQ-4: never beyond the peer's dedup window. */
		if (qp->req.snd_nxt - qp->req.snd_una >= qp->ep->cfg.ssn_window)
			return 0;
	}
	bytes = qp->mtu + MR_MAX_HDR_LEN + MR_ICRC_LEN;
	if (!mr_cc_can_send(&qp->cc, bytes, now)) {
		qp->req.pace_at = mr_cc_next_send(&qp->cc) > now
					  ? mr_cc_next_send(&qp->cc)
					  : UINT64_MAX;
		return 0;
	}
	qp->ps.window = mr_cc_window(&qp->cc); /* MR-MP-10 */
	qp->ps.pkt = (uint32_t)bytes;
	qp->ps.planes_backlogged = qp->ep->planes_backlogged; /* MR-MP-12 */
	qp->ps.first_plane = (int32_t)(qp->ep->plane_turn % qp->ps.num_planes);
	path = mr_pathsel_pick(&qp->ps, qp->ptx, now);
	if (path < 0)
		return 0;
	if (qp->ps.picks == 1) /* MR-MP-14: the next connection, next plane */
		qp->ep->plane_turn++;
	qp->req.pace_at = UINT64_MAX;

	if (probe) {
		/* MR-REQ-14: its last packet again (same ssn: a duplicate
		 * the peer answers with an ACK, or its RNR NAK). */
		retx = 1;
		len = build_req(qp, w, w->last_off, qp->mtu, ssn, 1, buf, cap,
				&plen, zc);
	} else if (have_lost) {
		t = mr_txp_of(qp, ssn);
		retx = t->retx + 1;
		if (t->kind == MR_TXP_REQ && mr_seq_lt(t->owner, qp->sq.head))
			len = build_probe(qp, t->owner, ssn, buf, cap, &plen);
		else if (t->kind == MR_TXP_REQ)
			len = build_req(qp, mr_sq_wqe(qp, t->owner), t->offset,
					t->plen, ssn, 1, buf, cap, &plen, zc);
		else
			len = build_resp(qp, mr_resp_rec_of(qp, t->owner),
					 t->offset, ssn, 1, buf, cap, &plen,
					 zc);
	} else {
		ssn = qp->req.snd_nxt;
		t = mr_txp_of(qp, ssn);
		if (qp->req.snd_nxt == qp->req.snd_una) {
			/* Nothing was outstanding: the patience of MR-ERR-2
			 * counts from now, not from the last ACK before an
			 * idle period (KI-2). */
			qp->req.stall_ref = now;
			qp->req.progress_at = now;
			qp->req.retries = 0;
		}
		if (r) {
			off = r->sent_pkts * qp->mtu;
			len = build_resp(qp, r, off, ssn, 0, buf, cap, &plen,
					 zc);
		} else {
			off = w->sent_off;
			len = build_req(qp, w, off, new_pkt_cap(qp, now), ssn, 0,
					buf, cap, &plen, zc);
		}
		if (len) {
			t->kind = r ? MR_TXP_RESP : MR_TXP_REQ;
			t->owner = r ? qp->rsp.rec_send : w->msn;
			t->offset = off;
			t->plen = plen;
			t->retx = 0;
			t->probe = 0;
		}
	}
	if (!len) {
		/* Memory behind a key vanished under us (deregistered while
		 * in use): the QP cannot keep its promises (MR-ERR-6). */
		mr_qpout_fail(&qp->out, 1);
		return 0;
	}
	if (mr_pathtx_send(&qp->ptx[path], ssn, (uint32_t)len + MR_ICRC_LEN,
			   (unsigned)retx, 0, now, &ppsn)) {
		if (zc)
			zc->nseg = 0;
		return 0;
	}
	/* MR-CC-14: nothing new queued after this packet (this one ends
	 * its message and no other message or response waits): IDLE, so
	 * the receiver gives the share to its other senders at once. */
	if (!probe &&
	    drained_after(qp, have_lost ? NULL : w, have_lost ? NULL : r, plen))
		mr_wire_set_flags(buf, MR_BTH_F_IDLE);
	mr_put16(buf + MR_BTH_LEN, (uint16_t)path);
	/* MR-HDR-14: the plane it leaves on, for the ACK's return. */
	mr_put8(buf + MR_BTH_LEN + 3,
		mr_pathsel_plane(&qp->ps, (uint16_t)path));
	mr_put32(buf + MR_BTH_LEN + 4, ppsn);
	len = seal(buf, len, zc);
	mr_cc_on_sent(&qp->cc, len, now);

	if (probe) {
		uint64_t rto = mr_pathtx_rto(&qp->ptx[path]);

		qp->req.rnr_probe = 0;
		qp->req.rnr_probe_sent = now;
		qp->req.rnr_probe_at =
			now + 2 * (rto > qp->ep->cfg.min_rto_ns
					   ? rto
					   : qp->ep->cfg.min_rto_ns);
		MR_CNT(qp, retx_pkts, 1);
	} else if (have_lost) {
		if (t->state == MR_TXP_LOST)
			qp->req.lost_cnt--;
		t->state = MR_TXP_OUT;
		t->probe = 0;
		t->retx = (uint8_t)(retx > 255 ? 255 : retx);
		MR_CNT(qp, retx_pkts, 1);
	} else {
		t->state = MR_TXP_OUT;
		qp->req.snd_nxt++;
		MR_CNT(qp, tx_data_pkts, 1);
		MR_CNT(qp, tx_payload_bytes, plen);
		if (r) {
			r->last_ssn = ssn;
			if (++r->sent_pkts == r->npkts)
				qp->rsp.rec_send++;
		} else {
			if (!w->sent_pkts && is_rd_atomic(w->opcode))
				qp->req.rd_out++;
			w->sent_pkts++;
			w->sent_off += plen;
			if (wqe_sent_all(w)) {
				w->npkts = w->sent_pkts;
				w->last_ssn = ssn;
				w->last_off = off;
				w->state = MR_SWQE_SENT;
				qp->sq.next++;
				mr_sqlocal_run(qp); /* MR-MW-6 */
			}
		}
	}
	meta->dest = qp->attr.dest;
	meta->path_id = (uint16_t)path;
	meta->entropy = mr_pathsel_entropy(&qp->ps, (uint16_t)path);
	meta->plane = mr_pathsel_plane(&qp->ps, (uint16_t)path);
	return len;
}
