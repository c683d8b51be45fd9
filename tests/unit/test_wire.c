/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The wire format (docs/spec/wire.md): golden byte vectors, seeded round
 * trips of every opcode, every parse error path (truncation at every
 * length, every bit flipped, every reserved field, every length rule) and
 * the encoder's refusals. Clause ids name the rule each check covers.
 */
#include "mr_be.h"
#include "mr_crc32c.h"
#include "mr_err.h"
#include "mr_test.h"
#include "mr_wire.h"
#include "tests/fuzz/mr_wire_gen.h"

/* MR-HDR-2: the header sizes of the spec's tables. */
_Static_assert(MR_BTH_LEN == 32, "BTH");
_Static_assert(MR_PTH_LEN == 8, "PTH");
_Static_assert(MR_RETH_LEN == 16, "RETH");
_Static_assert(MR_IMMDT_LEN == 4, "IMMDT");
_Static_assert(MR_ATOMETH_LEN == 28, "ATOMETH");
_Static_assert(MR_ATOMACKETH_LEN == 8, "ATOMACKETH");
_Static_assert(MR_DETH_LEN == 8, "DETH");
_Static_assert(MR_AETH_LEN == 24, "AETH");
_Static_assert(MR_SACK_FIRST_MIN_LEN == 5, "MR-ACK-13, first block");
_Static_assert(MR_SACK_MIN_LEN == 2, "MR-ACK-13, a later block");
_Static_assert(MR_SACK_BLOCK_MAX_LEN == 41, "SACK block, largest");
_Static_assert(MR_ACK_MAX_SACK_BYTES == 1280, "MR-ACK-9");
_Static_assert(MR_SACK_BITS == 256, "SACK bitmap");
_Static_assert(MR_ICRC_LEN == 4, "ICRC");
_Static_assert(MR_UDP_PORT_DEFAULT == 4797, "MR-ENC-2");

#define BUF_CAP                                                     \
	(MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN + MR_ACK_MAX_SACK_BYTES + \
	 MR_WIRE_MAX_PAYLOAD + MR_ICRC_LEN + 64)

static uint8_t buf[BUF_CAP];
static uint8_t buf2[BUF_CAP];
static uint8_t payload[MR_WIRE_MAX_PAYLOAD];

/* Field-by-field equality of two decoded packets (payload by content). */
static int pkt_equal(const struct mr_pkt *a, const struct mr_pkt *b)
{
	unsigned i;

	if (a->bth.opcode != b->bth.opcode || a->bth.flags != b->bth.flags ||
	    a->bth.dqpn != b->bth.dqpn || a->bth.sqpn != b->bth.sqpn ||
	    a->bth.ssn != b->bth.ssn || a->bth.msn != b->bth.msn ||
	    a->bth.rsn != b->bth.rsn || a->bth.offset != b->bth.offset ||
	    a->bth.msg_len != b->bth.msg_len)
		return 0;
	if (a->pth.path_id != b->pth.path_id ||
	    a->pth.pflags != b->pth.pflags || a->pth.plane != b->pth.plane ||
	    a->pth.ppsn != b->pth.ppsn)
		return 0;
	if (a->reth.vaddr != b->reth.vaddr || a->reth.rkey != b->reth.rkey ||
	    a->reth.dma_len != b->reth.dma_len || a->imm != b->imm ||
	    a->inv_rkey != b->inv_rkey)
		return 0;
	if (a->atom.vaddr != b->atom.vaddr || a->atom.rkey != b->atom.rkey ||
	    a->atom.swap_add != b->atom.swap_add ||
	    a->atom.compare != b->atom.compare ||
	    a->atomic_orig != b->atomic_orig || a->deth.qkey != b->deth.qkey)
		return 0;
	if (a->aeth.syndrome != b->aeth.syndrome ||
	    a->aeth.rnr_timer != b->aeth.rnr_timer ||
	    a->aeth.nblocks != b->aeth.nblocks ||
	    a->aeth.nak_msn != b->aeth.nak_msn ||
	    a->aeth.cum_ssn != b->aeth.cum_ssn ||
	    a->aeth.cum_msn != b->aeth.cum_msn ||
	    a->aeth.rate_hint != b->aeth.rate_hint ||
	    a->aeth.ecn_ce != b->aeth.ecn_ce)
		return 0;
	for (i = 0; i < a->aeth.nblocks; i++) {
		const struct mr_sack_block *x = &a->aeth.blocks[i];
		const struct mr_sack_block *y = &b->aeth.blocks[i];

		if (x->path_id != y->path_id || x->ce_cum != y->ce_cum ||
		    x->cum_ppsn != y->cum_ppsn ||
		    memcmp(x->bitmap, y->bitmap, MR_SACK_BYTES))
			return 0;
	}
	if (a->payload_len != b->payload_len)
		return 0;
	return !a->payload_len ||
	       !memcmp(a->payload, b->payload, a->payload_len);
}

/* ---- golden vectors: bytes written by hand from the spec's tables ---- */

/* clang-format off */
static const uint8_t golden_send_imm[] = {
	/* BTH: version 1 | opcode SEND_IMM | flags SOLICITED|ACK_REQ */
	0x10, 0x02, 0x00, 0x03,
	0x00, 0x00, 0x00, 0x11, /* dqpn 0x11 */
	0x00, 0x00, 0x00, 0x22, /* sqpn 0x22 */
	0x01, 0x02, 0x03, 0x04, /* ssn */
	0x00, 0x00, 0x00, 0x07, /* msn 7 */
	0x00, 0x00, 0x00, 0x03, /* rsn 3 */
	0x00, 0x00, 0x00, 0x00, /* offset 0 */
	0x00, 0x00, 0x00, 0x05, /* msg_len 5 */
	/* PTH: path 2, pflags 0, reserved 0, ppsn 0x100 */
	0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00,
	/* IMMDT */
	0xde, 0xad, 0xbe, 0xef,
	/* payload "hello" */
	0x68, 0x65, 0x6c, 0x6c, 0x6f,
	/* ICRC: CRC32C of the 49 bytes above, big-endian */
	0x04, 0x7c, 0x3f, 0xc7,
};

static const uint8_t golden_read_req[] = {
	0x10, 0x05, 0x00, 0x00, /* READ_REQ, no flags */
	0x00, 0xab, 0xcd, 0xef, /* dqpn 0xabcdef */
	0x00, 0x00, 0x00, 0x01, /* sqpn 1 */
	0xff, 0xff, 0xff, 0xfe, /* ssn */
	0x00, 0x00, 0x00, 0x10, /* msn 16 */
	0x00, 0x00, 0x00, 0x00, /* rsn 0 */
	0x00, 0x00, 0x00, 0x00, /* offset 0 */
	0x00, 0x00, 0x10, 0x00, /* msg_len 4096 = dma_len */
	0x00, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff, /* PTH path 0 */
	/* RETH: vaddr, rkey, dma_len */
	0x00, 0x00, 0x7f, 0x00, 0x12, 0x34, 0x56, 0x78,
	0x00, 0x00, 0x12, 0x34, 0x00, 0x00, 0x10, 0x00,
	0xb0, 0x28, 0xbc, 0x4b, /* ICRC */
};

