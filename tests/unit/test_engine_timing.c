// SPDX-License-Identifier: BSD-2-Clause
/*
 * Engine tests about time (mr_req_rx.c timers, mr_pathtx.c RTO): what a
 * loaded host does to the core (ACKs late by milliseconds against a
 * 100 us minimum RTO), the retry and RNR limits, and the rings that wrap
 * after 256 messages. Literal timestamps, scripted stalls and losses,
 * every byte compared.
 */
#include "engine_world.h"
#include "mr_engine.h" /* white box: RTT state, retry state */
#include "mr_test.h"

/* Sender a WRITEs n messages of len bytes, at most `depth` outstanding,
 * to b; each message has its own pattern. Returns the number of
 * successful completions at a, stops at the first error. */
static int write_stream(struct world *w, struct pair *p, uint8_t *src,
			uint8_t *dst, uint32_t len, int n, int depth,
			uint64_t limit)
{
	int posted = 0, i;

	want_b = 0;
	while (w->n[0].ncqe < n && w->now < limit) {
		while (posted < n && posted - w->n[0].ncqe < depth) {
			uint32_t slot = (uint32_t)(posted % depth);

			fill(src + (size_t)slot * len, len, (uint32_t)posted);
			if (post_send(p->a, MR_WR_RDMA_WRITE, (uint64_t)posted,
				      src + (size_t)slot * len, len, 5,
				      dst + (size_t)slot * len, 6, 0, w->now))
				return -1;
			posted++;
		}
		want_a = w->n[0].ncqe + 1;
		if (!run_until(w, cqe_done, limit))
			break;
		i = w->n[0].ncqe - 1;
		if (w->n[0].cqe[i].status != MR_WC_SUCCESS ||
		    w->n[0].cqe[i].wr_id != (uint64_t)i)
			return i;
		/* the message of that slot is in b's memory, byte-exact */
		fill(src + (size_t)(i % depth) * len, len, (uint32_t)i);
		if (memcmp(dst + (size_t)(i % depth) * len,
			   src + (size_t)(i % depth) * len, len))
			return -2;
	}
	return w->n[0].ncqe;
}

/*
 * A loaded receiver: b sends nothing during 1.5 ms of every 2 ms, so its
 * ACKs leave up to 1.5 ms late, 15 times the 100 us minimum RTO (50 us
 * one-way delay), and 1 packet in 500 is lost. 300 WRITEs of 16 packets
 * (past every ring of 256: messages, per-path records, SACK bits) must
 * all complete, byte-exact, with retry_cnt 7 and a 4.2 ms local ACK
 * timeout: a timeout followed by ACKs is not a retry, and the late ACKs
 * teach the RTO the real RTT, so spurious timeouts stay few.
 */
static void test_late_acks(void)
{
	static struct world w;
	static uint8_t src[16 * 16384], dst[16 * 16384];
	const struct mr_counters *c;
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 32, NULL);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	set_rts_attr(p.a, MR_QP_TIMEOUT, 10);
	w.l[0].delay = w.l[1].delay = 50000;
	w.l[1].stall_every = 2000000;
	w.l[1].stall_len = 1500000;
	w.l[0].loss_ppm = 2000;
	MR_CHECK_EQ(write_stream(&w, &p, src, dst, 16384, 300, 1,
				 w.now + 20000000000ull),
		    300);
	c = mr_qp_counters(p.a);
	/* Before MR-TMR-8: 914 timeouts and 1073 duplicates (every late
	 * ACK fired the RTO again); now about one per path per RTT regime
	 * change, and a few real losses (about 10 of 4800 packets). */
	MR_CHECK(c->timeouts <= 30);
	MR_CHECK(mr_qp_counters(p.b)->duplicates <= 80);
	MR_CHECK(mr_qp_counters(p.b)->msgs_rcvd == 300);
	destroy_pair(&p);
	world_fini(&w);
}

