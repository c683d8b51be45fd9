// SPDX-License-Identifier: BSD-2-Clause
/*
 * The timer queue (mr_timerq.c) against a reference model, and the
 * endpoint's use of it (mr_ep.c): the next deadline is the earliest QP's,
 * expiry visits and queues for transmit only the QPs that are due.
 */
#include "engine_world.h"
#include "mr_engine.h" /* white box: the work queue, the timer queue */
#include "mr_sched.h"
#include "mr_test.h"
#include "mr_test_mem.h"
#include "mr_timerq.h"

#define NE 257

/* Random inserts, moves up and down, removals and pops over 257 entries,
 * checked after every operation against a linear scan of the model. */
static void test_heap_model(void)
{
	static struct mr_timerq_entry e[NE];
	static uint64_t model[NE]; /* UINT64_MAX: not queued */
	struct mr_timerq q;
	uint64_t s = 0x1234567;
	int i, k;

	MR_CHECK_EQ(mr_timerq_init(&q, &mr_test_heap, NE), 0);
	for (i = 0; i < NE; i++) {
		mr_timerq_entry_init(&e[i]);
		model[i] = UINT64_MAX;
	}
	MR_CHECK(mr_timerq_top(&q) == NULL);
	MR_CHECK(mr_timerq_next(&q) == UINT64_MAX);
	for (k = 0; k < 200000; k++) {
		uint64_t r = xs(&s), min = UINT64_MAX, at;
		int j = (int)(r % NE), op = (int)(r >> 20) % 8, n = 0;

		/* few distinct keys: ties are common */
		at = 1000 + (xs(&s) % 64) * 10;
		if (op < 5) {
			MR_CHECK_EQ(mr_timerq_set(&q, &e[j], at), 0);
			model[j] = at;
		} else if (op < 7) {
			mr_timerq_remove(&q, &e[j]);
			model[j] = UINT64_MAX;
		} else if (mr_timerq_top(&q)) {
			struct mr_timerq_entry *t = mr_timerq_top(&q);

			MR_CHECK(model[t - e] == t->at);
			mr_timerq_set(&q, t, UINT64_MAX);
			model[t - e] = UINT64_MAX;
		}
		for (i = 0; i < NE; i++) {
			if (model[i] < min)
				min = model[i];
			n += model[i] != UINT64_MAX;
			MR_CHECK((model[i] != UINT64_MAX) ==
				 (e[i].pos != MR_TIMERQ_NONE));
		}
		MR_CHECK_EQ(mr_timerq_len(&q), n);
		MR_CHECK(mr_timerq_next(&q) == min);
		MR_CHECK(mr_timerq_valid(&q));
	}
	mr_timerq_fini(&q);
}

