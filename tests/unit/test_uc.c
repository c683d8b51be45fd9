// SPDX-License-Identifier: BSD-2-Clause
/*
 * Unreliable connected QPs (docs/spec/transport.md MR-UC-*): packets of a
 * message lost on the link make the receiver discard that message (no
 * completion, its receive WQE reused, MR-UC-3) while later messages land
 * byte for byte; the sender completes once a message is sent (MR-UC-2)
 * and nothing is ever sent back (MR-UC-1); READ and atomics are refused
 * at post (MR-UC-6); the state machine takes IB's UC attributes
 * (MR-UC-9). The world's path mtu is 1024: a 3000-byte message is three
 * packets.
 */
#include "engine_world.h"
#include "mr_test.h"

static struct world w;
static uint8_t src[64 * 1024], dst[64 * 1024], rbuf[4][8192];

static unsigned uc_rtr(void)
{
	return MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU | MR_QP_DEST_QPN |
	       MR_QP_RQ_PSN;
}

static struct mr_srq *uc_srq_b; /* node 1's QP receives from it if set */

static int uc_create(struct mr_ep *ep, uint32_t qpn, struct mr_qp **q)
{
	struct mr_qp_config c = {
		.type = MR_QPT_UC,
		.pd = 1,
		.qpn = qpn,
		.max_send_wr = 256,
		.max_recv_wr = 256,
		.max_send_sge = 4,
		.max_recv_sge = 4,
		.max_inline = 64,
		.srq = qpn == 0x22 ? uc_srq_b : NULL,
	};

	return mr_qp_create(ep, &c, q);
}

/* MR-UC-9: INIT needs ACCESS_FLAGS, RTR DEST/PATH_MTU/DEST_QPN/RQ_PSN,
 * RTS SQ_PSN only. */
static void uc_connect(struct pair *p)
{
	struct mr_qp *q[2];
	struct mr_qp_attr at;
	int i;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	MR_CHECK_EQ(uc_create(w.n[0].ep, 0x11, &q[0]), 0);
	MR_CHECK_EQ(uc_create(w.n[1].ep, 0x22, &q[1]), 0);
	for (i = 0; i < 2; i++) {
		memset(&at, 0, sizeof(at));
		at.state = MR_QPS_INIT;
		at.access = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at,
					 MR_QP_STATE | MR_QP_ACCESS_FLAGS),
			    0);
		at.state = MR_QPS_RTR;
		at.dest_qpn = i ? 0x11 : 0x22;
		at.rq_psn = i ? 0xfffffff0u : 0x7000;
		at.path_mtu_bytes = world_path_mtu;
		MR_CHECK_EQ(mr_qp_modify(q[i], &at, uc_rtr()), 0);
		at.state = MR_QPS_RTS;
		at.sq_psn = i ? 0x7000 : 0xfffffff0u; /* wraps soon */
		MR_CHECK_EQ(mr_qp_modify(q[i], &at,
					 MR_QP_STATE | MR_QP_SQ_PSN),
			    0);
	}
	p->a = q[0];
	p->b = q[1];
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 6, dst, sizeof(dst), RW);
	reg(&w.n[1], 7, (uint8_t *)rbuf, sizeof(rbuf), MR_ACCESS_LOCAL_WRITE);
}

/* One path keeps order (MR-UC-1), so this link delivers in order (the
 * world's link may reorder packets due at the same time): node 0's
 * packets to node 1, dropping those w.l[0] selects by send index or by
 * its seeded loss rate. Node 1 must have nothing to send. */
