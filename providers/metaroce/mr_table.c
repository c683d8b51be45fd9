// SPDX-License-Identifier: BSD-2-Clause
/* The memory-region table (see mr_table.h). */
#include "mr_table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MRT_MAX_SLOTS (1u << 24) /* key = (slot + 1) << 8 | gen */
#define MRT_FIRST_CAP 64u

int metaroce_mrt_init(struct metaroce_mrt *t, uint32_t max)
{
	if (max == 0 || max > MRT_MAX_SLOTS - 1)
		return EINVAL;
	memset(t, 0, sizeof(*t));
	t->max = max;
	return pthread_mutex_init(&t->lock, NULL);
}

void metaroce_mrt_fini(struct metaroce_mrt *t)
{
	free(t->ents);
	t->ents = NULL;
	t->cap = t->used = t->free_head = 0;
	pthread_mutex_destroy(&t->lock);
}

/* Grow so that one more slot is free; slots are chained into the free
 * list in ascending order so keys come out small and predictable. */
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
	uint32_t slot, gen;
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
	t->free_head = s->next_free;
	gen = (s->gen + 1) & 0xff;
	*s = *e;
	s->gen = gen;
	s->next_free = 0;
	t->used++;
	*key = (slot + 1) << 8 | gen;
out:
	pthread_mutex_unlock(&t->lock);
	return ret;
}

/* The slot of key if it holds a live region with that generation. */
static struct metaroce_mrt_ent *mrt_find(struct metaroce_mrt *t, uint32_t key)
{
	uint32_t slot = (key >> 8) - 1;

	if ((key >> 8) == 0 || slot >= t->cap)
		return NULL;
	if (!t->ents[slot].owner || t->ents[slot].gen != (key & 0xff))
		return NULL;
	return &t->ents[slot];
}

int metaroce_mrt_del(struct metaroce_mrt *t, uint32_t key, const void *owner)
{
	struct metaroce_mrt_ent *s;
	int ret = EINVAL;

	pthread_mutex_lock(&t->lock);
	s = mrt_find(t, key);
	if (s && s->owner == owner) {
		uint32_t gen = s->gen;

		memset(s, 0, sizeof(*s));
		s->gen = gen;
		s->next_free = t->free_head;
		t->free_head = (uint32_t)(s - t->ents) + 1;
		t->used--;
		ret = 0;
	}
	pthread_mutex_unlock(&t->lock);
	return ret;
}

int metaroce_mrt_lookup(struct metaroce_mrt *t, uint32_t pd, uint32_t key,
			uint64_t addr, uint64_t len, unsigned need,
			uint8_t **host)
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
