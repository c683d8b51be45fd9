// SPDX-License-Identifier: BSD-2-Clause
/*
 * The responder and the receive side of every RC QP
 * (docs/spec/transport.md MR-RSP-*, MR-ORD-*, MR-RSP-8, MR-RSP-9): sequence
 * checks (ssn dedup, per-path records), placement on arrival in any order,
 * the hold slot that keeps a WRITE's last byte visible last, completion
 * in message order, READ/atomic execution in order into response records,
 * and the ACK/NAK it sends back.
 */
#include <string.h>

#include "mr_atomicw.h"
#include "mr_engine.h"

int mr_resp_alloc(struct mr_qp *qp)
{
	struct mr_ep *ep = qp->ep;
	struct mr_resp *r = &qp->rsp;
	const struct mr_mem *m = &ep->mem;
	uint32_t i;

	r->rec_max = ep->cfg.max_rd_atomic;
	r->rec_mask = mr_ring_slots(r->rec_max) - 1;
	r->rec = m->calloc(m->user, r->rec_mask + 1, sizeof(*r->rec));
	r->prx = m->calloc(m->user, qp->npaths, sizeof(*r->prx));
	r->rmsg = m->calloc(m->user, ep->cfg.msg_window, sizeof(*r->rmsg));
	r->hold =
		m->calloc(m->user, ep->cfg.hold_slots ? ep->cfg.hold_slots : 1,
			  sizeof(*r->hold));
	r->hold_mem = m->calloc(
		m->user,
		ep->cfg.hold_slots ? (size_t)ep->cfg.hold_slots * ep->cfg.mtu
				   : 1,
		1);
	if (!r->rec || !r->prx || !r->rmsg || !r->hold || !r->hold_mem)
		return -MR_ENOMEM;
	for (i = 0; i < ep->cfg.hold_slots; i++)
		r->hold[i].data = r->hold_mem + (size_t)i * ep->cfg.mtu;
	return mr_ssnwin_init(&r->win, m, 0, ep->cfg.ssn_window);
}

static void xfree(const struct mr_mem *m, void *p)
{
	if (p)
		m->free(m->user, p);
}

void mr_resp_free(struct mr_qp *qp)
{
	const struct mr_mem *m = &qp->ep->mem;
	struct mr_resp *r = &qp->rsp;

	xfree(m, r->rec);
	mr_ssnwin_fini(&r->win);
	xfree(m, r->prx);
	xfree(m, r->rmsg);
	xfree(m, r->hold);
	xfree(m, r->hold_mem);
}

int mr_resp_idle(const struct mr_qp *qp)
{
	return qp->rsp.rec_tail == qp->rsp.rec_head && !qp->rsp.rx_started;
}

void mr_resp_set_base(struct mr_qp *qp, uint32_t base)
{
	qp->rsp.rec_head = qp->rsp.rec_send = qp->rsp.rec_tail = base;
	qp->rsp.rcv_msn = base;
}

void mr_resp_peer_gone(struct mr_qp *qp)
{
	struct mr_resp *r = &qp->rsp;

	if (r->rx_err)
		return;
	r->rx_err = 1;
	r->rx_err_code = MR_NAK_REM_OP;
	r->rx_err_msn = r->rec_head != r->rec_tail
				? mr_resp_rec_of(qp, r->rec_head)->msn
				: r->rcv_msn;
}

void mr_resp_reset(struct mr_qp *qp)
{
	uint32_t i;

	mr_ssnwin_reset(&qp->rsp.win, qp->attr.rq_psn);
	for (i = 0; i < qp->npaths; i++)
		mr_pathrx_init(&qp->rsp.prx[i], (uint16_t)i, qp->attr.rq_psn);
	memset(qp->rsp.rmsg, 0, qp->ep->cfg.msg_window * sizeof(*qp->rsp.rmsg));
	for (i = 0; i < qp->ep->cfg.hold_slots; i++)
		qp->rsp.hold[i].used = 0;
	/* Responses are executed from RTR on and survive the move to RTS. */
	qp->rsp.rec_head = qp->rsp.rec_send = qp->rsp.rec_tail = 0;
	qp->rsp.rcv_msn = 0;
	mr_rq_rx_reset(&qp->rq);
	qp->rsp.ack_now = 0;
	qp->rsp.ack_req = 0;
	qp->rsp.ack_sent = 0;
	qp->rsp.ack_req_nxt = 0; /* the first ACK_REQ goes at once anyway */
	qp->rsp.ack_pkts = 0;
	qp->rsp.ack_due = UINT64_MAX;
	qp->rsp.rnr_nak = 0;
	qp->rsp.seq_nak = 0;
	qp->rsp.seq_nak_sent = 0;
	qp->rsp.rx_err = 0;
	qp->rsp.rx_started = 0;
	qp->rsp.last_rx_path = 0;
	qp->rsp.ack_path_next = 0;
	mr_ratehint_conn_gone(&qp->ep->rh, &qp->rsp.rh);
}

