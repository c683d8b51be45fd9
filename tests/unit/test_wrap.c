// SPDX-License-Identifier: BSD-2-Clause
/*
 * Rings and sequence spaces across their counter's 2^32 wrap (style
 * habit 7; mr_engine.h, mr_ring_slots): the send queue (msn), the
 * receive queue (rsn), the SRQ, the SRQ claims and the responder's
 * READ/atomic records, each started just below the wrap with depths that
 * are not powers of two (max_send_wr = 3, max_rd_atomic = 5). Before the
 * rings had power-of-two slots, the WQE posted at counter 0 took the slot
 * of the one at 2^32 - 1, which then completed twice.
 */
#include "engine_world.h"
#include "mr_engine.h"
#include "mr_qp.h" /* mr_qp_seq_base, mr_srq_seq_base */
#include "mr_test.h"

#define NMSG 24
#define LEN 3000

static struct world w;
static uint8_t src[NMSG][LEN], rd[NMSG][LEN];
static uint64_t res[NMSG];
static struct {
	uint8_t dst[NMSG][LEN];
	uint8_t pre[NMSG][LEN]; /* what READ i reads */
	uint64_t ctr;
} rmem; /* the responder's memory, rkey 6 */
#define dst rmem.dst
#define ctr rmem.ctr

static const struct mr_ep_config wrap_cfg = {
	.mtu = 1024,
	.num_paths = 4,
	.max_qp = 8,
	.max_rd_atomic = 5,
};

static int n_sq_done(struct world *ww)
{
	return ww->n[0].ncqe >= want_a && ww->n[1].ncqe >= want_b;
}

/* Each wr_id completes once, in posting order, successfully. */
static int check_cqes(const struct node *n, int first, int count, uint64_t id0)
{
	int i;

	for (i = 0; i < count; i++) {
		const struct mr_cqe *c = &n->cqe[first + i];

		if (c->status != MR_WC_SUCCESS || c->wr_id != id0 + (uint64_t)i)
			return 0;
	}
	return 1;
}

static void post_atomic(struct mr_qp *qp, uint64_t wr_id, uint64_t *local,
			uint64_t *remote)
{
	struct mr_sge s = { (uint64_t)(uintptr_t)local, 8, 8 };
	struct mr_send_wr wr = {
		.wr_id = wr_id,
		.opcode = MR_WR_ATOMIC_FETCH_AND_ADD,
		.flags = MR_SEND_SIGNALED,
		.sg_list = &s,
		.num_sge = 1,
		.remote_addr = (uint64_t)(uintptr_t)remote,
		.rkey = 6,
		.compare_add = 1,
	};

	mr_qp_post_send(qp, &wr, w.now);
}

static char op_of(const char *pat, int i)
{
	return pat[(size_t)i % strlen(pat)];
}

/* Messages i = 0..NMSG-1 with at most `depth` outstanding, opcodes from
 * pat in turn: S = SEND (into dst[i]), W = WRITE, R = READ, A =
 * FETCH_AND_ADD. */
