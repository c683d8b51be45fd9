// SPDX-License-Identifier: BSD-2-Clause
/*
 * The provider's object layer on its own: the MR table, the verbs <-> core
 * translations, and the CQ ring with its notifications and overrun event.
 * No device is needed: the CQ tests use a context whose async pipe is
 * real and whose other fields are the ones the CQ code reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

#include "metaroce.h"
#include "mr_test.h"
#include "xlate.h"
#include "mrdp_addr.h"

static uint8_t mem[3][4096];

static void test_mrt_keys(void)
{
	struct metaroce_mrt t;
	struct metaroce_mrt_ent e = { 0 };
	uint32_t k1, k2, k3;
	uint8_t *h;

	MR_CHECK_EQ(metaroce_mrt_init(&t, 0), EINVAL);
	MR_CHECK_EQ(metaroce_mrt_init(&t, 2), 0);
	e.owner = &mem[0];
	e.host = mem[0];
	e.iova = 0x10000;
	e.length = sizeof(mem[0]);
	e.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	e.pd = 7;
	MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &k1), 0);
	e.owner = &mem[1];
	e.host = mem[1];
	e.access = IBV_ACCESS_REMOTE_READ;
	MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &k2), 0);
	MR_CHECK(k1 != 0 && k2 != 0 && k1 != k2);
	e.owner = &mem[2];
	MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &k3), ENOSPC); /* max 2 */
	MR_CHECK_EQ(metaroce_mrt_count(&t), 2);

	/* Resolution: bounds, PD, rights, unknown keys. */
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0x10000 + 100, 8,
					IBV_ACCESS_REMOTE_WRITE, &h),
		    0);
	MR_CHECK(h == mem[0] + 100);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0x10000 + 4088, 8, 0, &h),
		    0);
	MR_CHECK(h == mem[0] + 4088);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0x10000 + 4089, 8, 0, &h),
		    ERANGE);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0xffff, 2, 0, &h), ERANGE);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, UINT64_MAX, 2, 0, &h),
		    ERANGE);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 8, k1, 0x10000, 8, 0, &h), EPERM);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0x10000, 8,
					IBV_ACCESS_REMOTE_READ, &h),
		    EACCES);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k2, 0x10000, 8,
					IBV_ACCESS_REMOTE_WRITE, &h),
		    EACCES);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k2 ^ 0x100, 0x10000, 8, 0, &h),
		    ENOENT);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, 0, 0x10000, 8, 0, &h), ENOENT);
	h = mem[2];
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, 0, 0, 0, 0, &h), 0);
	MR_CHECK(h == NULL); /* zero length needs no key */

	/* Only the owner removes; a reused slot gets a new key, and the
	 * stale key no longer resolves. */
	MR_CHECK_EQ(metaroce_mrt_del(&t, k1, &mem[1]), EINVAL);
	MR_CHECK_EQ(metaroce_mrt_del(&t, k1, &mem[0]), 0);
	MR_CHECK_EQ(metaroce_mrt_del(&t, k1, &mem[0]), EINVAL);
	e.owner = &mem[2];
	e.host = mem[2];
	MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &k3), 0);
	MR_CHECK(k3 != k1 && ((k3 >> 8) & 1) == ((k1 >> 8) & 1));
	MR_CHECK((k3 >> 9) != (k1 >> 9)); /* the tag differs */
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k1, 0x10000, 8, 0, &h), ENOENT);
	MR_CHECK_EQ(metaroce_mrt_lookup(&t, 7, k3, 0x10000, 8, 0, &h), 0);
	MR_CHECK(h == mem[2]);
	metaroce_mrt_fini(&t);
}

static void test_mrt_grow(void)
{
	struct metaroce_mrt t;
	struct metaroce_mrt_ent e = { 0 };
	static uint32_t keys[1000];
	uint8_t *h;
	unsigned i;

	MR_CHECK_EQ(metaroce_mrt_init(&t, 1000), 0);
	e.host = mem[0];
	e.length = 16;
	for (i = 0; i < 1000; i++) {
		e.owner = &keys[i];
		e.iova = (uint64_t)i << 20;
		MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &keys[i]), 0);
	}
	for (i = 0; i < 1000; i++) {
		MR_CHECK_EQ(metaroce_mrt_lookup(&t, 0, keys[i],
						((uint64_t)i << 20) + 15, 1, 0,
						&h),
			    0);
		MR_CHECK(h == mem[0] + 15);
	}
	for (i = 0; i < 1000; i += 2)
		MR_CHECK_EQ(metaroce_mrt_del(&t, keys[i], &keys[i]), 0);
	MR_CHECK_EQ(metaroce_mrt_count(&t), 500);
	metaroce_mrt_fini(&t);
}

