// SPDX-License-Identifier: BSD-2-Clause
/*
 * mri-verbs: an ordinary verbs application (it links libibverbs only and
 * knows nothing of MetaRoCE) that moves seeded random data with every RC
 * opcode and checks every byte and every completion.
 *
 *   mri-verbs loopback -d DEV [-s SEED]
 *   mri-verbs server -d DEV [-c CASE] [-p PORT] [-s SEED]
 *   mri-verbs client -d DEV [-c CASE] [-p PORT] [-s SEED] [-n STEPS] HOST
 *
 * -n: the data case runs STEPS steps (default NSTEPS, every kind once);
 * steps beyond NSTEPS are "mixed" ones, each with its own seed, so a long
 * run (through a fabric whose planes fail) keeps checking new data.
 *
 * CASE: data (default), bad_rkey, peer_gone, rtr, mw (client/server
 * only; rtr = data with the server's QP left in RTR; mw = memory windows,
 * mri_mw.c).
 *
 * Two "sides": the requester (loopback QP A, or the client) posts every
 * work request; the responder (loopback QP B, or the server) posts the
 * receives. Both processes run the same seeded generator and keep the same
 * model of both sides' memory, so each checks the memory it owns, every
 * byte of it, against the model after every step. Client and server
 * exchange QP numbers, GIDs, rkeys and addresses over TCP, as perftest
 * does, and synchronise each step over the same socket.
 */
#include "mri_verbs.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netdb.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static struct ibv_context *ctx;
static union ibv_gid my_gid;
static enum ibv_mtu port_mtu;
uint64_t mri_seed = 0x6d72692d76657262ull;
uint8_t *mri_img[2]; /* model: [0] requester, [1] responder */
static int sock = -1;
static uint8_t qp_timeout = 14, qp_retry = 7;
/* A responder that never sends requests may stay in RTR (perftest's
 * passive side does): it must still answer READs and atomics. */
static int stay_rtr;
static int is_server;
static int nsteps = NSTEPS;

void mri_fail(const char *fmt, ...)
{
	static int failing;
	char msg[400];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	printf("FAIL: %s\n", msg);
	fflush(stdout);
	/* The client reports the server's reason too. */
	if (is_server && sock >= 0 && !failing++)
		mri_tcp_send("FAIL (server) %s", msg);
	exit(1);
}

/* ---- TCP: the out-of-band channel, line based, never waits forever ---- */

void mri_tcp_send(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (send(sock, line, n, MSG_NOSIGNAL) != n)
		mri_fail("tcp send: %s", strerror(errno));
}

/* Next line from the peer; NULL on EOF. */
static char *tcp_recv(char *line, size_t len)
{
	size_t n = 0;

	while (n + 1 < len) {
		ssize_t r = recv(sock, line + n, 1, 0);

		if (r == 0)
			return NULL;
		if (r < 0)
			mri_fail("tcp recv: %s",
				 errno == EAGAIN ? "peer silent for too long"
						 : strerror(errno));
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = 0;
	return line;
}

char *mri_tcp_expect(char *line, size_t len)
{
	if (!tcp_recv(line, len))
		mri_fail("peer closed the connection");
	if (!strncmp(line, "FAIL", 4))
		mri_fail("peer: %s", line);
	return line;
}

static void tcp_open(const char *host, const char *port)
{
	struct addrinfo hints = { .ai_family = AF_INET,
				  .ai_socktype = SOCK_STREAM };
	struct timeval tv = { .tv_sec = 2 * WAIT_S };
	struct addrinfo *ai;
	int one = 1, s, i;

	if (!host)
		hints.ai_flags = AI_PASSIVE;
	if (getaddrinfo(host, port, &hints, &ai))
		mri_fail("cannot resolve %s", host ? host : "(any)");
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0)
		mri_fail("socket: %s", strerror(errno));
	if (!host) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1))
			mri_fail("bind/listen port %s: %s", port,
				 strerror(errno));
		sock = accept(s, NULL, NULL);
		if (sock < 0)
			mri_fail("accept: %s", strerror(errno));
		close(s);
	} else {
		for (i = 0; connect(s, ai->ai_addr, ai->ai_addrlen); i++) {
			if (i == 100)
				mri_fail("connect %s:%s: %s", host, port,
					 strerror(errno));
			usleep(100000);
		}
		sock = s;
	}
	freeaddrinfo(ai);
	setsockopt(sock, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
}

/* ---- verbs objects ---- */

