// SPDX-License-Identifier: BSD-2-Clause
/* Two endpoints and a scripted link in simulated time: see mrsim_world.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_engine.h"
#include "mr_sched.h" /* mr_ep_timers_check */
#include "mrsim_world.h"

/* MRSIM_TRACE=1: one line per packet sent and delivered (debugging). */
static int trace_on = -1;

static void trace(const struct mrsim_world *w, const char *what, int from,
		  const uint8_t *pkt, size_t len, int rc)
{
	struct mr_pkt p;
	int perr;

	if (trace_on < 0) {
		const char *e = getenv("MRSIM_TRACE");

		trace_on = e && *e && *e != '0';
	}
	if (!trace_on)
		return;
	perr = mr_wire_parse(pkt, len, &p);
	if (perr) {
		fprintf(stderr,
			"%10llu %s %d->%d len %zu parse error %d rc %d\n",
			(unsigned long long)w->now, what, from, 1 - from, len,
			perr, rc);
		return;
	}
	fprintf(stderr,
		"%10llu %s %d->%d op %#04x fl %#x ssn %u msn %u rsn %u off %u "
		"mlen %u path %u ppsn %u pay %u",
		(unsigned long long)w->now, what, from, 1 - from, p.bth.opcode,
		p.bth.flags, p.bth.ssn, p.bth.msn, p.bth.rsn, p.bth.offset,
		p.bth.msg_len, p.pth.path_id, p.pth.ppsn, p.payload_len);
	if (p.bth.opcode == MR_OP_ACK) {
		unsigned i;

		fprintf(stderr, " | syn %u nak_msn %u cum_ssn %u cum_msn %u",
			p.aeth.syndrome, p.aeth.nak_msn, p.aeth.cum_ssn,
			p.aeth.cum_msn);
		for (i = 0; i < p.aeth.nblocks; i++)
			fprintf(stderr, " [p%u cum %u %02x%02x]",
				p.aeth.blocks[i].path_id,
				p.aeth.blocks[i].cum_ppsn,
				p.aeth.blocks[i].bitmap[0],
				p.aeth.blocks[i].bitmap[1]);
	}
	if (rc != 1)
		fprintf(stderr, " rc %d", rc);
	fprintf(stderr, "\n");
}

/* Guards against a core that never says "nothing more now". */
#define MRSIM_MAX_TX_PER_INSTANT 1000000u
#define MRSIM_MAX_STALLS 100000u

void mrsim_world_fail(struct mrsim_world *w, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (w->broken)
		return;
	w->broken = 1;
	n = snprintf(w->why, sizeof(w->why),
		     "t=%llu ns: ", (unsigned long long)w->now);
	va_start(ap, fmt);
	vsnprintf(w->why + n, sizeof(w->why) - (size_t)n, fmt, ap);
	va_end(ap);
}

static void *node_calloc(void *user, size_t n, size_t size)
{
	struct mrsim_node *nd = user;

	nd->allocs++;
	if (nd->w->setup_done)
		nd->w->allocs_after_setup++;
	return calloc(n, size);
}

static void node_free(void *user, void *p)
{
	struct mrsim_node *nd = user;

	if (p)
		nd->frees++;
	free(p);
}

struct mr_mem mrsim_world_mem(struct mrsim_node *n)
{
	struct mr_mem m = { .calloc = node_calloc,
			    .free = node_free,
			    .user = n };

	return m;
}

static void cb_place(void *user, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	struct mrsim_node *nd = user;
	uint64_t bad = nd->mem.bad_place;

	if (nd->w->on_place)
		nd->w->on_place(nd->w->hook_user, nd->idx, dst, len);
	mrsim_mem_place(&nd->mem, dst, src, len);
	if (nd->mem.bad_place != bad)
		mrsim_world_fail(nd->w,
				 "node %d: placement of %u bytes outside "
				 "registered memory",
				 nd->idx, len);
}

