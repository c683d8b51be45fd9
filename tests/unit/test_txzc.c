// SPDX-License-Identifier: BSD-2-Clause
/*
 * Zero-copy transmit (mr_ep_tx_zc): the packet it describes, headers in
 * the buffer + segments of registered memory + ICRC, gathered, is byte for
 * byte the packet mr_ep_tx() writes, for random scatter/gather lists.
 *
 * Three endpoints: A and Z are twins (same configuration, same seed, same
 * memory contents at different host addresses, the same WRs posted at the
 * same times); A is drained with mr_ep_tx(), Z with mr_ep_tx_zc(). B is
 * the peer of both: it receives A's packets (after seeded loss), and
 * whatever B sends reaches A and Z alike, so the twins stay in lock step.
 * Every packet of Z is gathered and compared with A's; at the end every
 * byte B received (WRITE, SEND) or read (READ, which makes A and Z
 * responders) is compared with the sender's memory.
 *
 * The senders' memory is split into MRs of different keys that touch
 * (one ends where the next begins), and SGE lists deliberately cross
 * those boundaries, so one packet's payload comes in several segments;
 * lists of more than MR_TX_ZC_MAX_SEGS pieces must fall back to a copy.
 * Message sizes include 1 byte, min_len - 1, min_len, the MTU and MTU + 1.
 */
#include "mr_core.h"
#include "mr_counters.h"
#include "mr_test.h"
#include "mr_test_mem.h"
#include "mr_wire.h"

#define MEM (1u << 20)
#define NREG 8
#define REG_LEN (MEM / NREG)
#define MAXWR 96
#define MAXSGE 12
#define B_KEY 100
#define QP_S 0x11
#define QP_B 0x22

struct node {
	struct mr_ep *ep;
	struct mr_qp *qp;
	uint8_t *mem;
	int is_b;
	uint64_t rng;
	unsigned nsend_cqe, nrecv_cqe, nerr;
};

static struct node A, Z, B;

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static uint64_t t_rand(void *u)
{
	return xs(&((struct node *)u)->rng);
}

/* Senders: key k (1..NREG) covers [(k-1) * REG_LEN, k * REG_LEN) of the
 * iova space, every right. B: one key over all of its memory. */
static int lookup(void *user, uint32_t pd, uint32_t key, int remote,
		  uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	struct node *n = user;
	uint64_t lo = 0, hi = MEM;

	(void)remote;
	(void)need;
	*host = NULL;
	if (!len)
		return 0;
	if (pd != 1)
		return -MR_EACCESS;
	if (n->is_b) {
		if (key != B_KEY)
			return -MR_EACCESS;
	} else {
		if (key < 1 || key > NREG)
			return -MR_EACCESS;
		lo = (uint64_t)(key - 1) * REG_LEN;
		hi = lo + REG_LEN;
	}
	if (addr < lo || addr > hi || len > hi - addr)
		return -MR_EACCESS;
	*host = n->mem + addr;
	return 0;
}

static void place(void *user, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	(void)user;
	memcpy(dst, src, len);
}

static void complete(void *user, const struct mr_cqe *c)
{
	struct node *n = user;

	if (c->status != MR_WC_SUCCESS) {
		fprintf(stderr, "%s: wr %llu status %d\n",
			n->is_b ? "B" : (n == &A ? "A" : "Z"),
			(unsigned long long)c->wr_id, c->status);
		n->nerr++;
	}
	if (c->is_recv)
		n->nrecv_cqe++;
	else
		n->nsend_cqe++;
}

static void qp_error(void *user, void *qpu)
{
	(void)qpu;
	((struct node *)user)->nerr++;
}

