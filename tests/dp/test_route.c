/* SPDX-License-Identifier: BSD-2-Clause */
/* Per-plane route tables: next-hop choice (MR-ROUTE-3, MR-ROUTE-4). */
#include <errno.h>

#include "mr_test.h"
#include "mrdp_route.h"

#define IP(a, b, c, d) ((uint32_t)(a) << 24 | (b) << 16 | (c) << 8 | (d))

static struct mrdp_route_table t;

/* MR-ROUTE-3: longest prefix first; the gateway, or the peer on-link. */
static void test_longest_prefix(void)
{
	uint32_t nh = 0;

	mrdp_route_clear(&t);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 0, 2), &nh),
		    -ENETUNREACH);
	MR_CHECK_EQ(mrdp_route_add(&t, IP(10, 101, 1, 0), 24, 0, 0), 0);
	MR_CHECK_EQ(mrdp_route_add(&t, 0, 0, IP(10, 101, 1, 253), 100), 0);
	MR_CHECK_EQ(mrdp_route_add(&t, IP(10, 200, 0, 77), 24,
				   IP(10, 101, 1, 254), 0),
		    0);
	/* host bits of dst are ignored */
	MR_CHECK_EQ(t.r[0].dst, IP(10, 101, 1, 0));
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 0, 2), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 101, 1, 254));
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 101, 1, 9), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 101, 1, 9)); /* on-link: the peer itself */
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(192, 0, 2, 1), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 101, 1, 253)); /* the default route */
	/* a /32 beats the /24 */
	MR_CHECK_EQ(mrdp_route_add(&t, IP(10, 200, 0, 2), 32,
				   IP(10, 101, 1, 250), 0),
		    0);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 0, 2), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 101, 1, 250));
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 0, 3), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 101, 1, 254));
	MR_CHECK_EQ(mrdp_route_add(&t, 0, 33, 0, 0), -EINVAL);
}

/* Equal prefixes: the lowest metric wins, whatever the order added. */
static void test_metric(void)
{
	uint32_t nh = 0;

	mrdp_route_clear(&t);
	MR_CHECK_EQ(
		mrdp_route_add(&t, IP(10, 200, 0, 0), 16, IP(1, 1, 1, 2), 200),
		0);
	MR_CHECK_EQ(
		mrdp_route_add(&t, IP(10, 200, 0, 0), 16, IP(1, 1, 1, 1), 100),
		0);
	MR_CHECK_EQ(
		mrdp_route_add(&t, IP(10, 200, 0, 0), 16, IP(1, 1, 1, 3), 300),
		0);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 9, 9), &nh), 0);
	MR_CHECK_EQ(nh, IP(1, 1, 1, 1));
}

/* MR-ROUTE-4: a plane the kernel does not see reaches every peer
 * on-link. A full table refuses and counts. */
static void test_onlink_and_full(void)
{
	uint32_t nh = 0;
	unsigned i;

	mrdp_route_set_onlink(&t);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 200, 0, 2), &nh), 0);
	MR_CHECK_EQ(nh, IP(10, 200, 0, 2));
	mrdp_route_clear(&t);
	for (i = 0; i < MRDP_ROUTES_MAX; i++)
		MR_CHECK_EQ(mrdp_route_add(&t, IP(10, i, 0, 0), 16, 0, 0), 0);
	MR_CHECK_EQ(mrdp_route_add(&t, IP(11, 0, 0, 0), 8, 0, 0), -ENOSPC);
	MR_CHECK_EQ(t.overflow, 1);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(10, 63, 1, 1), &nh), 0);
	MR_CHECK_EQ(mrdp_route_nexthop(&t, IP(11, 0, 0, 1), &nh), -ENETUNREACH);
}

/* MR-ADDR-4: IPv6 tables, longest prefix first, prefixes not on a
 * byte boundary. */
static struct mrdp_route6_table t6;

static void test_route6(void)
{
	static const uint8_t any[16];
	static const uint8_t p64[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1 };
	static const uint8_t p61[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 2 };
	uint8_t d[16] = { 0x20, 0x01, 0x0d, 0xb8, 0, 1, [15] = 9 };
	uint32_t gw = 99;

	mrdp_route6_clear(&t6);
	MR_CHECK_EQ(mrdp_route6_nexthop(&t6, d, &gw), -ENETUNREACH);
	MR_CHECK_EQ(mrdp_route6_add(&t6, any, 0, 0xe0000007u, 1024), 0);
	MR_CHECK_EQ(mrdp_route6_add(&t6, p64, 64, 0, 256), 0);
	MR_CHECK_EQ(mrdp_route6_add(&t6, p61, 61, 0xe0000008u, 0), 0);
	MR_CHECK_EQ(mrdp_route6_add(&t6, any, 129, 0, 0), -EINVAL);
	MR_CHECK_EQ(t6.r[0].plen, 64);
	MR_CHECK_EQ(mrdp_route6_nexthop(&t6, d, &gw), 0);
	MR_CHECK_EQ(gw, 0); /* on-link */
	/* 2001:db8:2:7::9 is in 2001:db8:2::/61 (the low 3 bits of the
	 * fourth group are host bits). */
	d[5] = 2;
	d[7] = 7;
	MR_CHECK_EQ(mrdp_route6_nexthop(&t6, d, &gw), 0);
	MR_CHECK_EQ(gw, 0xe0000008u);
	d[7] = 8; /* 2001:db8:2:8::9, outside the /61: the default route */
	MR_CHECK_EQ(mrdp_route6_nexthop(&t6, d, &gw), 0);
	MR_CHECK_EQ(gw, 0xe0000007u);
	mrdp_route6_set_onlink(&t6);
	MR_CHECK_EQ(mrdp_route6_nexthop(&t6, d, &gw), 0);
	MR_CHECK_EQ(gw, 0);
}

MR_TEST_MAIN(MR_TEST(test_route6), MR_TEST(test_longest_prefix), MR_TEST(test_metric),
	     MR_TEST(test_onlink_and_full))
