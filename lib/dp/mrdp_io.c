/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * One progress round of a device, with its lock held: receive a burst on
 * every plane (classify, answer ARP, learn neighbours, feed the engine),
 * run due timers, then pull packets from the engine into frames and send
 * them. The shape of DPDK's l2fwd loop: burst rx, process, burst tx.
 *
 * Zero-copy transmit (mrdp.h): a large payload goes to the port as mbufs
 * attached to the application's registered memory. Lifetime rule: such an
 * mbuf never outlives the rte_eth_tx_burst() call that hands it to the
 * port, since the memory is only known valid while the device lock is
 * held (a deregistration or a reuse of the buffer may follow as soon as
 * the lock is dropped). Everything that would keep a frame longer (the
 * port's backlog, a neighbour's ARP queue, loopback) makes it contiguous
 * first, and only PMDs that copy and free a chain inside tx_burst get one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "mrdp_backlog.h"
#include "mrdp_int.h"
#include "mrdp_pcap.h"
#include "mrdp_svc_port.h"
#include "mrdp_pkt.h"

/* A plane's port: our own net_mrpkt socket (mrdp_pkt.c), or what
 * mrdp_svc_port.h says (the service, an ethdev). */
static uint16_t plane_rx(struct mrdp_dev *d, unsigned i, struct rte_mbuf **v,
			 uint16_t n)
{
	return mrdp_plane_rx(d, i, v, n);
}

static uint16_t plane_tx(struct mrdp_dev *d, unsigned i, struct rte_mbuf **v,
			 uint16_t n)
{
	return d->plane[i].pkt ? mrdp_pkt_tx(d->plane[i].pkt, v, n)
			       : mrdp_plane_tx(d, i, v, n);
}

static const uint8_t zero_mac[6];

/* Which plane a frame waiting for its neighbour goes out on. */
#define PLANE_OF(m) ((m)->hash.usr)

/* packet_type of a frame that references application memory, so the
 * accounting after tx_burst (which reset the chain) can still tell. */
#define ZC_MARK (RTE_PTYPE_L2_ETHER | RTE_PTYPE_L3_IPV4 | RTE_PTYPE_L4_UDP)

/* Payloads shorter than this are copied: a chain costs at least two more
 * mbufs (a segment and the ICRC), which a small copy does not repay. The
 * value is a judgement, not a measured crossover. */
#define MRDP_ZC_MIN 1024

_Static_assert(sizeof(struct rte_mbuf_ext_shared_info) <=
		       sizeof(((struct mrdp_dev *)0)->zc_shinfo),
	       "zc_shinfo holds an rte_mbuf_ext_shared_info");

static struct rte_mbuf_ext_shared_info *zc_shinfo(struct mrdp_dev *d)
{
	return (struct rte_mbuf_ext_shared_info *)(void *)d->zc_shinfo;
}

/* DPDK calls this when the last reference to an external buffer goes.
 * The device keeps a reference of its own, so it never runs; and the
 * memory is the application's: there is nothing for us to free. */
static void zc_free_cb(void *addr, void *opaque)
{
	(void)addr;
	(void)opaque;
}

/* Does this port copy a multi-segment mbuf and free it inside tx_burst?
 * Read in DPDK 22.11: af_packet copies every segment into its ring slot
 * and frees the chain; memif (copy mode) copies every segment into its
 * buffers and frees it, but with zero-copy=yes keeps the mbuf until the
 * peer is done; af_xdp copies pkt_len bytes from the first segment only.
 * Both good ones advertise MULTI_SEGS; unknown PMDs are not trusted. */
static int pmd_copies_chains(const struct mrdp_dev *d, unsigned idx,
			     const struct rte_eth_dev_info *info)
{
	char z[8];

	if (!(info->tx_offload_capa & RTE_ETH_TX_OFFLOAD_MULTI_SEGS) ||
	    !info->driver_name)
		return 0;
	if (!strcmp(info->driver_name, "net_af_packet"))
		return 1;
	if (!strcmp(info->driver_name, "net_memif")) {
		return !mrdp_devarg(d->conf.ports[idx], "zero-copy", z,
				    sizeof(z)) ||
		       !strcmp(z, "no");
	}
	return 0;
}

/* Decide, once, which planes send zero-copy frames. */
static void zc_setup(struct mrdp_dev *d)
{
	struct rte_mbuf_ext_shared_info *sh = zc_shinfo(d);
	int on = d->ops.tx_zc && mr_knob_get(&d->knobs, MR_KNOB_DP_ZEROCOPY);
	unsigned i;

	memset(sh, 0, sizeof(*sh));
	sh->free_cb = zc_free_cb;
	sh->fcb_opaque = d;
	/* The device's own reference: 1 + attached mbufs alive. */
	rte_mbuf_ext_refcnt_set(sh, 1);
	d->zc_any = 0;
	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];
		struct rte_eth_dev_info info;

		p->c.zerocopy = 0;
		/* A service port copies into its ring anyway. */
		if (!on || p->svc)
			continue;
		/* A software UDP checksum reads every payload byte anyway
		 * (and mrdp_encap_write wants them contiguous). */
		if (d->udp_csum && !p->tx_csum_offload)
			continue;
		/* net_mrpkt: the kernel copies a chain in sendmmsg. */
		if (p->pkt) {
			p->c.zerocopy = 1;
			d->zc_any = 1;
			continue;
		}
		if (rte_eth_dev_info_get(p->port_id, &info) != 0)
			continue;
		p->c.zerocopy = pmd_copies_chains(d, i, &info);
		d->zc_any |= p->c.zerocopy;
		MRDP_LOG("%s: plane %u (%s): zero-copy %s\n", d->conf.name, i,
			 info.driver_name ? info.driver_name : "?",
			 p->c.zerocopy ? "on" : "off");
	}
	d->zc_ready = 1;
}

