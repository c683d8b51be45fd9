// SPDX-License-Identifier: BSD-2-Clause
/* mri-verbs: posting work requests, checking completions and memory,
 * and the bad requests. */
#include "mri_verbs.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

double mri_now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* ---- posting and completions ---- */

static uint64_t wrid(int k, int i, int recv)
{
	return ((uint64_t)k << 16) | (recv ? 0x8000u : 0) | (uint32_t)i;
}

void mri_post_recvs(struct side *s, const struct step *st)
{
	struct ibv_sge sge[MAX_SGE];
	struct ibv_recv_wr wr, *bad;
	int i, j;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!mri_has_recv(o->kind))
			continue;
		for (j = 0; j < o->rnsge; j++) {
			sge[j].addr = (uintptr_t)s->buf + o->rsge[j].off;
			sge[j].length = o->rsge[j].len;
			sge[j].lkey = s->mr->lkey;
		}
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = wrid(st->k, i, 1);
		wr.sg_list = sge;
		wr.num_sge = o->rnsge;
		if (ibv_post_recv(s->qp, &wr, &bad))
			mri_fail("ibv_post_recv step %d op %d", st->k, i);
	}
}

static const enum ibv_wr_opcode wr_opc[] = {
	[OP_SEND] = IBV_WR_SEND,
	[OP_SEND_IMM] = IBV_WR_SEND_WITH_IMM,
	[OP_WRITE] = IBV_WR_RDMA_WRITE,
	[OP_WRITE_IMM] = IBV_WR_RDMA_WRITE_WITH_IMM,
	[OP_READ] = IBV_WR_RDMA_READ,
	[OP_CAS] = IBV_WR_ATOMIC_CMP_AND_SWP,
	[OP_FAA] = IBV_WR_ATOMIC_FETCH_AND_ADD,
};

static const enum ibv_wc_opcode wc_opc[] = {
	[OP_SEND] = IBV_WC_SEND,	[OP_SEND_IMM] = IBV_WC_SEND,
	[OP_WRITE] = IBV_WC_RDMA_WRITE, [OP_WRITE_IMM] = IBV_WC_RDMA_WRITE,
	[OP_READ] = IBV_WC_RDMA_READ,	[OP_CAS] = IBV_WC_COMP_SWAP,
	[OP_FAA] = IBV_WC_FETCH_ADD,
};

/* Posts the step's work requests in one to three chains. Inline data is
 * staged in the scratch area, which is scribbled over as soon as
 * ibv_post_send returns: inline means copied at post time. */
void mri_post_sends(struct side *s, const struct remote *rm,
		    const struct step *st)
{
	static struct ibv_sge sge[MAX_OPS][MAX_SGE];
	static struct ibv_send_wr wr[MAX_OPS];
	uint64_t rng = mri_seed ^ ((uint64_t)st->k << 40);
	uint32_t scr = OFF_SCR, scr0, scr_end[MAX_OPS];
	struct ibv_send_wr *bad;
	int i, j, first = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];
		struct ibv_send_wr *w = &wr[i];

		memset(w, 0, sizeof(*w));
		w->wr_id = wrid(st->k, i, 0);
		w->sg_list = sge[i];
		w->num_sge = o->nsge;
		w->opcode = wr_opc[o->kind];
		w->send_flags = (o->signaled ? IBV_SEND_SIGNALED : 0) |
				(o->inl ? IBV_SEND_INLINE : 0) |
				(o->fence ? IBV_SEND_FENCE : 0);
		for (j = 0; j < o->nsge; j++) {
			uint32_t off = o->sge[j].off;

			if (o->inl) {
				memcpy(s->buf + scr, s->buf + off,
				       o->sge[j].len);
				off = scr;
				scr += o->sge[j].len;
			}
			sge[i][j].addr = (uintptr_t)s->buf + off;
			sge[i][j].length = o->sge[j].len;
			sge[i][j].lkey = s->mr->lkey;
		}
		if (o->kind == OP_SEND_IMM || o->kind == OP_WRITE_IMM)
			w->imm_data = htonl(o->imm);
		if (o->kind == OP_CAS || o->kind == OP_FAA) {
			w->wr.atomic.remote_addr = rm->base + o->roff;
			w->wr.atomic.rkey = rm->rkey;
			w->wr.atomic.compare_add = o->cmp;
			w->wr.atomic.swap = o->swp;
		} else {
			w->wr.rdma.remote_addr = rm->base + o->roff;
			w->wr.rdma.rkey = rm->rkey;
			/* The remote-read-only MR covers dst. */
			if (o->kind == OP_READ && o->roff >= OFF_DST &&
			    o->roff + o->len <= OFF_DST + REGION &&
			    mri_rr(&rng, 0, 1))
				w->wr.rdma.rkey = rm->ro_rkey;
		}
		scr_end[i] = scr;
	}
	scr0 = OFF_SCR;
	while (first < st->nops) {
		int n = (int)mri_rr(&rng, 1, st->nops - first);

		if (mri_rr(&rng, 0, 2))
			n = st->nops - first;
		for (i = first; i < first + n - 1; i++)
			wr[i].next = &wr[i + 1];
		wr[first + n - 1].next = NULL;
		if (ibv_post_send(s->qp, &wr[first], &bad))
			mri_fail("ibv_post_send step %d op %d: error", st->k,
				 (int)(bad - wr));
		/* All inline data posted so far may go now. */
		first += n;
		memset(s->buf + scr0, 0xa5, scr_end[first - 1] - scr0);
		scr0 = scr_end[first - 1];
	}
}

