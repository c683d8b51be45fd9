// SPDX-License-Identifier: BSD-2-Clause
/*
 * Hosts (mrsim_net.h): one core endpoint each, driven exactly as lib/dp
 * drives it: mr_ep_tx() whenever a NIC port can take a packet, mr_ep_rx()
 * for every packet that arrives, mr_ep_handle_expiry() at
 * mr_ep_next_deadline(). QPs are created and moved RESET -> INIT -> RTR
 * -> RTS with the attributes the provider passes.
 *
 * Memory, and the check of every byte: each host sends from one pattern
 * buffer, every message from its own offset in it. A responder's target
 * memory is not backed: its address names (connection, message slot,
 * offset), and the place callback compares the bytes the core places
 * with the bytes the sender's pattern has there. At the sender's
 * completion the message must have had exactly its length placed, with
 * no byte wrong.
 */
#include <stdlib.h>
#include <string.h>

#include "mr_counters.h"
#include "mrsim_net.h"
#include "mrsim_redraw.h"

#define LKEY 1
#define VA_CONN_SHIFT 40
#define VA_SLOT_SHIFT 30
#define PAT_SLACK 65536

static uint64_t va_of(const struct mrsim_conn *c, uint32_t slot)
{
	return (uint64_t)(c->idx + 1) << VA_CONN_SHIFT |
	       (uint64_t)slot << VA_SLOT_SHIFT;
}

static void *h_calloc(void *u, size_t n, size_t s)
{
	return calloc(n, s);
}

static void h_free(void *u, void *p)
{
	free(p);
}

static uint64_t h_rand(void *u)
{
	return mrsim_rand(&((struct mrsim_host *)u)->rng);
}

static int h_lookup(void *u, uint32_t pd, uint32_t key, int remote,
		    uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	struct mrsim_host *h = u;
	struct mrsim_world *w = h->w;
	uint64_t conn, slot, off;

	*host = NULL;
	if (!len)
		return 0;
	if (!remote) {
		uint64_t base = (uintptr_t)h->pat;

		if (key != LKEY || addr < base ||
		    addr + len > base + h->pat_len)
			return -MR_EACCESS;
		*host = h->pat + (addr - base);
		return 0;
	}
	conn = (addr >> VA_CONN_SHIFT) - 1;
	slot = (addr >> VA_SLOT_SHIFT) &
	       ((1u << (VA_CONN_SHIFT - VA_SLOT_SHIFT)) - 1);
	off = addr & ((1ull << VA_SLOT_SHIFT) - 1);
	if (conn >= (uint64_t)w->nconn || key != w->conn[conn].qpn_d ||
	    w->conn[conn].dst != h->idx || slot >= (uint64_t)w->scn.window ||
	    off + len > (1ull << VA_SLOT_SHIFT))
		return -MR_EACCESS;
	/* Never dereferenced: the place callback decodes it. */
	*host = (uint8_t *)(uintptr_t)addr;
	return 0;
}

static void fail_once(struct mrsim_world *w, const char *what, int conn,
		      uint32_t seq)
{
	if (!w->st.first_error[0])
		snprintf(w->st.first_error, sizeof(w->st.first_error),
			 "%s (connection %d, message %u, at %.3f us)", what,
			 conn, seq, w->q.now / 1e6);
}

static void h_place(void *u, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	struct mrsim_host *h = u;
	struct mrsim_world *w = h->w;
	uint64_t a = (uintptr_t)dst;
	struct mrsim_conn *c = &w->conn[(a >> VA_CONN_SHIFT) - 1];
	struct mrsim_msg *m =
		&c->msg[(a >> VA_SLOT_SHIFT) &
			((1u << (VA_CONN_SHIFT - VA_SLOT_SHIFT)) - 1)];
	uint64_t off = a & ((1ull << VA_SLOT_SHIFT) - 1);
	const uint8_t *want = w->host[c->src].pat + m->src_off + off;

	if (!m->busy || off + len > m->len || memcmp(src, want, len)) {
		m->bad = 1;
		w->st.verify_errors++;
		fail_once(w, "a placed byte differs from what was sent", c->idx,
			  m->seq);
	}
	if (!w->flow[c->flow].first_rx_ps)
		w->flow[c->flow].first_rx_ps = w->q.now;
	m->placed += len;
	w->st.placed_bytes += len;
	w->st.sample_placed += len;
}

