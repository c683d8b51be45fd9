// SPDX-License-Identifier: BSD-2-Clause
/*
 * Extended QPs: ibv_create_qp_ex with send_ops_flags and the ibv_wr_*
 * interface (ibv_wr_start ... ibv_wr_complete).
 *
 * The WRs of one start/complete batch are staged here, in the provider's
 * form (struct mr_send_wr), with their SGEs and a copy of their inline
 * data (the application may reuse an inline buffer as soon as
 * ibv_wr_set_inline_data returns). ibv_wr_complete checks the batch fits
 * the send queue, then hands every WR to the core under one hold of the
 * engine lock, as post_send does with a list. An error in a builder call
 * (an opcode not in send_ops_flags, too many SGEs or inline bytes, a
 * setter without a WR) is kept and returned by ibv_wr_complete, which
 * then posts nothing; ibv_wr_abort drops the batch.
 *
 * Threading: as verbs, the application serialises the calls of one
 * batch on a QP; the staging area is the QP's own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "xlate.h"

/* One staged WR: the core's form, its SGEs and its inline bytes. */
struct metaroce_wr_stage {
	struct mr_send_wr wr;
	struct mr_sge *sge; /* [max_send_sge] */
	uint8_t *inl;	    /* [max_inline] */
	unsigned has_data;  /* a set_sge* or set_inline* call was made */
	unsigned has_ud;    /* set_ud_addr was made */
};

struct metaroce_qp_ex {
	uint64_t ops; /* send_ops_flags granted */
	struct metaroce_wr_stage *st;
	struct mr_sge *sge;
	uint8_t *inl;
	uint32_t cap; /* = max_send_wr */
	uint32_t n;   /* WRs staged */
	int err;      /* first error of the batch (positive errno) */
	bool started;
};

static struct metaroce_qp *qpx_to_mqp(struct ibv_qp_ex *qx)
{
	return to_mqp(&qx->qp_base);
}

static void set_err(struct metaroce_qp_ex *x, int err)
{
	if (!x->err)
		x->err = err;
}

/* A new WR of opcode op (an IBV_QP_EX_WITH_* bit bit), or NULL. */
static struct metaroce_wr_stage *new_wr(struct ibv_qp_ex *qx, uint64_t bit,
					enum mr_wr_opcode op)
{
	struct metaroce_qp *qp = qpx_to_mqp(qx);
	struct metaroce_qp_ex *x = qp->qpx;
	struct metaroce_wr_stage *s;

	if (!x->started) {
		set_err(x, EINVAL);
		return NULL;
	}
	if (!(x->ops & bit)) {
		set_err(x, EOPNOTSUPP);
		return NULL;
	}
	if (x->n == x->cap) {
		set_err(x, ENOMEM); /* as post_send on a full queue */
		return NULL;
	}
	s = &x->st[x->n++];
	memset(&s->wr, 0, sizeof(s->wr));
	s->has_data = 0;
	s->has_ud = 0;
	s->wr.wr_id = qx->wr_id;
	s->wr.opcode = op;
	s->wr.flags = qx->wr_flags & ~(unsigned)IBV_SEND_INLINE;
	s->wr.sg_list = s->sge;
	return s;
}

/* The WR the setters apply to: the last one a builder made. */
static struct metaroce_wr_stage *cur_wr(struct ibv_qp_ex *qx)
{
	struct metaroce_qp_ex *x = qpx_to_mqp(qx)->qpx;

	if (!x->started || !x->n) {
		set_err(x, EINVAL);
		return NULL;
	}
	return &x->st[x->n - 1];
}

static void wr_rdma(struct ibv_qp_ex *qx, uint64_t bit, enum mr_wr_opcode op,
		    uint32_t rkey, uint64_t raddr, uint32_t imm)
{
	struct metaroce_wr_stage *s = new_wr(qx, bit, op);

	if (!s)
		return;
	s->wr.rkey = rkey;
	s->wr.remote_addr = raddr;
	s->wr.imm = imm;
}

