/* SPDX-License-Identifier: BSD-2-Clause */
/* The neighbour table: open addressing with linear probing, no removal;
 * entries expire into re-verification (MR-ROUTE-8). */
#include <string.h>

#include "mrdp_neigh.h"

void mrdp_neigh_init(struct mrdp_neigh_table *t)
{
	memset(t, 0, sizeof(*t));
	t->next_due = UINT64_MAX;
	t->reach_ns = MRDP_NEIGH_REACHABLE_NS;
}

static unsigned slot_of(uint32_t ip)
{
	/* Fibonacci hashing: peers on one subnet differ in the low bits. */
	return (unsigned)((ip * 2654435761u) >> 22) & (MRDP_NEIGH_SIZE - 1);
}

static struct mrdp_neigh *probe(struct mrdp_neigh_table *t, uint32_t ip,
				int create)
{
	unsigned i = slot_of(ip), n;

	for (n = 0; n < MRDP_NEIGH_SIZE; n++) {
		struct mrdp_neigh *e = &t->e[(i + n) & (MRDP_NEIGH_SIZE - 1)];

		if (e->state == MRDP_NEIGH_FREE) {
			if (!create)
				return NULL;
			/* Keep one slot free so probes for absent keys
			 * always end. */
			if (t->count + 1 >= MRDP_NEIGH_SIZE)
				return NULL;
			e->ip = ip;
			t->count++;
			return e;
		}
		if (e->ip == ip)
			return e;
	}
	return NULL;
}

struct mrdp_neigh *mrdp_neigh_find(struct mrdp_neigh_table *t, uint32_t ip)
{
	return probe(t, ip, 0);
}

static void start_resolution(struct mrdp_neigh_table *t, struct mrdp_neigh *e,
			     uint64_t now)
{
	e->state = MRDP_NEIGH_INCOMPLETE;
	e->tries = 0;
	e->next_ns = now;
	e->nq = 0;
	t->incomplete++;
	if (now < t->next_due)
		t->next_due = now;
}

struct mrdp_neigh *mrdp_neigh_lookup(struct mrdp_neigh_table *t, uint32_t ip,
				     uint64_t now)
{
	struct mrdp_neigh *e = probe(t, ip, 1);

	if (!e)
		return NULL;
	if (e->state == MRDP_NEIGH_FREE ||
	    (e->state == MRDP_NEIGH_FAILED && now >= e->next_ns)) {
		start_resolution(t, e, now);
	} else if (e->state == MRDP_NEIGH_REACHABLE &&
		   now - e->confirmed_ns >= t->reach_ns) {
		/* Expired: keep sending to the MAC while asking again. */
		e->state = MRDP_NEIGH_PROBE;
		e->tries = 0;
		e->next_ns = now;
		t->resolved--;
		t->incomplete++;
		t->expired++;
		if (now < t->next_due)
			t->next_due = now;
	}
	return e;
}

int mrdp_neigh_enqueue(struct mrdp_neigh *e, void *pkt)
{
	if (e->state != MRDP_NEIGH_INCOMPLETE || e->nq >= MRDP_NEIGH_QLEN)
		return -1;
	e->q[e->nq++] = pkt;
	return 0;
}

struct mrdp_neigh *mrdp_neigh_learn(struct mrdp_neigh_table *t, uint32_t ip,
				    const uint8_t mac[6], int create,
				    uint64_t now)
{
	struct mrdp_neigh *e = probe(t, ip, create);

	if (!e)
		return NULL;
	if (e->state == MRDP_NEIGH_INCOMPLETE || e->state == MRDP_NEIGH_PROBE)
		t->incomplete--;
	if (e->state != MRDP_NEIGH_REACHABLE)
		t->resolved++;
	memcpy(e->mac, mac, 6);
	e->state = MRDP_NEIGH_REACHABLE;
	e->tries = 0;
	e->confirmed_ns = now;
	return e;
}

void mrdp_neigh_tick(struct mrdp_neigh_table *t, uint64_t now,
		     void (*send_request)(void *user, uint32_t ip),
		     void (*drop)(void *user, void *pkt), void *user)
{
	uint64_t next = UINT64_MAX;
	unsigned i, k;

	if (now < t->next_due || t->incomplete == 0) {
		if (t->incomplete == 0)
			t->next_due = UINT64_MAX;
		return;
	}
	for (i = 0; i < MRDP_NEIGH_SIZE; i++) {
		struct mrdp_neigh *e = &t->e[i];

		if (e->state != MRDP_NEIGH_INCOMPLETE &&
		    e->state != MRDP_NEIGH_PROBE)
			continue;
		if (e->next_ns <= now) {
			if (e->tries >= MRDP_ARP_TRIES) {
				e->state = MRDP_NEIGH_FAILED;
				e->next_ns = now + MRDP_NEIGH_HOLD_NS;
				t->incomplete--;
				for (k = 0; k < e->nq; k++)
					drop(user, e->q[k]);
				e->nq = 0;
				continue;
			}
			send_request(user, e->ip);
			e->tries++;
			e->next_ns = now + MRDP_ARP_RETRY_NS;
		}
		if (e->next_ns < next)
			next = e->next_ns;
	}
	t->next_due = next;
}

uint64_t mrdp_neigh_next_deadline(const struct mrdp_neigh_table *t)
{
	return t->incomplete ? t->next_due : UINT64_MAX;
}
