// SPDX-License-Identifier: BSD-2-Clause
/*
 * mri-verbs: an ordinary verbs application (it links libibverbs only and
 * knows nothing of MetaRoCE) that moves seeded random data with every RC
 * opcode and checks every byte and every completion.
 *
 *   mri-verbs loopback -d DEV [-s SEED]
 *   mri-verbs server -d DEV [-c CASE] [-p PORT] [-s SEED]
 *   mri-verbs client -d DEV [-c CASE] [-p PORT] [-s SEED] HOST
 *
 * CASE: data (default), bad_rkey, peer_gone, rtr (client/server only;
 * rtr = data with the server's QP left in RTR).
 *
 * Two "sides": the requester (loopback QP A, or the client) posts every
 * work request; the responder (loopback QP B, or the server) posts the
 * receives. Both processes run the same seeded generator and keep the same
 * model of both sides' memory, so each checks the memory it owns, every
 * byte of it, against the model after every step. Client and server
 * exchange QP numbers, GIDs, rkeys and addresses over TCP, as perftest
 * does, and synchronise each step over the same socket.
 */
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

#include <infiniband/verbs.h>

/* Memory of one side: src (gather source, READ source), dst (WRITE and
 * receive target, READ and atomic result target), 64 atomic slots; then
 * an unmodelled scratch area for inline data. */
#define REGION (4u << 20)
#define OFF_SRC 0u
#define OFF_DST REGION
#define OFF_ATOM (2u * REGION)
#define ATOM_SLOTS 64u
#define IMG_LEN (OFF_ATOM + ATOM_SLOTS * 8u)
#define OFF_SCR (OFF_ATOM + 4096u)
#define SCR_LEN (64u << 10)
#define BUF_LEN (OFF_SCR + SCR_LEN)
#define MAX_MSG (3u << 20)
#define MAX_OPS 40
#define MAX_SGE 16
#define DEPTH 256
#define WAIT_S 45
#define IB_PORT 1
#define GID_IDX 1
/* Local ACK timeout 14 (67 ms) and retry_cnt 2 where a peer vanishes:
 * the retry-exceeded error may not come before (retry_cnt + 1) tries. */
#define GONE_TIMEOUT 14
#define GONE_RETRY 2

enum opk {
	OP_SEND,
	OP_SEND_IMM,
	OP_WRITE,
	OP_WRITE_IMM,
	OP_READ,
	OP_CAS,
	OP_FAA,
	OP_NKINDS
};
static const char *const op_name[] = { "SEND", "SEND_IMM", "WRITE", "WRITE_IMM",
				       "READ", "CAS",	   "FAA" };

struct sg {
	uint32_t off; /* in the owner's buffer */
	uint32_t len;
};

struct op {
	enum opk kind;
	uint32_t len;
	int nsge;
	struct sg sge[MAX_SGE]; /* requester's memory */
	uint32_t roff;		/* responder's memory */
	int rnsge;		/* receive buffers (SEND*, WRITE_IMM) */
	struct sg rsge[MAX_SGE];
	uint32_t imm;
	uint64_t cmp, swp;
	int signaled, inl, fence;
};

struct step {
	int k, nops;
	struct op ops[MAX_OPS];
	char what[32];
};

/* One side present in this process. */
struct side {
	struct ibv_pd *pd;
	struct ibv_mr *mr, *ro_mr; /* ro_mr: dst, remote read only */
	uint8_t *buf;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t psn;
	uint32_t max_inline;
};

/* What the other side of a QP pair tells us. */
struct remote {
	uint32_t qpn, psn, rkey, ro_rkey, max_inline;
	uint64_t base;
	union ibv_gid gid;
};

static struct ibv_context *ctx;
static union ibv_gid my_gid;
static enum ibv_mtu port_mtu;
static uint64_t seed = 0x6d72692d76657262ull;
static uint8_t *img[2]; /* model: [0] requester, [1] responder */
static int sock = -1;
static uint8_t qp_timeout = 14, qp_retry = 7;
/* A responder that never sends requests may stay in RTR (perftest's
 * passive side does): it must still answer READs and atomics. */