/* MR-RSP-11: the peer answered from RTR with a stream that starts at its
 * own base, not at the rq_psn we were given. Adopted only while nothing of
 * the peer was recorded, so an established window is never moved. */
void mr_resp_rebase(struct mr_qp *qp, uint32_t base)
{
	uint32_t i;

	if (qp->rsp.rx_started || base == mr_ssnwin_cum(&qp->rsp.win))
		return;
	mr_ssnwin_reset(&qp->rsp.win, base);
	for (i = 0; i < qp->npaths; i++)
		mr_pathrx_init(&qp->rsp.prx[i], (uint16_t)i, base);
}

static void path_record(struct mr_qp *qp, const struct mr_pkt *pkt,
			const struct mr_rx_meta *meta, uint64_t now)
{
	qp->rsp.rx_started = 1;
	mr_pathrx_record(&qp->rsp.prx[pkt->pth.path_id], pkt->pth.ppsn,
			 meta ? meta->ecn_ce : 0, now);
	qp->rsp.prx[pkt->pth.path_id].plane = pkt->pth.plane;
	qp->rsp.last_rx_path = pkt->pth.path_id;
}

int mr_rx_check(struct mr_qp *qp, const struct mr_pkt *pkt,
		const struct mr_rx_meta *meta, uint64_t now)
{
	uint32_t ssn = pkt->bth.ssn, cum = mr_ssnwin_cum(&qp->rsp.win);

	if (!mr_seq_lt(ssn, cum)) {
		if (ssn - cum >= qp->rsp.win.nbits) {
			/* MR-RSP-2: beyond the window the sender may use. */
			MR_CNT(qp, drop_window, 1);
			return -MR_EAGAIN;
		}
		if (!mr_ssnwin_test(&qp->rsp.win, ssn)) {
			if (!mr_qp_is_gbn(qp) || ssn == cum)
				return MR_RX_NEW;
			/* MR-GBN-2: out of sequence: dropped, one NAK per
			 * gap, nothing recorded. */
			MR_CNT(qp, drop_window, 1);
			if (!qp->rsp.seq_nak_sent) {
				qp->rsp.seq_nak_sent = 1;
				qp->rsp.seq_nak = 1;
				qp->rsp.ack_now = 1;
			}
			return -MR_EAGAIN;
		}
	}
	/* MR-RSP-2: a duplicate is dropped but re-ACKed at once (its ACK may
	 * have been lost), and its path records the new ppsn. */
	MR_CNT(qp, duplicates, 1);
	path_record(qp, pkt, meta, now);
	qp->rsp.ack_now = 1;
	return MR_RX_DUP;
}

/* MR-RSP-12: an ACK_REQ is answered at once, or, with ack_req_delay_ns,
 * by ack_due no later than now + that delay: the packets of the next
 * messages that arrive meanwhile (a stream of small messages, one
 * ACK_REQ each) share the ACK, up to ack_every packets. Only a one-way
 * stream waits: if this QP sent new packets of its own (requests or
 * responses: its snd_nxt moved) since the previous ACK_REQ came, the
 * peer is in an exchange and nothing will arrive to share the ACK with,
 * so waiting would only hold the peer's completion (and in a ping-pong
 * wake this side's sleeping thread at the deadline, FINDINGS 15.2, 17). */
static void ack_req(struct mr_qp *qp, uint64_t now)
{
	uint64_t due = now + qp->ep->cfg.ack_req_delay_ns;
	uint32_t nxt = qp->req.snd_nxt; /* read, never called: floors */
	int answered = nxt != qp->rsp.ack_req_nxt;

	qp->rsp.ack_req_nxt = nxt;
	/* The first ACK at once: it brings the sender its first rate hint,
	 * and until then it sends one packet at a time (MR-CC-5). */
	if (!qp->ep->cfg.ack_req_delay_ns || !qp->rsp.ack_sent || answered) {
		qp->rsp.ack_now = 1;
		return;
	}
	qp->rsp.ack_req = 1;
	MR_CNT(qp, ack_req_waits, 1);
	if (due < qp->rsp.ack_due)
		qp->rsp.ack_due = due;
}

