// SPDX-License-Identifier: BSD-2-Clause
/*
 * mri-nccl: NCCL's IB transport (net_ib), replayed without GPUs: the verb
 * sequence NCCL uses, bound as NCCL binds it (dlopen libibverbs.so.1 and
 * dlvsym at IBVERBS_1.1, the newer verbs at their own versions; post_send
 * and poll_cq through the context's ops), between two "ranks" of one
 * process on one device (the device's loopback, as two GPUs of one node
 * on one NIC):
 *
 *  - the GID NCCL picks with NCCL_IB_GID_INDEX unset: the first RoCE v2
 *    IPv4 GID, its type read from
 *    /sys/class/infiniband/DEV/ports/1/gid_attrs/types/N (metaroce-run's
 *    shim serves the view there);
 *  - an async event thread blocked in ibv_get_async_event;
 *  - ibv_reg_dmabuf_mr(fd = -1) must answer EOPNOTSUPP (NCCL then falls
 *    back), ibv_reg_mr_iova2 registers, ibv_query_ece answers EOPNOTSUPP
 *    or a value;
 *  - NQP RC QPs per connection; per message the receiver posts one
 *    receive with no SGE per QP and writes a clear-to-send entry into the
 *    sender's FIFO with an inline RDMA WRITE; the sender splits the
 *    message over the QPs as RDMA WRITEs, then a 0-byte WRITE_WITH_IMM on
 *    each QP (NCCL with adaptive routing); the receiver checks, the moment
 *    each QP's receive completes, that every byte of that QP's share is
 *    in place; then a 1-byte RDMA READ on a QP connected to itself (the
 *    GPU Direct flush).
 *
 * Usage: mri-nccl DEVICE [ROUNDS]. Exit 0 and one "ok" line, or a
 * "FAIL: ..." line and exit 1.
 */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#define NQP 4
#define MAXMSG (4u << 20)
#define FIFO_SLOTS 8
#define WAIT_S 30

/* The entry a receiver writes into the sender's FIFO (NCCL's
 * ncclIbSendFifo, in spirit: where to write, with which key, how much). */
struct cts {
	uint64_t addr;
	uint32_t rkey;
	uint32_t size;
	uint32_t seq; /* round + 1: nonzero once written */
	uint32_t pad[11];
};

static struct {
	struct ibv_device **(*get_device_list)(int *);
	void (*free_device_list)(struct ibv_device **);
	const char *(*get_device_name)(struct ibv_device *);
	struct ibv_context *(*open_device)(struct ibv_device *);
	int (*close_device)(struct ibv_context *);
	int (*query_device)(struct ibv_context *, struct ibv_device_attr *);
	int (*query_port)(struct ibv_context *, uint8_t,
			  struct ibv_port_attr *);
	int (*query_gid)(struct ibv_context *, uint8_t, int, union ibv_gid *);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *);
	int (*dealloc_pd)(struct ibv_pd *);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *, void *, size_t, int);
	struct ibv_mr *(*reg_mr_iova2)(struct ibv_pd *, void *, size_t,
				       uint64_t, unsigned int);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *, uint64_t, size_t,
					uint64_t, int, int);
	int (*dereg_mr)(struct ibv_mr *);
	struct ibv_cq *(*create_cq)(struct ibv_context *, int, void *,
				    struct ibv_comp_channel *, int);
	int (*destroy_cq)(struct ibv_cq *);
	struct ibv_qp *(*create_qp)(struct ibv_pd *, struct ibv_qp_init_attr *);
	int (*modify_qp)(struct ibv_qp *, struct ibv_qp_attr *, int);
	int (*destroy_qp)(struct ibv_qp *);
	int (*query_ece)(struct ibv_qp *, struct ibv_ece *);
	int (*get_async_event)(struct ibv_context *, struct ibv_async_event *);
	void (*ack_async_event)(struct ibv_async_event *);
	const char *(*event_type_str)(enum ibv_event_type);
} v;

static void fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));
static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("FAIL: ", stdout);
	vprintf(fmt, ap);
	va_end(ap);
	printf(" (errno %d: %s)\n", errno, strerror(errno));
	exit(1);
}

