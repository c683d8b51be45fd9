// SPDX-License-Identifier: BSD-2-Clause
/* Verification and diagnostics of RC scenarios: see mrsim_scen_int.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_counters.h"
#include "mrsim_scen_int.h"

static const char *const region_name[R_N] = { "src", "recv", "target",
					      "read-dst", "inline" };

void mrsim_scen_check_cqes(struct scen *sc, int x, int recv)
{
	struct side *s = &sc->s[x];
	const struct mr_cqe *exp = recv ? s->exp_rq : s->exp_sq;
	size_t nexp = recv ? s->nexp_rq : s->nexp_sq, n = 0, i;
	const char *q = recv ? "recv" : "send";

	/* Every completion of the node names one of its QPs. */
	for (i = 0; x < 2 && !recv && i < s->nd->ncqe; i++) {
		unsigned k, known = 0;

		for (k = (unsigned)x; k < 2 * sc->nq; k += 2)
			known |= sc->s[k].qpn == s->nd->cqes[i].c.qp_num;
		if (!known) {
			mrsim_scen_fail(sc, "node %d: CQE #%zu names qpn %#x",
					x, i, s->nd->cqes[i].c.qp_num);
			return;
		}
	}
	for (i = 0; i < s->nd->ncqe && !sc->failed; i++) {
		const struct mr_cqe *g = &s->nd->cqes[i].c;
		const struct mr_cqe *e;

		if (!!g->is_recv != recv || g->qp_num != s->qpn)
			continue;
		if (n == nexp) {
			mrsim_scen_fail(
				sc,
				"side %d %s CQ: unexpected extra CQE #%zu "
				"wr_id %#llx status %d",
				x, q, n, (unsigned long long)g->wr_id,
				g->status);
			return;
		}
		e = &exp[n];
		if (g->wr_id != e->wr_id || g->status != e->status ||
		    g->opcode != e->opcode || g->qp_num != e->qp_num ||
		    g->qp_user != e->qp_user || g->byte_len != e->byte_len ||
		    (recv && ((g->wc_flags & MR_WC_F_WITH_IMM) != e->wc_flags ||
			      (e->wc_flags && g->imm != e->imm)))) {
			mrsim_scen_fail(
				sc,
				"side %d %s CQE #%zu: got wr_id %#llx "
				"status %d opcode %d len %u imm %#x flags %u "
				"qpn %#x; want wr_id %#llx status 0 opcode "
				"%d len %u imm %#x flags %u qpn %#x",
				x, q, n, (unsigned long long)g->wr_id,
				g->status, g->opcode, g->byte_len, g->imm,
				g->wc_flags, g->qp_num,
				(unsigned long long)e->wr_id, e->opcode,
				e->byte_len, e->imm, e->wc_flags, e->qp_num);
			return;
		}
		n++;
	}
	if (!sc->failed && n != nexp)
		mrsim_scen_fail(sc, "side %d %s CQ: %zu CQEs, want %zu", x, q,
				n, nexp);
}

void mrsim_scen_check_memory(struct scen *sc, int x)
{
	struct side *s = &sc->s[x];
	int k;

	for (k = 0; k < R_N && !sc->failed; k++) {
		const uint8_t *got = s->reg[k]->buf, *exp = s->exp[k];
		uint64_t len = s->reg[k]->len, i, first = 0, bad = 0;

		if (!memcmp(got, exp, len))
			continue;
		for (i = 0; i < len; i++) {
			if (got[i] != exp[i] && !bad++)
				first = i;
		}
		mrsim_scen_fail(sc,
				"side %d region %s: %llu wrong bytes, first at "
				"offset %llu (got %#x want %#x)",
				x, region_name[k], (unsigned long long)bad,
				(unsigned long long)first, got[first],
				exp[first]);
	}
}

/* MRSIM_VERBOSE: on failure, the plan, the completions and the counters. */
void mrsim_scen_dump(struct scen *sc)
{
	const char *v = getenv("MRSIM_VERBOSE");
	size_t i;
	int x;

	if (!v || !*v || *v == '0')
		return;
	for (x = 0; x < 2 * (int)sc->nq; x++) {
		struct side *s = &sc->s[x];
		const struct mr_counters *c = mr_ep_counters(s->nd->ep);

		fprintf(stderr,
			"side %d (node %d) qpn %#x%s: %u WRs (%u posted), %u "
			"recvs (%u posted)\n",
			x, x & 1, s->qpn, s->srq ? " srq" : "", s->nwr,
			s->posted, s->nrcv, s->rposted);
		for (i = 0; i < s->nwr; i++)
			fprintf(stderr,
				"  wr %zu: op %d len %u flags %#x inline %d "
				"t_post %llu\n",
				i, s->wrs[i].wr.opcode, s->wrs[i].len,
				s->wrs[i].wr.flags, s->wrs[i].inl,
				(unsigned long long)s->wrs[i].t_post);
		for (i = 0; i < s->nrcv; i++)
			fprintf(stderr, "  recv %zu: t_post %llu\n", i,
				(unsigned long long)s->rcvs[i].t_post);
		for (i = 0; i < s->nd->ncqe; i++) {
			const struct mr_cqe *e = &s->nd->cqes[i].c;

			if (e->qp_num != s->qpn)
				continue;
			fprintf(stderr,
				"  cqe %zu t=%llu: %s wr_id %#llx status %d "
				"opcode %d len %u\n",
				i, (unsigned long long)s->nd->cqes[i].t,
				e->is_recv ? "recv" : "send",
				(unsigned long long)e->wr_id, e->status,
				e->opcode, e->byte_len);
		}
		if (x > 1)
			continue;
		fprintf(stderr,
			"  node %d: tx %llu rx %llu retx %llu holes %llu "
			"timeouts %llu "
			"dups %llu rnr_waits %llu naks_sent rnr %llu seq %llu "
			"drops: window %llu invalid %llu state %llu unexp %llu "
			"noslot %llu rnr %llu access %llu\n",
			x, (unsigned long long)c->tx_pkts,
			(unsigned long long)c->rx_pkts,
			(unsigned long long)c->retx_pkts,
			(unsigned long long)c->sack_holes,
			(unsigned long long)c->timeouts,
			(unsigned long long)c->duplicates,
			(unsigned long long)c->rnr_waits,
			(unsigned long long)c->nak_sent[MR_NAK_RNR],
			(unsigned long long)c->nak_sent[MR_NAK_SEQ_ERR],
			(unsigned long long)c->drop_window,
			(unsigned long long)c->drop_invalid,
			(unsigned long long)c->drop_bad_state,
			(unsigned long long)c->drop_unexpected,
			(unsigned long long)c->drop_no_slot,
			(unsigned long long)c->drop_rnr,
			(unsigned long long)c->drop_access);
	}
}