/* The bits of a key its slot does not need are random: consecutive
 * registrations do not give consecutive keys, and a slot reused many
 * times never gives a key that matched its previous region. */
static void test_mrt_random_keys(void)
{
	struct metaroce_mrt t;
	struct metaroce_mrt_ent e = { 0 };
	static uint32_t keys[256];
	unsigned i, j, same_low = 0, dup = 0;
	uint32_t k, prev;
	uint8_t *h;

	MR_CHECK_EQ(metaroce_mrt_init(&t, 1u << 16), 0);
	MR_CHECK_EQ(metaroce_mrt_init(&t, (1u << 20) + 1), EINVAL);
	e.host = mem[0];
	e.length = 16;
	for (i = 0; i < 256; i++) {
		e.owner = &keys[i];
		MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &keys[i]), 0);
		MR_CHECK_EQ((keys[i] >> 8) & 0xffff, i); /* slot i */
		same_low += (keys[i] & 0xff) == (i ? keys[i - 1] & 0xff : 0);
		for (j = 0; j < i; j++)
			dup += keys[j] >> 24 == keys[i] >> 24 &&
			       (keys[j] & 0xff) == (keys[i] & 0xff);
	}
	/* 256 draws of 16 random bits: a few coincidences, not many. */
	MR_CHECK(same_low < 16);
	MR_CHECK(dup < 16);
	prev = keys[5];
	for (i = 0; i < 200; i++) {
		MR_CHECK_EQ(metaroce_mrt_del(&t, prev, &keys[5]), 0);
		e.owner = &keys[5];
		MR_CHECK_EQ(metaroce_mrt_add(&t, &e, &k), 0);
		MR_CHECK(k >> 24 != prev >> 24);
		MR_CHECK_EQ(metaroce_mrt_lookup(&t, 0, prev, 0, 1, 0, &h),
			    ENOENT);
		MR_CHECK_EQ(metaroce_mrt_lookup(&t, 0, k, 0, 1, 0, &h), 0);
		MR_CHECK_EQ(metaroce_mrt_lookup(&t, 0, k ^ 1, 0, 1, 0, &h),
			    ENOENT); /* a wrong key byte */
		prev = k;
	}
	metaroce_mrt_fini(&t);
}

/* The GID table of a device with 10.1.2.3/24 and 2001:db8::3/64, and an
 * address book. */
static const struct metaroce_gids *gx(void)
{
	static struct metaroce_gids g;
	static struct mr_devconf c;

	if (!g.n) {
		c.ip = 0x0a010203;
		c.prefix = 24;
		memcpy(c.mac, (const uint8_t[6]){ 2, 0, 10, 1, 2, 3 }, 6);
		c.has_ip6 = 1;
		c.ip6[0] = 0x20;
		c.ip6[1] = 0x01;
		c.ip6[2] = 0x0d;
		c.ip6[3] = 0xb8;
		c.ip6[15] = 3;
		c.prefix6 = 64;
		g.n = mr_gid_table(&c, g.gid);
		g.book = mrdp_addrs_new();
	}
	return &g;
}

static void test_gid_dest(void)
{
	union ibv_gid g = { .raw = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff,
				     192, 0, 2, 7 } };
	uint32_t d = 0;

	MR_CHECK_EQ(metaroce_gid_to_dest(&g, &d), 0);
	MR_CHECK_EQ(d, 0xc0000207);
	g.raw[12] = 224; /* multicast */
	MR_CHECK_EQ(metaroce_gid_to_dest(&g, &d), EINVAL);
	g.raw[12] = 255; /* broadcast */
	MR_CHECK_EQ(metaroce_gid_to_dest(&g, &d), EINVAL);
	memset(g.raw + 12, 0, 4);
	MR_CHECK_EQ(metaroce_gid_to_dest(&g, &d), EINVAL);
	g.raw[0] = 0xfe; /* link-local: no IPv4 address to send to */
	g.raw[1] = 0x80;
	g.raw[12] = 10;
	MR_CHECK_EQ(metaroce_gid_to_dest(&g, &d), EINVAL);
	MR_CHECK_EQ(metaroce_mtu_bytes(IBV_MTU_1024), 1024);
	MR_CHECK_EQ(metaroce_mtu_bytes((enum ibv_mtu)6), 0);
}

