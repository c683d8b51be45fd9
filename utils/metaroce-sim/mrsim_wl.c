// SPDX-License-Identifier: BSD-2-Clause
/*
 * Workloads (mrsim_net.h): which host pairs talk, with how many QPs, and
 * when each message is posted. Every pattern starts at time 0.
 *   flows        host i -> host i + N/2 (i < N/2): long flows across the
 *                fabric (N = 2: one flow)
 *   incast       every host -> host 0
 *   permutation  host i -> p(i), p a random cyclic permutation (seeded)
 *   alltoall     every host -> every other host, host i's j-th
 *                connection (posted j-th) to host i + j mod N, as a
 *                collective library orders it (NCCL's p2p schedule,
 *                MPI's pairwise exchange): posted to hosts 0, 1, ... in
 *                turn, every host's first packets went to host 0, then
 *                all to host 1, an incast that walked the hosts (64
 *                hosts, one plane: the start cost 27 us instead of 11,
 *                14265 CE marks instead of 193; bench/sim/results.md 6)
 *   allreduce    ring all-reduce of `size` bytes as a collective library
 *                issues it: 2(N-1) steps, step s sends one chunk
 *                (size / N) to the next host as RDMA WRITE_WITH_IMM; a
 *                host sends step s+1 when step s has arrived from the
 *                previous host.
 * A pair's `size` bytes are split over qps_per_pair QPs, each sending
 * messages of at most msg_size with `window` outstanding.
 */
#include <stdlib.h>
#include <string.h>

#include "mrsim_net.h"

static int is_ar(const struct mrsim_world *w)
{
	return !strcmp(w->scn.workload, "allreduce");
}

static uint32_t ar_steps(const struct mrsim_world *w)
{
	return 2u * (uint32_t)(w->scn.hosts - 1);
}

/* Bytes conn q of a pair carries of total (the last takes the rest). */
static uint64_t share(uint64_t total, int q, int nq)
{
	uint64_t per = total / (uint64_t)nq;

	return q == nq - 1 ? total - per * (uint64_t)(nq - 1) : per;
}

int mrsim_wl_setup(struct mrsim_world *w, char *err, size_t errlen)
{
	const struct mrsim_scn *s = &w->scn;
	int n = s->hosts, i, j, f = 0, q, Q = s->qps_per_pair;
	int *perm = NULL, max = 0;
	uint64_t rng = s->seed ^ 0x5eed;

	if (!strcmp(s->workload, "flows"))
		max = n / 2;
	else if (!strcmp(s->workload, "alltoall"))
		max = n * (n - 1);
	else
		max = n;
	w->flow = calloc((size_t)max, sizeof(*w->flow));
	w->conn = calloc((size_t)max * (size_t)Q, sizeof(*w->conn));
	w->st.fct_us = calloc((size_t)max, sizeof(double));
	if (!w->flow || !w->conn || !w->st.fct_us)
		goto nomem;
	if (!strcmp(s->workload, "flows")) {
		for (i = 0; i < n / 2; i++, f++)
			w->flow[f] = (struct mrsim_flow){ .src = i,
							  .dst = i + n / 2 };
	} else if (!strcmp(s->workload, "incast")) {
		for (i = 1; i < n; i++, f++)
			w->flow[f] = (struct mrsim_flow){ .src = i, .dst = 0 };
	} else if (!strcmp(s->workload, "permutation")) {
		perm = malloc((size_t)n * sizeof(int));
		if (!perm)
			goto nomem;
		for (i = 0; i < n; i++)
			perm[i] = i;
		/* Sattolo: one cycle, so nobody sends to itself. */
		for (i = n - 1; i > 0; i--) {
			int k = (int)(mrsim_rand(&rng) % (uint64_t)i), t;

			t = perm[i];
			perm[i] = perm[k];
			perm[k] = t;
		}
		for (i = 0; i < n; i++, f++)
			w->flow[f] =
				(struct mrsim_flow){ .src = i, .dst = perm[i] };
		free(perm);
	} else if (!strcmp(s->workload, "alltoall")) {
		for (i = 0; i < n; i++)
			for (j = 1; j < n; j++)
				w->flow[f++] = (struct mrsim_flow){
					.src = i, .dst = (i + j) % n
				};
	} else {
		for (i = 0; i < n; i++, f++)
			w->flow[f] = (struct mrsim_flow){ .src = i,
							  .dst = (i + 1) % n };
	}
	w->nflow = f;
	for (i = 0; i < w->nflow; i++) {
		struct mrsim_flow *fl = &w->flow[i];

		fl->bytes = is_ar(w) ? (s->size / (uint64_t)n) * ar_steps(w)
				     : s->size;
		fl->conns_left = Q;
		for (q = 0; q < Q; q++) {
			struct mrsim_conn *c = &w->conn[w->nconn];

			c->idx = w->nconn++;
			c->src = fl->src;
			c->dst = fl->dst;
			c->flow = i;
			c->plane = (i * Q + q + fl->src) % s->planes;
			c->bytes_left = is_ar(w) ? 0 : share(s->size, q, Q);
		}
	}
	if (is_ar(w)) {
		for (i = 0; i < n; i++) {
			w->host[i].ar_rcvd =
				calloc(ar_steps(w), sizeof(uint32_t));
			if (!w->host[i].ar_rcvd)
				goto nomem;
		}
	}
	return 0;
nomem:
	snprintf(err, errlen, "out of memory (workload)");
	return -1;
}