const struct mr_cqe *mrsim_scen_first_error(const struct mrsim_world *w)
{
	size_t i;
	int x;

	for (x = 0; x < 2; x++)
		for (i = 0; i < w->node[x].ncqe; i++)
			if (w->node[x].cqes[i].c.status != MR_WC_SUCCESS)
				return &w->node[x].cqes[i].c;
	return NULL;
}

/* Bytes [off, off + len) of side s's region k are as the model says. */
static int final(struct side *s, int k, uint64_t off, uint64_t len)
{
	return !len || !memcmp(s->reg[k]->buf + off, s->exp[k] + off, len);
}

void mrsim_scen_on_cqe(void *user, int node, const struct mr_cqe *c)
{
	struct scen *sc = user;
	unsigned x;

	if (sc->failed || c->status != MR_WC_SUCCESS)
		return; /* status mismatches are reported at the end */
	for (x = (unsigned)node; x < 2 * sc->nq; x += 2) {
		struct side *s = &sc->s[x], *p = &sc->s[x ^ 1];
		uint64_t i = (c->wr_id >> 8) & 0xffffffffffull;

		if (s->qpn != c->qp_num)
			continue;
		if (!c->is_recv && i < s->nwr) {
			const struct pwr *w = &s->wrs[i];

			/* A send completion: this WR and every earlier one
			 * are done, their data in place on both sides. */
			if (!final(s, R_LDST, 0, w->ldst_mark))
				mrsim_scen_fail(
					sc,
					"side %u: completion of WR %llu "
					"before its READ/atomic data "
					"(or an earlier one's) landed",
					x, (unsigned long long)i);
			else if (!final(p, R_TGT, RO_ZONE, w->tgt_mark))
				mrsim_scen_fail(
					sc,
					"side %u: completion of WR %llu "
					"before the peer has every "
					"earlier WRITE's bytes",
					x, (unsigned long long)i);
		} else if (c->is_recv && i < s->nrcv) {
			const struct prcv *r = &s->rcvs[i];

			/* A receive completion: this message and every
			 * earlier one are complete in our memory. */
			if (!final(s, R_RCV, 0, r->rcv_mark))
				mrsim_scen_fail(sc,
						"side %u: receive completion "
						"#%llu before its bytes (or an "
						"earlier receive's) landed",
						x, (unsigned long long)i);
			else if (!final(s, R_TGT, RO_ZONE, r->tgt_mark))
				mrsim_scen_fail(sc,
						"side %u: receive completion "
						"#%llu before every earlier "
						"WRITE's bytes landed",
						x, (unsigned long long)i);
		}
		return;
	}
}

void mrsim_scen_on_place(void *user, int node, const uint8_t *dst, uint32_t len)
{
	struct scen *sc = user;
	unsigned x, i;

	if (sc->failed || !len)
		return;
	for (x = (unsigned)node; x < 2 * sc->nq; x += 2) {
		struct side *s = &sc->s[x], *p = &sc->s[x ^ 1];
		const uint8_t *base = s->reg[R_TGT]->buf;

		if (dst < base || dst >= base + s->reg[R_TGT]->len)
			continue;
		for (i = 0; i < p->nwr; i++) {
			const struct pwr *w = &p->wrs[i];
			const uint8_t *start = base + w->tgt_off;
			const uint8_t *last = start + w->len - 1;

			if ((w->wr.opcode != MR_WR_RDMA_WRITE &&
			     w->wr.opcode != MR_WR_RDMA_WRITE_WITH_IMM) ||
			    !w->len || last < dst || last >= dst + len ||
			    dst <= start)
				continue;
			/* This placement carries the WRITE's final byte:
			 * every byte before it must be visible already. */
			if (!final(s, R_TGT, w->tgt_off,
				   (uint64_t)(dst - start)))
				mrsim_scen_fail(sc,
						"side %u: final byte of WRITE "
						"%u (%u bytes) placed before "
						"the bytes ahead of it",
						x, i, w->len);
			return;
		}
	}
}
