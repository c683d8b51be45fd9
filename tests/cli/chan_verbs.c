/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The completion channel of the preload shim, seen from a verbs program
 * (run through metaroce-run, in a namespace with device argv[1]):
 * its fd is a close-on-exec pipe, blocking until the program says
 * otherwise; with no event pending a nonblocking read says EAGAIN, not
 * end-of-file; a channel with a CQ cannot be destroyed (EBUSY); a WRITE
 * between two loopback QPs on an armed CQ wakes poll() on the fd, and
 * ibv_get_cq_event returns that CQ and its context; every byte arrives.
 */
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define LEN 4096
#define ACC                                                 \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ)

static int fails;

#define CHECK(cond)                                                     \
	do {                                                            \
		if (cond) {                                             \
			printf("ok: %s\n", #cond);                      \
		} else {                                                \
			printf("FAIL: %s (line %d, errno %s)\n", #cond, \
			       __LINE__, strerror(errno));              \
			fails++;                                        \
		}                                                       \
	} while (0)

static int connect_rc(struct ibv_qp *q, uint32_t peer, union ibv_gid *gid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	a.qp_access_flags = ACC;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				  IBV_QP_ACCESS_FLAGS))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer;
	a.rq_psn = 7;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(q, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 7;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	return ibv_modify_qp(q, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

int main(int argc, char **argv)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct ibv_comp_channel *ch, *ch2;
	struct ibv_cq *cq, *cq2, *ev_cq = NULL;
	struct ibv_qp_init_attr qa = { .qp_type = IBV_QPT_RC,
				       .cap = { .max_send_wr = 4,
						.max_recv_wr = 4,
						.max_send_sge = 1,
						.max_recv_sge = 1 } };
	struct ibv_qp *q1, *q2;
	struct ibv_send_wr wr = { 0 }, *bad;
	struct ibv_sge sge;
	struct ibv_wc wc;
	union ibv_gid gid;
	struct ibv_pd *pd;
	struct ibv_mr *src, *dst;
	struct pollfd pfd;
	struct stat st;
	void *ev_ctx = NULL;
	unsigned char *a, *b;
	char buf[8];
	int n, flags;

	if (argc != 2) {
		fprintf(stderr, "usage: chan_verbs DEVICE\n");
		return 2;
	}
	list = ibv_get_device_list(&n);
	for (int i = 0; list && i < n && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		printf("FAIL: cannot open %s\n", argv[1]);
		return 1;
	}

	ch = ibv_create_comp_channel(ctx);
	CHECK(ch != NULL);
	if (!ch)
		return 1;
	CHECK(ch->context == ctx && ch->refcnt == 0);
	CHECK(!fstat(ch->fd, &st) && S_ISFIFO(st.st_mode));
	CHECK(fcntl(ch->fd, F_GETFD) & FD_CLOEXEC);
	flags = fcntl(ch->fd, F_GETFL);
	CHECK(flags >= 0 && !(flags & O_NONBLOCK));
	CHECK(!fcntl(ch->fd, F_SETFL, flags | O_NONBLOCK));
	errno = 0;
	CHECK(read(ch->fd, buf, sizeof(buf)) == -1 && errno == EAGAIN);
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == -1);

	ch2 = ibv_create_comp_channel(ctx);
	CHECK(ch2 && ch2->fd != ch->fd);
	CHECK(ch2 && ibv_destroy_comp_channel(ch2) == 0);

	cq = ibv_create_cq(ctx, 16, (void *)0x1234, ch, 0);
	cq2 = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	CHECK(cq && cq2);
	if (!cq || !cq2)
		return 1;
	CHECK(ch->refcnt == 1);
	CHECK(ibv_destroy_comp_channel(ch) == EBUSY);

	pd = ibv_alloc_pd(ctx);
	a = calloc(1, LEN);
	b = calloc(1, LEN);
	for (int i = 0; i < LEN; i++)
		a[i] = (unsigned char)(i * 7 + 3);
	src = ibv_reg_mr(pd, a, LEN, ACC);
	dst = ibv_reg_mr(pd, b, LEN, ACC);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	q1 = ibv_create_qp(pd, &qa);
	qa.send_cq = cq2;
	qa.recv_cq = cq2;
	q2 = ibv_create_qp(pd, &qa);
	CHECK(pd && src && dst && q1 && q2);
	if (!pd || !src || !dst || !q1 || !q2)
		return 1;
	CHECK(!ibv_query_gid(ctx, 1, 0, &gid));
	CHECK(!connect_rc(q1, q2->qp_num, &gid) &&
	      !connect_rc(q2, q1->qp_num, &gid));

	CHECK(ibv_req_notify_cq(cq, 0) == 0);
	sge.addr = (uintptr_t)a;
	sge.length = LEN;
	sge.lkey = src->lkey;
	wr.wr_id = 42;
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = (uintptr_t)b;
	wr.wr.rdma.rkey = dst->rkey;
	CHECK(ibv_post_send(q1, &wr, &bad) == 0);

	pfd.fd = ch->fd;
	pfd.events = POLLIN;
	CHECK(poll(&pfd, 1, 20000) == 1 && (pfd.revents & POLLIN));
	CHECK(ibv_get_cq_event(ch, &ev_cq, &ev_ctx) == 0);
	CHECK(ev_cq == cq && ev_ctx == (void *)0x1234);
	ibv_ack_cq_events(cq, 1);
	CHECK(ibv_poll_cq(cq, 1, &wc) == 1 && wc.status == IBV_WC_SUCCESS &&
	      wc.wr_id == 42 && wc.opcode == IBV_WC_RDMA_WRITE);
	CHECK(!memcmp(a, b, LEN));
	errno = 0;
	CHECK(read(ch->fd, buf, sizeof(buf)) == -1 && errno == EAGAIN);

	CHECK(!ibv_destroy_qp(q1) && !ibv_destroy_qp(q2));
	CHECK(!ibv_dereg_mr(src) && !ibv_dereg_mr(dst) && !ibv_dealloc_pd(pd));
	CHECK(!ibv_destroy_cq(cq) && !ibv_destroy_cq(cq2));
	CHECK(ch->refcnt == 0);
	CHECK(ibv_destroy_comp_channel(ch) == 0);
	CHECK(!ibv_close_device(ctx));
	ibv_free_device_list(list);
	free(a);
	free(b);
	printf("%s\n", fails ? "FAILED" : "all checks passed");
	return fails ? 1 : 0;
}
