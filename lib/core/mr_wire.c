/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Encode, seal, parse and peek of the MetaRoCE wire format. The clause ids
 * in the comments are those of docs/spec/wire.md. Every read of packet
 * bytes is bounds-checked against the length first; every field goes
 * through the mr_be.h helpers.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "mr_be.h"
#include "mr_crc32c.h"
#include "mr_wire.h"

_Static_assert(MR_BTH_LEN == 32, "BTH is 32 bytes");
_Static_assert(MR_PTH_LEN == 8, "PTH is 8 bytes");
_Static_assert(MR_RETH_LEN == 16, "RETH is 16 bytes");
_Static_assert(MR_IMMDT_LEN == 4, "IMMDT is 4 bytes");
_Static_assert(MR_ATOMETH_LEN == 28, "ATOMETH is 28 bytes");
_Static_assert(MR_ATOMACKETH_LEN == 8, "ATOMACKETH is 8 bytes");
_Static_assert(MR_DETH_LEN == 8, "DETH is 8 bytes");
_Static_assert(MR_AETH_LEN == 24, "AETH is 24 bytes");
/* MR-ACK-13: head, varint of up to 5 bytes, ce_cum, bm_len, bitmap. */
_Static_assert(MR_SACK_BLOCK_MAX_LEN == 1 + 5 + 2 + 1 + MR_SACK_BYTES,
	       "largest SACK block");
_Static_assert(MR_SACK_BYTES == 32, "256-bit SACK bitmap");
_Static_assert(MR_ICRC_LEN == 4, "ICRC is 4 bytes");
_Static_assert(MR_MAX_HDR_LEN == 72, "largest data header stack");
/* nblocks and a block's path_id are one byte on the wire. */
_Static_assert(MR_ACK_MAX_BLOCKS <= 255, "nblocks fits its byte");
_Static_assert(MR_MAX_PATHS - 1 <= MR_SACK_H_PATH,
	       "path_id fits a block's head byte");
/* MR-ACK-9: every path without a hole fits one ACK whatever its cum_ppsn
 * (a first block of 7 bytes, the others of 8 with a 5-byte varint), and
 * the largest ACK (68 + 1280 bytes, 1376 with IPv4 and UDP) a 1500-byte
 * MTU. */
_Static_assert(7 + (MR_MAX_PATHS - 1) * 8 <= MR_ACK_MAX_SACK_BYTES,
	       "64 paths without holes in one ACK");
_Static_assert(MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN + MR_ACK_MAX_SACK_BYTES +
			       MR_ICRC_LEN + 28 <=
		       1500,
	       "the largest ACK fits a 1500-byte MTU");

/* Offsets inside the headers (MR-HDR-*, MR-EXT-*, MR-ACK-*). */
enum {
	BTH_VER = 0,
	BTH_OPCODE = 1,
	BTH_FLAGS = 2,
	BTH_DQPN = 4,
	BTH_SQPN = 8,
	BTH_SSN = 12,
	BTH_MSN = 16,
	BTH_RSN = 20,
	BTH_OFFSET = 24,
	BTH_MSG_LEN = 28,

	PTH_PATH_ID = 0,
	PTH_PFLAGS = 2,
	PTH_PLANE = 3,
	PTH_PPSN = 4,

	RETH_VADDR = 0,
	RETH_RKEY = 8,
	RETH_DMA_LEN = 12,

	ATOM_VADDR = 0,
	ATOM_RKEY = 8,
	ATOM_SWAP_ADD = 12,
	ATOM_COMPARE = 20,

	DETH_QKEY = 0,
	DETH_RSVD = 4,

	AETH_SYNDROME = 0,
	AETH_RNR_TIMER = 1,
	AETH_NBLOCKS = 2,
	AETH_RSVD1 = 3,
	AETH_NAK_MSN = 4,
	AETH_CUM_SSN = 8,
	AETH_CUM_MSN = 12,
	AETH_RATE_HINT = 16,
	AETH_ECN_CE = 20,
	AETH_RSVD2 = 22,

};

#define MR_BASE_LEN (MR_BTH_LEN + MR_PTH_LEN)

/* What an opcode implies (MR-HDR-4, MR-EXT table). */
enum {
	X_RETH = 1u << 0,
	X_IMMDT = 1u << 1,
	X_ATOMETH = 1u << 2,
	X_ATOMACK = 1u << 3,
	X_DETH = 1u << 4,
	X_AETH = 1u << 5,
	X_PAYLOAD = 1u << 6, /* may carry payload */
	X_IETH = 1u << 7,
};

