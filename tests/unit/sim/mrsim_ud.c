// SPDX-License-Identifier: BSD-2-Clause
/*
 * Randomized UD scenarios (mrsim_scen_run with cfg->type MR_QPT_UD): both
 * endpoints send datagrams (0..MTU bytes, random SGE splits, with and
 * without immediate data, some with a wrong qkey) over the scripted link.
 * UD has no retransmission, so the model is an accounting: every datagram
 * sent is either lost by the link, dropped for its qkey, or delivered
 * exactly once, into the next receive WQE in arrival order, after the
 * 40-byte GRH that verbs UD receive buffers start with; every other byte
 * of the receive buffers stays untouched.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mr_counters.h"
#include "mrsim_scen.h"

#define UD_GRH 40 /* verbs: UD receive buffers begin with the GRH */
#define UD_MAX_SGE 4
#define UD_QKEY 0x11110000u

struct dgram {
	struct mr_send_wr wr;
	struct mr_sge sge[UD_MAX_SGE];
	uint32_t len;
	int bad_qkey;
	int bad_qpn; /* sent to a QPN the peer does not have */
	int matched;
	uint64_t t_post;
};

struct urcv {
	struct mr_recv_wr wr;
	struct mr_sge sge[UD_MAX_SGE];
	uint32_t cap;
};

struct uside {
	struct mrsim_node *nd;
	struct mr_qp *qp;
	uint32_t qpn;
	struct mrsim_region *src, *rcv;
	uint8_t *exp_rcv;
	struct dgram *dg;
	unsigned ndg, posted;
	struct urcv *rv;
	unsigned nrv;
	size_t nsig;
};

struct uscen {
	const struct mrsim_scen_cfg *cfg;
	struct mrsim_rand r;
	struct mrsim_world w;
	struct uside s[2];
	uint32_t mtu;
	int failed;
	char why[512];
};