static void run_all(void)
{
	static uint8_t buf[8192];
	struct mr_rx_meta meta = { 0 };
	struct mr_tx_meta tm;
	struct link *l = &w.l[0];
	size_t len;
	int i, drop;

	while ((len = mr_ep_tx(w.n[0].ep, w.now, buf, sizeof(buf), &tm))) {
		uint64_t idx = l->sent++;

		MR_CHECK_EQ(tm.path_id, 0);
		drop = 0;
		for (i = 0; i < l->ndrop; i++)
			drop |= l->drop_idx[i] == idx;
		if (l->loss_ppm && xs(&l->rng) % 1000000 < l->loss_ppm)
			drop = 1;
		w.now += 100;
		if (!drop)
			mr_ep_rx(w.n[1].ep, w.now, buf, len, &meta);
	}
	MR_CHECK_EQ(mr_ep_tx(w.n[1].ep, w.now, buf, sizeof(buf), &tm), 0);
}

/* MR-UC-1: the receiver of a UC QP never transmits. */
static void check_b_silent(void)
{
	MR_CHECK_EQ(mr_ep_counters(w.n[1].ep)->tx_pkts, 0);
	MR_CHECK_EQ(mr_ep_next_deadline(w.n[1].ep), UINT64_MAX);
	MR_CHECK_EQ(mr_ep_next_deadline(w.n[0].ep), UINT64_MAX);
}

static const struct mr_cqe *recv_cqe(int i)
{
	int k, n = 0;

	for (k = 0; k < w.n[1].ncqe; k++)
		if (w.n[1].cqe[k].is_recv && n++ == i)
			return &w.n[1].cqe[k];
	return NULL;
}

/* A SEND of three packets loses packet `lost` (0, 1 or 2); the SEND
 * after it lands in the same receive WQE, every byte as sent. */
static void send_loss(uint64_t lost)
{
	struct pair p;
	const struct mr_cqe *c;
	int k;

	uc_connect(&p);
	fill(src, 3000, 1);
	fill(src + 4096, 2500, 2);
	memset(rbuf, 0xee, sizeof(rbuf));
	w.l[0].drop_idx = &lost;
	w.l[0].ndrop = 1;
	MR_CHECK_EQ(post_recv(p.b, 100, rbuf[0], 8192, 7), 0);
	MR_CHECK_EQ(post_recv(p.b, 101, rbuf[1], 8192, 7), 0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 1, src, 3000, 5, NULL, 0, 0,
			      w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND_WITH_IMM, 2, src + 4096, 2500,
			      5, NULL, 0, MR_SEND_SOLICITED, w.now),
		    0);
	run_all();
	/* MR-UC-2: both sends complete, successfully: they were sent. */
	MR_CHECK_EQ(w.n[0].ncqe, 2);
	for (k = 0; k < w.n[0].ncqe && k < 2; k++) {
		MR_CHECK_EQ(w.n[0].cqe[k].wr_id, (uint64_t)k + 1);
		MR_CHECK_EQ(w.n[0].cqe[k].status, MR_WC_SUCCESS);
		MR_CHECK_EQ(w.n[0].cqe[k].opcode, MR_WC_SEND);
	}
	/* MR-UC-3: one receive completion, for the second message, in the
	 * first WQE; the second WQE is still posted. */
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	c = recv_cqe(0);
	MR_CHECK(c != NULL);
	if (c) {
		MR_CHECK_EQ(c->wr_id, 100);
		MR_CHECK_EQ(c->status, MR_WC_SUCCESS);
		MR_CHECK_EQ(c->opcode, MR_WC_RECV);
		MR_CHECK_EQ(c->byte_len, 2500);
		MR_CHECK_EQ(c->wc_flags & MR_WC_F_WITH_IMM, MR_WC_F_WITH_IMM);
		MR_CHECK_EQ(c->imm, 0x01020304);
		MR_CHECK_EQ(c->solicited, 1);
		MR_CHECK_EQ(c->src_qp, 0x11);
	}
	MR_CHECK_MEM(rbuf[0], src + 4096, 2500);
	MR_CHECK_EQ(mr_qp_counters(p.b)->msgs_rcvd, 1);
	check_b_silent();
	/* The third message takes the WQE left over. */
	fill(src + 8192, 1500, 3);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 3, src + 8192, 1500, 5, NULL,
			      0, 0, w.now),
		    0);
	run_all();
	c = recv_cqe(1);
	MR_CHECK(c != NULL);
	if (c) {
		MR_CHECK_EQ(c->wr_id, 101);
		MR_CHECK_EQ(c->byte_len, 1500);
	}
	MR_CHECK_MEM(rbuf[1], src + 8192, 1500);
	destroy_pair(&p);
	world_fini(&w);
}