/*
 * MR-REQ-14: a WRITE_WITH_IMM whose data b took but that finds no receive
 * WR is RNR-NAKed like a SEND. With a finite rnr_retry the requester must
 * fail with RNR_RETRY_EXC_ERR although none of its packets is left
 * unacknowledged (it probes with the last packet after each wait); with
 * rnr_retry 7 it completes once b posts a receive, 5 ms later.
 */
static void test_write_imm_rnr(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096], r[64];
	const struct mr_counters *c;
	struct pair p;
	int i;

	for (i = 0; i < 2; i++) {
		memset(b, 0, sizeof(b));
		fill(a, sizeof(a), 40 + (uint32_t)i);
		MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
		connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
		reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
		reg(&w.n[1], 6, b, sizeof(b), RW);
		reg(&w.n[1], 7, r, sizeof(r), MR_ACCESS_LOCAL_WRITE);
		if (!i)
			set_rts_attr(p.a, MR_QP_RNR_RETRY, 2);
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 1, a,
				      3000, 5, b, 6, 0, w.now),
			    0);
		want_a = 1;
		want_b = 0;
		if (!i) {
			MR_CHECK(run_until(&w, cqe_done, w.now + 1000000000));
			MR_CHECK_EQ(w.n[0].cqe[0].status,
				    MR_WC_RNR_RETRY_EXC_ERR);
			c = mr_qp_counters(p.a);
			MR_CHECK_EQ(c->rnr_waits, 2);
			MR_CHECK_EQ(c->nak_rcvd[MR_NAK_RNR], 3);
			MR_CHECK_EQ(w.n[1].ncqe, 0);
		} else {
			MR_CHECK(run_until(&w, NULL, w.now + 5000000));
			MR_CHECK_EQ(w.n[0].ncqe, 0);
			MR_CHECK(mr_qp_counters(p.a)->rnr_waits >= 2);
			MR_CHECK_EQ(post_recv(p.b, 9, r, sizeof(r), 7), 0);
			want_b = 1;
			MR_CHECK(run_until(&w, cqe_done, w.now + 100000000));
			MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
			MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
			MR_CHECK_EQ(w.n[1].cqe[0].opcode,
				    MR_WC_RECV_RDMA_WITH_IMM);
			MR_CHECK_EQ(w.n[1].cqe[0].byte_len, 3000);
			MR_CHECK_EQ(w.n[1].cqe[0].imm, 0x01020304);
		}
		/* the data was placed either way (MR-RSP-3) */
		MR_CHECK_MEM(b, a, 3000);
		destroy_pair(&p);
		world_fini(&w);
	}
}

static struct mr_qp *acked_qp;

static int got_ack(struct world *w)
{
	return mr_qp_counters(acked_qp)->rx_ack_pkts >= 1;
}

/*
 * Responses are the responder's to make reliable (MR-RSP-6), and that
 * must end too. 1: every READ response is lost, ACKs pass: the responder
 * gives up after its retries (MR-ERR-8: ERR, async fatal event); the
 * requester, whose request was acknowledged but which hears no response,
 * asks again after its local ACK timeout (MR-REQ-15) and the failed
 * responder NAKs: REM_OP_ERR. 2: the responder falls silent once it has
 * acknowledged the READ: the requester's probes go unanswered and the WR
 * fails with RETRY_EXC_ERR.
 */