static void post_more(struct mrsim_world *w, struct mrsim_conn *c)
{
	while (c->bytes_left && c->outstanding < (uint32_t)w->scn.window) {
		uint32_t len = (uint32_t)(c->bytes_left < w->scn.msg_size
						  ? c->bytes_left
						  : w->scn.msg_size);

		if (mrsim_conn_post(w, c, len, 0, 0))
			break;
		c->bytes_left -= len;
	}
}

/* Host h sends ring step `step` on each of its QPs to the next host. */
static void ar_send(struct mrsim_world *w, int h, uint32_t step)
{
	int q, Q = w->scn.qps_per_pair;
	uint64_t chunk = w->scn.size / (uint64_t)w->scn.hosts;

	for (q = 0; q < Q; q++) {
		struct mrsim_conn *c = &w->conn[h * Q + q];
		uint32_t len = (uint32_t)share(chunk, q, Q);

		if (mrsim_conn_post(w, c, len, 1, step))
			w->st.cqe_errors++;
	}
	w->host[h].ar_sent = step + 1;
}

/* Every QP of host h has a free message slot (window): a step posted
 * without one was refused (-EAGAIN) and lost, and the ring stalled for
 * good; it waits for a send completion instead. */
static int ar_room(const struct mrsim_world *w, int h)
{
	int q, Q = w->scn.qps_per_pair;

	for (q = 0; q < Q; q++) {
		const struct mrsim_conn *c = &w->conn[h * Q + q];

		if (c->msg[c->next_seq % (uint32_t)w->scn.window].busy)
			return 0;
	}
	return 1;
}

/* Send every step of host h whose input is complete, in order, while the
 * QPs have room. */
static void ar_pump(struct mrsim_world *w, struct mrsim_host *h)
{
	while (h->ar_sent < ar_steps(w) &&
	       h->ar_rcvd[h->ar_sent - 1] >= (uint32_t)w->scn.qps_per_pair &&
	       ar_room(w, h->idx))
		ar_send(w, h->idx, h->ar_sent);
}

void mrsim_wl_start(struct mrsim_world *w)
{
	int i;

	w->st.first_ps = w->q.now;
	for (i = 0; i < w->nflow; i++)
		w->flow[i].start_ps = w->q.now;
	if (is_ar(w)) {
		for (i = 0; i < w->scn.hosts; i++)
			ar_send(w, i, 0);
		return;
	}
	for (i = 0; i < w->nconn; i++)
		post_more(w, &w->conn[i]);
}

static void flow_progress(struct mrsim_world *w, struct mrsim_flow *fl,
			  struct mrsim_conn *c, uint32_t bytes)
{
	int i;

	fl->done_bytes += bytes;
	if (fl->done_bytes < fl->bytes)
		return;
	fl->end_ps = w->q.now;
	w->st.fct_us[fl - w->flow] = (double)(fl->end_ps - fl->start_ps) / 1e6;
	for (i = 0; i < w->nflow; i++)
		if (w->flow[i].done_bytes < w->flow[i].bytes)
			return;
	w->done = 1;
}

void mrsim_wl_send_done(struct mrsim_world *w, struct mrsim_conn *c,
			struct mrsim_msg *m)
{
	if (!is_ar(w))
		post_more(w, c);
	else
		ar_pump(w, &w->host[c->src]);
	flow_progress(w, &w->flow[c->flow], c, m->len);
}

void mrsim_wl_recv_imm(struct mrsim_world *w, struct mrsim_conn *c,
		       uint32_t imm)
{
	struct mrsim_host *h = &w->host[c->dst];

	if (imm >= ar_steps(w)) {
		w->st.verify_errors++;
		return;
	}
	if (++h->ar_rcvd[imm] < (uint32_t)w->scn.qps_per_pair)
		return;
	h->ar_rcvd_steps++;
	/* With several QPs a later step may be whole before an earlier:
	 * send every step whose input is complete, in order. */
	ar_pump(w, h);
}