static int opcode_ext(uint8_t opcode)
{
	switch (opcode) {
	case MR_OP_SEND:
		return X_PAYLOAD;
	case MR_OP_SEND_IMM:
		return X_IMMDT | X_PAYLOAD;
	case MR_OP_SEND_INV:
		return X_IETH | X_PAYLOAD;
	case MR_OP_WRITE:
		return X_RETH | X_PAYLOAD;
	case MR_OP_WRITE_IMM:
		return X_RETH | X_IMMDT | X_PAYLOAD;
	case MR_OP_READ_REQ:
		return X_RETH;
	case MR_OP_READ_RESP:
		return X_PAYLOAD;
	case MR_OP_ATOMIC_CS:
	case MR_OP_ATOMIC_FA:
	case MR_OP_ATOMIC_WRITE:
		return X_ATOMETH;
	case MR_OP_ATOMIC_RESP:
		return X_ATOMACK;
	case MR_OP_ACK:
		return X_AETH;
	case MR_OP_PROBE:
		return 0;
	case MR_OP_UD_SEND:
		return X_DETH | X_PAYLOAD;
	case MR_OP_UD_SEND_IMM:
		return X_DETH | X_IMMDT | X_PAYLOAD;
	}
	return -1;
}

/* Byte length of the extension headers in the MR-HDR-2 order: RETH or
 * ATOMETH or ATOMACKETH or DETH or AETH, then IMMDT. */
static int ext_bytes(int x)
{
	int n = 0;

	if (x & X_RETH)
		n += MR_RETH_LEN;
	if (x & X_ATOMETH)
		n += MR_ATOMETH_LEN;
	if (x & X_ATOMACK)
		n += MR_ATOMACKETH_LEN;
	if (x & X_DETH)
		n += MR_DETH_LEN;
	if (x & X_AETH)
		n += MR_AETH_LEN;
	if (x & X_IMMDT)
		n += MR_IMMDT_LEN;
	if (x & X_IETH)
		n += MR_IETH_LEN;
	return n;
}

int mr_wire_ext_len(uint8_t opcode)
{
	int x = opcode_ext(opcode);

	return x < 0 ? -1 : ext_bytes(x);
}

const char *mr_wire_parse_err_str(int err)
{
	switch (err) {
	case MR_PARSE_OK:
		return "ok";
	case MR_PARSE_SHORT:
		return "short";
	case MR_PARSE_VERSION:
		return "version";
	case MR_PARSE_OPCODE:
		return "opcode";
	case MR_PARSE_ICRC:
		return "icrc";
	case MR_PARSE_FIELD:
		return "field";
	}
	return "unknown";
}

/* MR-ACK-12: the bitmap bytes a block carries, up to the last non-zero
 * one (a path without holes sends none). */
static unsigned sack_bm_len(const struct mr_sack_block *b)
{
	unsigned n = MR_SACK_BYTES;

	while (n && !b->bitmap[n - 1])
		n--;
	return n;
}

/* MR-ACK-13: the zigzag form of a wrap-aware difference of two ppsns
 * (0, -1, 1, -2, ... -> 0, 1, 2, 3, ...), so that a small step either way
 * takes one varint byte. */
static uint32_t zigzag(uint32_t cur, uint32_t prev)
{
	uint32_t d = cur - prev;

	return d << 1 ^ (uint32_t)-(int32_t)(d >> 31);
}

static uint32_t unzigzag(uint32_t z, uint32_t prev)
{
	return prev + (z >> 1 ^ (uint32_t)-(int32_t)(z & 1));
}

/* LEB128 (7 bits a byte, low first, bit 7 = more follow), shortest form:
 * 1..5 bytes. Hand-written: four lines, no library carries it. */
static unsigned varint_len(uint32_t v)
{
	unsigned n = 1;

	while (v >>= 7)
		n++;
	return n;
}

static uint8_t *varint_put(uint8_t *p, uint32_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* Reads a shortest-form varint of at most 5 bytes before end into *v;
 * returns the bytes it took, 0 if it runs past end (MR_PARSE_SHORT) or -1
 * if it is not canonical (a zero last byte after others, a fifth byte
 * over 0x0f: MR_PARSE_FIELD). */
static int varint_get(const uint8_t *p, const uint8_t *end, uint32_t *v)
{
	uint32_t x = 0;
	int i;

	for (i = 0; i < 5; i++) {
		if (p + i >= end)
			return 0;
		x |= (uint32_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80))
			break;
	}
	if (i == 5 || (i && !p[i]) || (i == 4 && p[i] > 0x0f))
		return -1;
	*v = x;
	return i + 1;
}

