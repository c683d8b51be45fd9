// SPDX-License-Identifier: BSD-2-Clause
/* mr_pathrx: receiver per-path record and SACK block (MR-SACK-1..4). */
#include "mr_test.h"

#include "mr_pathrx.h"

/* Expected bitmap with the listed bit indices set (byte i/8, bit i%8). */
static void expect_bits(uint8_t *bm, const unsigned *idx, unsigned n)
{
	unsigned k;

	memset(bm, 0, MR_SACK_BYTES);
	for (k = 0; k < n; k++)
		bm[idx[k] / 8] |= (uint8_t)(1u << (idx[k] % 8));
}

/* MR-SACK-1: in-order arrivals advance cum_ppsn; OLD before it. */
static void test_in_order(void)
{
	struct mr_pathrx rx;
	struct mr_sack_block b;
	uint8_t zero[MR_SACK_BYTES] = { 0 };
	uint32_t p;

	mr_pathrx_init(&rx, 3, 1000);
	for (p = 1000; p < 1600; p++) {
		MR_CHECK_EQ(mr_pathrx_record(&rx, p, 0, 5000 + p),
			    MR_PATHRX_NEW);
		MR_CHECK_EQ(rx.cum_ppsn, p + 1);
	}
	MR_CHECK_EQ(rx.unacked, 600);
	MR_CHECK_EQ(rx.last_rx_ns, 5000 + 1599);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.path_id, 3);
	MR_CHECK_EQ(b.cum_ppsn, 1600);
	MR_CHECK_MEM(b.bitmap, zero, MR_SACK_BYTES);
	MR_CHECK_EQ(rx.unacked, 0);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1599, 0, 7000), MR_PATHRX_OLD);
	MR_CHECK_EQ(rx.olds, 1);
	MR_CHECK_EQ(rx.pkts, 601);
}

/* MR-SACK-1, wire.md MR-ACK-10: bitmaps byte-exact against hand-built
 * expectations. */
static void test_sack_bitmap_exact(void)
{
	struct mr_pathrx rx;
	struct mr_sack_block b;
	uint8_t want[MR_SACK_BYTES];

	mr_pathrx_init(&rx, 0, 1000);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1000, 0, 1), MR_PATHRX_NEW);
	/* cum 1001; bit i = 1002 + i */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1003, 0, 2), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1005, 0, 3), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1257, 0, 4), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1010, 0, 5), MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 1001);
	memset(want, 0, sizeof(want));
	want[0] = 0x0a;	 /* 1003 (bit 1), 1005 (bit 3) */
	want[1] = 0x01;	 /* 1010 (bit 8) */
	want[31] = 0x80; /* 1257 (bit 255) */
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);

	MR_CHECK_EQ(mr_pathrx_record(&rx, 1003, 0, 6), MR_PATHRX_DUP);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1000, 0, 7), MR_PATHRX_OLD);
	MR_CHECK_EQ(rx.dups, 1);

	/* 1001 fills the cum hole: cum 1002, bit i = 1003 + i. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1001, 0, 8), MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 1002);
	{
		static const unsigned idx[] = { 0, 2, 7, 254 };

		expect_bits(want, idx, 4);
	}
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);

	/* 1002 arrives: cum runs over 1003 to 1004; bit i = 1005 + i. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1002, 0, 9), MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 1004);
	{
		static const unsigned idx[] = { 0, 5, 252 };

		expect_bits(want, idx, 3);
	}
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK(mr_pathrx_test(&rx, 1003));
	MR_CHECK(!mr_pathrx_test(&rx, 1004));
	MR_CHECK(mr_pathrx_test(&rx, 1005));
	MR_CHECK(!mr_pathrx_test(&rx, 1006));
	MR_CHECK(mr_pathrx_test(&rx, 1257));
	MR_CHECK(!mr_pathrx_test(&rx, 1261));
}

/* MR-SACK-4: a ppsn beyond cum + 256 slides the window over abandoned
 * holes. */
