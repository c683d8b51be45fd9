// SPDX-License-Identifier: BSD-2-Clause
/*
 * The harness checks itself before it judges the core: the scripted link
 * (exact loss by index, delay ordering, per-path FIFO, reordering,
 * duplication, corruption, cut), the PRNG's determinism and the registered
 * memory table (keys, PD, bounds, rights, out-of-region placement).
 */
#include "mr_test.h"
#include "mrsim_link.h"
#include "mrsim_mem.h"
#include "mrsim_rand.h"

/* A packet whose first 8 bytes carry its number, so order is visible. */
static void mkpkt(uint8_t *b, uint64_t n, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		b[i] = (uint8_t)(n >> (8 * (i % 8)));
}

static uint64_t pktnum(const struct mrsim_pkt *p)
{
	uint64_t n = 0;
	int i;

	for (i = 7; i >= 0; i--)
		n = n << 8 | p->data[i];
	return n;
}

/* Drain everything; record numbers and times in order of delivery. */
static size_t drain(struct mrsim_dir *d, uint64_t *nums, uint64_t *times,
		    size_t max)
{
	struct mrsim_pkt *p;
	size_t n = 0;

	while ((p = mrsim_dir_pop(d, UINT64_MAX))) {
		if (n < max) {
			nums[n] = pktnum(p);
			if (times)
				times[n] = p->t;
		}
		n++;
		mrsim_dir_release(d, p);
	}
	return n;
}

static void test_delay_fifo(void)
{
	struct mrsim_link_cfg c = { .delay_ns = 1000 };
	struct mrsim_dir d;
	uint64_t nums[16], times[16];
	uint8_t b[64];
	uint64_t i;

	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 1, 0), 0);
	MR_CHECK_EQ(mrsim_dir_next_time(&d), UINT64_MAX);
	for (i = 0; i < 10; i++) {
		mkpkt(b, i, sizeof(b));
		MR_CHECK_EQ(mrsim_dir_send(&d, 100 + 10 * i, b, sizeof(b), 0),
			    0);
	}
	MR_CHECK_EQ(mrsim_dir_inflight(&d), 10);
	MR_CHECK_EQ(mrsim_dir_next_time(&d), 1100);
	/* Nothing is due before its time. */
	MR_CHECK(mrsim_dir_pop(&d, 1099) == NULL);
	MR_CHECK_EQ(drain(&d, nums, times, 16), 10);
	for (i = 0; i < 10; i++) {
		MR_CHECK_EQ(nums[i], i);
		MR_CHECK_EQ(times[i], 1100 + 10 * i);
	}
	MR_CHECK_EQ(d.st.sent, 10);
	MR_CHECK_EQ(d.st.delivered, 10);
	mrsim_dir_fini(&d);
}

static void test_loss_by_index_exact(void)
{
	static const uint64_t drops[] = { 0, 3, 4, 9, 17 };
	struct mrsim_link_cfg c = { .delay_ns = 5,
				    .drop_idx = drops,
				    .n_drop = 5 };
	struct mrsim_dir d;
	uint64_t nums[32];
	uint8_t b[16];
	size_t n, i, j = 0, k;

	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 7, 0), 0);
	for (i = 0; i < 20; i++) {
		mkpkt(b, i, sizeof(b));
		MR_CHECK_EQ(mrsim_dir_send(&d, i, b, sizeof(b), 0), 0);
	}
	n = drain(&d, nums, NULL, 32);
	MR_CHECK_EQ(n, 15);
	MR_CHECK_EQ(d.st.lost_idx, 5);
	/* Exactly the scripted packets are missing, the rest in order. */
	for (i = 0; i < 20; i++) {
		int dropped = 0;

		for (k = 0; k < 5; k++)
			dropped |= drops[k] == i;
		if (dropped)
			continue;
		MR_CHECK_EQ(nums[j], i);
		j++;
	}
	MR_CHECK_EQ(j, 15);
	mrsim_dir_fini(&d);

	/* An unsorted script is a configuration error, not silent loss. */
	static const uint64_t bad[] = { 5, 2 };
	c.drop_idx = bad;
	c.n_drop = 2;
	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 7, 0), -1);
}

static void test_paths_and_jitter(void)
{
	struct mrsim_link_cfg c = { .delay_ns = 1000, .jitter_ns = 5000 };
	struct mrsim_dir d;
	uint64_t nums[200], times[200], last[4] = { 0 };
	int seen[4] = { 0 };
	uint8_t b[16];
	size_t i, n, overtakes = 0;

	c.path_delay_ns[1] = 100000; /* path 1 is much slower */
	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 42, 1), 0);
	for (i = 0; i < 200; i++) {
		mkpkt(b, i, sizeof(b));
		MR_CHECK_EQ(mrsim_dir_send(&d, i * 100, b, sizeof(b),
					   (uint16_t)(i % 4)),
			    0);
	}
	n = drain(&d, nums, times, 200);
	MR_CHECK_EQ(n, 200);
	for (i = 0; i < n; i++) {
		unsigned path = (unsigned)(nums[i] % 4);

		/* Delivery times never go backwards. */
		if (i)
			MR_CHECK(times[i] >= times[i - 1]);
		/* Within a path: FIFO despite jitter. */
		if (seen[path])
			MR_CHECK(nums[i] > last[path]);
		seen[path] = 1;
		last[path] = nums[i];
		/* Each packet waited at least base + its path's delay. */
		MR_CHECK(times[i] >=
			 nums[i] * 100 + 1000 + (path == 1 ? 100000 : 0));
		if (i && nums[i] < nums[i - 1])
			overtakes++;
	}
	/* Across paths, the slow path is overtaken. */
	MR_CHECK(overtakes > 0);
	mrsim_dir_fini(&d);
}