static const uint8_t golden_ack[] = {
	0x10, 0x10, 0x00, 0x00, /* ACK */
	0x00, 0x00, 0x00, 0x22, 0x00, 0x00, 0x00, 0x11, /* dqpn, sqpn */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* ssn, msn */
	0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* rsn, offset */
	0x00, 0x00, 0x00, 0x00,                         /* msg_len */
	0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* PTH path 1 */
	/* AETH: syndrome 0, rnr 0, nblocks 3, reserved */
	0x00, 0x00, 0x03, 0x00,
	0x00, 0x00, 0x00, 0x00, /* nak_msn 0 */
	0x01, 0x02, 0x03, 0x05, /* cum_ssn */
	0x00, 0x00, 0x00, 0x08, /* cum_msn 8 */
	0x00, 0x01, 0x86, 0xa0, /* rate_hint 100000 Mb/s */
	0x00, 0x03, 0x00, 0x00, /* ecn_ce 3, reserved */
	/* SACK block 0 (MR-ACK-13): head = path 2 | CE | bitmap, cum_ppsn
	 * 0x101 in 4 bytes (the first block), ce_cum 0x203 (MR-ACK-11),
	 * one bitmap byte (MR-ACK-12): bits 0 and 2 = ppsn 0x102 and 0x104
	 * arrived; the 31 zero bytes after it are not sent */
	0xc2, 0x00, 0x00, 0x01, 0x01, 0x02, 0x03, 0x01, 0x05,
	/* block 1: path 0, no mark, no hole; cum_ppsn 0x102 = +1 from
	 * block 0: zigzag 2, one varint byte */
	0x00, 0x02,
	/* block 2: path 3; cum_ppsn 0x9e = -100 from block 1: zigzag 199 =
	 * LEB128 0xc7 0x01 */
	0x03, 0xc7, 0x01,
	0x3e, 0x7c, 0xe9, 0x80, /* ICRC */
};
/* clang-format on */

static void test_golden_send_imm(void)
{
	static const uint8_t imm[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct mr_pkt p, q;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = MR_OP_SEND_IMM;
	p.bth.flags = MR_BTH_F_SOLICITED | MR_BTH_F_ACK_REQ;
	p.bth.dqpn = 0x11;
	p.bth.sqpn = 0x22;
	p.bth.ssn = 0x01020304;
	p.bth.msn = 7;
	p.bth.rsn = 3;
	p.bth.msg_len = 5;
	p.pth.path_id = 2;
	p.pth.ppsn = 0x100;
	memcpy(&p.imm, imm, 4); /* MR-EXT-4: raw bytes */
	p.payload = (const uint8_t *)"hello";
	p.payload_len = 5;

	MR_CHECK_EQ(mr_wire_hdr_len(&p), 44);
	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, sizeof(golden_send_imm));
	MR_CHECK_MEM(buf, golden_send_imm, n);

	MR_CHECK_EQ(mr_wire_parse(golden_send_imm, sizeof(golden_send_imm), &q),
		    MR_PARSE_OK);
	MR_CHECK_EQ(q.bth.version, 1);
	MR_CHECK(pkt_equal(&p, &q));
	MR_CHECK(q.payload == golden_send_imm + 44);
	MR_CHECK_EQ(mr_wire_peek_dqpn(golden_send_imm, 8), 0x11);
}

/* MR-EXT-8: the IETH follows the PTH, the rkey big-endian; the rkey,
 * like the rsn, survives the round trip. */
static void test_send_inv_ieth(void)
{
	static const uint8_t ieth[4] = { 0x11, 0x22, 0x33, 0x44 };
	struct mr_pkt p, q;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = MR_OP_SEND_INV;
	p.bth.dqpn = 0x11;
	p.bth.rsn = 9;
	p.bth.msg_len = 5;
	p.inv_rkey = 0x11223344;
	p.payload = (const uint8_t *)"hello";
	p.payload_len = 5;
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 44);
	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, 44 + 5 + 4);
	MR_CHECK_MEM(buf + 40, ieth, 4);
	MR_CHECK_MEM(buf + 44, "hello", 5);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
	MR_CHECK(pkt_equal(&p, &q));
	MR_CHECK_EQ(q.inv_rkey, 0x11223344);
}

static void test_golden_read_req(void)
{
	struct mr_pkt p, q;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = MR_OP_READ_REQ;
	p.bth.dqpn = 0xabcdef;
	p.bth.sqpn = 1;
	p.bth.ssn = 0xfffffffe;
	p.bth.msn = 0x10;
	p.bth.msg_len = 0x1000;
	p.pth.ppsn = 0xffffffff;
	p.reth.vaddr = 0x00007f0012345678ull;
	p.reth.rkey = 0x1234;
	p.reth.dma_len = 0x1000;

	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, sizeof(golden_read_req));
	MR_CHECK_MEM(buf, golden_read_req, n);
	MR_CHECK_EQ(mr_wire_parse(golden_read_req, sizeof(golden_read_req), &q),
		    MR_PARSE_OK);
	MR_CHECK(pkt_equal(&p, &q));
	MR_CHECK_EQ(q.payload_len, 0);
}

static void test_golden_ack(void)
{
	struct mr_pkt p, q;
	size_t n;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = MR_OP_ACK;
	p.bth.dqpn = 0x22;
	p.bth.sqpn = 0x11;
	p.pth.path_id = 1;
	p.aeth.nblocks = 1;
	p.aeth.cum_ssn = 0x01020305;
	p.aeth.cum_msn = 8;
	p.aeth.rate_hint = 100000;
	p.aeth.ecn_ce = 3;
	p.aeth.blocks[0].path_id = 2;
	p.aeth.blocks[0].ce_cum = 0x0203;
	p.aeth.blocks[0].cum_ppsn = 0x101;
	p.aeth.blocks[0].bitmap[0] = 0x05;
	p.aeth.nblocks = 3;
	p.aeth.blocks[1].path_id = 0;
	p.aeth.blocks[1].cum_ppsn = 0x102;
	p.aeth.blocks[2].path_id = 3;
	p.aeth.blocks[2].cum_ppsn = 0x9e;

	/* MR-ACK-13: 9 + 2 + 3 bytes of blocks (8-byte blocks: 25) */
	MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[0], NULL), 9);
	MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[1], &p.aeth.blocks[0]), 2);
	MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[2], &p.aeth.blocks[1]), 3);
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 78);
	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, sizeof(golden_ack));
	MR_CHECK_MEM(buf, golden_ack, n);
	MR_CHECK_EQ(mr_wire_parse(golden_ack, sizeof(golden_ack), &q),
		    MR_PARSE_OK);
	MR_CHECK(pkt_equal(&p, &q));
}

