// SPDX-License-Identifier: BSD-2-Clause
/*
 * What the endpoint's timers cost at scale, and what one QP costs in
 * memory. One endpoint with N RC QPs (default 4,000) of P paths (default
 * 4) connected to a second endpoint; every QP sends one 64 KiB WRITE whose
 * packets are all left in flight (none delivered), so every path of every
 * QP has its retransmission timer armed, as under load. Then, timed with
 * CLOCK_MONOTONIC over many calls:
 *   next_deadline   mr_ep_next_deadline()
 *   expiry_idle     mr_ep_handle_expiry() at a time when nothing is due,
 *                   followed by the mr_ep_tx() a datapath's poll round
 *                   makes next (which returns 0: nothing may be sent)
 * and, once, mr_ep_handle_expiry() at a time every RTO is due (per QP).
 * Memory: bytes the core allocates through the injected calloc for one
 * QP (the sizes the provider asks for: 128 send WRs, 1 SGE, 0 inline,
 * 128 receive WRs), each allocation listed.
 *
 * Usage: mrbench-timers [-n qps] [-p paths]
 * Only the public API (mr_core.h): the same file measures any core.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mr_core.h"

static size_t alloc_bytes;
static int log_allocs;
static size_t alloc_log[64];
static int nlog;

static void *b_calloc(void *u, size_t n, size_t s)
{
	(void)u;
	alloc_bytes += n * s;
	if (log_allocs && nlog < 64)
		alloc_log[nlog++] = n * s;
	return calloc(n, s);
}

static void b_free(void *u, void *p)
{
	(void)u;
	free(p);
}

static uint64_t rnd_state = 88172645463325252ull;

static uint64_t b_rand(void *u)
{
	(void)u;
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

/* Every key maps the address itself: one flat buffer per side. */
static int b_lookup(void *u, uint32_t pd, uint32_t key, int remote,
		    uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	(void)u;
	(void)pd;
	(void)key;
	(void)remote;
	(void)need;
	*host = len ? (uint8_t *)(uintptr_t)addr : NULL;
	return 0;
}

static void b_place(void *u, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	(void)u;
	memcpy(dst, src, len);
}

static void b_complete(void *u, const struct mr_cqe *c)
{
	(void)u;
	(void)c;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
	fprintf(stderr, "mrbench-timers: %s failed\n", what);
	exit(1);
}

static struct mr_qp *mkqp(struct mr_ep *ep, uint32_t qpn, uint32_t dest)
{
	struct mr_qp_config c = {
		.type = MR_QPT_RC,
		.mode = MR_MODE_METAROCE,
		.qpn = qpn,
		.pd = 1,
		.max_send_wr = 128,
		.max_recv_wr = 128,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct mr_qp_attr a;
	struct mr_qp *qp;