/* A full queue refuses a new entry and keeps the old ones. */
static void test_heap_full(void)
{
	struct mr_timerq_entry e[3];
	struct mr_timerq q;
	int i;

	MR_CHECK_EQ(mr_timerq_init(&q, &mr_test_heap, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_timerq_init(&q, &mr_test_heap, 2), 0);
	for (i = 0; i < 3; i++)
		mr_timerq_entry_init(&e[i]);
	MR_CHECK_EQ(mr_timerq_set(&q, &e[0], 30), 0);
	MR_CHECK_EQ(mr_timerq_set(&q, &e[1], 20), 0);
	MR_CHECK_EQ(mr_timerq_set(&q, &e[2], 10), -MR_ENOMEM);
	MR_CHECK(e[2].pos == MR_TIMERQ_NONE);
	MR_CHECK(mr_timerq_next(&q) == 20);
	MR_CHECK_EQ(mr_timerq_set(&q, &e[1], UINT64_MAX), 0);
	MR_CHECK(mr_timerq_next(&q) == 30);
	MR_CHECK_EQ(mr_timerq_set(&q, &e[2], 10), 0);
	MR_CHECK(mr_timerq_next(&q) == 10);
	MR_CHECK(mr_timerq_valid(&q));
	mr_timerq_fini(&q);
}

#define NPAIR 64

static void connect_n(struct world *w, struct mr_qp *a[], struct mr_qp *b[])
{
	struct mr_qp_config c = {
		.type = MR_QPT_RC,
		.mode = MR_MODE_METAROCE,
		.pd = 1,
		.max_send_wr = 4,
		.max_recv_wr = 4,
		.max_send_sge = 1,
		.max_recv_sge = 1,
	};
	struct mr_qp_attr at;
	int i, k;

	for (k = 0; k < NPAIR; k++) {
		struct mr_qp *q[2];

		c.qpn = 0x100 + k;
		if (mr_qp_create(w->n[0].ep, &c, &q[0]))
			abort();
		c.qpn = 0x200 + k;
		if (mr_qp_create(w->n[1].ep, &c, &q[1]))
			abort();
		for (i = 0; i < 2; i++) {
			memset(&at, 0, sizeof(at));
			at.state = MR_QPS_INIT;
			at.access = RW;
			mr_qp_modify(q[i], &at,
				     MR_QP_STATE | MR_QP_ACCESS_FLAGS);
			at.state = MR_QPS_RTR;
			at.dest_qpn = (i ? 0x100 : 0x200) + k;
			at.rq_psn = 77;
			at.path_mtu_bytes = 1024;
			at.max_dest_rd_atomic = 1;
			at.min_rnr_timer = 1;
			mr_qp_modify(q[i], &at,
				     MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
					     MR_QP_DEST_QPN | MR_QP_RQ_PSN |
					     MR_QP_MAX_DEST_RD_ATOMIC |
					     MR_QP_MIN_RNR_TIMER);
			at.state = MR_QPS_RTS;
			at.sq_psn = 77;
			at.timeout = 14;
			at.retry_cnt = 7;
			at.rnr_retry = 7;
			at.max_rd_atomic = 1;
			mr_qp_modify(q[i], &at,
				     MR_QP_STATE | MR_QP_SQ_PSN |
					     MR_QP_TIMEOUT | MR_QP_RETRY_CNT |
					     MR_QP_RNR_RETRY |
					     MR_QP_MAX_QP_RD_ATOMIC);
		}
		a[k] = q[0];
		b[k] = q[1];
	}
}

/*
 * 64 connections, all idle but one whose packets are all lost: the
 * endpoint's next deadline is that QP's (its tail-loss probe, MR-TMR-9,
 * or its RTO) and nothing else is queued
 * in the timer queue; expiry at that time queues exactly that QP for
 * transmit (before: every QP), and it resends. Then a second QP times
 * out later and only it is touched.
 */
static void test_expiry_only_due(void)
{
	static struct world w;
	static uint8_t src[4096], dst[NPAIR * 4096];
	struct mr_qp *a[NPAIR], *b[NPAIR];
	uint64_t d, retx;
	int k;

	struct mr_ep_config cfg = base_cfg;

	cfg.max_qp = NPAIR;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_n(&w, a, b);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	fill(src, sizeof(src), 3);
	MR_CHECK(mr_ep_next_deadline(w.n[0].ep) == UINT64_MAX);
	MR_CHECK_EQ(mr_timerq_len(&w.n[0].ep->timers), 0);
	w.l[0].drop_all = 1;
	MR_CHECK_EQ(post_send(a[7], MR_WR_RDMA_WRITE, 1, src, 4096, 5,
			      dst + 7 * 4096, 6, MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(world_step(&w), 1); /* sends its 4 packets, all lost */
	MR_CHECK_EQ(mr_timerq_len(&w.n[0].ep->timers), 1);
	MR_CHECK(mr_timerq_top(&w.n[0].ep->timers) == &a[7]->tmr);
	d = mr_ep_next_deadline(w.n[0].ep);
	MR_CHECK(d == mr_qp_deadline(a[7]));
	MR_CHECK(d > w.now && d != UINT64_MAX);
	MR_CHECK_EQ(w.n[0].ep->work_n, 0);
	/* Early: nothing is due, nothing is queued. */
	mr_ep_handle_expiry(w.n[0].ep, d - 1);
	MR_CHECK_EQ(w.n[0].ep->work_n, 0);
	MR_CHECK(mr_ep_next_deadline(w.n[0].ep) == d);
	w.l[0].drop_all = 0;
	w.now = d;
	mr_ep_handle_expiry(w.n[0].ep, d);
	MR_CHECK_EQ(w.n[0].ep->work_n, 1);
	MR_CHECK(w.n[0].ep->work[w.n[0].ep->work_head] == a[7]);
	MR_CHECK_EQ(mr_ep_timers_check(w.n[0].ep), 0);
	retx = mr_qp_counters(a[7])->retx_pkts;
	want_a = 1;
	MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
	MR_CHECK(mr_qp_counters(a[7])->retx_pkts > retx);
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst + 7 * 4096, src, 4096);
	/* One timer event: the RTO, (MR-MP-8) the suspect timer when an
	 * ACK of the connection's earlier traffic arrived after the lost
	 * packets left, or (MR-TMR-9) the tail-loss probe, which comes
	 * before both when nothing came back after the newest packet. */
	for (k = 0; k < NPAIR; k++)
		MR_CHECK_EQ(mr_qp_counters(a[k])->timeouts +
				    mr_qp_counters(a[k])->path_suspects +
				    mr_qp_counters(a[k])->tail_probes,
			    k == 7 ? 1 : 0);
	/* Settled: no deadline is left anywhere. */
	MR_CHECK(run_until(&w, NULL, w.now + 10000000) || 1);
	MR_CHECK(mr_ep_next_deadline(w.n[0].ep) == UINT64_MAX);
	MR_CHECK(mr_ep_next_deadline(w.n[1].ep) == UINT64_MAX);
	/* A destroyed QP leaves the queue. */
	w.l[0].drop_all = 1;
	MR_CHECK_EQ(post_send(a[40], MR_WR_RDMA_WRITE, 2, src, 1024, 5,
			      dst + 40 * 4096, 6, MR_SEND_SIGNALED, w.now),
		    0);
	MR_CHECK_EQ(world_step(&w), 1);
	MR_CHECK_EQ(mr_timerq_len(&w.n[0].ep->timers), 1);
	for (k = 0; k < NPAIR; k++) {
		mr_qp_destroy(a[k]);
		mr_qp_destroy(b[k]);
	}
	MR_CHECK_EQ(mr_timerq_len(&w.n[0].ep->timers), 0);
	MR_CHECK(mr_ep_next_deadline(w.n[0].ep) == UINT64_MAX);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_heap_model), MR_TEST(test_heap_full),
	     MR_TEST(test_expiry_only_due))