/* LIDs: the host part of the device's IPv4 address in its subnet. */
static void test_lid(void)
{
	static const uint8_t want[16] = { 0, 0, 0,    0,    0,	0, 0, 0,
					  0, 0, 0xff, 0xff, 10, 1, 2, 9 };
	struct ibv_ah_attr in, out;
	const uint32_t ip = 0x0a010203; /* 10.1.2.3 */

	MR_CHECK_EQ(metaroce_port_lid(ip, 24), 3);
	MR_CHECK_EQ(metaroce_port_lid(ip, 16), 0x203);
	MR_CHECK_EQ(metaroce_port_lid(ip, 8), 0); /* 0x10203 > 0xbfff */
	MR_CHECK_EQ(metaroce_port_lid(ip, 32), 0);
	MR_CHECK_EQ(metaroce_port_lid(0x0a0102ff, 24), 0); /* broadcast */
	MR_CHECK_EQ(metaroce_port_lid(0x0a010200, 24), 0); /* network */

	memset(&in, 0, sizeof(in));
	in.dlid = 9;
	in.port_num = 1;
	in.sl = 3;
	memset(&out, 0xa5, sizeof(out));
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 24, &out), 0);
	MR_CHECK_EQ(out.is_global, 1);
	MR_CHECK(!memcmp(out.grh.dgid.raw, want, 16));
	MR_CHECK_EQ(out.grh.sgid_index, MR_GID_INDEX_IPV4);
	MR_CHECK_EQ(out.grh.flow_label, 0);
	MR_CHECK_EQ(out.dlid, 9);
	MR_CHECK_EQ(out.sl, 3);
	MR_CHECK_EQ(out.port_num, 1);
	/* Not a host of the subnet: 0, broadcast, beyond the host bits. */
	in.dlid = 0;
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 24, &out), EINVAL);
	in.dlid = 255;
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 24, &out), EINVAL);
	in.dlid = 256;
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 24, &out), EINVAL);
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 16, &out), 0);
	MR_CHECK_EQ(out.grh.dgid.raw[14], 1);
	MR_CHECK_EQ(out.grh.dgid.raw[15], 0);
	in.dlid = 0xc000; /* multicast LID */
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 16, &out), EINVAL);
	/* A global vector is kept as it is. */
	in.is_global = 1;
	in.grh.dgid.raw[15] = 77;
	MR_CHECK_EQ(metaroce_av_from_lid(&in, ip, 24, &out), 0);
	MR_CHECK(!memcmp(&out, &in, sizeof(in)));
}

/* A UD receive reports RoCE v2 over IPv4 in its SL (xlate.h). */
static void test_ud_wc_sl(void)
{
	struct mr_cqe cqe;
	struct ibv_wc wc;

	memset(&cqe, 0, sizeof(cqe));
	cqe.opcode = MR_WC_RECV;
	cqe.byte_len = 40 + 8;
	cqe.wc_flags = MR_WC_F_GRH;
	memset(&wc, 0xa5, sizeof(wc));
	metaroce_cqe_to_wc(&cqe, &wc);
	MR_CHECK_EQ(wc.wc_flags, IBV_WC_GRH);
	MR_CHECK_EQ(wc.sl, 0xa);
	MR_CHECK_EQ(wc.sl & 7, 2); /* what UCX reads as IPv4 */
	/* From an IPv6 peer (an address book id): IPv6, not IPv4. */
	cqe.ud_src = MR_GID_ID6_BASE | 5;
	metaroce_cqe_to_wc(&cqe, &wc);
	MR_CHECK_EQ(wc.sl, 0x9);
	MR_CHECK(wc.sl & 8);	    /* RoCE v2 */
	MR_CHECK((wc.sl & 7) != 2); /* UCX: a 16-byte GID in the GRH */
	cqe.wc_flags = 0;	    /* RC: no GRH, no packet type */
	metaroce_cqe_to_wc(&cqe, &wc);
	MR_CHECK_EQ(wc.sl, 0);
}

/* MR-ADDR-1, MR-ADDR-2: every GID index of the table is a source; the
 * destination must be of its kind; IPv6 destinations get stable ids. */
