// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unreliable connected QPs (docs/spec/transport.md MR-UC-*): SEND,
 * SEND_IMM, WRITE, WRITE_IMM split into mtu packets on one path, no ACK,
 * no retransmission, no transmit records. The receiver checks each
 * packet's ssn against the one it expects next: a gap inside a message
 * is a loss (one path keeps order), and the message is discarded without
 * a completion; the next message starts afresh with its first packet.
 */
#include <string.h>

#include "mr_engine.h"

static uint8_t uc_wire_op(uint8_t op)
{
	switch (op) {
	case MR_WR_RDMA_WRITE:
		return MR_OP_WRITE;
	case MR_WR_RDMA_WRITE_WITH_IMM:
		return MR_OP_WRITE_IMM;
	case MR_WR_SEND_WITH_IMM:
		return MR_OP_SEND_IMM;
	default:
		return MR_OP_SEND;
	}
}

/* MR-UC-1: every packet of a QP on one entropy, as UD (mr_ud.c). */
static uint16_t uc_entropy(const struct mr_qp *qp)
{
	return (uint16_t)(MR_ENTROPY_MIN +
			  (qp->cfg.qpn * 2654435761u >> 18) %
				  (MR_ENTROPY_MAX - MR_ENTROPY_MIN + 1));
}

static void uc_send_done(struct mr_qp *qp, const struct mr_swqe *w)
{
	struct mr_cqe c;

	qp->sq.next++;
	qp->sq.head++;
	MR_CNT(qp, msgs_sent, 1);
	if (w->signaled) {
		memset(&c, 0, sizeof(c));
		c.wr_id = w->wr_id;
		c.opcode = (w->opcode == MR_WR_RDMA_WRITE ||
			    w->opcode == MR_WR_RDMA_WRITE_WITH_IMM)
				   ? MR_WC_RDMA_WRITE
				   : MR_WC_SEND;
		c.byte_len = w->len;
		mr_qpout_cqe(&qp->out, &c);
	}
	/* MR-MW-6: the local WRs posted after it. */
	mr_sqlocal_run(qp);
	mr_sqlocal_complete(qp);
}

size_t mr_uc_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta)
{
	struct mr_swqe *w;
	struct mr_pkt pkt;
	uint32_t off, plen;
	size_t h;

	(void)now;
	if ((qp->state != MR_QPS_RTS && qp->state != MR_QPS_SQD) ||
	    qp->sq.next == qp->sq.tail)
		return 0;
	w = mr_sq_wqe(qp, qp->sq.next);
	/* MR-UC-5: SQD starts no new message, finishes the one started. */
	if (qp->state == MR_QPS_SQD && !w->sent_pkts)
		return 0;
	off = w->sent_pkts * qp->mtu;
	plen = w->len - off < qp->mtu ? w->len - off : qp->mtu;
	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.version = MR_WIRE_VERSION;
	pkt.bth.opcode = uc_wire_op(w->opcode);
	if (w->solicited && w->sent_pkts + 1 == w->npkts)
		pkt.bth.flags = MR_BTH_F_SOLICITED;
	pkt.bth.dqpn = qp->attr.dest_qpn;
	pkt.bth.sqpn = qp->cfg.qpn;
	pkt.bth.ssn = qp->attr.sq_psn + qp->ud_ssn;
	pkt.bth.msn = w->msn;
	pkt.bth.offset = off;
	pkt.bth.msg_len = w->len;
	pkt.reth.vaddr = w->remote_addr;
	pkt.reth.rkey = w->rkey;
	pkt.reth.dma_len = w->len;
	pkt.imm = w->imm;
	pkt.payload_len = plen;
	h = mr_wire_hdr_len(&pkt);
	if (!h || h + plen + MR_ICRC_LEN > cap)
		return 0;
	if (plen) {
		if (w->is_inline)
			memcpy(buf + h, w->inl + off, plen);
		else if (mr_sge_gather(MR_QP_MEM(qp), w->sge, w->num_sge, off,
				       buf + h, plen))
			return 0;
	}
	if (mr_wire_encode_hdr(&pkt, buf, cap) != h)
		return 0;
	qp->ud_ssn++;
	w->sent_pkts++;
	MR_CNT(qp, tx_data_pkts, 1);
	MR_CNT(qp, tx_payload_bytes, plen);
	meta->dest = qp->attr.dest;
	meta->path_id = 0;
	meta->entropy = uc_entropy(qp);
	meta->plane = 0;
	/* MR-UC-2: complete once the last packet is handed to the caller. */
	if (w->sent_pkts == w->npkts) {
		w->state = MR_SWQE_SENT;
		uc_send_done(qp, w);
		mr_req_sqd_check(qp);
	}
	return mr_wire_seal(buf, h + plen);
}

void mr_uc_rx_reset(struct mr_qp *qp)
{
	memset(&qp->uc, 0, sizeof(qp->uc));
}

/* MR-UC-3: what is left of the message in progress goes: no completion,
 * its receive WQE stays for the next message. */
static void uc_discard(struct mr_qp *qp)
{
	qp->uc.in_msg = 0;
}

static int is_write(uint8_t op)
{
	return op == MR_OP_WRITE || op == MR_OP_WRITE_IMM;
}

/* First packet of a message: MR-UC-4's checks that need the whole
 * message (receive WQE, rkey over all of it). */
