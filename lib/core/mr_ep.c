// SPDX-License-Identifier: BSD-2-Clause
/*
 * The endpoint: configuration, receive demultiplexing, the transmit
 * scheduler (round-robin over QPs) and timers (docs/spec/transport.md
 * MR-QP-*).
 */
#include <stddef.h>
#include <string.h>

#include "mr_qp.h"
#include "mr_sched.h"

static int is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

static int fill_config(struct mr_ep_config *c)
{
	if (!c->mtu)
		c->mtu = 4096;
	if (!c->num_paths)
		c->num_paths = 1;
	if (!c->max_qp)
		c->max_qp = 1024;
	if (!c->num_planes)
		c->num_planes = 1;
	if (!c->ack_every)
		c->ack_every = 4;
	if (!c->ack_delay_ns)
		c->ack_delay_ns = 2000;
	/* MR-RSP-12, MR-TMR-9: the sender's probe timeout allows for
	 * ack_delay_ns of ACK delay, so an ACK_REQ's ACK waits no longer. */
	if (c->ack_req_delay_ns > c->ack_delay_ns)
		c->ack_req_delay_ns = c->ack_delay_ns;
	if (!c->ssn_window)
		c->ssn_window = MR_SSNWIN_BITS(c->num_paths);
	if (!c->msg_window)
		c->msg_window = 256;
	if (!c->max_rd_atomic)
		c->max_rd_atomic = 16;
	if (!c->hold_slots)
		c->hold_slots = 4;
	if (!c->min_rto_ns)
		c->min_rto_ns = 100000;
	if (!c->link_rate_mbps)
		c->link_rate_mbps = 100000;
	if (!c->base_rtt_ns)
		c->base_rtt_ns = 10000;
	if (!c->cc_metaroce)
		c->cc_metaroce = mr_cc_find("metaroce");
	if (!c->cc_gbn)
		c->cc_gbn = mr_cc_find("dcqcn");
	if (!c->pathsel)
		c->pathsel = mr_pathsel_find("spray");
	if (!c->cc_start)
		c->cc_start = MR_CC_START_ONE;
	if (c->cc_start > MR_CC_START_SLOTS)
		return -MR_EINVAL;

	if (c->mtu < 256 || c->mtu > MR_WIRE_MAX_PAYLOAD || !is_pow2(c->mtu))
		return -MR_EINVAL;
	if (c->num_paths > MR_MAX_PATHS || c->num_planes > c->num_paths)
		return -MR_EINVAL;
	if (!is_pow2(c->ssn_window) || c->ssn_window < 64 ||
	    c->ssn_window > MR_SSNWIN_MAX_BITS)
		return -MR_EINVAL;
	if (!is_pow2(c->msg_window) || c->msg_window > (1u << 20))
		return -MR_EINVAL;
	if (c->max_rd_atomic > MR_MAX_RD_ATOMIC || c->hold_slots > 64)
		return -MR_EINVAL;
	return 0;
}

int mr_ep_create(const struct mr_ep_config *cfg, const struct mr_mem *mem,
		 const struct mr_rand *rnd, const struct mr_memreg *memreg,
		 const struct mr_callbacks *cb, struct mr_ep **out)
{
	struct mr_ep_config c;
	struct mr_ep *ep;
	int rc;

	if (!cfg || !mem || !mem->calloc || !mem->free || !rnd || !rnd->next ||
	    !memreg || !memreg->lookup || !cb || !cb->place || !cb->complete ||
	    !out)
		return -MR_EINVAL;
	c = *cfg;
	rc = fill_config(&c);
	if (rc)
		return rc;
	ep = mem->calloc(mem->user, 1, sizeof(*ep));
	if (!ep)
		return -MR_ENOMEM;
	ep->cfg = c;
	ep->mem = *mem;
	ep->rnd = *rnd;
	ep->memreg = *memreg;
	ep->cb = *cb;
	ep->qpn_mask = 1;
	while (ep->qpn_mask + 1 < 2 * c.max_qp)
		ep->qpn_mask = ep->qpn_mask * 2 + 1;
	ep->qps = mem->calloc(mem->user, c.max_qp, sizeof(*ep->qps));
	/* work[] and, behind it, ackq[]: max_qp each. */
	ep->work = mem->calloc(mem->user, 2 * (size_t)c.max_qp,
			       sizeof(*ep->work));
	ep->ackq = ep->work ? ep->work + c.max_qp : NULL;
	ep->due = mem->calloc(mem->user, c.max_qp, sizeof(*ep->due));
	ep->qpn_tab = mem->calloc(mem->user, (size_t)ep->qpn_mask + 1,
				  sizeof(*ep->qpn_tab));
	ep->rh_act = mem->calloc(mem->user, c.max_qp, sizeof(*ep->rh_act));
	ep->rh_demand = mem->calloc(mem->user, c.max_qp, sizeof(*ep->rh_demand));
	rc = ep->qps && ep->qpn_tab && ep->work && ep->due && ep->rh_act &&
			     ep->rh_demand
		     ? 0
		     : -MR_ENOMEM;
	if (!rc)
		rc = mr_timerq_init(&ep->timers, mem, c.max_qp);
	if (!rc)
		rc = mr_ratehint_init(&ep->rh, c.link_rate_mbps,
				      4 * c.base_rtt_ns, c.max_qp, ep->rh_act,
				      ep->rh_demand);
	if (!rc) /* MR-CC-12: R is the live planes' */
		rc = mr_ratehint_set_planes(&ep->rh, c.num_planes);
	if (!rc && c.cc_start == MR_CC_START_SLOTS) /* MR-CC-17 */
		mr_ratehint_set_start(&ep->rh,
				      c.mtu + MR_MAX_HDR_LEN + MR_ICRC_LEN);
	if (rc) {
		mr_timerq_fini(&ep->timers);
		if (ep->qps)
			mem->free(mem->user, ep->qps);
		if (ep->qpn_tab)
			mem->free(mem->user, ep->qpn_tab);
		if (ep->work)
			mem->free(mem->user, ep->work);
		if (ep->due)
			mem->free(mem->user, ep->due);
		if (ep->rh_act)
			mem->free(mem->user, ep->rh_act);
		if (ep->rh_demand)
			mem->free(mem->user, ep->rh_demand);
		mem->free(mem->user, ep);
		return rc;
	}
	*out = ep;
	return 0;
}