	if (mr_qp_create(ep, &c, &qp))
		die("mr_qp_create");
	memset(&a, 0, sizeof(a));
	a.state = MR_QPS_INIT;
	a.access = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE;
	if (mr_qp_modify(qp, &a, MR_QP_STATE | MR_QP_ACCESS_FLAGS))
		die("modify INIT");
	a.state = MR_QPS_RTR;
	a.dest_qpn = dest;
	a.rq_psn = 1000;
	a.path_mtu_bytes = 4096;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	if (mr_qp_modify(qp, &a,
			 MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
				 MR_QP_DEST_QPN | MR_QP_RQ_PSN |
				 MR_QP_MAX_DEST_RD_ATOMIC |
				 MR_QP_MIN_RNR_TIMER))
		die("modify RTR");
	a.state = MR_QPS_RTS;
	a.sq_psn = 1000;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (mr_qp_modify(qp, &a,
			 MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
				 MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
				 MR_QP_MAX_QP_RD_ATOMIC))
		die("modify RTS");
	return qp;
}

int main(int argc, char **argv)
{
	static uint8_t buf[8192];
	struct mr_mem mem = { b_calloc, b_free, NULL };
	struct mr_rand rnd = { b_rand, NULL };
	struct mr_memreg mr = { .lookup = b_lookup };
	struct mr_callbacks cb = { .place = b_place, .complete = b_complete };
	struct mr_ep_config cfg;
	struct mr_ep *ep[2];
	struct mr_qp **qa, **qb;
	struct mr_tx_meta meta;
	uint8_t *src;
	uint64_t now = 1000000, d, pkts = 0;
	unsigned n = 4000, paths = 4, i, k, reps;
	size_t before, per_qp = 0;
	double t0, t_dl, t_idle, t_due;
	int opt;

	while ((opt = getopt(argc, argv, "n:p:")) != -1) {
		if (opt == 'n')
			n = (unsigned)atoi(optarg);
		else if (opt == 'p')
			paths = (unsigned)atoi(optarg);
		else
			return 2;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.mtu = 4096;
	cfg.num_paths = (uint16_t)paths;
	cfg.max_qp = n + 1;
	for (i = 0; i < 2; i++)
		if (mr_ep_create(&cfg, &mem, &rnd, &mr, &cb, &ep[i]))
			die("mr_ep_create");
	qa = calloc(n, sizeof(*qa));
	qb = calloc(n, sizeof(*qb));
	src = calloc(1, 65536);
	for (i = 0; i < n; i++) {
		before = alloc_bytes;
		log_allocs = i == 0;
		qa[i] = mkqp(ep[0], 1 + i, 100001 + i);
		log_allocs = 0;
		if (i == 0)
			per_qp = alloc_bytes - before;
		qb[i] = mkqp(ep[1], 100001 + i, 1 + i);
	}
	for (i = 0; i < n; i++) {
		struct mr_sge sge = { (uintptr_t)src, 65536, 1 };
		struct mr_send_wr wr = { .wr_id = i,
					 .opcode = MR_WR_RDMA_WRITE,
					 .flags = MR_SEND_SIGNALED,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .remote_addr = (uintptr_t)src,
					 .rkey = 2 };

		if (mr_qp_post_send(qa[i], &wr, now))
			die("post_send");
	}
	/* Send what the windows allow; nothing is delivered. */
	/* 300 us of poll rounds, 1 us apart: the paced senders get going,
	 * and no RTO (1 ms before the first RTT sample) comes due. */
	for (k = 0; k < 300; k++, now += 1000) {
		mr_ep_handle_expiry(ep[0], now);
		while (mr_ep_tx(ep[0], now, buf, sizeof(buf), &meta))
			pkts++;
	}
	d = mr_ep_next_deadline(ep[0]);
	if (d == UINT64_MAX || d <= now)
		die("an armed timer");

	reps = 200000;
	t0 = now_s();
	for (k = 0; k < reps; k++)
		d += mr_ep_next_deadline(ep[0]) & 1;
	t_dl = (now_s() - t0) / reps;

	reps = 2000;
	t0 = now_s();
	for (k = 0; k < reps; k++) {
		mr_ep_handle_expiry(ep[0], now);
		pkts += mr_ep_tx(ep[0], now, buf, sizeof(buf), &meta) ? 1 : 0;
	}
	t_idle = (now_s() - t0) / reps;

	now = mr_ep_next_deadline(ep[0]) + 10000000;
	t0 = now_s();
	mr_ep_handle_expiry(ep[0], now);
	t_due = now_s() - t0;

	printf("qps %u paths %u packets in flight %llu\n", n, paths,
	       (unsigned long long)pkts);
	printf("next_deadline      %10.1f ns/call\n", t_dl * 1e9);
	printf("expiry_idle + tx   %10.1f ns/call\n", t_idle * 1e9);
	printf("expiry_all_due     %10.1f ns/QP (%u QPs)\n", t_due * 1e9 / n,
	       n);
	printf("memory per QP      %10zu bytes (%zu KiB):", per_qp,
	       per_qp / 1024);
	for (i = 0; i < (unsigned)nlog; i++)
		printf(" %zu", alloc_log[i]);
	printf("\n");
	return d == 0; /* keeps the deadline loop from being optimised out */
}