/* Next completion of cq; fails after WAIT_S seconds without one. */
void mri_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *who,
		  double limit)
{
	double t0 = mri_now_s();
	unsigned idle = 0;
	int n;

	while ((n = ibv_poll_cq(cq, 1, wc)) == 0) {
		if (++idle % 256 == 0) {
			if (mri_now_s() - t0 > limit)
				mri_fail("%s: no completion within %.0f s", who,
					 limit);
			usleep(50);
		}
	}
	if (n < 0)
		mri_fail("%s: ibv_poll_cq returned %d", who, n);
}

void mri_no_more(struct ibv_cq *cq, const char *who)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(cq, 1, &wc) != 0)
		mri_fail("%s: an unexpected completion (wr_id %#" PRIx64
			 " status %s)",
			 who, wc.wr_id, ibv_wc_status_str(wc.status));
}

void mri_expect_wc(const struct ibv_wc *wc, const char *who, uint64_t id,
		   enum ibv_wc_status status, int opc, uint32_t len, int imm,
		   uint32_t immv, uint32_t qpn)
{
	if (wc->wr_id != id)
		mri_fail("%s: completion out of order: wr_id %#" PRIx64
			 ", expected %#" PRIx64 " (status %s)",
			 who, wc->wr_id, id, ibv_wc_status_str(wc->status));
	if (wc->status != status)
		mri_fail("%s: wr_id %#" PRIx64 ": status %s, expected %s", who,
			 id, ibv_wc_status_str(wc->status),
			 ibv_wc_status_str(status));
	if (wc->qp_num != qpn)
		mri_fail("%s: wr_id %#" PRIx64 ": qp_num %#x, expected %#x",
			 who, id, wc->qp_num, qpn);
	if (status != IBV_WC_SUCCESS)
		return; /* opcode and length are undefined on error */
	if ((int)wc->opcode != opc)
		mri_fail("%s: wr_id %#" PRIx64 ": opcode %d, expected %d", who,
			 id, wc->opcode, opc);
	if (wc->byte_len != len)
		mri_fail("%s: wr_id %#" PRIx64 ": byte_len %u, expected %u",
			 who, id, wc->byte_len, len);
	if (!!(wc->wc_flags & IBV_WC_WITH_IMM) != imm)
		mri_fail("%s: wr_id %#" PRIx64 ": IBV_WC_WITH_IMM %s", who, id,
			 imm ? "missing" : "unexpected");
	if (imm && wc->imm_data != htonl(immv))
		mri_fail("%s: wr_id %#" PRIx64 ": imm %#x, expected %#x", who,
			 id, ntohl(wc->imm_data), immv);
}

