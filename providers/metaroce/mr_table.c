// SPDX-License-Identifier: BSD-2-Clause
/* The memory-region table (see mr_table.h). */
#include "mr_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define MRT_MAX_SLOTS (1u << 20) /* 8 key-byte + 20 slot + 4 tag bits */
#define MRT_FIRST_CAP 64u

int metaroce_mrt_init(struct metaroce_mrt *t, uint32_t max)
{
	if (max == 0 || max > MRT_MAX_SLOTS)
		return EINVAL;
	memset(t, 0, sizeof(*t));
	t->max = max;
	while ((1u << t->slot_bits) < max)
		t->slot_bits++;
	return pthread_mutex_init(&t->lock, NULL);
}

static uint32_t mrt_slot_of(const struct metaroce_mrt *t, uint32_t key)
{
	return (key >> 8) & ((1u << t->slot_bits) - 1);
}

/* A fresh random key for slot, different from its previous key in the
 * tag (a stale key never names the new region) and never 0. */
static int mrt_draw_key(const struct metaroce_mrt *t, uint32_t slot,
			uint32_t prev, uint32_t *key)
{
	unsigned shift = 8 + t->slot_bits;
	uint32_t r, k;

	do {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return errno ? errno : EIO;
		k = (r >> shift << shift) | slot << 8 | (r & 0xff);
	} while (k == 0 || (prev && k >> shift == prev >> shift));
	*key = k;
	return 0;
}

void metaroce_mrt_fini(struct metaroce_mrt *t)
{
	free(t->ents);
	t->ents = NULL;
	t->cap = t->used = t->free_head = 0;
	pthread_mutex_destroy(&t->lock);
}

/* Grow so that one more slot is free; slots are chained into the free
 * list in ascending order (the slot is no secret; the key's tag and key
 * byte are). */
static int mrt_grow(struct metaroce_mrt *t)
{
	uint32_t ncap, i;
	struct metaroce_mrt_ent *n;

	if (t->cap >= t->max)
		return ENOSPC;
	ncap = t->cap ? t->cap * 2 : MRT_FIRST_CAP;
	if (ncap > t->max)
		ncap = t->max;
	n = realloc(t->ents, (size_t)ncap * sizeof(*n));
	if (!n)
		return ENOMEM;
	memset(n + t->cap, 0, (size_t)(ncap - t->cap) * sizeof(*n));
	for (i = t->cap; i < ncap; i++)
		n[i].next_free = i + 1 < ncap ? i + 2 : t->free_head;
	t->free_head = t->cap + 1;
	t->ents = n;
	t->cap = ncap;
	return 0;
}