/* Make a chain one contiguous mbuf (the head has room for a whole
 * frame): from here on it may wait, since it no longer references the
 * application's memory. */
static void linearize(struct mrdp_plane *p, struct rte_mbuf *m)
{
	struct rte_mbuf *s;
	uint8_t *dst;

	if (!m->next)
		return;
	dst = rte_pktmbuf_mtod_offset(m, uint8_t *, m->data_len);
	for (s = m->next; s; s = s->next) {
		memcpy(dst, rte_pktmbuf_mtod(s, const uint8_t *), s->data_len);
		dst += s->data_len;
	}
	rte_pktmbuf_free(m->next);
	m->next = NULL;
	m->nb_segs = 1;
	m->data_len = (uint16_t)m->pkt_len;
	m->packet_type = 0;
	p->c.tx_zc_linearized++;
}

/* The engine left the payload in registered memory (zc->nseg > 0); m
 * holds the headers at mtod + MRDP_HDR_MAX. Copy the payload and ICRC
 * after them: the frame is then what ops.tx would have made. */
static void zc_copy(struct rte_mbuf *m, const struct mr_tx_zc *zc)
{
	uint8_t *dst =
		rte_pktmbuf_mtod(m, uint8_t *) + MRDP_HDR_MAX + zc->hdr_len;
	unsigned i;

	for (i = 0; i < zc->nseg; i++) {
		memcpy(dst, zc->seg[i].addr, zc->seg[i].len);
		dst += zc->seg[i].len;
	}
	memcpy(dst, zc->icrc, MR_ICRC_LEN);
}

/* Chain an mbuf per payload segment, attached to the application's
 * memory, and one holding the ICRC, after the header mbuf m. Returns 0,
 * or -ENOBUFS (pool empty: nothing attached, the caller copies). */
static int zc_chain(struct mrdp_dev *d, struct rte_mbuf *m,
		    const struct mr_tx_zc *zc)
{
	struct rte_mbuf_ext_shared_info *sh = zc_shinfo(d);
	struct rte_mbuf *v[MR_TX_ZC_MAX_SEGS + 1], *prev = m;
	unsigned i, n = zc->nseg + 1;
	uint8_t *t;

	if (rte_pktmbuf_alloc_bulk(d->pool, v, n) != 0)
		return -ENOBUFS;
	m->data_len = (uint16_t)(MRDP_HDR_MAX + zc->hdr_len);
	for (i = 0; i < zc->nseg; i++) {
		/* The vdev PMDs that get chains copy with the CPU and never
		 * DMA: no IOVA is needed (nor known: the memory is the
		 * application's, not DPDK's). */
		rte_mbuf_ext_refcnt_update(sh, 1);
		rte_pktmbuf_attach_extbuf(
			v[i], (void *)(uintptr_t)zc->seg[i].addr, RTE_BAD_IOVA,
			(uint16_t)zc->seg[i].len, sh);
		v[i]->data_len = (uint16_t)zc->seg[i].len;
		prev->next = v[i];
		prev = v[i];
	}
	t = (uint8_t *)rte_pktmbuf_append(v[zc->nseg], MR_ICRC_LEN);
	memcpy(t, zc->icrc, MR_ICRC_LEN);
	prev->next = v[zc->nseg];
	m->nb_segs = (uint16_t)n + 1;
	m->packet_type = ZC_MARK;
	return 0;
}

/* Put a finished frame in the plane's burst; send when the burst fills. */
static void flush_plane(struct mrdp_dev *d, struct mrdp_plane *p);

static void stage_frame(struct mrdp_dev *d, unsigned plane, struct rte_mbuf *m)
{
	struct mrdp_plane *p = &d->plane[plane];

	if (p->nstage == MRDP_BURST)
		flush_plane(d, p);
	if (d->pcap)
		mrdp_pcap_frame(d->pcap, plane, MRDP_PCAP_OUT, m);
	p->stage[p->nstage++] = m;
}

/* A frame that leaves in this round's transmit step. */
static void stage(struct mrdp_dev *d, unsigned plane, struct rte_mbuf *m)
{
	stage_frame(d, plane, m);
	d->plane[plane].stage_urgent = 1;
}