static int node_init(struct node *n, int is_b, uint64_t seed, uint32_t mtu)
{
	struct mr_ep_config ec = { 0 };
	struct mr_mem mm = mr_test_heap;
	struct mr_rand rnd = { t_rand, n };
	struct mr_memreg reg = { .lookup = lookup, .user = n };
	struct mr_callbacks cb = { .place = place,
				   .complete = complete,
				   .qp_error = qp_error,
				   .user = n };
	struct mr_qp_config qc = { 0 };
	struct mr_qp_attr at = { 0 };
	int rc;

	memset(n, 0, sizeof(*n));
	n->is_b = is_b;
	n->rng = seed;
	n->mem = calloc(1, MEM);
	if (!n->mem)
		return -1;
	ec.mtu = mtu;
	ec.num_paths = 4;
	ec.max_qp = 2;
	ec.min_rto_ns = 200000;
	rc = mr_ep_create(&ec, &mm, &rnd, &reg, &cb, &n->ep);
	if (rc)
		return rc;
	qc.type = MR_QPT_RC;
	qc.mode = MR_MODE_METAROCE;
	qc.qpn = is_b ? QP_B : QP_S;
	qc.pd = 1;
	qc.max_send_wr = MAXWR;
	qc.max_recv_wr = MAXWR;
	qc.max_send_sge = MAXSGE;
	qc.max_recv_sge = 1;
	rc = mr_qp_create(n->ep, &qc, &n->qp);
	if (rc)
		return rc;
	at.state = MR_QPS_INIT;
	at.access = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
		    MR_ACCESS_REMOTE_READ;
	rc = mr_qp_modify(n->qp, &at, MR_QP_STATE | MR_QP_ACCESS_FLAGS);
	if (rc)
		return rc;
	at.state = MR_QPS_RTR;
	at.dest_qpn = is_b ? QP_S : QP_B;
	at.rq_psn = is_b ? 1000 : 5000;
	at.path_mtu_bytes = mtu;
	at.dest = is_b ? 1 : 2;
	at.max_dest_rd_atomic = 16;
	at.min_rnr_timer = 1;
	rc = mr_qp_modify(n->qp, &at,
			  MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
				  MR_QP_DEST_QPN | MR_QP_RQ_PSN |
				  MR_QP_MAX_DEST_RD_ATOMIC |
				  MR_QP_MIN_RNR_TIMER);
	if (rc)
		return rc;
	at.state = MR_QPS_RTS;
	at.sq_psn = is_b ? 5000 : 1000;
	at.timeout = 10;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 16;
	return mr_qp_modify(n->qp, &at,
			    MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
				    MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
				    MR_QP_MAX_QP_RD_ATOMIC);
}

static void node_fini(struct node *n)
{
	if (n->qp)
		mr_qp_destroy(n->qp);
	if (n->ep)
		mr_ep_destroy(n->ep);
	free(n->mem);
	n->qp = NULL;
	n->ep = NULL;
	n->mem = NULL;
}

/* One message of the script, as A/Z post it. */
struct msg {
	enum mr_wr_opcode op;
	struct mr_sge sge[MAXSGE];
	unsigned nsge;
	uint32_t len;
	uint64_t b_off; /* WRITE target / SEND buffer / READ destination */
};

static struct msg msgs[MAXWR];
static unsigned nmsgs;
static unsigned by_msn[MAXWR]; /* A's n-th send WR (its msn): msgs index */
static unsigned nby_msn;

/* An SGE list of total length len over the senders' MRs. With
 * cross > 0 the list walks contiguous iova across MR boundaries (one key
 * per MR); else pieces at random places. Returns the number of SGEs,
 * or 0 if len does not fit in MAXSGE pieces. */
static unsigned make_sges(uint64_t *rng, uint32_t len, unsigned want, int cross,
			  struct mr_sge *sge)
{
	uint64_t at;
	unsigned n = 0;