static void test_check_av_kinds(void)
{
	const struct metaroce_gids *g = gx();
	struct ibv_ah_attr av;
	uint32_t d1 = 0, d2 = 0;
	int i;

	MR_CHECK_EQ(g->n, 3);
	MR_CHECK_EQ(g->gid[0].kind, MR_GID_LINKLOCAL);
	MR_CHECK_EQ(g->gid[0].raw[0], 0xfe);
	MR_CHECK_EQ(g->gid[1].kind, MR_GID_IPV4);
	MR_CHECK_EQ(g->gid[2].kind, MR_GID_GLOBAL6);
	memset(&av, 0, sizeof(av));
	av.is_global = 1;
	av.port_num = 1;
	/* A link-local peer from GID 0. */
	av.grh.dgid.raw[0] = 0xfe;
	av.grh.dgid.raw[1] = 0x80;
	av.grh.dgid.raw[15] = 9;
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d1), 0);
	MR_CHECK(mr_gid_id_is6(d1));
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), 0);
	MR_CHECK_EQ(d1, d2); /* the same peer, the same id */
	for (i = 1; i < 4; i++) {
		av.grh.sgid_index = (uint8_t)i; /* IPv4, global, beyond */
		MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), EINVAL);
	}
	/* A global peer from GID 2 only. */
	av.grh.dgid.raw[0] = 0x20;
	av.grh.dgid.raw[1] = 0x01;
	av.grh.sgid_index = 2;
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), 0);
	MR_CHECK(mr_gid_id_is6(d2) && d2 != d1);
	av.grh.sgid_index = 0;
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), EINVAL);
	/* No IPv6 multicast, ::1 or :: destination. */
	av.grh.sgid_index = 2;
	av.grh.dgid.raw[0] = 0xff;
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), EINVAL);
	memset(av.grh.dgid.raw, 0, 16);
	av.grh.dgid.raw[15] = 1;
	MR_CHECK_EQ(metaroce_check_av(&av, g, &d2), EINVAL);
}

/* The RC path of ibv_rc_pingpong / perftest: INIT, RTR, RTS. */
static void test_qp_attr_rc(void)
{
	struct ibv_qp_attr a;
	struct mr_qp_attr c;
	unsigned cm;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a,
					   IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						   IBV_QP_PORT |
						   IBV_QP_ACCESS_FLAGS,
					   IBV_QPT_RC, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(cm, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS);
	MR_CHECK_EQ(c.state, MR_QPS_INIT);
	MR_CHECK_EQ(c.access, IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = 0x123456;
	a.rq_psn = 0xabcdef;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = MR_GID_INDEX_IPV4;
	a.ah_attr.grh.hop_limit = 1;
	a.ah_attr.grh.dgid.raw[10] = 0xff;
	a.ah_attr.grh.dgid.raw[11] = 0xff;
	a.ah_attr.grh.dgid.raw[12] = 192;
	a.ah_attr.grh.dgid.raw[14] = 2;
	a.ah_attr.grh.dgid.raw[15] = 2;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(
			    &a,
			    IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				    IBV_QP_MAX_DEST_RD_ATOMIC |
				    IBV_QP_MIN_RNR_TIMER,
			    IBV_QPT_RC, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(c.state, MR_QPS_RTR);
	MR_CHECK_EQ(c.path_mtu_bytes, 1024);
	MR_CHECK_EQ(c.dest_qpn, 0x123456);
	MR_CHECK_EQ(c.rq_psn, 0xabcdef);
	MR_CHECK_EQ(c.dest, 0xc0000202);
	MR_CHECK_EQ(c.max_dest_rd_atomic, 1);
	MR_CHECK_EQ(c.min_rnr_timer, 12);
	MR_CHECK_EQ(cm, MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
				MR_QP_DEST_QPN | MR_QP_RQ_PSN |
				MR_QP_MAX_DEST_RD_ATOMIC | MR_QP_MIN_RNR_TIMER);
	/* Path MTU above the device's, a LID-only AV, a bad GID index. */
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_PATH_MTU, IBV_QPT_RC, 512,
					   gx(), &c, &cm),
		    EINVAL);
	a.ah_attr.grh.sgid_index = 3; /* the table has three GIDs */
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_AV, IBV_QPT_RC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
	a.ah_attr.grh.sgid_index = 0; /* link-local source, IPv4 peer */
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_AV, IBV_QPT_RC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
	a.ah_attr.grh.sgid_index = MR_GID_INDEX_IPV4;
	a.ah_attr.is_global = 0;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_AV, IBV_QPT_RC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
	a.rq_psn = 0x1000000;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_RQ_PSN, IBV_QPT_RC, 4096,
					   gx(), &c, &cm),
		    EINVAL);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0x654321;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(
			    &a,
			    IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				    IBV_QP_MAX_QP_RD_ATOMIC,
			    IBV_QPT_RC, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(c.sq_psn, 0x654321);
	MR_CHECK_EQ(c.timeout, 14);
	MR_CHECK_EQ(c.retry_cnt, 7);
	MR_CHECK_EQ(c.rnr_retry, 7);
	MR_CHECK_EQ(c.max_rd_atomic, 1);
	a.retry_cnt = 8;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_RETRY_CNT, IBV_QPT_RC,
					   4096, gx(), &c, &cm),
		    EINVAL);
	a.max_rd_atomic = METAROCE_MAX_QP_RD_ATOM + 1;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_MAX_QP_RD_ATOMIC,
					   IBV_QPT_RC, 4096, gx(), &c, &cm),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_ALT_PATH, IBV_QPT_RC,
					   4096, gx(), &c, &cm),
		    EOPNOTSUPP);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, 1 << 30, IBV_QPT_RC, 4096, gx(),
					   &c, &cm),
		    EINVAL);
	a.port_num = 2;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_PORT, IBV_QPT_RC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
}