/*
 * The transmit hold (dp_tx_hold_us; docs/cost-budget.md "Small
 * messages"): one transmit system call costs several times the packet work
 * of a small frame, and an application that posts small messages one
 * post_send at a time made one call per message. A small frame the engine
 * marked batch (its connection has other packets in flight, so its ACK
 * clock runs without it) may wait in the plane's burst for the ones posted
 * after it: the burst goes when it is full, when any frame that may not
 * wait joins it, or at hold_until (a deadline of mrdp_io_next_deadline, so
 * the round that runs then, an application's or the progress thread's,
 * sends it). Only frames copied into their mbuf wait: a zero-copy frame
 * must not outlive its round (the lifetime rule above).
 */
static void stage_held(struct mrdp_dev *d, unsigned plane, struct rte_mbuf *m,
		       uint64_t now, uint64_t hold_ns)
{
	struct mrdp_plane *p = &d->plane[plane];

	if (p->nstage == MRDP_BURST)
		flush_plane(d, p);
	if (!p->nstage)
		p->hold_until = now + hold_ns;
	stage_frame(d, plane, m);
	p->c.tx_held++;
}

static int may_hold(const struct mrdp_plane *p, uint64_t now)
{
	return p->nstage && !p->stage_urgent && !p->nbacklog &&
	       now < p->hold_until;
}

/* Count what the port took (ARP frames are counted where built). */
static void account_sent(struct mrdp_plane *p, struct rte_mbuf **v,
			 unsigned sent)
{
	unsigned i;

	for (i = 0; i < sent; i++) {
		if (v[i]->packet_type == RTE_PTYPE_L2_ETHER_ARP)
			continue;
		if (v[i]->packet_type == ZC_MARK)
			p->c.tx_zc_pkts++;
		p->c.tx_pkts++;
		p->c.tx_bytes += rte_pktmbuf_pkt_len(v[i]);
	}
}

static void flush_plane(struct mrdp_dev *d, struct mrdp_plane *p)
{
	unsigned sent, i;

	if (p->nbacklog) {
		sent = plane_tx(d, (unsigned)(p - d->plane), p->backlog,
				(uint16_t)p->nbacklog);
		account_sent(p, p->backlog, sent);
		memmove(p->backlog, p->backlog + sent,
			(p->nbacklog - sent) * sizeof(p->backlog[0]));
		p->nbacklog -= sent;
	}
	if (!p->nstage)
		return;
	sent = 0;
	if (!p->nbacklog)
		sent = plane_tx(d, (unsigned)(p - d->plane), p->stage,
				(uint16_t)p->nstage);
	account_sent(p, p->stage, sent);
	for (i = sent; i < p->nstage; i++) {
		if (p->nbacklog < MRDP_BACKLOG) {
			linearize(p, p->stage[i]);
			p->backlog[p->nbacklog++] = p->stage[i];
		} else {
			p->c.tx_drop[MRDP_TXD_PORT]++;
			rte_pktmbuf_free(p->stage[i]);
		}
	}
	p->nstage = 0;
	p->stage_urgent = 0;
	p->hold_until = UINT64_MAX;
}

static void send_arp(struct mrdp_dev *d, unsigned plane, int op,
		     const uint8_t tha[6], uint32_t tpa)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);
	uint8_t *f;

	if (!m) {
		d->plane[plane].c.tx_drop[MRDP_TXD_NO_MBUF]++;
		return;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, MRDP_ETH_MIN_FRAME);
	m->packet_type = RTE_PTYPE_L2_ETHER_ARP;
	mrdp_arp_write(f, op, d->me.mac, d->me.ip, tha, tpa);
	if (op == 1)
		d->plane[plane].c.arp_req_tx++;
	else
		d->plane[plane].c.arp_reply_tx++;
	stage(d, plane, m);
}

/* A neighbour solicitation for target on plane (MR-ENC-13), from our
 * link-local address. */
static void send_ns(struct mrdp_dev *d, unsigned plane, const uint8_t *target)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);
	uint8_t *f;

	if (!m) {
		d->plane[plane].c.tx_drop[MRDP_TXD_NO_MBUF]++;
		return;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, MRDP_ND_FRAME);
	m->packet_type = RTE_PTYPE_L2_ETHER_ARP; /* not a data frame */
	mrdp_nd_write_ns(f, d->me.mac, d->me.ll6, target);
	d->plane[plane].c.arp_req_tx++;
	stage(d, plane, m);
}

/* Answer a solicitation for one of our addresses (r from classify). */
static void send_na(struct mrdp_dev *d, unsigned plane, const struct mrdp_rx *r)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(d->pool);
	uint8_t *f;

	if (!m) {
		d->plane[plane].c.tx_drop[MRDP_TXD_NO_MBUF]++;
		return;
	}
	f = (uint8_t *)rte_pktmbuf_append(m, MRDP_ND_FRAME);
	m->packet_type = RTE_PTYPE_L2_ETHER_ARP;
	mrdp_nd_write_na(f, d->me.mac, r->target6, r->src_mac, r->src6);
	d->plane[plane].c.arp_reply_tx++;
	stage(d, plane, m);
}