	if (cross) {
		/* Start just before a boundary between MR k and k + 1. */
		unsigned k = 1 + (unsigned)(xs(rng) % (NREG - 2));

		at = (uint64_t)k * REG_LEN - 1 - xs(rng) % 700;
		while (len && n < MAXSGE) {
			uint32_t key = (uint32_t)(at / REG_LEN) + 1;
			uint64_t room = (uint64_t)key * REG_LEN - at;
			uint32_t piece = len < room ? len : (uint32_t)room;

			sge[n].addr = at;
			sge[n].length = piece;
			sge[n].lkey = key;
			n++;
			at += piece;
			len -= piece;
		}
		return len ? 0 : n;
	}
	if (want > len)
		want = len ? len : 1;
	for (n = 0; n < want; n++) {
		uint32_t piece = n + 1 == want ? len : len / want;
		uint32_t key = 1 + (uint32_t)(xs(rng) % NREG);

		at = (uint64_t)(key - 1) * REG_LEN +
		     xs(rng) % (REG_LEN - piece + 1);
		sge[n].addr = at;
		sge[n].length = piece;
		sge[n].lkey = key;
		len -= piece;
	}
	return n;
}

static int post(struct node *n, const struct msg *m, unsigned id, uint64_t now)
{
	struct mr_send_wr wr = {
		.wr_id = id,
		.opcode = m->op,
		.flags = MR_SEND_SIGNALED,
		.sg_list = m->sge,
		.num_sge = m->nsge,
		.remote_addr = m->b_off,
		.rkey = B_KEY,
		.imm = 0x01020304,
	};

	return mr_qp_post_send(n->qp, &wr, now);
}

/* What a run saw, so that it cannot pass without exercising each case. */
struct seen {
	unsigned zc_pkts, copy_pkts, multi_seg, fallback, zc_resp;
	unsigned zc_at_min, copy_below_min, zc_mtu, max_nseg;
	uint64_t retx; /* A's retransmissions */
};

/* Z's packet must be A's: same length and meta, the gathered bytes equal,
 * headers in buf, segments inside Z's registered memory. */
static void compare(const uint8_t *abuf, size_t alen,
		    const struct mr_tx_meta *am, const uint8_t *zbuf,
		    size_t zlen, const struct mr_tx_meta *zm,
		    const struct mr_tx_zc *zc, uint32_t min_len, uint32_t mtu,
		    struct seen *s)
{
	static uint8_t flat[8192];
	struct mr_pkt pkt;
	size_t off;
	unsigned i;

	MR_CHECK_EQ(zlen, alen);
	MR_CHECK_EQ(zm->dest, am->dest);
	MR_CHECK_EQ(zm->path_id, am->path_id);
	MR_CHECK_EQ(zm->entropy, am->entropy);
	MR_CHECK_EQ(zm->plane, am->plane);
	MR_CHECK_EQ(mr_wire_parse(abuf, alen, &pkt), 0);
	if (!zc->nseg) {
		MR_CHECK_MEM(zbuf, abuf, alen);
		if (pkt.payload_len >= min_len &&
		    (pkt.bth.opcode == MR_OP_WRITE ||
		     pkt.bth.opcode == MR_OP_WRITE_IMM ||
		     pkt.bth.opcode == MR_OP_SEND ||
		     pkt.bth.opcode == MR_OP_SEND_IMM)) {
			/* Only a list of more pieces than segments. */
			MR_CHECK(pkt.bth.msn < nby_msn);
			MR_CHECK(msgs[by_msn[pkt.bth.msn]].nsge >
				 MR_TX_ZC_MAX_SEGS);
			s->fallback++;
		}
		MR_CHECK(pkt.bth.opcode != MR_OP_READ_RESP ||
			 pkt.payload_len < min_len);
		if (pkt.payload_len == min_len - 1 && min_len > 1)
			s->copy_below_min++;
		s->copy_pkts++;
		return;
	}
	MR_CHECK(zc->nseg <= MR_TX_ZC_MAX_SEGS);
	MR_CHECK(zc->hdr_len >= MR_BTH_LEN + MR_PTH_LEN);
	MR_CHECK(zc->hdr_len < alen);
	memcpy(flat, zbuf, zc->hdr_len);
	off = zc->hdr_len;
	for (i = 0; i < zc->nseg; i++) {
		const uint8_t *p = zc->seg[i].addr;

		MR_CHECK(zc->seg[i].len > 0);
		MR_CHECK(p >= Z.mem && p + zc->seg[i].len <= Z.mem + MEM);
		MR_CHECK(off + zc->seg[i].len + MR_ICRC_LEN <= alen);
		memcpy(flat + off, p, zc->seg[i].len);
		off += zc->seg[i].len;
	}
	memcpy(flat + off, zc->icrc, MR_ICRC_LEN);
	off += MR_ICRC_LEN;
	MR_CHECK_EQ(off, alen);
	MR_CHECK_MEM(flat, abuf, alen);
	MR_CHECK(pkt.payload_len >= min_len);
	MR_CHECK_EQ(off - zc->hdr_len - MR_ICRC_LEN, pkt.payload_len);
	s->zc_pkts++;
	if (zc->nseg > 1)
		s->multi_seg++;
	if (zc->nseg > s->max_nseg)
		s->max_nseg = zc->nseg;
	if (pkt.bth.opcode == MR_OP_READ_RESP)
		s->zc_resp++;
	if (pkt.payload_len == min_len)
		s->zc_at_min++;
	if (pkt.payload_len == mtu)
		s->zc_mtu++;
}