static void *sym(void *h, const char *name, const char *ver)
{
	void *p = dlvsym(h, name, ver);

	if (!p)
		fail("dlvsym(%s, %s): %s", name, ver, dlerror());
	return p;
}

static void bind_verbs(void)
{
	void *h = dlopen("libibverbs.so.1", RTLD_NOW);

	if (!h)
		fail("dlopen libibverbs.so.1: %s", dlerror());
#define B(f) (*(void **)&v.f = sym(h, "ibv_" #f, "IBVERBS_1.1"))
	B(get_device_list);
	B(free_device_list);
	B(get_device_name);
	B(open_device);
	B(close_device);
	B(query_device);
	B(query_port);
	B(query_gid);
	B(alloc_pd);
	B(dealloc_pd);
	B(reg_mr);
	B(dereg_mr);
	B(create_cq);
	B(destroy_cq);
	B(create_qp);
	B(modify_qp);
	B(destroy_qp);
	B(get_async_event);
	B(ack_async_event);
	B(event_type_str);
#undef B
	/* The newer verbs NCCL binds at their own versions. */
	*(void **)&v.reg_mr_iova2 = sym(h, "ibv_reg_mr_iova2", "IBVERBS_1.8");
	*(void **)&v.reg_dmabuf_mr =
		sym(h, "ibv_reg_dmabuf_mr", "IBVERBS_1.12");
	*(void **)&v.query_ece = sym(h, "ibv_query_ece", "IBVERBS_1.10");
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* NCCL_IB_GID_INDEX unset: the first GID whose type file says RoCE v2
 * and which is IPv4-mapped (NCCL_IB_ADDR_FAMILY defaults to AF_INET). */
static int pick_gid(struct ibv_context *ctx, const char *dev, int tbl_len,
		    union ibv_gid *gid)
{
	static const uint8_t v4[12] = {
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff
	};
	int i;

	for (i = 0; i < tbl_len; i++) {
		char path[256], type[32] = { 0 };
		ssize_t n;
		int fd;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gid_attrs/types/%d",
			 dev, i);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			fail("open %s (NCCL reads the GID type here)", path);
		n = read(fd, type, sizeof(type) - 1);
		close(fd);
		if (n <= 0)
			fail("read %s", path);
		if (v.query_gid(ctx, 1, i, gid))
			fail("ibv_query_gid %d", i);
		if (!strncmp(type, "RoCE v2", 7) && !memcmp(gid->raw, v4, 12))
			return i;
	}
	fail("no RoCE v2 IPv4 GID among %d", tbl_len);
}

static void poll1(struct ibv_cq *cq, struct ibv_wc *wc);
static volatile int async_events;

static void *async_thread(void *arg)
{
	struct ibv_context *ctx = arg;
	struct ibv_async_event ev;

	/* As NCCL's ncclIbAsyncThreadMain: block, log, acknowledge. */
	for (;;) {
		if (v.get_async_event(ctx, &ev))
			break;
		fprintf(stderr, "async event: %s\n",
			v.event_type_str(ev.event_type));
		/* A port event at open is news, not an error (NCCL logs
		 * it); a QP, CQ or SRQ event here would be. */
		if (ev.event_type != IBV_EVENT_PORT_ACTIVE)
			async_events++;
		v.ack_async_event(&ev);
	}
	return NULL;
}

/* The receiver's CQ also completes the CTS write (wr_id 1000), at any
 * point of the round: take the next other completion, noting that one. */
static int cts_done;

static void poll_rcq(struct ibv_cq *cq, struct ibv_wc *wc)
{
	for (;;) {
		poll1(cq, wc);
		if (wc->wr_id != 1000)
			return;
		cts_done = 1;
	}
}