static void neigh_request(void *user, uint32_t ip)
{
	struct mrdp_dev *d = user;
	struct mrdp_neigh *e = mrdp_neigh_find(d->neigh, ip);
	const uint8_t *a6 = NULL;
	uint8_t scope = 0;
	unsigned i;

	if (mr_gid_id_is6(ip)) {
		a6 = mrdp_addrs_get(d->addrs, ip, &scope);
		if (!a6)
			return;
	}
	/* Ask on the planes whose next hop it is (MR-ROUTE-3); one not yet
	 * tied to a plane may sit on any of them. A link-local router is
	 * one plane's (its scope). */
	for (i = 0; i < d->nplanes; i++) {
		if (scope && i != scope - 1u)
			continue;
		if (e && e->planes && !(e->planes & (1u << i)))
			continue;
		if (a6)
			send_ns(d, i, a6);
		else
			send_arp(d, i, 1, zero_mac, ip);
	}
	if (!a6)
		MRDP_LOG("%s: ARP who-has %u.%u.%u.%u\n", d->conf.name,
			 ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255);
	else
		MRDP_LOG("%s: ND solicitation for id 0x%x\n", d->conf.name, ip);
}

static void neigh_drop(void *user, void *pkt)
{
	struct mrdp_dev *d = user;
	struct rte_mbuf *m = pkt;

	d->plane[PLANE_OF(m)].c.tx_drop[MRDP_TXD_NEIGH_FAIL]++;
	rte_pktmbuf_free(m);
}

/* A neighbour just became known: send what waited for it. */
static void release_queue(struct mrdp_dev *d, struct mrdp_neigh *e)
{
	unsigned i;

	for (i = 0; i < e->nq; i++) {
		struct rte_mbuf *m = e->q[i];

		mrdp_encap_set_dst_mac(rte_pktmbuf_mtod(m, uint8_t *), e->mac);
		stage(d, PLANE_OF(m), m);
	}
	e->nq = 0;
}

void mrdp_io_learn(struct mrdp_dev *d, uint32_t ip, const uint8_t mac[6],
		   int create, uint64_t now)
{
	struct mrdp_neigh *e = mrdp_neigh_find(d->neigh, ip);

	/* The common case: a packet from a known peer at the known MAC,
	 * which confirms it (MR-ROUTE-8). */
	if (e && e->state == MRDP_NEIGH_REACHABLE &&
	    memcmp(e->mac, mac, 6) == 0) {
		e->confirmed_ns = now;
		return;
	}
	e = mrdp_neigh_learn(d->neigh, ip, mac, create, now);
	if (e && e->nq)
		release_queue(d, e);
}

/* Learn that the IPv6 address a (peer scope, and a plane's link-local
 * router scope if the book has it) is at mac. */
static void learn6(struct mrdp_dev *d, unsigned plane, const uint8_t a[16],
		   const uint8_t mac[6], int create, uint64_t now)
{
	uint32_t id;

	if (!mrdp_addrs_id(d->addrs, a, 0, create, &id))
		mrdp_io_learn(d, id, mac, create, now);
	if (mrdp_ip6_linklocal(a) &&
	    !mrdp_addrs_id(d->addrs, a, (uint8_t)(1 + plane), 0, &id))
		mrdp_io_learn(d, id, mac, create, now);
}

/* An IPv6 frame that classify kept: a data packet or ND (MR-ENC-13). */
static void rx_frame6(struct mrdp_dev *d, unsigned plane, const uint8_t *f,
		      size_t len, const struct mrdp_rx *r, uint64_t now)
{
	struct mrdp_plane *p = &d->plane[plane];
	struct mr_rx_meta meta = { .ecn_ce = r->ce };

	switch (r->kind) {
	case MRDP_PKT_DATA:
		/* A sender the book cannot name cannot be answered. */
		if (mrdp_addrs_id(d->addrs, r->src6, 0, 1, &meta.src)) {
			p->c.rx_drop[MRDP_RXD_NOT_OURS]++;
			return;
		}
		meta.dst =
			memcmp(r->dst6, d->me.ll6, 16) ? d->ip6_id : d->ll6_id;
		meta.l3_ip6 = f + r->l3_off;
		if (mrdp_nexthop_onlink(d, plane, meta.src))
			mrdp_io_learn(d, meta.src, r->src_mac, 1, now);
		p->c.rx_pkts++;
		p->c.rx_bytes += len;
		p->c.rx_ecn_ce += r->ce;
		if (d->ops.rx(d->ops.user, now, f + r->off, r->len, &meta) < 0)
			p->c.rx_drop[MRDP_RXD_ENGINE]++;
		break;
	case MRDP_PKT_ND_NS:
		p->c.arp_req_rx++;
		learn6(d, plane, r->src6, r->src_mac, 1, now);
		send_na(d, plane, r);
		break;
	case MRDP_PKT_ND_NA:
		p->c.arp_reply_rx++;
		/* An answer teaches what we asked for; an unsolicited one
		 * only updates what we know. */
		learn6(d, plane, r->target6, r->src_mac, 0, now);
		break;
	default:
		break;
	}
}

/* Returns 1 for a frame that was ours (engine packet or ARP), 0 for one
 * dropped: the host's own traffic must not keep the poller awake. */