void mr_rx_accept(struct mr_qp *qp, const struct mr_pkt *pkt,
		  const struct mr_rx_meta *meta, uint64_t now)
{
	uint32_t before = mr_ssnwin_cum(&qp->rsp.win);

	/* MR-RSP-9: the RNR NAK is repeated in every ACK until a packet
	 * of that message is taken (a lost NAK must not strand it). */
	if (qp->rsp.rnr_nak && !mr_seq_lt(pkt->bth.msn, qp->rsp.rnr_nak_msn) &&
	    pkt->bth.opcode != MR_OP_READ_RESP &&
	    pkt->bth.opcode != MR_OP_ATOMIC_RESP && !qp->rq.wimm_blocked)
		qp->rsp.rnr_nak = 0;
	mr_ssnwin_record(&qp->rsp.win, pkt->bth.ssn);
	if (mr_ssnwin_cum(&qp->rsp.win) != before)
		qp->rsp.seq_nak_sent = 0;
	path_record(qp, pkt, meta, now);
	mr_ratehint_on_pkt(&qp->ep->rh, &qp->rsp.rh,
			   pkt->payload_len + MR_MAX_HDR_LEN + MR_ICRC_LEN,
			   pkt->pth.plane, pkt->bth.ssn,
			   pkt->bth.flags & MR_BTH_F_IDLE, now);
	/* MR-RSP-8, MR-RSP-12: ACK every ack_every packets, on ACK_REQ (within
	 * ack_req_delay_ns, so that one ACK covers the messages behind it),
	 * or ack_delay_ns after the first unacknowledged packet. */
	qp->rsp.ack_pkts++;
	if (qp->rsp.ack_pkts >= qp->ep->cfg.ack_every) {
		qp->rsp.ack_now = 1;
	} else if (pkt->bth.flags & MR_BTH_F_ACK_REQ) {
		ack_req(qp, now);
	} else if (qp->rsp.ack_due == UINT64_MAX) {
		qp->rsp.ack_due = now + qp->ep->cfg.ack_delay_ns;
	}
	/* MR-CC-17: a connection's first ACK in the slot its newcomer
	 * takes, one full packet's time at the port after the previous
	 * newcomer's (at once where none is near). */
	if (!qp->rsp.ack_sent && !mr_qp_is_gbn(qp)) {
		uint64_t due = qp->rsp.ack_now ? now : qp->rsp.ack_due;
		uint64_t t = due == UINT64_MAX ? due
			     : mr_ratehint_first_ack(&qp->ep->rh, &qp->rsp.rh,
						     due);

		if (t > due) {
			qp->rsp.ack_now = 0;
			qp->rsp.ack_due = t;
		}
	}
}

void mr_rx_path_only(struct mr_qp *qp, const struct mr_pkt *pkt,
		     const struct mr_rx_meta *meta, uint64_t now)
{
	path_record(qp, pkt, meta, now);
	qp->rsp.ack_now = 1;
}

static void set_rx_err(struct mr_qp *qp, struct mr_rmsg *e, uint8_t code)
{
	e->err = code;
	if (!qp->rsp.rx_err || mr_seq_lt(e->msn, qp->rsp.rx_err_msn)) {
		qp->rsp.rx_err = 1;
		qp->rsp.rx_err_code = code;
		qp->rsp.rx_err_msn = e->msn;
	}
	qp->rsp.ack_now = 1;
}

static void rnr(struct mr_qp *qp, uint32_t msn)
{
	if (!qp->rsp.rnr_nak || mr_seq_lt(msn, qp->rsp.rnr_nak_msn))
		qp->rsp.rnr_nak_msn = msn;
	qp->rsp.rnr_nak = 1;
	qp->rsp.ack_now = 1;
	MR_CNT(qp, drop_rnr, 1);
}

static int is_write(uint8_t op)
{
	return op == MR_OP_WRITE || op == MR_OP_WRITE_IMM;
}

static int is_send(uint8_t op)
{
	return op == MR_OP_SEND || op == MR_OP_SEND_IMM || op == MR_OP_SEND_INV;
}

static int free_hold(const struct mr_qp *qp)
{
	uint32_t i;

	for (i = 0; i < qp->ep->cfg.hold_slots; i++)
		if (!qp->rsp.hold[i].used)
			return (int)i;
	return -1;
}

/* The access checks of MR-RSP-4 and MR-RSP-5. Returns 0 or the NAK code;
 * *host gets the message's base in memory for WRITE. */