size_t mr_wire_sack_len(const struct mr_sack_block *b,
			const struct mr_sack_block *prev)
{
	unsigned n = sack_bm_len(b);

	return 1 + (prev ? varint_len(zigzag(b->cum_ppsn, prev->cum_ppsn)) : 4) +
	       (b->ce_cum ? 2 : 0) + (n ? 1 + n : 0);
}

size_t mr_wire_hdr_len(const struct mr_pkt *pkt)
{
	int x = opcode_ext(pkt->bth.opcode);
	size_t n, blk = 0;
	unsigned i;

	if (x < 0)
		return 0;
	n = MR_BASE_LEN + (size_t)ext_bytes(x);
	if (x & X_AETH) {
		if (pkt->aeth.nblocks > MR_ACK_MAX_BLOCKS)
			return 0;
		for (i = 0; i < pkt->aeth.nblocks; i++)
			blk += mr_wire_sack_len(&pkt->aeth.blocks[i],
						i ? &pkt->aeth.blocks[i - 1]
						  : NULL);
		if (blk > MR_ACK_MAX_SACK_BYTES) /* MR-ACK-9 */
			return 0;
		n += blk;
	}
	return n;
}

size_t mr_wire_encode_hdr(const struct mr_pkt *pkt, uint8_t *buf, size_t cap)
{
	size_t len = mr_wire_hdr_len(pkt);
	int x = opcode_ext(pkt->bth.opcode);
	uint8_t *p;
	unsigned i;

	if (!len || cap < len)
		return 0;

	/* MR-HDR-3: the version is this implementation's, always. */
	mr_put8(buf + BTH_VER, MR_WIRE_VERSION << 4);
	mr_put8(buf + BTH_OPCODE, pkt->bth.opcode);
	mr_put16(buf + BTH_FLAGS, pkt->bth.flags);
	mr_put32(buf + BTH_DQPN, pkt->bth.dqpn);
	mr_put32(buf + BTH_SQPN, pkt->bth.sqpn);
	mr_put32(buf + BTH_SSN, pkt->bth.ssn);
	mr_put32(buf + BTH_MSN, pkt->bth.msn);
	mr_put32(buf + BTH_RSN, pkt->bth.rsn);
	mr_put32(buf + BTH_OFFSET, pkt->bth.offset);
	mr_put32(buf + BTH_MSG_LEN, pkt->bth.msg_len);

	p = buf + MR_BTH_LEN;
	mr_put16(p + PTH_PATH_ID, pkt->pth.path_id);
	mr_put8(p + PTH_PFLAGS, pkt->pth.pflags);
	mr_put8(p + PTH_PLANE, pkt->pth.plane);
	mr_put32(p + PTH_PPSN, pkt->pth.ppsn);
	p += MR_PTH_LEN;

	if (x & X_RETH) {
		mr_put64(p + RETH_VADDR, pkt->reth.vaddr);
		mr_put32(p + RETH_RKEY, pkt->reth.rkey);
		mr_put32(p + RETH_DMA_LEN, pkt->reth.dma_len);
		p += MR_RETH_LEN;
	}
	if (x & X_ATOMETH) {
		mr_put64(p + ATOM_VADDR, pkt->atom.vaddr);
		mr_put32(p + ATOM_RKEY, pkt->atom.rkey);
		mr_put64(p + ATOM_SWAP_ADD, pkt->atom.swap_add);
		mr_put64(p + ATOM_COMPARE, pkt->atom.compare);
		p += MR_ATOMETH_LEN;
	}
	if (x & X_ATOMACK) {
		mr_put64(p, pkt->atomic_orig);
		p += MR_ATOMACKETH_LEN;
	}
	if (x & X_DETH) {
		mr_put32(p + DETH_QKEY, pkt->deth.qkey);
		mr_put32(p + DETH_RSVD, 0);
		p += MR_DETH_LEN;
	}
	if (x & X_AETH) {
		const struct mr_aeth *a = &pkt->aeth;

		mr_put8(p + AETH_SYNDROME, a->syndrome);
		mr_put8(p + AETH_RNR_TIMER, a->rnr_timer);
		mr_put8(p + AETH_NBLOCKS, a->nblocks);
		mr_put8(p + AETH_RSVD1, 0);
		mr_put32(p + AETH_NAK_MSN, a->nak_msn);
		mr_put32(p + AETH_CUM_SSN, a->cum_ssn);
		mr_put32(p + AETH_CUM_MSN, a->cum_msn);
		mr_put32(p + AETH_RATE_HINT, a->rate_hint);
		mr_put16(p + AETH_ECN_CE, a->ecn_ce);
		mr_put16(p + AETH_RSVD2, 0);
		p += MR_AETH_LEN;
		for (i = 0; i < a->nblocks; i++) {
			const struct mr_sack_block *b = &a->blocks[i];
			unsigned n = sack_bm_len(b);

			/* MR-ACK-13, MR-ACK-12 */
			mr_put8(p++, (uint8_t)(b->path_id |
					       (b->ce_cum ? MR_SACK_H_CE : 0) |
					       (n ? MR_SACK_H_BM : 0)));
			if (i) {
				p = varint_put(p, zigzag(b->cum_ppsn,
							 a->blocks[i - 1].cum_ppsn));
			} else {
				mr_put32(p, b->cum_ppsn);
				p += 4;
			}
			if (b->ce_cum) {
				mr_put16(p, b->ce_cum);
				p += 2;
			}
			if (n) {
				mr_put8(p++, (uint8_t)n);
				memcpy(p, b->bitmap, n);
				p += n;
			}
		}
	}
	/* MR-EXT-4: IMMDT is the last extension header, bytes as given. */
	if (x & X_IMMDT) {
		memcpy(p, &pkt->imm, MR_IMMDT_LEN);
		p += MR_IMMDT_LEN;
	}
	/* MR-EXT-8 */
	if (x & X_IETH) {
		mr_put32(p, pkt->inv_rkey);
		p += MR_IETH_LEN;
	}
	return (size_t)(p - buf);
}