/* The requester's completions: the signalled WRs, in posting order. */
int mri_poll_sends(struct side *s, const struct step *st)
{
	struct ibv_wc wc;
	char who[64];
	int i, n = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!o->signaled)
			continue;
		snprintf(who, sizeof(who), "requester, step %d op %d (%s)",
			 st->k, i, mri_op_name[o->kind]);
		mri_poll_one(s->scq, &wc, who, WAIT_S);
		mri_expect_wc(&wc, who, wrid(st->k, i, 0), IBV_WC_SUCCESS,
			      wc_opc[o->kind], o->len, 0, 0, s->qp->qp_num);
		n++;
	}
	mri_no_more(s->scq, "requester");
	return n;
}

/* The responder's completions: one per SEND / WRITE_IMM, in order. */
int mri_poll_recvs(struct side *s, const struct step *st)
{
	struct ibv_wc wc;
	char who[64];
	int i, n = 0;

	for (i = 0; i < st->nops; i++) {
		const struct op *o = &st->ops[i];

		if (!mri_has_recv(o->kind))
			continue;
		snprintf(who, sizeof(who), "responder, step %d op %d (%s)",
			 st->k, i, mri_op_name[o->kind]);
		mri_poll_one(s->rcq, &wc, who, WAIT_S);
		mri_expect_wc(
			&wc, who, wrid(st->k, i, 1), IBV_WC_SUCCESS,
			o->kind == OP_WRITE_IMM ? IBV_WC_RECV_RDMA_WITH_IMM
						: IBV_WC_RECV,
			o->len, o->kind != OP_SEND, o->imm, s->qp->qp_num);
		n++;
	}
	mri_no_more(s->rcq, "responder");
	return n;
}

/* Every modelled byte of a side's memory. */
void mri_verify_mem(const struct side *s, int i, const char *when)
{
	static const char *const rn[] = { "src", "dst", "atomic" };
	uint32_t off, first = 0, n = 0;

	if (!memcmp(s->buf, mri_img[i], IMG_LEN))
		return;
	for (off = 0; off < IMG_LEN; off++)
		if (s->buf[off] != mri_img[i][off] && !n++)
			first = off;
	mri_fail("%s: %s memory: %u bytes differ, first at %s+%u (got %#x, "
		 "expected %#x)",
		 when, i ? "responder" : "requester", n, rn[first / REGION],
		 first % REGION, s->buf[first], mri_img[i][first]);
}

static uint64_t step_bytes(const struct step *st)
{
	uint64_t b = 0;
	int i;

	for (i = 0; i < st->nops; i++)
		b += st->ops[i].len;
	return b;
}

void mri_step_report(const struct step *st, int nsc, int nrc)
{
	printf("step %2d %-26s %2d WRs %8" PRIu64 " bytes, %2d send ", st->k,
	       st->what, st->nops, step_bytes(st), nsc);
	if (nrc >= 0)
		printf("+ %2d recv ", nrc);
	printf("completions ok, memory ok\n");
	fflush(stdout);
}

/* ---- the bad cases ---- */

const char *const mri_bad_name[] = { "WRITE with an unknown rkey",
				     "READ with an unknown rkey",
				     "FETCH_AND_ADD with an unknown rkey",
				     "WRITE beyond the MR",
				     "WRITE through a remote-read-only MR" };

void mri_bad_post_recv(struct side *s)
{
	struct ibv_sge sge = { .addr = (uintptr_t)s->buf + BAD_RECV_OFF,
			       .length = 256,
			       .lkey = s->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = 0xbad0,
				  .sg_list = &sge,
				  .num_sge = 1 },
			   *bad;

	if (ibv_post_recv(s->qp, &wr, &bad))
		mri_fail("ibv_post_recv");
}

/* A bad request, then a SEND and a READ or WRITE that must be flushed.
 * The follow-ups carry data that is already in place (or land in the
 * unmodelled scratch area), so whether the responder saw them before
 * the error or not, both memories still equal the model. */