static int rx_frame(struct mrdp_dev *d, unsigned plane, struct rte_mbuf *m,
		    uint64_t now)
{
	struct mrdp_plane *p = &d->plane[plane];
	unsigned flags = 0;
	const uint8_t *f;
	struct mrdp_rx r;
	size_t len = rte_pktmbuf_pkt_len(m);

	p->c.rx_frames++;
	if (m->nb_segs > 1) {
		if (len > d->max_frame) {
			p->c.rx_drop[MRDP_RXD_NOT_OURS]++;
			rte_pktmbuf_free(m);
			return 0;
		}
		f = rte_pktmbuf_read(m, 0, len, d->scratch);
	} else {
		f = rte_pktmbuf_mtod(m, const uint8_t *);
	}
	if (p->rx_csum_offload) {
		uint64_t ol = m->ol_flags;

		if ((ol & RTE_MBUF_F_RX_IP_CKSUM_MASK) ==
		    RTE_MBUF_F_RX_IP_CKSUM_GOOD)
			flags |= MRDP_CSUM_IP_GOOD;
		if ((ol & RTE_MBUF_F_RX_L4_CKSUM_MASK) ==
		    RTE_MBUF_F_RX_L4_CKSUM_GOOD)
			flags |= MRDP_CSUM_L4_GOOD;
	}
	mrdp_encap_classify(f, len, &d->me, flags, &r);
	if (r.v6 && r.kind != MRDP_PKT_DROP) {
		rx_frame6(d, plane, f, len, &r, now);
		rte_pktmbuf_free(m);
		return 1;
	}
	switch (r.kind) {
	case MRDP_PKT_DATA: {
		struct mr_rx_meta meta = { .src = r.src_ip,
					   .dst = d->me.ip,
					   .ecn_ce = r.ce };

		/* A routed peer's packets come from its last router: its
		 * MAC is not the peer's (MR-ROUTE-7). */
		if (mrdp_nexthop_onlink(d, plane, r.src_ip))
			mrdp_io_learn(d, r.src_ip, r.src_mac, 1, now);
		p->c.rx_pkts++;
		p->c.rx_bytes += len;
		p->c.rx_ecn_ce += r.ce;
		if (d->ops.rx(d->ops.user, now, f + r.off, r.len, &meta) < 0)
			p->c.rx_drop[MRDP_RXD_ENGINE]++;
		break;
	}
	case MRDP_PKT_ARP_REQ:
		p->c.arp_req_rx++;
		mrdp_io_learn(d, r.src_ip, r.src_mac, 1, now);
		send_arp(d, plane, 2, r.src_mac, r.src_ip);
		break;
	case MRDP_PKT_ARP_REPLY:
		p->c.arp_reply_rx++;
		/* Learn from replies to us; a gratuitous one only updates a
		 * peer we already know. */
		mrdp_io_learn(d, r.src_ip, r.src_mac, r.target_ip == d->me.ip,
			      now);
		break;
	default:
		/* Said once per plane: nothing else shows why a peer's
		 * traffic never arrives when its super-frames (net_mrpkt
		 * with gso=yes) meet a port of one frame per ring slot. */
		if (r.drop == MRDP_RXD_TRUNCATED &&
		    !p->c.rx_drop[MRDP_RXD_TRUNCATED])
			fprintf(stderr,
				"metaroce: plane %u: MetaRoCE frames longer "
				"than the port takes (%u bytes arrived): the "
				"peer sends UDP GSO super-frames; use a "
				"net_mrpkt port here or gso=no on the peer\n",
				plane, rte_pktmbuf_data_len(m));
		p->c.rx_drop[r.drop]++;
		break;
	}
	rte_pktmbuf_free(m);
	return r.kind != MRDP_PKT_DROP;
}

/* The neighbour entry of next hop nh on plane: tied to the plane (its ARP
 * goes there), and taken from the kernel's table when the kernel knows it
 * before we ask (MR-ROUTE-2). NULL if the table is full. */
static struct mrdp_neigh *next_hop(struct mrdp_dev *d, unsigned plane,
				   uint32_t nh, uint64_t now)
{
	struct mrdp_neigh *e = mrdp_neigh_lookup(d->neigh, nh, now);
	uint8_t mac[6];

	if (!e)
		return NULL;
	e->planes |= (uint8_t)(1u << plane);
	/* Being resolved: the kernel's entry, when it has one, answers
	 * before we ask (MR-ROUTE-2). An expired entry is re-verified by
	 * asking (MR-ROUTE-8): the kernel's last dump may be as old. */
	if (e->state == MRDP_NEIGH_INCOMPLETE && e->tries == 0 &&
	    mrdp_nexthop_kernel_mac(d, plane, nh, mac))
		mrdp_io_learn(d, nh, mac, 0, now);
	return e;
}

/* The outer addresses of a packet to dest: IPv4, or IPv6 from our
 * address of the same kind (MR-ADDR-2). 0, or -1 for an id that names no
 * address we can send to. */
static int fill_addrs(struct mrdp_dev *d, uint32_t dest, struct mrdp_hdr *h)
{
	const uint8_t *a;

	if (!mr_gid_id_is6(dest)) {
		h->v6 = 0;
		h->src_ip = d->me.ip;
		h->dst_ip = dest;
		return mrdp_ip_unicast(dest) ? 0 : -1;
	}
	a = mrdp_addrs_get(d->addrs, dest, NULL);
	if (!a)
		return -1;
	h->v6 = 1;
	memcpy(h->dst6, a, 16);
	if (mrdp_ip6_linklocal(a))
		memcpy(h->src6, d->me.ll6, 16);
	else if (d->me.has_ip6)
		memcpy(h->src6, d->me.ip6, 16);
	else
		return -1; /* a global peer, and no global address */
	return 0;
}

