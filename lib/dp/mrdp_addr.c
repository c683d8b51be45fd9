/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The address book (mrdp_addr.h): an array of entries indexed by id and
 * an open-addressing hash from (address, scope) to id. Nothing is ever
 * removed, so probes end at the first empty slot.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "mr_gid.h"
#include "mrdp_addr.h"

#define HASH_SLOTS (2 * MR_GID_ID6_MAX) /* power of two, half full at most */

struct addr_entry {
	uint8_t a[16];
	uint8_t scope;
};

struct mrdp_addrs {
	pthread_mutex_t lock;
	_Atomic uint32_t n; /* entries 1..n are in use; 0 is never an id */
	struct addr_entry e[MR_GID_ID6_MAX];
	uint16_t slot[HASH_SLOTS]; /* entry index, 0: empty */
};

struct mrdp_addrs *mrdp_addrs_new(void)
{
	struct mrdp_addrs *b = calloc(1, sizeof(*b));

	if (b)
		pthread_mutex_init(&b->lock, NULL);
	return b;
}

void mrdp_addrs_free(struct mrdp_addrs *b)
{
	if (!b)
		return;
	pthread_mutex_destroy(&b->lock);
	free(b);
}

static unsigned hash(const uint8_t a[16], uint8_t scope)
{
	/* FNV-1a: addresses of one subnet differ only in their last bytes. */
	uint32_t h = 2166136261u;
	unsigned i;

	for (i = 0; i < 16; i++)
		h = (h ^ a[i]) * 16777619u;
	h = (h ^ scope) * 16777619u;
	return h & (HASH_SLOTS - 1);
}

int mrdp_addrs_id(struct mrdp_addrs *b, const uint8_t a[16], uint8_t scope,
		  int create, uint32_t *id)
{
	unsigned s = hash(a, scope);
	uint32_t n;
	int ret = 0;

	pthread_mutex_lock(&b->lock);
	for (;; s = (s + 1) & (HASH_SLOTS - 1)) {
		const struct addr_entry *e;

		if (!b->slot[s])
			break;
		e = &b->e[b->slot[s]];
		if (e->scope == scope && !memcmp(e->a, a, 16)) {
			*id = MR_GID_ID6_BASE | b->slot[s];
			goto out;
		}
	}
	n = atomic_load_explicit(&b->n, memory_order_relaxed) + 1;
	if (!create) {
		ret = -ENOENT;
	} else if (n >= MR_GID_ID6_MAX) {
		ret = -ENOSPC;
	} else {
		memcpy(b->e[n].a, a, 16);
		b->e[n].scope = scope;
		b->slot[s] = (uint16_t)n;
		atomic_store_explicit(&b->n, n, memory_order_release);
		*id = MR_GID_ID6_BASE | n;
	}
out:
	pthread_mutex_unlock(&b->lock);
	return ret;
}

const uint8_t *mrdp_addrs_get(const struct mrdp_addrs *b, uint32_t id,
			      uint8_t *scope)
{
	uint32_t i = id - MR_GID_ID6_BASE;

	if (!mr_gid_id_is6(id) || i == 0 ||
	    i > atomic_load_explicit(&b->n, memory_order_acquire))
		return NULL;
	if (scope)
		*scope = b->e[i].scope;
	return b->e[i].a;
}