static void open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_port_attr pa;
	int i;

	if (!l)
		mri_fail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			break;
	if (!l[i])
		mri_fail("no device %s", name);
	ctx = ibv_open_device(l[i]);
	if (!ctx)
		mri_fail("ibv_open_device %s: %s", name, strerror(errno));
	ibv_free_device_list(l);
	if (ibv_query_port(ctx, IB_PORT, &pa))
		mri_fail("ibv_query_port");
	if (pa.state != IBV_PORT_ACTIVE)
		mri_fail("port not active");
	port_mtu = pa.active_mtu;
	if (ibv_query_gid(ctx, IB_PORT, GID_IDX, &my_gid))
		mri_fail("ibv_query_gid %d", GID_IDX);
}

int mri_gid_index(void)
{
	static int idx = -1;
	const char *e;

	if (idx < 0) {
		e = getenv("MRI_GID_INDEX");
		idx = e && *e ? atoi(e) : 1;
	}
	return idx;
}

/* Memory of side i, filled with its seeded pattern, and its model. */
static void side_mem(struct side *s, int i)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	s->pd = ibv_alloc_pd(ctx);
	if (!s->pd)
		mri_fail("ibv_alloc_pd");
	if (posix_memalign((void **)&s->buf, 4096, BUF_LEN))
		mri_fail("out of memory");
	mri_fill(s->buf, IMG_LEN, mri_seed ^ (0x1111ull * (i + 1)));
	memset(s->buf + OFF_SCR, 0, SCR_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_LEN, acc);
	s->ro_mr = ibv_reg_mr(s->pd, s->buf + OFF_DST, REGION,
			      IBV_ACCESS_REMOTE_READ);
	if (!s->mr || !s->ro_mr)
		mri_fail("ibv_reg_mr: %s", strerror(errno));
	s->scq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		mri_fail("ibv_create_cq: %s", strerror(errno));
}

static void model_init(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		mri_img[i] = malloc(IMG_LEN);
		if (!mri_img[i])
			mri_fail("out of memory");
		mri_fill(mri_img[i], IMG_LEN, mri_seed ^ (0x1111ull * (i + 1)));
	}
}

static void qp_new(struct side *s, uint64_t *rng)
{
	uint32_t inl;
	struct ibv_qp_init_attr ia = {
		.send_cq = s->scq,
		.recv_cq = s->rcq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = DEPTH,
			 .max_recv_wr = DEPTH,
			 .max_send_sge = MAX_SGE,
			 .max_recv_sge = MAX_SGE,
			 .max_inline_data = 64 },
	};
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = IB_PORT,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	/* As much inline data as the device takes (a cap it refuses is
	 * EINVAL: ask for less). */
	for (inl = 256;; inl /= 4) {
		ia.cap.max_inline_data = inl;
		s->qp = ibv_create_qp(s->pd, &ia);
		if (s->qp || !inl)
			break;
	}
	if (!s->qp)
		mri_fail("ibv_create_qp: %s", strerror(errno));
	s->max_inline = ia.cap.max_inline_data;
	s->psn = mri_rnd(rng) & 0xffffff;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		mri_fail("modify_qp INIT");
}

static void qp_connect(struct side *s, const struct remote *r)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = port_mtu,
		.dest_qp_num = r->qpn,
		.rq_psn = r->psn,
		.max_dest_rd_atomic = 16,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1,
			     .port_num = IB_PORT,
			     .grh = { .dgid = r->gid,
				      .sgid_index = GID_IDX,
				      .hop_limit = 64 } },
	};

	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		mri_fail("modify_qp RTR: %s", strerror(errno));
	if (stay_rtr)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = qp_timeout;
	a.retry_cnt = qp_retry;
	a.rnr_retry = 7;
	a.sq_psn = s->psn;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		mri_fail("modify_qp RTS: %s", strerror(errno));
}

static void local_remote(const struct side *s, struct remote *r)
{
	r->qpn = s->qp->qp_num;
	r->psn = s->psn;
	r->rkey = s->mr->rkey;
	r->ro_rkey = s->ro_mr->rkey;
	r->max_inline = s->max_inline;
	r->base = (uintptr_t)s->buf;
	r->gid = my_gid;
}