/* Our own IPv6 header for a packet looped back to us (the UD GRH of a
 * datagram to ourselves, MR-UD-5), into ip (40 bytes). */
static void loop_l3(struct mrdp_dev *d, uint32_t dest, size_t len, uint8_t *ip)
{
	static const uint8_t none[16];
	const uint8_t *a = mrdp_addrs_get(d->addrs, dest, NULL);

	mrdp_encap_ip6(ip, (uint16_t)(MRDP_UDP_LEN + len), a ? a : none,
		       a ? a : none);
}

/* Frame one engine packet (already at mtod + MRDP_HDR_MAX) and route it. */
static void tx_packet(struct mrdp_dev *d, struct rte_mbuf *m, size_t len,
		      const struct mr_tx_meta *meta, uint64_t now)
{
	unsigned plane = meta->plane % d->nplanes;
	struct mrdp_plane *p = &d->plane[plane];
	uint8_t *f = rte_pktmbuf_mtod(m, uint8_t *);
	struct mrdp_neigh *e;
	struct mrdp_hdr h;
	size_t hlen;
	uint32_t nh;

	if (mrdp_is_local(d, meta->dest)) {
		uint8_t l3[MRDP_IP6_LEN];
		struct mr_rx_meta rm = { .src = meta->dest,
					 .dst = meta->dest,
					 .ecn_ce = 0 };

		if (mr_gid_id_is6(meta->dest)) {
			loop_l3(d, meta->dest, len, l3);
			rm.l3_ip6 = l3;
		}
		d->loopback_pkts++;
		d->ops.rx(d->ops.user, now, f + MRDP_HDR_MAX, len, &rm);
		rte_pktmbuf_free(m);
		return;
	}
	memset(&h, 0, sizeof(h));
	if (fill_addrs(d, meta->dest, &h)) {
		p->c.tx_drop[MRDP_TXD_BAD_DEST]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (mrdp_nexthop_of(d, plane, meta->dest, &nh) != 0) {
		p->c.tx_drop[MRDP_TXD_NO_ROUTE]++;
		rte_pktmbuf_free(m);
		return;
	}
	e = next_hop(d, plane, nh, now);
	if (!e) {
		p->c.tx_drop[MRDP_TXD_NEIGH_FULL]++;
		rte_pktmbuf_free(m);
		return;
	}
	if (e->state == MRDP_NEIGH_FAILED) {
		p->c.tx_drop[MRDP_TXD_NEIGH_FAIL]++;
		rte_pktmbuf_free(m);
		return;
	}
	/* The engine wrote its packet after room for the larger header;
	 * an IPv4 frame starts that much later. */
	hlen = h.v6 ? MRDP_HDR6_LEN : MRDP_HDR_LEN;
	if (hlen < MRDP_HDR_MAX) {
		m->data_off = (uint16_t)(m->data_off + (MRDP_HDR_MAX - hlen));
		if (m->next)
			m->data_len =
				(uint16_t)(m->data_len - (MRDP_HDR_MAX - hlen));
		f = rte_pktmbuf_mtod(m, uint8_t *);
	}
	memcpy(h.src_mac, d->me.mac, 6);
	memcpy(h.dst_mac, mrdp_neigh_usable(e) ? e->mac : zero_mac, 6);
	/* Entropy 0 would put every path on one ECMP hash; never send it. */
	h.sport = meta->entropy ? meta->entropy
				: (uint16_t)(0xc000 | (meta->path_id & 0x3fff));
	h.flow = h.sport; /* MR-ENC-11 */
	h.dport = d->me.udp_port;
	h.ecn = MRDP_ECN_ECT0;
	if (!m->next)
		m->data_len = (uint16_t)(hlen + len);
	m->pkt_len = (uint32_t)(hlen + len);
	if (h.v6) {
		/* MR-ENC-12: the UDP checksum is mandatory over IPv6; in
		 * software it reads the payload contiguous. */
		if (!p->tx_csum_offload)
			linearize(p, m);
		mrdp_encap_write6(f, &h, len, !p->tx_csum_offload);
		if (p->tx_csum_offload) {
			m->l2_len = MRDP_ETH_LEN;
			m->l3_len = MRDP_IP6_LEN;
			m->ol_flags |=
				RTE_MBUF_F_TX_IPV6 | RTE_MBUF_F_TX_UDP_CKSUM;
		}
	} else if (p->tx_csum_offload) {
		mrdp_encap_write(f, &h, len, 0);
		/* The port fills both checksums. */
		mrdp_encap_offload4(f);
		m->l2_len = MRDP_ETH_LEN;
		m->l3_len = MRDP_IP4_LEN;
		m->ol_flags |= RTE_MBUF_F_TX_IPV4 | RTE_MBUF_F_TX_IP_CKSUM |
			       RTE_MBUF_F_TX_UDP_CKSUM;
	} else {
		mrdp_encap_write(f, &h, len, d->udp_csum);
	}
	if (mrdp_neigh_usable(e)) {
		uint64_t hold_ns = (uint64_t)mr_knob_get(
					   &d->knobs, MR_KNOB_DP_TX_HOLD_US) *
				   1000u;

		if (meta->batch && hold_ns && len < MRDP_ZC_MIN &&
		    m->packet_type != ZC_MARK && !p->svc)
			stage_held(d, plane, m, now, hold_ns);
		else
			stage(d, plane, m);
		return;
	}
	PLANE_OF(m) = plane;
	/* It waits for ARP beyond this round: it must not reference the
	 * application's memory (lifetime rule). */
	linearize(p, m);
	if (mrdp_neigh_enqueue(e, m) != 0) {
		p->c.tx_drop[MRDP_TXD_NEIGH_FULL]++;
		rte_pktmbuf_free(m);
	}
}

static int planes_backlogged(const struct mrdp_dev *d)
{
	unsigned i;

	for (i = 0; i < d->nplanes; i++)
		if (d->plane[i].nbacklog)
			return 1;
	return 0;
}

/* One frame of a net_mrpkt plane (mrdp_pkt_rx_each's callback). */
struct rx_one_arg {
	struct mrdp_dev *d;
	unsigned plane;
	uint64_t now;
};

static int rx_one(void *arg, struct rte_mbuf *m)
{
	struct rx_one_arg *a = arg;

	if (a->d->pcap)
		mrdp_pcap_frame(a->d->pcap, a->plane, MRDP_PCAP_IN, m);
	return rx_frame(a->d, a->plane, m, a->now);
}

int mrdp_io_round(struct mrdp_dev *d, uint64_t now)
{
	struct rte_mbuf *pkts[MRDP_BURST];
	struct mr_tx_zc zc;
	unsigned i, k, n;
	int work = 0;
	size_t cap = rte_pktmbuf_data_room_size(d->pool) -
		     RTE_PKTMBUF_HEADROOM - MRDP_HDR_MAX;

	if (!d->zc_ready)
		zc_setup(d);
	d->round_completed = 0;
	mrdp_nexthop_poll(d, now);
	zc.min_len = MRDP_ZC_MIN;
	for (i = 0; i < d->nplanes; i++) {
		if (d->plane[i].pkt) {
			/* net_mrpkt: frames handed one by one where the
			 * kernel put them (mrdp_pkt_rx_each). */
			struct rx_one_arg a = { d, i, now };

			work += mrdp_pkt_rx_each(
				d->plane[i].pkt,
				mrdp_pkt_rx_burst(d->plane[i].pkt), rx_one, &a);
			mrdp_pkt_rx_hold(d->plane[i].pkt, now);
			continue;
		}
		n = plane_rx(d, i, pkts, MRDP_BURST);
		for (k = 0; k < n; k++) {
			if (d->pcap)
				mrdp_pcap_frame(d->pcap, i, MRDP_PCAP_IN,
						pkts[k]);
			work += rx_frame(d, i, pkts[k], now);
		}
	}
	/* mrdp_completed(): a polling round that pushed a completion skips
	 * its transmit step, at most one round in a row (a stream of
	 * completions still transmits every other round). */
	if (d->round_poll && d->round_completed &&
	    !atomic_load_explicit(&d->tx_deferred, memory_order_relaxed)) {
		atomic_store_explicit(&d->tx_deferred, 1, memory_order_relaxed);
		d->tx_defers++;
		goto flush;
	}
	atomic_store_explicit(&d->tx_deferred, 0, memory_order_relaxed);
	if (d->ops.next_deadline && d->ops.expire &&
	    d->ops.next_deadline(d->ops.user) <= now)
		d->ops.expire(d->ops.user, now);

	mrdp_backlog_report(d); /* MR-MP-12 */
	/* Pull from the engine only while every port keeps up: what a port
	 * refuses waits in its backlog, and the engine keeps the rest. */
	for (k = 0; k < MRDP_TX_BUDGET; k++) {
		struct mr_tx_meta meta;
		struct rte_mbuf *m;
		size_t len;

		if (k % MRDP_BURST == 0) {
			for (i = 0; i < d->nplanes; i++)
				if (d->plane[i].nbacklog)
					flush_plane(d, &d->plane[i]);
			if (planes_backlogged(d))
				break;
		}
		m = rte_pktmbuf_alloc(d->pool);
		if (!m) {
			d->plane[0].c.tx_drop[MRDP_TXD_NO_MBUF]++;
			break;
		}
		memset(&meta, 0, sizeof(meta));
		zc.nseg = 0;
		if (d->zc_any)
			len = d->ops.tx_zc(d->ops.user, now,
					   rte_pktmbuf_mtod(m, uint8_t *) +
						   MRDP_HDR_MAX,
					   cap, &meta, &zc);
		else
			len = d->ops.tx(d->ops.user, now,
					rte_pktmbuf_mtod(m, uint8_t *) +
						MRDP_HDR_MAX,
					cap, &meta);
		if (len == 0 || len > cap) {
			rte_pktmbuf_free(m);
			break;
		}
		if (zc.nseg) {
			struct mrdp_plane *p =
				&d->plane[meta.plane % d->nplanes];

			/* Loopback goes to our own receive path, which wants
			 * it contiguous; a plane without zero-copy, or an
			 * empty pool, gets the copy ops.tx would have made. */
			if (!p->c.zerocopy || mrdp_is_local(d, meta.dest) ||
			    zc_chain(d, m, &zc) != 0) {
				zc_copy(m, &zc);
				p->c.tx_zc_linearized++;
			}
		}
		tx_packet(d, m, len, &meta, now);
		work++;
	}
	mrdp_neigh_tick(d->neigh, now, neigh_request, neigh_drop, d);
flush:
	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];

		if (may_hold(p, now))
			continue;
		if (p->nstage && !p->stage_urgent && !p->nbacklog)
			p->c.tx_hold_flushes++;
		flush_plane(d, p);
	}
	/* The lifetime rule, checked: every attached mbuf is gone. */
	if (d->zc_any && rte_mbuf_ext_refcnt_read(zc_shinfo(d)) != 1) {
		d->zc_outlived++;
		MRDP_LOG("%s: %u mbufs still reference application memory\n",
			 d->conf.name,
			 rte_mbuf_ext_refcnt_read(zc_shinfo(d)) - 1u);
	}
	if (work) {
		d->progress_rounds++;
		atomic_store_explicit(&d->last_work_ns, now,
				      memory_order_relaxed);
	}
	return work;
}