static void h_complete(void *u, const struct mr_cqe *cqe)
{
	struct mrsim_host *h = u;
	struct mrsim_world *w = h->w;
	struct mrsim_conn *c = cqe->qp_user;

	if (cqe->status != MR_WC_SUCCESS) {
		char b[96];

		w->st.cqe_errors++;
		snprintf(b, sizeof(b), "completion status %d on %s",
			 (int)cqe->status, cqe->is_recv ? "receive" : "send");
		fail_once(w, b, c->idx, (uint32_t)cqe->wr_id);
		if (!cqe->is_recv && c->outstanding)
			c->outstanding--;
		return;
	}
	if (cqe->is_recv) {
		/* Every step's receive was posted at connection time. */
		mrsim_wl_recv_imm(w, c, cqe->imm);
		return;
	}
	{
		struct mrsim_msg *m =
			&c->msg[cqe->wr_id % (uint64_t)w->scn.window];

		if (!m->busy || m->seq != (uint32_t)cqe->wr_id) {
			w->st.verify_errors++;
			fail_once(w, "a completion for no message", c->idx,
				  (uint32_t)cqe->wr_id);
			return;
		}
		if (m->placed != m->len || m->bad) {
			w->st.verify_errors++;
			fail_once(w,
				  "completed before every byte was placed "
				  "right",
				  c->idx, m->seq);
		}
		m->busy = 0;
		c->outstanding--;
		w->st.msgs_done++;
		w->st.last_done_ps = w->q.now;
		mrsim_wl_send_done(w, c, m);
	}
}

static void h_qp_error(void *u, void *qp_user)
{
	struct mrsim_host *h = u;
	struct mrsim_conn *c = qp_user;

	h->w->st.cqe_errors++;
	fail_once(h->w, "QP entered the error state", c->idx, 0);
}

int mrsim_hosts_create(struct mrsim_world *w, char *err, size_t errlen)
{
	const struct mrsim_scn *s = &w->scn;
	uint64_t maxmsg = s->msg_size < s->size ? s->msg_size : s->size;
	int i, *nqp = calloc((size_t)s->hosts, sizeof(int));
	uint64_t hop_ps;

	if (!nqp)
		return -1;
	for (i = 0; i < w->nconn; i++) {
		nqp[w->conn[i].src]++;
		nqp[w->conn[i].dst]++;
	}
	if (!strcmp(s->workload, "allreduce"))
		maxmsg = s->size / (uint64_t)s->hosts + 1;
	/* Unloaded RTT: every hop's delay and one MTU's serialisation. */
	hop_ps = (uint64_t)(s->delay_ns * 1000) +
		 (uint64_t)(s->mtu + 100) * 8000000ull / w->host_mbps;
	for (i = 0; i < s->hosts; i++) {
		struct mrsim_host *h = &w->host[i];
		struct mr_ep_config cfg = { 0 };
		struct mr_mem mem = { h_calloc, h_free, h };
		struct mr_rand rnd = { h_rand, h };
		struct mr_memreg mr = { .lookup = h_lookup, .user = h };
		struct mr_callbacks cb = { .place = h_place,
					   .complete = h_complete,
					   .qp_error = h_qp_error,
					   .user = h };
		uint64_t j, r = 0;
		int rc;

		h->w = w;
		h->idx = i;
		h->rng = s->seed * 1000003ull + (uint64_t)i;
		h->timer_at = UINT64_MAX;
		h->pat_len = maxmsg + PAT_SLACK;
		h->pat = malloc(h->pat_len);
		if (!h->pat) {
			free(nqp);
			snprintf(err, errlen, "out of memory (pattern)");
			return -1;
		}
		for (j = 0; j < h->pat_len; j++) {
			if (!(j & 7))
				r = mrsim_rand(&h->rng);
			h->pat[j] = (uint8_t)(r >> (8 * (j & 7)));
		}
		cfg.mtu = (uint32_t)s->mtu;
		cfg.num_paths = (uint16_t)(w->roce ? 1 : w->paths);
		cfg.num_planes = (uint8_t)(w->roce ? 1 : s->planes);
		cfg.max_qp = (uint32_t)(nqp[i] ? nqp[i] : 1);
		cfg.link_rate_mbps =
			(uint32_t)(w->host_mbps * (w->roce ? 1 : s->planes));
		cfg.base_rtt_ns =
			2 * (w->leaves > 1 ? 4 : 2) * hop_ps / 1000 + 1;
		cfg.gbn_ib_timeout = 1;
		cfg.pace_quantum = s->pace_burst;
		cfg.first_pkt_bytes = (uint32_t)s->first_pkt;
		cfg.first_pkt_starts = (uint16_t)s->first_pkt_starts;
		/* MR-CC-17 is MetaRoCE's start: the baseline (go-back-N +
		 * DCQCN) keeps the core's own, whatever the sim's default. */
		cfg.cc_start = (uint8_t)(w->roce ? 0 : s->cc_start);
		rc = mr_ep_create(&cfg, &mem, &rnd, &mr, &cb, &h->ep);
		if (rc) {
			free(nqp);
			snprintf(err, errlen, "host %d: mr_ep_create: %s", i,
				 mr_strerror(rc));
			return -1;
		}
	}
	free(nqp);
	return 0;
}

