/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * libFuzzer target for the receive side of an endpoint: one mr_ep with
 * RC QPs (MetaRoCE and gbn mode, two protection domains), a UD QP and an
 * SRQ-backed QP, all in RTS with receives posted and registered memory,
 * driven by a script decoded from the input:
 *   - raw packets (anything, including garbage) into mr_ep_rx();
 *   - crafted packets: valid-looking headers built with
 *     mr_wire_encode_hdr() + mr_wire_seal(), fields steered by the input
 *     (QPNs, sequence numbers near the expected ones, addresses inside and
 *     around the registered regions), so the fuzzer gets past the ICRC and
 *     into placement, message tracking, READ/atomic execution, ACK/NAK
 *     processing;
 *   - time steps (mr_ep_handle_expiry()), posted sends and receives.
 * After every step the transmit side is drained. Properties checked:
 *   - no crash, no leak (LeakSanitizer, plus the injected allocator counts
 *     live blocks and the endpoint must free every one);
 *   - every placement lands inside a registered region and happens while
 *     a packet is being received (abort otherwise); regions are separate
 *     heap blocks, so any other stray access is an ASan report;
 *   - every packet the endpoint sends parses (MR-PARSE-1..7);
 *   - every completion has a known status.
 * Deterministic: memory addresses the core sees are the regions' virtual
 * addresses (translated in lookup), time is a literal start plus steps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mr_core.h"
#include "mr_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MTU 1024u
#define NUM_PATHS 4u
#define START_NS 1000000000ull

/* ---- the input as a stream of integers (0 when exhausted) ---- */

struct rd {
	const uint8_t *p;
	size_t n;
};

static uint64_t rd_bytes(struct rd *r, unsigned k)
{
	uint64_t v = 0;

	while (k--) {
		v = v << 8 | (r->n ? *r->p : 0);
		if (r->n) {
			r->p++;
			r->n--;
		}
	}
	return v;
}

#define rd8(r) ((uint8_t)rd_bytes(r, 1))
#define rd16(r) ((uint16_t)rd_bytes(r, 2))
#define rd32(r) ((uint32_t)rd_bytes(r, 4))
#define rd64(r) (rd_bytes(r, 8))

/* ---- injected memory that counts live blocks ---- */

static long live_blocks;

static void *fz_calloc(void *user, size_t n, size_t sz)
{
	void *p = calloc(n, sz);

	(void)user;
	if (p)
		live_blocks++;
	return p;
}

static void fz_free(void *user, void *p)
{
	(void)user;
	if (p)
		live_blocks--;
	free(p);
}

static uint64_t rng_s;