/*
 * One run: nmsg random messages (WRITE, WRITE_IMM, SEND from A/Z; READ
 * from B), loss_ppm on both directions, until everything completed.
 */
static void run(uint64_t seed, uint32_t mtu, uint32_t min_len, unsigned nmsg,
		uint32_t loss_ppm, struct seen *s)
{
	static uint8_t abuf[8192], zbuf[8192], bbuf[8192], want[16384];
	uint64_t rng = seed, now = 1000000, b_cur = 0;
	unsigned i, nsend = 0, nread = 0, k, idle = 0;
	const uint32_t sizes[] = { 1,	    min_len > 1 ? min_len - 1 : 2,
				   min_len, mtu,
				   mtu + 1, 3 * mtu + 17 };

	int f0 = mr_test_failures;

	memset(s, 0, sizeof(*s));
	MR_CHECK_EQ(node_init(&A, 0, seed ^ 0xa5a5, mtu), 0);
	MR_CHECK_EQ(node_init(&Z, 0, seed ^ 0xa5a5, mtu), 0);
	MR_CHECK_EQ(node_init(&B, 1, seed ^ 0x5a5a, mtu), 0);
	for (i = 0; i < MEM; i++)
		A.mem[i] = (uint8_t)(xs(&rng) >> 24);
	memcpy(Z.mem, A.mem, MEM);

	/* The script: sizes from the list first, then random ones; every
	 * fourth list crosses MR boundaries; some lists are longer than
	 * MR_TX_ZC_MAX_SEGS. */
	nmsgs = 0;
	nby_msn = 0;
	for (i = 0; i < nmsg && i < MAXWR; i++) {
		struct msg *m = &msgs[nmsgs];
		uint32_t len = i < sizeof(sizes) / sizeof(sizes[0])
				       ? sizes[i]
				       : 1 + (uint32_t)(xs(&rng) % (4 * mtu));
		unsigned want_sge = 1 + (unsigned)(xs(&rng) % MAXSGE);
		unsigned r = (unsigned)(xs(&rng) % 8);

		m->op = r < 3	? MR_WR_RDMA_WRITE
			: r < 4 ? MR_WR_RDMA_WRITE_WITH_IMM
			: r < 6 ? MR_WR_SEND
				: MR_WR_RDMA_READ;
		m->len = len;
		m->nsge = make_sges(&rng, len, want_sge, i % 4 == 3, m->sge);
		MR_CHECK(m->nsge > 0);
		if (m->op == MR_WR_RDMA_READ) {
			/* B reads one contiguous piece of an A/Z MR. */
			m->nsge = make_sges(&rng, len, 1, 0, m->sge);
		}
		m->b_off = b_cur;
		b_cur += (len + 63) / 64 * 64;
		MR_CHECK(b_cur <= MEM);
		nmsgs++;
	}
	/* Post: B's receive buffers and READs; A's and Z's sends, alike. */
	for (i = 0; i < nmsgs; i++) {
		struct msg *m = &msgs[i];

		if (m->op == MR_WR_SEND || m->op == MR_WR_RDMA_WRITE_WITH_IMM) {
			struct mr_sge rs = { m->b_off, m->len, B_KEY };
			struct mr_recv_wr rw = { i, &rs, 1 };

			if (m->op == MR_WR_RDMA_WRITE_WITH_IMM)
				rw.num_sge = 0;
			MR_CHECK_EQ(mr_qp_post_recv(B.qp, &rw), 0);
		}
		if (m->op == MR_WR_RDMA_READ) {
			struct mr_sge ls = { m->b_off, m->len, B_KEY };
			struct mr_send_wr wr = {
				.wr_id = i,
				.opcode = MR_WR_RDMA_READ,
				.flags = MR_SEND_SIGNALED,
				.sg_list = &ls,
				.num_sge = 1,
				.remote_addr = m->sge[0].addr,
				.rkey = m->sge[0].lkey,
			};

			MR_CHECK_EQ(mr_qp_post_send(B.qp, &wr, now), 0);
			nread++;
			continue;
		}
		by_msn[nby_msn++] = i;
		MR_CHECK_EQ(post(&A, m, i, now), 0);
		MR_CHECK_EQ(post(&Z, m, i, now), 0);
		nsend++;
	}

	for (k = 0; k < 400000; k++) {
		struct mr_tx_meta am, zm, bm;
		struct mr_tx_zc zc;
		struct mr_rx_meta rm = { 0 };
		size_t al, zl, bl;
		int moved = 0;

		now += 500;
		for (;;) {
			memset(&zc, 0xee, sizeof(zc));
			zc.min_len = min_len;
			al = mr_ep_tx(A.ep, now, abuf, sizeof(abuf), &am);
			zl = mr_ep_tx_zc(Z.ep, now, zbuf, sizeof(zbuf), &zm,
					 &zc);
			if (!al) {
				MR_CHECK_EQ(zl, 0);
				MR_CHECK_EQ(zc.nseg, 0);
				break;
			}
			compare(abuf, al, &am, zbuf, zl, &zm, &zc, min_len, mtu,
				s);
			if (mr_test_failures != f0)
				return;
			moved = 1;
			if (xs(&rng) % 1000000 < loss_ppm)
				continue;
			rm.src = 1;
			mr_ep_rx(B.ep, now, abuf, al, &rm);
		}
		while ((bl = mr_ep_tx(B.ep, now, bbuf, sizeof(bbuf), &bm))) {
			moved = 1;
			if (xs(&rng) % 1000000 < loss_ppm)
				continue;
			rm.src = 2;
			mr_ep_rx(A.ep, now, bbuf, bl, &rm);
			mr_ep_rx(Z.ep, now, bbuf, bl, &rm);
		}
		if (mr_ep_next_deadline(A.ep) <= now ||
		    mr_ep_next_deadline(Z.ep) <= now) {
			mr_ep_handle_expiry(A.ep, now);
			mr_ep_handle_expiry(Z.ep, now);
		}
		if (mr_ep_next_deadline(B.ep) <= now)
			mr_ep_handle_expiry(B.ep, now);
		MR_CHECK_EQ(A.nerr + Z.nerr + B.nerr, 0);
		if (A.nsend_cqe == nsend && B.nsend_cqe == nread &&
		    ++idle > 2000 && !moved)
			break;
	}
	MR_CHECK_EQ(A.nsend_cqe, nsend);
	MR_CHECK_EQ(Z.nsend_cqe, nsend);
	MR_CHECK_EQ(B.nsend_cqe, nread);
	/* Every byte at B: what the sender's SGE list held. */
	for (i = 0; i < nmsgs; i++) {
		const struct msg *m = &msgs[i];
		uint32_t o = 0;
		unsigned g;

		for (g = 0; g < m->nsge; g++) {
			memcpy(want + o, A.mem + m->sge[g].addr,
			       m->sge[g].length);
			o += m->sge[g].length;
		}
		MR_CHECK_EQ(o, m->len);
		MR_CHECK_MEM(B.mem + m->b_off, want, m->len);
	}
	MR_CHECK_MEM(A.mem, Z.mem, MEM);
	s->retx = mr_ep_counters(A.ep)->retx_pkts;
	MR_CHECK_EQ(s->retx, mr_ep_counters(Z.ep)->retx_pkts);
	node_fini(&A);
	node_fini(&Z);
	node_fini(&B);
}

