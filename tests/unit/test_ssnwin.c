// SPDX-License-Identifier: BSD-2-Clause
/* mr_ssnwin: receiver ssn dedup window (MR-SACK-5, MR-SACK-6). */
#include "mr_test.h"

#include "mr_err.h"
#include "mr_ssnwin.h"

static unsigned allocs, frees;

static void *t_calloc(void *user, size_t n, size_t size)
{
	(void)user;
	allocs++;
	return calloc(n, size);
}

static void t_free(void *user, void *p)
{
	(void)user;
	frees++;
	free(p);
}

static void *fail_calloc(void *user, size_t n, size_t size)
{
	(void)user;
	(void)n;
	(void)size;
	return NULL;
}

static const struct mr_mem mem = { .calloc = t_calloc, .free = t_free };

static void test_bits_for(void)
{
	MR_CHECK_EQ(mr_ssnwin_bits_for(0), 64);
	MR_CHECK_EQ(mr_ssnwin_bits_for(1), 64);
	MR_CHECK_EQ(mr_ssnwin_bits_for(64), 64);
	MR_CHECK_EQ(mr_ssnwin_bits_for(65), 128);
	MR_CHECK_EQ(mr_ssnwin_bits_for(8192), 8192);
	MR_CHECK_EQ(mr_ssnwin_bits_for(0xffffffffu), MR_SSNWIN_MAX_BITS);
	MR_CHECK_EQ(MR_SSNWIN_BITS(1), 512);
	MR_CHECK_EQ(MR_SSNWIN_BITS(16), 8192);
	MR_CHECK_EQ(MR_SSNWIN_BITS(3), 2048);
}

static void test_init_errors(void)
{
	struct mr_ssnwin w;
	struct mr_mem bad = { .calloc = fail_calloc, .free = t_free };
	struct mr_mem none = { 0 };

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0, 0), -MR_EINVAL);
	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0, MR_SSNWIN_MAX_BITS + 1),
		    -MR_EINVAL);
	MR_CHECK_EQ(mr_ssnwin_init(&w, NULL, 0, 64), -MR_EINVAL);
	MR_CHECK_EQ(mr_ssnwin_init(&w, &none, 0, 64), -MR_EINVAL);
	MR_CHECK_EQ(mr_ssnwin_init(&w, &bad, 0, 64), -MR_ENOMEM);
	allocs = frees = 0;
	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 7, 100), 0);
	MR_CHECK_EQ(w.nbits, 128);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 7);
	mr_ssnwin_fini(&w);
	mr_ssnwin_fini(&w);
	MR_CHECK_EQ(allocs, 1);
	MR_CHECK_EQ(frees, 1);
}

static void test_in_order(void)
{
	struct mr_ssnwin w;
	uint32_t s;

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 100, 64), 0);
	for (s = 100; s < 1100; s++) {
		MR_CHECK_EQ(mr_ssnwin_record(&w, s), MR_SSNWIN_NEW);
		MR_CHECK_EQ(mr_ssnwin_cum(&w), s + 1);
	}
	MR_CHECK_EQ(mr_ssnwin_record(&w, 1099), MR_SSNWIN_OLD);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 100), MR_SSNWIN_OLD);
	MR_CHECK(mr_ssnwin_test(&w, 1099));
	MR_CHECK(!mr_ssnwin_test(&w, 1100));
	mr_ssnwin_fini(&w);
}

/* MR-SACK-5: NEW / DUP / OLD and the advance of cum_ssn. */
static void test_out_of_order_and_dup(void)
{
	struct mr_ssnwin w;

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0, 64), 0);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 5), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 3), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 5), MR_SSNWIN_DUP);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 0);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 1);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 2), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 1);
	MR_CHECK(mr_ssnwin_test(&w, 2));
	MR_CHECK(!mr_ssnwin_test(&w, 4));
	MR_CHECK_EQ(mr_ssnwin_record(&w, 1), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 4); /* 0..3 */
	MR_CHECK_EQ(mr_ssnwin_record(&w, 3), MR_SSNWIN_OLD);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 4), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 6); /* 5 was already there */
	MR_CHECK_EQ(mr_ssnwin_record(&w, 5), MR_SSNWIN_OLD);
	mr_ssnwin_fini(&w);
}