/* MR-HDR-4 / MR-EXT table: extension bytes per opcode. */
static void test_ext_len(void)
{
	unsigned v;

	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_SEND), 0);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_SEND_IMM), 4);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_WRITE), 16);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_WRITE_IMM), 20);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_READ_REQ), 16);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_READ_RESP), 0);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_ATOMIC_CS), 28);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_ATOMIC_FA), 28);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_ATOMIC_RESP), 8);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_ACK), 24);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_UD_SEND), 8);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_UD_SEND_IMM), 12);
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_SEND_INV), 4); /* MR-EXT-8 */
	MR_CHECK_EQ(mr_wire_ext_len(MR_OP_ATOMIC_WRITE), 28); /* MR-EXT-9 */
	for (v = 0; v < 256; v++) {
		unsigned i, known = 0;

		for (i = 0; i < MR_GEN_NUM_OPCODES; i++)
			known |= mr_gen_opcodes[i] == v;
		if (!known)
			MR_CHECK_EQ(mr_wire_ext_len((uint8_t)v), -1);
	}
	/* the largest data header stack */
	MR_CHECK_EQ(MR_BTH_LEN + MR_PTH_LEN + mr_wire_ext_len(MR_OP_WRITE_IMM),
		    60);
	MR_CHECK(MR_BTH_LEN + MR_PTH_LEN + mr_wire_ext_len(MR_OP_ATOMIC_CS) <=
		 MR_MAX_HDR_LEN);
}

/* ---- seeded round trips of every opcode ---- */

static void test_round_trip_all_opcodes(void)
{
	struct mr_gen_rng r = { 20261130 };
	struct mr_pkt p, q;
	unsigned i, k;
	size_t n, h;

	for (k = 0; k < 2000; k++) {
		for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
			mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload,
				   k % 4 ? 96 : MR_WIRE_MAX_PAYLOAD);
			h = mr_wire_hdr_len(&p);
			MR_CHECK(h >= MR_BTH_LEN + MR_PTH_LEN);
			n = mr_wire_encode(&p, buf, sizeof(buf));
			MR_CHECK_EQ(n, h + p.payload_len + MR_ICRC_LEN);
			MR_CHECK_EQ(mr_wire_peek_dqpn(buf, n), p.bth.dqpn);
			MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
			MR_CHECK(pkt_equal(&p, &q));
			MR_CHECK(q.payload == buf + h);
			/* canonical: a parsed packet re-encodes to the same
			 * bytes */
			MR_CHECK_EQ(mr_wire_encode(&q, buf2, sizeof(buf2)), n);
			MR_CHECK_MEM(buf, buf2, n);
		}
	}
}

/* Encode into a buffer that is not 8-aligned and parse from there: the
 * parser makes no alignment assumption. */
static void test_unaligned(void)
{
	struct mr_gen_rng r = { 5 };
	struct mr_pkt p, q;
	unsigned i, off;
	size_t n;

	for (off = 1; off < 8; off++) {
		for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
			mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload, 200);
			n = mr_wire_encode(&p, buf + off, sizeof(buf) - off);
			MR_CHECK(n > 0);
			MR_CHECK_EQ(mr_wire_parse(buf + off, n, &q),
				    MR_PARSE_OK);
			MR_CHECK(pkt_equal(&p, &q));
		}
	}
}

/* ---- parse errors ---- */

/* Expected result of parsing the first cut bytes of a valid packet whose
 * header is h bytes, after resealing them (MR-PARSE-1, -5, -7). */
static int expect_resealed_cut(const struct mr_pkt *p, size_t h, size_t cut)
{
	uint32_t plen;

	if (cut < h)
		return MR_PARSE_SHORT;
	plen = (uint32_t)(cut - h);
	if (plen == p->payload_len)
		return MR_PARSE_OK;
	switch (p->bth.opcode) {
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		return MR_PARSE_FIELD; /* msg_len != payload (MR-EXT-7) */
	}
	/* SEND*, WRITE*, READ_RESP with fewer payload bytes: still within
	 * the message unless it became empty (MR-HDR-11) */
	if (!plen)
		return MR_PARSE_FIELD;
	return MR_PARSE_OK;
}

/* Truncate a valid packet at every length: without reseal the ICRC (read
 * at the wrong place) fails, or it is too short; with reseal, the header
 * rules decide. Never OK except at full length; never out of bounds (the
 * sanitizer build proves it: the copy is at the end of a heap block). */
static void test_truncate_every_length(void)
{
	struct mr_gen_rng r = { 77 };
	struct mr_pkt p, q;
	unsigned i, k;
	size_t n, h, cut;

	for (k = 0; k < 4; k++) {
		for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
			mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload, 64);
			if (p.bth.opcode == MR_OP_ACK && k == 0)
				p.aeth.nblocks = 2;
			h = mr_wire_hdr_len(&p);
			n = mr_wire_encode(&p, buf, sizeof(buf));
			MR_CHECK(n > 0);
			for (cut = 0; cut < n; cut++) {
				uint8_t *c = malloc(cut ? cut : 1);
				int rc;

				MR_CHECK(c != NULL);
				memcpy(c, buf, cut);
				rc = mr_wire_parse(c, cut, &q);
				if (cut < MR_BTH_LEN + MR_PTH_LEN + MR_ICRC_LEN)
					MR_CHECK_EQ(rc, MR_PARSE_SHORT);
				else
					MR_CHECK_EQ(rc, MR_PARSE_ICRC);
				free(c);
			}
			for (cut = 0; cut + MR_ICRC_LEN <= n; cut++) {
				uint8_t *c = malloc(cut + MR_ICRC_LEN);
				int rc, want;

				MR_CHECK(c != NULL);
				memcpy(c, buf, cut);
				mr_wire_seal(c, cut);
				rc = mr_wire_parse(c, cut + MR_ICRC_LEN, &q);
				want = cut < MR_BTH_LEN + MR_PTH_LEN
					       ? MR_PARSE_SHORT
					       : expect_resealed_cut(&p, h,
								     cut);
				free(c);
				MR_CHECK_EQ(rc, want);
			}
		}
	}
}

/* Flip every bit of a valid packet of every opcode. Without reseal: the
 * version nibble -> VERSION (MR-PARSE-2), an opcode that becomes unknown
 * -> OPCODE (MR-PARSE-3), anything else -> ICRC (MR-PARSE-4). With
 * reseal: any result, but a packet that parses is canonical. */
static void test_flip_every_bit(void)
{
	struct mr_gen_rng r = { 1234 };
	struct mr_pkt p, q;
	unsigned i, bit;
	size_t n;

	for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
		mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload, 32);
		n = mr_wire_encode(&p, buf, sizeof(buf));
		MR_CHECK(n > 0);
		for (bit = 0; bit < n * 8; bit++) {
			int rc, want;

			memcpy(buf2, buf, n);
			buf2[bit / 8] ^= (uint8_t)(1u << (bit % 8));
			rc = mr_wire_parse(buf2, n, &q);
			if (bit / 8 == 0 && bit % 8 >= 4)
				want = MR_PARSE_VERSION;
			else if (bit / 8 == 1 && mr_wire_ext_len(buf2[1]) < 0)
				want = MR_PARSE_OPCODE;
			else
				want = MR_PARSE_ICRC;
			MR_CHECK_EQ(rc, want);

			if (bit / 8 >= n - MR_ICRC_LEN)
				continue;
			mr_wire_seal(buf2, n - MR_ICRC_LEN);
			rc = mr_wire_parse(buf2, n, &q);
			if (rc == MR_PARSE_OK) {
				MR_CHECK_EQ(
					mr_wire_encode(&q, buf, sizeof(buf)),
					n);
				MR_CHECK_MEM(buf, buf2, n);
				/* restore the original for the next bit */
				n = mr_wire_encode(&p, buf, sizeof(buf));
			} else {
				MR_CHECK(rc == MR_PARSE_FIELD ||
					 rc == MR_PARSE_SHORT ||
					 rc == MR_PARSE_VERSION ||
					 rc == MR_PARSE_OPCODE);
			}
		}
	}
}