/* The UD path of ibv_ud_pingpong: INIT with QKEY, RTR, RTS with SQ_PSN. */
static void test_qp_attr_ud(void)
{
	struct ibv_qp_attr a;
	struct mr_qp_attr c;
	unsigned cm;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a,
					   IBV_QP_STATE | IBV_QP_PKEY_INDEX |
						   IBV_QP_PORT | IBV_QP_QKEY,
					   IBV_QPT_UD, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(cm, MR_QP_STATE | MR_QP_QKEY);
	MR_CHECK_EQ(c.qkey, 0x11111111);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 5;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_STATE | IBV_QP_SQ_PSN,
					   IBV_QPT_UD, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(c.sq_psn, 5);
	/* Connection attributes are not UD attributes. */
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_DEST_QPN, IBV_QPT_UD,
					   4096, gx(), &c, &cm),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_ACCESS_FLAGS, IBV_QPT_UD,
					   4096, gx(), &c, &cm),
		    EINVAL);
	/* MR-UC-9: UC takes connection attributes, not the qkey nor RC's
	 * reliability and READ/atomic ones; raw packet QPs nothing. */
	a.dest_qp_num = 7;
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_STATE | IBV_QP_DEST_QPN,
					   IBV_QPT_UC, 4096, gx(), &c, &cm),
		    0);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_QKEY, IBV_QPT_UC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_TIMEOUT, IBV_QPT_UC, 4096,
					   gx(), &c, &cm),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_MAX_DEST_RD_ATOMIC,
					   IBV_QPT_UC, 4096, gx(), &c, &cm),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_qp_attr(&a, IBV_QP_STATE, IBV_QPT_RAW_PACKET,
					   4096, gx(), &c, &cm),
		    EINVAL);
}

