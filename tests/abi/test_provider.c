// SPDX-License-Identifier: BSD-2-Clause
/*
 * The provider opened through the real, unmodified libibverbs: listing,
 * open without a kernel, the async pipe, device/port/GID queries, PDs and
 * MRs with good and bad arguments.
 *
 * The device is made by metaroce-ctl in a private network namespace
 * (provider_fixture.h), next to two devices that must not be listed.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mr_test.h"
#include "provider_fixture.h"

static struct ibv_device **list;
static struct ibv_context *ctx;

static void setup(void)
{
	int ret = mrt_fixture_setup();

	if (ret == 77)
		exit(77);
	MR_CHECK_EQ(ret, 0);
}

static void test_list(void)
{
	int n, i, ours = -1;

	list = ibv_get_device_list(&n);
	MR_CHECK(list);
	for (i = 0; i < n; i++) {
		const char *name = ibv_get_device_name(list[i]);

		/* Only ours; the malformed and the record-less device are
		 * nobody's (no other provider claims them either). */
		MR_CHECK(strcmp(name, "mrbad0") != 0);
		MR_CHECK(strcmp(name, "mrnone0") != 0);
		if (!strcmp(name, MRT_DEV))
			ours = i;
	}
	MR_CHECK(ours >= 0);
	MR_CHECK_EQ(ibv_get_device_guid(list[ours]), htobe64(MRT_GUID_BE));
	MR_CHECK_EQ(list[ours]->node_type, IBV_NODE_CA);
	MR_CHECK_EQ(list[ours]->transport_type, IBV_TRANSPORT_IB);
	ctx = ibv_open_device(list[ours]);
	MR_CHECK(ctx);
}

static void test_async_fd(void)
{
	struct stat st;
	int fl;

	MR_CHECK(ctx);
	MR_CHECK(fstat(ctx->async_fd, &st) == 0);
	MR_CHECK(S_ISFIFO(st.st_mode));
	fl = fcntl(ctx->async_fd, F_GETFL);
	MR_CHECK(fl >= 0);
	/* Blocking, as a kernel's: ibv_get_async_event() waits in read(). */
	MR_CHECK_EQ(fl & O_NONBLOCK, 0);
	MR_CHECK_EQ(fl & O_ACCMODE, O_RDONLY);
	MR_CHECK(fcntl(ctx->async_fd, F_GETFD) & FD_CLOEXEC);
	/* Nothing is pending on a fresh device. */
	MR_CHECK(fcntl(ctx->async_fd, F_SETFL, fl | O_NONBLOCK) == 0);
	{
		char b[16];

		MR_CHECK(read(ctx->async_fd, b, sizeof(b)) == -1 &&
			 errno == EAGAIN);
	}
	MR_CHECK(fcntl(ctx->async_fd, F_SETFL, fl) == 0);
	/* The command fd is the node we made, still open. */
	MR_CHECK(fstat(ctx->cmd_fd, &st) == 0);
	MR_CHECK(S_ISCHR(st.st_mode) && st.st_rdev == makedev(1, 7));
}

static void check_base_attr(const struct ibv_device_attr *a)
{
	MR_CHECK_EQ(a->node_guid, htobe64(MRT_GUID_BE));
	MR_CHECK_EQ(a->sys_image_guid, htobe64(MRT_GUID_BE));
	MR_CHECK_EQ(a->vendor_id, 0x4d52);
	MR_CHECK_EQ(a->vendor_part_id, 1);
	MR_CHECK_EQ(a->phys_port_cnt, 1);
	MR_CHECK_EQ(a->max_pkeys, 1);
	MR_CHECK_EQ(a->max_pd, 65536);
	MR_CHECK_EQ(a->max_mr, 65536);
	MR_CHECK(strcmp(a->fw_ver, "") != 0);
	MR_CHECK_EQ(a->max_cq, 65536);
	/* Without the engine (-Ddpdk=disabled) nothing that needs it is
	 * promised; with it, QPs, SRQs and atomics are. */
	if (a->max_qp == 0) {
		MR_CHECK_EQ(a->atomic_cap, IBV_ATOMIC_NONE);
		MR_CHECK_EQ(a->max_srq, 0);
		MR_CHECK_EQ(a->max_sge, 0);
	} else {
		MR_CHECK_EQ(a->atomic_cap, IBV_ATOMIC_HCA);
		MR_CHECK(a->max_srq > 0 && a->max_sge > 0 && a->max_qp_wr > 0);
		MR_CHECK(a->max_qp_rd_atom > 0);
	}
}