static uint8_t check_access(struct mr_qp *qp, const struct mr_pkt *pkt,
			    uint8_t **host)
{
	const struct mr_bth *b = &pkt->bth;
	unsigned acc = qp->attr.access;

	*host = NULL;
	switch (b->opcode) {
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
		if (!(acc & MR_ACCESS_REMOTE_WRITE) ||
		    mr_qp_lookup(qp, pkt->reth.rkey, 1, pkt->reth.vaddr,
				 b->msg_len, MR_ACCESS_REMOTE_WRITE, host))
			return MR_NAK_REM_ACCESS;
		return 0;
	case MR_OP_READ_REQ:
		if (!(acc & MR_ACCESS_REMOTE_READ) ||
		    mr_qp_lookup(qp, pkt->reth.rkey, 1, pkt->reth.vaddr,
				 b->msg_len, MR_ACCESS_REMOTE_READ, host))
			return MR_NAK_REM_ACCESS;
		return 0;
	case MR_OP_ATOMIC_CS:
	case MR_OP_ATOMIC_FA:
		if (pkt->atom.vaddr & 7)
			return MR_NAK_INV_REQ;
		if (!(acc & MR_ACCESS_REMOTE_ATOMIC) ||
		    mr_qp_lookup(qp, pkt->atom.rkey, 1, pkt->atom.vaddr, 8,
				 MR_ACCESS_REMOTE_ATOMIC, host))
			return MR_NAK_REM_ACCESS;
		return 0;
	case MR_OP_ATOMIC_WRITE:
		return mr_atomicw_check(qp, pkt, host);
	default:
		return 0;
	}
}

static int msg_complete(const struct mr_rmsg *e)
{
	if (e->opcode == MR_OP_READ_REQ || mr_atomicw_is_atomic_op(e->opcode))
		return e->got;
	return e->got && e->bytes == e->msg_len;
}

static void fill_entry(struct mr_rmsg *e, const struct mr_pkt *pkt)
{
	const struct mr_bth *b = &pkt->bth;

	memset(e, 0, sizeof(*e));
	e->used = 1;
	e->opcode = b->opcode;
	e->msn = b->msn;
	e->msg_len = b->msg_len;
	e->rsn = b->rsn;
	e->imm = pkt->imm;
	if (mr_atomicw_is_atomic_op(b->opcode)) {
		e->vaddr = pkt->atom.vaddr;
		e->rkey = pkt->atom.rkey;
		e->swap_add = pkt->atom.swap_add;
		e->compare = pkt->atom.compare;
	} else if (b->opcode == MR_OP_SEND_INV) {
		e->rkey = pkt->inv_rkey;
	} else {
		e->vaddr = pkt->reth.vaddr;
		e->rkey = pkt->reth.rkey;
	}
}

/* Same message, same story: every packet of a message must agree with
 * the first one that arrived (MR-RSP-1). */
static int consistent(const struct mr_rmsg *e, const struct mr_pkt *pkt)
{
	const struct mr_bth *b = &pkt->bth;

	if (e->opcode != b->opcode || e->msg_len != b->msg_len)
		return 0;
	if (is_send(b->opcode) && e->rsn != b->rsn)
		return 0;
	if (is_write(b->opcode) &&
	    (e->vaddr != pkt->reth.vaddr || e->rkey != pkt->reth.rkey))
		return 0;
	if ((b->opcode == MR_OP_SEND_IMM || b->opcode == MR_OP_WRITE_IMM) &&
	    e->imm != pkt->imm)
		return 0;
	if (b->opcode == MR_OP_SEND_INV && e->rkey != pkt->inv_rkey)
		return 0;
	return 1;
}