void mri_bad_run(struct side *s, const struct remote *rm, enum bad b)
{
	uint8_t *scr = s->buf + OFF_SCR;
	struct ibv_sge sg[3] = {
		{ (uintptr_t)s->buf + OFF_DST + 65536, BAD_LEN, s->mr->lkey },
		{ (uintptr_t)scr, 100, s->mr->lkey },
		{ (uintptr_t)scr + 4096, 200, s->mr->lkey },
	};
	struct ibv_send_wr wr[3], *bad;
	uint32_t badkey = rm->rkey ^ 0x5a5a00u;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr qa;
	struct ibv_wc wc;
	int i;

	if (badkey == rm->ro_rkey)
		badkey ^= 0x1000000u;
	memset(wr, 0, sizeof(wr));
	for (i = 0; i < 3; i++) {
		wr[i].wr_id = 0xbad00 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
	}
	wr[0].opcode = IBV_WR_RDMA_WRITE;
	wr[0].wr.rdma.remote_addr = rm->base + OFF_DST + 12288;
	wr[0].wr.rdma.rkey = badkey;
	switch (b) {
	case BAD_READ_RKEY:
		wr[0].opcode = IBV_WR_RDMA_READ;
		break;
	case BAD_ATOMIC_RKEY:
		wr[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		sg[0].length = 8;
		wr[0].wr.atomic.remote_addr = rm->base + OFF_ATOM;
		wr[0].wr.atomic.rkey = badkey;
		wr[0].wr.atomic.compare_add = 1;
		break;
	case BAD_WRITE_RANGE:
		wr[0].wr.rdma.rkey = rm->rkey;
		wr[0].wr.rdma.remote_addr = rm->base + BUF_LEN - 100;
		break;
	case BAD_WRITE_RO:
		wr[0].wr.rdma.rkey = rm->ro_rkey;
		break;
	default:
		break;
	}
	/* Follow-up 1: SEND of what the responder's buffer already holds. */
	memcpy(scr, mri_img[1] + BAD_RECV_OFF, 100);
	wr[1].opcode = IBV_WR_SEND;
	/* Follow-up 2: WRITE of bytes already there, or READ to scratch. */
	wr[2].opcode =
		b == BAD_WRITE_RKEY ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
	wr[2].wr.rdma.remote_addr = rm->base + OFF_DST + 20480;
	wr[2].wr.rdma.rkey = rm->rkey;
	memcpy(scr + 4096, mri_img[1] + OFF_DST + 20480, 200);
	if (ibv_post_send(s->qp, wr, &bad))
		mri_fail("ibv_post_send (%s)", mri_bad_name[b]);
	mri_poll_one(s->scq, &wc, mri_bad_name[b], WAIT_S);
	mri_expect_wc(&wc, mri_bad_name[b], 0xbad00, IBV_WC_REM_ACCESS_ERR, 0,
		      0, 0, 0, s->qp->qp_num);
	for (i = 1; i < 3; i++) {
		mri_poll_one(s->scq, &wc, mri_bad_name[b], WAIT_S);
		mri_expect_wc(&wc, mri_bad_name[b], 0xbad00 + i,
			      IBV_WC_WR_FLUSH_ERR, 0, 0, 0, 0, s->qp->qp_num);
	}
	mri_no_more(s->scq, mri_bad_name[b]);
	if (ibv_query_qp(s->qp, &qa, IBV_QP_STATE, &ia) ||
	    qa.qp_state != IBV_QPS_ERR)
		mri_fail("%s: QP state %d after the error, expected ERR",
			 mri_bad_name[b], qa.qp_state);
	printf("bad case: %s -> IBV_WC_REM_ACCESS_ERR, then 2 WRs "
	       "IBV_WC_WR_FLUSH_ERR, QP in ERR\n",
	       mri_bad_name[b]);
}

/* Completions a responder QP may leave after the error: only flushes of
 * its one receive (or its successful completion, as the SEND may have
 * arrived before the bad request's error was seen). */
void mri_bad_drain(struct side *s)
{
	struct ibv_wc wc;

	while (ibv_poll_cq(s->rcq, 1, &wc) == 1)
		if (wc.wr_id != 0xbad0 || (wc.status != IBV_WC_SUCCESS &&
					   wc.status != IBV_WC_WR_FLUSH_ERR))
			mri_fail("responder: unexpected completion %#" PRIx64
				 " %s after a bad request",
				 wc.wr_id, ibv_wc_status_str(wc.status));
}