int metaroce_mrt_add(struct metaroce_mrt *t, const struct metaroce_mrt_ent *e,
		     uint32_t *key)
{
	struct metaroce_mrt_ent *s;
	uint32_t slot, k;
	int ret = 0;

	if (!e->owner)
		return EINVAL;
	pthread_mutex_lock(&t->lock);
	if (!t->free_head)
		ret = mrt_grow(t);
	if (ret)
		goto out;
	slot = t->free_head - 1;
	s = &t->ents[slot];
	ret = mrt_draw_key(t, slot, s->key, &k);
	if (ret)
		goto out;
	t->free_head = s->next_free;
	*s = *e;
	s->key = k;
	s->next_free = 0;
	s->windows = 0;
	if (s->kind == METAROCE_MRT_MW) {
		s->mw.pd = s->pd;
		s->mw.rkey = k;
		s->mw.bound = 0;
	}
	t->used++;
	*key = k;
out:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

/* The slot of key if it holds a live region with exactly that key. */
static struct metaroce_mrt_ent *mrt_find(struct metaroce_mrt *t, uint32_t key)
{
	uint32_t slot = mrt_slot_of(t, key);

	if (!key || slot >= t->cap)
		return NULL;
	if (!t->ents[slot].owner || t->ents[slot].key != key)
		return NULL;
	return &t->ents[slot];
}

/* The live window whose key is key but for the key byte: the byte is
 * what binds change (MR-MW-7); slot and tag name the window for good. */
static struct metaroce_mrt_ent *mrt_find_mw(struct metaroce_mrt *t,
					    uint32_t key)
{
	uint32_t slot = mrt_slot_of(t, key);
	struct metaroce_mrt_ent *s;

	if (slot >= t->cap)
		return NULL;
	s = &t->ents[slot];
	if (!s->owner || s->kind != METAROCE_MRT_MW || (s->key ^ key) & ~0xffu)
		return NULL;
	return s;
}

/* The live region of key (windows are bound to regions only). */
static struct metaroce_mrt_ent *mrt_find_mr(struct metaroce_mrt *t,
					    uint32_t key)
{
	struct metaroce_mrt_ent *s = mrt_find(t, key);

	return s && s->kind == METAROCE_MRT_MR ? s : NULL;
}

/* A bound window lets go of its region (bound regions cannot go, so
 * it is there). */
static void mrt_unbind(struct metaroce_mrt *t, struct metaroce_mrt_ent *w)
{
	struct metaroce_mrt_ent *r = mrt_find_mr(t, w->mw.mr_key);

	if (r && r->windows)
		r->windows--;
}

/* Free slot s (lock held): a bound window lets go of its region first. */
static void mrt_free(struct metaroce_mrt *t, struct metaroce_mrt_ent *s)
{
	uint32_t last = s->key;

	if (s->kind == METAROCE_MRT_MW && s->mw.bound)
		mrt_unbind(t, s);
	memset(s, 0, sizeof(*s));
	s->key = last; /* the next key of this slot differs from it */
	s->next_free = t->free_head;
	t->free_head = (uint32_t)(s - t->ents) + 1;
	t->used--;
}

int metaroce_mrt_del(struct metaroce_mrt *t, uint32_t key, const void *owner)
{
	struct metaroce_mrt_ent *s;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	s = mrt_find(t, key);
	if (s && s->owner == owner && s->windows) {
		ret = EBUSY;
	} else if (s && s->owner == owner) {
		mrt_free(t, s);
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int metaroce_mrt_del_mw(struct metaroce_mrt *t, uint32_t key,
			const void *owner)
{
	struct metaroce_mrt_ent *s;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	s = mrt_find_mw(t, key);
	if (s && s->owner == owner) {
		mrt_free(t, s);
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int metaroce_mrt_update(struct metaroce_mrt *t, uint32_t key,
			const struct metaroce_mrt_ent *e)
{
	struct metaroce_mrt_ent *s;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	s = mrt_find(t, key);
	if (s && s->owner == e->owner && s->windows) {
		ret = EBUSY;
	} else if (s && s->owner == e->owner) {
		s->iova = e->iova;
		s->host = e->host;
		s->length = e->length;
		s->access = e->access;
		s->pd = e->pd;
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int metaroce_mrt_lookup(struct metaroce_mrt *t, uint32_t pd, uint32_t key,
			uint64_t addr, uint64_t len, unsigned need,
			uint8_t **host)
{
	return metaroce_mrt_lookup_qp(t, pd, 0, key, addr, len, need, host);
}

/* MR-MW-3: through window w to its region's memory. */
static int mrt_through_window(struct metaroce_mrt *t,
			      const struct metaroce_mrt_ent *w, uint32_t pd,
			      uint32_t qpn, uint64_t addr, uint64_t len,
			      unsigned need, uint8_t **host)
{
	const struct metaroce_mrt_ent *r;

	if (!qpn)
		return ENOENT; /* a window's key is no local key */
	if (mr_mw_access_check(&w->mw, pd, qpn, addr, len, need))
		return EACCES;
	r = mrt_find_mr(t, w->mw.mr_key);
	if (!r)
		return ENOENT;
	*host = r->host + (addr - r->iova);
	return 0;
}

int metaroce_mrt_lookup_qp(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
			   uint32_t key, uint64_t addr, uint64_t len,
			   unsigned need, uint8_t **host)
{
	struct metaroce_mrt_ent *s;
	int ret = 0;

	if (len == 0) {
		*host = NULL;
		return 0;
	}
	pthread_mutex_lock(&t->lock);
	s = mrt_find(t, key);
	if (!s)
		ret = ENOENT;
	else if (s->kind == METAROCE_MRT_MW)
		ret = mrt_through_window(t, s, pd, qpn, addr, len, need, host);
	else if (s->pd != pd)
		ret = EPERM;
	else if (addr < s->iova || addr - s->iova > s->length ||
		 len > s->length - (addr - s->iova))
		ret = ERANGE;
	else if ((s->access & need) != need)
		ret = EACCES;
	else
		*host = s->host + (addr - s->iova);
	pthread_mutex_unlock(&t->lock);
	return ret;
}

uint32_t metaroce_mrt_count(struct metaroce_mrt *t)
{
	uint32_t n;

	pthread_mutex_lock(&t->lock);
	n = t->used;
	pthread_mutex_unlock(&t->lock);
	return n;
}

int metaroce_mrt_bind(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
		      const struct mr_mw_bind *b)
{
	struct metaroce_mrt_ent *w, *r = NULL, *old = NULL;
	struct mr_mw_region reg;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	w = mrt_find_mw(t, b->mw_rkey);
	if (!w)
		goto out;
	if (b->length)
		r = mrt_find_mr(t, b->mr_lkey);
	if (r) {
		reg.pd = r->pd;
		reg.iova = r->iova;
		reg.length = r->length;
		reg.access = r->access;
	}
	if (mr_mw_bind_check(&w->mw, r ? &reg : NULL, pd, b))
		goto out;
	if (w->mw.bound)
		old = w; /* type 1 rebind: the old region lets go */
	if (old)
		mrt_unbind(t, old);
	mr_mw_bind_apply(&w->mw, qpn, b);
	/* MR-MW-7: the new rkey has the slot and tag of the old one. */
	w->key = w->mw.rkey;
	if (r)
		r->windows++;
	ret = 0;
out:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int metaroce_mrt_invalidate(struct metaroce_mrt *t, uint32_t pd, uint32_t qpn,
			    uint32_t rkey, int remote)
{
	struct metaroce_mrt_ent *w;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	w = mrt_find(t, rkey);
	/* MR-MW-4: no region of ours is fast-registered: never its key. */
	if (w && w->kind == METAROCE_MRT_MW &&
	    !mr_mw_inv_check(&w->mw, pd, qpn, remote)) {
		mrt_unbind(t, w);
		mr_mw_inv_apply(&w->mw);
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}