/* Encode p, poke `val` (width bytes) at byte off, reseal, parse. */
static int parse_poked(const struct mr_pkt *p, size_t off, unsigned width,
		       uint64_t val)
{
	struct mr_pkt q;
	size_t n = mr_wire_encode(p, buf, sizeof(buf));

	if (!n)
		return -1;
	if (width == 1)
		mr_put8(buf + off, (uint8_t)val);
	else if (width == 2)
		mr_put16(buf + off, (uint16_t)val);
	else
		mr_put32(buf + off, (uint32_t)val);
	mr_wire_seal(buf, n - MR_ICRC_LEN);
	return mr_wire_parse(buf, n, &q);
}

static int parse_pkt(const struct mr_pkt *p)
{
	struct mr_pkt q;
	size_t n = mr_wire_encode(p, buf, sizeof(buf));

	if (!n)
		return -1;
	return mr_wire_parse(buf, n, &q);
}

/* MR-PARSE-6: every reserved field, in every opcode that has it. */
static void test_reserved_fields(void)
{
	struct mr_gen_rng r = { 42 };
	struct mr_pkt p;
	unsigned i, b;

	for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
		mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload, 16);
		MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
		/* MR-HDR-3: low nibble of byte 0 */
		for (b = 1; b < 16; b++)
			MR_CHECK_EQ(parse_poked(&p, 0, 1, 0x10 | b),
				    MR_PARSE_FIELD);
		/* MR-HDR-5: every reserved flag bit */
		for (b = 5; b < 16; b++)
			MR_CHECK_EQ(
				parse_poked(&p, 2, 2, p.bth.flags | 1u << b),
				MR_PARSE_FIELD);
		/* MR-HDR-6: high byte of dqpn and sqpn */
		MR_CHECK_EQ(parse_poked(&p, 4, 1, 0x01), MR_PARSE_FIELD);
		MR_CHECK_EQ(parse_poked(&p, 8, 1, 0x80), MR_PARSE_FIELD);
		/* MR-HDR-14: pflags reserved; byte 3 is the plane, any
		 * value */
		MR_CHECK_EQ(parse_poked(&p, 34, 1, 1), MR_PARSE_FIELD);
		MR_CHECK_EQ(parse_poked(&p, 35, 1, 0xff), MR_PARSE_OK);
	}
	/* MR-PRB-1: a probe carries no ssn, msn, offset, length, rsn or
	 * payload */
	mr_gen_pkt(&r, MR_OP_PROBE, &p, payload, 16);
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	MR_CHECK_EQ(parse_poked(&p, 12, 4, 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 16, 4, 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 20, 4, 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 24, 4, 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 28, 4, 1), MR_PARSE_FIELD);
	/* MR-EXT-7: DETH reserved word */
	mr_gen_pkt(&r, MR_OP_UD_SEND, &p, payload, 16);
	MR_CHECK_EQ(parse_poked(&p, 44, 4, 1), MR_PARSE_FIELD);
	/* MR-ACK-1, MR-ACK-9: AETH reserved bytes */
	mr_gen_pkt(&r, MR_OP_ACK, &p, payload, 0);
	p.aeth.nblocks = 3;
	for (b = 0; b < 3; b++) { /* no holes, no marks (MR-ACK-13) */
		p.aeth.blocks[b].path_id = (uint16_t)b;
		p.aeth.blocks[b].cum_ppsn = 0x100 + b;
		p.aeth.blocks[b].ce_cum = 0;
		memset(p.aeth.blocks[b].bitmap, 0, MR_SACK_BYTES);
	}
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	MR_CHECK_EQ(parse_poked(&p, 40 + 3, 1, 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 40 + 22, 2, 0x8000), MR_PARSE_FIELD);
	/* MR-ACK-9, MR-ACK-13: the blocks' head bytes at 64, 69 and 71 (5,
	 * 2 and 2 bytes): path 63 is fine, a path twice is refused */
	for (b = 0; b < 3; b++) {
		size_t at = b ? 67 + 2 * b : 64;

		MR_CHECK_EQ(parse_poked(&p, at, 1, MR_MAX_PATHS - 1),
			    MR_PARSE_OK);
		MR_CHECK_EQ(parse_poked(&p, at, 1, (b + 1) % 3),
			    MR_PARSE_FIELD);
	}
}

/* Encode p, replace its bytes from off on with the n bytes of rep (the
 * packet grows or shrinks), reseal, parse into q. */
static int parse_spliced(const struct mr_pkt *p, size_t off, const uint8_t *rep,
			 size_t n, struct mr_pkt *q)
{
	size_t len = mr_wire_encode(p, buf, sizeof(buf));

	if (!len || off + n + MR_ICRC_LEN > sizeof(buf))
		return -1;
	memcpy(buf + off, rep, n);
	mr_wire_seal(buf, off + n);
	return mr_wire_parse(buf, off + n + MR_ICRC_LEN, q);
}

/* MR-ACK-13: a block's head byte, its cum_ppsn as a zigzag LEB128 step
 * from the block before, ce_cum and the bitmap only when the head says;
 * one encoding per block. Each case is an ACK of two blocks whose second
 * block's bytes are given (the first: path 0, cum_ppsn 0xfffffffe, 5
 * bytes at 64). */