static void uc_send_first_lost(void)
{
	send_loss(0);
}

static void uc_send_middle_lost(void)
{
	send_loss(1);
}

static void uc_send_last_lost(void)
{
	send_loss(2);
}

/* WRITE loses its middle packet; the WRITE_WITH_IMM after it lands (one
 * receive completion with its imm), the one after that loses its first
 * packet and has no completion, the last one lands in the WQE the lost
 * one did not take. */
static void uc_write_imm_loss(void)
{
	static const uint64_t lost[] = { 1, 6 };
	struct pair p;
	const struct mr_cqe *c;
	static uint8_t snap[sizeof(dst)];

	uc_connect(&p);
	fill(src, 16384, 5);
	memset(dst, 0, sizeof(dst));
	w.l[0].drop_idx = lost;
	w.l[0].ndrop = 2;
	MR_CHECK_EQ(post_recv(p.b, 200, rbuf[0], 16, 7), 0);
	MR_CHECK_EQ(post_recv(p.b, 201, rbuf[1], 16, 7), 0);
	/* packets 0-2 */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE, 1, src, 3000, 5, dst, 6,
			      0, w.now),
		    0);
	/* packets 3-5 */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 2, src + 4096,
			      3000, 5, dst + 4096, 6, 0, w.now),
		    0);
	/* packets 6-8 */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 3, src + 8192,
			      3000, 5, dst + 8192, 6, 0, w.now),
		    0);
	/* packets 9-10 */
	MR_CHECK_EQ(post_send(p.a, MR_WR_RDMA_WRITE_WITH_IMM, 4, src + 12288,
			      2048, 5, dst + 12288, 6, 0, w.now),
		    0);
	run_all();
	MR_CHECK_EQ(w.n[0].ncqe, 4);
	MR_CHECK_EQ(w.n[0].cqe[0].opcode, MR_WC_RDMA_WRITE);
	MR_CHECK_EQ(w.n[1].ncqe, 2);
	c = recv_cqe(0);
	MR_CHECK(c != NULL);
	if (c) {
		MR_CHECK_EQ(c->wr_id, 200);
		MR_CHECK_EQ(c->opcode, MR_WC_RECV_RDMA_WITH_IMM);
		MR_CHECK_EQ(c->byte_len, 3000);
		MR_CHECK_EQ(c->imm, 0x01020304);
	}
	c = recv_cqe(1);
	MR_CHECK(c != NULL);
	if (c) {
		MR_CHECK_EQ(c->wr_id, 201);
		MR_CHECK_EQ(c->byte_len, 2048);
	}
	MR_CHECK_MEM(dst + 4096, src + 4096, 3000);
	MR_CHECK_MEM(dst + 12288, src + 12288, 2048);
	/* The lost WRITE_IMM's first packet never came: its later packets
	 * placed nothing (MR-UC-3). */
	memset(snap, 0, sizeof(snap));
	MR_CHECK_MEM(dst + 8192, snap, 3000);
	MR_CHECK_EQ(mr_qp_counters(p.b)->msgs_rcvd, 2);
	check_b_silent();
	destroy_pair(&p);
	world_fini(&w);
}

/* Many messages of random lengths over a lossy link: each completion
 * is a whole message, every byte as sent, in order; every send
 * completes. */