static uint64_t fz_rand(void *user)
{
	uint64_t z = (rng_s += 0x9e3779b97f4a7c15ull);

	(void)user;
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* ---- registered memory ---- */

struct region {
	uint32_t pd, key;
	unsigned rights;
	uint64_t vaddr;
	uint32_t len;
	uint8_t *host;
};

static struct region regions[] = {
	{ 1, 0x100,
	  MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
		  MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_ATOMIC,
	  0x10000, 16384, NULL },
	{ 1, 0x200, MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_READ, 0x40000,
	  4096, NULL },
	{ 2, 0x300,
	  MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
		  MR_ACCESS_REMOTE_ATOMIC,
	  0x80000, 4096, NULL },
};
#define NREG (sizeof(regions) / sizeof(regions[0]))

static int fz_lookup(void *user, uint32_t pd, uint32_t key, int remote,
		     uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	unsigned i;

	(void)user;
	(void)remote;
	if (!len) {
		*host = NULL;
		return 0;
	}
	for (i = 0; i < NREG; i++) {
		const struct region *g = &regions[i];

		if (g->key != key || g->pd != pd)
			continue;
		if ((g->rights & need) != need || addr < g->vaddr ||
		    addr - g->vaddr > g->len ||
		    len > g->len - (addr - g->vaddr))
			return -MR_EACCESS;
		*host = g->host + (addr - g->vaddr);
		return 0;
	}
	return -MR_EACCESS;
}

static int in_region(const uint8_t *p, uint32_t len)
{
	unsigned i;

	for (i = 0; i < NREG; i++) {
		const struct region *g = &regions[i];

		if (p >= g->host && p <= g->host + g->len &&
		    len <= (size_t)(g->host + g->len - p))
			return 1;
	}
	return 0;
}

/* ---- callbacks ---- */

static const uint8_t *rx_pkt; /* the packet mr_ep_rx() is processing */

static void fz_place(void *user, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	(void)user;
	if (!len)
		return;
	if (!in_region(dst, len))
		abort(); /* placement outside registered memory */
	/* Placements come from received packets only. The source is the
	 * packet's payload or a value decoded from it (an atomic response's
	 * original value, a UD receive's GRH); ASan checks that it is valid
	 * memory as memmove() reads it. */
	if (!rx_pkt)
		abort();
	memmove(dst, src, len);
}

static void fz_complete(void *user, const struct mr_cqe *cqe)
{
	(void)user;
	switch (cqe->status) {
	case MR_WC_SUCCESS:
	case MR_WC_LOC_LEN_ERR:
	case MR_WC_LOC_QP_OP_ERR:
	case MR_WC_LOC_PROT_ERR:
	case MR_WC_WR_FLUSH_ERR:
	case MR_WC_BAD_RESP_ERR:
	case MR_WC_LOC_ACCESS_ERR:
	case MR_WC_REM_INV_REQ_ERR:
	case MR_WC_REM_ACCESS_ERR:
	case MR_WC_REM_OP_ERR:
	case MR_WC_RETRY_EXC_ERR:
	case MR_WC_RNR_RETRY_EXC_ERR:
	case MR_WC_GENERAL_ERR:
		return;
	case MR_WC_MW_BIND_ERR: /* this world binds no window */
		break;
	}
	abort();
}

static void fz_qp_error(void *user, void *qp_user)
{
	(void)user;
	(void)qp_user;
}

static void fz_srq_limit(void *user, void *srq_user)
{
	(void)user;
	(void)srq_user;
}

/* ---- the endpoint under test ---- */

struct qpdef {
	enum mr_qp_type type;
	enum mr_mode mode;
	uint32_t qpn, peer, pd, key;
	uint32_t rq_psn, sq_psn;
	unsigned access;
	int use_srq;
};

static const struct qpdef qpdefs[] = {
	{ MR_QPT_RC, MR_MODE_METAROCE, 0x11, 0x21, 1, 0x100, 0xfffffff0u, 7,
	  MR_ACCESS_REMOTE_WRITE | MR_ACCESS_REMOTE_READ |
		  MR_ACCESS_REMOTE_ATOMIC,
	  0 },
	{ MR_QPT_RC, MR_MODE_GBN, 0x12, 0x22, 1, 0x100, 100, 200,
	  MR_ACCESS_REMOTE_WRITE, 0 },
	{ MR_QPT_UD, MR_MODE_METAROCE, 0x13, 0, 1, 0x100, 0, 0, 0, 0 },
	{ MR_QPT_RC, MR_MODE_METAROCE, 0x14, 0x24, 2, 0x300, 0, 0,
	  MR_ACCESS_REMOTE_WRITE | MR_ACCESS_REMOTE_ATOMIC, 1 },
};
#define NQP (sizeof(qpdefs) / sizeof(qpdefs[0]))
#define UD_QKEY 0x1234u

struct world {
	struct mr_ep *ep;
	struct mr_qp *qp[NQP];
	struct mr_srq *srq;
	uint64_t now;
	uint64_t wr_id;
	uint8_t txbuf[MTU + 1024];
};

static int post_recv(struct world *w, unsigned i, uint32_t off, uint32_t len)
{
	const struct qpdef *d = &qpdefs[i];
	const struct region *g = d->pd == 1 ? &regions[0] : &regions[2];
	struct mr_sge sge[2];
	struct mr_recv_wr wr;

	off %= g->len;
	if (len > g->len - off)
		len = g->len - off;
	sge[0].addr = g->vaddr + off;
	sge[0].length = len / 2;
	sge[0].lkey = g->key;
	sge[1].addr = g->vaddr + off + len / 2;
	sge[1].length = len - len / 2;
	sge[1].lkey = g->key;
	wr.wr_id = ++w->wr_id;
	wr.sg_list = sge;
	wr.num_sge = 2;
	if (d->use_srq)
		return mr_srq_post_recv(w->srq, &wr);
	return mr_qp_post_recv(w->qp[i], &wr);
}

static int setup(struct world *w)
{
	static const struct mr_mem mem = { fz_calloc, fz_free, NULL };
	static const struct mr_rand rnd = { fz_rand, NULL };
	static const struct mr_memreg memreg = { .lookup = fz_lookup };
	static const struct mr_callbacks cb = { .place = fz_place,
						.complete = fz_complete,
						.qp_error = fz_qp_error,
						.srq_limit = fz_srq_limit };
	struct mr_ep_config ec;
	struct mr_srq_config sc;
	unsigned i, k;

	memset(&ec, 0, sizeof(ec));
	ec.mtu = MTU;
	ec.num_paths = NUM_PATHS;
	ec.max_qp = 8;
	/* Small protocol windows: faster setup per input, and the window
	 * edges (dedup, message slots, READ/atomic records, hold slots) are
	 * reached with few packets. */
	ec.ssn_window = 128;
	ec.msg_window = 16;
	ec.max_rd_atomic = 4;
	ec.hold_slots = 2;
	if (mr_ep_create(&ec, &mem, &rnd, &memreg, &cb, &w->ep))
		return -1;
	memset(&sc, 0, sizeof(sc));
	sc.pd = 2;
	sc.max_wr = 16;
	sc.max_sge = 2;
	sc.limit = 2;
	if (mr_srq_create(w->ep, &sc, &w->srq))
		return -1;

	for (i = 0; i < NQP; i++) {
		const struct qpdef *d = &qpdefs[i];
		struct mr_qp_config qc;
		struct mr_qp_attr a;
		int rc;

		memset(&qc, 0, sizeof(qc));
		qc.type = d->type;
		qc.mode = d->mode;
		qc.qpn = d->qpn;
		qc.pd = d->pd;
		qc.max_send_wr = 16;
		qc.max_recv_wr = 16;
		qc.max_send_sge = 2;
		qc.max_recv_sge = 2;
		qc.max_inline = 64;
		qc.srq = d->use_srq ? w->srq : NULL;
		qc.user = w;
		if (mr_qp_create(w->ep, &qc, &w->qp[i]))
			return -1;

		memset(&a, 0, sizeof(a));
		a.state = MR_QPS_INIT;
		a.access = d->access;
		a.qkey = UD_QKEY;
		rc = mr_qp_modify(w->qp[i], &a,
				  MR_QP_STATE | (d->type == MR_QPT_RC
							 ? MR_QP_ACCESS_FLAGS
							 : MR_QP_QKEY));
		a.state = MR_QPS_RTR;
		a.dest_qpn = d->peer;
		a.rq_psn = d->rq_psn;
		a.path_mtu_bytes = MTU;
		a.dest = 7; /* rx() delivers from address 7 (MR-RSP-1) */
		a.max_dest_rd_atomic = 4;
		a.min_rnr_timer = 1;
		rc |= mr_qp_modify(
			w->qp[i], &a,
			MR_QP_STATE |
				(d->type == MR_QPT_RC
					 ? MR_QP_DEST_QPN | MR_QP_RQ_PSN |
						   MR_QP_PATH_MTU | MR_QP_DEST |
						   MR_QP_MAX_DEST_RD_ATOMIC |
						   MR_QP_MIN_RNR_TIMER
					 : 0));
		a.state = MR_QPS_RTS;
		a.sq_psn = d->sq_psn;
		a.timeout = 10;
		a.retry_cnt = 3;
		a.rnr_retry = 2;
		a.max_rd_atomic = 4;
		rc |= mr_qp_modify(
			w->qp[i], &a,
			MR_QP_STATE | MR_QP_SQ_PSN |
				(d->type == MR_QPT_RC
					 ? MR_QP_TIMEOUT | MR_QP_RETRY_CNT |
						   MR_QP_RNR_RETRY |
						   MR_QP_MAX_QP_RD_ATOMIC
					 : 0));
		if (rc)
			return -1;
		for (k = 0; k < 4; k++)
			if (post_recv(w, i, k * 1100,
				      d->type == MR_QPT_UD ? MTU + 40 : 1000))
				return -1;
	}
	return 0;
}

/* Drain the transmit side; every packet must be a valid one. */
static void drain(struct world *w)
{
	struct mr_tx_meta meta;
	struct mr_pkt p;
	unsigned k;
	size_t n;

	for (k = 0; k < 64; k++) {
		memset(&meta, 0, sizeof(meta));
		n = mr_ep_tx(w->ep, w->now, w->txbuf, sizeof(w->txbuf), &meta);
		if (!n)
			return;
		if (n > sizeof(w->txbuf))
			abort();
		if (mr_wire_parse(w->txbuf, n, &p) != MR_PARSE_OK)
			abort(); /* the endpoint sent an invalid packet */
		if (p.bth.opcode != MR_OP_UD_SEND &&
		    p.bth.opcode != MR_OP_UD_SEND_IMM &&
		    meta.path_id >= NUM_PATHS)
			abort();
	}
}

static void rx(struct world *w, const uint8_t *pkt, size_t len, int ce)
{
	struct mr_rx_meta meta = { .src = 7, .dst = 9, .ecn_ce = (uint8_t)ce };

	rx_pkt = pkt;
	(void)mr_ep_rx(w->ep, w->now, pkt, len, &meta);
	rx_pkt = NULL;
}

/* An address near a region: mostly inside, sometimes just outside. */
static uint64_t pick_addr(struct rd *r, uint32_t *key)
{
	uint8_t sel = rd8(r);
	const struct region *g = &regions[sel % NREG];
	uint16_t off = rd16(r);

	*key = (sel & 0x30) == 0x30 ? rd32(r) : g->key;
	if (sel & 0x40)
		return g->vaddr + g->len - (off % 64); /* at the end */
	if (sel & 0x80)
		return g->vaddr - 8 + (off % 16); /* at the start */
	return g->vaddr + off % g->len;
}

static const uint8_t opcodes[] = {
	MR_OP_SEND,	   MR_OP_SEND_IMM,  MR_OP_WRITE,     MR_OP_WRITE_IMM,
	MR_OP_READ_REQ,	   MR_OP_READ_RESP, MR_OP_ATOMIC_CS, MR_OP_ATOMIC_FA,
	MR_OP_ATOMIC_RESP, MR_OP_ACK,	    MR_OP_UD_SEND,   MR_OP_UD_SEND_IMM,
	MR_OP_ATOMIC_WRITE,
};

static void crafted(struct world *w, struct rd *r)
{
	static uint8_t pkt[MR_MAX_HDR_LEN + MR_AETH_LEN +
			   MR_ACK_MAX_SACK_BYTES + MTU +
			   MR_ICRC_LEN];
	const struct qpdef *d;
	struct mr_pkt p;
	uint8_t sel = rd8(r), *copy;
	uint32_t plen, key, i, j;
	size_t h;

	memset(&p, 0, sizeof(p));
	p.bth.opcode = opcodes[sel % sizeof(opcodes)];
	d = &qpdefs[(sel >> 4) % NQP];
	p.bth.flags = rd8(r) & MR_BTH_F_ALL;
	p.bth.dqpn =
		(sel & 0x80) && (sel & 0x40) ? rd32(r) & MR_QPN_MASK : d->qpn;
	p.bth.sqpn = d->peer;
	/* near the expected sequence numbers, sometimes anywhere */
	p.bth.ssn = (sel & 0x40) ? rd32(r) : d->rq_psn + rd8(r);
	p.bth.msn = rd8(r) & 0x1f;
	p.bth.rsn = rd8(r) & 0x7;
	p.pth.path_id = rd8(r) % (NUM_PATHS + 1);
	p.pth.ppsn = rd16(r);

	plen = rd16(r) % (MTU + 1);
	p.bth.msg_len = rd8(r) & 1 ? plen : plen + rd16(r);
	p.bth.offset = p.bth.msg_len - plen;
	if (rd8(r) & 1 && p.bth.offset)
		p.bth.offset = rd16(r) % p.bth.offset;

	switch (p.bth.opcode) {
	case MR_OP_WRITE:
	case MR_OP_WRITE_IMM:
	case MR_OP_READ_REQ:
		p.reth.vaddr = pick_addr(r, &key);
		p.reth.rkey = key;
		if (p.bth.opcode == MR_OP_READ_REQ) {
			plen = 0;
			p.bth.offset = 0;
		}
		p.reth.dma_len = p.bth.msg_len;
		break;
	case MR_OP_ATOMIC_CS:
	case MR_OP_ATOMIC_FA:
	case MR_OP_ATOMIC_WRITE:
		p.atom.vaddr = pick_addr(r, &key);
		p.atom.rkey = key;
		p.atom.swap_add = rd64(r);
		p.atom.compare = rd64(r);
		plen = 0;
		p.bth.offset = 0;
		p.bth.msg_len = MR_WIRE_ATOMIC_LEN;
		break;
	case MR_OP_ATOMIC_RESP:
		p.atomic_orig = rd64(r);
		plen = 0;
		p.bth.offset = 0;
		p.bth.msg_len = MR_WIRE_ATOMIC_LEN;
		break;
	case MR_OP_ACK:
		plen = 0;
		p.bth.offset = 0;
		p.bth.msg_len = 0;
		p.aeth.syndrome = rd8(r) % 6;
		p.aeth.rnr_timer =
			p.aeth.syndrome == MR_NAK_RNR ? rd8(r) % 32 : 0;
		p.aeth.nak_msn = p.aeth.syndrome ? rd8(r) & 0x1f : 0;
		p.aeth.cum_ssn = d->sq_psn + rd8(r);
		p.aeth.cum_msn = rd8(r) & 0x1f;
		p.aeth.rate_hint = rd32(r);
		p.aeth.ecn_ce = rd16(r);
		p.aeth.nblocks = rd8(r) % (NUM_PATHS + 1);
		for (i = 0; i < p.aeth.nblocks; i++) {
			p.aeth.blocks[i].path_id = (uint16_t)i;
			p.aeth.blocks[i].cum_ppsn = rd8(r);
			for (j = 0; j < 4; j++)
				p.aeth.blocks[i].bitmap[j] = rd8(r);
		}
		break;
	case MR_OP_UD_SEND:
	case MR_OP_UD_SEND_IMM:
		p.deth.qkey = sel & 0x08 ? rd32(r) : UD_QKEY;
		p.bth.offset = 0;
		p.bth.msg_len = plen;
		p.bth.sqpn = rd16(r);
		break;
	}
	if (p.bth.opcode != MR_OP_SEND && p.bth.opcode != MR_OP_SEND_IMM)
		p.bth.rsn = 0;
	p.imm = rd32(r);

	h = mr_wire_encode_hdr(&p, pkt, sizeof(pkt));
	if (!h || sizeof(pkt) - h < plen + MR_ICRC_LEN)
		return;
	for (i = 0; i < plen; i++)
		pkt[h + i] = r->n ? rd8(r) : (uint8_t)i;
	mr_wire_seal(pkt, h + plen);
	/* an exactly sized copy so ASan sees any overrun */
	copy = malloc(h + plen + MR_ICRC_LEN);
	if (!copy)
		return;
	memcpy(copy, pkt, h + plen + MR_ICRC_LEN);
	rx(w, copy, h + plen + MR_ICRC_LEN, sel & 1);
	free(copy);
}

static void raw(struct world *w, struct rd *r)
{
	size_t len = rd16(r) % 2048;
	uint8_t *copy;

	if (len > r->n)
		len = r->n;
	copy = malloc(len ? len : 1);
	if (!copy)
		return;
	memcpy(copy, r->p, len);
	r->p += len;
	r->n -= len;
	rx(w, copy, len, 0);
	free(copy);
}

static void post_send(struct world *w, struct rd *r)
{
	static const enum mr_wr_opcode ops[] = {
		MR_WR_RDMA_WRITE,
		MR_WR_RDMA_WRITE_WITH_IMM,
		MR_WR_SEND,
		MR_WR_SEND_WITH_IMM,
		MR_WR_RDMA_READ,
		MR_WR_ATOMIC_CMP_AND_SWP,
		MR_WR_ATOMIC_FETCH_AND_ADD,
		MR_WR_ATOMIC_WRITE,
	};
	uint8_t sel = rd8(r);
	unsigned i = sel % NQP;
	const struct qpdef *d = &qpdefs[i];
	const struct region *g = d->pd == 1 ? &regions[0] : &regions[2];
	struct mr_send_wr wr;
	struct mr_sge sge;
	uint32_t key;

	memset(&wr, 0, sizeof(wr));
	wr.wr_id = ++w->wr_id;
	wr.opcode = ops[(sel >> 2) % (sizeof(ops) / sizeof(ops[0]))];
	wr.flags = MR_SEND_SIGNALED | (rd8(r) & MR_SEND_FENCE);
	sge.addr = g->vaddr + (rd16(r) % g->len);
	sge.length = rd16(r) % 3000;
	if (sge.length > g->vaddr + g->len - sge.addr)
		sge.length = (uint32_t)(g->vaddr + g->len - sge.addr);
	sge.lkey = g->key;
	if (wr.opcode == MR_WR_ATOMIC_CMP_AND_SWP ||
	    wr.opcode == MR_WR_ATOMIC_FETCH_AND_ADD ||
	    wr.opcode == MR_WR_ATOMIC_WRITE) {
		sge.addr &= ~7ull;
		sge.length = 8;
	}
	wr.sg_list = &sge;
	wr.num_sge = 1;
	wr.imm = rd32(r);
	wr.remote_addr = pick_addr(r, &key);
	wr.rkey = key;
	wr.compare_add = rd64(r);
	wr.swap = rd64(r);
	wr.ud_remote_qpn = 0x33;
	wr.ud_remote_qkey = UD_QKEY;
	(void)mr_qp_post_send(w->qp[i], &wr, w->now);
}

static void teardown(struct world *w)
{
	struct mr_qp_attr a;
	unsigned i;

	memset(&a, 0, sizeof(a));
	a.state = MR_QPS_ERR;
	for (i = 0; i < NQP; i++) {
		if (!w->qp[i])
			continue;
		(void)mr_qp_modify(w->qp[i], &a, MR_QP_STATE);
	}
	if (w->ep)
		drain(w);
	for (i = 0; i < NQP; i++)
		if (w->qp[i] && mr_qp_destroy(w->qp[i]))
			abort();
	if (w->srq && mr_srq_destroy(w->srq))
		abort();
	if (w->ep && mr_ep_destroy(w->ep))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct world w;
	struct rd r = { data, size };
	unsigned i, steps = 0;

	memset(&w, 0, sizeof(w));
	w.now = START_NS;
	rng_s = 0x6d657461726f6365ull;
	live_blocks = 0;
	for (i = 0; i < NREG; i++) {
		regions[i].host = calloc(1, regions[i].len);
		if (!regions[i].host)
			abort();
	}
	if (setup(&w))
		abort(); /* the fixed setup must always succeed */
	drain(&w);

	while (r.n && steps++ < 64) {
		switch (rd8(&r) % 6) {
		case 0:
			raw(&w, &r);
			break;
		case 1:
		case 2:
			crafted(&w, &r);
			break;
		case 3:
			w.now += (uint64_t)rd16(&r) * 1000;
			mr_ep_handle_expiry(w.ep, w.now);
			break;
		case 4:
			post_send(&w, &r);
			break;
		case 5:
			i = rd8(&r) % NQP;
			(void)post_recv(&w, i, rd16(&r), rd16(&r) % 3000);
			break;
		}
		drain(&w);
	}
	/* Let the timers run out: nothing may loop or hang. */
	for (i = 0; i < 16; i++) {
		uint64_t dl = mr_ep_next_deadline(w.ep);

		if (dl == UINT64_MAX)
			break;
		if (dl > w.now)
			w.now = dl;
		mr_ep_handle_expiry(w.ep, w.now);
		drain(&w);
	}

	teardown(&w);
	if (live_blocks != 0)
		abort(); /* the endpoint leaked through its allocator */
	for (i = 0; i < NREG; i++) {
		free(regions[i].host);
		regions[i].host = NULL;
	}
	return 0;
}