static void test_send_wr(void)
{
	struct ibv_sge sg[3] = { { 0x1000, 10, 0x101 },
				 { 0x2000, 20, 0x201 },
				 { 0x3000, 30, 0x301 } };
	struct ibv_send_wr w;
	struct mr_send_wr o;
	struct mr_sge s[2];

	memset(&w, 0, sizeof(w));
	w.wr_id = 42;
	w.sg_list = sg;
	w.num_sge = 2;
	w.opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
	w.send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
	w.imm_data = htobe32(0xdeadbeef);
	w.wr.rdma.remote_addr = 0xfeed0000;
	w.wr.rdma.rkey = 0x777;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o), 0);
	MR_CHECK_EQ(o.wr_id, 42);
	MR_CHECK_EQ(o.opcode, MR_WR_RDMA_WRITE_WITH_IMM);
	MR_CHECK_EQ(o.flags, MR_SEND_SIGNALED | MR_SEND_FENCE);
	MR_CHECK_EQ(o.imm, htobe32(0xdeadbeef));
	MR_CHECK_EQ(o.remote_addr, 0xfeed0000);
	MR_CHECK_EQ(o.rkey, 0x777);
	MR_CHECK_EQ(o.num_sge, 2);
	MR_CHECK(o.sg_list == s);
	MR_CHECK_EQ(s[1].addr, 0x2000);
	MR_CHECK_EQ(s[1].length, 20);
	MR_CHECK_EQ(s[1].lkey, 0x201);
	w.num_sge = 3; /* over max_sge */
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o),
		    EINVAL);
	w.num_sge = 1;
	w.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
	w.wr.atomic.remote_addr = 0x8000;
	w.wr.atomic.rkey = 9;
	w.wr.atomic.compare_add = 1;
	w.wr.atomic.swap = 2;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o), 0);
	MR_CHECK_EQ(o.remote_addr, 0x8000);
	MR_CHECK_EQ(o.rkey, 9);
	MR_CHECK_EQ(o.compare_add, 1);
	MR_CHECK_EQ(o.swap, 2);
	MR_CHECK_EQ(o.imm, 0);
	/* UD: sends only, with the destination. */
	MR_CHECK_EQ(
		metaroce_xlate_send_wr(&w, IBV_QPT_UD, 2, 0x0a000001, s, &o),
		EINVAL);
	w.opcode = IBV_WR_SEND;
	w.wr.ud.remote_qpn = 0x55;
	w.wr.ud.remote_qkey = 0x11111111;
	MR_CHECK_EQ(
		metaroce_xlate_send_wr(&w, IBV_QPT_UD, 2, 0x0a000001, s, &o),
		0);
	MR_CHECK_EQ(o.ud_dest, 0x0a000001);
	MR_CHECK_EQ(o.ud_remote_qpn, 0x55);
	MR_CHECK_EQ(o.ud_remote_qkey, 0x11111111);
	/* MR-MW-8: no window WR on UD; atomic write is not offered */
	w.opcode = IBV_WR_LOCAL_INV;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_UD, 2, 0, s, &o),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o), 0);
	MR_CHECK_EQ(o.opcode, MR_WR_LOCAL_INV);
	MR_CHECK_EQ(o.num_sge, 0);
	w.opcode = IBV_WR_SEND_WITH_INV;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_UC, 2, 0, s, &o),
		    EINVAL);
	/* MR-AW-1: ATOMIC_WRITE on RC, its target in wr.rdma */
	w.opcode = IBV_WR_ATOMIC_WRITE;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_UC, 2, 0, s, &o),
		    EINVAL);
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_UD, 2, 0, s, &o),
		    EINVAL);
	w.wr.rdma.remote_addr = 0x7000;
	w.wr.rdma.rkey = 0x4242;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o), 0);
	MR_CHECK_EQ(o.opcode, MR_WR_ATOMIC_WRITE);
	MR_CHECK_EQ(o.remote_addr, 0x7000);
	MR_CHECK_EQ(o.rkey, 0x4242);
	MR_CHECK(o.num_sge >= 1);
	w.opcode = IBV_WR_SEND;
	w.send_flags = IBV_SEND_IP_CSUM;
	MR_CHECK_EQ(metaroce_xlate_send_wr(&w, IBV_QPT_RC, 2, 0, s, &o),
		    EINVAL);
}

