/* SPDX-License-Identifier: BSD-2-Clause */
/* The address book: stable ids for IPv6 addresses (MR-ADDR-3). */
#include <errno.h>

#include "mr_gid.h"
#include "mr_test.h"
#include "mrdp_addr.h"

static void test_ids(void)
{
	struct mrdp_addrs *b = mrdp_addrs_new();
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	uint8_t ll[16] = { 0xfe, 0x80, [15] = 1 };
	uint32_t id1, id2, id3, id4;
	const uint8_t *p;
	uint8_t scope;

	MR_CHECK(b != NULL);
	MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 0, &id1), -ENOENT);
	MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 1, &id1), 0);
	MR_CHECK(mr_gid_id_is6(id1));
	MR_CHECK(id1 != MR_GID_ID6_BASE); /* never the base itself */
	MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 0, &id2), 0);
	MR_CHECK_EQ(id1, id2);
	/* The same link-local router on two planes: two ids. */
	MR_CHECK_EQ(mrdp_addrs_id(b, ll, 1, 1, &id3), 0);
	MR_CHECK_EQ(mrdp_addrs_id(b, ll, 2, 1, &id4), 0);
	MR_CHECK(id3 != id4 && id3 != id1);
	p = mrdp_addrs_get(b, id4, &scope);
	MR_CHECK(p != NULL);
	MR_CHECK_MEM(p, ll, 16);
	MR_CHECK_EQ(scope, 2);
	MR_CHECK(mrdp_addrs_get(b, id4 + 1, NULL) == NULL);
	MR_CHECK(mrdp_addrs_get(b, 0x0a000001u, NULL) == NULL); /* IPv4 */
	mrdp_addrs_free(b);
}

/* Full: the last id is MR_GID_ID6_MAX - 1; then -ENOSPC, and every id
 * handed out still names its own address. */
static void test_full(void)
{
	struct mrdp_addrs *b = mrdp_addrs_new();
	uint8_t a[16] = { 0x20, 0x01, 0x0d, 0xb8 };
	uint32_t i, id;

	MR_CHECK(b != NULL);
	for (i = 1; i < MR_GID_ID6_MAX; i++) {
		a[14] = (uint8_t)(i >> 8);
		a[15] = (uint8_t)i;
		MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 1, &id), 0);
		MR_CHECK_EQ(id, MR_GID_ID6_BASE | i);
	}
	a[13] = 1;
	MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 1, &id), -ENOSPC);
	a[13] = 0;
	a[14] = 0x12;
	a[15] = 0x34;
	MR_CHECK_EQ(mrdp_addrs_id(b, a, 0, 0, &id), 0);
	MR_CHECK_EQ(id, MR_GID_ID6_BASE | 0x1234);
	MR_CHECK_MEM(mrdp_addrs_get(b, id, NULL), a, 16);
	mrdp_addrs_free(b);
}

MR_TEST_MAIN(MR_TEST(test_ids), MR_TEST(test_full))
