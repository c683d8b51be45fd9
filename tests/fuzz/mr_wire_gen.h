/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Random VALID packets of every opcode, from a seeded generator: shared by
 * tests/unit/test_wire.c (round trips), the seed-corpus generator and the
 * fuzz targets. Header-only (static functions) so each user links nothing
 * extra. "Valid" means: follows every rule mr_wire_parse() checks
 * (docs/spec/wire.md MR-HDR-*, MR-EXT-*, MR-ACK-*).
 */
#ifndef MR_WIRE_GEN_H
#define MR_WIRE_GEN_H

#include <stdint.h>
#include <string.h>

#include "mr_wire.h"

/* Every opcode of enum mr_wire_opcode. */
static const uint8_t mr_gen_opcodes[] = {
	MR_OP_SEND,	   MR_OP_SEND_IMM,  MR_OP_WRITE,     MR_OP_WRITE_IMM,
	MR_OP_READ_REQ,	   MR_OP_READ_RESP, MR_OP_ATOMIC_CS, MR_OP_ATOMIC_FA,
	MR_OP_ATOMIC_RESP, MR_OP_ACK,	    MR_OP_UD_SEND,   MR_OP_UD_SEND_IMM,
	MR_OP_PROBE,	   MR_OP_SEND_INV,  MR_OP_ATOMIC_WRITE,
};
#define MR_GEN_NUM_OPCODES (sizeof(mr_gen_opcodes) / sizeof(mr_gen_opcodes[0]))

/* splitmix64: small, seeded, reproducible. */
struct mr_gen_rng {
	uint64_t s;
};