static struct ibv_qp *make_qp(struct ibv_pd *pd, struct ibv_cq *cq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = cq,
		.recv_cq = cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 64,
			 .max_recv_wr = 64,
			 .max_send_sge = 1,
			 .max_recv_sge = 1,
			 .max_inline_data = sizeof(struct cts) },
	};
	struct ibv_qp_attr at = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags =
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
	};
	struct ibv_qp *q = v.create_qp(pd, &a);

	if (!q)
		fail("ibv_create_qp");
	if (v.modify_qp(q, &at,
			IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				IBV_QP_ACCESS_FLAGS))
		fail("modify INIT");
	return q;
}

/* NCCL's ncclIbRtrQp / ncclIbRtsQp. */
static void connect_qp(struct ibv_qp *q, uint32_t peer, union ibv_gid *gid,
		       int gidx)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer,
		.rq_psn = 0,
		.max_dest_rd_atomic = 1,
		.min_rnr_timer = 12,
		.ah_attr = { .is_global = 1,
			     .grh = { .dgid = *gid,
				      .sgid_index = (uint8_t)gidx,
				      .hop_limit = 255,
				      .traffic_class = 0 },
			     .sl = 0,
			     .port_num = 1 },
	};

	if (v.modify_qp(q, &a,
			IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER))
		fail("modify RTR");
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 20;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = 0;
	a.max_rd_atomic = 1;
	if (v.modify_qp(q, &a,
			IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
				IBV_QP_MAX_QP_RD_ATOMIC))
		fail("modify RTS");
}

static void post(struct ibv_qp *q, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad;

	/* NCCL calls the context's op, not an exported symbol. */
	if (q->context->ops.post_send(q, wr, &bad))
		fail("post_send");
}

