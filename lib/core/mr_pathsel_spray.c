// SPDX-License-Identifier: BSD-2-Clause
/* Path selection `spray` (MR-MP-3, MR-MP-4, MR-MP-9, MR-MP-10): weighted
 * round robin, each path under twice its share of the window. */
#include "mr_pathsel.h"

#include "mr_err.h"

/* A path that went silent while others progressed (suspect) carries no
 * data: the path manager probes it with data-free packets until one
 * returns (MR-MP-8, MR-PM-1). A path whose RTO fired and that has not
 * made progress since carries one packet at a time (MR-MP-4), so a dead
 * route costs one packet per RTO, not a window. */
static int usable(const struct mr_pathtx *t)
{
	if (!mr_pathtx_space(t) || t->suspect)
		return 0;
	return !(t->backoff && t->out_pkts);
}

struct spray_state {
	uint16_t cursor; /* next path to try first */
	uint16_t last;	 /* the path of the run in progress */
	uint16_t left;	 /* packets it may still send in that run */
	uint64_t lost;	 /* that path's losses when the run began */
};

/* MR-MP-3: the run of path i goes on while it may send and has lost
 * nothing since the run began: a loss (a tail-loss probe, an RTO) ends
 * the turn, so what is resent goes to the next path, not back to the one
 * that lost it (with a window of one packet the run kept the turn and every
 * retransmission went to the same dead path). */
static int run_goes_on(const struct spray_state *s, const struct mr_pathtx *t)
{
	return s->left && mr_pathtx_lost(t) == s->lost;
}

_Static_assert(sizeof(struct spray_state) <= MR_PATHSEL_STATE_MAX,
	       "spray state fits the base's area");

/* MR-MP-10: twice the path's weighted share of the connection's window
 * (and one packet): a path whose packets stay out longer than the others'
 * (a longer queue, a route that died and is not suspected yet) cannot
 * take the whole window from them. */
static int under_share(const struct mr_pathsel *ps, const struct mr_pathtx *t,
		       uint16_t i, uint32_t wsum)
{
	uint64_t cap;

	if (!ps->window || !wsum)
		return 1;
	cap = 2 * ps->window * ps->path[i].weight / wsum + ps->pkt;
	return t->out_bytes < cap;
}

/* MR-MP-12: the path's plane's local port is nearly full. */
static int backlogged(const struct mr_pathsel *ps, uint16_t i)
{
	return ps->path[i].plane < 32 &&
	       (ps->planes_backlogged >> ps->path[i].plane & 1);
}

/* MR-MP-14: the connection's first packet goes on the plane the
 * endpoint's turn gives: from the drawn cursor (MR-MP-11) on, the first
 * path of that plane. Drawn planes put a host's first packets (its only
 * ones until the first hints, MR-CC-5) on its ports unevenly, and each
 * receiver's too; a host that starts its connections in a collective's
 * order (its j-th to host i + j) on planes j mod k spreads both its own
 * ports and each receiver's. */
static void start_on_plane(struct mr_pathsel *ps, struct spray_state *s,
			   uint8_t plane)
{
	uint16_t k;

	for (k = 0; k < ps->num_paths; k++) {
		uint16_t i = (uint16_t)((s->cursor + k) % ps->num_paths);

		if (ps->path[i].plane == plane) {
			s->cursor = i;
			return;
		}
	}
}