static int stay_rtr;
static int is_server;
static void tcp_send(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
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
		tcp_send("FAIL (server) %s", msg);
	exit(1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- seeded generator (xorshift64*) ---- */

static uint64_t rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi]. */
static uint32_t rr(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(rnd(s) % ((uint64_t)hi - lo + 1));
}

static void fill(uint8_t *p, size_t n, uint64_t s)
{
	size_t i;

	s |= 1;
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(rnd(&s) >> 56);
}

/* ---- TCP: the out-of-band channel, line based, never waits forever ---- */

static void tcp_send(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void tcp_send(const char *fmt, ...)
{
	char line[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	line[n++] = '\n';
	if (send(sock, line, n, MSG_NOSIGNAL) != n)
		fail("tcp send: %s", strerror(errno));
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
			fail("tcp recv: %s",
			     errno == EAGAIN ? "peer silent for too long"
					     : strerror(errno));
		if (line[n] == '\n')
			break;
		n++;
	}
	line[n] = 0;
	return line;
}

static char *tcp_expect(char *line, size_t len)
{
	if (!tcp_recv(line, len))
		fail("peer closed the connection");
	if (!strncmp(line, "FAIL", 4))
		fail("peer: %s", line);
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
		fail("cannot resolve %s", host ? host : "(any)");
	s = socket(ai->ai_family, ai->ai_socktype, 0);
	if (s < 0)
		fail("socket: %s", strerror(errno));
	if (!host) {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, ai->ai_addr, ai->ai_addrlen) || listen(s, 1))
			fail("bind/listen port %s: %s", port, strerror(errno));
		sock = accept(s, NULL, NULL);
		if (sock < 0)
			fail("accept: %s", strerror(errno));
		close(s);
	} else {
		for (i = 0; connect(s, ai->ai_addr, ai->ai_addrlen); i++) {
			if (i == 100)
				fail("connect %s:%s: %s", host, port,
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
		fail("ibv_get_device_list: %s", strerror(errno));
	for (i = 0; l[i]; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			break;
	if (!l[i])
		fail("no device %s", name);
	ctx = ibv_open_device(l[i]);
	if (!ctx)
		fail("ibv_open_device %s: %s", name, strerror(errno));
	ibv_free_device_list(l);
	if (ibv_query_port(ctx, IB_PORT, &pa))
		fail("ibv_query_port");
	if (pa.state != IBV_PORT_ACTIVE)
		fail("port not active");
	port_mtu = pa.active_mtu;
	if (ibv_query_gid(ctx, IB_PORT, GID_IDX, &my_gid))
		fail("ibv_query_gid %d", GID_IDX);
}

/* Memory of side i, filled with its seeded pattern, and its model. */
static void side_mem(struct side *s, int i)
{
	int acc = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		  IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

	s->pd = ibv_alloc_pd(ctx);
	if (!s->pd)
		fail("ibv_alloc_pd");
	if (posix_memalign((void **)&s->buf, 4096, BUF_LEN))
		fail("out of memory");
	fill(s->buf, IMG_LEN, seed ^ (0x1111ull * (i + 1)));
	memset(s->buf + OFF_SCR, 0, SCR_LEN);
	s->mr = ibv_reg_mr(s->pd, s->buf, BUF_LEN, acc);
	s->ro_mr = ibv_reg_mr(s->pd, s->buf + OFF_DST, REGION,
			      IBV_ACCESS_REMOTE_READ);
	if (!s->mr || !s->ro_mr)
		fail("ibv_reg_mr: %s", strerror(errno));
	s->scq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	s->rcq = ibv_create_cq(ctx, 2 * DEPTH, NULL, NULL, 0);
	if (!s->scq || !s->rcq)
		fail("ibv_create_cq: %s", strerror(errno));
}

static void model_init(void)
{
	int i;

	for (i = 0; i < 2; i++) {
		img[i] = malloc(IMG_LEN);
		if (!img[i])
			fail("out of memory");
		fill(img[i], IMG_LEN, seed ^ (0x1111ull * (i + 1)));
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
		fail("ibv_create_qp: %s", strerror(errno));
	s->max_inline = ia.cap.max_inline_data;
	s->psn = rnd(rng) & 0xffffff;
	if (ibv_modify_qp(s->qp, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		fail("modify_qp INIT");
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
		fail("modify_qp RTR: %s", strerror(errno));
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
		fail("modify_qp RTS: %s", strerror(errno));
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
	tcp_send("Q %x %x %x %x %x %" PRIx64 " %s", me.qpn, me.psn, me.rkey,
		 me.ro_rkey, me.max_inline, me.base, g);
	tcp_expect(line, sizeof(line));
	if (sscanf(line, "Q %x %x %x %x %x %" SCNx64 " %32s", &r->qpn, &r->psn,
		   &r->rkey, &r->ro_rkey, &r->max_inline, &r->base, g) != 7 ||
	    strlen(g) != 32)
		fail("bad QP line from peer: %s", line);
	for (i = 0; i < 16; i++)
		sscanf(g + 2 * i, "%2hhx", &r->gid.raw[i]);
}

static void qp_destroy(struct side *s)
{
	if (s->qp && ibv_destroy_qp(s->qp))
		fail("ibv_destroy_qp");
	s->qp = NULL;
}

static void side_free(struct side *s)
{
	qp_destroy(s);
	if (ibv_destroy_cq(s->scq) || ibv_destroy_cq(s->rcq) ||
	    ibv_dereg_mr(s->mr) || ibv_dereg_mr(s->ro_mr) ||
	    ibv_dealloc_pd(s->pd))
		fail("teardown");
	free(s->buf);
}

/* ---- the generator and the model ---- */

/* Disjoint ranges of a dst region, so that the result of a step does not
 * depend on the placement order of different messages. */
struct bump {
	uint32_t cur, end;
};

static int take(struct bump *b, uint64_t *rng, uint32_t len, uint32_t align,
		uint32_t *off)
{
	uint32_t start = b->cur + rr(rng, 0, 64);

	start = (start + align - 1) / align * align;
	if ((uint64_t)start + len > b->end)
		return -1;
	b->cur = start + len;
	*off = OFF_DST + start;
	return 0;
}

/* Splits len into n pieces of at least one byte. */
static void split(uint64_t *rng, uint32_t len, int n, struct sg *out)
{
	uint32_t rem = len;
	int i;

	for (i = 0; i < n - 1; i++) {
		out[i].len = rr(rng, 1, rem - (n - 1 - i));
		if (out[i].len > rem / 2 + 1 && rr(rng, 0, 1))
			out[i].len = rem / (n - i);
		rem -= out[i].len;
	}
	out[n - 1].len = rem;
}

static int pick_nsge(uint64_t *rng, uint32_t len)
{
	uint32_t max = rr(rng, 0, 9) ? 4 : MAX_SGE;

	if (!len)
		return 0;
	return (int)rr(rng, 1, len < max ? len : max);
}

static uint32_t pick_len(uint64_t *rng, uint32_t max)
{
	uint32_t r = rr(rng, 0, 99);

	if (r < 8)
		return 0;
	if (r < 40)
		return rr(rng, 1, 64);
	if (r < 75)
		return rr(rng, 65, 9000);
	if (r < 95 || max <= 65536)
		return rr(rng, 9001, 65536);
	return rr(rng, 65537, max);
}

static uint8_t tmp[MAX_MSG];

static void gather(const uint8_t *m, const struct sg *sg, int n)
{
	uint32_t at = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(tmp + at, m + sg[i].off, sg[i].len);
		at += sg[i].len;
	}
}

static void scatter(uint8_t *m, const struct sg *sg, int n, uint32_t len)
{
	uint32_t at = 0;
	int i;

	for (i = 0; i < n && at < len; i++) {
		uint32_t c = sg[i].len < len - at ? sg[i].len : len - at;

		memcpy(m + sg[i].off, tmp + at, c);
		at += c;
	}
}

/* What the op does to both memories, in posting order (RC executes
 * requests in order at the responder). */
static void model_apply(const struct op *o)
{
	uint64_t old, v;

	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		gather(img[0], o->sge, o->nsge);
		scatter(img[1], o->rsge, o->rnsge, o->len);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		gather(img[0], o->sge, o->nsge);
		memcpy(img[1] + o->roff, tmp, o->len);
		break;
	case OP_READ:
		memcpy(tmp, img[1] + o->roff, o->len);
		scatter(img[0], o->sge, o->nsge, o->len);
		break;
	case OP_CAS:
	case OP_FAA:
		memcpy(&old, img[1] + o->roff, 8);
		if (o->kind == OP_FAA)
			v = old + o->cmp;
		else
			v = old == o->cmp ? o->swp : old;
		memcpy(img[1] + o->roff, &v, 8);
		memcpy(img[0] + o->sge[0].off, &old, 8);
		break;
	default:
		break;
	}
}

static int has_recv(enum opk k)
{
	return k == OP_SEND || k == OP_SEND_IMM || k == OP_WRITE_IMM;
}

struct gen {
	uint64_t rng;
	struct bump rb, qb; /* responder's and requester's dst */
	uint32_t max_inline;
	uint32_t last_w, last_wlen; /* last WRITE target, for READ-after */
	int mixed;
};

/* One op of kind k and length len; 0, or -1 when the step is full. */
static int gen_op(struct gen *g, struct step *st, enum opk k, uint32_t len)
{
	struct op *o = &st->ops[st->nops];
	uint64_t *r = &g->rng;
	int i;

	if (st->nops == MAX_OPS)
		return -1;
	memset(o, 0, sizeof(*o));
	o->kind = k;
	o->len = len;
	o->signaled = g->mixed ? rr(r, 0, 2) != 0 : 1;
	o->fence = g->mixed && !rr(r, 0, 9);
	if (k == OP_CAS || k == OP_FAA) {
		o->len = 8;
		o->roff = OFF_ATOM + 8 * rr(r, 0, ATOM_SLOTS - 1);
		o->nsge = 1;
		o->sge[0].len = 8;
		if (take(&g->qb, r, 8, 8, &o->sge[0].off))
			return -1;
		o->cmp = rnd(r);
		o->swp = rnd(r);
		if (k == OP_CAS && rr(r, 0, 1)) /* a compare that matches */
			memcpy(&o->cmp, img[1] + o->roff, 8);
		model_apply(o);
		st->nops++;
		return 0;
	}
	o->nsge = pick_nsge(r, len);
	split(r, len, o->nsge, o->sge);
	if (k == OP_READ) {
		for (i = 0; i < o->nsge; i++)
			if (take(&g->qb, r, o->sge[i].len, 1, &o->sge[i].off))
				return -1;
		if (g->last_wlen >= len && rr(r, 0, 2) == 0)
			o->roff = g->last_w + rr(r, 0, g->last_wlen - len);
		else
			o->roff = OFF_SRC + rr(r, 0, REGION - len);
	} else {
		for (i = 0; i < o->nsge; i++)
			o->sge[i].off =
				OFF_SRC + rr(r, 0, REGION - o->sge[i].len);
		o->inl = len <= g->max_inline && rr(r, 0, 1);
	}
	if (k == OP_WRITE || k == OP_WRITE_IMM) {
		if (take(&g->rb, r, len, 1, &o->roff))
			return -1;
		g->last_w = o->roff;
		g->last_wlen = len;
	}
	if (k == OP_SEND_IMM || k == OP_WRITE_IMM)
		o->imm = (uint32_t)rnd(r);
	if (k == OP_SEND || k == OP_SEND_IMM) {
		uint32_t cap = len + rr(r, 0, 64);

		o->rnsge = pick_nsge(r, cap);
		split(r, cap, o->rnsge, o->rsge);
		for (i = 0; i < o->rnsge; i++)
			if (take(&g->rb, r, o->rsge[i].len, 1, &o->rsge[i].off))
				return -1;
	}
	if (k == OP_WRITE_IMM && rr(r, 0, 1)) {
		/* A receive buffer that a WRITE_IMM must leave alone. */
		o->rnsge = 1;
		o->rsge[0].len = rr(r, 1, 64);
		if (take(&g->rb, r, o->rsge[0].len, 1, &o->rsge[0].off))
			return -1;
	}
	model_apply(o);
	st->nops++;
	return 0;
}

#define NSTEPS 18

/* Step k, the same in both processes; advances the model. */
static void gen_step(int k, uint32_t max_inline, struct step *st)
{
	struct gen g = { .rng = seed ^ (0x9e3779b97f4a7c15ull * (k + 1)),
			 .max_inline = max_inline };
	uint64_t *r = &g.rng;
	const char *what;
	int i, ok = 0;

	/* The last 4 KiB of the responder's dst is the end marker's. */
	g.rb.cur = rr(r, 0, 4095);
	g.rb.end = REGION - 4096;
	g.qb.cur = rr(r, 0, 4095);
	g.qb.end = REGION;
	st->k = k;
	st->nops = 0;
	switch (k) {
	case 0:
	case 1:
		what = k ? "SEND_IMM" : "SEND";
		for (i = 0; i < 12 && !ok; i++)
			ok = gen_op(&g, st, k ? OP_SEND_IMM : OP_SEND,
				    i < 2 ? (uint32_t)i : pick_len(r, 65536));
		break;
	case 2:
		what = "WRITE, WRITE_IMM";
		for (i = 0; i < 16 && !ok; i++)
			ok = gen_op(&g, st, i & 1 ? OP_WRITE_IMM : OP_WRITE,
				    i < 2 ? 0 : pick_len(r, 65536));
		break;
	case 3:
		what = "READ";
		for (i = 0; i < 12 && !ok; i++)
			ok = gen_op(&g, st, OP_READ,
				    i == 0 ? 0 : pick_len(r, 65536));
		break;
	case 4:
		what = "CMP_AND_SWP, FETCH_AND_ADD";
		for (i = 0; i < 24 && !ok; i++)
			ok = gen_op(&g, st, i & 1 ? OP_FAA : OP_CAS, 8);
		break;
	case 5:
		what = "large";
		gen_op(&g, st, OP_WRITE, MAX_MSG);
		gen_op(&g, st, OP_READ, MAX_MSG - 12345);
		gen_op(&g, st, OP_SEND, 3 * (REGION - MAX_MSG) / 4);
		gen_op(&g, st, OP_WRITE_IMM, 65536);
		break;
	default:
		what = "mixed";
		g.mixed = 1;
		for (i = 0; i < MAX_OPS - 1 && !ok; i++)
			ok = gen_op(&g, st, (enum opk)rr(r, 0, OP_NKINDS - 1),
				    pick_len(r, 512 << 10));
		break;
	}
	/* Every step ends with a signalled SEND_IMM: its receive completion
	 * says that every earlier message of the step is in memory. */
	g.mixed = 0;
	g.max_inline = 0;
	g.rb.cur = REGION - 4096;
	g.rb.end = REGION;
	gen_op(&g, st, OP_SEND_IMM, rr(r, 0, 32));
	st->ops[st->nops - 1].imm = 0xc0de0000u | (uint32_t)k;
	snprintf(st->what, sizeof(st->what), "%s", what);
}

/* ---- posting and completions ---- */

static uint64_t wrid(int k, int i, int recv)
{
	return ((uint64_t)k << 16) | (recv ? 0x8000u : 0) | (uint32_t)i;
}

static void post_recvs(struct side *s, const struct step *st)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr, *bad;
	int i, j;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!has_recv(o->kind))
			continue;
		for (j = 0; j < o->rnsge; j++) {
			sge[j].addr = (uintptr_t)s->buf + o->rsge[j].off;
			sge[j].length = o->rsge[j].len;
			sge[j].lkey = s->mr->lkey;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = wrid(st->k, i, 1);
		wr.sg_list = sge;
		wr.num_sge = o->rnsge;
		if (ibv_post_recv(s->qp, &wr, &bad))
			fail("ibv_post_recv step %d op %d", st->k, i);
	}
}

static const enum ibv_wr_opcode wr_opc[] = {
	[OP_SEND] = IBV_WR_SEND,
	[OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	[OP_WRITE] = IBV_WR_RDMA_WRITE,
	[OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[OP_READ] = IBV_WR_RDMA_READ,
	[OP_CAS] = IBV_WR_ATOMIC_CMP_AND_SWP,
	[OP_FAA] = IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static const enum ibv_wc_opcode wc_opc[] = {
	[OP_SEND] = IBV_WC_SEND,	[OP_SEND_IMM] = IBV_WC_SEND,
	[OP_WRITE] = IBV_WC_RDMA_WRITE, [OP_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	[OP_READ] = IBV_WC_RDMA_READ,	[OP_CAS] = IBV_WC_COMP_SWAP,
	[OP_FAA] = IBV_WC_FETCH_ADD,
};

/* Posts the step's work requests in one to three chains. Inline data is
 * staged in the scratch area, which is scribbled over as soon as
 * ibv_post_send returns: inline means copied at post time. */
static void post_sends(struct side *s, const struct remote *rm,
		       const struct step *st)
{
	static struct ibv_sge sge[MAX_OPS][MAX_SGE];
	static struct ibv_send_wr wr[MAX_OPS];
	uint64_t rng = seed ^ ((uint64_t)st->k << 40);
	uint32_t scr = OFF_SCR, scr0, scr_end[MAX_OPS];
	struct ibv_send_wr *bad;
	int i, j, first = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];
		struct ibv_send_wr *w = &wr[i];

		memset(w, 0, sizeof(*w));
		w->wr_id = wrid(st->k, i, 0);
		w->sg_list = sge[i];
		w->num_sge = o->nsge;
		w->opcode = wr_opc[o->kind];
		w->send_flags = (o->signaled ? IBV_SEND_SIGNALED : 0) |
				(o->inl ? IBV_SEND_INLINE : 0) |
				(o->fence ? IBV_SEND_FENCE : 0);
		for (j = 0; j < o->nsge; j++) {
			uint32_t off = o->sge[j].off;

			if (o->inl) {
				memcpy(s->buf + scr, s->buf + off,
				       o->sge[j].len);
				off = scr;
				scr += o->sge[j].len;
			}
			sge[i][j].addr = (uintptr_t)s->buf + off;
			sge[i][j].length = o->sge[j].len;
			sge[i][j].lkey = s->mr->lkey;
		}
		if (o->kind == OP_SEND_IMM || o->kind == OP_WRITE_IMM)
			w->imm_data = htonl(o->imm);
		if (o->kind == OP_CAS || o->kind == OP_FAA) {
			w->wr.atomic.remote_addr = rm->base + o->roff;
			w->wr.atomic.rkey = rm->rkey;
			w->wr.atomic.compare_add = o->cmp;
			w->wr.atomic.swap = o->swp;
		} else {
			w->wr.rdma.remote_addr = rm->base + o->roff;
			w->wr.rdma.rkey = rm->rkey;
			/* The remote-read-only MR covers dst. */
			if (o->kind == OP_READ && o->roff >= OFF_DST &&
			    o->roff + o->len <= OFF_DST + REGION &&
			    rr(&rng, 0, 1))
				w->wr.rdma.rkey = rm->ro_rkey;
		}
		scr_end[i] = scr;
	}
	scr0 = OFF_SCR;
	while (first < st->nops) {
		int n = (int)rr(&rng, 1, st->nops - first);

		if (rr(&rng, 0, 2))
			n = st->nops - first;
		for (i = first; i < first + n - 1; i++)
			wr[i].next = &wr[i + 1];
		wr[first + n - 1].next = NULL;
		if (ibv_post_send(s->qp, &wr[first], &bad))
			fail("ibv_post_send step %d op %d: error", st->k,
			     (int)(bad - wr));
		/* All inline data posted so far may go now. */
		first += n;
		memset(s->buf + scr0, 0xa5, scr_end[first - 1] - scr0);
		scr0 = scr_end[first - 1];
	}
}

/* Next completion of cq; fails after WAIT_S seconds without one. */
static void poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *who,
		     double limit)
{
	double t0 = now_s();
	unsigned idle = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (++idle % 256 == 0) {
			if (now_s() - t0 > limit)
				fail("%s: no completion within %.0f s", who,
				     limit);
			usleep(50);
		}
	}
	if (n < 0)
		fail("%s: ibv_poll_cq returned %d", who, n);
}

static void no_more(struct ibv_cq *cq, const char *who)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(cq, 1, &wc) != 0)
		fail("%s: an unexpected completion (wr_id %#" PRIx64
		     " status %s)",
		     who, wc.wr_id, ibv_wc_status_str(wc.status));
}

static void expect_wc(const struct ibv_wc *wc, const char *who, uint64_t id,
		      enum ibv_wc_status status, int opc, uint32_t len, int imm,
		      uint32_t immv, uint32_t qpn)
{
	if (wc->wr_id != id)
		fail("%s: completion out of order: wr_id %#" PRIx64
		     ", expected %#" PRIx64 " (status %s)",
		     who, wc->wr_id, id, ibv_wc_status_str(wc->status));
	if (wc->status != status)
		fail("%s: wr_id %#" PRIx64 ": status %s, expected %s", who, id,
		     ibv_wc_status_str(wc->status), ibv_wc_status_str(status));
	if (wc->qp_num != qpn)
		fail("%s: wr_id %#" PRIx64 ": qp_num %#x, expected %#x", who,
		     id, wc->qp_num, qpn);
	if (status != IBV_WC_SUCCESS)
		return; /* opcode and length are undefined on error */
	if ((int)wc->opcode != opc)
		fail("%s: wr_id %#" PRIx64 ": opcode %d, expected %d", who, id,
		     wc->opcode, opc);
	if (wc->byte_len != len)
		fail("%s: wr_id %#" PRIx64 ": byte_len %u, expected %u", who,
		     id, wc->byte_len, len);
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		fail("%s: wr_id %#" PRIx64 ": IBV_WC_WITH_IMM %s", who, id,
		     imm ? "missing" : "unexpected");
	if (imm && wc->imm_data != htonl(immv))
		fail("%s: wr_id %#" PRIx64 ": imm %#x, expected %#x", who, id,
		     ntohl(wc->imm_data), immv);
}

/* The requester's completions: the signalled WRs, in posting order. */
static int poll_sends(struct side *s, const struct step *st)
{
	struct ibv_wc wc;
	char who[64];
	int i, n = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!o->signaled)
			continue;
		snprintf(who, sizeof(who), "requester, step %d op %d (%s)",
			 st->k, i, op_name[o->kind]);
		poll_one(s->scq, &wc, who, WAIT_S);
		expect_wc(&wc, who, wrid(st->k, i, 0), IBV_WC_SUCCESS,
			  wc_opc[o->kind], o->len, 0, 0, s->qp->qp_num);
		n++;
	}
	no_more(s->scq, "requester");
	return n;
}