static void qx_rdma_write(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	wr_rdma(qx, IBV_QP_EX_WITH_RDMA_WRITE, MR_WR_RDMA_WRITE, rkey, raddr,
		0);
}

static void qx_rdma_write_imm(struct ibv_qp_ex *qx, uint32_t rkey,
			      uint64_t raddr, __be32 imm)
{
	wr_rdma(qx, IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM,
		MR_WR_RDMA_WRITE_WITH_IMM, rkey, raddr, (uint32_t)imm);
}

static void qx_rdma_read(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr)
{
	wr_rdma(qx, IBV_QP_EX_WITH_RDMA_READ, MR_WR_RDMA_READ, rkey, raddr, 0);
}

static void qx_send(struct ibv_qp_ex *qx)
{
	new_wr(qx, IBV_QP_EX_WITH_SEND, MR_WR_SEND);
}

static void qx_send_imm(struct ibv_qp_ex *qx, __be32 imm)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_SEND_WITH_IMM, MR_WR_SEND_WITH_IMM);

	if (s)
		s->wr.imm = (uint32_t)imm;
}

static void qx_cmp_swp(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr,
		       uint64_t compare, uint64_t swap)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP,
		       MR_WR_ATOMIC_CMP_AND_SWP);

	if (!s)
		return;
	s->wr.rkey = rkey;
	s->wr.remote_addr = raddr;
	s->wr.compare_add = compare;
	s->wr.swap = swap;
}

static void qx_fetch_add(struct ibv_qp_ex *qx, uint32_t rkey, uint64_t raddr,
			 uint64_t add)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD,
		       MR_WR_ATOMIC_FETCH_AND_ADD);

	if (!s)
		return;
	s->wr.rkey = rkey;
	s->wr.remote_addr = raddr;
	s->wr.compare_add = add;
}

/* MR-AW-1: the 8 bytes come with the call (no SGE follows): taken now,
 * as the core takes them at post. */
static void qx_atomic_write(struct ibv_qp_ex *qx, uint32_t rkey,
			    uint64_t raddr, const void *atomic_wr)
{
	struct metaroce_wr_stage *s = new_wr(qx, IBV_QP_EX_WITH_ATOMIC_WRITE,
					     MR_WR_ATOMIC_WRITE);

	if (!s)
		return;
	s->wr.rkey = rkey;
	s->wr.remote_addr = raddr;
	memcpy(&s->wr.swap, atomic_wr, sizeof(s->wr.swap));
	s->has_data = 1;
}

/* MR-MW-*: window binds (type 2: type 1 windows are bound by
 * ibv_bind_mw), local and remote invalidation. */
static void qx_bind_mw(struct ibv_qp_ex *qx, struct ibv_mw *mw, uint32_t rkey,
		       const struct ibv_mw_bind_info *bi)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_BIND_MW, MR_WR_BIND_MW);

	if (!s)
		return;
	if (!mw || !bi || mw->type != IBV_MW_TYPE_2) {
		set_err(qpx_to_mqp(qx)->qpx, EINVAL);
		return;
	}
	set_err(qpx_to_mqp(qx)->qpx,
		metaroce_xlate_bind(mw, rkey, bi, &s->wr.bind));
	s->has_data = 1; /* no SGE may follow */
}

static void qx_local_inv(struct ibv_qp_ex *qx, uint32_t invalidate_rkey)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_LOCAL_INV, MR_WR_LOCAL_INV);

	if (!s)
		return;
	s->wr.invalidate_rkey = invalidate_rkey;
	s->has_data = 1;
}

static void qx_send_inv(struct ibv_qp_ex *qx, uint32_t invalidate_rkey)
{
	struct metaroce_wr_stage *s =
		new_wr(qx, IBV_QP_EX_WITH_SEND_WITH_INV, MR_WR_SEND_WITH_INV);

	if (s)
		s->wr.invalidate_rkey = invalidate_rkey;
}