static void ufail(struct uscen *u, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ufail(struct uscen *u, const char *fmt, ...)
{
	va_list ap;

	if (u->failed)
		return;
	u->failed = 1;
	va_start(ap, fmt);
	vsnprintf(u->why, sizeof(u->why), fmt, ap);
	va_end(ap);
}

static void fill(struct mrsim_rand *r, uint8_t *p, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		p[i] = (uint8_t)mrsim_rand_next(r);
}

static int ud_qp(struct uscen *u, int i)
{
	struct mr_qp_config qc = { .type = MR_QPT_UD,
				   .qpn = u->s[i].qpn,
				   .pd = 1,
				   .max_send_wr = 16,
				   .max_recv_wr = u->s[i].nrv + 1,
				   .max_send_sge = UD_MAX_SGE,
				   .max_recv_sge = UD_MAX_SGE,
				   .user = u->s[i].nd };
	struct mr_qp_attr a = { .state = MR_QPS_INIT, .qkey = UD_QKEY };
	int rc;

	rc = mr_qp_create(u->s[i].nd->ep, &qc, &u->s[i].qp);
	if (!rc)
		rc = mr_qp_modify(u->s[i].qp, &a, MR_QP_STATE | MR_QP_QKEY);
	a.state = MR_QPS_RTR;
	if (!rc)
		rc = mr_qp_modify(u->s[i].qp, &a, MR_QP_STATE);
	a.state = MR_QPS_RTS;
	a.sq_psn = (uint32_t)mrsim_rand_next(&u->r);
	if (!rc)
		rc = mr_qp_modify(u->s[i].qp, &a, MR_QP_STATE | MR_QP_SQ_PSN);
	return rc;
}

static unsigned usplit(struct mrsim_rand *r, uint32_t len, uint32_t *piece)
{
	unsigned n, i;
	uint32_t left = len;

	if (!len)
		return (unsigned)mrsim_rand_below(r, 2);
	n = (unsigned)mrsim_rand_range(r, 1, UD_MAX_SGE);
	if (n > len)
		n = len;
	for (i = 0; i + 1 < n; i++) {
		piece[i] = (uint32_t)mrsim_rand_range(r, 1, left - (n - 1 - i));
		left -= piece[i];
	}
	piece[n - 1] = left;
	return n;
}

static int plan(struct uscen *u, int x, unsigned n)
{
	struct uside *s = &u->s[x], *p = &u->s[1 - x];
	uint64_t t = 0;
	unsigned i, k;

	s->ndg = n;
	s->dg = calloc(n + 1, sizeof(*s->dg));
	if (!s->dg)
		return -1;
	for (i = 0; i < n; i++) {
		struct dgram *d = &s->dg[i];
		uint32_t piece[UD_MAX_SGE];

		switch (mrsim_rand_below(&u->r, 6)) {
		case 0:
			d->len = 0;
			break;
		case 1:
			d->len = u->mtu;
			break;
		case 2:
			d->len = u->mtu - 1;
			break;
		case 3:
			d->len = 1;
			break;
		default:
			d->len = (uint32_t)mrsim_rand_range(&u->r, 8, u->mtu);
		}
		d->wr.wr_id = ((uint64_t)x << 48) | i;
		d->wr.opcode = mrsim_rand_below(&u->r, 2) ? MR_WR_SEND
							  : MR_WR_SEND_WITH_IMM;
		/* A wrong qkey only on datagrams whose random content makes
		 * them unmistakable for a good one. */
		d->bad_qkey = d->len >= 8 && mrsim_rand_below(&u->r, 10) == 0;
		/* Drawn only where it cannot shift the other draws' meaning:
		 * after the qkey decision, for unmistakable datagrams. */
		d->bad_qpn = d->len >= 8 && !d->bad_qkey &&
			     mrsim_rand_below(&u->r, 20) == 0;
		d->wr.imm = (uint32_t)mrsim_rand_next(&u->r);
		d->wr.ud_remote_qpn = d->bad_qpn ? p->qpn ^ 0x400000 : p->qpn;
		d->wr.ud_remote_qkey = d->bad_qkey ? UD_QKEY ^ 0x40 : UD_QKEY;
		d->wr.ud_dest = (uint32_t)(1 - x);
		if (mrsim_rand_below(&u->r, 2) || i + 1 == n) {
			d->wr.flags |= MR_SEND_SIGNALED;
			s->nsig++;
		}
		d->wr.sg_list = d->sge;
		d->wr.num_sge = usplit(&u->r, d->len, piece);
		for (k = 0; k < d->wr.num_sge; k++) {
			uint32_t l = d->len ? piece[k] : 0;

			d->sge[k].addr =
				s->src->iova +
				mrsim_rand_below(&u->r, s->src->len - l + 1);
			d->sge[k].length = l;
			d->sge[k].lkey = s->src->lkey;
		}
		if (mrsim_rand_below(&u->r, 2))
			t += mrsim_rand_below(&u->r, 5000);
		d->t_post = t;
	}
	return 0;
}

static int plan_recvs(struct uscen *u, int y)
{
	struct uside *s = &u->s[y];
	uint64_t cur = 0;
	unsigned i, k;

	for (i = 0; i < s->nrv; i++) {
		struct urcv *v = &s->rv[i];
		uint32_t piece[UD_MAX_SGE];

		v->cap = UD_GRH + u->mtu + (uint32_t)mrsim_rand_below(&u->r, 9);
		v->wr.wr_id = ((uint64_t)y << 48) | 0x8000 | i;
		v->wr.sg_list = v->sge;
		v->wr.num_sge = usplit(&u->r, v->cap, piece);
		for (k = 0; k < v->wr.num_sge; k++) {
			v->sge[k].addr = s->rcv->iova + cur;
			v->sge[k].length = piece[k];
			v->sge[k].lkey = s->rcv->lkey;
			cur += piece[k];
		}
	}
	return 0;
}

static uint64_t ud_instant(void *user, struct mrsim_world *w)
{
	struct uscen *u = user;
	uint64_t wake = UINT64_MAX;
	int x;

	for (x = 0; x < 2; x++) {
		struct uside *s = &u->s[x];

		while (s->posted < s->ndg &&
		       s->dg[s->posted].t_post <= w->now) {
			int rc = mr_qp_post_send(s->qp, &s->dg[s->posted].wr,
						 w->now);

			if (rc == -MR_EAGAIN)
				break; /* retried at the next instant */
			if (rc) {
				ufail(u, "node %d UD post_send #%u: %s", x,
				      s->posted, mr_strerror(-rc));
				return UINT64_MAX;
			}
			s->posted++;
		}
		if (s->posted < s->ndg && s->dg[s->posted].t_post > w->now &&
		    s->dg[s->posted].t_post < wake)
			wake = s->dg[s->posted].t_post;
	}
	return wake;
}

static int ud_done(void *user)
{
	struct uscen *u = user;

	return u->failed || (u->s[0].posted == u->s[0].ndg &&
			     u->s[1].posted == u->s[1].ndg &&
			     u->w.dir[0].n == 0 && u->w.dir[1].n == 0);
}

/* Gather the bytes [off, off+len) of a receive WQE's buffer. */
static void wqe_bytes(struct uside *s, const struct urcv *v, uint8_t *exp,
		      uint32_t off, uint8_t *out, uint32_t len)
{
	uint32_t pos = 0, k, o = 0;

	for (k = 0; k < v->wr.num_sge && o < len; k++) {
		const struct mr_sge *g = &v->sge[k];
		uint8_t *base =
			(exp ? exp : s->rcv->buf) + (g->addr - s->rcv->iova);
		uint32_t i;

		for (i = 0; i < g->length && o < len; i++, pos++)
			if (pos >= off)
				out[o++] = base[i];
	}
}

/* Copy len bytes into the expected image of a WQE at offset off. */
static void wqe_put(struct uside *s, const struct urcv *v, uint32_t off,
		    const uint8_t *src, uint32_t len)
{
	uint32_t pos = 0, k, o = 0;

	for (k = 0; k < v->wr.num_sge && o < len; k++) {
		const struct mr_sge *g = &v->sge[k];
		uint8_t *base = s->exp_rcv + (g->addr - s->rcv->iova);
		uint32_t i;

		for (i = 0; i < g->length && o < len; i++, pos++)
			if (pos >= off)
				base[i] = src[o++];
	}
}

static void gather(struct uside *s, const struct dgram *d, uint8_t *out)
{
	uint32_t k, o = 0;

	for (k = 0; k < d->wr.num_sge; k++) {
		memcpy(out + o, s->src->buf + (d->sge[k].addr - s->src->iova),
		       d->sge[k].length);
		o += d->sge[k].length;
	}
}

/* Receiver y: match each receive completion with one datagram of x. */
static void verify(struct uscen *u, int y, uint8_t *tmp, uint8_t *tmp2,
		   uint64_t *delivered)
{
	struct uside *s = &u->s[y], *p = &u->s[1 - y];
	size_t i, nr = 0, ns = 0;
	unsigned j;

	for (i = 0; i < s->nd->ncqe && !u->failed; i++) {
		const struct mr_cqe *c = &s->nd->cqes[i].c;
		const struct urcv *v;
		uint32_t len;

		if (!c->is_recv) {
			/* Send completions: signaled ones, in order. */
			while (ns < s->ndg &&
			       !(s->dg[ns].wr.flags & MR_SEND_SIGNALED))
				ns++;
			if (ns == s->ndg || c->wr_id != s->dg[ns].wr.wr_id ||
			    c->status != MR_WC_SUCCESS ||
			    c->opcode != MR_WC_SEND || c->qp_num != s->qpn)
				ufail(u,
				      "node %d UD send CQE: wr_id %#llx status "
				      "%d opcode %d",
				      y, (unsigned long long)c->wr_id,
				      c->status, c->opcode);
			ns++;
			continue;
		}
		if (nr == s->nrv) {
			ufail(u, "node %d: more UD receive CQEs than WQEs", y);
			return;
		}
		v = &s->rv[nr++];
		if (c->wr_id != v->wr.wr_id || c->status != MR_WC_SUCCESS ||
		    c->opcode != MR_WC_RECV || c->byte_len < UD_GRH ||
		    c->qp_num != s->qpn || c->src_qp != p->qpn ||
		    c->ud_src != (uint32_t)(1 - y) ||
		    !(c->wc_flags & MR_WC_F_GRH)) {
			ufail(u,
			      "node %d UD recv CQE #%zu: wr_id %#llx (want "
			      "%#llx) status %d opcode %d len %u qpn %#x "
			      "src_qp %#x ud_src %u flags %#x",
			      y, nr - 1, (unsigned long long)c->wr_id,
			      (unsigned long long)v->wr.wr_id, c->status,
			      c->opcode, c->byte_len, c->qp_num, c->src_qp,
			      c->ud_src, c->wc_flags);
			return;
		}
		len = c->byte_len - UD_GRH;
		wqe_bytes(s, v, NULL, UD_GRH, tmp, len);
		for (j = 0; j < p->ndg; j++) {
			struct dgram *d = &p->dg[j];
			int imm = d->wr.opcode == MR_WR_SEND_WITH_IMM;

			if (d->matched || d->bad_qkey || d->bad_qpn ||
			    d->len != len ||
			    !!(c->wc_flags & MR_WC_F_WITH_IMM) != imm ||
			    (imm && c->imm != d->wr.imm))
				continue;
			gather(p, d, tmp2);
			if (memcmp(tmp, tmp2, len))
				continue;
			d->matched = 1;
			break;
		}
		if (j == p->ndg) {
			ufail(u,
			      "node %d UD recv CQE #%zu (%u bytes) matches no "
			      "datagram sent (or one delivered twice)",
			      y, nr - 1, len);
			return;
		}
		/* The GRH bytes are the core's to write; the payload after
		 * it is ours to check, and nothing beyond it may change. */
		wqe_bytes(s, v, NULL, 0, tmp2, UD_GRH);
		wqe_put(s, v, 0, tmp2, UD_GRH);
		wqe_put(s, v, UD_GRH, tmp, len);
		(*delivered)++;
	}
	if (!u->failed && memcmp(s->rcv->buf, s->exp_rcv, s->rcv->len)) {
		uint64_t k;

		for (k = 0; s->rcv->buf[k] == s->exp_rcv[k]; k++)
			;
		ufail(u, "node %d UD receive region: byte %llu changed", y,
		      (unsigned long long)k);
	}
}

int mrsim_ud_run(const struct mrsim_scen_cfg *cfg, uint64_t seed,
		 struct mrsim_scen_result *res)
{
	static const uint32_t mtus[] = { 256, 1024, 4096 };
	struct uscen *u = calloc(1, sizeof(*u));
	struct mrsim_link_cfg l = { 0 };
	struct mr_ep_config ec = { 0 };
	uint8_t *tmp = NULL, *tmp2 = NULL;
	uint64_t delivered = 0, dropped_qkey = 0, bad = 0, sent = 0, lost;
	uint64_t dropped_qpn = 0, bad_qpn = 0, parse_drops;
	int x, rc;

	memset(res, 0, sizeof(*res));
	if (!u)
		return -1;
	u->cfg = cfg;
	mrsim_rand_seed(&u->r, seed, 1);
	u->mtu = cfg->mtu ? cfg->mtu : mtus[mrsim_rand_below(&u->r, 3)];
	l.delay_ns = cfg->delay_ns;
	l.jitter_ns = cfg->jitter_ns;
	l.loss_ppm = cfg->loss_ppm;
	l.reorder_ppm = cfg->reorder_ppm;
	l.reorder_ns = 3 * cfg->delay_ns + 1000;
	l.corrupt_ppm = cfg->corrupt_ppm;
	ec.mtu = u->mtu;
	ec.num_paths = cfg->num_paths ? cfg->num_paths
				      : (uint16_t)mrsim_rand_range(&u->r, 1, 8);
	ec.max_qp = 2;
	rc = mrsim_world_init(&u->w, &ec, &l, &l, seed);
	if (rc) {
		ufail(u, "world init: %s", mr_strerror(-rc));
		goto out;
	}
	tmp = malloc(2 * (UD_GRH + u->mtu + 16));
	if (!tmp)
		goto out;
	tmp2 = tmp + UD_GRH + u->mtu + 16;
	for (x = 0; x < 2; x++) {
		struct uside *s = &u->s[x];

		s->nd = &u->w.node[x];
		s->qpn = 0x300 + (uint32_t)x * 0x1001 +
			 (uint32_t)mrsim_rand_below(&u->r, 0x1000);
		s->src = mrsim_mem_reg(&s->nd->mem, 0, 2 * u->mtu, 1, 0);
		if (!s->src)
			goto out;
		fill(&u->r, s->src->buf, s->src->len);
	}
	for (x = 0; x < 2; x++) {
		unsigned n = (unsigned)mrsim_rand_range(&u->r, 1, cfg->max_wr);

		if (x == 1 && !cfg->bidir)
			n = 0;
		if (plan(u, x, n))
			goto out;
	}
	for (x = 0; x < 2; x++) {
		struct uside *s = &u->s[x];
		unsigned i;

		s->nrv = u->s[1 - x].ndg + 2;
		s->rv = calloc(s->nrv, sizeof(*s->rv));
		s->rcv = mrsim_mem_reg(&s->nd->mem, 0,
				       (uint64_t)s->nrv * (UD_GRH + u->mtu + 8),
				       1, MR_ACCESS_LOCAL_WRITE);
		if (!s->rv || !s->rcv)
			goto out;
		s->exp_rcv = malloc(s->rcv->len);
		if (!s->exp_rcv)
			goto out;
		fill(&u->r, s->rcv->buf, s->rcv->len);
		memcpy(s->exp_rcv, s->rcv->buf, s->rcv->len);
		plan_recvs(u, x);
		rc = ud_qp(u, x);
		if (rc) {
			ufail(u, "UD QP setup: %s", mr_strerror(-rc));
			goto out;
		}
		for (i = 0; i < s->nrv; i++) {
			rc = mr_qp_post_recv(s->qp, &s->rv[i].wr);
			if (rc) {
				ufail(u, "UD post_recv: %s", mr_strerror(-rc));
				goto out;
			}
		}
	}
	/* A datagram over the MTU is refused at post time. */
	{
		struct mr_sge g = { .addr = u->s[0].src->iova,
				    .length = u->mtu + 1,
				    .lkey = u->s[0].src->lkey };
		struct mr_send_wr wr = { .opcode = MR_WR_SEND,
					 .sg_list = &g,
					 .num_sge = 1,
					 .ud_remote_qpn = u->s[1].qpn,
					 .ud_remote_qkey = UD_QKEY };

		rc = mr_qp_post_send(u->s[0].qp, &wr, 0);
		if (rc != -MR_EMSGSIZE) {
			ufail(u,
			      "UD datagram of mtu+1 bytes: post_send "
			      "returned %d, want -MR_EMSGSIZE",
			      rc);
			goto out;
		}
	}
	u->w.on_instant = ud_instant;
	u->w.on_instant_user = u;
	rc = mrsim_world_run(&u->w, ud_done, u, cfg->bound_ns);
	if (!u->failed && rc == 0) {
		u->w.on_instant = NULL;
		rc = mrsim_world_run(&u->w, NULL, NULL,
				     u->w.now + 100000000ull);
		if (rc != 1 && !u->failed)
			ufail(u, "UD: not quiescent (%d) %s", rc, u->w.why);
	} else if (!u->failed) {
		ufail(u, "UD run: %d %s", rc, u->w.why);
	}
	for (x = 0; x < 2 && !u->failed; x++) {
		const struct mr_counters *c = mr_ep_counters(u->s[x].nd->ep);
		unsigned i;

		verify(u, x, tmp, tmp2, &delivered);
		dropped_qkey += c->drop_qkey;
		dropped_qpn += c->drop_unknown_qp;
		for (i = 0; i < u->s[1 - x].ndg; i++) {
			bad += u->s[1 - x].dg[i].bad_qkey;
			bad_qpn += u->s[1 - x].dg[i].bad_qpn;
		}
		sent += u->s[x].ndg;
		/* A flipped bit fails the ICRC, or an earlier check of the
		 * parser (version, opcode, lengths): a parse drop either way.
		 */
		for (i = 0, parse_drops = 0; i < MR_PARSE_ERRS; i++)
			parse_drops += c->drop_parse[i];
		if (!u->failed && parse_drops != u->w.dir[1 - x].st.corrupted)
			ufail(u,
			      "node %d: %llu parse drops, link corrupted %llu",
			      x, (unsigned long long)parse_drops,
			      (unsigned long long)u->w.dir[1 - x].st.corrupted);
	}
	lost = u->w.dir[0].st.lost_rand + u->w.dir[1].st.lost_rand +
	       u->w.dir[0].st.corrupted + u->w.dir[1].st.corrupted;
	/* Every datagram accounted for exactly once. */
	if (!u->failed && delivered + dropped_qkey + dropped_qpn + lost != sent)
		ufail(u,
		      "UD accounting: %llu delivered + %llu qkey drops + %llu "
		      "unknown-QP drops + %llu lost != %llu sent",
		      (unsigned long long)delivered,
		      (unsigned long long)dropped_qkey,
		      (unsigned long long)dropped_qpn, (unsigned long long)lost,
		      (unsigned long long)sent);
	if (!u->failed && !cfg->loss_ppm && !cfg->corrupt_ppm &&
	    dropped_qpn != bad_qpn)
		ufail(u,
		      "UD: %llu unknown-QP drops, %llu datagrams had a bad "
		      "QPN",
		      (unsigned long long)dropped_qpn,
		      (unsigned long long)bad_qpn);
	if (!u->failed && !cfg->loss_ppm && !cfg->corrupt_ppm &&
	    dropped_qkey != bad)
		ufail(u, "UD: %llu qkey drops, %llu datagrams had a bad qkey",
		      (unsigned long long)dropped_qkey,
		      (unsigned long long)bad);
	if (!u->failed && u->w.allocs_after_setup)
		ufail(u, "core allocated after setup");
out:
	if (!u->failed && !tmp)
		ufail(u, "setup failed");
	res->pkts = u->w.node[0].tx_pkts + u->w.node[1].tx_pkts;
	res->lost = u->w.dir[0].st.lost_rand + u->w.dir[1].st.lost_rand;
	res->sim_ns = u->w.now;
	res->wrs = u->s[0].ndg + u->s[1].ndg;
	res->qp_pairs = 1;
	for (x = 0; x < 2; x++) {
		unsigned i;

		for (i = 0; i < u->s[x].ndg; i++)
			res->bytes += u->s[x].dg[i].len;
	}
	res->ud_lost = sent - delivered - dropped_qkey - dropped_qpn;
	res->ok = !u->failed;
	if (u->failed)
		snprintf(res->why, sizeof(res->why),
			 "%s seed %#llx (mtu %u): %s",
			 cfg->name ? cfg->name : "ud", (unsigned long long)seed,
			 u->mtu, u->why);
	for (x = 0; x < 2; x++) {
		struct uside *s = &u->s[x];

		if (s->qp)
			mr_qp_destroy(s->qp);
		free(s->dg);
		free(s->rv);
		free(s->exp_rcv);
	}
	mrsim_world_fini(&u->w);
	free(tmp);
	rc = res->ok ? 0 : -1;
	free(u);
	return rc;
}
