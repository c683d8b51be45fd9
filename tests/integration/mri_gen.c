// SPDX-License-Identifier: BSD-2-Clause
/* mri-verbs: the seeded generator of steps and the model of both
 * memories; both processes run it identically. */
#include "mri_verbs.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

const char *const mri_op_name[] = { "SEND", "SEND_IMM", "WRITE", "WRITE_IMM",
				    "READ", "CAS",	"FAA" };

/* ---- seeded generator (xorshift64*) ---- */

uint64_t mri_rnd(uint64_t *s)
{
	uint64_t x = *s;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	*s = x;
	return x * 0x2545f4914f6cdd1dull;
}

/* Uniform in [lo, hi]. */
uint32_t mri_rr(uint64_t *s, uint32_t lo, uint32_t hi)
{
	return lo + (uint32_t)(mri_rnd(s) % ((uint64_t)hi - lo + 1));
}

void mri_fill(uint8_t *p, size_t n, uint64_t s)
{
	size_t i;

	s |= 1;
	for (i = 0; i < n; i++)
		p[i] = (uint8_t)(mri_rnd(&s) >> 56);
}

/* ---- the generator and the model ---- */

/* Disjoint ranges of a dst region, so that the result of a step does not
 * depend on the placement order of different messages. */
struct bump {
	uint32_t cur, end;
};

static int take(struct bump *b, uint64_t *rng, uint32_t len, uint32_t align,
		uint32_t *off)
{
	uint32_t start = b->cur + mri_rr(rng, 0, 64);

	start = (start + align - 1) / align * align;
	if ((uint64_t)start + len > b->end)
		return -1;
	b->cur = start + len;
	*off = OFF_DST + start;
	return 0;
}

/* Splits len into n pieces of at least one byte. */
static void split(uint64_t *rng, uint32_t len, int n, struct sg *out)
{
	uint32_t rem = len;
	int i;

	for (i = 0; i < n - 1; i++) {
		out[i].len = mri_rr(rng, 1, rem - (n - 1 - i));
		if (out[i].len > rem / 2 + 1 && mri_rr(rng, 0, 1))
			out[i].len = rem / (n - i);
		rem -= out[i].len;
	}
	out[n - 1].len = rem;
}

static int pick_nsge(uint64_t *rng, uint32_t len)
{
	uint32_t max = mri_rr(rng, 0, 9) ? 4 : MAX_SGE;

	if (!len)
		return 0;
	return (int)mri_rr(rng, 1, len < max ? len : max);
}

static uint32_t pick_len(uint64_t *rng, uint32_t max)
{
	uint32_t r = mri_rr(rng, 0, 99);

	if (r < 8)
		return 0;
	if (r < 40)
		return mri_rr(rng, 1, 64);
	if (r < 75)
		return mri_rr(rng, 65, 9000);
	if (r < 95 || max <= 65536)
		return mri_rr(rng, 9001, 65536);
	return mri_rr(rng, 65537, max);
}

static uint8_t tmp[MAX_MSG];

static void gather(const uint8_t *m, const struct sg *sg, int n)
{
	uint32_t at = 0;
	int i;

	for (i = 0; i < n; i++) {
		memcpy(tmp + at, m + sg[i].off, sg[i].len);
		at += sg[i].len;
	}
}

static void scatter(uint8_t *m, const struct sg *sg, int n, uint32_t len)
{
	uint32_t at = 0;
	int i;

	for (i = 0; i < n && at < len; i++) {
		uint32_t c = sg[i].len < len - at ? sg[i].len : len - at;

		memcpy(m + sg[i].off, tmp + at, c);
		at += c;
	}
}

/* What the op does to both memories, in posting order (RC executes
 * requests in order at the responder). */
static void model_apply(const struct op *o)
{
	uint64_t old, v;

	switch (o->kind) {
	case OP_SEND:
	case OP_SEND_IMM:
		gather(mri_img[0], o->sge, o->nsge);
		scatter(mri_img[1], o->rsge, o->rnsge, o->len);
		break;
	case OP_WRITE:
	case OP_WRITE_IMM:
		gather(mri_img[0], o->sge, o->nsge);
		memcpy(mri_img[1] + o->roff, tmp, o->len);
		break;
	case OP_READ:
		memcpy(tmp, mri_img[1] + o->roff, o->len);
		scatter(mri_img[0], o->sge, o->nsge, o->len);
		break;
	case OP_CAS:
	case OP_FAA:
		memcpy(&old, mri_img[1] + o->roff, 8);
		if (o->kind == OP_FAA)
			v = old + o->cmp;
		else
			v = old == o->cmp ? o->swp : old;
		memcpy(mri_img[1] + o->roff, &v, 8);
		memcpy(mri_img[0] + o->sge[0].off, &old, 8);
		break;
	default:
		break;
	}
}

int mri_has_recv(enum opk k)
{
	return k == OP_SEND || k == OP_SEND_IMM || k == OP_WRITE_IMM;
}

struct gen {
	uint64_t rng;
	struct bump rb, qb; /* responder's and requester's dst */
	uint32_t max_inline;
	uint32_t last_w, last_wlen; /* last WRITE target, for READ-after */
	int mixed;
};

