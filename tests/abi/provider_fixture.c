// SPDX-License-Identifier: BSD-2-Clause
/* The device of the provider tests (provider_fixture.h). */
#include "provider_fixture.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

static char rundir[64];
static char view[PATH_MAX];
static char ctl[PATH_MAX];
static char nodes[2][PATH_MAX];

static int put(const char *content, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static int put(const char *content, const char *fmt, ...)
{
	char path[PATH_MAX];
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	vsnprintf(path, sizeof(path), fmt, ap);
	va_end(ap);
	f = fopen(path, "w");
	if (!f)
		return -1;
	fputs(content, f);
	return fclose(f);
}

static int run(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int run(const char *fmt, ...)
{
	char cmd[PATH_MAX * 2];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	st = system(cmd);
	if (st != 0)
		fprintf(stderr, "fixture: '%s' failed (%d)\n", cmd, st);
	return st;
}

/* A device libibverbs lists but that is not a valid MetaRoCE device. */
static int add_bad_dev(int i, const char *ibdev, const char *record)
{
	char uv[32];

	snprintf(uv, sizeof(uv), "mrabi%d_%d", (int)getpid(), i);
	snprintf(nodes[i], sizeof(nodes[i]), "/dev/infiniband/%s", uv);
	if (mknod(nodes[i], S_IFCHR | 0666, makedev(1, 7)) && errno != EEXIST)
		return -1;
	if (run("mkdir -p '%s/class/infiniband_verbs/%s' "
		"'%s/class/infiniband/%s/ports/1/gids'",
		view, uv, view, ibdev))
		return -1;
	if (put(ibdev, "%s/class/infiniband_verbs/%s/ibdev", view, uv) ||
	    put("1:7\n", "%s/class/infiniband_verbs/%s/dev", view, uv) ||
	    put("1: CA\n", "%s/class/infiniband/%s/node_type", view, ibdev))
		return -1;
	if (record &&
	    put(record, "%s/class/infiniband/%s/metaroce.conf", view, ibdev))
		return -1;
	return 0;
}

static void cleanup(void)
{
	int i;

	if (ctl[0])
		run("METAROCE_RUNDIR='%s' '%s' link del " MRT_DEV
		    " >/dev/null 2>&1 || true",
		    rundir, ctl);
	for (i = 0; i < 2; i++)
		if (nodes[i][0])
			unlink(nodes[i]);
	if (rundir[0])
		run("rm -rf '%s'", rundir);
}

/* The one view metaroce-ctl made under our private rundir. */
static int find_view(void)
{
	struct dirent *de;
	DIR *d = opendir(rundir);

	if (!d)
		return -1;
	while ((de = readdir(d)))
		if (!strncmp(de->d_name, "net-", 4))
			break;
	if (de)
		snprintf(view, sizeof(view), "%s/%s/sysfs", rundir, de->d_name);
	closedir(d);
	return de ? 0 : -1;
}

int mrt_fixture_setup(void)
{
	const char *prov = getenv("METAROCE_TEST_PROVIDER");
	const char *c = getenv("METAROCE_TEST_CTL");

	if (!prov || prov[0] != '/' || !c || c[0] != '/') {
		fprintf(stderr, "fixture: METAROCE_TEST_PROVIDER and "
				"METAROCE_TEST_CTL must be absolute paths\n");
		return 1;
	}
	if (geteuid() != 0) {
		printf("skip: a namespace, a veth and /dev nodes need root\n");
		return 77;
	}
	if (unshare(CLONE_NEWNET)) {
		perror("fixture: unshare(CLONE_NEWNET)");
		return 1;
	}
	snprintf(rundir, sizeof(rundir), "/tmp/mrabi-XXXXXX");
	if (!mkdtemp(rundir)) {
		rundir[0] = 0;
		return 1;
	}
	atexit(cleanup);
	if (run("ip link add mrtv0 type veth peer name mrtv1 && "
		"ip link set mrtv0 up && ip link set mrtv1 up && "
		"ip link set lo up"))
		return 1;
	snprintf(ctl, sizeof(ctl), "%s", c);
	if (run("METAROCE_RUNDIR='%s' '%s' link add " MRT_DEV
		" --port net_af_packet0,iface=mrtv0 --ip " MRT_IP "/24"
		" --mac " MRT_MAC " --mtu %d",
		rundir, ctl, MRT_MTU))
		return 1;
	if (find_view()) {
		fprintf(stderr, "fixture: no view under %s\n", rundir);
		return 1;
	}
	if (add_bad_dev(0, "mrbad0", "name=mrbad0\nmtu=9000\n") ||
	    add_bad_dev(1, "mrnone0", NULL)) {
		fprintf(stderr, "fixture: cannot add the bad devices\n");
		return 1;
	}
	if (setenv("SYSFS_PATH", view, 1) || setenv("RDMAV_DRIVERS", prov, 1))
		return 1;
	return 0;
}

int mrt_fixture_open(struct mrt_dev *d, int cqe)
{
	int ret = mrt_fixture_setup(), i, n;

	if (ret == 77)
		exit(77);
	if (ret)
		return ret;
	memset(d, 0, sizeof(*d));
	d->list = ibv_get_device_list(&n);
	if (!d->list) {
		perror("fixture: ibv_get_device_list");
		return 1;
	}
	for (i = 0; i < n && !d->ctx; i++)
		if (!strcmp(ibv_get_device_name(d->list[i]), MRT_DEV))
			d->ctx = ibv_open_device(d->list[i]);
	if (!d->ctx) {
		fprintf(stderr, "fixture: cannot open " MRT_DEV "\n");
		return 1;
	}
	if (ibv_query_gid(d->ctx, 1, 0, &d->gid0)) {
		fprintf(stderr, "fixture: ibv_query_gid(1, 0) failed\n");
		return 1;
	}
	d->pd = ibv_alloc_pd(d->ctx);
	d->cq = ibv_create_cq(d->ctx, cqe, NULL, NULL, 0);
	if (!d->pd || !d->cq) {
		fprintf(stderr, "fixture: no PD or CQ\n");
		return 1;
	}
	return 0;
}

int mrt_fixture_close(struct mrt_dev *d)
{
	int ret = ibv_destroy_cq(d->cq);

	if (!ret)
		ret = ibv_dealloc_pd(d->pd);
	if (!ret)
		ret = ibv_close_device(d->ctx);
	ibv_free_device_list(d->list);
	return ret;
}

int mrt_conn_init(struct ibv_qp *q)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = MRT_ACC_ALL };

	return ibv_modify_qp(q, &a,
			     IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				     IBV_QP_ACCESS_FLAGS);
}

