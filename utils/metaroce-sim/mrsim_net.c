// SPDX-License-Identifier: BSD-2-Clause
/*
 * The network (mrsim_net.h): a two-tier leaf-spine Clos per plane; host
 * port k attaches to plane k. Every port serialises at its rate, then
 * the packet propagates for the link delay. Switch output queues hold
 * buf_bytes (drop-tail beyond), mark CE by a step or a RED-like ramp on
 * the queue seen at enqueue, and leaves spread over spines by a hash of
 * the 5-tuple with a per-switch seed (so the UDP source port, the path's
 * entropy, picks the spine, as in real fabrics). Loss and corruption are
 * drawn once per packet, on the last hop (switch -> host).
 */
#include <stdlib.h>
#include <string.h>

#include "mrsim_net.h"
#include "mrsim_redraw.h"

uint64_t mrsim_rand(uint64_t *s)
{
	/* splitmix64: small, good enough, and every stream seeded apart */
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static double rand01(uint64_t *s)
{
	return (double)(mrsim_rand(s) >> 11) * (1.0 / 9007199254740992.0);
}

uint32_t mrsim_ecmp_hash(uint64_t seed, uint32_t src, uint32_t dst,
			 uint16_t sport, uint16_t dport)
{
	/* The 5-tuple (addresses, UDP ports; the protocol is always UDP)
	 * mixed with the switch's seed, as a switch's hash would. */
	uint64_t x = seed ^ ((uint64_t)src << 32 | dst);

	x ^= ((uint64_t)sport << 16 | dport) * 0x9e3779b97f4a7c15ull;
	x = (x ^ (x >> 33)) * 0xff51afd7ed558ccdull;
	x = (x ^ (x >> 33)) * 0xc4ceb9fe1a85ec53ull;
	return (uint32_t)(x ^ (x >> 33));
}

struct mrsim_pkt *mrsim_pkt_alloc(struct mrsim_world *w)
{
	struct mrsim_pkt *p = w->free_pkts;

	if (p) {
		w->free_pkts = p->next;
	} else {
		p = malloc(sizeof(*p));
		if (!p) {
			fprintf(stderr, "metaroce-sim: out of memory\n");
			exit(1);
		}
		w->pkts_alloc++;
	}
	p->next = NULL;
	p->ce = p->corrupted = 0;
	return p;
}

void mrsim_pkt_free(struct mrsim_world *w, struct mrsim_pkt *p)
{
	p->next = w->free_pkts;
	w->free_pkts = p;
}

int mrsim_port_failed(const struct mrsim_port *p, uint64_t t)
{
	int i;

	for (i = 0; i < p->nfail; i++)
		if (t >= p->fail[i]->at_ps && t < p->fail[i]->until_ps)
			return 1;
	return 0;
}

static uint64_t wire_bytes(const struct mrsim_pkt *pkt)
{
	return pkt->len + MRSIM_WIRE_OVERHEAD;
}

void mrsim_port_idle(struct mrsim_port *p, int why)
{
	struct mrsim_world *w = p->w;

	if (p->idle_why != MRSIM_BUSY)
		w->st.sample_idle[p->kind != MRSIM_HOST_UP][p->idle_why] +=
			w->q.now - p->idle_from;
	p->idle_why = (uint8_t)why;
	p->idle_from = w->q.now;
}

void mrsim_host_down_idle(struct mrsim_world *w, int host)
{
	struct mrsim_host *h = &w->host[host];
	int k, n = w->scn.planes, queued = 0;

	for (k = 0; k < n; k++)
		queued += h->down[k]->qpkts >= 2;
	for (k = 0; k < n; k++) {
		struct mrsim_port *p = h->down[k];

		mrsim_port_idle(p, p->busy ? MRSIM_BUSY
				   : queued ? MRSIM_IDLE_SKEW
					    : MRSIM_IDLE_ALL);
	}
}

static void start(struct mrsim_port *p)
{
	uint64_t ser = wire_bytes(p->head) * 8000000ull / p->mbps;

	p->busy = 1;
	mrsim_evq_push(&p->w->q, p->w->q.now + ser, MRSIM_EV_PORT_DONE, 0, p);
}

void mrsim_port_enqueue(struct mrsim_port *p, struct mrsim_pkt *pkt)
{
	uint64_t len = wire_bytes(pkt);

	if (p->buf_bytes && p->qbytes + len > p->buf_bytes) {
		p->drops_overflow++;
		mrsim_pkt_free(p->w, pkt);
		return;
	}
	if (p->ecn_min && p->qbytes >= p->ecn_min) {
		double prob = 1;

		if (p->ecn_max > p->ecn_min && p->qbytes < p->ecn_max)
			prob = p->ecn_pmax * (double)(p->qbytes - p->ecn_min) /
			       (double)(p->ecn_max - p->ecn_min);
		if (prob >= 1 || rand01(&p->rng) < prob) {
			if (!pkt->ce)
				p->ecn_marked++;
			pkt->ce = 1;
		}
	}
	if (p->tail)
		p->tail->next = pkt;
	else
		p->head = pkt;
	p->tail = pkt;
	pkt->next = NULL;
	p->qbytes += len;
	p->qpkts++;
	if (p->qbytes > p->qmax)
		p->qmax = p->qbytes;
	if (!p->busy)
		start(p);
	if (p->to_host >= 0)
		mrsim_host_down_idle(p->w, p->to_host);
}

void mrsim_port_done(struct mrsim_port *p)
{
	struct mrsim_world *w = p->w;
	struct mrsim_pkt *pkt = p->head;
	uint64_t len = wire_bytes(pkt), now = w->q.now;

	p->head = pkt->next;
	if (!p->head)
		p->tail = NULL;
	p->qbytes -= len;
	p->qpkts--;
	p->busy = 0;
	p->tx_pkts++;
	p->tx_bytes += len;
	p->sample_bytes += len;
	if (mrsim_port_failed(p, now)) {
		/* A failed link carries nothing. */
		p->drops_failed++;
		mrsim_redraw_drop(w, pkt, now);
		mrsim_pkt_free(w, pkt);
	} else if (p->loss > 0 && rand01(&p->rng) < p->loss) {
		p->drops_loss++;
		mrsim_pkt_free(w, pkt);
	} else {
		if (p->corrupt > 0 && rand01(&p->rng) < p->corrupt) {
			/* One flipped bit anywhere: the ICRC must catch it. */
			uint64_t r = mrsim_rand(&p->rng);

			pkt->data[r % pkt->len] ^= (uint8_t)(1u << (r >> 61));
			pkt->corrupted = 1;
			p->corrupted++;
		}
		pkt->hop = p;
		mrsim_evq_push(&w->q, now + p->delay_ps, MRSIM_EV_ARRIVE, 0,
			       pkt);
	}
	if (p->head)
		start(p);
	if (p->to_host >= 0)
		mrsim_host_down_idle(w, p->to_host);
	if (p->kind == MRSIM_HOST_UP)
		mrsim_host_pump(&w->host[p->host]);
}

void mrsim_arrive(struct mrsim_world *w, struct mrsim_pkt *pkt)
{
	struct mrsim_port *hop = pkt->hop;
	struct mrsim_switch *sw = hop->to_sw;
	int hpl = w->scn.hosts_per_leaf, dleaf = pkt->dst / hpl;

	if (hop->to_host >= 0) {
		mrsim_host_rx(&w->host[hop->to_host], pkt);
		return;
	}
	if (sw->spine) {
		mrsim_port_enqueue(sw->down[dleaf], pkt);
	} else if (dleaf == sw->idx) {
		mrsim_port_enqueue(sw->down[pkt->dst % hpl], pkt);
	} else {
		uint32_t hsh = mrsim_ecmp_hash(sw->seed, pkt->src, pkt->dst,
					       pkt->sport, MRSIM_ROCE_PORT);

		mrsim_port_enqueue(sw->up[hsh % (uint32_t)w->scn.spines], pkt);
	}
}

static struct mrsim_port *new_port(struct mrsim_world *w, int kind, int plane,
				   uint64_t mbps)
{
	struct mrsim_port *p = calloc(1, sizeof(*p));
	const struct mrsim_scn *s = &w->scn;
	int i;

	if (!p)
		return NULL;
	p->w = w;
	p->kind = (uint8_t)kind;
	p->plane = (uint8_t)plane;
	p->mbps = mbps ? mbps : 1;
	p->delay_ps = (uint64_t)(s->delay_ns * 1000.0);
	p->to_host = -1;
	p->rng = s->seed * 0x100000001b3ull + (uint64_t)w->nport * 7919 + 1;
	if (kind != MRSIM_HOST_UP) {
		p->buf_bytes = (uint64_t)s->buffer_kb * 1024;
		p->ecn_min = (uint64_t)s->ecn_kb * 1024;
		p->ecn_max =
			(uint64_t)(s->ecn_max_kb ? s->ecn_max_kb : s->ecn_kb) *
			1024;
		p->ecn_pmax = s->ecn_pmax;
	}
	if (kind == MRSIM_LEAF_DOWN) {
		p->loss = s->loss;
		p->corrupt = s->corrupt;
	}
	for (i = 0; i < s->nfail; i++)
		if (s->fail[i].plane == plane && s->fail[i].leaf < 0)
			p->fail[p->nfail++] = &s->fail[i];
	w->port[w->nport++] = p;
	return p;
}

static void link_fail(struct mrsim_world *w, struct mrsim_port *p)
{
	const struct mrsim_scn *s = &w->scn;
	int i;

	for (i = 0; i < s->nfail; i++)
		if (s->fail[i].plane == p->plane &&
		    s->fail[i].leaf == p->leaf && s->fail[i].spine == p->spine)
			p->fail[p->nfail++] = &s->fail[i];
}

int mrsim_net_build(struct mrsim_world *w, char *err, size_t errlen)
{
	const struct mrsim_scn *s = &w->scn;
	int hpl = s->hosts_per_leaf, k, l, h, sp, maxports;

	w->leaves = (s->hosts + hpl - 1) / hpl;
	w->host_mbps = (uint64_t)(s->link_gbps * 1000.0);
	w->up_mbps = (uint64_t)((double)hpl * s->link_gbps * 1000.0 /
				(s->spines * s->oversub));
	maxports = s->planes * (2 * s->hosts + 2 * w->leaves * s->spines);
	w->port = calloc((size_t)maxports, sizeof(*w->port));
	w->leaf = calloc((size_t)(s->planes * w->leaves), sizeof(*w->leaf));
	w->spine = calloc((size_t)(s->planes * s->spines), sizeof(*w->spine));
	if (!w->port || !w->leaf || !w->spine)
		goto nomem;
	for (k = 0; k < s->planes; k++) {
		for (l = 0; l < w->leaves; l++) {
			struct mrsim_switch *lf = &w->leaf[k * w->leaves + l];

			lf->plane = k;
			lf->idx = l;
			lf->seed = mrsim_ecmp_hash(s->seed, (uint32_t)k,
						   (uint32_t)l, 1, 0);
			lf->down = calloc((size_t)hpl, sizeof(*lf->down));
			lf->up = calloc((size_t)s->spines, sizeof(*lf->up));
			if (!lf->down || !lf->up)
				goto nomem;
		}
		for (sp = 0; w->leaves > 1 && sp < s->spines; sp++) {
			struct mrsim_switch *x = &w->spine[k * s->spines + sp];

			x->spine = 1;
			x->plane = k;
			x->idx = sp;
			x->down = calloc((size_t)w->leaves, sizeof(*x->down));
			if (!x->down)
				goto nomem;
		}
		for (h = 0; h < s->hosts; h++) {
			struct mrsim_switch *lf =
				&w->leaf[k * w->leaves + h / hpl];
			struct mrsim_port *up, *down;

			up = new_port(w, MRSIM_HOST_UP, k, w->host_mbps);
			down = new_port(w, MRSIM_LEAF_DOWN, k, w->host_mbps);
			if (!up || !down)
				goto nomem;
			up->host = down->host = (uint16_t)h;
			up->leaf = down->leaf = (uint16_t)(h / hpl);
			up->to_sw = lf;
			down->to_host = h;
			lf->down[h % hpl] = down;
			w->host[h].nic[k] = up;
			w->host[h].down[k] = down;
		}
		for (l = 0; w->leaves > 1 && l < w->leaves; l++) {
			for (sp = 0; sp < s->spines; sp++) {
				struct mrsim_switch *lf =
					&w->leaf[k * w->leaves + l];
				struct mrsim_switch *x =
					&w->spine[k * s->spines + sp];
				struct mrsim_port *up, *down;

				up = new_port(w, MRSIM_LEAF_UP, k, w->up_mbps);
				down = new_port(w, MRSIM_SPINE_DOWN, k,
						w->up_mbps);
				if (!up || !down)
					goto nomem;
				up->leaf = down->leaf = (uint16_t)l;
				up->spine = down->spine = (uint16_t)sp;
				link_fail(w, up);
				link_fail(w, down);
				up->to_sw = x;
				down->to_sw = lf;
				lf->up[sp] = up;
				x->down[l] = down;
			}
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory building the topology");
	return -1;
}

void mrsim_net_free(struct mrsim_world *w)
{
	int i;

	for (i = 0; i < w->nport; i++) {
		struct mrsim_pkt *p = w->port[i]->head;

		while (p) {
			struct mrsim_pkt *n = p->next;

			free(p);
			p = n;
		}
		free(w->port[i]);
	}
	for (i = 0; w->leaf && i < w->scn.planes * w->leaves; i++) {
		free(w->leaf[i].down);
		free(w->leaf[i].up);
	}
	for (i = 0; w->spine && i < w->scn.planes * w->scn.spines; i++)
		free(w->spine[i].down);
	while (w->free_pkts) {
		struct mrsim_pkt *n = w->free_pkts->next;

		free(w->free_pkts);
		w->free_pkts = n;
	}
	free(w->port);
	free(w->leaf);
	free(w->spine);
}
