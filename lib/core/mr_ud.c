// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unreliable datagram QPs (docs/spec/transport.md MR-UD-*): one packet
 * per message, no ACK, no retransmission, qkey checked, receive WQEs
 * consumed in arrival order.
 */
#include <string.h>

#include "mr_engine.h"

size_t mr_ud_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta)
{
	struct mr_swqe *w;
	struct mr_pkt pkt;
	size_t h;

	if ((qp->state != MR_QPS_RTS) || qp->sq.next == qp->sq.tail)
		return 0;
	w = mr_sq_wqe(qp, qp->sq.next);
	memset(&pkt, 0, sizeof(pkt));
	pkt.bth.version = MR_WIRE_VERSION;
	pkt.bth.opcode = w->opcode == MR_WR_SEND_WITH_IMM ? MR_OP_UD_SEND_IMM
							  : MR_OP_UD_SEND;
	pkt.bth.flags = w->solicited ? MR_BTH_F_SOLICITED : 0;
	pkt.bth.dqpn = w->ud_qpn;
	pkt.bth.sqpn = qp->cfg.qpn;
	pkt.bth.ssn = qp->attr.sq_psn + qp->ud_ssn;
	pkt.bth.msg_len = w->len;
	/* MR-UD-2: a qkey with the high bit set means "use the QP's own"
	 * (verbs). */
	pkt.deth.qkey = (w->ud_qkey & 0x80000000u) ? qp->attr.qkey : w->ud_qkey;
	pkt.imm = w->imm;
	pkt.payload_len = w->len;
	h = mr_wire_hdr_len(&pkt);
	if (!h || h + w->len + MR_ICRC_LEN > cap)
		return 0;
	if (w->len) {
		if (w->is_inline)
			memcpy(buf + h, w->inl, w->len);
		else if (mr_sge_gather(MR_QP_MEM(qp), w->sge, w->num_sge, 0,
				       buf + h, w->len))
			return 0;
	}
	if (mr_wire_encode_hdr(&pkt, buf, cap) != h)
		return 0;
	qp->ud_ssn++;
	qp->sq.next++;
	qp->sq.head++;
	MR_CNT(qp, tx_data_pkts, 1);
	MR_CNT(qp, tx_payload_bytes, w->len);
	MR_CNT(qp, msgs_sent, 1);
	meta->dest = w->ud_dest;
	meta->path_id = 0;
	/* Datagrams of one QP share one entropy: a flow stays on a path. */
	meta->entropy =
		(uint16_t)(MR_ENTROPY_MIN +
			   (qp->cfg.qpn * 2654435761u >> 18) %
				   (MR_ENTROPY_MAX - MR_ENTROPY_MIN + 1));
	meta->plane = 0;
	if (w->signaled) {
		struct mr_cqe c;

		memset(&c, 0, sizeof(c));
		c.wr_id = w->wr_id;
		c.opcode = MR_WC_SEND;
		c.byte_len = w->len;
		mr_qpout_cqe(&qp->out, &c);
	}
	(void)now;
	return mr_wire_seal(buf, h + w->len);
}

/* The 40-byte GRH of a UD receive: an IPv4 header at offset 20. The
 * lengths count the payload as a UDP datagram would carry it. */