int mrdp_io_pending(const struct mrdp_dev *d)
{
	return atomic_load_explicit(&d->tx_deferred, memory_order_relaxed) ||
	       planes_backlogged(d);
}

void mrdp_io_drain(struct mrdp_dev *d)
{
	struct rte_mbuf *pkts[MRDP_BURST];
	unsigned i, n, k, rounds;

	for (i = 0; i < d->nplanes; i++) {
		/* net_mrpkt: its ring as it is now, and in rx=block mode
		 * the block being filled, whose frames would be handed out
		 * with later ones when it retires (mrdp_pkt_drain). */
		if (d->plane[i].pkt) {
			mrdp_pkt_drain(d->plane[i].pkt);
			continue;
		}
		for (rounds = 0; rounds < MRDP_RING / MRDP_BURST * 16;
		     rounds++) {
			n = plane_rx(d, i, pkts, MRDP_BURST);
			for (k = 0; k < n; k++)
				rte_pktmbuf_free(pkts[k]);
			if (n < MRDP_BURST)
				break;
		}
	}
}

uint64_t mrdp_io_next_deadline(struct mrdp_dev *d)
{
	uint64_t t = mrdp_neigh_next_deadline(d->neigh), e;
	unsigned i;

	for (i = 0; i < d->nplanes; i++)
		if (d->plane[i].nstage && !d->plane[i].stage_urgent &&
		    d->plane[i].hold_until < t)
			t = d->plane[i].hold_until;
	if (d->ops.next_deadline) {
		e = d->ops.next_deadline(d->ops.user);
		if (e < t)
			t = e;
	}
	return t;
}