/* One op of kind k and length len; 0, or -1 when the step is full. */
static int gen_op(struct gen *g, struct step *st, enum opk k, uint32_t len)
{
	struct op *o = &st->ops[st->nops];
	uint64_t *r = &g->rng;
	int i;

	if (st->nops == MAX_OPS)
		return -1;
	memset(o, 0, sizeof(*o));
	o->kind = k;
	o->len = len;
	o->signaled = g->mixed ? mri_rr(r, 0, 2) != 0 : 1;
	o->fence = g->mixed && !mri_rr(r, 0, 9);
	if (k == OP_CAS || k == OP_FAA) {
		o->len = 8;
		o->roff = OFF_ATOM + 8 * mri_rr(r, 0, ATOM_SLOTS - 1);
		o->nsge = 1;
		o->sge[0].len = 8;
		if (take(&g->qb, r, 8, 8, &o->sge[0].off))
			return -1;
		o->cmp = mri_rnd(r);
		o->swp = mri_rnd(r);
		if (k == OP_CAS && mri_rr(r, 0, 1)) /* a compare that matches */
			memcpy(&o->cmp, mri_img[1] + o->roff, 8);
		model_apply(o);
		st->nops++;
		return 0;
	}
	o->nsge = pick_nsge(r, len);
	split(r, len, o->nsge, o->sge);
	if (k == OP_READ) {
		for (i = 0; i < o->nsge; i++)
			if (take(&g->qb, r, o->sge[i].len, 1, &o->sge[i].off))
				return -1;
		if (g->last_wlen >= len && mri_rr(r, 0, 2) == 0)
			o->roff = g->last_w + mri_rr(r, 0, g->last_wlen - len);
		else
			o->roff = OFF_SRC + mri_rr(r, 0, REGION - len);
	} else {
		for (i = 0; i < o->nsge; i++)
			o->sge[i].off =
				OFF_SRC + mri_rr(r, 0, REGION - o->sge[i].len);
		o->inl = len <= g->max_inline && mri_rr(r, 0, 1);
	}
	if (k == OP_WRITE || k == OP_WRITE_IMM) {
		if (take(&g->rb, r, len, 1, &o->roff))
			return -1;
		g->last_w = o->roff;
		g->last_wlen = len;
	}
	if (k == OP_SEND_IMM || k == OP_WRITE_IMM)
		o->imm = (uint32_t)mri_rnd(r);
	if (k == OP_SEND || k == OP_SEND_IMM) {
		uint32_t cap = len + mri_rr(r, 0, 64);

		o->rnsge = pick_nsge(r, cap);
		split(r, cap, o->rnsge, o->rsge);
		for (i = 0; i < o->rnsge; i++)
			if (take(&g->rb, r, o->rsge[i].len, 1, &o->rsge[i].off))
				return -1;
	}
	if (k == OP_WRITE_IMM && mri_rr(r, 0, 1)) {
		/* A receive buffer that a WRITE_IMM must leave alone. */
		o->rnsge = 1;
		o->rsge[0].len = mri_rr(r, 1, 64);
		if (take(&g->rb, r, o->rsge[0].len, 1, &o->rsge[0].off))
			return -1;
	}
	model_apply(o);
	st->nops++;
	return 0;
}

/* Step k, the same in both processes; advances the model. */
void mri_gen_step(int k, uint32_t max_inline, struct step *st)
{
	struct gen g = { .rng = mri_seed ^ (0x9e3779b97f4a7c15ull * (k + 1)),
			 .max_inline = max_inline };
	uint64_t *r = &g.rng;
	const char *what;
	int i, ok = 0;

	/* The last 4 KiB of the responder's dst is the end marker's. */
	g.rb.cur = mri_rr(r, 0, 4095);
	g.rb.end = REGION - 4096;
	g.qb.cur = mri_rr(r, 0, 4095);
	g.qb.end = REGION;
	st->k = k;
	st->nops = 0;
	switch (k) {
	case 0:
	case 1:
		what = k ? "SEND_IMM" : "SEND";
		for (i = 0; i < 12 && !ok; i++)
			ok = gen_op(&g, st, k ? OP_SEND_IMM : OP_SEND,
				    i < 2 ? (uint32_t)i : pick_len(r, 65536));
		break;
	case 2:
		what = "WRITE, WRITE_IMM";
		for (i = 0; i < 16 && !ok; i++)
			ok = gen_op(&g, st, i & 1 ? OP_WRITE_IMM : OP_WRITE,
				    i < 2 ? 0 : pick_len(r, 65536));
		break;
	case 3:
		what = "READ";
		for (i = 0; i < 12 && !ok; i++)
			ok = gen_op(&g, st, OP_READ,
				    i == 0 ? 0 : pick_len(r, 65536));
		break;
	case 4:
		what = "CMP_AND_SWP, FETCH_AND_ADD";
		for (i = 0; i < 24 && !ok; i++)
			ok = gen_op(&g, st, i & 1 ? OP_FAA : OP_CAS, 8);
		break;
	case 5:
		what = "large";
		gen_op(&g, st, OP_WRITE, MAX_MSG);
		gen_op(&g, st, OP_READ, MAX_MSG - 12345);
		gen_op(&g, st, OP_SEND, 3 * (REGION - MAX_MSG) / 4);
		gen_op(&g, st, OP_WRITE_IMM, 65536);
		break;
	default:
		what = "mixed";
		g.mixed = 1;
		for (i = 0; i < MAX_OPS - 1 && !ok; i++)
			ok = gen_op(&g, st,
				    (enum opk)mri_rr(r, 0, OP_NKINDS - 1),
				    pick_len(r, 512 << 10));
		break;
	}
	/* Every step ends with a signalled SEND_IMM: its receive completion
	 * says that every earlier message of the step is in memory. */
	g.mixed = 0;
	g.max_inline = 0;
	g.rb.cur = REGION - 4096;
	g.rb.end = REGION;
	gen_op(&g, st, OP_SEND_IMM, mri_rr(r, 0, 32));
	st->ops[st->nops - 1].imm = 0xc0de0000u | (uint32_t)k;
	snprintf(st->what, sizeof(st->what), "%s", what);
}