int mr_resp_on_req(struct mr_qp *qp, const struct mr_pkt *pkt,
		   const struct mr_rx_meta *meta, uint64_t now)
{
	const struct mr_bth *b = &pkt->bth;
	uint32_t mw = qp->ep->cfg.msg_window, plen = pkt->payload_len;
	struct mr_rmsg *e;
	struct mr_rwqe *rw = NULL;
	uint8_t *host = NULL, nak;
	int rc, hold = -1, final;

	if (qp->state == MR_QPS_ERR) {
		/* MR-ERR-5: a failed responder keeps answering with its
		 * NAK, so a lost NAK does not leave the requester guessing. */
		if (qp->rsp.rx_err)
			qp->rsp.ack_now = 1;
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	if (mr_seq_lt(b->msn, qp->rsp.rcv_msn)) {
		/* A message already complete: only a duplicate can be. */
		rc = mr_rx_check(qp, pkt, meta, now);
		if (rc == MR_RX_NEW) {
			MR_CNT(qp, drop_invalid, 1);
			return -MR_EPROTO;
		}
		return rc < 0 ? rc : 0;
	}
	if (b->msn - qp->rsp.rcv_msn >= mw) {
		MR_CNT(qp, drop_window, 1);
		return -MR_EAGAIN;
	}
	e = &qp->rsp.rmsg[b->msn & (mw - 1)];
	if (e->used && !consistent(e, pkt)) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	if (is_send(b->opcode) && !mr_rq_rsn_valid(&qp->rq, b->rsn, mw)) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	rc = mr_rx_check(qp, pkt, meta, now);
	if (rc) {
		if (rc == MR_RX_DUP && e->used && e->rnr)
			mr_resp_advance(qp, now); /* retry the WRITE_IMM WQE */
		return rc < 0 ? rc : 0;
	}
	/* New ssn, yet more bytes than the message has: a lying peer. */
	if (e->used && (uint64_t)e->bytes + plen > e->msg_len) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	if (e->used && e->err) {
		mr_rx_path_only(qp, pkt, meta, now);
		MR_CNT(qp, drop_access, 1);
		return -MR_EACCESS;
	}
	/* MR-ORD-5: the packet carrying a WRITE's final byte waits in a hold
	 * slot until every other byte is placed. No slot: dropped unrecorded
	 * (the sender's path sees a loss and sends it again). */
	final = is_write(b->opcode) && plen && b->offset + plen == b->msg_len &&
		(e->used ? e->bytes : 0) + plen < b->msg_len;
	if (final) {
		hold = free_hold(qp);
		if (hold < 0) {
			MR_CNT(qp, drop_no_slot, 1);
			return -MR_EAGAIN;
		}
	}
	if (is_send(b->opcode)) {
		rw = mr_rq_for_rsn(&qp->rq, b->rsn);
		if (!rw) {
			/* MR-RSP-3: no receive WQE yet: RNR NAK. */
			rnr(qp, b->msn);
			mr_rx_path_only(qp, pkt, meta, now);
			return -MR_EAGAIN;
		}
	}
	nak = check_access(qp, pkt, &host);
	if (!nak && rw && b->msg_len > rw->total)
		nak = MR_NAK_INV_REQ; /* MR-RSP-5: receive overflow */
	if (nak) {
		if (!e->used)
			fill_entry(e, pkt);
		e->rwqe = rw;
		set_rx_err(qp, e, nak);
		mr_rx_path_only(qp, pkt, meta, now);
		MR_CNT(qp, drop_access, 1);
		mr_resp_advance(qp, now);
		return -MR_EACCESS;
	}

	if (!e->used)
		fill_entry(e, pkt);
	if (rw)
		e->rwqe = rw;
	if (b->flags & MR_BTH_F_SOLICITED)
		e->solicited = 1;
	mr_rx_accept(qp, pkt, meta, now);
	MR_CNT(qp, rx_payload_bytes, plen);
	if (is_send(b->opcode) && plen &&
	    mr_sge_place(MR_QP_MEM(qp), e->rwqe->sge, e->rwqe->num_sge,
			 b->offset, pkt->payload, plen))
		set_rx_err(qp, e, MR_NAK_REM_OP);
	if (is_write(b->opcode) && plen) {
		uint8_t *dst = host + b->offset;

		if (hold >= 0) {
			struct mr_hold *h = &qp->rsp.hold[hold];

			h->used = 1;
			h->msn = b->msn;
			h->len = plen;
			h->dst = dst;
			memcpy(h->data, pkt->payload, plen);
			e->held = 1;
			e->hold_idx = (uint8_t)hold;
			MR_CNT(qp, held_last, 1);
		} else {
			qp->ep->cb.place(qp->ep->cb.user, dst, pkt->payload,
					 plen);
		}
	}
	e->bytes += plen;
	e->got = 1;
	if (e->held && e->bytes == e->msg_len) {
		struct mr_hold *h = &qp->rsp.hold[e->hold_idx];

		qp->ep->cb.place(qp->ep->cb.user, h->dst, h->data, h->len);
		h->used = 0;
		e->held = 0;
	}
	if (msg_complete(e))
		mr_resp_advance(qp, now);
	return 0;
}

static void recv_cqe(struct mr_qp *qp, const struct mr_rmsg *e,
		     const struct mr_rwqe *rw, enum mr_wc_status st)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = rw->wr_id;
	c.status = st;
	c.is_recv = 1;
	c.src_qp = qp->attr.dest_qpn;
	c.opcode = e->opcode == MR_OP_WRITE_IMM ? MR_WC_RECV_RDMA_WITH_IMM
						: MR_WC_RECV;
	if (st == MR_WC_SUCCESS) {
		c.byte_len = e->msg_len;
		c.solicited = e->solicited;
		if (e->opcode == MR_OP_SEND_IMM ||
		    e->opcode == MR_OP_WRITE_IMM) {
			c.imm = e->imm;
			c.wc_flags = MR_WC_F_WITH_IMM;
		}
		if (e->opcode == MR_OP_SEND_INV) {
			c.imm = e->rkey;
			c.wc_flags = MR_WC_F_WITH_INV;
		}
	}
	mr_qpout_cqe(&qp->out, &c);
}