int mrdp_io_resolve(struct mrdp_dev *d, uint32_t ip, uint8_t mac[6],
		    uint64_t now)
{
	unsigned i, routed = 0, pending = 0;
	struct mrdp_neigh *e;
	uint32_t nh;

	if (mr_gid_id_is6(ip) ? !mrdp_addrs_get(d->addrs, ip, NULL)
			      : !mrdp_ip_unicast(ip))
		return -EINVAL;
	if (mrdp_is_local(d, ip)) {
		if (mac)
			memcpy(mac, d->me.mac, 6);
		return 1;
	}
	for (i = 0; i < d->nplanes; i++) {
		if (mrdp_nexthop_of(d, i, ip, &nh) != 0)
			continue;
		e = next_hop(d, i, nh, now);
		if (!e)
			return -ENOSPC;
		if (!mrdp_neigh_usable(e))
			pending++;
		else if (mac && !routed)
			memcpy(mac, e->mac, 6);
		routed++;
	}
	if (!routed)
		return -ENETUNREACH;
	if (!pending)
		return 1;
	mrdp_neigh_tick(d->neigh, now, neigh_request, neigh_drop, d);
	for (i = 0; i < d->nplanes; i++)
		flush_plane(d, &d->plane[i]);
	return pending ? 0 : 1;
}

void mrdp_io_release(struct mrdp_dev *d)
{
	unsigned i, k;

	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];

		for (k = 0; k < p->nstage; k++)
			rte_pktmbuf_free(p->stage[k]);
		for (k = 0; k < p->nbacklog; k++)
			rte_pktmbuf_free(p->backlog[k]);
		p->nstage = p->nbacklog = 0;
	}
	if (!d->neigh)
		return;
	for (i = 0; i < MRDP_NEIGH_SIZE; i++) {
		struct mrdp_neigh *e = &d->neigh->e[i];

		for (k = 0; k < e->nq; k++)
			rte_pktmbuf_free(e->q[k]);
		e->nq = 0;
	}
}