/* Exchange of QP attributes over TCP, one line each way. */
static void exchange(const struct side *s, struct remote *r)
{
	char line[512], g[40];
	struct remote me;
	int i;

	local_remote(s, &me);
	for (i = 0; i < 16; i++)
		sprintf(g + 2 * i, "%02x", me.gid.raw[i]);
	mri_tcp_send("Q %x %x %x %x %x %" PRIx64 " %s", me.qpn, me.psn, me.rkey,
		 me.ro_rkey, me.max_inline, me.base, g);
	mri_tcp_expect(line, sizeof(line));
	if (sscanf(line, "Q %x %x %x %x %x %" SCNx64 " %32s", &r->qpn, &r->psn,
		   &r->rkey, &r->ro_rkey, &r->max_inline, &r->base, g) != 7 ||
	    strlen(g) != 32)
		mri_fail("bad QP line from peer: %s", line);
	for (i = 0; i < 16; i++)
		sscanf(g + 2 * i, "%2hhx", &r->gid.raw[i]);
}

static void qp_destroy(struct side *s)
{
	if (s->qp && ibv_destroy_qp(s->qp))
		mri_fail("ibv_destroy_qp");
	s->qp = NULL;
}

static void side_free(struct side *s)
{
	qp_destroy(s);
	if (ibv_destroy_cq(s->scq) || ibv_destroy_cq(s->rcq) ||
	    ibv_dereg_mr(s->mr) || ibv_dereg_mr(s->ro_mr) ||
	    ibv_dealloc_pd(s->pd))
		mri_fail("teardown");
	free(s->buf);
}

/* ---- loopback: two QPs of one device in this process ---- */

static void pair_new(struct side *a, struct side *b, uint64_t *rng)
{
	struct remote ra, rb;

	qp_new(a, rng);
	qp_new(b, rng);
	local_remote(a, &ra);
	local_remote(b, &rb);
	qp_connect(a, &rb);
	qp_connect(b, &ra);
}

static int run_loopback(void)
{
	struct side sd[2] = { 0 };
	uint64_t rng = mri_seed;
	struct remote rb;
	struct step st;
	int k, nsc, nrc;
	enum bad b;

	model_init();
	side_mem(&sd[0], 0);
	side_mem(&sd[1], 1);
	pair_new(&sd[0], &sd[1], &rng);
	local_remote(&sd[1], &rb);
	printf("loopback: QP %#x -> QP %#x on one device, max_inline %u\n",
	       sd[0].qp->qp_num, sd[1].qp->qp_num, sd[0].max_inline);
	for (k = 0; k < NSTEPS; k++) {
		mri_gen_step(k, sd[0].max_inline, &st);
		mri_post_recvs(&sd[1], &st);
		mri_post_sends(&sd[0], &rb, &st);
		nsc = mri_poll_sends(&sd[0], &st);
		nrc = mri_poll_recvs(&sd[1], &st);
		mri_verify_mem(&sd[0], 0, st.what);
		mri_verify_mem(&sd[1], 1, st.what);
		mri_step_report(&st, nsc, nrc);
	}
	for (b = 0; b < BAD_N; b++) {
		qp_destroy(&sd[0]);
		qp_destroy(&sd[1]);
		pair_new(&sd[0], &sd[1], &rng);
		local_remote(&sd[1], &rb);
		mri_bad_post_recv(&sd[1]);
		mri_bad_run(&sd[0], &rb, b);
		mri_verify_mem(&sd[0], 0, mri_bad_name[b]);
		mri_verify_mem(&sd[1], 1, mri_bad_name[b]);
		mri_bad_drain(&sd[1]);
	}
	side_free(&sd[0]);
	side_free(&sd[1]);
	return 0;
}

/* ---- between hosts: client = requester, server = responder ---- */