/* MR-SACK-5, MR-SACK-6: FAR at cum + W; slots reused after the advance. */
static void test_far_and_slot_reuse(void)
{
	struct mr_ssnwin w;
	uint32_t s;

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0, 64), 0);
	for (s = 1; s < 64; s++)
		MR_CHECK_EQ(mr_ssnwin_record(&w, s), MR_SSNWIN_NEW);
	/* cum 0: the window is [0, 64). */
	MR_CHECK_EQ(mr_ssnwin_record(&w, 64), MR_SSNWIN_FAR);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0x7fffffffu), MR_SSNWIN_FAR);
	MR_CHECK(!mr_ssnwin_test(&w, 64));
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 0);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 64);
	/* 64 uses the slot of 0, 65 that of 1: they must read as free. */
	MR_CHECK(!mr_ssnwin_test(&w, 65));
	MR_CHECK_EQ(mr_ssnwin_record(&w, 65), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 64);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 127), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 128), MR_SSNWIN_FAR);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 64), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 66);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 1), MR_SSNWIN_OLD);
	mr_ssnwin_fini(&w);
}

static void test_wrap(void)
{
	struct mr_ssnwin w;
	uint32_t s;

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0xfffffff0u, 64), 0);
	/* 0xfffffff0 .. 0x0000000f in reverse order. */
	for (s = 0x0000000fu; s != 0xfffffff0u; s--) {
		MR_CHECK_EQ(mr_ssnwin_record(&w, s), MR_SSNWIN_NEW);
		MR_CHECK_EQ(mr_ssnwin_cum(&w), 0xfffffff0u);
	}
	MR_CHECK(mr_ssnwin_test(&w, 0xffffffffu));
	MR_CHECK(mr_ssnwin_test(&w, 0));
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0xffffffffu), MR_SSNWIN_DUP);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0xfffffff0u), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 0x10);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0xffffffffu), MR_SSNWIN_OLD);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0xfffffff0u), MR_SSNWIN_OLD);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0x10 + 64), MR_SSNWIN_FAR);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 0x10 + 63), MR_SSNWIN_NEW);
	mr_ssnwin_fini(&w);
}

static void test_reset(void)
{
	struct mr_ssnwin w;

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0, 64), 0);
	MR_CHECK_EQ(mr_ssnwin_record(&w, 3), MR_SSNWIN_NEW);
	mr_ssnwin_reset(&w, 3);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 3);
	MR_CHECK(!mr_ssnwin_test(&w, 3));
	MR_CHECK_EQ(mr_ssnwin_record(&w, 3), MR_SSNWIN_NEW);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 4);
	mr_ssnwin_fini(&w);
}

/* A seeded random permutation of a window's worth of ssns, each delivered
 * 1..3 times, must yield exactly one NEW per ssn and cum at the end. */
static void test_random_dedup(void)
{
	struct mr_ssnwin w;
	uint32_t order[3 * 512], news = 0, i, n = 0;
	uint64_t x = 0x9e3779b97f4a7c15ull;
	unsigned seen[512] = { 0 };

	MR_CHECK_EQ(mr_ssnwin_init(&w, &mem, 0xffffff00u, 512), 0);
	for (i = 0; i < 512; i++) {
		unsigned k, copies = 1 + i % 3;

		for (k = 0; k < copies; k++)
			order[n++] = i;
	}
	for (i = n - 1; i > 0; i--) {
		uint32_t j, t;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		j = (uint32_t)(x % (i + 1));
		t = order[i];
		order[i] = order[j];
		order[j] = t;
	}
	for (i = 0; i < n; i++) {
		enum mr_ssnwin_res r =
			mr_ssnwin_record(&w, 0xffffff00u + order[i]);

		MR_CHECK(r == MR_SSNWIN_NEW || r == MR_SSNWIN_DUP ||
			 r == MR_SSNWIN_OLD);
		if (r == MR_SSNWIN_NEW) {
			news++;
			seen[order[i]]++;
		}
	}
	MR_CHECK_EQ(news, 512);
	for (i = 0; i < 512; i++)
		MR_CHECK_EQ(seen[i], 1);
	MR_CHECK_EQ(mr_ssnwin_cum(&w), 0x100);
	mr_ssnwin_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_bits_for), MR_TEST(test_init_errors),
	     MR_TEST(test_in_order), MR_TEST(test_out_of_order_and_dup),
	     MR_TEST(test_far_and_slot_reuse), MR_TEST(test_wrap),
	     MR_TEST(test_reset), MR_TEST(test_random_dedup))