static void test_slide(void)
{
	struct mr_pathrx rx;
	struct mr_sack_block b;
	uint8_t want[MR_SACK_BYTES];

	mr_pathrx_init(&rx, 1, 1004);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1005, 0, 1), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1257, 0, 2), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1260, 0, 3), MR_PATHRX_NEW);
	/* 1260 = cum + 256: the last bit, no slide yet. */
	MR_CHECK_EQ(rx.cum_ppsn, 1004);
	MR_CHECK_EQ(rx.skipped, 0);
	/* 1304 = cum + 300: new cum 1304 - 256 = 1048. Abandoned: 1004 and
	 * 1006..1047 (42) = 43. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1304, 0, 4), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.cum_ppsn, 1048);
	MR_CHECK_EQ(rx.skipped, 43);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 1048);
	{
		/* 1257 -> 208, 1260 -> 211, 1304 -> 255 */
		static const unsigned idx[] = { 208, 211, 255 };

		expect_bits(want, idx, 3);
	}
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1006, 0, 5), MR_PATHRX_OLD);

	/* A slide whose new cum already arrived keeps running: new cum
	 * would be 1258, 1258 is missing -> stays; send 1258, 1259 first. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1258, 0, 6), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1259, 0, 7), MR_PATHRX_NEW);
	/* 1256 + 256 + 1 = 1513 -> new cum 1257 (arrived), runs over
	 * 1257..1260 to 1261. Abandoned: 1048..1256 = 209. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1513, 0, 8), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.cum_ppsn, 1261);
	MR_CHECK_EQ(rx.skipped, 43 + 209);
	mr_pathrx_sack(&rx, &b);
	{
		/* 1304 -> 42, 1513 -> 251 */
		static const unsigned idx[] = { 42, 251 };

		expect_bits(want, idx, 2);
	}
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);

	/* Far beyond: everything in the map is abandoned or passed. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 100000, 0, 9), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.cum_ppsn, 100000 - 256);
	mr_pathrx_sack(&rx, &b);
	{
		static const unsigned idx[] = { 255 };

		expect_bits(want, idx, 1);
	}
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
}

/* Sequence arithmetic across 0xffffffff (README.md). */
static void test_wrap(void)
{
	struct mr_pathrx rx;
	struct mr_sack_block b;
	uint8_t want[MR_SACK_BYTES];

	mr_pathrx_init(&rx, 2, 0xfffffffeu);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0xffffffffu, 0, 1), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0x00000001u, 0, 2), MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 0xfffffffeu);
	memset(want, 0, sizeof(want));
	want[0] = 0x05; /* 0xffffffff (bit 0), 0x1 (bit 2) */
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0xfffffffeu, 0, 3), MR_PATHRX_NEW);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 0x00000000u);
	want[0] = 0x01; /* 0x1 */
	MR_CHECK_MEM(b.bitmap, want, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0xffffffffu, 0, 4), MR_PATHRX_OLD);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0, 0, 5), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.cum_ppsn, 2);
	/* A slide across the wrap. */
	mr_pathrx_init(&rx, 2, 0xffffff00u);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0x00000010u, 0, 6), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.cum_ppsn, 0xffffff10u);
	MR_CHECK_EQ(rx.skipped, 16);
	MR_CHECK(mr_pathrx_test(&rx, 0x10));
}

/* MR-SACK-3, MR-ACK-11: CE counted per packet, duplicates included, and
 * reported cumulatively in the block (a lost ACK loses no mark). */
static void test_ce(void)
{
	struct mr_pathrx rx;
	struct mr_sack_block b;

	mr_pathrx_init(&rx, 0, 0);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 0, 1, 1), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 1, 0, 2), MR_PATHRX_NEW);
	MR_CHECK_EQ(mr_pathrx_record(&rx, 3, 1, 3), MR_PATHRX_NEW);
	/* A duplicate's mark still tells of the network. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 3, 1, 4), MR_PATHRX_DUP);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.ce_cum, 3);
	/* That ACK is lost; the next still counts its marks. */
	MR_CHECK_EQ(mr_pathrx_record(&rx, 2, 1, 5), MR_PATHRX_NEW);
	MR_CHECK_EQ(rx.ce_total, 4);
	MR_CHECK_EQ(rx.unacked, 1);
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.cum_ppsn, 4);
	MR_CHECK_EQ(b.ce_cum, 4);
	MR_CHECK_EQ(rx.unacked, 0);
	/* Modulo 2^16. */
	rx.ce_total = 0x1fffe;
	mr_pathrx_sack(&rx, &b);
	MR_CHECK_EQ(b.ce_cum, 0xfffe);
}

/*
 * MR-SACK-1, MR-SACK-4 against a reference model: random arrivals
 * (reordered, duplicated, far ahead, across the wrap); after each one
 * cum_ppsn is the first ppsn not received at or after the floor (the
 * initial ppsn, raised to ppsn - 256 by every arrival), and every bit
 * says exactly whether its ppsn arrived.
 */
static void test_reference_model(void)
{
	static uint8_t got[8192];
	struct mr_pathrx rx;
	struct mr_sack_block b;
	const uint32_t base = 0xfffff000u;
	uint32_t floor = 0, hi = 0, i, n, want;
	uint64_t x = 0x9e3779b97f4a7c15ull;

	memset(got, 0, sizeof(got));
	mr_pathrx_init(&rx, 9, base);
	for (n = 0; n < 6000; n++) {
		uint32_t off;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Mostly near the front, sometimes a jump ahead. */
		if (x % 50 == 0)
			off = hi + (uint32_t)(x >> 8) % 400;
		else
			off = floor + (uint32_t)(x >> 8) % 300;
		if (off >= 8000)
			break;
		mr_pathrx_record(&rx, base + off, 0, n);
		got[off] = 1;
		if (off > hi)
			hi = off;
		if (off >= 256 && off - 256 > floor)
			floor = off - 256;
		want = floor;
		while (got[want])
			want++;
		MR_CHECK_EQ(rx.cum_ppsn, base + want);
		mr_pathrx_sack(&rx, &b);
		MR_CHECK_EQ(b.cum_ppsn, base + want);
		for (i = 0; i < MR_SACK_BITS; i++)
			MR_CHECK_EQ(b.bitmap[i / 8] >> (i % 8) & 1,
				    got[want + 1 + i]);
	}
	MR_CHECK(n > 1000);
	MR_CHECK(rx.skipped > 0);
}

MR_TEST_MAIN(MR_TEST(test_in_order), MR_TEST(test_sack_bitmap_exact),
	     MR_TEST(test_slide), MR_TEST(test_wrap), MR_TEST(test_ce),
	     MR_TEST(test_reference_model))