static void test_ack_compact(void)
{
	static const struct {
		uint8_t b[12];
		uint8_t n;
		int rc;
		uint32_t cum;
		uint16_t ce;
		uint8_t bm_len;
	} c[] = {
		/* +3 across the wrap: zigzag 6 */
		{ { 0x01, 0x06 }, 2, MR_PARSE_OK, 0x00000001, 0, 0 },
		/* -1: zigzag 1 */
		{ { 0x01, 0x01 }, 2, MR_PARSE_OK, 0xfffffffd, 0, 0 },
		/* +64: zigzag 128 = 0x80 0x01, two bytes */
		{ { 0x01, 0x80, 0x01 }, 3, MR_PARSE_OK, 0x0000003e, 0, 0 },
		/* -2^31: zigzag 0xffffffff, the longest varint */
		{ { 0x01, 0xff, 0xff, 0xff, 0xff, 0x0f },
		  6,
		  MR_PARSE_OK,
		  0x7ffffffe,
		  0,
		  0 },
		/* CE and a 2-byte bitmap: ce_cum then bm_len */
		{ { 0xc1, 0x00, 0x12, 0x34, 0x02, 0x00, 0x80 },
		  7,
		  MR_PARSE_OK,
		  0xfffffffe,
		  0x1234,
		  2 },
		/* not the shortest form: 2 in two bytes */
		{ { 0x01, 0x82, 0x00 }, 3, MR_PARSE_FIELD, 0, 0, 0 },
		/* a fifth byte over 0x0f, or a sixth byte */
		{ { 0x01, 0xff, 0xff, 0xff, 0xff, 0x1f }, 6, MR_PARSE_FIELD, 0, 0, 0 },
		{ { 0x01, 0x80, 0x80, 0x80, 0x80, 0x80, 0x00 },
		  7,
		  MR_PARSE_FIELD,
		  0,
		  0,
		  0 },
		/* the varint runs past the end */
		{ { 0x01, 0x80 }, 2, MR_PARSE_SHORT, 0, 0, 0 },
		/* the CE flag with a count of 0 */
		{ { 0x41, 0x00, 0x00, 0x00 }, 4, MR_PARSE_FIELD, 0, 0, 0 },
		/* the bitmap flag with 0 bytes, with 33, with a last 0 */
		{ { 0x81, 0x00, 0x00 }, 3, MR_PARSE_FIELD, 0, 0, 0 },
		{ { 0x81, 0x00, 0x21 }, 3, MR_PARSE_FIELD, 0, 0, 0 },
		{ { 0x81, 0x00, 0x02, 0x01, 0x00 }, 5, MR_PARSE_FIELD, 0, 0, 0 },
		/* the bitmap runs past the end */
		{ { 0x81, 0x00, 0x03, 0x01, 0x01 }, 5, MR_PARSE_SHORT, 0, 0, 0 },
	};
	struct mr_gen_rng r = { 13 };
	struct mr_pkt p, q;
	unsigned i;

	mr_gen_pkt(&r, MR_OP_ACK, &p, payload, 0);
	p.aeth.nblocks = 2;
	memset(p.aeth.blocks, 0, 2 * sizeof(p.aeth.blocks[0]));
	p.aeth.blocks[0].cum_ppsn = 0xfffffffe;
	p.aeth.blocks[1].path_id = 1;
	p.aeth.blocks[1].cum_ppsn = 0xfffffffe;
	/* first block 5 bytes, second 2 */
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 64 + 5 + 2);
	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		int rc = parse_spliced(&p, 69, c[i].b, c[i].n, &q);

		MR_CHECK_EQ(rc, c[i].rc);
		if (rc != MR_PARSE_OK)
			continue;
		MR_CHECK_EQ(q.aeth.nblocks, 2);
		MR_CHECK_EQ(q.aeth.blocks[1].path_id, 1);
		MR_CHECK_EQ(q.aeth.blocks[1].cum_ppsn, c[i].cum);
		MR_CHECK_EQ(q.aeth.blocks[1].ce_cum, c[i].ce);
		MR_CHECK_EQ(mr_wire_sack_len(&q.aeth.blocks[1], &q.aeth.blocks[0]),
			    c[i].n);
		if (c[i].bm_len)
			MR_CHECK_EQ(q.aeth.blocks[1].bitmap[c[i].bm_len - 1],
				    0x80);
		/* MR-ACK-13: the encoder writes exactly these bytes back */
		MR_CHECK_EQ(mr_wire_encode(&q, buf, sizeof(buf)),
			    69 + c[i].n + MR_ICRC_LEN);
		MR_CHECK_MEM(buf + 69, c[i].b, c[i].n);
	}
}

/* MR-PARSE-2, MR-PARSE-3: every version and opcode value. */
static void test_version_and_opcode(void)
{
	struct mr_gen_rng r = { 3 };
	struct mr_pkt p;
	unsigned v;

	mr_gen_pkt(&r, MR_OP_SEND, &p, payload, 16);
	for (v = 0; v < 16; v++)
		MR_CHECK_EQ(parse_poked(&p, 0, 1, v << 4),
			    v == MR_WIRE_VERSION ? MR_PARSE_OK
						 : MR_PARSE_VERSION);
	for (v = 0; v < 256; v++) {
		int rc = parse_poked(&p, 1, 1, v);

		if (mr_wire_ext_len((uint8_t)v) < 0)
			MR_CHECK_EQ(rc, MR_PARSE_OPCODE);
		else
			MR_CHECK(rc != MR_PARSE_OPCODE);
	}
	/* version is checked before opcode, opcode before ICRC */
	memset(buf, 0xff, 64);
	MR_CHECK_EQ(mr_wire_parse(buf, 64, &p), MR_PARSE_VERSION);
	buf[0] = 0x10;
	MR_CHECK_EQ(mr_wire_parse(buf, 64, &p), MR_PARSE_OPCODE);
	buf[1] = MR_OP_SEND;
	MR_CHECK_EQ(mr_wire_parse(buf, 64, &p), MR_PARSE_ICRC);
	MR_CHECK_EQ(mr_wire_parse(buf, 43, &p), MR_PARSE_SHORT);
	MR_CHECK_EQ(mr_wire_parse(NULL, 0, &p), MR_PARSE_SHORT);
}