static void ud_grh(uint8_t *g, const struct mr_rx_meta *meta, uint32_t len)
{
	uint8_t *ip = g + 20;
	uint32_t sum = 0, tot = 20 + 8 + len;
	int i;

	memset(g, 0, MR_UD_GRH_LEN);
	ip[0] = 0x45;
	ip[1] = meta->ecn_ce ? 3 : 0;
	ip[2] = (uint8_t)(tot > 0xffff ? 0xff : tot >> 8);
	ip[3] = (uint8_t)(tot > 0xffff ? 0xff : tot);
	ip[8] = 64;
	ip[9] = 17;
	mr_put32(ip + 12, meta->src);
	mr_put32(ip + 16, meta->dst);
	for (i = 0; i < 20; i += 2)
		sum += (uint32_t)ip[i] << 8 | ip[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	sum = ~sum & 0xffff;
	ip[10] = (uint8_t)(sum >> 8);
	ip[11] = (uint8_t)sum;
}

int mr_ud_rx(struct mr_qp *qp, const struct mr_pkt *pkt,
	     const struct mr_rx_meta *meta)
{
	uint8_t grh[MR_UD_GRH_LEN];
	struct mr_sge sge[1024];
	struct mr_rwqe rw;
	struct mr_cqe c;
	uint8_t op = pkt->bth.opcode;

	if (op != MR_OP_UD_SEND && op != MR_OP_UD_SEND_IMM) {
		MR_CNT(qp, drop_unexpected, 1);
		return -MR_EPROTO;
	}
	if (qp->state != MR_QPS_RTR && qp->state != MR_QPS_RTS &&
	    qp->state != MR_QPS_SQD) {
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	if (pkt->deth.qkey != qp->attr.qkey) {
		MR_CNT(qp, drop_qkey, 1); /* MR-UD-3 */
		return -MR_EACCESS;
	}
	if (mr_rq_take(&qp->rq, &rw, sge)) {
		MR_CNT(qp, drop_rnr, 1); /* MR-UD-4: no WQE, dropped */
		return -MR_EAGAIN;
	}
	memset(&c, 0, sizeof(c));
	c.wr_id = rw.wr_id;
	c.opcode = MR_WC_RECV;
	c.is_recv = 1;
	c.src_qp = pkt->bth.sqpn;
	c.ud_src = meta->src;
	c.solicited = !!(pkt->bth.flags & MR_BTH_F_SOLICITED);
	/* MR-UD-5: the payload lands after the 40-byte GRH space verbs
	 * reserves at the start of a UD receive buffer. */
	if ((uint64_t)pkt->payload_len + MR_UD_GRH_LEN > rw.total) {
		MR_CNT(qp, drop_ud_len, 1);
		c.status = MR_WC_LOC_LEN_ERR;
		mr_qpout_cqe(&qp->out, &c);
		return -MR_EMSGSIZE;
	}
	/* MR-UD-5: the GRH area holds the L3 header, as the RoCE v2 annex
	 * (A17.4.5.2) asks for IPv4: bytes 0-19 zero, 20-39 the IPv4 header.
	 * Programs read the addresses there (UCX drops datagrams whose
	 * destination is not one of its GIDs). */
	if (meta->l3_ip6)
		memcpy(grh, meta->l3_ip6, MR_UD_GRH_LEN); /* RoCE v2, IPv6 */
	else
		ud_grh(grh, meta, pkt->payload_len);
	if (mr_sge_place(MR_QP_MEM(qp), rw.sge, rw.num_sge, 0, grh,
			 MR_UD_GRH_LEN)) {
		c.status = MR_WC_LOC_PROT_ERR;
		mr_qpout_cqe(&qp->out, &c);
		return -MR_EACCESS;
	}
	if (pkt->payload_len &&
	    mr_sge_place(MR_QP_MEM(qp), rw.sge, rw.num_sge, MR_UD_GRH_LEN,
			 pkt->payload, pkt->payload_len)) {
		c.status = MR_WC_LOC_PROT_ERR;
		mr_qpout_cqe(&qp->out, &c);
		return -MR_EACCESS;
	}
	MR_CNT(qp, rx_payload_bytes, pkt->payload_len);
	MR_CNT(qp, msgs_rcvd, 1);
	c.byte_len = pkt->payload_len + MR_UD_GRH_LEN;
	c.wc_flags = MR_WC_F_GRH;
	if (op == MR_OP_UD_SEND_IMM) {
		c.imm = pkt->imm;
		c.wc_flags |= MR_WC_F_WITH_IMM;
	}
	mr_qpout_cqe(&qp->out, &c);
	return 0;
}