size_t mr_wire_seal(uint8_t *buf, size_t len)
{
	/* MR-ICRC-1, MR-ICRC-2 */
	mr_put32(buf + len, mr_crc32c(0, buf, len));
	return len + MR_ICRC_LEN;
}

size_t mr_wire_encode(const struct mr_pkt *pkt, uint8_t *buf, size_t cap)
{
	size_t h = mr_wire_encode_hdr(pkt, buf, cap);

	if (!h || cap - h < (size_t)pkt->payload_len + MR_ICRC_LEN)
		return 0;
	if (pkt->payload_len)
		memcpy(buf + h, pkt->payload, pkt->payload_len);
	return mr_wire_seal(buf, h + pkt->payload_len);
}

uint32_t mr_wire_peek_dqpn(const uint8_t *buf, size_t len)
{
	/* MR-PARSE-10 */
	if (len < BTH_DQPN + 4)
		return 0;
	return mr_get32(buf + BTH_DQPN) & MR_QPN_MASK;
}

/* MR-PARSE-7: the per-opcode consistency of payload, offset, msg_len and
 * rsn. Returns MR_PARSE_OK or MR_PARSE_FIELD. */
static int check_lengths(const struct mr_pkt *pkt, int x)
{
	const struct mr_bth *b = &pkt->bth;
	uint32_t plen = pkt->payload_len;

	/* MR-HDR-9 */
	if (b->rsn && b->opcode != MR_OP_SEND && b->opcode != MR_OP_SEND_IMM &&
	    b->opcode != MR_OP_SEND_INV && b->opcode != MR_OP_READ_RESP && b->opcode != MR_OP_ATOMIC_RESP)
		return MR_PARSE_FIELD;
	/* MR-HDR-12, MR-HDR-13 */
	if (b->msg_len > MR_WIRE_MAX_MSG_LEN || plen > MR_WIRE_MAX_PAYLOAD)
		return MR_PARSE_FIELD;

	switch (b->opcode) {
	case MR_OP_READ_REQ: /* MR-EXT-2 */
		if (b->offset || b->msg_len != pkt->reth.dma_len)
			return MR_PARSE_FIELD;
		return MR_PARSE_OK;
	case MR_OP_ATOMIC_CS: /* MR-EXT-5 */
	case MR_OP_ATOMIC_FA:
	case MR_OP_ATOMIC_WRITE: /* MR-EXT-9 */
	case MR_OP_ATOMIC_RESP: /* MR-EXT-6 */
		if (b->offset || b->msg_len != MR_WIRE_ATOMIC_LEN)
			return MR_PARSE_FIELD;
		return MR_PARSE_OK;
	case MR_OP_ACK: /* MR-ACK-2 */
		if (b->offset || b->msg_len)
			return MR_PARSE_FIELD;
		return MR_PARSE_OK;
	case MR_OP_PROBE: /* MR-PRB-1 */
		if (b->ssn || b->msn || b->offset || b->msg_len || plen)
			return MR_PARSE_FIELD;
		return MR_PARSE_OK;
	case MR_OP_UD_SEND: /* MR-EXT-7 */
	case MR_OP_UD_SEND_IMM:
		if (b->offset || b->msg_len != plen)
			return MR_PARSE_FIELD;
		return MR_PARSE_OK;
	}

	/* SEND*, WRITE*, READ_RESP: MR-HDR-10, MR-HDR-11 */
	if ((uint64_t)b->offset + plen > b->msg_len)
		return MR_PARSE_FIELD;
	if (!plen && (b->offset || b->msg_len))
		return MR_PARSE_FIELD;
	/* MR-EXT-1 */
	if ((x & X_RETH) && pkt->reth.dma_len != b->msg_len)
		return MR_PARSE_FIELD;
	return MR_PARSE_OK;
}