static inline uint64_t mr_gen_next(struct mr_gen_rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* A message length: often 0 or small, sometimes up to 2 GiB. */
static inline uint32_t mr_gen_msg_len(struct mr_gen_rng *r)
{
	switch (mr_gen_next(r) % 4) {
	case 0:
		return 0;
	case 1:
		return (uint32_t)(mr_gen_next(r) % 64) + 1;
	case 2:
		return (uint32_t)(mr_gen_next(r) % (1u << 20)) + 1;
	}
	return (uint32_t)(mr_gen_next(r) % ((uint64_t)MR_WIRE_MAX_MSG_LEN + 1));
}

/*
 * Fill *pkt with a valid packet of the given opcode, random fields. The
 * payload (if any) points into payload_buf, whose first max_payload bytes
 * the generator fills with random bytes (max_payload <=
 * MR_WIRE_MAX_PAYLOAD).
 */
static inline void mr_gen_pkt(struct mr_gen_rng *r, uint8_t opcode,
			      struct mr_pkt *pkt, uint8_t *payload_buf,
			      uint32_t max_payload)
{
	uint32_t i, j, plen = 0, cap, room;

	memset(pkt, 0, sizeof(*pkt));
	for (i = 0; i < max_payload; i++)
		payload_buf[i] = (uint8_t)mr_gen_next(r);
	pkt->bth.version = MR_WIRE_VERSION;
	pkt->bth.opcode = opcode;
	pkt->bth.flags = (uint16_t)(mr_gen_next(r) & MR_BTH_F_ALL);
	pkt->bth.dqpn = (uint32_t)mr_gen_next(r) & MR_QPN_MASK;
	pkt->bth.sqpn = (uint32_t)mr_gen_next(r) & MR_QPN_MASK;
	pkt->bth.ssn = (uint32_t)mr_gen_next(r);
	pkt->bth.msn = (uint32_t)mr_gen_next(r);
	pkt->pth.path_id = (uint16_t)mr_gen_next(r);
	pkt->pth.ppsn = (uint32_t)mr_gen_next(r);
	pkt->pth.plane = (uint8_t)mr_gen_next(r);

	switch (opcode) {
	case MR_OP_SEND:
	case MR_OP_SEND_IMM:
	case MR_OP_SEND_INV:
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
	case MR_OP_READ_RESP:
		pkt->bth.msg_len = mr_gen_msg_len(r);
		if (pkt->bth.msg_len && max_payload) {
			cap = pkt->bth.msg_len < max_payload ? pkt->bth.msg_len
							     : max_payload;
			plen = 1 + (uint32_t)(mr_gen_next(r) % cap);
			pkt->bth.offset =
				(uint32_t)(mr_gen_next(r) %
					   ((uint64_t)pkt->bth.msg_len - plen +
					    1));
		} else {
			/* A zero-length message (MR-HDR-11); also what a
			 * caller allowing no payload gets. */
			pkt->bth.msg_len = 0;
		}
		if (opcode == MR_OP_SEND || opcode == MR_OP_SEND_IMM ||
		    opcode == MR_OP_SEND_INV)
			pkt->bth.rsn = (uint32_t)mr_gen_next(r);
		if (opcode == MR_OP_SEND_INV)
			pkt->inv_rkey = (uint32_t)mr_gen_next(r);
		if (opcode == MR_OP_WRITE || opcode == MR_OP_WRITE_IMM) {
			pkt->reth.vaddr = mr_gen_next(r);
			pkt->reth.rkey = (uint32_t)mr_gen_next(r);
			pkt->reth.dma_len = pkt->bth.msg_len;
		}
		if (opcode == MR_OP_SEND_IMM || opcode == MR_OP_WRITE_IMM)
			pkt->imm = (uint32_t)mr_gen_next(r);
		break;
	case MR_OP_READ_REQ:
		pkt->bth.msg_len = mr_gen_msg_len(r);
		pkt->reth.vaddr = mr_gen_next(r);
		pkt->reth.rkey = (uint32_t)mr_gen_next(r);
		pkt->reth.dma_len = pkt->bth.msg_len;
		break;
	case MR_OP_ATOMIC_CS:
	case MR_OP_ATOMIC_FA:
	case MR_OP_ATOMIC_WRITE:
		pkt->bth.msg_len = MR_WIRE_ATOMIC_LEN;
		pkt->atom.vaddr = mr_gen_next(r) & ~7ull;
		pkt->atom.rkey = (uint32_t)mr_gen_next(r);
		pkt->atom.swap_add = mr_gen_next(r);
		if (opcode == MR_OP_ATOMIC_CS)
			pkt->atom.compare = mr_gen_next(r);
		break;
	case MR_OP_ATOMIC_RESP:
		pkt->bth.msg_len = MR_WIRE_ATOMIC_LEN;
		pkt->atomic_orig = mr_gen_next(r);
		break;
	case MR_OP_ACK:
		pkt->aeth.syndrome = (uint8_t)(mr_gen_next(r) % 6);
		if (pkt->aeth.syndrome == MR_NAK_RNR)
			pkt->aeth.rnr_timer = (uint8_t)(mr_gen_next(r) % 32);
		if (pkt->aeth.syndrome != MR_NAK_NONE)
			pkt->aeth.nak_msn = (uint32_t)mr_gen_next(r);
		pkt->aeth.cum_ssn = (uint32_t)mr_gen_next(r);
		pkt->aeth.cum_msn = (uint32_t)mr_gen_next(r);
		pkt->aeth.rate_hint = (uint32_t)mr_gen_next(r);
		pkt->aeth.ecn_ce = (uint16_t)mr_gen_next(r);
		pkt->aeth.nblocks =
			(uint8_t)(mr_gen_next(r) % (MR_ACK_MAX_BLOCKS + 1));
		for (i = 0, room = MR_ACK_MAX_SACK_BYTES; i < pkt->aeth.nblocks;
		     i++) {
			struct mr_sack_block *b = &pkt->aeth.blocks[i];
			/* MR-ACK-12: a bitmap of n bytes, its last one not
			 * 0 (n = 0: no hole) */
			uint32_t n = (uint32_t)(mr_gen_next(r) %
						(MR_SACK_BYTES + 1));
			uint64_t v = mr_gen_next(r);
			size_t len;

			/* distinct path ids (MR-ACK-9) */
			b->path_id = (uint16_t)(mr_gen_next(r) % MR_MAX_PATHS);
			for (j = 0; j < i; j++) {
				if (pkt->aeth.blocks[j].path_id == b->path_id) {
					b->path_id =
						(uint16_t)((b->path_id + 1) %
							   MR_MAX_PATHS);
					j = (uint32_t)-1; /* recheck all */
				}
			}
			/* MR-ACK-13: a CE count or none; cum_ppsn anywhere,
			 * or a small step from the block before (the
			 * varint's 1- and 2-byte forms, both signs) */
			b->ce_cum = v & 1 ? (uint16_t)mr_gen_next(r) : 0;
			b->cum_ppsn = (uint32_t)mr_gen_next(r);
			if (i && v & 2)
				b->cum_ppsn = pkt->aeth.blocks[i - 1].cum_ppsn +
					      (uint32_t)(v >> 8) % 257 - 128;
			memset(b->bitmap, 0, MR_SACK_BYTES);
			for (j = 0; j < n; j++)
				b->bitmap[j] = (uint8_t)mr_gen_next(r);
			if (n)
				b->bitmap[n - 1] |= 0x80;
			/* within the ACK's bytes (MR-ACK-9) */
			len = mr_wire_sack_len(b, i ? b - 1 : NULL);
			if (len > room) {
				pkt->aeth.nblocks = (uint8_t)i;
				break;
			}
			room -= (uint32_t)len;
		}
		break;
	case MR_OP_PROBE: /* MR-PRB-1: no ssn, no msn, nothing else */
		pkt->bth.ssn = 0;
		pkt->bth.msn = 0;
		break;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		plen = (uint32_t)(mr_gen_next(r) % ((uint64_t)max_payload + 1));
		pkt->bth.msg_len = plen;
		pkt->deth.qkey = (uint32_t)mr_gen_next(r);
		if (opcode == MR_OP_UD_SEND_IMM)
			pkt->imm = (uint32_t)mr_gen_next(r);
		break;
	}
	pkt->payload = plen ? payload_buf : NULL;
	pkt->payload_len = plen;
}

#endif /* MR_WIRE_GEN_H */