/* The responder's completions: one per SEND / WRITE_IMM, in order. */
static int poll_recvs(struct side *s, const struct step *st)
{
	struct ibv_wc wc;
	char who[64];
	int i, n = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!has_recv(o->kind))
			continue;
		snprintf(who, sizeof(who), "responder, step %d op %d (%s)",
			 st->k, i, op_name[o->kind]);
		poll_one(s->rcq, &wc, who, WAIT_S);
		expect_wc(&wc, who, wrid(st->k, i, 1), IBV_WC_SUCCESS,
			  o->kind == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
						  : IBV_WC_RECV,
			  o->len, o->kind != OP_SEND, o->imm, s->qp->qp_num);
		n++;
	}
	no_more(s->rcq, "responder");
	return n;
}

/* Every modelled byte of a side's memory. */
static void verify_mem(const struct side *s, int i, const char *when)
{
	static const char *const rn[] = { "src", "dst", "atomic" };
	uint32_t off, first = 0, n = 0;

	if (!memcmp(s->buf, img[i], IMG_LEN))
		return;
	for (off = 0; off < IMG_LEN; off++)
		if (s->buf[off] != img[i][off] && !n++)
			first = off;
	fail("%s: %s memory: %u bytes differ, first at %s+%u (got %#x, "
	     "expected %#x)",
	     when, i ? "responder" : "requester", n, rn[first / REGION],
	     first % REGION, s->buf[first], img[i][first]);
}