static void test_query_device(void)
{
	union {
		struct ibv_device_attr_ex ex;
		uint8_t b[sizeof(struct ibv_device_attr_ex) + 64];
	} u;
	struct verbs_context *vctx;
	size_t i;

	MR_CHECK(ctx);
	/* 232 bytes (ibv_query_device, as perftest): nothing written past. */
	memset(&u, 0xa5, sizeof(u));
	MR_CHECK_EQ(ibv_query_device(ctx, &u.ex.orig_attr), 0);
	check_base_attr(&u.ex.orig_attr);
	if (mr_test_failures)
		return;
	for (i = sizeof(struct ibv_device_attr); i < sizeof(u.b); i++)
		MR_CHECK_EQ(u.b[i], 0xa5);

	/* 400 bytes (ibv_devinfo): the extended part is defined. */
	memset(&u, 0xa5, sizeof(u));
	MR_CHECK_EQ(ibv_query_device_ex(ctx, NULL, &u.ex), 0);
	check_base_attr(&u.ex.orig_attr);
	if (mr_test_failures)
		return;
	MR_CHECK_EQ(u.ex.comp_mask, 0);
	MR_CHECK_EQ(u.ex.phys_port_cnt_ex, 1);
	/* the low half as device_cap_flags; ATOMIC WRITE (bit 40) with
	 * the engine (test_provider_aw.c) */
	MR_CHECK_EQ(u.ex.device_cap_flags_ex & ~(1ull << 40),
		    u.ex.orig_attr.device_cap_flags);
	MR_CHECK_EQ(u.ex.odp_caps.general_caps, 0);
	for (i = sizeof(struct ibv_device_attr_ex); i < sizeof(u.b); i++)
		MR_CHECK_EQ(u.b[i], 0xa5);

	/* Through the op itself: smaller than the base struct, and unknown
	 * input bits, are refused; a larger caller struct is zero-filled. */
	vctx = verbs_get_ctx_op(ctx, query_device_ex);
	MR_CHECK(vctx);
	MR_CHECK_EQ(vctx->query_device_ex(ctx, NULL, &u.ex,
					  sizeof(struct ibv_device_attr) - 1),
		    EINVAL);
	{
		struct ibv_query_device_ex_input in = { .comp_mask = 1 };

		MR_CHECK_EQ(
			vctx->query_device_ex(ctx, &in, &u.ex, sizeof(u.ex)),
			EINVAL);
	}
	memset(&u, 0xa5, sizeof(u));
	MR_CHECK_EQ(vctx->query_device_ex(ctx, NULL, &u.ex, sizeof(u.b)), 0);
	check_base_attr(&u.ex.orig_attr);
	for (i = sizeof(struct ibv_device_attr_ex); i < sizeof(u.b); i++)
		MR_CHECK_EQ(u.b[i], 0);
}

static void test_query_port(void)
{
	struct ibv_port_attr pa;

	MR_CHECK(ctx);
	memset(&pa, 0xa5, sizeof(pa));
	MR_CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	MR_CHECK_EQ(pa.state, IBV_PORT_ACTIVE);
	MR_CHECK_EQ(pa.link_layer, IBV_LINK_LAYER_ETHERNET);
	MR_CHECK_EQ(pa.max_mtu, IBV_MTU_4096);
	MR_CHECK_EQ(pa.active_mtu, IBV_MTU_1024); /* MRT_MTU */
	/* Only GIDs the datapath serves: link-local and IPv4 (MR-ADDR-1). */
	MR_CHECK_EQ(pa.gid_tbl_len, 2);
	MR_CHECK_EQ(pa.pkey_tbl_len, 1);
	MR_CHECK_EQ(pa.phys_state, 5);
	MR_CHECK(pa.port_cap_flags & IBV_PORT_IP_BASED_GIDS);
	MR_CHECK(pa.active_width != 0 && pa.active_speed != 0);
	/* The host part of MRT_IP in its /24 (providers/metaroce/xlate.h). */
	MR_CHECK_EQ(pa.lid, 1);
	MR_CHECK_EQ(ibv_query_port(ctx, 2, &pa), EINVAL);
	MR_CHECK_EQ(ibv_query_port(ctx, 0, &pa), EINVAL);
}

/* MR-ADDR-1: 0 link-local (from the MAC), 1 IPv4-mapped, all RoCE v2;
 * nothing beyond the table. */