int mr_ep_set_link_rate(struct mr_ep *ep, uint32_t mbps)
{
	if (!ep || !mbps)
		return -MR_EINVAL;
	ep->cfg.link_rate_mbps = mbps;
	return mr_ratehint_set_link(&ep->rh, mbps);
}

int mr_ep_destroy(struct mr_ep *ep)
{
	if (!ep)
		return -MR_EINVAL;
	if (ep->nqp || ep->nsrq)
		return -MR_EBUSY;
	ep->mem.free(ep->mem.user, ep->qps);
	ep->mem.free(ep->mem.user, ep->qpn_tab);
	ep->mem.free(ep->mem.user, ep->work);
	ep->mem.free(ep->mem.user, ep->due);
	ep->mem.free(ep->mem.user, ep->rh_act);
	ep->mem.free(ep->mem.user, ep->rh_demand);
	mr_timerq_fini(&ep->timers);
	ep->mem.free(ep->mem.user, ep);
	return 0;
}

const struct mr_ep_config *mr_ep_config(const struct mr_ep *ep)
{
	return &ep->cfg;
}

const struct mr_counters *mr_ep_counters(const struct mr_ep *ep)
{
	return &ep->cnt;
}

static struct mr_qp *find_qp(struct mr_ep *ep, uint32_t qpn)
{
	return mr_ep_qpn_find(ep, qpn);
}

static int rc_rx(struct mr_qp *qp, const struct mr_pkt *pkt,
		 const struct mr_rx_meta *meta, uint64_t now)
{
	uint8_t op = pkt->bth.opcode;

	if (op == MR_OP_UD_SEND || op == MR_OP_UD_SEND_IMM) {
		MR_CNT(qp, drop_unexpected, 1);
		return -MR_EPROTO;
	}
	/* MR-QP-3: RESET and INIT take nothing; RTR takes requests. */
	if (qp->state < MR_QPS_RTR ||
	    (qp->state == MR_QPS_RTR &&
	     (op == MR_OP_READ_RESP || op == MR_OP_ATOMIC_RESP))) {
		MR_CNT(qp, drop_bad_state, 1);
		return -MR_ESTATE;
	}
	/* MR-RSP-1: only the connected peer, in the QP's mode. */
	if (pkt->bth.sqpn != qp->attr.dest_qpn ||
	    !(pkt->bth.flags & MR_BTH_F_GBN) != !mr_qp_is_gbn(qp) ||
	    pkt->pth.path_id >= qp->npaths) {
		MR_CNT(qp, drop_invalid, 1);
		return -MR_EPROTO;
	}
	/* MR-RSP-1: and only from the peer's address. QPNs are few and
	 * easily seen on the wire; without this any host that learned a
	 * QPN pair and an rkey could write into registered memory. */
	if (meta->src != qp->attr.dest) {
		MR_CNT(qp, drop_peer_addr, 1);
		return -MR_EPROTO;
	}
	if (op == MR_OP_ACK)
		return mr_req_on_ack(qp, pkt, now);
	if (op == MR_OP_PROBE) {
		/* MR-PRB-3: recorded on its path and ACKed at once on it;
		 * no data, no ssn. */
		MR_CNT(qp, probes_rcvd, 1);
		mr_rx_path_only(qp, pkt, meta, now);
		return 0;
	}
	if (op == MR_OP_READ_RESP || op == MR_OP_ATOMIC_RESP)
		return mr_req_on_resp(qp, pkt, meta, now);
	return mr_resp_on_req(qp, pkt, meta, now);
}