static void qx_set_sge_list(struct ibv_qp_ex *qx, size_t n,
			    const struct ibv_sge *sg)
{
	struct metaroce_qp *qp = qpx_to_mqp(qx);
	struct metaroce_wr_stage *s = cur_wr(qx);
	size_t i;

	if (!s)
		return;
	if (s->has_data || n > qp->cap.max_send_sge || (n && !sg)) {
		set_err(qp->qpx, EINVAL);
		return;
	}
	for (i = 0; i < n; i++) {
		s->sge[i].addr = sg[i].addr;
		s->sge[i].length = sg[i].length;
		s->sge[i].lkey = sg[i].lkey;
	}
	s->wr.num_sge = (unsigned)n;
	s->has_data = 1;
}

static void qx_set_sge(struct ibv_qp_ex *qx, uint32_t lkey, uint64_t addr,
		       uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	qx_set_sge_list(qx, 1, &sg);
}

static void qx_set_inline_data_list(struct ibv_qp_ex *qx, size_t n,
				    const struct ibv_data_buf *buf)
{
	struct metaroce_qp *qp = qpx_to_mqp(qx);
	struct metaroce_wr_stage *s = cur_wr(qx);
	size_t i, len = 0;

	if (!s)
		return;
	if (s->has_data || (n && !buf)) {
		set_err(qp->qpx, EINVAL);
		return;
	}
	for (i = 0; i < n; i++) {
		if (buf[i].length > qp->cap.max_inline_data - len) {
			set_err(qp->qpx, EINVAL);
			return;
		}
		if (buf[i].length)
			memcpy(s->inl + len, buf[i].addr, buf[i].length);
		len += buf[i].length;
	}
	/* One piece of the QP's own memory: the core copies inline data
	 * from the SGE addresses and looks up no key for them. */
	s->sge[0].addr = (uintptr_t)s->inl;
	s->sge[0].length = (uint32_t)len;
	s->sge[0].lkey = 0;
	s->wr.num_sge = 1;
	s->wr.flags |= MR_SEND_INLINE;
	s->has_data = 1;
}

static void qx_set_inline_data(struct ibv_qp_ex *qx, void *addr, size_t len)
{
	struct ibv_data_buf b = { .addr = addr, .length = len };

	qx_set_inline_data_list(qx, 1, &b);
}

static void qx_set_ud_addr(struct ibv_qp_ex *qx, struct ibv_ah *ah,
			   uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct metaroce_qp *qp = qpx_to_mqp(qx);
	struct metaroce_wr_stage *s = cur_wr(qx);

	if (!s)
		return;
	if (qx->qp_base.qp_type != IBV_QPT_UD || !ah || s->has_ud) {
		set_err(qp->qpx, EINVAL);
		return;
	}
	s->wr.ud_remote_qpn = remote_qpn;
	s->wr.ud_remote_qkey = remote_qkey;
	s->wr.ud_dest = to_mah(ah)->dest;
	s->has_ud = 1;
}

static void qx_start(struct ibv_qp_ex *qx)
{
	struct metaroce_qp_ex *x = qpx_to_mqp(qx)->qpx;

	x->n = 0;
	x->err = 0;
	x->started = true;
}

static void qx_abort(struct ibv_qp_ex *qx)
{
	struct metaroce_qp_ex *x = qpx_to_mqp(qx)->qpx;

	x->n = 0;
	x->err = 0;
	x->started = false;
}

static int qx_complete(struct ibv_qp_ex *qx)
{
	struct metaroce_qp *qp = qpx_to_mqp(qx);
	struct metaroce_qp_ex *x = qp->qpx;
	uint32_t i;
	int ret;

	if (!x->started)
		return EINVAL;
	ret = x->err;
	for (i = 0; !ret && i < x->n; i++)
		if (qx->qp_base.qp_type == IBV_QPT_UD && !x->st[i].has_ud)
			ret = EINVAL; /* a datagram needs its address */
	if (ret || !x->n) {
		qx_abort(qx);
		return ret;
	}
	metaroce_engine_lock(qp->eng);
	/* All or nothing as far as the queue goes: the batch must fit. */
	if (mr_qp_sq_room(qp->core) < x->n)
		ret = ENOMEM;
	for (i = 0; !ret && i < x->n; i++)
		ret = metaroce_errno(
			mr_qp_post_send(qp->core, &x->st[i].wr, mrdp_now()));
	metaroce_engine_unlock(qp->eng);
	qx_abort(qx);
	mrdp_posted(qp->eng->dp);
	return ret;
}