static uint64_t step_bytes(const struct step *st)
{
	uint64_t b = 0;
	int i;

	for (i = 0; i < st->nops; i++)
		b += st->ops[i].len;
	return b;
}

static void step_report(const struct step *st, int nsc, int nrc)
{
	printf("step %2d %-26s %2d WRs %8" PRIu64 " bytes, %2d send ", st->k,
	       st->what, st->nops, step_bytes(st), nsc);
	if (nrc >= 0)
		printf("+ %2d recv ", nrc);
	printf("completions ok, memory ok\n");
	fflush(stdout);
}

/* ---- the bad cases ---- */

enum bad {
	BAD_WRITE_RKEY,
	BAD_READ_RKEY,
	BAD_ATOMIC_RKEY,
	BAD_WRITE_RANGE,
	BAD_WRITE_RO,
	BAD_N
};
static const char *const bad_name[] = { "WRITE with an unknown rkey",
					"READ with an unknown rkey",
					"FETCH_AND_ADD with an unknown rkey",
					"WRITE beyond the MR",
					"WRITE through a remote-read-only MR" };
/* Where the responder's receive for the follow-up SEND sits. */
#define BAD_RECV_OFF (OFF_DST + 8192u)
#define BAD_LEN 4096u

static void bad_post_recv(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + BAD_RECV_OFF,
			       .length = 256,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0xbad0,
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		fail("ibv_post_recv");
}