/* The AETH's fields at p, then its nblocks SACK blocks from p + 24 up to
 * end (MR-ACK-13); *next gets the first byte after the last block. */
static int parse_aeth(const uint8_t *p, const uint8_t *end, struct mr_aeth *a,
		      const uint8_t **next)
{
	uint64_t seen = 0;
	unsigned i, n;

	a->syndrome = mr_get8(p + AETH_SYNDROME);
	a->rnr_timer = mr_get8(p + AETH_RNR_TIMER);
	a->nblocks = mr_get8(p + AETH_NBLOCKS);
	a->nak_msn = mr_get32(p + AETH_NAK_MSN);
	a->cum_ssn = mr_get32(p + AETH_CUM_SSN);
	a->cum_msn = mr_get32(p + AETH_CUM_MSN);
	a->rate_hint = mr_get32(p + AETH_RATE_HINT);
	a->ecn_ce = mr_get16(p + AETH_ECN_CE);
	/* MR-PARSE-6: reserved bytes */
	if (mr_get8(p + AETH_RSVD1) || mr_get16(p + AETH_RSVD2))
		return MR_PARSE_FIELD;
	/* MR-ACK-3 */
	if (a->syndrome > MR_NAK_REM_OP)
		return MR_PARSE_FIELD;
	/* MR-ACK-4 */
	if (a->syndrome == MR_NAK_RNR ? a->rnr_timer > MR_RNR_TIMER_MAX
				      : a->rnr_timer != 0)
		return MR_PARSE_FIELD;
	/* MR-ACK-5 */
	if (a->syndrome == MR_NAK_NONE && a->nak_msn)
		return MR_PARSE_FIELD;

	p += MR_AETH_LEN;
	for (i = 0; i < a->nblocks; i++) {
		struct mr_sack_block *blk = &a->blocks[i];
		unsigned h;

		/* MR-PARSE-5, MR-ACK-13: head, cum_ppsn, then ce_cum and
		 * the bitmap as the head says */
		if (end - p < 1 + (i ? 1 : 4))
			return MR_PARSE_SHORT;
		h = mr_get8(p++);
		blk->path_id = (uint16_t)(h & MR_SACK_H_PATH);
		if (i) {
			uint32_t z;
			int k = varint_get(p, end, &z);

			if (k <= 0)
				return k ? MR_PARSE_FIELD : MR_PARSE_SHORT;
			blk->cum_ppsn = unzigzag(z, a->blocks[i - 1].cum_ppsn);
			p += k;
		} else {
			blk->cum_ppsn = mr_get32(p);
			p += 4;
		}
		blk->ce_cum = 0;
		if (h & MR_SACK_H_CE) {
			if (end - p < 2)
				return MR_PARSE_SHORT;
			blk->ce_cum = mr_get16(p);
			p += 2;
			/* MR-ACK-13: the flag only with a non-zero count,
			 * so a block has one encoding */
			if (!blk->ce_cum)
				return MR_PARSE_FIELD;
		}
		n = 0;
		if (h & MR_SACK_H_BM) {
			if (end - p < 1)
				return MR_PARSE_SHORT;
			n = mr_get8(p++);
			if (!n || n > MR_SACK_BYTES) /* MR-ACK-12 */
				return MR_PARSE_FIELD;
			if ((size_t)(end - p) < n)
				return MR_PARSE_SHORT;
			/* MR-ACK-12: the bitmap ends at its last non-zero
			 * byte, so a block has one encoding */
			if (!p[n - 1])
				return MR_PARSE_FIELD;
		}
		memcpy(blk->bitmap, p, n);
		memset(blk->bitmap + n, 0, MR_SACK_BYTES - n);
		p += n;
		/* MR-ACK-9: path ids below MR_MAX_PATHS, one block per path */
		if (blk->path_id >= MR_MAX_PATHS || seen >> blk->path_id & 1)
			return MR_PARSE_FIELD;
		seen |= 1ull << blk->path_id;
	}
	*next = p;
	return MR_PARSE_OK;
}