static void test_gids(void)
{
	static const uint8_t v4[16] = { 0, 0, 0,    0,	  0,   0, 0, 0,
					0, 0, 0xff, 0xff, 192, 0, 2, 1 };
	union ibv_gid gid;
	struct ibv_gid_entry ent;
	struct ibv_port_attr pa;
	uint16_t pkey;

	MR_CHECK(ctx);
	MR_CHECK_EQ(ibv_query_port(ctx, 1, &pa), 0);
	MR_CHECK_EQ(pa.gid_tbl_len, 2);
	MR_CHECK_EQ(ibv_query_gid(ctx, 1, 0, &gid), 0);
	MR_CHECK_EQ(gid.raw[0], 0xfe);
	MR_CHECK_EQ(gid.raw[1], 0x80);
	MR_CHECK_EQ(gid.raw[11], 0xff); /* EUI-64: ...ff:fe... */
	MR_CHECK_EQ(gid.raw[12], 0xfe);
	MR_CHECK_EQ(ibv_query_gid(ctx, 1, 1, &gid), 0);
	MR_CHECK_MEM(gid.raw, v4, 16);
	MR_CHECK_EQ(ibv_query_gid_ex(ctx, 1, 1, &ent, 0), 0);
	MR_CHECK_EQ(ent.gid_type, IBV_GID_TYPE_ROCE_V2);
	MR_CHECK_MEM(ent.gid.raw, v4, 16);
	MR_CHECK_EQ(ent.gid_index, 1);
	MR_CHECK_EQ(ibv_query_gid_ex(ctx, 1, 0, &ent, 0), 0);
	MR_CHECK_EQ(ent.gid_type, IBV_GID_TYPE_ROCE_V2);
	/* gid_attrs/ndevs, as the kernel writes it: libibverbs turns the
	 * port's netdev (the fixture's veth) into the entry's ifindex. */
	MR_CHECK(if_nametoindex("mrtv0") != 0);
	MR_CHECK_EQ(ent.ndev_ifindex, if_nametoindex("mrtv0"));
	{
		struct ibv_gid_entry t[4];

		MR_CHECK_EQ(ibv_query_gid_table(ctx, t, 4, 0), 2);
		MR_CHECK_EQ(t[0].ndev_ifindex, if_nametoindex("mrtv0"));
		MR_CHECK_EQ(t[1].ndev_ifindex, if_nametoindex("mrtv0"));
		MR_CHECK_EQ(t[1].gid_type, IBV_GID_TYPE_ROCE_V2);
		MR_CHECK_MEM(t[1].gid.raw, v4, 16);
	}
	/* Beyond the table: no GID (no global IPv6 address configured). */
	MR_CHECK(ibv_query_gid(ctx, 1, 2, &gid) != 0);
	MR_CHECK(ibv_query_gid_ex(ctx, 1, 2, &ent, 0) != 0);
	MR_CHECK_EQ(ibv_query_pkey(ctx, 1, 0, &pkey), 0);
	MR_CHECK_EQ(pkey, htobe16(0xffff));
}

static void test_pd_mr(void)
{
	const size_t len = 3 * 4096 + 100;
	uint8_t *buf, *hole;
	struct ibv_pd *pd, *pd2;
	struct ibv_mr *mr, *mr2;

	MR_CHECK(ctx);
	buf = malloc(len);
	MR_CHECK(buf);
	pd = ibv_alloc_pd(ctx);
	pd2 = ibv_alloc_pd(ctx);
	MR_CHECK(pd && pd2 && pd != pd2);
	MR_CHECK(pd->context == ctx);

	mr = ibv_reg_mr(pd, buf, len,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ |
				IBV_ACCESS_RELAXED_ORDERING);
	MR_CHECK(mr);
	MR_CHECK(mr->lkey != 0 && mr->rkey == mr->lkey);
	MR_CHECK(mr->addr == buf && mr->length == len && mr->pd == pd);
	mr2 = ibv_reg_mr_iova2(pd2, buf + 8, 64, 0x1000,
			       IBV_ACCESS_LOCAL_WRITE);
	MR_CHECK(mr2);
	MR_CHECK(mr2->lkey != mr->lkey);

	/* Bad arguments: a clear errno, nothing registered. */
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, buf, 0, IBV_ACCESS_LOCAL_WRITE));
	MR_CHECK_EQ(errno, EINVAL);
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_WRITE));
	MR_CHECK_EQ(errno, EINVAL);
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_REMOTE_ATOMIC));
	MR_CHECK_EQ(errno, EINVAL);
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_ZERO_BASED));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, buf, len, IBV_ACCESS_ON_DEMAND));
	MR_CHECK_EQ(errno, EOPNOTSUPP);
	hole = mmap(NULL, 3 * 4096, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	MR_CHECK(hole != MAP_FAILED);
	MR_CHECK(munmap(hole + 4096, 4096) == 0);
	errno = 0;
	MR_CHECK(!ibv_reg_mr(pd, hole, 3 * 4096, IBV_ACCESS_LOCAL_WRITE));
	MR_CHECK_EQ(errno, EFAULT);
	munmap(hole, 4096);
	munmap(hole + 2 * 4096, 4096);
	errno = 0;
	MR_CHECK(!ibv_reg_dmabuf_mr(pd, 0, 4096, 0, 0, IBV_ACCESS_LOCAL_WRITE));
	MR_CHECK_EQ(errno, EOPNOTSUPP);

	/* A PD in use cannot go; after dereg it can. */
	MR_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	MR_CHECK_EQ(ibv_dereg_mr(mr), 0);
	MR_CHECK_EQ(ibv_dealloc_pd(pd), 0);
	MR_CHECK_EQ(ibv_dereg_mr(mr2), 0);
	MR_CHECK_EQ(ibv_dealloc_pd(pd2), 0);
	free(buf);
}