/* A bad request, then a SEND and a READ or WRITE that must be flushed.
 * The follow-ups carry data that is already in place (or land in the
 * unmodelled scratch area), so whether the responder saw them before
 * the error or not, both memories still equal the model. */
static void bad_run(struct side *s, const struct remote *rm, enum bad b)
{
	uint8_t *scr = s->buf + OFF_SCR;
	struct ibv_sge sg[3] = {
		{ (uintptr_t)s->buf + OFF_DST + 65536, BAD_LEN, s->mr->lkey },
		{ (uintptr_t)scr, 100, s->mr->lkey },
		{ (uintptr_t)scr + 4096, 200, s->mr->lkey },
	};
	struct ibv_send_wr wr[3], *bad;
	uint32_t badkey = rm->rkey ^ 0x5a5a00u;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	int i;

	if (badkey == rm->ro_rkey)
		badkey ^= 0x1000000u;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 0xbad00 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].wr.rdma.remote_addr = rm->base + OFF_DST + 12288;
	wr[0].wr.rdma.rkey = badkey;
	switch (b) {
	case BAD_READ_RKEY:
		wr[0].opcode = IBV_WR_RDMA_READ;
		break;
	case BAD_ATOMIC_RKEY:
		wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		sg[0].length = 8;
		wr[0].wr.atomic.remote_addr = rm->base + OFF_ATOM;
		wr[0].wr.atomic.rkey = badkey;
		wr[0].wr.atomic.compare_add = 1;
		break;
	case BAD_WRITE_RANGE:
		wr[0].wr.rdma.rkey = rm->rkey;
		wr[0].wr.rdma.remote_addr = rm->base + BUF_LEN - 100;
		break;
	case BAD_WRITE_RO:
		wr[0].wr.rdma.rkey = rm->ro_rkey;
		break;
	default:
		break;
	}
	/* Follow-up 1: SEND of what the responder's buffer already holds. */
	memcpy(scr, img[1] + BAD_RECV_OFF, 100);
	wr[1].opcode = IBV_WR_SEND;
	/* Follow-up 2: WRITE of bytes already there, or READ to scratch. */
	wr[2].opcode =
		b == BAD_WRITE_RKEY ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr[2].wr.rdma.remote_addr = rm->base + OFF_DST + 20480;
	wr[2].wr.rdma.rkey = rm->rkey;
	memcpy(scr + 4096, img[1] + OFF_DST + 20480, 200);
	if (ibv_post_send(s->qp, wr, &bad))
		fail("ibv_post_send (%s)", bad_name[b]);
	poll_one(s->scq, &wc, bad_name[b], WAIT_S);
	expect_wc(&wc, bad_name[b], 0xbad00, IBV_WC_REM_ACCESS_ERR, 0, 0, 0, 0,
		  s->qp->qp_num);
	for (i = 1; i < 3; i++) {
		poll_one(s->scq, &wc, bad_name[b], WAIT_S);
		expect_wc(&wc, bad_name[b], 0xbad00 + i, IBV_WC_WR_FLUSH_ERR, 0,
			  0, 0, 0, s->qp->qp_num);
	}
	no_more(s->scq, bad_name[b]);
	if (ibv_query_qp(s->qp, &qa, IBV_QP_STATE, &ia) ||
	    qa.qp_state != IBV_QPS_ERR)
		fail("%s: QP state %d after the error, expected ERR",
		     bad_name[b], qa.qp_state);
	printf("bad case: %s -> IBV_WC_REM_ACCESS_ERR, then 2 WRs "
	       "IBV_WC_WR_FLUSH_ERR, QP in ERR\n",
	       bad_name[b]);
}