int mr_wire_parse(const uint8_t *buf, size_t len, struct mr_pkt *out)
{
	const uint8_t *p, *end;
	size_t hlen;
	uint32_t v;
	int x, rc;

	/* MR-PARSE-1 */
	if (len < MR_BASE_LEN + MR_ICRC_LEN)
		return MR_PARSE_SHORT;
	/* MR-PARSE-2, MR-HDR-3 */
	if ((mr_get8(buf + BTH_VER) >> 4) != MR_WIRE_VERSION)
		return MR_PARSE_VERSION;
	/* MR-PARSE-3, MR-HDR-4 */
	x = opcode_ext(mr_get8(buf + BTH_OPCODE));
	if (x < 0)
		return MR_PARSE_OPCODE;
	/* MR-PARSE-4, MR-ICRC-3: before any other field is trusted */
	end = buf + len - MR_ICRC_LEN;
	if (mr_crc32c(0, buf, len - MR_ICRC_LEN) != mr_get32(end))
		return MR_PARSE_ICRC;

	/* MR-PARSE-5: the extension headers are all there. */
	hlen = MR_BASE_LEN + (size_t)ext_bytes(x);
	if ((size_t)(end - buf) < hlen)
		return MR_PARSE_SHORT;

	out->bth.version = MR_WIRE_VERSION;
	out->bth.opcode = mr_get8(buf + BTH_OPCODE);
	out->bth.flags = mr_get16(buf + BTH_FLAGS);
	out->bth.dqpn = mr_get32(buf + BTH_DQPN);
	out->bth.sqpn = mr_get32(buf + BTH_SQPN);
	out->bth.ssn = mr_get32(buf + BTH_SSN);
	out->bth.msn = mr_get32(buf + BTH_MSN);
	out->bth.rsn = mr_get32(buf + BTH_RSN);
	out->bth.offset = mr_get32(buf + BTH_OFFSET);
	out->bth.msg_len = mr_get32(buf + BTH_MSG_LEN);
	/* MR-PARSE-6: reserved bits of the BTH (MR-HDR-3, -5, -6) */
	if ((mr_get8(buf + BTH_VER) & 0x0f) ||
	    (out->bth.flags & ~MR_BTH_F_ALL) ||
	    (out->bth.dqpn & ~MR_QPN_MASK) || (out->bth.sqpn & ~MR_QPN_MASK))
		return MR_PARSE_FIELD;

	p = buf + MR_BTH_LEN;
	out->pth.path_id = mr_get16(p + PTH_PATH_ID);
	out->pth.pflags = mr_get8(p + PTH_PFLAGS);
	out->pth.plane = mr_get8(p + PTH_PLANE);
	out->pth.ppsn = mr_get32(p + PTH_PPSN);
	/* MR-HDR-14 */
	if (out->pth.pflags)
		return MR_PARSE_FIELD;
	p += MR_PTH_LEN;

	memset(&out->reth, 0, sizeof(out->reth));
	memset(&out->atom, 0, sizeof(out->atom));
	memset(&out->deth, 0, sizeof(out->deth));
	out->imm = 0;
	out->inv_rkey = 0;
	out->atomic_orig = 0;
	out->aeth.syndrome = 0;
	out->aeth.rnr_timer = 0;
	out->aeth.nblocks = 0;
	out->aeth.nak_msn = 0;
	out->aeth.cum_ssn = 0;
	out->aeth.cum_msn = 0;
	out->aeth.rate_hint = 0;
	out->aeth.ecn_ce = 0;

	if (x & X_RETH) {
		out->reth.vaddr = mr_get64(p + RETH_VADDR);
		out->reth.rkey = mr_get32(p + RETH_RKEY);
		out->reth.dma_len = mr_get32(p + RETH_DMA_LEN);
		p += MR_RETH_LEN;
	}
	if (x & X_ATOMETH) {
		out->atom.vaddr = mr_get64(p + ATOM_VADDR);
		out->atom.rkey = mr_get32(p + ATOM_RKEY);
		out->atom.swap_add = mr_get64(p + ATOM_SWAP_ADD);
		out->atom.compare = mr_get64(p + ATOM_COMPARE);
		p += MR_ATOMETH_LEN;
	}
	if (x & X_ATOMACK) {
		out->atomic_orig = mr_get64(p);
		p += MR_ATOMACKETH_LEN;
	}
	if (x & X_DETH) {
		out->deth.qkey = mr_get32(p + DETH_QKEY);
		if (mr_get32(p + DETH_RSVD)) /* MR-EXT-7 */
			return MR_PARSE_FIELD;
		p += MR_DETH_LEN;
	}
	if (x & X_AETH) {
		/* MR-ACK-1, MR-ACK-9: nblocks bounded, the blocks within
		 * their byte limit, then the exact length (an ACK carries no
		 * payload: MR-PARSE-7 below). */
		v = mr_get8(p + AETH_NBLOCKS);
		if (v > MR_ACK_MAX_BLOCKS)
			return MR_PARSE_FIELD;
		rc = parse_aeth(p, end, &out->aeth, &p);
		if (rc)
			return rc;
		if ((size_t)(p - buf) - hlen > MR_ACK_MAX_SACK_BYTES)
			return MR_PARSE_FIELD;
	}
	if (x & X_IMMDT) {
		memcpy(&out->imm, p, MR_IMMDT_LEN);
		p += MR_IMMDT_LEN;
	}
	if (x & X_IETH) {
		out->inv_rkey = mr_get32(p);
		p += MR_IETH_LEN;
	}

	/* MR-HDR-15: the payload is what lies between headers and ICRC. */
	if (!(x & X_PAYLOAD) && p != end) /* MR-PARSE-7 */
		return MR_PARSE_FIELD;
	if ((size_t)(end - p) > MR_WIRE_MAX_PAYLOAD) /* MR-HDR-13 */
		return MR_PARSE_FIELD;
	out->payload = p;
	out->payload_len = (uint32_t)(end - p);
	return check_lengths(out, x);
}