/* Execute a READ or atomic into a response record (MR-RSP-6). Returns 0,
 * or -MR_EAGAIN when every record is in use (wait for ACKs). */
static int execute(struct mr_qp *qp, struct mr_rmsg *e)
{
	uint32_t lim =
		qp->attr.max_dest_rd_atomic ? qp->attr.max_dest_rd_atomic : 1;
	struct mr_resp_rec *r;

	if (lim > qp->rsp.rec_max)
		lim = qp->rsp.rec_max;
	if (qp->rsp.rec_tail - qp->rsp.rec_head >= lim)
		return -MR_EAGAIN;
	r = mr_resp_rec_of(qp, qp->rsp.rec_tail);
	memset(r, 0, sizeof(*r));
	r->msn = e->msn;
	r->vaddr = e->vaddr;
	r->rkey = e->rkey;
	if (e->opcode == MR_OP_READ_REQ) {
		r->opcode = MR_OP_READ_RESP;
		r->len = e->msg_len;
		r->npkts =
			r->len ? (uint32_t)(((uint64_t)r->len + qp->mtu - 1) /
					    qp->mtu)
			       : 1;
		MR_CNT(qp, reads_executed, 1);
	} else if (e->opcode == MR_OP_ATOMIC_WRITE) {
		if (mr_atomicw_execute(qp, e, r)) {
			set_rx_err(qp, e, MR_NAK_REM_ACCESS);
			return -MR_EACCESS;
		}
	} else {
		uint8_t *host;
		uint64_t *p;

		if (mr_qp_lookup(qp, e->rkey, 1, e->vaddr, 8,
				 MR_ACCESS_REMOTE_ATOMIC, &host)) {
			set_rx_err(qp, e, MR_NAK_REM_ACCESS);
			return -MR_EACCESS;
		}
		p = (uint64_t *)(void *)host;
		if (e->opcode == MR_OP_ATOMIC_CS) {
			uint64_t expect = e->compare;

			__atomic_compare_exchange_n(p, &expect, e->swap_add, 0,
						    __ATOMIC_SEQ_CST,
						    __ATOMIC_SEQ_CST);
			r->orig = expect;
		} else {
			r->orig = __atomic_fetch_add(p, e->swap_add,
						     __ATOMIC_SEQ_CST);
		}
		r->opcode = MR_OP_ATOMIC_RESP;
		r->len = MR_WIRE_ATOMIC_LEN;
		r->npkts = 1;
		MR_CNT(qp, atomics_executed, 1);
	}
	qp->rsp.rec_tail++;
	return 0;
}

/* A SEND_INV that failed as an invalid request though its receive WQE
 * holds it (the other INV_REQ of a SEND, MR-RSP-5's overflow, is found
 * when its packet arrives): its rkey could not be invalidated. */
static int inv_failed(const struct mr_rmsg *e)
{
	return e->opcode == MR_OP_SEND_INV && e->err == MR_NAK_INV_REQ &&
	       e->msg_len <= e->rwqe->total;
}

/* MR-MW-4, MR-MW-6: a SEND_INV invalidates its rkey when it completes, in
 * message order, before its receive completion; a key that cannot be
 * invalidated fails the message as an invalid request. */
static int invalidate(struct mr_qp *qp, struct mr_rmsg *e)
{
	const struct mr_memreg *m = &qp->ep->memreg;

	if (m->invalidate && !m->invalidate(m->user, qp->cfg.pd, qp->cfg.qpn,
					     e->rkey, 1))
		return 0;
	set_rx_err(qp, e, MR_NAK_INV_REQ);
	MR_CNT(qp, drop_access, 1);
	return -MR_EINVAL;
}

/* MR-ORD-1, MR-ORD-2: messages complete in msn order; a READ or atomic
 * executes only when every earlier message is complete. */
