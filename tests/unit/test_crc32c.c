/* SPDX-License-Identifier: BSD-2-Clause */
/* CRC32C (MR-ICRC-1): known check values, chaining, hardware vs software on
 * every alignment and length, and the constant table against a bitwise
 * definition. */
#include "mr_crc32c.h"
#include "mr_test.h"

/* The definition: reflected, polynomial 0x82F63B78, one bit at a time. */
static uint32_t crc_bitwise(const uint8_t *p, size_t len)
{
	uint32_t c = 0xffffffffu;
	size_t i;
	int k;

	for (i = 0; i < len; i++) {
		c ^= p[i];
		for (k = 0; k < 8; k++)
			c = (c >> 1) ^ ((c & 1) ? 0x82f63b78u : 0);
	}
	return ~c;
}

static uint64_t rng_state;

static uint64_t rng_next(void)
{
	/* splitmix64: seeded, reproducible */
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void test_check_value(void)
{
	static const uint8_t s[] = "123456789";

	MR_CHECK_EQ(mr_crc32c(0, s, 9), 0xe3069283u);
	MR_CHECK_EQ(mr_crc32c_sw(0, s, 9), 0xe3069283u);
	MR_CHECK_EQ(crc_bitwise(s, 9), 0xe3069283u);
	MR_CHECK_EQ(mr_crc32c(0, s, 0), 0);
	MR_CHECK_EQ(mr_crc32c_sw(0, NULL, 0), 0);
}

/* RFC 3720 (iSCSI) B.4 test vectors. */
static void test_rfc3720_vectors(void)
{
	uint8_t buf[48];
	unsigned i;

	memset(buf, 0, 32);
	MR_CHECK_EQ(mr_crc32c(0, buf, 32), 0x8a9136aau);
	MR_CHECK_EQ(mr_crc32c_sw(0, buf, 32), 0x8a9136aau);
	memset(buf, 0xff, 32);
	MR_CHECK_EQ(mr_crc32c(0, buf, 32), 0x62a8ab43u);
	MR_CHECK_EQ(mr_crc32c_sw(0, buf, 32), 0x62a8ab43u);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)i;
	MR_CHECK_EQ(mr_crc32c(0, buf, 32), 0x46dd794eu);
	MR_CHECK_EQ(mr_crc32c_sw(0, buf, 32), 0x46dd794eu);
	for (i = 0; i < 32; i++)
		buf[i] = (uint8_t)(31 - i);
	MR_CHECK_EQ(mr_crc32c(0, buf, 32), 0x113fdb5cu);
	MR_CHECK_EQ(mr_crc32c_sw(0, buf, 32), 0x113fdb5cu);
}

/* Both implementations equal the bitwise definition at every alignment
 * and every length up to 300, and for random splits (chaining). */
static void test_alignment_lengths_chaining(void)
{
	static uint8_t buf[512];
	size_t off, len, cut;
	unsigned i;

	rng_state = 20261130;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng_next();
	for (off = 0; off < 8; off++) {
		for (len = 0; len <= 300; len++) {
			uint32_t want = crc_bitwise(buf + off, len);

			MR_CHECK_EQ(mr_crc32c(0, buf + off, len), want);
			MR_CHECK_EQ(mr_crc32c_sw(0, buf + off, len), want);
			cut = len ? rng_next() % (len + 1) : 0;
			MR_CHECK_EQ(mr_crc32c(mr_crc32c(0, buf + off, cut),
					      buf + off + cut, len - cut),
				    want);
			MR_CHECK_EQ(
				mr_crc32c_sw(mr_crc32c_sw(0, buf + off, cut),
					     buf + off + cut, len - cut),
				want);
		}
	}
}

/* A large buffer (4 KiB payload plus headers, the largest packet). */
static void test_large(void)
{
	static uint8_t buf[4096 + 76];
	unsigned i;

	rng_state = 7;
	for (i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)rng_next();
	MR_CHECK_EQ(mr_crc32c(0, buf, sizeof(buf)),
		    crc_bitwise(buf, sizeof(buf)));
	MR_CHECK_EQ(mr_crc32c_sw(0, buf, sizeof(buf)),
		    crc_bitwise(buf, sizeof(buf)));
}

/* The hardware path's 3-way interleaved blocks (768 bytes) and their
 * combination: every length from 700 to 2400 at two alignments, and 3000
 * random buffers (so each entry of the combination tables is used many
 * times), against the software path, which the tests above pin to the
 * bitwise definition. */
static void test_interleaved_lengths(void)
{
	static uint8_t big[2600];
	size_t len, off;
	unsigned i, k;

	rng_state = 31337;
	for (i = 0; i < sizeof(big); i++)
		big[i] = (uint8_t)rng_next();
	for (off = 0; off < 2; off++)
		for (len = 700; len <= 2400; len++)
			MR_CHECK_EQ(mr_crc32c(0, big + off * 3, len),
				    mr_crc32c_sw(0, big + off * 3, len));
	for (k = 0; k < 3000; k++) {
		uint32_t seed = (uint32_t)rng_next();

		len = 768 + rng_next() % 1600;
		for (i = 0; i < len; i++)
			big[i] = (uint8_t)rng_next();
		MR_CHECK_EQ(mr_crc32c(seed, big, len),
			    mr_crc32c_sw(seed, big, len));
	}
	MR_CHECK_EQ(mr_crc32c(0, big, 2304), crc_bitwise(big, 2304));
}

/* Every entry of the 8 slicing tables: an aligned 8-byte message is one
 * slicing step in which byte j indexes table 7 - j, so varying one byte
 * over 0..255 at each position uses each entry of each table once. */
static void test_every_table_entry(void)
{
	static uint8_t buf[8] __attribute__((aligned(8)));
	unsigned j, v;

	for (j = 0; j < 8; j++) {
		for (v = 0; v < 256; v++) {
			memset(buf, 0, sizeof(buf));
			buf[j] = (uint8_t)v;
			MR_CHECK_EQ(mr_crc32c_sw(0, buf, 8),
				    crc_bitwise(buf, 8));
			MR_CHECK_EQ(mr_crc32c(0, buf, 8), crc_bitwise(buf, 8));
		}
	}
}

/* Every single-bit error in a 64-byte message changes the CRC. */
static void test_detects_bit_flips(void)
{
	uint8_t buf[64];
	uint32_t good;
	unsigned bit;

	rng_state = 99;
	for (bit = 0; bit < sizeof(buf); bit++)
		buf[bit] = (uint8_t)rng_next();
	good = mr_crc32c(0, buf, sizeof(buf));
	for (bit = 0; bit < sizeof(buf) * 8; bit++) {
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
		MR_CHECK(mr_crc32c(0, buf, sizeof(buf)) != good);
		buf[bit / 8] ^= (uint8_t)(1u << (bit % 8));
	}
	MR_CHECK_EQ(mr_crc32c(0, buf, sizeof(buf)), good);
}

MR_TEST_MAIN(MR_TEST(test_check_value), MR_TEST(test_rfc3720_vectors),
	     MR_TEST(test_alignment_lengths_chaining), MR_TEST(test_large),
	     MR_TEST(test_interleaved_lengths), MR_TEST(test_every_table_entry),
	     MR_TEST(test_detects_bit_flips))