static int uc_start(struct mr_qp *qp, const struct mr_pkt *pkt)
{
	uint8_t op = pkt->bth.opcode;
	uint8_t *host;

	if (is_write(op)) {
		if (!(qp->attr.access & MR_ACCESS_REMOTE_WRITE) ||
		    mr_qp_lookup(qp, pkt->reth.rkey, 1, pkt->reth.vaddr,
				 pkt->bth.msg_len, MR_ACCESS_REMOTE_WRITE,
				 &host)) {
			MR_CNT(qp, drop_access, 1);
			return -MR_EACCESS;
		}
	}
	if (op != MR_OP_WRITE && !mr_rq_head(&qp->rq)) {
		MR_CNT(qp, drop_rnr, 1);
		return -MR_EAGAIN;
	}
	if (op == MR_OP_SEND || op == MR_OP_SEND_IMM) {
		const struct mr_rwqe *rw = mr_rq_head(&qp->rq);

		if (pkt->bth.msg_len > rw->total) {
			struct mr_cqe c;

			/* MR-UC-4: too long for the WQE, as UD. */
			memset(&c, 0, sizeof(c));
			c.wr_id = rw->wr_id;
			c.status = MR_WC_LOC_LEN_ERR;
			c.opcode = MR_WC_RECV;
			c.is_recv = 1;
			c.src_qp = pkt->bth.sqpn;
			mr_rq_pop(&qp->rq);
			MR_CNT(qp, drop_ud_len, 1);
			mr_qpout_cqe(&qp->out, &c);
			return -MR_EMSGSIZE;
		}
	}
	qp->uc.in_msg = 1;
	qp->uc.op = op;
	qp->uc.msn = pkt->bth.msn;
	qp->uc.len = pkt->bth.msg_len;
	qp->uc.bytes = 0;
	qp->uc.vaddr = pkt->reth.vaddr;
	qp->uc.rkey = pkt->reth.rkey;
	return 0;
}

static void uc_finish(struct mr_qp *qp, const struct mr_pkt *pkt)
{
	struct mr_cqe c;
	uint8_t op = qp->uc.op;

	qp->uc.in_msg = 0;
	MR_CNT(qp, msgs_rcvd, 1);
	if (op == MR_OP_WRITE)
		return;
	memset(&c, 0, sizeof(c));
	c.wr_id = mr_rq_head(&qp->rq)->wr_id;
	mr_rq_pop(&qp->rq);
	c.is_recv = 1;
	c.src_qp = pkt->bth.sqpn;
	c.byte_len = qp->uc.len;
	c.solicited = !!(pkt->bth.flags & MR_BTH_F_SOLICITED);
	c.opcode = op == MR_OP_WRITE_IMM ? MR_WC_RECV_RDMA_WITH_IMM
					 : MR_WC_RECV;
	if (op == MR_OP_SEND_IMM || op == MR_OP_WRITE_IMM) {
		c.imm = pkt->imm;
		c.wc_flags = MR_WC_F_WITH_IMM;
	}
	mr_qpout_cqe(&qp->out, &c);
}

int mr_uc_rx(struct mr_qp *qp, const struct mr_pkt *pkt,
	     const struct mr_rx_meta *meta)
{
	uint8_t op = pkt->bth.opcode;
	uint32_t ssn = pkt->bth.ssn;
	int in_seq, rc;

	if (op != MR_OP_SEND && op != MR_OP_SEND_IMM && !is_write(op)) {
		MR_CNT(qp, drop_unexpected, 1); /* MR-UC-6 */
		return -MR_EPROTO;
	}
	if (qp->state != MR_QPS_RTR && qp->state != MR_QPS_RTS &&
	    qp->state != MR_QPS_SQD) {
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	/* MR-UC-7: only the connected peer. */
	if (pkt->bth.sqpn != qp->attr.dest_qpn) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	if (meta->src != qp->attr.dest) {
		MR_CNT(qp, drop_peer_addr, 1);
		return -MR_EPROTO;
	}
	in_seq = qp->uc.started && ssn == qp->uc.next_ssn;
	qp->uc.started = 1;
	qp->uc.next_ssn = ssn + 1;
	if (pkt->bth.offset == 0) {
		/* MR-UC-3: a first packet ends whatever was in progress. */
		uc_discard(qp);
		rc = uc_start(qp, pkt);
		if (rc)
			return rc;
	} else if (!qp->uc.in_msg || !in_seq || pkt->bth.msn != qp->uc.msn ||
		   pkt->bth.offset != qp->uc.bytes || op != qp->uc.op ||
		   pkt->bth.msg_len != qp->uc.len ||
		   (is_write(op) && (pkt->reth.vaddr != qp->uc.vaddr ||
				     pkt->reth.rkey != qp->uc.rkey))) {
		/* MR-UC-3: a packet missing before this one. */
		uc_discard(qp);
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EAGAIN;
	}
	if (pkt->payload_len) {
		if (is_write(op)) {
			uint8_t *host;

			rc = mr_qp_lookup(qp, qp->uc.rkey, 1,
					  qp->uc.vaddr + pkt->bth.offset,
					  pkt->payload_len,
					  MR_ACCESS_REMOTE_WRITE, &host);
			if (!rc)
				qp->ep->cb.place(qp->ep->cb.user, host,
						 pkt->payload,
						 pkt->payload_len);
		} else {
			const struct mr_rwqe *rw = mr_rq_head(&qp->rq);

			rc = mr_sge_place(MR_QP_MEM(qp), rw->sge, rw->num_sge,
					  pkt->bth.offset, pkt->payload,
					  pkt->payload_len);
		}
		if (rc) {
			uc_discard(qp);
			MR_CNT(qp, drop_access, 1);
			return -MR_EACCESS;
		}
	}
	qp->uc.bytes += pkt->payload_len;
	MR_CNT(qp, rx_payload_bytes, pkt->payload_len);
	if (qp->uc.bytes == qp->uc.len)
		uc_finish(qp, pkt);
	return 0;
}