void mrsim_hosts_free(struct mrsim_world *w)
{
	int i;

	for (i = 0; i < w->nconn; i++) {
		if (w->conn[i].qs)
			mr_qp_destroy(w->conn[i].qs);
		if (w->conn[i].qd)
			mr_qp_destroy(w->conn[i].qd);
	}
	for (i = 0; w->host && i < w->scn.hosts; i++) {
		if (w->host[i].ep)
			mr_ep_destroy(w->host[i].ep);
		free(w->host[i].pat);
		free(w->host[i].ar_rcvd);
	}
}

/* RESET -> INIT -> RTR -> RTS with the attributes the provider passes. */
static int to_rts(struct mrsim_world *w, struct mr_qp *qp, uint32_t dest_qpn,
		  uint32_t dest, uint32_t rq_psn, uint32_t sq_psn)
{
	struct mr_qp_attr a;
	int rc;

	memset(&a, 0, sizeof(a));
	a.state = MR_QPS_INIT;
	a.access = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
		   MR_ACCESS_REMOTE_READ;
	rc = mr_qp_modify(qp, &a, MR_QP_STATE | MR_QP_ACCESS_FLAGS);
	if (rc)
		return rc;
	a.state = MR_QPS_RTR;
	a.dest_qpn = dest_qpn;
	a.rq_psn = rq_psn;
	a.path_mtu_bytes = (uint32_t)w->scn.mtu;
	a.dest = dest;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 12;
	rc = mr_qp_modify(qp, &a,
			  MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
				  MR_QP_DEST_QPN | MR_QP_RQ_PSN |
				  MR_QP_MAX_DEST_RD_ATOMIC |
				  MR_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	a.state = MR_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = (uint8_t)w->scn.ib_timeout;
	a.retry_cnt = (uint8_t)w->scn.ib_retry;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	return mr_qp_modify(qp, &a,
			    MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
				    MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
				    MR_QP_MAX_QP_RD_ATOMIC);
}

int mrsim_conn_open(struct mrsim_world *w, struct mrsim_conn *c)
{
	struct mrsim_host *hs = &w->host[c->src], *hd = &w->host[c->dst];
	int ar = !strcmp(w->scn.workload, "allreduce");
	struct mr_qp_config qc = {
		.type = MR_QPT_RC,
		.mode = w->roce ? MR_MODE_GBN : MR_MODE_METAROCE,
		.pd = 1,
		.max_send_wr = (uint32_t)w->scn.window + 1,
		.max_recv_wr = ar ? 2u * (uint32_t)w->scn.hosts + 2 : 1,
		.max_send_sge = 1,
		.max_recv_sge = 1,
		.user = c,
	};
	uint32_t psn_s = (uint32_t)mrsim_rand(&hs->rng) & 0xffffff;
	uint32_t psn_d = (uint32_t)mrsim_rand(&hd->rng) & 0xffffff;
	uint32_t i, pin;
	int rc;

	c->qpn_s = 2u * (uint32_t)c->idx + 2;
	c->qpn_d = 2u * (uint32_t)c->idx + 3;
	c->msg = calloc((size_t)w->scn.window, sizeof(*c->msg));
	if (!c->msg)
		return -MR_ENOMEM;
	qc.qpn = c->qpn_s;
	rc = mr_qp_create(hs->ep, &qc, &c->qs);
	if (rc)
		return rc;
	qc.qpn = c->qpn_d;
	rc = mr_qp_create(hd->ep, &qc, &c->qd);
	if (rc)
		return rc;
	/* dest: the peer host, and for RoCE the plane this connection is
	 * pinned to (one NIC port per connection, as a multi-rail setup
	 * spreads QPs over its NICs). */
	pin = w->roce ? (uint32_t)c->plane << 16 : 0;
	rc = to_rts(w, c->qs, c->qpn_d, (uint32_t)c->dst | pin, psn_d, psn_s);
	if (!rc)
		rc = to_rts(w, c->qd, c->qpn_s, (uint32_t)c->src | pin, psn_s,
			    psn_d);
	for (i = 0; !rc && ar && i < 2u * (uint32_t)w->scn.hosts; i++) {
		struct mr_recv_wr rw = { .wr_id = 0, .num_sge = 0 };

		rc = mr_qp_post_recv(c->qd, &rw);
	}
	return rc;
}

int mrsim_conn_post(struct mrsim_world *w, struct mrsim_conn *c, uint32_t len,
		    int with_imm, uint32_t imm)
{
	struct mrsim_host *hs = &w->host[c->src];
	uint32_t slot = c->next_seq % (uint32_t)w->scn.window;
	struct mrsim_msg *m = &c->msg[slot];
	struct mr_sge sge;
	struct mr_send_wr wr;
	int rc;

	if (m->busy)
		return -MR_EAGAIN;
	memset(m, 0, sizeof(*m));
	m->seq = c->next_seq;
	m->len = len;
	m->src_off = (uint32_t)(mrsim_rand(&hs->rng) % PAT_SLACK);
	m->post_ps = w->q.now;
	m->busy = 1;
	sge.addr = (uintptr_t)hs->pat + m->src_off;
	sge.length = len;
	sge.lkey = LKEY;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = m->seq;
	wr.opcode = with_imm ? MR_WR_RDMA_WRITE_WITH_IMM : MR_WR_RDMA_WRITE;
	wr.flags = MR_SEND_SIGNALED;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm = imm;
	wr.remote_addr = va_of(c, slot);
	wr.rkey = c->qpn_d;
	rc = mr_qp_post_send(c->qs, &wr, w->q.now / 1000);
	if (rc) {
		m->busy = 0;
		return rc;
	}
	c->next_seq++;
	c->outstanding++;
	w->st.msgs_total++;
	mrsim_host_pump(hs);
	return 0;
}

void mrsim_host_timer(struct mrsim_host *h, uint64_t at)
{
	if (at == h->timer_at)
		h->timer_at = UINT64_MAX;
	mrsim_host_pump(h);
}

static void arm(struct mrsim_host *h, uint64_t d)
{
	struct mrsim_world *w = h->w;
	uint64_t t;

	if (d == UINT64_MAX)
		return;
	t = d > UINT64_MAX / 1000 ? UINT64_MAX - 1 : d * 1000;
	if (t <= w->q.now)
		t = w->q.now + 1000;
	if (t >= h->timer_at)
		return;
	h->timer_at = t;
	mrsim_evq_push(&w->q, t, MRSIM_EV_TIMER, 0, h);
}

/* The NIC takes no more from the core when every port has a couple of
 * packets waiting (all are busy for a while), or one port's transmit ring
 * (scenario key nic_ring, 16) is full, as lib/dp stops while one plane
 * has a backlog. Stopping as soon as any one port has two would leave the
 * other planes idle whenever the core's next packet happened to be for a
 * busy one (a host of k planes then sent at about 1.3 x one port's rate
 * with many QPs, whatever k); a full ring still stops the host, which is
 * why the core is told which ports are backlogged (MR-MP-12, key steer). */
#define NIC_BACKLOG 2

/* MR-MP-12: the ports holding scn.steer packets (14: two short of the
 * ring of 16), as a NIC's transmit rings show them: the core sends on the
 * other planes while it may, so a full ring rarely stops the host. At 8
 * the core moved so many packets between planes that at 2 planes the
 * fabric's queues grew (bench/sim/results.md). */
static uint32_t nic_backlogged(const struct mrsim_host *h)
{
	uint32_t m = 0;
	int k;

	for (k = 0; k < h->w->scn.planes; k++)
		if (h->nic[k]->qpkts >= (uint32_t)h->w->scn.steer)
			m |= 1u << k;
	return m;
}

static int nic_full(const struct mrsim_host *h)
{
	int k, busy = 0;

	for (k = 0; k < h->w->scn.planes; k++) {
		if (h->nic[k]->qpkts >= (uint32_t)h->w->scn.nic_ring)
			return 1;
		busy += h->nic[k]->qpkts >= NIC_BACKLOG;
	}
	return busy == h->w->scn.planes;
}

/* The causes of the host's idle uplinks (enum mrsim_idle), after each
 * pump: only a pump changes what its ports hold, but for the packet a
 * port is sending. */
static void up_idle(struct mrsim_host *h)
{
	int k, n = h->w->scn.planes, queued = 0, full = nic_full(h);

	for (k = 0; k < n; k++)
		queued += h->nic[k]->qpkts >= 2;
	for (k = 0; k < n; k++) {
		struct mrsim_port *p = h->nic[k];

		mrsim_port_idle(p, p->busy   ? MRSIM_BUSY
				   : full   ? MRSIM_IDLE_NIC
				   : queued ? MRSIM_IDLE_SKEW
					    : MRSIM_IDLE_ALL);
	}
}

/* Hand the core's packets to the NIC ports while each has room for a
 * couple more (a NIC's transmit ring: the core decides what goes next,
 * the port's serialisation decides when), running the core's timers
 * when they are due, as lib/dp's poll round does. A full port pumps again
 * when it has sent a packet; otherwise the next deadline is armed. */
void mrsim_host_pump(struct mrsim_host *h)
{
	struct mrsim_world *w = h->w;
	uint64_t now_ns = w->q.now / 1000, d;
	int round;

	if (h->in_pump)
		return; /* a completion callback posted: the loop goes on */
	h->in_pump = 1;
	for (round = 0; round < 2; round++) {
		if (mr_ep_next_deadline(h->ep) <= now_ns)
			mr_ep_handle_expiry(h->ep, now_ns);
		while (!nic_full(h)) {
			struct mr_tx_meta meta;
			struct mrsim_pkt *pkt;
			size_t len;
			int plane;

			if (w->scn.steer)
				mr_ep_set_planes_backlogged(h->ep,
							    nic_backlogged(h));
			len = mr_ep_tx(h->ep, now_ns, h->txbuf,
				       sizeof(h->txbuf), &meta);
			if (!len)
				break;
			pkt = mrsim_pkt_alloc(w);
			memcpy(pkt->data, h->txbuf, len);
			pkt->len = (uint32_t)len;
			pkt->src = (uint16_t)h->idx;
			pkt->dst = (uint16_t)(meta.dest & 0xffff);
			pkt->sport = meta.entropy;
			pkt->path_id = meta.path_id;
			if (h->txbuf[1] == MR_OP_ACK) { /* BTH opcode */
				w->st.ack_pkts++;
				w->st.ack_wire_bytes +=
					len + MRSIM_WIRE_OVERHEAD;
			}
			mrsim_redraw_tx(w, pkt, w->q.now);
			plane = w->roce ? (int)(meta.dest >> 16)
					: meta.plane % w->scn.planes;
			pkt->plane = (uint8_t)plane;
			mrsim_port_enqueue(h->nic[plane], pkt);
		}
		if (nic_full(h) || mr_ep_next_deadline(h->ep) > now_ns)
			break;
	}
	h->in_pump = 0;
	up_idle(h);
	if (nic_full(h))
		return;
	d = mr_ep_next_deadline(h->ep);
	arm(h, d);
}

void mrsim_host_rx(struct mrsim_host *h, struct mrsim_pkt *pkt)
{
	struct mrsim_world *w = h->w;
	/* The source address as the receiving QP knows its peer: the host,
	 * and for RoCE the NIC (plane) the connection is pinned to. */
	struct mr_rx_meta meta = {
		.src = pkt->src | (w->roce ? (uint32_t)pkt->plane << 16 : 0),
		.ecn_ce = pkt->ce
	};
	int rc;

	rc = mr_ep_rx(h->ep, w->q.now / 1000, pkt->data, pkt->len, &meta);
	if (pkt->corrupted && rc == 0) {
		w->st.verify_errors++;
		fail_once(w, "the core accepted a corrupted packet", -1, 0);
	}
	mrsim_pkt_free(w, pkt);
	mrsim_host_pump(h);
}