static void test_reorder_dup_corrupt_ce(void)
{
	struct mrsim_link_cfg c = { .delay_ns = 1000,
				    .reorder_ppm = 200000,
				    .reorder_ns = 50000,
				    .dup_ppm = 100000,
				    .corrupt_ppm = 100000,
				    .ce_ppm = 300000 };
	static uint64_t nums[4000];
	struct mrsim_dir d;
	uint8_t b[64];
	size_t i, n, inversions = 0, corrupt_seen = 0, ce_seen = 0;
	struct mrsim_pkt *p;

	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 99, 2), 0);
	for (i = 0; i < 1000; i++) {
		mkpkt(b, i, sizeof(b));
		MR_CHECK_EQ(mrsim_dir_send(&d, i * 10, b, sizeof(b), 0), 0);
	}
	n = 0;
	while ((p = mrsim_dir_pop(&d, UINT64_MAX))) {
		uint8_t ref[64];
		uint64_t num = p->idx;
		size_t k, bits = 0;

		/* The link knows which send this copy came from: compare
		 * with what was sent; a corrupted copy differs in one bit. */
		mkpkt(ref, num, sizeof(ref));
		for (k = 0; k < sizeof(ref); k++)
			bits += (size_t)__builtin_popcount(p->data[k] ^ ref[k]);
		MR_CHECK_EQ(bits, p->corrupted ? 1 : 0);
		corrupt_seen += p->corrupted;
		ce_seen += p->ecn_ce;
		if (n < 4000)
			nums[n] = num;
		n++;
		mrsim_dir_release(&d, p);
	}
	MR_CHECK_EQ(n, 1000 + d.st.duplicated);
	MR_CHECK_EQ(corrupt_seen, d.st.corrupted);
	MR_CHECK_EQ(ce_seen, d.st.ce_marked);
	/* Around the configured rates (deterministic for this seed). */
	MR_CHECK(d.st.reordered > 150 && d.st.reordered < 250);
	MR_CHECK(d.st.duplicated > 70 && d.st.duplicated < 130);
	MR_CHECK(d.st.corrupted > 70 && d.st.corrupted < 150);
	for (i = 1; i < n; i++)
		if (nums[i] < nums[i - 1])
			inversions++;
	MR_CHECK(inversions > 50);
	mrsim_dir_fini(&d);
}

static int drop_odd(void *user, uint64_t idx, uint64_t now, const uint8_t *pkt,
		    size_t len, uint16_t path_id)
{
	(*(int *)user)++;
	return idx & 1;
}

static void test_cut_filter_and_random_loss(void)
{
	struct mrsim_link_cfg c = { .delay_ns = 10, .cut_at_ns = 500 };
	struct mrsim_dir d;
	uint64_t nums[100];
	uint8_t b[8];
	size_t i, n;
	int calls = 0;

	c.filter = drop_odd;
	c.filter_user = &calls;
	MR_CHECK_EQ(mrsim_dir_init(&d, &c, 3, 0), 0);
	for (i = 0; i < 100; i++) {
		mkpkt(b, i, sizeof(b));
		MR_CHECK_EQ(mrsim_dir_send(&d, i * 10, b, sizeof(b), 0), 0);
	}
	n = drain(&d, nums, NULL, 100);
	/* 0..49 before the cut, of which the odd ones are filtered. */
	MR_CHECK_EQ(n, 25);
	MR_CHECK_EQ(d.st.lost_cut, 50);
	MR_CHECK_EQ(d.st.lost_filter, 25);
	MR_CHECK_EQ(calls, 50);
	for (i = 0; i < n; i++)
		MR_CHECK_EQ(nums[i], 2 * i);
	mrsim_dir_fini(&d);

	/* Random loss: about the rate, and identical for the same seed. */
	struct mrsim_link_cfg l = { .delay_ns = 1, .loss_ppm = 100000 };
	uint64_t lost[2];
	int run;

	for (run = 0; run < 2; run++) {
		MR_CHECK_EQ(mrsim_dir_init(&d, &l, 1234, 5), 0);
		for (i = 0; i < 10000; i++)
			MR_CHECK_EQ(mrsim_dir_send(&d, i, b, sizeof(b), 0), 0);
		lost[run] = d.st.lost_rand;
		MR_CHECK_EQ(drain(&d, nums, NULL, 0), 10000 - lost[run]);
		mrsim_dir_fini(&d);
	}
	MR_CHECK_EQ(lost[0], lost[1]);
	MR_CHECK(lost[0] > 900 && lost[0] < 1100);
	/* Oversized packets are refused, not silently truncated. */
	static uint8_t big[MRSIM_PKT_MAX + 1];
	MR_CHECK_EQ(mrsim_dir_init(&d, &l, 1, 0), 0);
	MR_CHECK_EQ(mrsim_dir_send(&d, 0, big, sizeof(big), 0), -1);
	mrsim_dir_fini(&d);
}