static int run_server(const char *cs, const char *port)
{
	struct side sd = { 0 };
	uint64_t rng = mri_seed ^ 0x5e;
	struct remote rm;
	struct step st;
	char line[512];
	int k = 0, n;

	model_init();
	side_mem(&sd, 1);
	tcp_open(NULL, port);
	is_server = 1;
	while (tcp_recv(line, sizeof(line))) {
		if (!strcmp(line, "C")) { /* a new QP pair */
			qp_destroy(&sd);
			qp_new(&sd, &rng);
			exchange(&sd, &rm);
			qp_connect(&sd, &rm);
			if (!strcmp(cs, "bad_rkey"))
				mri_bad_post_recv(&sd);
			printf("server: QP %#x <- QP %#x\n", sd.qp->qp_num,
			       rm.qpn);
		} else if (sscanf(line, "P %d", &n) == 1 && n == k) {
			mri_gen_step(k, rm.max_inline, &st);
			mri_post_recvs(&sd, &st);
			mri_tcp_send("R");
		} else if (sscanf(line, "V %d", &n) == 1 && n == k) {
			n = mri_poll_recvs(&sd, &st);
			mri_verify_mem(&sd, 1, st.what);
			printf("server: step %2d %-26s %2d recv completions "
			       "ok, memory ok\n",
			       k++, st.what, n);
			mri_tcp_send("OK");
		} else if (!strcmp(line, "M")) {
			mri_verify_mem(&sd, 1, "after a bad request");
			mri_bad_drain(&sd);
			printf("server: memory ok after a bad request\n");
			mri_tcp_send("OK");
		} else if (!strcmp(line, "D")) {
			/* The driver kills us now (SIGKILL), as a host
			 * vanishes; until then, wait. */
			printf("server: pid %d ready to die\n", (int)getpid());
			fflush(stdout);
			for (;;)
				pause();
		} else if (line[0] == 'W') {
			mri_mw_server(&sd, line); /* case mw */
		} else if (!strcmp(line, "E")) {
			mri_mw_free();
			side_free(&sd);
			mri_tcp_send("BYE");
			printf("server: done\n");
			return 0;
		} else {
			mri_fail("server: unexpected request '%s' (step %d)",
				 line, k);
		}
		fflush(stdout);
	}
	mri_fail("server: the client went away");
}

static void client_pair(struct side *s, struct remote *rm, uint64_t *rng)
{
	qp_destroy(s);
	qp_new(s, rng);
	mri_tcp_send("C");
	exchange(s, rm);
	qp_connect(s, rm);
	printf("client: QP %#x -> QP %#x, max_inline %u\n", s->qp->qp_num,
	       rm->qpn, s->max_inline);
}

static void client_step(struct side *s, const struct remote *rm, int k)
{
	struct step st;
	char line[64];
	int nsc;

	mri_gen_step(k, s->max_inline, &st);
	mri_tcp_send("P %d", k);
	mri_tcp_expect(line, sizeof(line));
	mri_post_sends(s, rm, &st);
	nsc = mri_poll_sends(s, &st);
	mri_verify_mem(s, 0, st.what);
	mri_tcp_send("V %d", k);
	mri_tcp_expect(line, sizeof(line));
	mri_step_report(&st, nsc, -1);
}

/* The peer vanished: the next requests end in IBV_WC_RETRY_EXC_ERR,
 * not before (retry_cnt + 1) local ACK timeouts. */
static void peer_gone(struct side *s, const struct remote *rm)
{
	double min = 4.096e-6 * (1u << GONE_TIMEOUT) * (GONE_RETRY + 1);
	struct ibv_sge sg = { (uintptr_t)s->buf, 65536, s->mr->lkey };
	struct ibv_send_wr wr[2], *bad;
	struct ibv_wc wc;
	double t0, dt;

	memset(wr, 0, sizeof(wr));
	wr[0].wr_id = 0x90e0;
	wr[0].sg_list = &sg;
	wr[0].num_sge = 1;
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].send_flags = IBV_SEND_SIGNALED;
	wr[0].wr.rdma.remote_addr = rm->base + OFF_DST;
	wr[0].wr.rdma.rkey = rm->rkey;
	wr[0].next = &wr[1];
	wr[1] = wr[0];
	wr[1].wr_id = 0x90e1;
	wr[1].opcode = IBV_WR_SEND;
	wr[1].next = NULL;
	/* The QP sat idle for a while before these requests, as QPs do: the
	 * timeout counts from the requests, not from the last ACK. */
	usleep(500000);
	t0 = mri_now_s();
	if (ibv_post_send(s->qp, wr, &bad))
		mri_fail("ibv_post_send to the vanished peer");
	mri_poll_one(s->scq, &wc, "vanished peer", 60);
	dt = mri_now_s() - t0;
	mri_expect_wc(&wc, "vanished peer", 0x90e0, IBV_WC_RETRY_EXC_ERR, 0, 0,
		      0, 0, s->qp->qp_num);
	mri_poll_one(s->scq, &wc, "vanished peer", WAIT_S);
	mri_expect_wc(&wc, "vanished peer", 0x90e1, IBV_WC_WR_FLUSH_ERR, 0, 0,
		      0, 0, s->qp->qp_num);
	mri_no_more(s->scq, "vanished peer");
	printf("vanished peer: IBV_WC_RETRY_EXC_ERR after %.3f s (timeout %d, "
	       "retry_cnt %d: %.3f to %.3f s), then IBV_WC_WR_FLUSH_ERR\n",
	       dt, GONE_TIMEOUT, GONE_RETRY, min, 4 * min);
	if (dt < min)
		mri_fail("retry exceeded after %.3f s, before %d tries of %.3f "
			 "s",
			 dt, GONE_RETRY + 1, min / (GONE_RETRY + 1));
	/* IB (C9-141): a local ACK timeout lasts 1 to 4 times 4.096 us x
	 * 2^timeout; one second more for a loaded 2-core machine. */
	if (dt > 4 * min + 1.0)
		mri_fail("retry exceeded only after %.3f s: %d tries of at "
			 "most 4 x %.3f s (+ 1 s) = %.3f s",
			 dt, GONE_RETRY + 1, min / (GONE_RETRY + 1),
			 4 * min + 1.0);
}