/* MR-PARSE-7 with MR-HDR-9..13, MR-EXT-1..7: the length rules. */
static void test_length_rules(void)
{
	struct mr_gen_rng r = { 9 };
	struct mr_pkt p;

	/* SEND: offset + payload beyond msg_len */
	mr_gen_pkt(&r, MR_OP_SEND, &p, payload, 0);
	p.payload = payload;
	p.payload_len = 10;
	p.bth.offset = 0;
	p.bth.msg_len = 10;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.offset = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.offset = 0xfffffffb; /* overflow of offset + len */
	p.bth.msg_len = 0xffffffff;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-HDR-12: msg_len at and above 2 GiB */
	p.bth.offset = MR_WIRE_MAX_MSG_LEN - 10;
	p.bth.msg_len = MR_WIRE_MAX_MSG_LEN;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.offset = MR_WIRE_MAX_MSG_LEN - 9;
	p.bth.msg_len = MR_WIRE_MAX_MSG_LEN + 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-HDR-11: empty packet only for a zero-length message */
	p.payload_len = 0;
	p.bth.offset = 0;
	p.bth.msg_len = 0;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.msg_len = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.msg_len = 0;
	p.bth.offset = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-HDR-13: payload above 4096 bytes */
	p.bth.offset = 0;
	p.bth.msg_len = 8192;
	p.payload_len = MR_WIRE_MAX_PAYLOAD;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	{
		static uint8_t big[MR_WIRE_MAX_PAYLOAD + 1];
		struct mr_pkt q;
		size_t n;

		p.payload = big;
		p.payload_len = MR_WIRE_MAX_PAYLOAD + 1;
		n = mr_wire_encode(&p, buf, sizeof(buf));
		MR_CHECK(n > 0);
		MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_FIELD);
		p.payload = payload;
	}

	/* MR-HDR-9: rsn only on SEND and SEND_IMM (receive index) and on
	 * READ_RESP and ATOMIC_RESP (the responder's stream base) */
	mr_gen_pkt(&r, MR_OP_SEND_IMM, &p, payload, 16);
	p.bth.rsn = 0xffffffff;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	mr_gen_pkt(&r, MR_OP_READ_RESP, &p, payload, 16);
	p.bth.rsn = 0xfffffffe;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	mr_gen_pkt(&r, MR_OP_ATOMIC_RESP, &p, payload, 16);
	p.bth.rsn = 7;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	{
		static const uint8_t no_rsn[] = {
			MR_OP_WRITE,	 MR_OP_WRITE_IMM,   MR_OP_READ_REQ,
			MR_OP_ATOMIC_CS, MR_OP_ATOMIC_FA,   MR_OP_ACK,
			MR_OP_UD_SEND,	 MR_OP_UD_SEND_IMM, MR_OP_ATOMIC_WRITE,
		};
		unsigned i;

		for (i = 0; i < sizeof(no_rsn); i++) {
			mr_gen_pkt(&r, no_rsn[i], &p, payload, 16);
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
			p.bth.rsn = 1;
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
		}
	}

	/* MR-EXT-1: WRITE dma_len == msg_len */
	mr_gen_pkt(&r, MR_OP_WRITE, &p, payload, 16);
	p.reth.dma_len = p.bth.msg_len + 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-EXT-2: READ_REQ offset 0, msg_len == dma_len, no payload */
	mr_gen_pkt(&r, MR_OP_READ_REQ, &p, payload, 16);
	p.bth.msg_len = 100;
	p.reth.dma_len = 100;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.reth.dma_len = 99;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.reth.dma_len = 100;
	p.bth.offset = 4;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.offset = 0;
	p.payload = payload;
	p.payload_len = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-EXT-5, MR-EXT-6: atomics: msg_len 8, offset 0, no payload */
	{
		/* MR-EXT-9: ATOMIC_WRITE the same */
		static const uint8_t atomics[] = { MR_OP_ATOMIC_CS,
						   MR_OP_ATOMIC_FA,
						   MR_OP_ATOMIC_RESP,
						   MR_OP_ATOMIC_WRITE };
		unsigned i;

		for (i = 0; i < sizeof(atomics); i++) {
			mr_gen_pkt(&r, atomics[i], &p, payload, 16);
			p.bth.msg_len = 4;
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
			p.bth.msg_len = 8;
			p.bth.offset = 8;
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
			p.bth.offset = 0;
			p.payload = payload;
			p.payload_len = 8;
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
			p.payload_len = 0;
			MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
		}
	}
	/* MR-EXT-7: UD: offset 0, msg_len == payload */
	mr_gen_pkt(&r, MR_OP_UD_SEND_IMM, &p, payload, 0);
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK); /* empty datagram */
	p.payload = payload;
	p.payload_len = 20;
	p.bth.msg_len = 20;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.msg_len = 21;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.msg_len = 20;
	p.bth.offset = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	/* MR-HDR-10 for READ_RESP */
	mr_gen_pkt(&r, MR_OP_READ_RESP, &p, payload, 0);
	p.payload = payload;
	p.payload_len = 4;
	p.bth.msg_len = 4096;
	p.bth.offset = 4092;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.offset = 4093;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
}

/* MR-ACK-1..9 */
static void test_ack_rules(void)
{
	struct mr_gen_rng r = { 11 };
	struct mr_pkt p, q;
	size_t n;
	unsigned s, t;

	mr_gen_pkt(&r, MR_OP_ACK, &p, payload, 0);
	p.aeth.syndrome = MR_NAK_NONE;
	p.aeth.rnr_timer = 0;
	p.aeth.nak_msn = 0;
	/* MR-ACK-9, MR-ACK-13: every path, without holes or marks, at the
	 * same cum_ppsn: 5 bytes, then 2 each */
	p.aeth.nblocks = MR_ACK_MAX_BLOCKS;
	for (s = 0; s < MR_ACK_MAX_BLOCKS; s++) {
		p.aeth.blocks[s].path_id = (uint16_t)(MR_MAX_PATHS - 1 - s);
		p.aeth.blocks[s].cum_ppsn = 0x1000;
		p.aeth.blocks[s].ce_cum = 0;
		memset(p.aeth.blocks[s].bitmap, 0, MR_SACK_BYTES);
	}
	MR_CHECK_EQ(MR_ACK_MAX_BLOCKS, MR_MAX_PATHS);
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 64 + 5 + (MR_MAX_PATHS - 1) * 2);
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	/* MR-ACK-9: nblocks above the maximum; the encoder refuses */
	p.aeth.nblocks = MR_ACK_MAX_BLOCKS + 1;
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 0);
	MR_CHECK_EQ(mr_wire_encode(&p, buf, sizeof(buf)), 0);
	p.aeth.nblocks = MR_ACK_MAX_BLOCKS;
	for (s = MR_ACK_MAX_BLOCKS + 1; s < 256; s += 17)
		MR_CHECK_EQ(parse_poked(&p, 42, 1, s), MR_PARSE_FIELD);
	/* nblocks says fewer blocks than present: trailing bytes */
	MR_CHECK_EQ(parse_poked(&p, 42, 1, MR_ACK_MAX_BLOCKS - 1),
		    MR_PARSE_FIELD);
	/* MR-ACK-1: no payload after the blocks */
	p.aeth.nblocks = 2;
	p.payload = payload;
	p.payload_len = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.payload_len = 0;
	/* nblocks says more than present */
	MR_CHECK_EQ(parse_poked(&p, 42, 1, 3), MR_PARSE_SHORT);
	/* MR-ACK-12: block 0 (path 63) with a 1-byte bitmap: head 64,
	 * cum_ppsn 65..68, bm_len 69, bitmap 70; block 1 (path 62) 71..72.
	 * A bitmap longer than 32 bytes; longer than the packet */
	p.aeth.blocks[0].bitmap[0] = 0x01;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	MR_CHECK_EQ(parse_poked(&p, 69, 1, MR_SACK_BYTES + 1), MR_PARSE_FIELD);
	MR_CHECK_EQ(parse_poked(&p, 69, 1, 4), MR_PARSE_SHORT);
	/* ... shorter than sent: its bytes are read as the next block's
	 * (0x40: path 0 with a CE count, which runs past the end) */
	p.aeth.blocks[0].bitmap[1] = 0x40;
	MR_CHECK_EQ(parse_poked(&p, 69, 1, 1), MR_PARSE_SHORT);
	memset(p.aeth.blocks[0].bitmap, 0, MR_SACK_BYTES);
	/* MR-ACK-9: duplicate path id */
	p.aeth.blocks[1].path_id = p.aeth.blocks[0].path_id;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.aeth.blocks[1].path_id = 7;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	/* MR-ACK-3: syndromes */
	for (s = 0; s < 256; s++) {
		p.aeth.syndrome = (uint8_t)s;
		p.aeth.nak_msn = s ? 5 : 0;
		MR_CHECK_EQ(parse_pkt(&p),
			    s <= MR_NAK_REM_OP ? MR_PARSE_OK : MR_PARSE_FIELD);
	}
	/* MR-ACK-4: rnr_timer only with RNR, at most 31 */
	for (s = 0; s <= MR_NAK_REM_OP; s++) {
		p.aeth.syndrome = (uint8_t)s;
		p.aeth.nak_msn = s ? 5 : 0;
		for (t = 0; t < 256; t += 1) {
			int want;

			p.aeth.rnr_timer = (uint8_t)t;
			want = (s == MR_NAK_RNR ? t <= 31 : t == 0)
				       ? MR_PARSE_OK
				       : MR_PARSE_FIELD;
			MR_CHECK_EQ(parse_pkt(&p), want);
		}
	}
	/* MR-ACK-5: nak_msn 0 on a plain ACK; any value on a NAK */
	p.aeth.rnr_timer = 0;
	p.aeth.syndrome = MR_NAK_NONE;
	p.aeth.nak_msn = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.aeth.syndrome = MR_NAK_SEQ_ERR;
	p.aeth.nak_msn = 0;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	/* MR-ACK-2: offset and msg_len 0; ssn and msn free */
	p.bth.ssn = 0xffffffff;
	p.bth.msn = 0x12345678;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_OK);
	p.bth.offset = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.offset = 0;
	p.bth.msg_len = 1;
	MR_CHECK_EQ(parse_pkt(&p), MR_PARSE_FIELD);
	p.bth.msg_len = 0;
	/* an ACK with no blocks (gbn, or a NAK alone) */
	p.aeth.nblocks = 0;
	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN + MR_ICRC_LEN);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
	MR_CHECK_EQ(q.aeth.nblocks, 0);
	MR_CHECK_EQ(q.aeth.syndrome, MR_NAK_SEQ_ERR);
}