static void test_response_retry_limit(void)
{
	static struct world w;
	static uint8_t a[8192], b[8192];
	struct mr_qp_attr at;
	struct pair p;
	int i;

	for (i = 0; i < 2; i++) {
		MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
		connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
		reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
		reg(&w.n[1], 6, b, sizeof(b), RW);
		set_rts_attr(p.a, MR_QP_RETRY_CNT, 3);
		/* b: retry_cnt 3, timeout 3 (33 us per retry) */
		set_rts_attr(p.b, MR_QP_RETRY_CNT | MR_QP_TIMEOUT, 3);
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_READ, 1, a, sizeof(a), 5,
				      b, 6, 0, w.now),
			    0);
		want_a = 1;
		want_b = 0;
		w.l[1].drop_op = MR_OP_READ_RESP;
		if (i) {
			acked_qp = p.a;
			MR_CHECK(run_until(&w, got_ack, w.now + 1000000));
			w.l[1].drop_all = 1;
		}
		MR_CHECK(run_until(&w, cqe_done, w.now + 10000000000ull));
		MR_CHECK_EQ(w.n[0].cqe[0].status,
			    (i ? MR_WC_RETRY_EXC_ERR : MR_WC_REM_OP_ERR));
		/* the responder gave up on its own, with the async event */
		MR_CHECK(run_until(&w, NULL, w.now + 10000000000ull));
		MR_CHECK_EQ(mr_qp_query(p.b, &at), 0);
		MR_CHECK_EQ(at.state, MR_QPS_ERR);
		MR_CHECK_EQ(w.n[1].qp_errors, 1);
		MR_CHECK_EQ(w.n[0].qp_errors, 0);
		MR_CHECK_EQ(mr_qp_counters(p.b)->reads_executed, 1);
		MR_CHECK(mr_ep_next_deadline(w.n[0].ep) == UINT64_MAX);
		MR_CHECK(mr_ep_next_deadline(w.n[1].ep) == UINT64_MAX);
		destroy_pair(&p);
		world_fini(&w);
	}
}

/*
 * MR-ERR-2 after an idle period (KI-2): one WRITE completes, the QP idles
 * for 1 s, then the peer vanishes and a WRITE is posted. timeout 14
 * (67.1 ms) and retry_cnt 2 allow 3 x 67.1 ms from that WRITE's first
 * transmission, not from the last ACK a second earlier.
 */
static void test_retry_after_idle(void)
{
	static struct world w;
	static uint8_t a[4096], b[4096];
	uint64_t t0, limit = 3 * (4096ull << 14);
	struct pair p;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, a, sizeof(a), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, b, sizeof(b), RW);
	set_rts_attr(p.a, MR_QP_TIMEOUT, 14);
	set_rts_attr(p.a, MR_QP_RETRY_CNT, 2);
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 1, a, 2000, 5, b, 6, 0, w.now),
		0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, w.now + 1000000));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK(run_until(&w, NULL, w.now + 1000000000));
	w.now += 1000000000; /* idle: nothing happens in between */
	w.l[0].drop_all = w.l[1].drop_all = 1;
	t0 = w.now;
	MR_CHECK_EQ(
		post_send(p.a, MR_WR_RDMA_WRITE, 2, a, 2000, 5, b, 6, 0, w.now),
		0);
	want_a = 2;
	MR_CHECK(run_until(&w, cqe_done, w.now + 10000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[1].status, MR_WC_RETRY_EXC_ERR);
	MR_CHECK(w.now - t0 >= limit);
	/* and not much later: the next expiry after the limit */
	MR_CHECK(w.now - t0 < 2 * limit);
	destroy_pair(&p);
	world_fini(&w);
}

/*
 * Time that goes backwards between calls: a datapath whose progress
 * thread reads the clock and then waits for the lock an application
 * thread holds (having read a later time) calls the core with an older
 * now than the previous call. Every 7th packet reaches a 2 ms in the
 * past. The core must take it as the latest time it saw: no RTT sample
 * from a negative age (which made srtt 2.3e14 ns and the pacing rate
 * 1 Mb/s), no "no progress for ages" from now - progress_at wrapping
 * (which failed the WR with RETRY_EXC_ERR while ACKs kept coming).
 */
