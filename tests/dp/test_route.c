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

MR_TEST_MAIN(MR_TEST(test_longest_prefix), MR_TEST(test_metric),
	     MR_TEST(test_onlink_and_full))