/* MR-ACK-12, MR-ACK-13: a block carries its bitmap up to the last non-zero
 * byte, every length byte for byte, and no other length parses (one
 * encoding per block). MR-ACK-9: at most 1280 bytes of blocks. */
static void test_ack_block_len(void)
{
	struct mr_pkt p, q;
	size_t n, k, o;
	unsigned i, s;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = MR_OP_ACK;
	p.aeth.nblocks = 2;
	p.aeth.blocks[0].path_id = 5;
	p.aeth.blocks[0].ce_cum = 0x1234;
	p.aeth.blocks[0].cum_ppsn = 0xfffffff0;
	p.aeth.blocks[1].path_id = 9;
	p.aeth.blocks[1].cum_ppsn = 7; /* +23 across the wrap: zigzag 46 */
	for (i = 0; i <= MR_SACK_BYTES; i++) {
		memset(p.aeth.blocks[0].bitmap, 0, MR_SACK_BYTES);
		for (k = 0; k < i; k++) /* a hole in every byte but the last */
			p.aeth.blocks[0].bitmap[k] = k + 1 < i ? 0 : 0x81;
		if (i > 1)
			p.aeth.blocks[0].bitmap[0] = 0x02;
		o = 71 + (i ? 1 + i : 0); /* block 1 */
		MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[0], NULL), o - 64);
		MR_CHECK_EQ(mr_wire_hdr_len(&p), o + 2);
		n = mr_wire_encode(&p, buf, sizeof(buf));
		MR_CHECK_EQ(n, o + 2 + MR_ICRC_LEN);
		MR_CHECK_EQ(buf[64], 5 | MR_SACK_H_CE | (i ? MR_SACK_H_BM : 0));
		MR_CHECK_EQ(mr_get32(buf + 65), 0xfffffff0);
		MR_CHECK_EQ(mr_get16(buf + 69), 0x1234);
		if (i) {
			MR_CHECK_EQ(buf[71], i);
			MR_CHECK_MEM(buf + 72, p.aeth.blocks[0].bitmap, i);
		}
		MR_CHECK_EQ(buf[o], 9);
		MR_CHECK_EQ(buf[o + 1], 46);
		MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
		MR_CHECK(pkt_equal(&p, &q));
	}
	/* not trimmed: 2..32 bytes ending in zeros are refused (block 0
	 * alone: head, cum_ppsn, ce_cum, bm_len at 71, bitmap from 72) */
	memset(p.aeth.blocks[0].bitmap, 0, MR_SACK_BYTES);
	p.aeth.blocks[0].bitmap[0] = 0x03;
	p.aeth.nblocks = 1;
	for (i = 2; i <= MR_SACK_BYTES; i++) {
		n = mr_wire_encode(&p, buf, sizeof(buf));
		MR_CHECK_EQ(n, 64 + 9 + MR_ICRC_LEN);
		MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
		memset(buf + 73, 0, i - 1);
		buf[71] = (uint8_t)i;
		n = mr_wire_seal(buf, 72 + i);
		MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_FIELD);
	}
	/* ... and a zero byte alone */
	n = mr_wire_encode(&p, buf, sizeof(buf));
	buf[72] = 0;
	mr_wire_seal(buf, n - MR_ICRC_LEN);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_FIELD);

	/* MR-ACK-9: the most an ACK carries is 1280 bytes of blocks: 31
	 * of the largest (40 first, then 41: a CE count, 32 bitmap bytes
	 * and cum_ppsn 2^31 away from the block before, a 5-byte varint)
	 * and one of 10 (a 1-byte bitmap) */
	p.aeth.nblocks = 32;
	for (s = 0; s < 32; s++) {
		p.aeth.blocks[s].path_id = (uint16_t)s;
		p.aeth.blocks[s].ce_cum = 0x1111;
		p.aeth.blocks[s].cum_ppsn = s & 1 ? 0x80000000u : 0;
		memset(p.aeth.blocks[s].bitmap, 0x11, s < 31 ? MR_SACK_BYTES : 1);
		MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[s],
					     s ? &p.aeth.blocks[s - 1] : NULL),
			    s == 0 ? 40 : s < 31 ? MR_SACK_BLOCK_MAX_LEN : 10);
	}
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 64 + MR_ACK_MAX_SACK_BYTES);
	n = mr_wire_encode(&p, buf, sizeof(buf));
	MR_CHECK_EQ(n, 64 + MR_ACK_MAX_SACK_BYTES + MR_ICRC_LEN);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
	MR_CHECK(pkt_equal(&p, &q));
	/* one more block, even of 2 bytes: the encoder refuses, and so
	 * does the parser */
	p.aeth.nblocks = 33;
	p.aeth.blocks[32].path_id = 40;
	p.aeth.blocks[32].ce_cum = 0;
	p.aeth.blocks[32].cum_ppsn = 0x80000000u;
	memset(p.aeth.blocks[32].bitmap, 0, MR_SACK_BYTES);
	MR_CHECK_EQ(mr_wire_sack_len(&p.aeth.blocks[32], &p.aeth.blocks[31]),
		    MR_SACK_MIN_LEN);
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 0);
	MR_CHECK_EQ(mr_wire_encode(&p, buf, sizeof(buf)), 0);
	p.aeth.nblocks = 32;
	n = mr_wire_encode(&p, buf, sizeof(buf)) - MR_ICRC_LEN;
	buf[n] = 40;
	buf[n + 1] = 0;
	buf[42] = 33;
	n = mr_wire_seal(buf, n + 2);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_FIELD);
	/* ... and without the 33rd block the same bytes parse */
	buf[42] = 32;
	n = mr_wire_seal(buf, n - 2 - MR_ICRC_LEN);
	MR_CHECK_EQ(mr_wire_parse(buf, n, &q), MR_PARSE_OK);
}

