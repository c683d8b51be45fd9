// SPDX-License-Identifier: BSD-2-Clause
/* The scripted link: see mrsim_link.h. */
#include <stdlib.h>
#include <string.h>

#include "mrsim_link.h"

int mrsim_dir_init(struct mrsim_dir *d, const struct mrsim_link_cfg *cfg,
		   uint64_t seed, uint64_t stream)
{
	size_t i;

	memset(d, 0, sizeof(*d));
	d->cfg = *cfg;
	for (i = 1; i < cfg->n_drop; i++)
		if (cfg->drop_idx[i] <= cfg->drop_idx[i - 1])
			return -1;
	mrsim_rand_seed(&d->rand, seed, stream);
	return 0;
}

void mrsim_dir_fini(struct mrsim_dir *d)
{
	struct mrsim_pkt *p;
	size_t i;

	for (i = 0; i < d->n; i++)
		free(d->heap[i]);
	while ((p = d->free)) {
		d->free = p->next_free;
		free(p);
	}
	free(d->heap);
	d->heap = NULL;
	d->n = d->cap = 0;
}

static int pkt_before(const struct mrsim_pkt *a, const struct mrsim_pkt *b)
{
	return a->t < b->t || (a->t == b->t && a->seq < b->seq);
}

static void heap_up(struct mrsim_dir *d, size_t i)
{
	while (i) {
		size_t parent = (i - 1) / 2;
		struct mrsim_pkt *t;

		if (!pkt_before(d->heap[i], d->heap[parent]))
			break;
		t = d->heap[i];
		d->heap[i] = d->heap[parent];
		d->heap[parent] = t;
		i = parent;
	}
}

static void heap_down(struct mrsim_dir *d, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		struct mrsim_pkt *t;

		if (l < d->n && pkt_before(d->heap[l], d->heap[m]))
			m = l;
		if (r < d->n && pkt_before(d->heap[r], d->heap[m]))
			m = r;
		if (m == i)
			break;
		t = d->heap[i];
		d->heap[i] = d->heap[m];
		d->heap[m] = t;
		i = m;
	}
}

static struct mrsim_pkt *pkt_get(struct mrsim_dir *d)
{
	struct mrsim_pkt *p = d->free;

	if (p) {
		d->free = p->next_free;
		return p;
	}
	return malloc(sizeof(*p));
}

void mrsim_dir_release(struct mrsim_dir *d, struct mrsim_pkt *p)
{
	p->next_free = d->free;
	d->free = p;
}

/* Queue one copy of the packet for delivery at time t. */
static int enqueue(struct mrsim_dir *d, uint64_t t, const uint8_t *pkt,
		   size_t len, uint16_t path_id)
{
	struct mrsim_pkt *p;

	if (d->n == d->cap) {
		size_t ncap = d->cap ? 2 * d->cap : 256;
		struct mrsim_pkt **nh = realloc(d->heap, ncap * sizeof(*nh));

		if (!nh)
			return -1;
		d->heap = nh;
		d->cap = ncap;
	}
	p = pkt_get(d);
	if (!p)
		return -1;
	p->t = t;
	p->seq = d->seq;
	p->idx = d->st.sent - 1;
	p->len = (uint32_t)len;
	p->path_id = path_id;
	p->corrupted = 0;
	p->ecn_ce = mrsim_rand_ppm(&d->rand, d->cfg.ce_ppm);
	if (p->ecn_ce)
		d->st.ce_marked++;
	memcpy(p->data, pkt, len);
	if (len && mrsim_rand_ppm(&d->rand, d->cfg.corrupt_ppm)) {
		uint64_t bit = mrsim_rand_below(&d->rand, (uint64_t)len * 8);

		p->data[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		p->corrupted = 1;
		d->st.corrupted++;
	}
	d->heap[d->n++] = p;
	heap_up(d, d->n - 1);
	return 0;
}

/* Should packet number idx be dropped by the index script? */
static int drop_by_idx(struct mrsim_dir *d, uint64_t idx)
{
	while (d->drop_pos < d->cfg.n_drop &&
	       d->cfg.drop_idx[d->drop_pos] < idx)
		d->drop_pos++;
	return d->drop_pos < d->cfg.n_drop &&
	       d->cfg.drop_idx[d->drop_pos] == idx;
}

int mrsim_dir_send(struct mrsim_dir *d, uint64_t now, const uint8_t *pkt,
		   size_t len, uint16_t path_id)
{
	const struct mrsim_link_cfg *c = &d->cfg;
	unsigned slot = path_id % MRSIM_MAX_PATHS;
	uint64_t idx = d->st.sent, t;

	if (len > MRSIM_PKT_MAX)
		return -1;
	d->st.sent++;
	d->st.sent_bytes += len;
	d->seq++;
	/* Draw the random decisions in a fixed order whatever the outcome, so
	 * one scripted drop does not change the fate of every later packet. */
	uint64_t jitter = mrsim_rand_below(&d->rand, c->jitter_ns);
	int lost = mrsim_rand_ppm(&d->rand, c->loss_ppm);
	int reorder = mrsim_rand_ppm(&d->rand, c->reorder_ppm);
	int dup = mrsim_rand_ppm(&d->rand, c->dup_ppm);
	uint64_t dup_extra =
		mrsim_rand_below(&d->rand, c->delay_ns + c->jitter_ns + 1);

	if (c->cut_at_ns && now >= c->cut_at_ns) {
		d->st.lost_cut++;
		return 0;
	}
	if (drop_by_idx(d, idx)) {
		d->st.lost_idx++;
		return 0;
	}
	if (c->filter &&
	    c->filter(c->filter_user, idx, now, pkt, len, path_id)) {
		d->st.lost_filter++;
		return 0;
	}
	if (lost) {
		d->st.lost_rand++;
		return 0;
	}
	t = now + c->delay_ns + c->path_delay_ns[slot] + jitter;
	if (reorder) {
		/* Leaves the path's FIFO: later packets may overtake it. */
		t += c->reorder_ns;
		d->st.reordered++;
	} else {
		if (t < d->last_t[slot])
			t = d->last_t[slot];
		d->last_t[slot] = t;
	}
	if (enqueue(d, t, pkt, len, path_id))
		return -1;
	if (dup) {
		d->seq++;
		d->st.duplicated++;
		if (enqueue(d, t + dup_extra, pkt, len, path_id))
			return -1;
	}
	return 0;
}

uint64_t mrsim_dir_next_time(const struct mrsim_dir *d)
{
	return d->n ? d->heap[0]->t : UINT64_MAX;
}

struct mrsim_pkt *mrsim_dir_pop(struct mrsim_dir *d, uint64_t now)
{
	struct mrsim_pkt *p;

	if (!d->n || d->heap[0]->t > now)
		return NULL;
	p = d->heap[0];
	d->heap[0] = d->heap[--d->n];
	if (d->n)
		heap_down(d, 0);
	d->st.delivered++;
	return p;
}