static void test_stale_now(void)
{
	static struct world w;
	static uint8_t src[16384], dst[16384];
	uint64_t max_srtt = 0, steps = 0;
	uint32_t min_rate = UINT32_MAX;
	struct pair p;
	int k;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 256, NULL);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	set_rts_attr(p.a, MR_QP_TIMEOUT, 8);
	set_rts_attr(p.a, MR_QP_RETRY_CNT, 1);
	w.n[0].stale_every = w.n[1].stale_every = 7;
	w.n[0].stale_ns = w.n[1].stale_ns = 2000000;
	w.now = 10000000000ull;
	fill(src, sizeof(src), 77);
	for (k = 0; k < 200; k++)
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, (uint64_t)k, src,
				      sizeof(src), 5, dst, 6, 0, w.now),
			    0);
	while (w.n[0].ncqe < 200 && steps++ < 1000000 && world_step(&w)) {
		for (k = 0; k < 4; k++)
			if (p.a->ptx[k].srtt > max_srtt)
				max_srtt = p.a->ptx[k].srtt;
		if (p.a->cc.rate_mbps < min_rate)
			min_rate = p.a->cc.rate_mbps;
	}
	MR_CHECK_EQ(w.n[0].ncqe, 200);
	for (k = 0; k < w.n[0].ncqe; k++)
		MR_CHECK_EQ(w.n[0].cqe[k].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst, src, sizeof(src));
	/* RTTs are 10 us here; a stale call is the same time as the latest */
	MR_CHECK(max_srtt < 100000);
	MR_CHECK(min_rate >= 1000);
	MR_CHECK_EQ(mr_qp_counters(p.a)->timeouts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

/* Step until exactly t (events before it happen, none after). */
static void run_to(struct world *w, uint64_t t)
{
	w->until = t;
	while (w->now < t && world_step(w))
		;
	w->until = 0;
}

/*
 * MR-RSP-12, ACK coalescing across messages: 8 WRITEs of 64 bytes (one
 * packet each, each with ACK_REQ) posted 1 us apart, 5 us one-way. With
 * ack_req_delay_ns 0 the responder ACKs each one; with 5 us, an ACK covers
 * the messages that arrive within 5 us of the ACK_REQ it owes, and the
 * last completion comes at most 5 us later than at once; a delay above
 * ack_delay_ns is held to it (MR-TMR-9's probe timeout allows for
 * ack_delay_ns only). *acks: B's ACKs; *lag: the last completion's time
 * after the last post.
 */
static void small_writes(uint32_t req_delay, uint64_t *acks, uint64_t *lag)
{
	static struct world w;
	static uint8_t src[8 * 64], dst[8 * 64];
	struct mr_ep_config cfg = base_cfg;
	struct pair p;
	uint64_t a0, last;
	int k;

	*acks = *lag = UINT64_MAX;
	cfg.ack_every = 16;
	cfg.ack_delay_ns = 20000;
	cfg.ack_req_delay_ns = req_delay;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	memset(dst, 0, sizeof(dst));
	fill(src, sizeof(src), 91);
	a0 = mr_qp_counters(p.b)->tx_ack_pkts;
	for (k = 0; k < 8; k++) {
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, (uint64_t)k,
				      src + 64 * k, 64, 5, dst + 64 * k, 6, 0,
				      w.now),
			    0);
		if (k < 7)
			run_to(&w, w.now + 1000);
	}
	last = w.now;
	want_a = 8;
	want_b = 0;
	MR_CHECK(run_until(&w, cqe_done, last + 1000000));
	for (k = 0; k < 8; k++)
		MR_CHECK_EQ(w.n[0].cqe[k].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst, src, sizeof(src));
	*acks = mr_qp_counters(p.b)->tx_ack_pkts - a0;
	*lag = w.now - last;
	destroy_pair(&p);
	world_fini(&w);
}

static void test_ack_coalescing(void)
{
	uint64_t acks, lag0, lag;

	/* at once: one ACK per message */
	small_writes(0, &acks, &lag0);
	MR_CHECK_EQ(acks, 8);
	/* 5 us: the first ACK at once (it carries the first rate hint,
	 * MR-CC-5), then arrivals 5 us apart at most share one */
	small_writes(5000, &acks, &lag);
	MR_CHECK(acks <= 3);
	MR_CHECK(lag <= lag0 + 5000 + 500);
	/* asked for 1 ms: held to ack_delay_ns, 20 us */
	small_writes(1000000, &acks, &lag);
	MR_CHECK(acks <= 2);
	MR_CHECK(lag <= lag0 + 20000 + 500);
}