static int run_client(const char *cs, const char *host, const char *port)
{
	struct side sd = { 0 };
	uint64_t rng = mri_seed ^ 0xc1;
	struct remote rm;
	char line[64];
	int k;
	enum bad b;

	model_init();
	side_mem(&sd, 0);
	tcp_open(host, port);
	if (!strcmp(cs, "data")) {
		client_pair(&sd, &rm, &rng);
		for (k = 0; k < nsteps; k++)
			client_step(&sd, &rm, k);
	} else if (!strcmp(cs, "mw")) {
		for (k = 0; k < MRI_MW_CASES; k++) {
			client_pair(&sd, &rm, &rng);
			mri_mw_client(&sd, k);
		}
	} else if (!strcmp(cs, "bad_rkey")) {
		for (b = 0; b < BAD_N; b++) {
			client_pair(&sd, &rm, &rng);
			mri_bad_run(&sd, &rm, b);
			mri_verify_mem(&sd, 0, mri_bad_name[b]);
			mri_tcp_send("M");
			mri_tcp_expect(line, sizeof(line));
		}
	} else {
		client_pair(&sd, &rm, &rng);
		client_step(&sd, &rm, 0);
		mri_tcp_send("D");
		if (tcp_recv(line, sizeof(line)))
			mri_fail("the server answered '%s' instead of dying",
				 line);
		printf("client: the server is gone (its TCP connection "
		       "closed)\n");
		peer_gone(&sd, &rm);
		side_free(&sd);
		printf("client: done\n");
		return 0;
	}
	mri_tcp_send("E");
	mri_tcp_expect(line, sizeof(line));
	side_free(&sd);
	printf("client: done\n");
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: mri-verbs loopback -d DEV [-s SEED]\n"
		"       mri-verbs server -d DEV [-c CASE] [-p PORT] [-s SEED]\n"
		"       mri-verbs client -d DEV [-c CASE] [-p PORT] [-s SEED] "
		"[-n STEPS] HOST\n"
		"CASE: data (default); client/server only: bad_rkey, "
		"peer_gone, rtr, mw\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode, *dev = NULL, *cs = "data", *port = "18600";
	int c;

	if (argc < 2)
		usage();
	mode = argv[1];
	optind = 2;
	while ((c = getopt(argc, argv, "d:c:p:s:n:")) != -1) {
		switch (c) {
		case 'd':
			dev = optarg;
			break;
		case 'c':
			cs = optarg;
			break;
		case 'p':
			port = optarg;
			break;
		case 's':
			mri_seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			nsteps = atoi(optarg);
			if (nsteps < 1 || nsteps > 60000)
				usage();
			break;
		default:
			usage();
		}
	}
	if (!dev || (strcmp(cs, "data") && strcmp(cs, "bad_rkey") &&
		     strcmp(cs, "peer_gone") && strcmp(cs, "rtr") &&
		     strcmp(cs, "mw")))
		usage();
	if (!strcmp(cs, "rtr")) {
		cs = "data";
		stay_rtr = !strcmp(mode, "server");
	}
	if (!strcmp(cs, "peer_gone")) {
		qp_timeout = GONE_TIMEOUT;
		qp_retry = GONE_RETRY;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("mri-verbs %s, case %s%s, seed %#" PRIx64 "\n", mode, cs,
	       stay_rtr ? " (QP stays in RTR)" : "", mri_seed);
	open_dev(dev);
	if (!strcmp(mode, "loopback") && optind == argc &&
	    !strcmp(cs, "data")) {
		c = run_loopback();
	} else if (!strcmp(mode, "server") && optind == argc) {
		c = run_server(cs, port);
	} else if (!strcmp(mode, "client") && optind == argc - 1) {
		c = run_client(cs, argv[optind], port);
	} else {
		usage();
	}
	ibv_close_device(ctx);
	return c;
}
