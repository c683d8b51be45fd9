/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpus of fuzz_parse: valid packets of every opcode
 * (small and zero-length messages, ACKs with 0, 1 and 16 SACK blocks, NAKs
 * of every code), from a fixed seed, so the output is reproducible and
 * committed as tests/fuzz/corpus/parse/. Usage: gen_corpus <dir>
 * (the test "fuzz_corpus_fresh" checks the committed files match).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_wire.h"
#include "mr_wire_gen.h"

static uint8_t payload[MR_WIRE_MAX_PAYLOAD];
static uint8_t pktbuf[MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN +
		      MR_ACK_MAX_PATHS * MR_SACK_BLOCK_LEN +
		      MR_WIRE_MAX_PAYLOAD + MR_ICRC_LEN];

static const char *op_name(uint8_t op)
{
	switch (op) {
	case MR_OP_SEND:
		return "send";
	case MR_OP_SEND_IMM:
		return "send_imm";
	case MR_OP_WRITE:
		return "write";
	case MR_OP_WRITE_IMM:
		return "write_imm";
	case MR_OP_READ_REQ:
		return "read_req";
	case MR_OP_READ_RESP:
		return "read_resp";
	case MR_OP_ATOMIC_CS:
		return "atomic_cs";
	case MR_OP_ATOMIC_FA:
		return "atomic_fa";
	case MR_OP_ATOMIC_RESP:
		return "atomic_resp";
	case MR_OP_ACK:
		return "ack";
	case MR_OP_UD_SEND:
		return "ud_send";
	case MR_OP_UD_SEND_IMM:
		return "ud_send_imm";
	}
	return "unknown";
}

static int write_pkt(const char *dir, const char *name, unsigned idx,
		     const struct mr_pkt *p)
{
	char path[4096];
	size_t n = mr_wire_encode(p, pktbuf, sizeof(pktbuf));
	struct mr_pkt q;
	FILE *f;

	if (!n || mr_wire_parse(pktbuf, n, &q) != MR_PARSE_OK) {
		fprintf(stderr, "gen_corpus: generated an invalid %s\n", name);
		return -1;
	}
	snprintf(path, sizeof(path), "%s/%s-%02u", dir, name, idx);
	f = fopen(path, "wb");
	if (!f) {
		fprintf(stderr, "gen_corpus: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fwrite(pktbuf, 1, n, f) != n || fclose(f)) {
		fprintf(stderr, "gen_corpus: %s: write failed\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mr_gen_rng r = { 0x6d657461726f6365ull };
	struct mr_pkt p;
	unsigned i, k, idx;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus <dir>\n");
		return 2;
	}
	for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
		uint8_t op = mr_gen_opcodes[i];

		idx = 0;
		for (k = 0; k < 4; k++) {
			/* payloads up to 48 bytes keep the corpus small;
			 * the fuzzer grows them */
			mr_gen_pkt(&r, op, &p, payload, k ? 48 : 0);
			rc |= write_pkt(argv[1], op_name(op), idx++, &p);
		}
		if (op == MR_OP_ACK) {
			unsigned s;

			for (s = 0; s <= MR_NAK_REM_OP; s++) {
				mr_gen_pkt(&r, op, &p, payload, 0);
				p.aeth.syndrome = (uint8_t)s;
				p.aeth.rnr_timer =
					s == MR_NAK_RNR ? (uint8_t)(s + 10) : 0;
				p.aeth.nak_msn = s ? p.aeth.nak_msn | 1 : 0;
				p.aeth.nblocks = (uint8_t)(s % 2);
				rc |= write_pkt(argv[1], "ack", idx++, &p);
			}
			mr_gen_pkt(&r, op, &p, payload, 0);
			p.aeth.nblocks = MR_ACK_MAX_PATHS;
			for (s = 0; s < MR_ACK_MAX_PATHS; s++)
				p.aeth.blocks[s].path_id = (uint16_t)s;
			rc |= write_pkt(argv[1], "ack", idx++, &p);
		}
	}
	return rc ? 1 : 0;
}