/* The encoder: every too-small capacity, unknown opcodes. */
static void test_encode_refusals(void)
{
	struct mr_gen_rng r = { 17 };
	struct mr_pkt p;
	unsigned i;
	size_t cap, h;

	for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
		mr_gen_pkt(&r, mr_gen_opcodes[i], &p, payload, 40);
		h = mr_wire_hdr_len(&p);
		for (cap = 0; cap < h; cap++)
			MR_CHECK_EQ(mr_wire_encode_hdr(&p, buf, cap), 0);
		MR_CHECK_EQ(mr_wire_encode_hdr(&p, buf, h), h);
		for (cap = h; cap < h + p.payload_len + MR_ICRC_LEN; cap++)
			MR_CHECK_EQ(mr_wire_encode(&p, buf, cap), 0);
		MR_CHECK_EQ(mr_wire_encode(&p, buf, cap), cap);
	}
	p.bth.opcode = 0;
	MR_CHECK_EQ(mr_wire_hdr_len(&p), 0);
	MR_CHECK_EQ(mr_wire_encode_hdr(&p, buf, sizeof(buf)), 0);
	p.bth.opcode = 0x12;
	MR_CHECK_EQ(mr_wire_encode(&p, buf, sizeof(buf)), 0);
}

/* MR-PARSE-10 */
static void test_peek_dqpn(void)
{
	uint8_t b[8] = { 0x10, 0x01, 0, 0, 0xff, 0x12, 0x34, 0x56 };
	size_t l;

	for (l = 0; l < 8; l++)
		MR_CHECK_EQ(mr_wire_peek_dqpn(b, l), 0);
	MR_CHECK_EQ(mr_wire_peek_dqpn(b, 8), 0x123456);
}

static void test_strings(void)
{
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_OK), "ok"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_SHORT), "short"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_VERSION), "version"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_OPCODE), "opcode"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_ICRC), "icrc"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_FIELD), "field"));
	MR_CHECK(!strcmp(mr_wire_parse_err_str(MR_PARSE_ERR_COUNT), "unknown"));
	MR_CHECK(!strcmp(mr_strerror(0), "success"));
	MR_CHECK(!strcmp(mr_strerror(-MR_EINVAL), "invalid argument"));
	MR_CHECK(!strcmp(mr_strerror(MR_EINVAL), "invalid argument"));
	MR_CHECK(!strcmp(mr_strerror(-MR_EPROTO), "protocol error"));
	MR_CHECK(!strcmp(mr_strerror(-MR_EBUSY), "object still in use"));
	MR_CHECK(!strcmp(mr_strerror(-1000), "unknown error"));
}

/* The trace line of each golden packet, and snprintf-like truncation. */
static void test_format(void)
{
	static const char *want_send =
		"SEND_IMM 0x22->0x11 ssn=16909060 msn=7 rsn=3 off=0 len=5/5 "
		"path=2 ppsn=256 flags=SA imm=deadbeef";
	static const char *want_read =
		"READ_REQ 0x1->0xabcdef ssn=4294967294 msn=16 off=0 "
		"len=0/4096 path=0 ppsn=4294967295 va=0x7f0012345678 "
		"rkey=0x1234 dlen=4096";
	static const char *want_ack =
		"ACK 0x11->0x22 ssn=0 msn=0 path=1 ppsn=0 ACK cum_ssn=16909061 "
		"cum_msn=8 rate=100000 ce=3 blocks=3 2:257+2 0:258+0 3:158+0";
	struct mr_pkt p;
	char line[256], small[16];
	size_t n;

	MR_CHECK_EQ(mr_wire_parse(golden_send_imm, sizeof(golden_send_imm), &p),
		    MR_PARSE_OK);
	n = mr_wire_format(&p, line, sizeof(line));
	MR_CHECK_EQ(n, strlen(want_send));
	MR_CHECK(!strcmp(line, want_send));
	/* truncated: NUL-terminated prefix, full length returned */
	MR_CHECK_EQ(mr_wire_format(&p, small, sizeof(small)), n);
	MR_CHECK_EQ(strlen(small), sizeof(small) - 1);
	MR_CHECK_MEM(small, want_send, sizeof(small) - 1);
	MR_CHECK_EQ(mr_wire_format(&p, NULL, 0), n);

	MR_CHECK_EQ(mr_wire_parse(golden_read_req, sizeof(golden_read_req), &p),
		    MR_PARSE_OK);
	mr_wire_format(&p, line, sizeof(line));
	MR_CHECK(!strcmp(line, want_read));

	MR_CHECK_EQ(mr_wire_parse(golden_ack, sizeof(golden_ack), &p),
		    MR_PARSE_OK);
	mr_wire_format(&p, line, sizeof(line));
	MR_CHECK(!strcmp(line, want_ack));
	p.aeth.syndrome = MR_NAK_RNR;
	p.aeth.rnr_timer = 14;
	p.aeth.nak_msn = 9;
	p.aeth.nblocks = 0;
	mr_wire_format(&p, line, sizeof(line));
	MR_CHECK(strstr(line, " RNR(t=14) nak_msn=9 cum_ssn=") != NULL);

	MR_CHECK(!strcmp(mr_wire_op_name(MR_OP_UD_SEND_IMM), "UD_SEND_IMM"));
	MR_CHECK(!strcmp(mr_wire_op_name(MR_OP_SEND_INV), "SEND_INV"));
	MR_CHECK(!strcmp(mr_wire_op_name(MR_OP_ATOMIC_WRITE), "ATOMIC_WRITE"));
	MR_CHECK(!strcmp(mr_wire_op_name(0x7f), "UNKNOWN"));
	memset(&p, 0, sizeof(p));
	p.bth.opcode = 0x7f;
	mr_wire_format(&p, line, sizeof(line));
	MR_CHECK(!strcmp(line, "UNKNOWN 0x0->0x0 ssn=0 msn=0 path=0 ppsn=0"));
}

/* MR-ICRC-1, MR-ICRC-2: the seal is CRC32C big-endian after the bytes. */
static void test_seal(void)
{
	uint8_t b[16] = "123456789";

	MR_CHECK_EQ(mr_wire_seal(b, 9), 13);
	MR_CHECK_EQ(mr_get32(b + 9), 0xe3069283u);
	MR_CHECK_EQ(b[9], 0xe3);
	MR_CHECK_EQ(b[12], 0x83);
}

MR_TEST_MAIN(MR_TEST(test_golden_send_imm), MR_TEST(test_send_inv_ieth),
	     MR_TEST(test_golden_read_req),
	     MR_TEST(test_golden_ack), MR_TEST(test_ext_len),
	     MR_TEST(test_round_trip_all_opcodes), MR_TEST(test_unaligned),
	     MR_TEST(test_truncate_every_length), MR_TEST(test_flip_every_bit),
	     MR_TEST(test_reserved_fields), MR_TEST(test_version_and_opcode),
	     MR_TEST(test_length_rules), MR_TEST(test_ack_rules),
	     MR_TEST(test_ack_block_len), MR_TEST(test_ack_compact),
	     MR_TEST(test_encode_refusals), MR_TEST(test_peek_dqpn),
	     MR_TEST(test_strings), MR_TEST(test_format), MR_TEST(test_seal))