/* Completions a responder QP may leave after the error: only flushes of
 * its one receive (or its successful completion, as the SEND may have
 * arrived before the bad request's error was seen). */
static void bad_drain(struct side *s)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(s->rcq, 1, &wc) == 1)
		if (wc.wr_id != 0xbad0 || (wc.status != IBV_WC_SUCCESS &&
					   wc.status != IBV_WC_WR_FLUSH_ERR))
			fail("responder: unexpected completion %#" PRIx64
			     " %s after a bad request",
			     wc.wr_id, ibv_wc_status_str(wc.status));
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
	uint64_t rng = seed;
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
		gen_step(k, sd[0].max_inline, &st);
		post_recvs(&sd[1], &st);
		post_sends(&sd[0], &rb, &st);
		nsc = poll_sends(&sd[0], &st);
		nrc = poll_recvs(&sd[1], &st);
		verify_mem(&sd[0], 0, st.what);
		verify_mem(&sd[1], 1, st.what);
		step_report(&st, nsc, nrc);
	}
	for (b = 0; b < BAD_N; b++) {
		qp_destroy(&sd[0]);
		qp_destroy(&sd[1]);
		pair_new(&sd[0], &sd[1], &rng);
		local_remote(&sd[1], &rb);
		bad_post_recv(&sd[1]);
		bad_run(&sd[0], &rb, b);
		verify_mem(&sd[0], 0, bad_name[b]);
		verify_mem(&sd[1], 1, bad_name[b]);
		bad_drain(&sd[1]);
	}
	side_free(&sd[0]);
	side_free(&sd[1]);
	return 0;
}