/* MR-RSP-12: an ACK an ACK_REQ left waiting leaves with the QP's own next
 * packet: b answers a SEND at once (a ping-pong); a's send completes when
 * the answer arrives, not ack_req_delay_ns later. The second round is
 * measured (the first ACKs go at once, MR-CC-5). */
static struct world *pp_world;
static struct pair pp_pair;
static uint8_t pp_buf[4][64];

static void pp_answer(struct node *n, const struct mr_cqe *c)
{
	(void)n;
	if (c->is_recv)
		MR_CHECK_EQ(post_send(pp_pair.b, MR_WR_SEND, 77, pp_buf[2], 64,
				      7, NULL, 0, 0, pp_world->now),
			    0);
}

static void test_ack_with_answer(void)
{
	static struct world w;
	struct mr_ep_config cfg = base_cfg;
	uint64_t t0;
	int r;

	cfg.ack_every = 16;
	cfg.ack_delay_ns = 20000;
	cfg.ack_req_delay_ns = 10000;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	pp_world = &w;
	connect_qps(&w, &pp_pair, MR_MODE_METAROCE, 4, NULL);
	reg(&w.n[0], 7, pp_buf[0], 2 * 64, MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 7, pp_buf[2], 2 * 64, MR_ACCESS_LOCAL_WRITE);
	w.n[1].on_cqe = pp_answer;
	for (r = 1; r <= 2; r++) {
		MR_CHECK_EQ(post_recv(pp_pair.a, 1, pp_buf[1], 64, 7), 0);
		MR_CHECK_EQ(post_recv(pp_pair.b, 2, pp_buf[3], 64, 7), 0);
		fill(pp_buf[0], 64, 5 + (uint32_t)r);
		fill(pp_buf[2], 64, 15 + (uint32_t)r);
		t0 = w.now;
		MR_CHECK_EQ(post_send(pp_pair.a, MR_WR_SEND, 1, pp_buf[0], 64,
				      7, NULL, 0, 0, t0),
			    0);
		want_a = 2 * r; /* its send and the answer's receive */
		want_b = 2 * r - 1;
		MR_CHECK(run_until(&w, cqe_done, t0 + 1000000));
		/* one RTT (10 us) and the steps' 1 ns ticks */
		if (r == 2)
			MR_CHECK(w.now <= t0 + 10000 + 500);
		/* b's send: a's ACK within ack_req_delay_ns + the way */
		want_b = 2 * r;
		MR_CHECK(run_until(&w, cqe_done, t0 + 1000000));
		MR_CHECK(w.now <= t0 + 10000 + 10000 + 5000 + 500);
		MR_CHECK_EQ(w.n[0].cqe[2 * r - 2].status, MR_WC_SUCCESS);
		MR_CHECK_EQ(w.n[0].cqe[2 * r - 1].status, MR_WC_SUCCESS);
		MR_CHECK_MEM(pp_buf[3], pp_buf[0], 64);
		MR_CHECK_MEM(pp_buf[1], pp_buf[2], 64);
		run_to(&w, w.now + 100000);
	}
	w.n[1].on_cqe = NULL;
	destroy_pair(&pp_pair);
	world_fini(&w);
}

/* MR-RSP-12: only a one-way stream waits for ack_req_delay_ns. First a
 * stream: b sends nothing, so the ACK of a's WRITE waits the 10 us (one
 * ACK would cover the messages behind it). Then a ping-pong of SENDs
 * whose application at b answers 30 us after its receive, later than
 * the deadline, so the ACK cannot ride with the answer: b sent a packet
 * of its own since the previous ACK_REQ came, it is an exchange, and
 * a's next SEND is ACKed at once (without the rule, 10 us later). The
 * second round of each is measured (the first ACK goes at once,
 * MR-CC-5); 5 us one-way. */
