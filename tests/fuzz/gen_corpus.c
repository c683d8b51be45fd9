/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Writes the seed corpora of the fuzz targets, reproducibly (fixed seed),
 * committed as tests/fuzz/corpus/ (the test "fuzz_corpus_fresh" checks
 * the committed files match). Usage: gen_corpus <dir>
 *   <dir>/parse/      fuzz_parse: valid packets of every opcode (small and
 *                     zero-length messages, ACKs with 0, 1 and 16 SACK
 *                     blocks, NAKs of every code);
 *   <dir>/responder/  fuzz_responder: scripts in that target's input
 *                     format (see fuzz_responder.c): one crafted packet of
 *                     every opcode to every QP, then a time step; and a
 *                     posted send of every kind followed by an ACK.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <string.h>

#include "mr_wire.h"
#include "mr_wire_gen.h"

static uint8_t payload[MR_WIRE_MAX_PAYLOAD];
static uint8_t pktbuf[MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN +
		      MR_ACK_MAX_SACK_BYTES + MR_WIRE_MAX_PAYLOAD +
		      MR_ICRC_LEN];

static const char *op_name(uint8_t op)
{
	switch (op) {
	case MR_OP_SEND:
		return "send";
	case MR_OP_SEND_IMM:
		return "send_imm";
	case MR_OP_SEND_INV:
		return "send_inv";
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
	case MR_OP_ATOMIC_WRITE:
		return "atomic_write";
	case MR_OP_ACK:
		return "ack";
	case MR_OP_PROBE:
		return "probe";
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
	if (snprintf(path, sizeof(path), "%s/%s-%02u", dir, name, idx) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "gen_corpus: %s: path too long\n", dir);
		return -1;
	}
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

/* ---- fuzz_responder scripts ---- */

struct script {
	uint8_t b[512];
	size_t n;
};

static void put(struct script *s, unsigned nbytes, uint64_t v)
{
	while (nbytes--)
		s->b[s->n++] = (uint8_t)(v >> (8 * nbytes));
}

/* fuzz_responder's opcode table order and QP count */
#define RESP_NOPS 12
#define RESP_NQP 4

static int write_script(const char *dir, const char *name, unsigned idx,
			const struct script *s)
{
	char path[4096];
	FILE *f;

	if (snprintf(path, sizeof(path), "%s/%s-%02u", dir, name, idx) >=
	    (int)sizeof(path)) {
		fprintf(stderr, "gen_corpus: %s: path too long\n", dir);
		return -1;
	}
	f = fopen(path, "wb");
	if (!f || fwrite(s->b, 1, s->n, f) != s->n || fclose(f)) {
		fprintf(stderr, "gen_corpus: %s: write failed\n", path);
		return -1;
	}
	return 0;
}

/* A crafted-packet record (kind 1) of fuzz_responder: opcode index op
 * (its table order = mr_gen_opcodes order) to QP index qp, fields at their
 * expected values, a 64-byte payload. */
static void crafted_record(struct script *s, unsigned op, unsigned qp)
{
	unsigned sel, i;

	/* sel % 12 = op, (sel >> 4) % 4 = qp, no "random field" bits */
	for (sel = 0; sel < 64; sel++)
		if (sel % RESP_NOPS == op && (sel >> 4) % RESP_NQP == qp &&
		    !(sel & 0x09))
			break;
	if (sel == 64)
		for (sel = 0; sel < 64; sel++)
			if (sel % RESP_NOPS == op &&
			    (sel >> 4) % RESP_NQP == qp)
				break;
	put(s, 1, 1);
	put(s, 1, sel);
	put(s, 1, MR_BTH_F_ACK_REQ); /* flags */
	put(s, 1, 0);		     /* ssn = expected */
	put(s, 1, 0);		     /* msn */
	put(s, 1, 0);		     /* rsn */
	put(s, 1, 0);		     /* path */
	put(s, 2, 0);		     /* ppsn */
	put(s, 2, 64);		     /* payload length */
	put(s, 1, 1);		     /* msg_len = payload */
	put(s, 1, 0);		     /* offset as computed */
	switch (mr_gen_opcodes[op]) {
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
	case MR_OP_READ_REQ:
		put(s, 1, 0);	  /* region 0, its key, inside */
		put(s, 2, 0x100); /* offset in the region */
		break;
	case MR_OP_ATOMIC_CS:
	case MR_OP_ATOMIC_FA:
	case MR_OP_ATOMIC_WRITE:
		put(s, 1, 0);
		put(s, 2, 0x200);
		put(s, 8, 5); /* swap/add */
		put(s, 8, 0); /* compare */
		break;
	case MR_OP_ATOMIC_RESP:
		put(s, 8, 0x1122334455667788ull);
		break;
	case MR_OP_ACK:
		put(s, 1, 0);	  /* syndrome */
		put(s, 1, 1);	  /* cum_ssn = sq_psn + 1 */
		put(s, 1, 1);	  /* cum_msn */
		put(s, 4, 50000); /* rate hint */
		put(s, 2, 1);	  /* ecn_ce */
		put(s, 1, 1);	  /* one block */
		put(s, 1, 1);	  /* cum_ppsn */
		put(s, 4, 0x05);  /* bitmap */
		break;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		put(s, 2, 0x33); /* source QPN */
		break;
	}
	put(s, 4, 0xdeadbeef); /* imm */
	for (i = 0; i < 64; i++)
		put(s, 1, i * 7 + op);
}

static int gen_responder(const char *dir)
{
	struct script s;
	unsigned op, qp, idx = 0;
	int rc = 0;

	for (qp = 0; qp < RESP_NQP; qp++) {
		for (op = 0; op < RESP_NOPS; op++) {
			s.n = 0;
			crafted_record(&s, op, qp);
			put(&s, 1, 3);	/* time step */
			put(&s, 2, 20); /* 20 us */
			rc |= write_script(dir, "crafted", idx++, &s);
		}
	}
	/* A posted send of every kind (fuzz_responder's post_send table
	 * has 7 entries) on each RC QP, then time, then an ACK for it. */
	idx = 0;
	for (qp = 0; qp < RESP_NQP; qp++) {
		for (op = 0; op < 7; op++) {
			s.n = 0;
			put(&s, 1, 4);		  /* post send */
			put(&s, 1, op << 2 | qp); /* opcode, QP */
			put(&s, 1, 0);		  /* no fence */
			put(&s, 2, 0x40);	  /* local offset */
			put(&s, 2, 100);	  /* length */
			put(&s, 4, 0x01020304);	  /* imm */
			put(&s, 1, 0);		  /* remote: region 0 */
			put(&s, 2, 0x80);
			put(&s, 8, 1); /* compare/add */
			put(&s, 8, 2); /* swap */
			put(&s, 1, 3); /* time step */
			put(&s, 2, 5);
			crafted_record(&s, 9 /* ACK */, qp);
			rc |= write_script(dir, "send", idx++, &s);
		}
	}
	return rc;
}

static int make_dir(const char *base, const char *sub, char *out, size_t n)
{
	snprintf(out, n, "%s/%s", base, sub);
	if (mkdir(out, 0755) && errno != EEXIST) {
		fprintf(stderr, "gen_corpus: %s: %s\n", out, strerror(errno));
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct mr_gen_rng r = { 0x6d657461726f6365ull };
	char pdir[4096], rdir[4096];
	struct mr_pkt p;
	unsigned i, k, idx;
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus <dir>\n");
		return 2;
	}
	if (make_dir(argv[1], "parse", pdir, sizeof(pdir)) ||
	    make_dir(argv[1], "responder", rdir, sizeof(rdir)))
		return 1;
	rc |= gen_responder(rdir);
	for (i = 0; i < MR_GEN_NUM_OPCODES; i++) {
		uint8_t op = mr_gen_opcodes[i];

		idx = 0;
		for (k = 0; k < 4; k++) {
			/* payloads up to 48 bytes keep the corpus small;
			 * the fuzzer grows them */
			mr_gen_pkt(&r, op, &p, payload, k ? 48 : 0);
			rc |= write_pkt(pdir, op_name(op), idx++, &p);
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
				rc |= write_pkt(pdir, "ack", idx++, &p);
			}
			/* MR-ACK-9: every path without holes or marks, a
			 * sprayed connection's ACK (MR-ACK-13: 2 bytes a
			 * block after the first), then the most block bytes
			 * (cum_ppsn 2^31 apart: 5-byte varints) */
			mr_gen_pkt(&r, op, &p, payload, 0);
			p.aeth.nblocks = MR_ACK_MAX_BLOCKS;
			for (s = 0; s < MR_ACK_MAX_BLOCKS; s++) {
				p.aeth.blocks[s].path_id = (uint16_t)s;
				p.aeth.blocks[s].ce_cum = 0;
				p.aeth.blocks[s].cum_ppsn = 1000 + s % 3;
				memset(p.aeth.blocks[s].bitmap, 0,
				       MR_SACK_BYTES);
			}
			rc |= write_pkt(pdir, "ack", idx++, &p);
			p.aeth.nblocks = MR_ACK_MAX_SACK_BYTES /
					 (MR_SACK_BLOCK_MAX_LEN + 1);
			for (s = 0; s < p.aeth.nblocks; s++) {
				p.aeth.blocks[s].ce_cum = (uint16_t)(s + 1);
				p.aeth.blocks[s].cum_ppsn = s & 1 ? 0x80000000u : 0;
				p.aeth.blocks[s].bitmap[MR_SACK_BYTES - 1] =
					(uint8_t)(s + 1);
			}
			rc |= write_pkt(pdir, "ack", idx++, &p);
		}
	}
	return rc ? 1 : 0;
}
