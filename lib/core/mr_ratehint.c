// SPDX-License-Identifier: BSD-2-Clause
/* The receiver's demand-aware rate hint (MR-CC-7, MR-CC-8, MR-CC-12). */
#include "mr_ratehint.h"

#include <stdlib.h>
#include <string.h>

#include "mr_be.h"
#include "mr_err.h"

int mr_ratehint_init(struct mr_ratehint *h, uint32_t link_mbps,
		     uint64_t epoch_ns, uint32_t cap,
		     struct mr_ratehint_conn **act, uint32_t *demand)
{
	if (!h || !link_mbps || !epoch_ns || !cap || !act || !demand)
		return -MR_EINVAL;
	memset(h, 0, sizeof(*h));
	h->link_mbps = link_mbps;
	h->port_mbps = link_mbps;
	h->nplanes = 1;
	h->live = 1;
	h->epoch_ns = epoch_ns;
	h->cap = cap;
	h->act = act;
	h->demand = demand;
	h->level = link_mbps;
	return 0;
}

uint32_t mr_ratehint_level(uint32_t link_mbps, const uint32_t *demand,
			   uint32_t n, uint32_t greedy)
{
	uint64_t rem = link_mbps;
	uint64_t left = (uint64_t)n + greedy;
	uint32_t i;

	if (!left)
		return link_mbps;
	/* Water-filling: a demand below the equal share of what is left is
	 * met in full; the first one at or above it, and all after it
	 * (ascending), share the rest. The last sender standing gets all
	 * that is left, whatever it asked: a hint is a ceiling. */
	for (i = 0; i < n && left > 1; i++) {
		if (demand[i] >= rem / left)
			break;
		rem -= demand[i];
		left--;
	}
	rem /= left;
	return rem ? (uint32_t)rem : 1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void relevel(struct mr_ratehint *h)
{
	uint64_t r = (uint64_t)h->port_mbps * h->live / h->nplanes;

	h->link_mbps = r ? (uint32_t)r : 1;
	h->level = mr_ratehint_level(h->link_mbps, h->demand, h->ndem, h->nnew);
}

static void unlist(struct mr_ratehint *h, struct mr_ratehint_conn *c)
{
	struct mr_ratehint_conn *m = h->act[--h->nact];

	h->act[c->slot] = m;
	m->slot = c->slot;
	c->listed = 0;
	c->fresh = 0;
}

/* Close the epochs before now's: each listed connection's demand is
 * twice its mean rate over those of the two epochs before now's it
 * delivered in; one silent in both leaves the list. */
static void hint_roll(struct mr_ratehint *h, uint64_t now)
{
	uint64_t e = now / h->epoch_ns;
	uint32_t i = 0;

	if (e <= h->epoch)
		return;
	h->ndem = 0;
	while (i < h->nact) {
		struct mr_ratehint_conn *c = h->act[i];
		uint64_t b, d;

		if (c->last != e && c->last + 1 != e) {
			unlist(h, c); /* act[i] is another one now */
			continue;
		}
		if (c->last == e && c->b_prev && !c->young) /* in both */
			b = c->b_last + c->b_prev;
		else /* in one, or its first was a part of one */
			b = 2 * c->b_last;
		d = b * 8000 / h->epoch_ns;
		c->dem = d > UINT32_MAX ? UINT32_MAX : d ? (uint32_t)d : 1;
		c->young = 0;
		/* MR-CC-17: its first epoch saw only a part of it (it began
		 * in it, and its first packets waited for the first hint):
		 * measured there, the senders of an incast that began late
		 * in the epoch were met at a fraction of their share and the
		 * others got the rest (64-to-1: 2102 Mb/s, R/48, for 21-66
		 * us). Greedy, as a newcomer, one more epoch. */
		if (h->start && c->fresh && c->last == e) {
			c->dem = UINT32_MAX;
			c->young = 1;
		}
		h->demand[h->ndem++] = c->dem;
		c->fresh = 0;
		i++;
	}
	qsort(h->demand, h->ndem, sizeof(*h->demand), cmp_u32);
	h->nnew = 0;
	h->epoch = e;
	relevel(h);
}

/* MR-CC-12: the planes that deliver. Judged only while some plane
 * delivered within the silence limit (an idle port says nothing), a
 * plane never heard from is not judged (a connection's first packets may
 * all have gone one plane), and a silent plane is down only once the
 * others delivered 32 packets per plane since its last one (sprayed, it
 * would have had some of them; a few slow senders' packets, at the start
 * or the end of a transfer, do not visit every plane in two RTTs:
 * judged on time alone, or with 8 packets per plane, the 64-host
 * all-to-all at 8 planes lost 1.7%: its first RTTs are slow). */
static void planes_check(struct mr_ratehint *h, uint64_t now)
{
	uint64_t quiet = h->epoch_ns / 2, newest = 0;
	unsigned p, live = 0;

	if (h->nplanes < 2)
		return;
	for (p = 0; p < h->nplanes; p++)
		if (h->plane_rx[p] > newest)
			newest = h->plane_rx[p];
	if (!newest || now + 1 - newest > quiet) {
		live = h->nplanes;
	} else {
		for (p = 0; p < h->nplanes; p++)
			live += !h->plane_rx[p] ||
				now + 1 - h->plane_rx[p] <= quiet ||
				h->rx_pkts - h->plane_pk[p] <
					32ull * h->nplanes;
	}
	if (live != h->live) {
		h->live = (uint8_t)live;
		relevel(h);
	}
}

static void plane_rx(struct mr_ratehint *h, unsigned plane, uint64_t now)
{
	h->rx_pkts++;
	if (plane < h->nplanes) {
		h->plane_rx[plane] = now + 1;
		h->plane_pk[plane] = h->rx_pkts;
	}
}

void mr_ratehint_on_rx(struct mr_ratehint *h, struct mr_ratehint_conn *c,
		       uint32_t bytes, unsigned plane, uint64_t now)
{
	hint_roll(h, now);
	plane_rx(h, plane, now);
	if (c->last != h->epoch + 1) {
		/* Its first packet in this epoch. */
		c->b_prev = c->last == h->epoch ? c->b_last : 0;
		c->b_last = 0;
		c->last = h->epoch + 1;
		if (!c->listed && h->nact < h->cap) {
			c->slot = h->nact;
			h->act[h->nact++] = c;
			c->listed = 1;
			c->fresh = 1;
		}
		/* A newcomer, or one past the capacity whose demand is never
		 * measured: greedy in this epoch's hint. */
		if (c->fresh || !c->listed) {
			h->nnew++;
			relevel(h);
		}
	}
	c->b_last += bytes;
}

/* Take c out of the hint: its newcomer's share back, or its measured
 * demand out of demand[] (a listed connection that is not fresh has
 * c->dem there; any entry of that value is the same to the level). */
static void leave(struct mr_ratehint *h, struct mr_ratehint_conn *c)
{
	int counted = c->last == h->epoch + 1 && (c->fresh || !c->listed);
	uint32_t i;

	if (counted && h->nnew) {
		h->nnew--;
	} else if (c->listed && !c->fresh) {
		for (i = 0; i < h->ndem && h->demand[i] != c->dem; i++)
			;
		if (i < h->ndem) {
			memmove(&h->demand[i], &h->demand[i + 1],
				(h->ndem - i - 1) * sizeof(*h->demand));
			h->ndem--;
		}
	}
	if (c->listed && c->slot < h->nact && h->act[c->slot] == c)
		unlist(h, c);
	/* Its next newer packet makes it a newcomer, whatever epoch. */
	c->last = 0;
	c->b_last = 0;
	c->b_prev = 0;
	relevel(h);
}

void mr_ratehint_on_pkt(struct mr_ratehint *h, struct mr_ratehint_conn *c,
			uint32_t bytes, unsigned plane, uint32_t ssn, int idle,
			uint64_t now)
{
	if (idle) {
		hint_roll(h, now);
		plane_rx(h, plane, now);
		if (!c->idle || mr_seq_lt(c->idle_ssn, ssn))
			c->idle_ssn = ssn;
		c->idle = 1;
		if (c->listed || c->last == h->epoch + 1)
			leave(h, c);
		return;
	}
	if (c->idle && !mr_seq_lt(c->idle_ssn, ssn)) {
		/* Older than its IDLE packet: late, it says no new demand. */
		hint_roll(h, now);
		plane_rx(h, plane, now);
		return;
	}
	c->idle = 0;
	mr_ratehint_on_rx(h, c, bytes, plane, now);
}

void mr_ratehint_conn_gone(struct mr_ratehint *h, struct mr_ratehint_conn *c)
{
	int was_new = c->last == h->epoch + 1 && (c->fresh || !c->listed);

	if (c->listed && c->slot < h->nact && h->act[c->slot] == c)
		unlist(h, c);
	if (was_new && h->nnew) {
		h->nnew--;
		relevel(h);
	}
	mr_ratehint_conn_init(c);
}

int mr_ratehint_set_link(struct mr_ratehint *h, uint32_t link_mbps)
{
	if (!link_mbps)
		return -MR_EINVAL;
	h->port_mbps = link_mbps;
	relevel(h);
	return 0;
}

void mr_ratehint_set_start(struct mr_ratehint *h, uint32_t pkt_bytes)
{
	h->start = pkt_bytes != 0;
	h->slot_bytes = pkt_bytes;
	h->slot_next = 0;
}

uint64_t mr_ratehint_first_ack(struct mr_ratehint *h,
			       struct mr_ratehint_conn *c, uint64_t due)
{
	uint64_t t;

	if (!h->start)
		return due;
	if (c->first_ack)
		return c->first_ack - 1 > due ? c->first_ack - 1 : due;
	/* Each first ACK lets its sender send about one full packet (its
	 * share of an incast's pipe is less than one): spaced by that
	 * packet's time at the port, the packets arrive one after the
	 * other instead of N at once (64-to-1: 64 x 4222 B within ~6 us,
	 * and N x mtu - BDP stood, MR-CC-8). */
	t = h->slot_next > due ? h->slot_next : due;
	h->slot_next = t + (uint64_t)h->slot_bytes * 8000 / h->link_mbps;
	c->first_ack = t + 1;
	return t;
}

int mr_ratehint_set_planes(struct mr_ratehint *h, unsigned n)
{
	if (!n)
		return -MR_EINVAL;
	/* Past 16 planes the first 16 are judged and stand for all. */
	h->nplanes = (uint8_t)(n < MR_RATEHINT_MAX_PLANES ? n
							  : MR_RATEHINT_MAX_PLANES);
	h->live = h->nplanes;
	memset(h->plane_rx, 0, sizeof(h->plane_rx));
	memset(h->plane_pk, 0, sizeof(h->plane_pk));
	relevel(h);
	return 0;
}

uint32_t mr_ratehint_get(struct mr_ratehint *h, uint64_t now)
{
	hint_roll(h, now);
	planes_check(h, now);
	return h->level;
}