static void poll1(struct ibv_cq *cq, struct ibv_wc *wc)
{
	double t0 = now_s();

	for (;;) {
		int n = cq->context->ops.poll_cq(cq, 1, wc);

		if (n < 0)
			fail("poll_cq");
		if (n == 1) {
			if (wc->status != IBV_WC_SUCCESS)
				fail("completion wr_id %llu status %d",
				     (unsigned long long)wc->wr_id, wc->status);
			return;
		}
		if (now_s() - t0 > WAIT_S)
			fail("no completion within %d s", WAIT_S);
	}
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : NULL;
	int rounds = argc > 2 ? atoi(argv[2]) : 20, i, n, gidx, r, q, ece_rc;
	struct ibv_port_attr pa;
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_device_attr da;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *sq[NQP], *rq[NQP], *flush;
	struct ibv_mr *smr, *rmr, *fmr, *dm;
	struct ibv_ece ece;
	union ibv_gid gid;
	uint8_t *sbuf, *rbuf;
	struct cts *fifo, *cts_src;
	pthread_t th;
	uint64_t rng = 0x6e63636cull;

	if (!dev)
		fail("usage: mri-nccl DEVICE [ROUNDS]");
	setvbuf(stdout, NULL, _IOLBF, 0);
	bind_verbs();
	list = v.get_device_list(&n);
	for (i = 0; list && i < n; i++)
		if (!strcmp(v.get_device_name(list[i]), dev))
			ctx = v.open_device(list[i]);
	if (!ctx)
		fail("device %s not found or not opened", dev);
	if (v.query_device(ctx, &da) || v.query_port(ctx, 1, &pa))
		fail("query device/port");
	gidx = pick_gid(ctx, dev, pa.gid_tbl_len, &gid);
	if (pthread_create(&th, NULL, async_thread, ctx))
		fail("pthread_create");
	pd = v.alloc_pd(ctx);
	scq = v.create_cq(ctx, 4 * NQP * 64, NULL, NULL, 0);
	rcq = v.create_cq(ctx, 4 * NQP * 64, NULL, NULL, 0);
	if (!pd || !scq || !rcq)
		fail("pd/cq");
	sbuf = aligned_alloc(4096, MAXMSG);
	rbuf = aligned_alloc(4096, MAXMSG);
	fifo = aligned_alloc(4096, FIFO_SLOTS * sizeof(*fifo));
	cts_src = aligned_alloc(64, sizeof(*cts_src));
	if (!sbuf || !rbuf || !fifo || !cts_src)
		fail("memory");
	memset(fifo, 0, FIFO_SLOTS * sizeof(*fifo));
	/* GPU memory would go through dma-buf: not here, and NCCL takes
	 * EOPNOTSUPP as "use ibv_reg_mr". */
	errno = 0;
	dm = v.reg_dmabuf_mr(pd, 0, MAXMSG, (uintptr_t)rbuf, -1,
			     IBV_ACCESS_LOCAL_WRITE);
	if (dm || errno != EOPNOTSUPP)
		fail("ibv_reg_dmabuf_mr(fd -1): %p, want EOPNOTSUPP",
		     (void *)dm);
	smr = v.reg_mr_iova2(pd, sbuf, MAXMSG, (uintptr_t)sbuf,
			     IBV_ACCESS_LOCAL_WRITE);
	rmr = v.reg_mr_iova2(pd, rbuf, MAXMSG, (uintptr_t)rbuf,
			     IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				     IBV_ACCESS_REMOTE_READ);
	fmr = v.reg_mr(pd, fifo, FIFO_SLOTS * sizeof(*fifo),
		       IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
	if (!smr || !rmr || !fmr)
		fail("ibv_reg_mr_iova2 / ibv_reg_mr");
	for (q = 0; q < NQP; q++) {
		sq[q] = make_qp(pd, scq);
		rq[q] = make_qp(pd, rcq);
	}
	flush = make_qp(pd, rcq);
	ece_rc = v.query_ece(sq[0], &ece);
	if (ece_rc && ece_rc != EOPNOTSUPP)
		fail("ibv_query_ece: %d, want 0 or EOPNOTSUPP", ece_rc);
	for (q = 0; q < NQP; q++) {
		connect_qp(sq[q], rq[q]->qp_num, &gid, gidx);
		connect_qp(rq[q], sq[q]->qp_num, &gid, gidx);
	}
	connect_qp(flush, flush->qp_num, &gid, gidx); /* to itself */

	for (r = 0; r < rounds; r++) {
		uint32_t size = 1 + (uint32_t)(rng % MAXMSG), chunk, off;
		struct cts *slot = &fifo[r % FIFO_SLOTS];
		struct ibv_wc wc;
		int got[NQP] = { 0 }, done = 0;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		for (i = 0; i < (int)size; i++)
			sbuf[i] = (uint8_t)(i * 31 + r * 7 + (i >> 12));
		memset(rbuf, 0xee, size);
		/* Receiver: one SGE-less receive per QP, then CTS. */
		for (q = 0; q < NQP; q++) {
			struct ibv_recv_wr rw = { .wr_id = (uint64_t)q }, *bad;

			if (rq[q]->context->ops.post_recv(rq[q], &rw, &bad))
				fail("post_recv");
		}
		cts_src->addr = (uintptr_t)rbuf;
		cts_src->rkey = rmr->rkey;
		cts_src->size = size;
		cts_src->seq = (uint32_t)r + 1;
		{
			struct ibv_sge s = { (uintptr_t)cts_src,
					     sizeof(*cts_src), 0 };
			struct ibv_send_wr w = {
				.wr_id = 1000,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_WRITE,
				.send_flags =
					IBV_SEND_INLINE | IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)slot, fmr->rkey },
			};

			post(rq[0], &w);
		}
		/* Sender: wait for the CTS entry, as NCCL spins on it. */
		{
			double t0 = now_s();

			while (__atomic_load_n(&slot->seq, __ATOMIC_ACQUIRE) !=
			       (uint32_t)r + 1)
				if (now_s() - t0 > WAIT_S)
					fail("round %d: no CTS", r);
		}
		if (slot->size != size || slot->rkey != rmr->rkey ||
		    slot->addr != (uintptr_t)rbuf)
			fail("round %d: CTS entry wrong", r);
		chunk = (size + NQP - 1) / NQP;
		for (q = 0, off = 0; q < NQP; q++, off += chunk) {
			uint32_t len = off >= size	    ? 0
				       : size - off < chunk ? size - off
							    : chunk;
			struct ibv_sge s = { (uintptr_t)sbuf + off, len,
					     smr->lkey };
			struct ibv_send_wr imm = {
				.wr_id = 2000 + (uint64_t)q,
				.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				.send_flags = IBV_SEND_SIGNALED,
				.imm_data = htobe32(len),
				.wr.rdma = { slot->addr + off, slot->rkey },
			};
			struct ibv_send_wr w = {
				.wr_id = 3000 + (uint64_t)q,
				.sg_list = &s,
				.num_sge = len ? 1 : 0,
				.opcode = IBV_WR_RDMA_WRITE,
				.wr.rdma = { slot->addr + off, slot->rkey },
				.next = &imm,
			};

			post(sq[q], &w);
		}
		/* Receiver: each QP's completion means its share is in. */
		while (done < NQP) {
			poll_rcq(rcq, &wc);
			if (wc.opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
			    wc.wr_id >= NQP || got[wc.wr_id] ||
			    wc.byte_len != 0)
				fail("round %d: receive wr_id %llu opcode %d "
				     "len %u",
				     r, (unsigned long long)wc.wr_id, wc.opcode,
				     wc.byte_len);
			q = (int)wc.wr_id;
			off = (uint32_t)q * chunk;
			{
				uint32_t len = be32toh(wc.imm_data);

				if (len && memcmp(rbuf + off, sbuf + off, len))
					fail("round %d: QP %d's %u bytes not "
					     "all placed at its completion",
					     r, q, len);
			}
			got[q] = 1;
			done++;
		}
		if (memcmp(rbuf, sbuf, size))
			fail("round %d: %u bytes differ", r, size);
		/* The flush: a 1-byte READ on the QP connected to itself. */
		{
			uint8_t one;
			struct ibv_mr *om =
				v.reg_mr(pd, &one, 1, IBV_ACCESS_LOCAL_WRITE);
			struct ibv_sge s = { (uintptr_t)&one, 1, 0 };
			struct ibv_send_wr w = {
				.wr_id = 4000,
				.sg_list = &s,
				.num_sge = 1,
				.opcode = IBV_WR_RDMA_READ,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.rdma = { (uintptr_t)rbuf, rmr->rkey },
			};

			if (!om)
				fail("reg_mr flush byte");
			s.lkey = om->lkey;
			post(flush, &w);
			poll_rcq(rcq, &wc);
			if (wc.wr_id != 4000 || wc.opcode != IBV_WC_RDMA_READ ||
			    one != rbuf[0])
				fail("round %d: flush READ", r);
			v.dereg_mr(om);
		}
		while (!cts_done) {
			poll1(rcq, &wc);
			if (wc.wr_id != 1000)
				fail("round %d: unexpected wr_id %llu", r,
				     (unsigned long long)wc.wr_id);
			cts_done = 1;
		}
		cts_done = 0;
		/* Sender completions: the WRITE_IMMs (signaled). */
		for (q = 0; q < NQP; q++) {
			poll1(scq, &wc);
			if (wc.wr_id < 2000 || wc.wr_id >= 2000 + NQP)
				fail("round %d: send wr_id %llu", r,
				     (unsigned long long)wc.wr_id);
		}
	}
	for (q = 0; q < NQP; q++)
		if (v.destroy_qp(sq[q]) || v.destroy_qp(rq[q]))
			fail("destroy_qp");
	if (v.destroy_qp(flush) || v.dereg_mr(smr) || v.dereg_mr(rmr) ||
	    v.dereg_mr(fmr) || v.destroy_cq(scq) || v.destroy_cq(rcq) ||
	    v.dealloc_pd(pd))
		fail("teardown");
	pthread_cancel(th);
	pthread_join(th, NULL);
	if (async_events)
		fail("%d unexpected async events", async_events);
	if (v.close_device(ctx))
		fail("close_device");
	v.free_device_list(list);
	printf("ok: mri-nccl %s: %d rounds, %d QPs, GID %d (RoCE v2 IPv4), "
	       "dmabuf EOPNOTSUPP, query_ece %s\n",
	       dev, rounds, NQP, gidx, ece_rc ? "EOPNOTSUPP" : "0");
	return 0;
}