static void report(const char *name, const struct seen *s)
{
	printf("  %s: %u zero-copy packets (%u of several segments, up to "
	       "%u; %u READ responses), %u copied (%u lists of too many "
	       "pieces); %llu retransmissions\n",
	       name, s->zc_pkts, s->multi_seg, s->max_nseg, s->zc_resp,
	       s->copy_pkts, s->fallback, (unsigned long long)s->retx);
}

/* MTU 4096, threshold 1024 (the datapath's), no loss. */
static void test_equal_4096(void)
{
	int f0 = mr_test_failures;
	struct seen s;

	run(0x1234, 4096, 1024, 80, 0, &s);
	if (mr_test_failures != f0)
		return;
	report("mtu 4096", &s);
	MR_CHECK(s.zc_pkts > 50);
	MR_CHECK(s.multi_seg > 0);
	MR_CHECK(s.zc_resp > 0);
	MR_CHECK(s.zc_at_min > 0);
	MR_CHECK(s.zc_mtu > 0);
	MR_CHECK(s.copy_below_min > 0);
	MR_CHECK(s.fallback > 0);
}

/* MTU 1024 with 3% loss both ways: retransmissions are built again, in
 * both forms, from the same memory. */
static void test_equal_loss(void)
{
	int f0 = mr_test_failures;
	struct seen s;

	run(0x77, 1024, 1024, 90, 30000, &s);
	if (mr_test_failures != f0)
		return;
	report("mtu 1024, 3% loss", &s);
	MR_CHECK(s.retx > 0);
	MR_CHECK(s.zc_pkts > 50);
	MR_CHECK(s.multi_seg > 0);
	MR_CHECK(s.zc_mtu > 0);
}

/* Threshold 1: every payload byte leaves by reference, the smallest
 * (1-byte) packets too. */
static void test_equal_all(void)
{
	int f0 = mr_test_failures;
	struct seen s;
	unsigned seed;

	for (seed = 1; seed <= 4; seed++) {
		run(seed * 0x9e3779b9ull, 256 << seed, 1, 60, 5000, &s);
		if (mr_test_failures != f0)
			return;
		MR_CHECK(s.zc_at_min > 0);
		MR_CHECK(s.zc_pkts > 0);
	}
	report("threshold 1", &s);
}

static void test_bad_args(void)
{
	struct mr_tx_meta m;
	uint8_t buf[64];

	struct mr_tx_zc zc = { .min_len = 1 };

	MR_CHECK_EQ(mr_ep_tx_zc(NULL, 0, buf, sizeof(buf), &m, NULL), 0);
	MR_CHECK_EQ(mr_ep_tx_zc(NULL, 0, buf, sizeof(buf), &m, &zc), 0);
	MR_CHECK_EQ(zc.nseg, 0);
}

MR_TEST_MAIN(MR_TEST(test_equal_4096), MR_TEST(test_equal_loss),
	     MR_TEST(test_equal_all), MR_TEST(test_bad_args))