const char *mr_wire_op_name(uint8_t opcode)
{
	switch (opcode) {
	case MR_OP_SEND:
		return "SEND";
	case MR_OP_SEND_IMM:
		return "SEND_IMM";
	case MR_OP_SEND_INV:
		return "SEND_INV";
	case MR_OP_WRITE:
		return "WRITE";
	case MR_OP_WRITE_IMM:
		return "WRITE_IMM";
	case MR_OP_READ_REQ:
		return "READ_REQ";
	case MR_OP_READ_RESP:
		return "READ_RESP";
	case MR_OP_ATOMIC_CS:
		return "ATOMIC_CS";
	case MR_OP_ATOMIC_FA:
		return "ATOMIC_FA";
	case MR_OP_ATOMIC_RESP:
		return "ATOMIC_RESP";
	case MR_OP_ATOMIC_WRITE:
		return "ATOMIC_WRITE";
	case MR_OP_ACK:
		return "ACK";
	case MR_OP_PROBE:
		return "PROBE";
	case MR_OP_UD_SEND:
		return "UD_SEND";
	case MR_OP_UD_SEND_IMM:
		return "UD_SEND_IMM";
	}
	return "UNKNOWN";
}

static const char *const nak_names[] = { "ACK",	       "SEQ_ERR", "RNR",
					 "REM_ACCESS", "INV_REQ", "REM_OP" };