int mr_ep_rx(struct mr_ep *ep, uint64_t now, const uint8_t *buf, size_t len,
	     const struct mr_rx_meta *meta)
{
	static const struct mr_rx_meta none;
	struct mr_pkt pkt;
	struct mr_qp *qp;
	int rc;

	if (!ep || (!buf && len))
		return -MR_EINVAL;
	if (!meta)
		meta = &none;
	now = mr_ep_now(ep, now);
	ep->cnt.rx_pkts++;
	ep->cnt.rx_bytes += len;
	if (!buf) {
		ep->cnt.drop_parse[MR_PARSE_SHORT]++;
		return -MR_EPROTO;
	}
	rc = mr_wire_parse(buf, len, &pkt);
	if (rc) {
		ep->cnt.drop_parse[rc < MR_PARSE_ERRS ? rc : MR_PARSE_FIELD]++;
		return -MR_EPROTO;
	}
	qp = find_qp(ep, pkt.bth.dqpn);
	if (!qp) {
		ep->cnt.drop_unknown_qp++;
		return -MR_ENOENT;
	}
	qp->now = now;
	mr_ep_kick(qp);
	qp->cnt.rx_pkts++;
	qp->cnt.rx_bytes += len;
	if (meta->ecn_ce)
		MR_CNT(qp, ecn_ce_rcvd, 1);
	if (pkt.bth.opcode == MR_OP_ACK)
		MR_CNT(qp, rx_ack_pkts, 1);
	else
		MR_CNT(qp, rx_data_pkts, 1);
	if (qp->cfg.type == MR_QPT_UD)
		rc = mr_ud_rx(qp, &pkt, meta);
	else if (qp->cfg.type == MR_QPT_UC)
		rc = mr_uc_rx(qp, &pkt, meta);
	else
		rc = rc_rx(qp, &pkt, meta, now);
	mr_qp_settle(qp); /* what the QP's parts returned */
	if (qp->cfg.type != MR_QPT_RC)
		return rc;
	mr_ep_kick_ack(qp, now);
	mr_ep_timer_update(qp);
	return rc;
}

static size_t qp_tx(struct mr_qp *qp, uint64_t now, uint8_t *buf, size_t cap,
		    struct mr_tx_meta *meta, struct mr_tx_zc *zc)
{
	uint32_t nxt;
	size_t n;

	if (qp->cfg.type == MR_QPT_UD)
		return mr_ud_tx(qp, now, buf, cap, meta);
	if (qp->cfg.type == MR_QPT_UC)
		return mr_uc_tx(qp, now, buf, cap, meta);
	if (qp->state < MR_QPS_RTR)
		return 0;
	/* MR-RSP-12: an ACK that an ACK_REQ left waiting goes out with the
	 * QP's own next packet (the answer a ping-pong posts), not later. */
	if (mr_resp_ack_wanted(qp, now) ||
	    (qp->rsp.ack_req && mr_req_has_data(qp, now))) {
		n = mr_resp_ack(qp, now, buf, cap, meta);
		if (n)
			return n;
	}
	/* MR-RSP-10: RTR sends responses (mr_req_tx starts no request
	 * before RTS). */
	if (qp->state != MR_QPS_RTR && qp->state != MR_QPS_RTS &&
	    qp->state != MR_QPS_SQD)
		return 0;
	nxt = qp->req.snd_nxt;
	n = mr_req_tx(qp, now, buf, cap, meta, zc);
	/* A new data packet (snd_nxt moved: not a retransmission, not a
	 * probe, whose timing the path manager reads) with others in flight
	 * may wait for the next ones (mr_tx_meta.batch). */
	if (n && qp->req.snd_nxt != nxt &&
	    qp->req.snd_nxt - qp->req.snd_una > 1)
		meta->batch = 1;
	return n;
}

static size_t tx_counted(struct mr_ep *ep, struct mr_qp *qp, size_t len)
{
	qp->cnt.tx_pkts++;
	qp->cnt.tx_bytes += len;
	ep->cnt.tx_pkts++;
	ep->cnt.tx_bytes += len;
	return len;
}

/* The one transmit scheduler of both forms: zc NULL copies every payload
 * into buf. */