static void cb_complete(void *user, const struct mr_cqe *cqe)
{
	struct mrsim_node *nd = user;

	if (nd->ncqe == nd->cqe_cap) {
		size_t ncap = nd->cqe_cap ? 2 * nd->cqe_cap : 64;
		struct mrsim_cqe *c = realloc(nd->cqes, ncap * sizeof(*c));

		if (!c) {
			mrsim_world_fail(nd->w, "out of memory for CQEs");
			return;
		}
		nd->cqes = c;
		nd->cqe_cap = ncap;
	}
	nd->cqes[nd->ncqe].c = *cqe;
	nd->cqes[nd->ncqe].t = nd->w->now;
	nd->ncqe++;
	if (nd->w->on_cqe)
		nd->w->on_cqe(nd->w->hook_user, nd->idx, cqe);
}

static void cb_qp_error(void *user, void *qp_user)
{
	((struct mrsim_node *)user)->qp_errors++;
}

static void cb_srq_limit(void *user, void *srq_user)
{
	((struct mrsim_node *)user)->srq_limits++;
}

int mrsim_world_init(struct mrsim_world *w, const struct mr_ep_config *ep_cfg,
		     const struct mrsim_link_cfg *link_ab,
		     const struct mrsim_link_cfg *link_ba, uint64_t seed)
{
	int i, rc;

	memset(w, 0, sizeof(*w));
	if (mrsim_dir_init(&w->dir[0], link_ab, seed, 100) ||
	    mrsim_dir_init(&w->dir[1], link_ba, seed, 101))
		return -MR_EINVAL;
	for (i = 0; i < 2; i++) {
		struct mrsim_node *nd = &w->node[i];
		struct mr_mem mem = mrsim_world_mem(nd);
		struct mr_rand rnd = { .next = mrsim_rand_next_cb,
				       .user = &nd->rand };
		struct mr_memreg reg;
		struct mr_callbacks cb = { .place = cb_place,
					   .complete = cb_complete,
					   .qp_error = cb_qp_error,
					   .srq_limit = cb_srq_limit,
					   .user = nd };

		nd->w = w;
		nd->idx = i;
		mrsim_mem_init(&nd->mem, 0x1000u + 0x10000u * (unsigned)i);
		reg = mrsim_mem_memreg(&nd->mem);
		mrsim_rand_seed(&nd->rand, seed, 200 + (uint64_t)i);
		nd->txcap = MR_TX_BUF_MIN(ep_cfg->mtu ? ep_cfg->mtu : 4096);
		if (nd->txcap > MRSIM_PKT_MAX)
			return -MR_EINVAL;
		nd->txbuf = malloc(nd->txcap);
		if (!nd->txbuf)
			return -MR_ENOMEM;
		rc = mr_ep_create(ep_cfg, &mem, &rnd, &reg, &cb, &nd->ep);
		if (rc)
			return rc;
	}
	return 0;
}

void mrsim_world_fini(struct mrsim_world *w)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct mrsim_node *nd = &w->node[i];

		if (nd->ep && mr_ep_destroy(nd->ep))
			fprintf(stderr, "mrsim: mr_ep_destroy refused\n");
		nd->ep = NULL;
		free(nd->txbuf);
		nd->txbuf = NULL;
		free(nd->cqes);
		nd->cqes = NULL;
		nd->ncqe = nd->cqe_cap = 0;
		mrsim_mem_fini(&nd->mem);
		mrsim_dir_fini(&w->dir[i]);
	}
}

/* Drain node i's transmit side into its link direction. Returns the number
 * of packets sent. */
static uint64_t drain_tx(struct mrsim_world *w, int i)
{
	struct mrsim_node *nd = &w->node[i];
	uint64_t n = 0;

	for (;;) {
		struct mr_tx_meta meta = { 0 };
		size_t len =
			mr_ep_tx(nd->ep, w->now, nd->txbuf, nd->txcap, &meta);

		if (!len)
			break;
		if (len > nd->txcap) {
			mrsim_world_fail(w,
					 "node %d: mr_ep_tx returned %zu > "
					 "cap %zu",
					 i, len, nd->txcap);
			break;
		}
		if (mrsim_dir_send(&w->dir[i], w->now, nd->txbuf, len,
				   meta.path_id)) {
			mrsim_world_fail(w, "link refused a %zu-byte packet",
					 len);
			break;
		}
		nd->tx_pkts++;
		trace(w, "tx", i, nd->txbuf, len, 1);
		if (++n > MRSIM_MAX_TX_PER_INSTANT) {
			mrsim_world_fail(w, "node %d: mr_ep_tx never stops", i);
			break;
		}
	}
	return n;
}

