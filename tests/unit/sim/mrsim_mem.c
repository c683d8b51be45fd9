// SPDX-License-Identifier: BSD-2-Clause
/* Registered memory of a simulated endpoint: see mrsim_mem.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mrsim_mem.h"

void mrsim_mem_init(struct mrsim_mem *m, uint32_t key_base)
{
	memset(m, 0, sizeof(*m));
	m->next_key = key_base;
}

void mrsim_mem_fini(struct mrsim_mem *m)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		free(m->r[i].buf);
	m->n = 0;
}

/* [a, a+alen) within [b, b+blen), without overflow. */
static int within(uint64_t a, uint64_t alen, uint64_t b, uint64_t blen)
{
	return a >= b && a - b <= blen && alen <= blen - (a - b);
}

struct mrsim_region *mrsim_mem_reg(struct mrsim_mem *m, uint64_t iova,
				   uint64_t len, uint32_t pd, unsigned access)
{
	struct mrsim_region *r;
	unsigned i;

	uint8_t *buf;

	if (m->n == MRSIM_MAX_REGIONS || !len || iova + len < iova)
		return NULL;
	buf = calloc(1, len);
	if (!buf)
		return NULL;
	if (!iova)
		iova = (uintptr_t)buf;
	for (i = 0; i < m->n; i++) {
		if (iova < m->r[i].iova + m->r[i].len &&
		    m->r[i].iova < iova + len) {
			free(buf);
			return NULL;
		}
	}
	r = &m->r[m->n];
	r->buf = buf;
	r->iova = iova;
	r->len = len;
	r->pd = pd;
	r->access = access;
	/* lkey and rkey differ, as on real NICs, so swapping them fails. */
	r->lkey = m->next_key++;
	r->rkey = m->next_key++ | 0x80000000u;
	m->n++;
	return r;
}

uint8_t *mrsim_mem_host(struct mrsim_mem *m, uint64_t iova, uint64_t len)
{
	unsigned i;

	for (i = 0; i < m->n; i++)
		if (within(iova, len, m->r[i].iova, m->r[i].len))
			return m->r[i].buf + (iova - m->r[i].iova);
	return NULL;
}

int mrsim_mem_lookup(void *user, uint32_t pd, uint32_t key, int remote,
		     uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	struct mrsim_mem *m = user;
	unsigned i;

	m->lookups++;
	if (!len) {
		*host = NULL;
		return 0;
	}
	for (i = 0; i < m->n; i++) {
		struct mrsim_region *r = &m->r[i];

		if ((remote ? r->rkey : r->lkey) != key)
			continue;
		if (r->pd != pd || !within(addr, len, r->iova, r->len) ||
		    (need & ~r->access))
			break;
		*host = r->buf + (addr - r->iova);
		return 0;
	}
	m->lookup_denied++;
	return -MR_EACCESS;
}

void mrsim_mem_place(struct mrsim_mem *m, uint8_t *dst, const uint8_t *src,
		     uint32_t len)
{
	unsigned i;

	m->place_calls++;
	if (!len)
		return;
	for (i = 0; i < m->n; i++) {
		struct mrsim_region *r = &m->r[i];

		if (within((uintptr_t)dst, len, (uintptr_t)r->buf, r->len)) {
			memcpy(dst, src, len);
			m->placed_bytes += len;
			return;
		}
	}
	m->bad_place++;
	fprintf(stderr,
		"mrsim: core placed %u bytes outside registered "
		"memory\n",
		len);
}