static int spray_pick(struct mr_pathsel *ps, const struct mr_pathtx *tx,
		      uint64_t now)
{
	struct spray_state *s = MR_PATHSEL_STATE(ps, struct spray_state);
	uint32_t wsum = 0;
	uint16_t k;
	int first = -1, avoid = 0;

	(void)now;
	if (!ps->picks && ps->first_plane >= 0)
		start_on_plane(ps, s, (uint8_t)(ps->first_plane % ps->num_planes));
	for (k = 0; k < ps->num_paths; k++)
		if (usable(&tx[k]))
			wsum += ps->path[k].weight;
	/* MR-MP-12: while some path of a plane whose local port is free may
	 * send, the paths of backlogged planes are passed over (a datapath
	 * that stops taking packets when one port's ring is full lets that
	 * port's backlog idle the others; the simulator's 64 hosts at 8
	 * planes lost 7% of their uplinks' time so). */
	for (k = 0; ps->planes_backlogged && k < ps->num_paths && !avoid; k++)
		avoid = !backlogged(ps, k) && usable(&tx[k]) &&
			under_share(ps, &tx[k], k, wsum);
	/* MR-MP-3: a path keeps the turn for ps->run packets while it may
	 * send (a run of frames a GSO port sends as one). */
	if (s->last < ps->num_paths && run_goes_on(s, &tx[s->last]) &&
	    usable(&tx[s->last]) && !(avoid && backlogged(ps, s->last)) &&
	    under_share(ps, &tx[s->last], s->last, wsum)) {
		s->left--;
		ps->picks++;
		return s->last;
	}
	s->left = 0;
	/* MR-MP-9: weighted round robin. A path visited earns its weight in
	 * credit and is taken once it has a full weight's worth; at full
	 * weight every visit takes it (plain round robin, MR-MP-3). If only
	 * paths short of credit may send, the first of them is taken: a
	 * weight shares the turns, it never idles the connection. */
	for (k = 0; k < ps->num_paths; k++) {
		uint16_t i = (uint16_t)((s->cursor + k) % ps->num_paths);
		struct mr_pathsel_path *p = &ps->path[i];

		if (!usable(&tx[i]) || !under_share(ps, &tx[i], i, wsum) ||
		    (avoid && backlogged(ps, i)))
			continue;
		if (first < 0)
			first = i;
		if (p->credit + p->weight < MR_PATHSEL_WEIGHT_FULL) {
			p->credit = (uint8_t)(p->credit + p->weight);
			continue;
		}
		p->credit = (uint8_t)(p->credit + p->weight -
				      MR_PATHSEL_WEIGHT_FULL);
		s->cursor = (uint16_t)((i + 1) % ps->num_paths);
		ps->picks++;
		s->last = i;
		s->left = ps->run > 1 ? (uint16_t)(ps->run - 1) : 0;
		s->lost = mr_pathtx_lost(&tx[i]);
		return i;
	}
	if (first >= 0) {
		s->cursor = (uint16_t)((first + 1) % ps->num_paths);
		ps->picks++;
		s->last = (uint16_t)first;
		s->left = ps->run > 1 ? (uint16_t)(ps->run - 1) : 0;
		s->lost = mr_pathtx_lost(&tx[first]);
		return first;
	}
	ps->no_path++;
	return -MR_EAGAIN;
}

/* MR-MP-11: the round robin starts at a path drawn from the injected
 * randomness, not at path 0. Every connection's first packet (and its
 * only one until the receiver's first hint, MR-CC-5) would otherwise
 * leave on plane 0: with 4,032 connections that is 17 MB queued on one
 * plane's ports at once and every other plane idle for the first RTT. */
static void spray_init(struct mr_pathsel *ps)
{
	struct spray_state *s = MR_PATHSEL_STATE(ps, struct spray_state);

	s->cursor = (uint16_t)(ps->rand.next(ps->rand.user) % ps->num_paths);
}

static void spray_on_rto(struct mr_pathsel *ps, uint16_t path, uint64_t now)
{
	(void)now;
	mr_pathsel_repath(ps, path);
}

const struct mr_pathsel_ops mr_pathsel_ops_spray = {
	.name = "spray",
	.help = "weighted round robin over the paths with window space, "
		"each under twice its share of the connection's window; none "
		"on a suspect path, one packet at a time on one that timed out",
	.state_size = sizeof(struct spray_state),
	.init = spray_init,
	.pick = spray_pick,
	.on_rto = spray_on_rto,
};