/* Deliver everything due on direction i to node 1 - i. */
static uint64_t deliver(struct mrsim_world *w, int i)
{
	struct mrsim_node *to = &w->node[1 - i];
	struct mrsim_pkt *p;
	uint64_t n = 0;

	while ((p = mrsim_dir_pop(&w->dir[i], w->now))) {
		struct mr_rx_meta meta = { .src = (uint32_t)i,
					   .ecn_ce = p->ecn_ce };
		int rc = mr_ep_rx(to->ep, w->now, p->data, p->len, &meta);

		trace(w, "rx", i, p->data, p->len, rc);
		if (rc == 0)
			to->rx_ok++;
		else
			to->rx_dropped++;
		if (p->corrupted && rc == 0)
			mrsim_world_fail(w,
					 "node %d accepted a corrupted "
					 "packet (send #%llu)",
					 to->idx, (unsigned long long)p->idx);
		if (p->corrupted && rc != -MR_EPROTO && rc != 0)
			mrsim_world_fail(w,
					 "node %d: corrupted packet dropped "
					 "with %d, not -MR_EPROTO",
					 to->idx, rc);
		mrsim_dir_release(&w->dir[i], p);
		n++;
	}
	return n;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

int mrsim_world_run(struct mrsim_world *w, int (*done)(void *user), void *user,
		    uint64_t bound_ns)
{
	uint64_t stalls = 0;

	w->setup_done = 1;
	for (;;) {
		uint64_t work = 0, next, wake = UINT64_MAX;
		int i;

		if (w->on_instant)
			wake = w->on_instant(w->on_instant_user, w);
		/* Everything that happens at this instant, until quiet. */
		do {
			uint64_t round = 0;

			for (i = 0; i < 2; i++) {
				if (mr_ep_next_deadline(w->node[i].ep) <=
				    w->now)
					mr_ep_handle_expiry(w->node[i].ep,
							    w->now);
				round += drain_tx(w, i);
			}
			for (i = 0; i < 2; i++)
				round += deliver(w, i);
			work += round;
			if (w->broken)
				return -2;
			if (!round)
				break;
		} while (1);
		w->steps++;
		for (i = 0; i < 2; i++) {
			/* The timer queue must agree with every QP's state
			 * (an entry point that forgot to re-key a QP). */
			if (mr_ep_timers_check(w->node[i].ep)) {
				mrsim_world_fail(w,
						 "node %d: timer queue out of "
						 "date at %llu ns",
						 i, (unsigned long long)w->now);
				return -2;
			}
		}
		if (done && done(user))
			return 0;
		next = min_u64(mrsim_dir_next_time(&w->dir[0]),
			       mrsim_dir_next_time(&w->dir[1]));
		next = min_u64(next, mr_ep_next_deadline(w->node[0].ep));
		next = min_u64(next, mr_ep_next_deadline(w->node[1].ep));
		if (next == UINT64_MAX && wake != UINT64_MAX)
			next = wake > w->now ? wake : w->now + 1;
		else if (wake < next && wake > w->now)
			next = wake;
		if (next == UINT64_MAX) {
			/* Completions of this instant may let the driver post
			 * more (a full send queue): give it one more look at
			 * the same time before calling the world idle. */
			if (work && w->on_instant)
				continue;
			return 1;
		}
		if (next <= w->now) {
			/* A deadline that is already due and produced
			 * nothing: tolerated a few times (pacing granularity),
			 * a livelock if it persists. */
			if (!work && ++stalls > MRSIM_MAX_STALLS) {
				mrsim_world_fail(w, "deadline stuck at now, "
						    "no progress");
				return -2;
			}
			next = w->now + 1;
		} else {
			stalls = 0;
		}
		if (next > bound_ns) {
			w->now = bound_ns;
			return -1;
		}
		w->now = next;
	}
}