static void run_mix(struct pair *p, struct mr_srq *srq, uint32_t depth,
		    const char *pat)
{
	int i, sends = 0, posted = 0, rcv_posted = 0, nsend = 0, nadd = 0;

	memset(dst, 0, sizeof(dst));
	memset(rd, 0, sizeof(rd));
	ctr = 100;
	for (i = 0; i < NMSG; i++) {
		fill(src[i], LEN, (uint32_t)i + 3);
		fill(rmem.pre[i], LEN, (uint32_t)i + 50);
		nsend += op_of(pat, i) == 'S';
	}
	reg(&w.n[0], 5, &src[0][0], sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 7, &rd[0][0], sizeof(rd), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[0], 8, (uint8_t *)res, sizeof(res), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, (uint8_t *)&rmem, sizeof(rmem), RW);
	want_a = 0;
	want_b = 0;
	while (posted < NMSG) {
		/* Keep `depth` receives posted ahead (RQ or SRQ ring);
		 * SEND i lands in dst[i]. */
		while (rcv_posted - sends < (int)depth && rcv_posted < nsend) {
			int k = 0, j;
			struct mr_sge s = { 0, LEN, 6 };

			for (j = 0; j < NMSG; j++)
				if (op_of(pat, j) == 'S' && k++ == rcv_posted)
					break;
			s.addr = (uint64_t)(uintptr_t)dst[j];
			struct mr_recv_wr rw = { 1000 + (uint64_t)rcv_posted,
						 &s, 1 };

			if (srq)
				MR_CHECK_EQ(mr_srq_post_recv(srq, &rw), 0);
			else
				MR_CHECK_EQ(mr_qp_post_recv(p->b, &rw), 0);
			rcv_posted++;
		}
		while (posted < NMSG && posted - w.n[0].ncqe < (int)depth) {
			i = posted;
			switch (op_of(pat, i)) {
			case 'S':
				MR_CHECK_EQ(post_send(p->a, MR_WR_SEND,
						      (uint64_t)i, src[i], LEN,
						      5, NULL, 0, 0, w.now),
					    0);
				sends++;
				break;
			case 'W':
				MR_CHECK_EQ(post_send(p->a, MR_WR_RDMA_WRITE,
						      (uint64_t)i, src[i], LEN,
						      5, dst[i], 6, 0, w.now),
					    0);
				break;
			case 'R':
				MR_CHECK_EQ(post_send(p->a, MR_WR_RDMA_READ,
						      (uint64_t)i, rd[i], LEN,
						      7, rmem.pre[i], 6, 0,
						      w.now),
					    0);
				break;
			default:
				post_atomic(p->a, (uint64_t)i, &res[i], &ctr);
				nadd++;
				break;
			}
			posted++;
		}
		/* The queue is full: one more is refused, nothing lost. */
		if (posted < NMSG)
			MR_CHECK_EQ(post_send(p->a, MR_WR_RDMA_WRITE, 999,
					      src[0], 8, 5, dst[0], 6, 0,
					      w.now),
				    -MR_EAGAIN);
		want_a = w.n[0].ncqe + 1;
		want_b = sends;
		MR_CHECK(run_until(&w, n_sq_done, w.now + 200000000));
	}
	want_a = NMSG;
	want_b = sends;
	MR_CHECK(run_until(&w, n_sq_done, w.now + 200000000));
	MR_CHECK_EQ(w.n[0].ncqe, NMSG);
	MR_CHECK(check_cqes(&w.n[0], 0, NMSG, 0));
	MR_CHECK_EQ(w.n[1].ncqe, sends);
	MR_CHECK(check_cqes(&w.n[1], 0, sends, 1000));
	nadd = 0;
	for (i = 0; i < NMSG; i++) {
		switch (op_of(pat, i)) {
		case 'S':
		case 'W':
			MR_CHECK_MEM(dst[i], src[i], LEN);
			break;
		case 'R':
			MR_CHECK_MEM(rd[i], rmem.pre[i], LEN);
			break;
		default:
			MR_CHECK_EQ(res[i], 100 + (uint64_t)nadd);
			nadd++;
			break;
		}
	}
	MR_CHECK_EQ(ctr, 100 + (uint64_t)nadd);
	MR_CHECK_EQ(w.n[0].qp_errors + w.n[1].qp_errors, 0);
	MR_CHECK_EQ(mr_qp_counters(p->a)->retx_pkts, 0);
}

static void wrap_rc(uint32_t base, uint32_t depth, int use_srq, const char *pat)
{
	struct mr_srq_config sc = { .pd = 1, .max_wr = 3, .max_sge = 1 };
	struct mr_srq *srq = NULL;
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &wrap_cfg), 0);
	if (use_srq) {
		MR_CHECK_EQ(mr_srq_create(w.n[1].ep, &sc, &srq), 0);
		MR_CHECK_EQ(mr_srq_seq_base(srq, base - 1), 0);
	}
	connect_qps(&w, &p, MR_MODE_METAROCE, depth, srq);
	MR_CHECK_EQ(mr_qp_seq_base(p.a, base), 0);
	MR_CHECK_EQ(mr_qp_seq_base(p.b, base), 0);
	run_mix(&p, srq, depth, pat);
	/* Once traffic flowed the counters can no longer be moved. */
	MR_CHECK_EQ(mr_qp_seq_base(p.a, 0), -MR_ESTATE);
	destroy_pair(&p);
	if (srq)
		MR_CHECK_EQ(mr_srq_destroy(srq), 0);
	world_fini(&w);
}

static void test_ring_slots(void)
{
	MR_CHECK_EQ(mr_ring_slots(1), 1);
	MR_CHECK_EQ(mr_ring_slots(3), 4);
	MR_CHECK_EQ(mr_ring_slots(4), 4);
	MR_CHECK_EQ(mr_ring_slots(16385), 32768);
}

/* Send queue of 3, receive queue of 3: msn and rsn cross the wrap. */
static void test_wrap_sq3_rq(void)
{
	wrap_rc(0xfffffffeu, 3, 0, "SWRA");
}

static void test_wrap_sq5_rq(void)
{
	wrap_rc(0xfffffffbu, 5, 0, "SSWRA");
}

/* SRQ of 3 and the QP's claims cross the wrap. */
static void test_wrap_srq(void)
{
	wrap_rc(0xfffffffdu, 3, 1, "SSW");
}

/* Four READs and atomics in flight at once: the responder's 5 records
 * (max_rd_atomic = 5, 4 used) cross the wrap while all are live. */
static void test_wrap_resp(void)
{
	wrap_rc(0xfffffffeu, 5, 0, "RRARA");
}

MR_TEST_MAIN(MR_TEST(test_ring_slots), MR_TEST(test_wrap_sq3_rq),
	     MR_TEST(test_wrap_sq5_rq), MR_TEST(test_wrap_srq),
	     MR_TEST(test_wrap_resp))