int mrt_rc_up(struct ibv_qp *q, const union ibv_gid *gid, uint32_t peer,
	      uint32_t rq_psn, uint32_t sq_psn)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = IBV_MTU_1024,
		.dest_qp_num = peer,
		.rq_psn = rq_psn,
		.max_dest_rd_atomic = 4,
		.min_rnr_timer = 12,
	};
	int ret = mrt_conn_init(q);

	if (ret)
		return ret;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *gid;
	a.ah_attr.grh.sgid_index = 0;
	a.ah_attr.grh.hop_limit = 64;
	ret = ibv_modify_qp(q, &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(q, &a,
			     IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				     IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				     IBV_QP_MAX_QP_RD_ATOMIC);
}

int mrt_rc_pair(struct mrt_dev *d, const struct ibv_qp_cap *cap,
		uint64_t send_ops, struct ibv_qp **a, struct ibv_qp **b)
{
	struct ibv_qp_init_attr_ex x = {
		.send_cq = d->cq,
		.recv_cq = d->cq,
		.qp_type = IBV_QPT_RC,
		.cap = *cap,
		.comp_mask =
			IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = d->pd,
		.send_ops_flags = send_ops,
	};

	*a = ibv_create_qp_ex(d->ctx, &x);
	*b = ibv_create_qp_ex(d->ctx, &x);
	if (!*a || !*b)
		return -1;
	return mrt_rc_up(*a, &d->gid0, (*b)->qp_num, 0, 0) ||
			       mrt_rc_up(*b, &d->gid0, (*a)->qp_num, 0, 0)
		       ? -1
		       : 0;
}

int mrt_wait_wc(struct ibv_cq *c, int n, struct ibv_wc *wc)
{
	struct timespec t0, t;
	int got = 0;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (got < n) {
		int r = ibv_poll_cq(c, n - got, wc + got);

		if (r < 0)
			return got;
		got += r;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if (t.tv_sec - t0.tv_sec > 10)
			break;
	}
	return got;
}