uint64_t metaroce_qp_ex_ops(enum ibv_qp_type type)
{
	uint64_t ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM;

	/* MR-UC-6: UC has WRITE but no READ or atomics; MR-MW-8: RC and UC
	 * bind and invalidate windows, RC alone sends with invalidate. */
	if (type == IBV_QPT_UC)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		       IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV;
	if (type == IBV_QPT_RC)
		ops |= IBV_QP_EX_WITH_RDMA_WRITE |
		       IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM |
		       IBV_QP_EX_WITH_RDMA_READ |
		       IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP |
		       IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD |
		       IBV_QP_EX_WITH_ATOMIC_WRITE |
		       IBV_QP_EX_WITH_BIND_MW | IBV_QP_EX_WITH_LOCAL_INV |
		       IBV_QP_EX_WITH_SEND_WITH_INV;
	return ops;
}

int metaroce_qp_ex_init(struct metaroce_qp *qp, uint64_t ops)
{
	struct ibv_qp_ex *qx = &qp->vqp.qp_ex;
	struct metaroce_qp_ex *x;
	uint32_t i, nsge = qp->cap.max_send_sge, ninl = qp->cap.max_inline_data;

	if (ops & ~metaroce_qp_ex_ops(qp->vqp.qp.qp_type))
		return EOPNOTSUPP;
	x = calloc(1, sizeof(*x));
	if (!x)
		return ENOMEM;
	x->cap = qp->cap.max_send_wr;
	x->st = calloc(x->cap, sizeof(*x->st));
	x->sge = calloc((size_t)x->cap * nsge, sizeof(*x->sge));
	x->inl = calloc((size_t)x->cap * (ninl ? ninl : 1), 1);
	if (!x->st || !x->sge || !x->inl) {
		metaroce_qp_ex_free(x);
		return ENOMEM;
	}
	for (i = 0; i < x->cap; i++) {
		x->st[i].sge = x->sge + (size_t)i * nsge;
		x->st[i].inl = x->inl + (size_t)i * ninl;
	}
	x->ops = ops;
	qp->qpx = x;
	qx->wr_start = qx_start;
	qx->wr_complete = qx_complete;
	qx->wr_abort = qx_abort;
	qx->wr_send = qx_send;
	qx->wr_send_imm = qx_send_imm;
	qx->wr_rdma_write = qx_rdma_write;
	qx->wr_rdma_write_imm = qx_rdma_write_imm;
	qx->wr_rdma_read = qx_rdma_read;
	qx->wr_atomic_cmp_swp = qx_cmp_swp;
	qx->wr_atomic_fetch_add = qx_fetch_add;
	qx->wr_set_sge = qx_set_sge;
	qx->wr_set_sge_list = qx_set_sge_list;
	qx->wr_set_inline_data = qx_set_inline_data;
	qx->wr_set_inline_data_list = qx_set_inline_data_list;
	qx->wr_set_ud_addr = qx_set_ud_addr;
	qx->wr_bind_mw = qx_bind_mw;
	qx->wr_local_inv = qx_local_inv;
	qx->wr_send_inv = qx_send_inv;
	qx->wr_atomic_write = qx_atomic_write;
	/* Not offered (send_ops_flags with them is refused): send_tso and
	 * xrc_srqn stay NULL (wr_flush is not in rdma-core 44's ibv_qp_ex). */
	qp->vqp.comp_mask |= MR_PABI_QP_EX;
	return 0;
}

void metaroce_qp_ex_free(struct metaroce_qp_ex *x)
{
	if (!x)
		return;
	free(x->st);
	free(x->sge);
	free(x->inl);
	free(x);
}