static void test_recv_wr_and_wc(void)
{
	struct ibv_sge sg = { 0x1234, 40, 0x99 };
	struct ibv_recv_wr w = { .wr_id = 7, .sg_list = &sg, .num_sge = 1 };
	struct mr_recv_wr o;
	struct mr_sge s[1];
	struct mr_cqe cqe = { 0 };
	struct ibv_wc wc;

	MR_CHECK_EQ(metaroce_xlate_recv_wr(&w, 1, s, &o), 0);
	MR_CHECK_EQ(o.wr_id, 7);
	MR_CHECK_EQ(o.num_sge, 1);
	MR_CHECK_EQ(s[0].addr, 0x1234);
	w.num_sge = 0; /* a 0-SGE receive (NCCL's WRITE_WITH_IMM) is fine */
	MR_CHECK_EQ(metaroce_xlate_recv_wr(&w, 1, s, &o), 0);
	MR_CHECK_EQ(o.num_sge, 0);
	w.num_sge = 2;
	MR_CHECK_EQ(metaroce_xlate_recv_wr(&w, 1, s, &o), EINVAL);
	w.num_sge = -1;
	MR_CHECK_EQ(metaroce_xlate_recv_wr(&w, 1, s, &o), EINVAL);

	cqe.wr_id = 99;
	cqe.status = MR_WC_SUCCESS;
	cqe.opcode = MR_WC_RECV_RDMA_WITH_IMM;
	cqe.byte_len = 0;
	cqe.imm = htobe32(5);
	cqe.qp_num = 0x12;
	cqe.src_qp = 0x34;
	cqe.wc_flags = MR_WC_F_WITH_IMM;
	memset(&wc, 0xa5, sizeof(wc));
	metaroce_cqe_to_wc(&cqe, &wc);
	MR_CHECK_EQ(wc.wr_id, 99);
	MR_CHECK_EQ(wc.status, IBV_WC_SUCCESS);
	MR_CHECK_EQ(wc.opcode, IBV_WC_RECV_RDMA_WITH_IMM);
	MR_CHECK_EQ(wc.imm_data, htobe32(5));
	MR_CHECK_EQ(wc.qp_num, 0x12);
	MR_CHECK_EQ(wc.src_qp, 0x34);
	MR_CHECK_EQ(wc.wc_flags, IBV_WC_WITH_IMM);
	MR_CHECK_EQ(wc.vendor_err, 0);
	MR_CHECK_EQ(wc.sl, 0);
	cqe.wc_flags = 0;
	cqe.status = MR_WC_REM_ACCESS_ERR;
	metaroce_cqe_to_wc(&cqe, &wc);
	MR_CHECK_EQ(wc.status, IBV_WC_REM_ACCESS_ERR);
	MR_CHECK_EQ(wc.imm_data, 0); /* only with WITH_IMM */
}

/* A context as the CQ code sees it: the async pipe and one vector. */
static struct metaroce_context *cq_ctx(int afd[2])
{
	static struct metaroce_context mctx;

	if (pipe2(afd, O_CLOEXEC))
		return NULL;
	memset(&mctx, 0, sizeof(mctx));
	mctx.vctx.context.async_fd = afd[0];
	mctx.async_wfd = afd[1];
	mctx.vctx.context.num_comp_vectors = 1;
	return &mctx;
}

static void test_cq_ring(void)
{
	struct metaroce_context *mctx;
	struct ib_uverbs_async_event_desc ev;
	struct ibv_wc in = { 0 }, out[8];
	struct ibv_cq *cq;
	int afd[2], i;

	mctx = cq_ctx(afd);
	MR_CHECK(mctx);
	MR_CHECK(!metaroce_create_cq(&mctx->vctx.context, 0, NULL, 0));
	MR_CHECK_EQ(errno, EINVAL);
	MR_CHECK(!metaroce_create_cq(&mctx->vctx.context, 4, NULL, 1));
	MR_CHECK_EQ(errno, EINVAL);
	MR_CHECK(!metaroce_create_cq(&mctx->vctx.context, METAROCE_MAX_CQE + 1,
				     NULL, 0));
	MR_CHECK_EQ(errno, EINVAL);
	cq = metaroce_create_cq(&mctx->vctx.context, 3, NULL, 0);
	MR_CHECK(cq);
	MR_CHECK_EQ(cq->cqe, 4);
	MR_CHECK_EQ(metaroce_poll_cq(cq, 8, out), 0);
	/* Without a channel an armed CQ wakes nobody: its polls are the
	 * application's continuous polling (cq.c). */
	MR_CHECK_EQ(metaroce_req_notify_cq(cq, 0), 0);
	MR_CHECK(!metaroce_cq_armed(to_mcq(cq)));
	/* In order, wrapping around the ring twice. */
	for (i = 0; i < 10; i++) {
		in.wr_id = 100 + (uint64_t)i;
		in.byte_len = (uint32_t)i;
		MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
		if (i % 3 == 2) {
			int n = metaroce_poll_cq(cq, 3, out), j;

			MR_CHECK_EQ(n, 3);
			for (j = 0; j < n; j++) {
				MR_CHECK_EQ(out[j].wr_id, 100 + i - 2 + j);
				MR_CHECK_EQ(out[j].byte_len, i - 2 + j);
			}
		}
	}
	MR_CHECK_EQ(metaroce_cq_count(to_mcq(cq)), 1);
	MR_CHECK_EQ(metaroce_poll_cq(cq, 8, out), 1);
	MR_CHECK_EQ(out[0].wr_id, 109);
	MR_CHECK_EQ(metaroce_poll_cq(cq, -1, out), -EINVAL);

	/* Overrun: the 5th completion is lost and CQ_ERR is raised once. */
	for (i = 0; i < 4; i++)
		MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), ENOSPC);
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), ENOSPC);
	MR_CHECK_EQ(read(afd[0], &ev, sizeof(ev)), (ssize_t)sizeof(ev));
	MR_CHECK_EQ(ev.event_type, IBV_EVENT_CQ_ERR);
	MR_CHECK_EQ(ev.element, (uintptr_t)cq);
	MR_CHECK(fcntl(afd[0], F_SETFL, O_NONBLOCK) == 0);
	MR_CHECK_EQ(read(afd[0], &ev, sizeof(ev)), -1); /* only once */
	MR_CHECK_EQ(metaroce_destroy_cq(cq), 0);
	close(afd[0]);
	close(afd[1]);
}