static size_t ep_tx(struct mr_ep *ep, uint64_t now, uint8_t *buf, size_t cap,
		    struct mr_tx_meta *meta, struct mr_tx_zc *zc)
{
	uint32_t i, n;

	if (!ep || !buf || !meta || cap < MR_TX_BUF_MIN(ep->cfg.mtu))
		return 0;
	now = mr_ep_now(ep, now);
	/* MR-REQ-5: the ACKs that fell due first, in the order they did.
	 * Behind the round robin of up to max_qp QPs' data an ACK waited
	 * for every other QP's packet: in the simulator's 64-host
	 * all-to-all (63 QPs sending per host) the first ACKs took 27 us
	 * against a 10.6 us base RTT, the senders' first hints came that
	 * late and 900 paths were suspected falsely on ACK delay alone. */
	while (ep->ackq_n) {
		struct mr_qp *qp = ep->ackq[ep->ackq_head];
		size_t len;

		ep->ackq_head = (ep->ackq_head + 1) % ep->cfg.max_qp;
		ep->ackq_n--;
		qp->in_ackq = 0;
		if (!mr_resp_ack_wanted(qp, now))
			continue; /* sent in its own turn meanwhile */
		memset(meta, 0, sizeof(*meta));
		if (zc)
			zc->nseg = 0;
		qp->now = now;
		len = qp_tx(qp, now, buf, cap, meta, zc);
		mr_qp_settle(qp);
		mr_ep_timer_update(qp);
		if (len)
			return tx_counted(ep, qp, len);
	}
	/* Then one packet per QP per turn, over the QPs with work. */
	n = ep->work_n;
	for (i = 0; i < n; i++) {
		struct mr_qp *qp = ep->work[ep->work_head];
		size_t len;

		ep->work_head = (ep->work_head + 1) % ep->cfg.max_qp;
		ep->work_n--;
		qp->in_work = 0;
		memset(meta, 0, sizeof(*meta));
		if (zc)
			zc->nseg = 0;
		qp->now = now;
		len = qp_tx(qp, now, buf, cap, meta, zc);
		mr_qp_settle(qp); /* sends complete, memory gone (MR-ERR-6) */
		mr_ep_timer_update(qp);
		if (!len)
			continue;
		mr_ep_kick(qp); /* back of the queue: it may have more */
		return tx_counted(ep, qp, len);
	}
	if (zc)
		zc->nseg = 0;
	return 0;
}

size_t mr_ep_tx(struct mr_ep *ep, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta)
{
	return ep_tx(ep, now, buf, cap, meta, NULL);
}

size_t mr_ep_tx_zc(struct mr_ep *ep, uint64_t now, uint8_t *buf, size_t cap,
		   struct mr_tx_meta *meta, struct mr_tx_zc *zc)
{
	if (!zc)
		return 0;
	zc->nseg = 0;
	return ep_tx(ep, now, buf, cap, meta, zc);
}

void mr_ep_set_planes_backlogged(struct mr_ep *ep, uint32_t planes)
{
	if (ep)
		ep->planes_backlogged = planes;
}

/* MR-QP-*: O(1), the top of the timer queue. */
uint64_t mr_ep_next_deadline(const struct mr_ep *ep)
{
	return mr_timerq_next(&ep->timers);
}

static struct mr_qp *qp_of_tmr(struct mr_timerq_entry *e)
{
	return (struct mr_qp *)(void *)((char *)e -
					offsetof(struct mr_qp, tmr));
}

/* Only the QPs that are due are visited, and only they are queued for
 * transmit; the others keep their place in the queue. */
void mr_ep_handle_expiry(struct mr_ep *ep, uint64_t now)
{
	uint32_t i, n = 0;

	now = mr_ep_now(ep, now);
	/* Take every due QP out first: each runs once per call even if its
	 * new deadline is due again (a livelock otherwise), and callbacks
	 * may re-key any QP while we work. */
	while (mr_timerq_next(&ep->timers) <= now) {
		struct mr_timerq_entry *e = mr_timerq_top(&ep->timers);

		mr_timerq_remove(&ep->timers, e);
		ep->due[n++] = qp_of_tmr(e);
	}
	for (i = 0; i < n; i++) {
		struct mr_qp *qp = ep->due[i];

		qp->now = now;
		if (qp->state != MR_QPS_ERR && mr_req_deadline(qp) <= now)
			mr_req_expiry(qp, now);
		mr_qp_settle(qp); /* retries exhausted (MR-ERR-2, -8) */
		/* Its delayed ACK, a retransmission, a probe, or pacing
		 * credit is due: give it a transmit turn. */
		mr_ep_kick(qp);
		mr_ep_kick_ack(qp, now);
		mr_ep_timer_update(qp);
	}
}