static void test_cq_ah(void)
{
	struct ibv_ah_attr aa;
	struct ibv_wc wc[4];
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_ah *ah;

	MR_CHECK(ctx);
	errno = 0;
	MR_CHECK(!ibv_create_cq(ctx, 0, NULL, NULL, 0));
	MR_CHECK_EQ(errno, EINVAL);
	errno = 0;
	MR_CHECK(!ibv_create_cq(ctx, 16, NULL, NULL, 1)); /* one vector */
	MR_CHECK_EQ(errno, EINVAL);
	cq = ibv_create_cq(ctx, 100, (void *)0x1234, NULL, 0);
	MR_CHECK(cq);
	MR_CHECK(cq->cqe >= 100);
	MR_CHECK(cq->context == ctx && cq->cq_context == (void *)0x1234);
	MR_CHECK_EQ(ibv_poll_cq(cq, 4, wc), 0);
	MR_CHECK_EQ(ibv_req_notify_cq(cq, 0), 0);
	MR_CHECK_EQ(ibv_destroy_cq(cq), 0);

	pd = ibv_alloc_pd(ctx);
	MR_CHECK(pd);
	memset(&aa, 0, sizeof(aa));
	aa.is_global = 1;
	aa.port_num = 1;
	aa.grh.sgid_index = 0; /* link-local: no source for an IPv4 peer */
	aa.grh.hop_limit = 64;
	aa.grh.dgid.raw[10] = 0xff;
	aa.grh.dgid.raw[11] = 0xff;
	aa.grh.dgid.raw[12] = 192;
	aa.grh.dgid.raw[14] = 2;
	aa.grh.dgid.raw[15] = 9;
	errno = 0;
	MR_CHECK(!ibv_create_ah(pd, &aa)); /* MR-ADDR-2 */
	MR_CHECK_EQ(errno, EINVAL);
	aa.grh.sgid_index = 2; /* beyond the table */
	errno = 0;
	MR_CHECK(!ibv_create_ah(pd, &aa));
	MR_CHECK_EQ(errno, EINVAL);
	aa.grh.sgid_index = 1; /* the IPv4-mapped GID */
	ah = ibv_create_ah(pd, &aa);
	MR_CHECK(ah);
	MR_CHECK(ah->pd == pd && ah->context == ctx);
	MR_CHECK_EQ(ibv_dealloc_pd(pd), EBUSY);
	/* RoCE needs a GRH; LIDs mean nothing here. */
	aa.is_global = 0;
	errno = 0;
	MR_CHECK(!ibv_create_ah(pd, &aa));
	MR_CHECK_EQ(errno, EINVAL);
	aa.is_global = 1;
	aa.grh.dgid.raw[0] = 0xfe; /* link-local GID: no IPv4 route */
	aa.grh.dgid.raw[1] = 0x80;
	aa.grh.dgid.raw[10] = 0;
	aa.grh.dgid.raw[11] = 0;
	errno = 0;
	MR_CHECK(!ibv_create_ah(pd, &aa));
	MR_CHECK_EQ(errno, EINVAL);
	MR_CHECK_EQ(ibv_destroy_ah(ah), 0);
	MR_CHECK_EQ(ibv_dealloc_pd(pd), 0);
}

static void test_no_comp_channel(void)
{
	/* Without a preload shim libibverbs asks the kernel for a channel:
	 * our node (/dev/full's numbers) makes that fail cleanly. */
	errno = 0;
	MR_CHECK(!ibv_create_comp_channel(ctx));
	MR_CHECK(errno != 0);
}

static void test_close(void)
{
	MR_CHECK(ctx);
	MR_CHECK_EQ(ibv_close_device(ctx), 0);
	ctx = NULL;
	ibv_free_device_list(list);
	list = NULL;
}

MR_TEST_MAIN(MR_TEST(setup), MR_TEST(test_list), MR_TEST(test_async_fd),
	     MR_TEST(test_query_device), MR_TEST(test_query_port),
	     MR_TEST(test_gids), MR_TEST(test_pd_mr), MR_TEST(test_cq_ah),
	     MR_TEST(test_no_comp_channel), MR_TEST(test_close))