void mr_resp_advance(struct mr_qp *qp, uint64_t now)
{
	uint32_t mw = qp->ep->cfg.msg_window;

	while (!mr_qp_failed(qp)) {
		struct mr_rmsg *e = &qp->rsp.rmsg[qp->rsp.rcv_msn & (mw - 1)];
		struct mr_rwqe *rw;

		if (!e->used || e->msn != qp->rsp.rcv_msn)
			return;
		if (e->err) {
			/* MR-ERR-3: a SEND that cannot be received fails
			 * its receive WQE in order, then the QP. */
			if (e->rwqe && is_send(e->opcode)) {
				recv_cqe(qp, e, e->rwqe,
					 inv_failed(e) ? MR_WC_REM_INV_REQ_ERR
					 : e->err == MR_NAK_INV_REQ
						 ? MR_WC_LOC_LEN_ERR
						 : MR_WC_LOC_PROT_ERR);
				mr_rq_consume(&qp->rq, e->rsn);
				e->rwqe = NULL;
				mr_qpout_fail(&qp->out, 0);
			}
			return;
		}
		if (!msg_complete(e))
			return;
		switch (e->opcode) {
		case MR_OP_SEND_INV:
			if (invalidate(qp, e))
				continue; /* failed: the error branch above */
			/* fallthrough */
		case MR_OP_SEND:
		case MR_OP_SEND_IMM:
			recv_cqe(qp, e, e->rwqe, MR_WC_SUCCESS);
			mr_rq_consume(&qp->rq, e->rsn);
			break;
		case MR_OP_WRITE_IMM:
			rw = mr_rq_for_rsn(&qp->rq, mr_rq_next_rsn(&qp->rq));
			if (!rw) {
				/* MR-RSP-3: its data is placed; it completes
				 * when a WQE is posted. The requester hears
				 * RNR (and may give up after rnr_retry). */
				e->rnr = 1;
				mr_rq_set_blocked(&qp->rq, 1);
				rnr(qp, e->msn);
				return;
			}
			mr_rq_set_blocked(&qp->rq, 0);
			qp->rsp.rnr_nak = 0;
			recv_cqe(qp, e, rw, MR_WC_SUCCESS);
			mr_rq_consume(&qp->rq, mr_rq_next_rsn(&qp->rq));
			break;
		case MR_OP_READ_REQ:
		case MR_OP_ATOMIC_CS:
		case MR_OP_ATOMIC_FA:
		case MR_OP_ATOMIC_WRITE:
			if (execute(qp, e))
				return;
			break;
		default:
			break;
		}
		e->used = 0;
		qp->rsp.rcv_msn++;
		MR_CNT(qp, msgs_rcvd, 1);
		if (!qp->rsp.ack_now && qp->rsp.ack_due == UINT64_MAX)
			qp->rsp.ack_due = now + qp->ep->cfg.ack_delay_ns;
	}
}

int mr_resp_ack_wanted(const struct mr_qp *qp, uint64_t now)
{
	return qp->rsp.ack_now || qp->rsp.ack_due <= now;
}

/* Bytes of SACK blocks an ACK of this QP may carry: no larger than the
 * connection's full data packet, so an ACK fits wherever data does, and
 * at most MR_ACK_MAX_SACK_BYTES (MR-ACK-9). */
static uint32_t ack_block_bytes(const struct mr_qp *qp)
{
	uint32_t n = qp->mtu + MR_MAX_HDR_LEN - MR_BTH_LEN - MR_PTH_LEN -
		     MR_AETH_LEN;

	return n > MR_ACK_MAX_SACK_BYTES ? MR_ACK_MAX_SACK_BYTES : n;
}

/* Append rx's block to the ACK if it fits in *room bytes (MR-ACK-13: its
 * length depends on the block before it). Returns 1 if it was put. */
static int put_block(struct mr_aeth *a, struct mr_pathrx *rx, uint32_t *room)
{
	struct mr_sack_block *b = &a->blocks[a->nblocks];
	uint32_t unacked = rx->unacked;
	size_t len;

	mr_pathrx_sack(rx, b);
	len = mr_wire_sack_len(b, a->nblocks ? b - 1 : NULL);
	if (len > *room) {
		rx->unacked = unacked; /* not reported: still news */
		return 0;
	}
	*room -= (uint32_t)len;
	a->nblocks++;
	return 1;
}

/*
 * MR-MP-7, MR-SACK-7: the ACK reports on, and travels on, one path: the
 * next path in rotation that received packets since the last ACK (the
 * last path a packet arrived on if none did). Its block is blocks[0]; the
 * sender takes RTT samples from that block only, so each path's RTT is
 * its own forward route and its own reverse route. The other paths
 * follow, those with news first, as many as fit: every block is
 * cumulative, so a path left out is reported by the next ACK. A path
 * without holes or marks takes 2 bytes after the first (MR-ACK-13: its
 * cum_ppsn as a step from the block before, and a sprayed connection's
 * paths advance together), so up to 64 paths every ACK is a complete
 * snapshot while the bitmaps are short.
 */