static void test_rand(void)
{
	struct mrsim_rand a, b, c;
	uint64_t hist[10] = { 0 };
	int i;

	mrsim_rand_seed(&a, 5, 0);
	mrsim_rand_seed(&b, 5, 0);
	mrsim_rand_seed(&c, 5, 1);
	for (i = 0; i < 1000; i++) {
		uint64_t x = mrsim_rand_next(&a);

		MR_CHECK_EQ(x, mrsim_rand_next(&b));
		MR_CHECK(x != mrsim_rand_next(&c));
	}
	for (i = 0; i < 100000; i++) {
		uint64_t v = mrsim_rand_range(&a, 10, 19);

		MR_CHECK(v >= 10 && v <= 19);
		hist[v - 10]++;
	}
	for (i = 0; i < 10; i++)
		MR_CHECK(hist[i] > 9000 && hist[i] < 11000);
	MR_CHECK_EQ(mrsim_rand_below(&a, 0), 0);
}

static void test_mem(void)
{
	struct mrsim_mem m;
	struct mrsim_region *r, *ro;
	uint8_t *host = NULL;
	uint8_t src[8] = { 1, 2, 3, 4, 5, 6, 7, 8 };

	mrsim_mem_init(&m, 0x100);
	r = mrsim_mem_reg(&m, 0x10000, 4096, 1,
			  MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE);
	MR_CHECK(r != NULL);
	ro = mrsim_mem_reg(&m, 0x20000, 64, 1, MR_ACCESS_REMOTE_READ);
	MR_CHECK(ro != NULL);
	/* Overlapping registrations are refused. */
	MR_CHECK(mrsim_mem_reg(&m, 0x10ff0, 64, 1, 0) == NULL);
	MR_CHECK(r->lkey != r->rkey && r->lkey != ro->lkey);

	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->rkey, 1, 0x10000, 4096,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    0);
	MR_CHECK(host == r->buf);
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->lkey, 0, 0x10ff8, 8,
				     MR_ACCESS_LOCAL_WRITE, &host),
		    0);
	MR_CHECK(host == r->buf + 0xff8);
	/* One byte past the end. */
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->rkey, 1, 0x10ff8, 9,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    -MR_EACCESS);
	/* Address wrap. */
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->rkey, 1, UINT64_MAX - 3, 8,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    -MR_EACCESS);
	/* Wrong PD, lkey used as rkey, missing rights. */
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 2, r->rkey, 1, 0x10000, 8,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    -MR_EACCESS);
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->lkey, 1, 0x10000, 8,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    -MR_EACCESS);
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, ro->rkey, 1, 0x20000, 8,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    -MR_EACCESS);
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 1, r->rkey, 1, 0x10000, 8,
				     MR_ACCESS_REMOTE_ATOMIC, &host),
		    -MR_EACCESS);
	/* Zero length always succeeds, with no pointer. */
	MR_CHECK_EQ(mrsim_mem_lookup(&m, 9, 12345, 1, 0, 0,
				     MR_ACCESS_REMOTE_WRITE, &host),
		    0);
	MR_CHECK(host == NULL);
	MR_CHECK_EQ(m.lookup_denied, 6);

	/* Placement inside a region copies; outside is a recorded bug. */
	mrsim_mem_place(&m, r->buf + 4088, src, 8);
	MR_CHECK_MEM(r->buf + 4088, src, 8);
	MR_CHECK_EQ(m.bad_place, 0);
	mrsim_mem_place(&m, r->buf + 4089, src, 8);
	MR_CHECK_EQ(m.bad_place, 1);
	MR_CHECK_EQ(r->buf[4095], 8);
	MR_CHECK(mrsim_mem_host(&m, 0x20000, 64) == ro->buf);
	MR_CHECK(mrsim_mem_host(&m, 0x20000, 65) == NULL);
	mrsim_mem_fini(&m);
}

MR_TEST_MAIN(MR_TEST(test_delay_fifo), MR_TEST(test_loss_by_index_exact),
	     MR_TEST(test_paths_and_jitter),
	     MR_TEST(test_reorder_dup_corrupt_ce),
	     MR_TEST(test_cut_filter_and_random_loss), MR_TEST(test_rand),
	     MR_TEST(test_mem))