static void uc_random_loss(void)
{
	enum { N = 300 };
	struct pair p;
	uint64_t rng = 77;
	uint32_t len[N], last = 0;
	int i, k, landed = 0;

	uc_connect(&p);
	w.l[0].loss_ppm = 100000;
	w.l[0].rng = 5;
	for (k = 0; k < 4; k++)
		MR_CHECK_EQ(post_recv(p.b, (uint64_t)k, rbuf[k], 8192, 7), 0);
	for (i = 0; i < N; i++) {
		len[i] = (uint32_t)(4 + xs(&rng) % 6000);
		fill(src, len[i], (uint32_t)i + 1000);
		memcpy(src, &i, sizeof(i)); /* the message's index */
		MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, (uint64_t)i, src,
				      len[i], 5, NULL, 0, 0, w.now),
			    0);
		run_all();
		for (k = 0; k < w.n[1].ncqe; k++) {
			const struct mr_cqe *c = &w.n[1].cqe[k];
			uint8_t *b = rbuf[c->wr_id & 3];
			static uint8_t want[8192];
			int idx;

			MR_CHECK_EQ(c->status, MR_WC_SUCCESS);
			memcpy(&idx, b, sizeof(idx));
			MR_CHECK(idx >= 0 && idx <= i);
			MR_CHECK(!landed || (uint32_t)idx > last);
			if (idx < 0 || idx > i)
				break;
			MR_CHECK_EQ(c->byte_len, len[idx]);
			fill(want, len[idx], (uint32_t)idx + 1000);
			memcpy(want, &idx, sizeof(idx));
			MR_CHECK_MEM(b, want, len[idx]);
			last = (uint32_t)idx;
			landed++;
			MR_CHECK_EQ(post_recv(p.b, c->wr_id + 4, b, 8192, 7),
				    0);
		}
		w.n[1].ncqe = 0;
	}
	MR_CHECK_EQ(w.n[0].ncqe, N);
	/* 10% packet loss: some lost, most landed (2 packets a message). */
	MR_CHECK(landed > N / 2 && landed < N);
	MR_CHECK_EQ(mr_qp_counters(p.b)->msgs_rcvd, (uint64_t)landed);
	check_b_silent();
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-UC-6: READ and atomics are refused at post, nothing queued. */
static void uc_read_atomic_refused(void)
{
	struct pair p;
	uint32_t room;
	struct mr_sge s = { (uint64_t)(uintptr_t)src, 8, 5 };
	struct mr_send_wr wr = {
		.wr_id = 9,
		.flags = MR_SEND_SIGNALED,
		.sg_list = &s,
		.num_sge = 1,
		.remote_addr = (uint64_t)(uintptr_t)dst,
		.rkey = 6,
	};

	uc_connect(&p);
	room = mr_qp_sq_room(p.a);
	wr.opcode = MR_WR_RDMA_READ;
	MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), -MR_EINVAL);
	wr.opcode = MR_WR_ATOMIC_CMP_AND_SWP;
	MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), -MR_EINVAL);
	wr.opcode = MR_WR_ATOMIC_FETCH_AND_ADD;
	MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_sq_room(p.a), room);
	run_all();
	MR_CHECK_EQ(w.n[0].ncqe, 0);
	MR_CHECK_EQ(mr_ep_counters(w.n[0].ep)->tx_pkts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-UC-9: the UC columns of IB's attribute table; MR-UC-8: an SRQ of
 * another PD is refused. */
static void uc_state_machine(void)
{
	struct mr_qp *q;
	struct mr_qp_attr at, qa;
	struct mr_qp_config c = {
		.type = MR_QPT_UC, .pd = 1, .qpn = 0x33,
		.max_send_wr = 4, .max_recv_wr = 4,
	};
	struct mr_srq_config sc = { .pd = 1, .max_wr = 4 };
	struct mr_srq *srq;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	MR_CHECK_EQ(mr_srq_create(w.n[0].ep, &sc, &srq), 0);
	c.srq = srq;
	c.pd = 2;
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q), -MR_EINVAL);
	c.pd = 1;
	c.srq = NULL;
	MR_CHECK_EQ(mr_qp_create(w.n[0].ep, &c, &q), 0);
	memset(&at, 0, sizeof(at));
	at.state = MR_QPS_INIT;
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE), -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_ACCESS_FLAGS |
						 MR_QP_QKEY),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_ACCESS_FLAGS),
		    0);
	at.state = MR_QPS_RTR;
	at.dest_qpn = 0x44;
	at.rq_psn = 5;
	at.path_mtu_bytes = 1024;
	at.dest = 3;
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() & ~MR_QP_RQ_PSN),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() & ~MR_QP_DEST), -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() & ~MR_QP_PATH_MTU),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() & ~MR_QP_DEST_QPN),
		    -MR_EINVAL);
	/* RC's responder attributes do not belong to UC. */
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() | MR_QP_MAX_DEST_RD_ATOMIC),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr() | MR_QP_MIN_RNR_TIMER),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_query(q, &qa), 0);
	MR_CHECK_EQ(qa.state, MR_QPS_INIT);
	MR_CHECK_EQ(mr_qp_modify(q, &at, uc_rtr()), 0);
	at.state = MR_QPS_RTS;
	at.sq_psn = 9;
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE), -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_SQ_PSN |
						 MR_QP_TIMEOUT),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_SQ_PSN |
						 MR_QP_RETRY_CNT),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_qp_modify(q, &at, MR_QP_STATE | MR_QP_SQ_PSN), 0);
	MR_CHECK_EQ(mr_qp_query(q, &qa), 0);
	MR_CHECK_EQ(qa.state, MR_QPS_RTS);
	MR_CHECK_EQ(qa.type, MR_QPT_UC);
	MR_CHECK_EQ(qa.dest_qpn, 0x44);
	MR_CHECK_EQ(qa.rq_psn, 5);
	MR_CHECK_EQ(qa.sq_psn, 9);
	MR_CHECK_EQ(qa.path_mtu_bytes, 1024);
	MR_CHECK_EQ(mr_qp_destroy(q), 0);
	MR_CHECK_EQ(mr_srq_destroy(srq), 0);
	world_fini(&w);
}