static void test_cq_notify(void)
{
	struct metaroce_context *mctx;
	struct ibv_comp_channel ch = { 0 };
	struct ib_uverbs_comp_event_desc d;
	struct ibv_wc in = { 0 }, out[4];
	struct ibv_cq *cq;
	int afd[2], cfd[2];

	mctx = cq_ctx(afd);
	MR_CHECK(mctx);
	MR_CHECK(pipe2(cfd, O_CLOEXEC | O_NONBLOCK) == 0);
	/* A channel whose fd is no pipe is refused. */
	ch.fd = afd[1] + 1000;
	MR_CHECK(!metaroce_create_cq(&mctx->vctx.context, 4, &ch, 0));
	ch.fd = cfd[0];
	cq = metaroce_create_cq(&mctx->vctx.context, 4, &ch, 0);
	MR_CHECK(cq);
	/* Not armed: no event. */
	MR_CHECK(!metaroce_cq_armed(to_mcq(cq)));
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), -1);
	/* Armed: one event for the next completion, then disarmed (a poll
	 * of an armed CQ is the application's check before it waits: the
	 * progress thread keeps to its sockets, cq.c). */
	MR_CHECK_EQ(metaroce_req_notify_cq(cq, 0), 0);
	MR_CHECK(metaroce_cq_armed(to_mcq(cq)));
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK(!metaroce_cq_armed(to_mcq(cq)));
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), (ssize_t)sizeof(d));
	MR_CHECK_EQ(d.cq_handle, (uintptr_t)cq);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), -1);
	MR_CHECK_EQ(metaroce_poll_cq(cq, 4, out), 3);
	/* Solicited only: an unsolicited success does not wake, a
	 * solicited one does, and so does an error. */
	MR_CHECK_EQ(metaroce_req_notify_cq(cq, 1), 0);
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), -1);
	MR_CHECK(metaroce_cq_armed(to_mcq(cq)));
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, true), 0);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), (ssize_t)sizeof(d));
	MR_CHECK(!metaroce_cq_armed(to_mcq(cq)));
	MR_CHECK_EQ(metaroce_req_notify_cq(cq, 1), 0);
	in.status = IBV_WC_WR_FLUSH_ERR;
	MR_CHECK_EQ(metaroce_cq_push(to_mcq(cq), &in, false), 0);
	MR_CHECK_EQ(read(cfd[0], &d, sizeof(d)), (ssize_t)sizeof(d));
	/* In use by a QP: cannot be destroyed. */
	to_mcq(cq)->users = 1;
	MR_CHECK_EQ(metaroce_destroy_cq(cq), EBUSY);
	to_mcq(cq)->users = 0;
	MR_CHECK_EQ(metaroce_destroy_cq(cq), 0);
	close(cfd[0]);
	close(cfd[1]);
	close(afd[0]);
	close(afd[1]);
}

MR_TEST_MAIN(MR_TEST(test_mrt_keys), MR_TEST(test_mrt_grow),
	     MR_TEST(test_mrt_random_keys), MR_TEST(test_gid_dest),
	     MR_TEST(test_lid), MR_TEST(test_ud_wc_sl),
	     MR_TEST(test_check_av_kinds), MR_TEST(test_qp_attr_rc),
	     MR_TEST(test_qp_attr_ud), MR_TEST(test_send_wr),
	     MR_TEST(test_recv_wr_and_wc), MR_TEST(test_cq_ring),
	     MR_TEST(test_cq_notify))
