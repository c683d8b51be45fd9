// SPDX-License-Identifier: BSD-2-Clause
/*
 * Memory windows (docs/spec/windows.md MR-MW-*): ibv_alloc_mw and
 * ibv_dealloc_mw make and remove a window's slot in the context's key
 * table (mr_table.h: one key space for regions and windows); ibv_bind_mw
 * binds a type 1 window through a QP's send queue, as IBV_WR_BIND_MW
 * binds a type 2 one (post.c, qp_ex.c); the table applies lib/core's
 * rules (mr_mw.h) when the core's send queue reaches the bind.
 */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "xlate.h"

struct ibv_mw *metaroce_alloc_mw(struct ibv_pd *ibpd, enum ibv_mw_type type)
{
	struct metaroce_context *mctx = to_mctx(ibpd->context);
	struct metaroce_pd *pd = to_mpd(ibpd);
	struct metaroce_mrt_ent e = { 0 };
	struct ibv_mw *mw;
	uint32_t key;
	int ret;

	if (type != IBV_MW_TYPE_1 && type != IBV_MW_TYPE_2) {
		errno = EINVAL;
		return NULL;
	}
	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	e.owner = mw;
	e.kind = METAROCE_MRT_MW;
	e.pd = pd->pdn;
	e.mw.type = type == IBV_MW_TYPE_1 ? MR_MW_TYPE_1 : MR_MW_TYPE_2;
	ret = metaroce_mrt_add(&mctx->dev->mrt, &e, &key);
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}
	pd->users++;
	mw->context = ibpd->context;
	mw->pd = ibpd;
	mw->rkey = key;
	mw->handle = key;
	mw->type = type;
	return mw;
}

int metaroce_dealloc_mw(struct ibv_mw *mw)
{
	struct metaroce_context *mctx = to_mctx(mw->context);
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;
	int ret;

	/* As dereg_mr: under the device lock no round is using the window
	 * when the key goes. The key is the table's, whatever binds gave
	 * the application. */
	if (eng)
		metaroce_engine_lock(eng);
	ret = metaroce_mrt_del_mw(&mctx->dev->mrt, mw->handle, mw);
	if (eng)
		metaroce_engine_unlock(eng);
	if (ret)
		return ret;
	to_mpd(mw->pd)->users--;
	free(mw);
	return 0;
}

int metaroce_bind_mw(struct ibv_qp *ibqp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mb)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct mr_send_wr cw = { 0 };
	uint32_t next;
	int ret;

	/* MR-MW-1: the Bind verb binds type 1 windows; type 2 windows are
	 * bound by a send WR. */
	if (!mw || !mb || mw->type != IBV_MW_TYPE_1 ||
	    mw->context != ibqp->context)
		return EINVAL;
	if (mb->send_flags & ~(unsigned)(IBV_SEND_SIGNALED | IBV_SEND_FENCE))
		return EINVAL;
	next = mr_mw_next_rkey(mw->rkey); /* MR-MW-7 */
	ret = metaroce_xlate_bind(mw, next, &mb->bind_info, &cw.bind);
	if (ret)
		return ret;
	cw.wr_id = mb->wr_id;
	cw.opcode = MR_WR_BIND_MW;
	cw.flags = mb->send_flags;
	metaroce_engine_lock(qp->eng);
	ret = metaroce_errno(mr_qp_post_send(qp->core, &cw, mrdp_now()));
	metaroce_engine_unlock(qp->eng);
	/* As verbs says: the window's rkey is the new one once the bind is
	 * posted (its completion tells whether it took). */
	if (!ret)
		mw->rkey = next;
	mrdp_progress(qp->eng->dp);
	mrdp_kick(qp->eng->dp);
	return ret;
}