/* snprintf that appends at *len and keeps counting past cap. */
__attribute__((format(printf, 4, 5))) static void
fmt_add(char *buf, size_t cap, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*len < cap ? buf + *len : NULL,
		      *len < cap ? cap - *len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

static unsigned popcount_bitmap(const uint8_t *b)
{
	unsigned i, n = 0;

	for (i = 0; i < MR_SACK_BYTES; i++)
		n += (unsigned)__builtin_popcount(b[i]);
	return n;
}

size_t mr_wire_format(const struct mr_pkt *pkt, char *buf, size_t cap)
{
	const struct mr_bth *b = &pkt->bth;
	const struct mr_aeth *a = &pkt->aeth;
	int x = opcode_ext(b->opcode);
	size_t len = 0;
	unsigned i;

	if (cap)
		buf[0] = 0;
	fmt_add(buf, cap, &len,
		"%s 0x%" PRIx32 "->0x%" PRIx32 " ssn=%" PRIu32 " msn=%" PRIu32,
		mr_wire_op_name(b->opcode), b->sqpn, b->dqpn, b->ssn, b->msn);
	if (b->rsn)
		fmt_add(buf, cap, &len, " rsn=%" PRIu32, b->rsn);
	if (x >= 0 && !(x & X_AETH))
		fmt_add(buf, cap, &len,
			" off=%" PRIu32 " len=%" PRIu32 "/%" PRIu32, b->offset,
			pkt->payload_len, b->msg_len);
	fmt_add(buf, cap, &len, " path=%u ppsn=%" PRIu32,
		(unsigned)pkt->pth.path_id, pkt->pth.ppsn);
	if (pkt->pth.plane)
		fmt_add(buf, cap, &len, " plane=%u", (unsigned)pkt->pth.plane);
	if (b->flags)
		fmt_add(buf, cap, &len, " flags=%s%s%s%s%s",
			b->flags & MR_BTH_F_SOLICITED ? "S" : "",
			b->flags & MR_BTH_F_ACK_REQ ? "A" : "",
			b->flags & MR_BTH_F_RETX ? "R" : "",
			b->flags & MR_BTH_F_GBN ? "G" : "",
			b->flags & MR_BTH_F_IDLE ? "I" : "");
	if (x < 0)
		return len;
	if (x & X_RETH)
		fmt_add(buf, cap, &len,
			" va=0x%" PRIx64 " rkey=0x%" PRIx32 " dlen=%" PRIu32,
			pkt->reth.vaddr, pkt->reth.rkey, pkt->reth.dma_len);
	if (x & X_ATOMETH)
		fmt_add(buf, cap, &len,
			" va=0x%" PRIx64 " rkey=0x%" PRIx32
			" swap_add=0x%" PRIx64 " cmp=0x%" PRIx64,
			pkt->atom.vaddr, pkt->atom.rkey, pkt->atom.swap_add,
			pkt->atom.compare);
	if (x & X_ATOMACK)
		fmt_add(buf, cap, &len, " orig=0x%" PRIx64, pkt->atomic_orig);
	if (x & X_DETH)
		fmt_add(buf, cap, &len, " qkey=0x%" PRIx32, pkt->deth.qkey);
	if (x & X_IMMDT) {
		const uint8_t *im = (const uint8_t *)&pkt->imm;

		fmt_add(buf, cap, &len, " imm=%02x%02x%02x%02x", im[0], im[1],
			im[2], im[3]);
	}
	if (x & X_IETH)
		fmt_add(buf, cap, &len, " inv_rkey=0x%" PRIx32, pkt->inv_rkey);
	if (x & X_AETH) {
		fmt_add(buf, cap, &len, " %s",
			a->syndrome <= MR_NAK_REM_OP ? nak_names[a->syndrome]
						     : "NAK?");
		if (a->syndrome == MR_NAK_RNR)
			fmt_add(buf, cap, &len, "(t=%u)",
				(unsigned)a->rnr_timer);
		if (a->syndrome)
			fmt_add(buf, cap, &len, " nak_msn=%" PRIu32,
				a->nak_msn);
		fmt_add(buf, cap, &len,
			" cum_ssn=%" PRIu32 " cum_msn=%" PRIu32 " rate=%" PRIu32
			" ce=%u blocks=%u",
			a->cum_ssn, a->cum_msn, a->rate_hint,
			(unsigned)a->ecn_ce, (unsigned)a->nblocks);
		for (i = 0; i < a->nblocks && i < MR_ACK_MAX_BLOCKS; i++)
			fmt_add(buf, cap, &len, " %u:%" PRIu32 "+%u",
				(unsigned)a->blocks[i].path_id,
				a->blocks[i].cum_ppsn,
				popcount_bitmap(a->blocks[i].bitmap));
	}
	return len;
}