/* ---- between hosts: client = requester, server = responder ---- */

static int run_server(const char *cs, const char *port)
{
	struct side sd = { 0 };
	uint64_t rng = seed ^ 0x5e;
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
				bad_post_recv(&sd);
			printf("server: QP %#x <- QP %#x\n", sd.qp->qp_num,
			       rm.qpn);
		} else if (sscanf(line, "P %d", &n) == 1 && n == k) {
			gen_step(k, rm.max_inline, &st);
			post_recvs(&sd, &st);
			tcp_send("R");
		} else if (sscanf(line, "V %d", &n) == 1 && n == k) {
			n = poll_recvs(&sd, &st);
			verify_mem(&sd, 1, st.what);
			printf("server: step %2d %-26s %2d recv completions "
			       "ok, memory ok\n",
			       k++, st.what, n);
			tcp_send("OK");
		} else if (!strcmp(line, "M")) {
			verify_mem(&sd, 1, "after a bad request");
			bad_drain(&sd);
			printf("server: memory ok after a bad request\n");
			tcp_send("OK");
		} else if (!strcmp(line, "D")) {
			/* The driver kills us now (SIGKILL), as a host
			 * vanishes; until then, wait. */
			printf("server: pid %d ready to die\n", (int)getpid());
			fflush(stdout);
			for (;;)
				pause();
		} else if (!strcmp(line, "E")) {
			side_free(&sd);
			tcp_send("BYE");
			printf("server: done\n");
			return 0;
		} else {
			fail("server: unexpected request '%s' (step %d)", line,
			     k);
		}
		fflush(stdout);
	}
	fail("server: the client went away");
}