static void test_ack_after_answer(void)
{
	static struct world w;
	static uint8_t buf[4][64];
	struct mr_ep_config cfg = base_cfg;
	struct pair p;
	uint64_t t0, waits;
	int r, na;

	cfg.ack_every = 16;
	cfg.ack_delay_ns = 20000;
	cfg.ack_req_delay_ns = 10000;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 4, NULL);
	reg(&w.n[0], 7, buf[0], 2 * 64, MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 8, buf[2], 2 * 64, RW);
	want_b = 0;
	for (r = 1; r <= 2; r++) {
		fill(buf[0], 64, 30 + (uint32_t)r);
		t0 = w.now;
		MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, (uint64_t)r,
				      buf[0], 64, 7, buf[3], 8, 0, t0),
			    0);
		want_a = r;
		MR_CHECK(run_until(&w, cqe_done, t0 + 1000000));
		MR_CHECK_EQ(w.n[0].cqe[r - 1].status, MR_WC_SUCCESS);
		MR_CHECK_MEM(buf[3], buf[0], 64);
		/* delayed: the RTT and the 10 us (1 ns steps: 500 slack) */
		if (r == 2)
			MR_CHECK(w.now >= t0 + 10000 + 10000 - 500 &&
				 w.now <= t0 + 10000 + 10000 + 500);
		run_to(&w, w.now + 100000);
	}
	MR_CHECK_EQ(mr_qp_counters(p.b)->ack_req_waits, 1);
	waits = mr_qp_counters(p.b)->ack_req_waits;
	for (r = 1; r <= 3; r++) {
		na = w.n[0].ncqe;
		MR_CHECK_EQ(post_recv(p.a, 10, buf[1], 64, 7), 0);
		MR_CHECK_EQ(post_recv(p.b, 20, buf[3], 64, 8), 0);
		fill(buf[0], 64, 40 + (uint32_t)r);
		fill(buf[2], 64, 50 + (uint32_t)r);
		t0 = w.now;
		MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 11, buf[0], 64, 7, NULL,
				      0, 0, t0),
			    0);
		want_a = na + 1;    /* its send's completion: b's ACK */
		want_b = 2 * r - 1; /* b's receive */
		MR_CHECK(run_until(&w, cqe_done, t0 + 1000000));
		MR_CHECK_EQ(w.n[0].cqe[na].status, MR_WC_SUCCESS);
		MR_CHECK_EQ(w.n[0].cqe[na].wr_id, 11);
		MR_CHECK_MEM(buf[3], buf[0], 64);
		/* at once from the second round on: one RTT */
		if (r >= 2)
			MR_CHECK(w.now <= t0 + 10000 + 500);
		/* b's application answers 30 us after its receive */
		run_to(&w, t0 + 5000 + 30000);
		MR_CHECK_EQ(w.n[1].ncqe, 2 * r - 1);
		MR_CHECK_EQ(post_send(p.b, MR_WR_SEND, 21, buf[2], 64, 8, NULL,
				      0, 0, w.now),
			    0);
		want_a = na + 2;
		want_b = 2 * r;
		MR_CHECK(run_until(&w, cqe_done, w.now + 1000000));
		MR_CHECK_EQ(w.n[0].cqe[na + 1].status, MR_WC_SUCCESS);
		MR_CHECK(w.n[1].cqe[2 * r - 2].is_recv);
		MR_CHECK_EQ(w.n[1].cqe[2 * r - 1].status, MR_WC_SUCCESS);
		MR_CHECK_MEM(buf[1], buf[2], 64);
		run_to(&w, w.now + 100000);
	}
	/* the exchange: no ACK_REQ waited on either side after the first
	 * round (b's first one waited: it had sent nothing yet) */
	MR_CHECK_EQ(mr_qp_counters(p.b)->ack_req_waits, waits + 1);
	MR_CHECK_EQ(mr_qp_counters(p.a)->ack_req_waits, 0);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_late_acks), MR_TEST(test_write_imm_rnr),
	     MR_TEST(test_response_retry_limit), MR_TEST(test_retry_after_idle),
	     MR_TEST(test_stale_now), MR_TEST(test_ack_coalescing),
	     MR_TEST(test_ack_with_answer), MR_TEST(test_ack_after_answer))