static void ack_blocks(struct mr_qp *qp, struct mr_pkt *pkt)
{
	struct mr_aeth *a = &pkt->aeth;
	uint32_t room = ack_block_bytes(qp), n = qp->npaths, k, pass;
	uint64_t put = 0; /* paths already in the ACK (MR_MAX_PATHS <= 64) */
	uint16_t first = qp->rsp.last_rx_path;

	for (k = 0; k < n; k++) {
		uint16_t p = (uint16_t)((qp->rsp.ack_path_next + k) % n);

		if (qp->rsp.prx[p].unacked) {
			first = p;
			break;
		}
	}
	qp->rsp.ack_path_next = (uint16_t)((first + 1) % n);
	pkt->pth.path_id = first;
	a->nblocks = 0;
	/* The ACK path's block always fits: 40 bytes, and the smallest
	 * data packet leaves 264 (MTU 256). */
	if (qp->rsp.prx[first].pkts && put_block(a, &qp->rsp.prx[first], &room))
		put |= 1ull << first;
	/* Pass 0: paths with news; pass 1: the rest that ever received. */
	for (pass = 0; pass < 2; pass++)
		for (k = 0; k < n && room >= MR_SACK_MIN_LEN; k++) {
			uint16_t p = (uint16_t)((first + 1 + k) % n);
			struct mr_pathrx *rx = &qp->rsp.prx[p];

			if (put >> p & 1 || !rx->pkts ||
			    (!pass && !rx->unacked))
				continue;
			if (put_block(a, rx, &room))
				put |= 1ull << p;
		}
}

size_t mr_resp_ack(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		   struct mr_tx_meta *meta)
{
	struct mr_pkt pkt;
	struct mr_aeth *a = &pkt.aeth;
	uint32_t ce = 0;
	size_t len;
	uint16_t i;

	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.version = MR_WIRE_VERSION;
	pkt.bth.opcode = MR_OP_ACK;
	pkt.bth.flags = mr_qp_is_gbn(qp) ? MR_BTH_F_GBN : 0;
	pkt.bth.dqpn = qp->attr.dest_qpn;
	pkt.bth.sqpn = qp->cfg.qpn;
	/* MR-ACK-2: ssn and msn of an ACK are 0; pth.path_id is set with
	 * the blocks (MR-MP-7). */
	/* MR-RSP-9: a failed request is NAKed in every ACK until the
	 * requester gives up; RNR and SEQ_ERR once per occurrence. */
	if (qp->rsp.rx_err) {
		a->syndrome = qp->rsp.rx_err_code;
		a->nak_msn = qp->rsp.rx_err_msn;
	} else if (qp->rsp.rnr_nak) {
		a->syndrome = MR_NAK_RNR;
		a->rnr_timer = qp->attr.min_rnr_timer;
		a->nak_msn = qp->rsp.rnr_nak_msn;
	} else if (qp->rsp.seq_nak) {
		a->syndrome = MR_NAK_SEQ_ERR;
		a->nak_msn = qp->rsp.rcv_msn;
	}
	a->cum_ssn = mr_ssnwin_cum(&qp->rsp.win);
	a->cum_msn = qp->rsp.rcv_msn;
	a->rate_hint = mr_ratehint_get(&qp->ep->rh, now);
	ack_blocks(qp, &pkt);
	for (i = 0; i < qp->npaths; i++)
		ce += (uint32_t)qp->rsp.prx[i].ce_total;
	/* MR-ACK-8: cumulative, modulo 2^16. */
	a->ecn_ce = (uint16_t)ce;
	/* MR-MP-7: back on the plane the path's packets arrive on (the
	 * sender may have moved it off a failed plane, MR-PM-5); a plane
	 * this side does not have falls back to its own mapping. */
	pkt.pth.plane = qp->rsp.prx[pkt.pth.path_id].plane < qp->ps.num_planes
				? qp->rsp.prx[pkt.pth.path_id].plane
				: mr_pathsel_plane(&qp->ps, pkt.pth.path_id);
	len = mr_wire_encode(&pkt, buf, cap);
	if (!len)
		return 0;
	MR_CNT(qp, tx_ack_pkts, 1);
	MR_CNT(qp, nak_sent[a->syndrome], 1);
	qp->rsp.ack_now = 0;
	qp->rsp.ack_req = 0;
	qp->rsp.ack_sent = 1;
	qp->rsp.ack_pkts = 0;
	qp->rsp.ack_due = UINT64_MAX;
	qp->rsp.seq_nak = 0;
	meta->dest = qp->attr.dest;
	meta->path_id = pkt.pth.path_id;
	meta->entropy = mr_pathsel_entropy(&qp->ps, pkt.pth.path_id);
	meta->plane = pkt.pth.plane;
	return len;
}

void mr_resp_flush(struct mr_qp *qp)
{
	uint32_t i;

	qp->rsp.rec_head = qp->rsp.rec_send = qp->rsp.rec_tail;
	mr_rq_set_blocked(&qp->rq, 0);
	for (i = 0; i < qp->ep->cfg.hold_slots; i++)
		qp->rsp.hold[i].used = 0;
	qp->rsp.ack_due = UINT64_MAX;
	qp->rsp.ack_req = 0;
}