static void client_pair(struct side *s, struct remote *rm, uint64_t *rng)
{
	qp_destroy(s);
	qp_new(s, rng);
	tcp_send("C");
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

	gen_step(k, s->max_inline, &st);
	tcp_send("P %d", k);
	tcp_expect(line, sizeof(line));
	post_sends(s, rm, &st);
	nsc = poll_sends(s, &st);
	verify_mem(s, 0, st.what);
	tcp_send("V %d", k);
	tcp_expect(line, sizeof(line));
	step_report(&st, nsc, -1);
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
	t0 = now_s();
	if (ibv_post_send(s->qp, wr, &bad))
		fail("ibv_post_send to the vanished peer");
	poll_one(s->scq, &wc, "vanished peer", 60);
	dt = now_s() - t0;
	expect_wc(&wc, "vanished peer", 0x90e0, IBV_WC_RETRY_EXC_ERR, 0, 0, 0,
		  0, s->qp->qp_num);
	poll_one(s->scq, &wc, "vanished peer", WAIT_S);
	expect_wc(&wc, "vanished peer", 0x90e1, IBV_WC_WR_FLUSH_ERR, 0, 0, 0, 0,
		  s->qp->qp_num);
	no_more(s->scq, "vanished peer");
	printf("vanished peer: IBV_WC_RETRY_EXC_ERR after %.3f s (timeout %d, "
	       "retry_cnt %d: at least %.3f s), then IBV_WC_WR_FLUSH_ERR\n",
	       dt, GONE_TIMEOUT, GONE_RETRY, min);
	if (dt < min)
		fail("retry exceeded after %.3f s, before %d tries of %.3f s",
		     dt, GONE_RETRY + 1, min / (GONE_RETRY + 1));
	if (dt > 30.0)
		fail("retry exceeded only after %.3f s (limit %.3f s)", dt,
		     min);
}

static int run_client(const char *cs, const char *host, const char *port)
{
	struct side sd = { 0 };
	uint64_t rng = seed ^ 0xc1;
	struct remote rm;
	char line[64];
	int k;
	enum bad b;

	model_init();
	side_mem(&sd, 0);
	tcp_open(host, port);
	if (!strcmp(cs, "data")) {
		client_pair(&sd, &rm, &rng);
		for (k = 0; k < NSTEPS; k++)
			client_step(&sd, &rm, k);
	} else if (!strcmp(cs, "bad_rkey")) {
		for (b = 0; b < BAD_N; b++) {
			client_pair(&sd, &rm, &rng);
			bad_run(&sd, &rm, b);
			verify_mem(&sd, 0, bad_name[b]);
			tcp_send("M");
			tcp_expect(line, sizeof(line));
		}
	} else {
		client_pair(&sd, &rm, &rng);
		client_step(&sd, &rm, 0);
		tcp_send("D");
		if (tcp_recv(line, sizeof(line)))
			fail("the server answered '%s' instead of dying", line);
		printf("client: the server is gone (its TCP connection "
		       "closed)\n");
		peer_gone(&sd, &rm);
		side_free(&sd);
		printf("client: done\n");
		return 0;
	}
	tcp_send("E");
	tcp_expect(line, sizeof(line));
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
		"HOST\n"
		"CASE: data (default); client/server only: bad_rkey, "
		"peer_gone, rtr\n");
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
	while ((c = getopt(argc, argv, "d:c:p:s:")) != -1) {
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
			seed = strtoull(optarg, NULL, 0);
			break;
		default:
			usage();
		}
	}
	if (!dev || (strcmp(cs, "data") && strcmp(cs, "bad_rkey") &&
		     strcmp(cs, "peer_gone") && strcmp(cs, "rtr")))
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
	       stay_rtr ? " (QP stays in RTR)" : "", seed);
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