/* ERR flushes what is posted on both queues (MR-ERR-4 as for RC). */
static void uc_err_flush(void)
{
	struct pair p;

	uc_connect(&p);
	MR_CHECK_EQ(post_recv(p.b, 7, rbuf[0], 64, 7), 0);
	{
		struct mr_qp_attr at = { .state = MR_QPS_ERR };

		MR_CHECK_EQ(mr_qp_modify(p.b, &at, MR_QP_STATE), 0);
	}
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 7);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-UC-8: a UC QP on an SRQ. A SEND losing its middle packet leaves
 * the WQE it took as the QP's claim, and the next SEND lands in it; the
 * SRQ gives its WQEs out one per message; a claim held when the QP fails
 * is flushed, the WQEs it did not take stay in the SRQ. */
static void uc_srq(void)
{
	struct mr_srq_config sc = { .pd = 1, .max_wr = 8, .max_sge = 1 };
	struct mr_sge sge;
	struct mr_recv_wr rw = { .sg_list = &sge, .num_sge = 1 };
	struct mr_qp_attr at = { .state = MR_QPS_ERR };
	uint64_t lost[2] = { 1, 6 }; /* message 1 packet 2, message 4 last */
	struct mr_srq *srq;
	struct pair p;
	int k;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	MR_CHECK_EQ(mr_srq_create(w.n[1].ep, &sc, &srq), 0);
	uc_srq_b = srq;
	{
		/* uc_connect() without its world_init(): the SRQ must be of
		 * this world's endpoint. */
		struct mr_qp *q[2];
		struct mr_qp_attr a;
		int i;

		MR_CHECK_EQ(uc_create(w.n[0].ep, 0x11, &q[0]), 0);
		MR_CHECK_EQ(uc_create(w.n[1].ep, 0x22, &q[1]), 0);
		for (i = 0; i < 2; i++) {
			memset(&a, 0, sizeof(a));
			a.state = MR_QPS_INIT;
			a.access = MR_ACCESS_LOCAL_WRITE |
				   MR_ACCESS_REMOTE_WRITE;
			MR_CHECK_EQ(mr_qp_modify(q[i], &a,
						 MR_QP_STATE |
							 MR_QP_ACCESS_FLAGS),
				    0);
			a.state = MR_QPS_RTR;
			a.dest_qpn = i ? 0x11 : 0x22;
			a.rq_psn = 0x7000;
			a.path_mtu_bytes = world_path_mtu;
			MR_CHECK_EQ(mr_qp_modify(q[i], &a, uc_rtr()), 0);
			a.state = MR_QPS_RTS;
			a.sq_psn = 0x7000;
			MR_CHECK_EQ(mr_qp_modify(q[i], &a,
						 MR_QP_STATE | MR_QP_SQ_PSN),
				    0);
		}
		p.a = q[0];
		p.b = q[1];
	}
	uc_srq_b = NULL;
	reg(&w.n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w.n[1], 7, (uint8_t *)rbuf, sizeof(rbuf), MR_ACCESS_LOCAL_WRITE);
	for (k = 0; k < 4; k++) {
		sge.addr = (uint64_t)(uintptr_t)rbuf[k];
		sge.length = 8192;
		sge.lkey = 7;
		rw.wr_id = 100 + (uint64_t)k;
		MR_CHECK_EQ(mr_srq_post_recv(srq, &rw), 0);
	}
	memset(rbuf, 0xee, sizeof(rbuf));
	fill(src, 3000, 1);
	fill(src + 4096, 2500, 2);
	fill(src + 8192, 1500, 3);
	w.l[0].drop_idx = lost;
	w.l[0].ndrop = 2;
	/* packets: msg 1 = 0,1,2; msg 2 = 3,4,5; msg 3 = 6,7 (6 lost) */
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 1, src, 3000, 5, NULL, 0, 0,
			      w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 2, src + 4096, 2500, 5, NULL,
			      0, 0, w.now),
		    0);
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 3, src + 8192, 1500, 5, NULL,
			      0, 0, w.now),
		    0);
	run_all();
	/* message 1 lost its middle: its WQE (100) takes message 2 */
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK(recv_cqe(0) != NULL);
	if (recv_cqe(0)) {
		MR_CHECK_EQ(recv_cqe(0)->wr_id, 100);
		MR_CHECK_EQ(recv_cqe(0)->status, MR_WC_SUCCESS);
		MR_CHECK_EQ(recv_cqe(0)->byte_len, 2500);
	}
	MR_CHECK_MEM(rbuf[0], src + 4096, 2500);
	/* message 3 lost its first packet: nothing taken for it */
	MR_CHECK_EQ(mr_srq_count(srq), 3);
	/* a fourth message loses its last packet: it holds WQE 101 */
	lost[0] = 9;
	w.l[0].ndrop = 1;
	MR_CHECK_EQ(post_send(p.a, MR_WR_SEND, 4, src, 1500, 5, NULL, 0, 0,
			      w.now),
		    0);
	run_all();
	MR_CHECK_EQ(w.n[1].ncqe, 1);
	MR_CHECK_EQ(mr_srq_count(srq), 2);
	MR_CHECK_EQ(mr_qp_modify(p.b, &at, MR_QP_STATE), 0);
	MR_CHECK_EQ(w.n[1].ncqe, 2);
	MR_CHECK_EQ(w.n[1].cqe[1].wr_id, 101);
	MR_CHECK_EQ(w.n[1].cqe[1].status, MR_WC_WR_FLUSH_ERR);
	MR_CHECK_EQ(mr_srq_count(srq), 2);
	check_b_silent();
	destroy_pair(&p);
	MR_CHECK_EQ(mr_srq_destroy(srq), 0);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(uc_send_first_lost), MR_TEST(uc_send_middle_lost),
	     MR_TEST(uc_send_last_lost), MR_TEST(uc_write_imm_loss),
	     MR_TEST(uc_random_loss), MR_TEST(uc_read_atomic_refused),
	     MR_TEST(uc_state_machine), MR_TEST(uc_err_flush),
	     MR_TEST(uc_srq))
