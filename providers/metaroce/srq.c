// SPDX-License-Identifier: BSD-2-Clause
/* Shared receive queues on the core, with the limit event. */
#include <errno.h>
#include <stdlib.h>

#include "engine.h"
#include "xlate.h"

struct ibv_srq *metaroce_create_srq(struct ibv_pd *ibpd,
				    struct ibv_srq_init_attr *init)
{
	struct metaroce_context *mctx = to_mctx(ibpd->context);
	struct ibv_srq_attr *a = &init->attr;
	struct mr_srq_config sc = { 0 };
	struct metaroce_srq *srq;
	int ret;

	/* srq_limit is not an attribute of creation (verbs ignores it
	 * there); it is armed with modify_srq. */
	if (a->max_wr == 0 || a->max_wr > METAROCE_MAX_SRQ_WR ||
	    a->max_sge > METAROCE_MAX_SGE) {
		errno = EINVAL;
		return NULL;
	}
	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	ret = metaroce_engine_use(mctx, &srq->eng);
	if (ret)
		goto err;
	srq->mctx = mctx;
	srq->pd = to_mpd(ibpd);
	srq->max_wr = a->max_wr;
	srq->max_sge = a->max_sge ? a->max_sge : 1;
	sc.pd = srq->pd->pdn;
	sc.max_wr = srq->max_wr;
	sc.max_sge = srq->max_sge;
	sc.limit = 0;
	sc.user = srq;
	metaroce_engine_lock(srq->eng);
	ret = mr_srq_create(srq->eng->ep, &sc, &srq->core);
	metaroce_engine_unlock(srq->eng);
	if (ret) {
		ret = metaroce_errno(ret);
		goto err;
	}
	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	srq->pd->users++;
	a->max_wr = srq->max_wr;
	a->max_sge = srq->max_sge;
	/* libibverbs fills context, srq_context, pd and the sync objects. */
	return &srq->vsrq.srq;
err:
	free(srq);
	errno = ret;
	return NULL;
}

int metaroce_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
			int mask)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	int ret;

	if (mask & ~(IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT))
		return EINVAL;
	if (mask & IBV_SRQ_MAX_WR)
		return EOPNOTSUPP; /* no resizing: pools are fixed at create */
	if (!(mask & IBV_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->max_wr)
		return EINVAL;
	metaroce_engine_lock(srq->eng);
	ret = mr_srq_modify_limit(srq->core, attr->srq_limit);
	if (!ret)
		srq->limit = attr->srq_limit;
	metaroce_engine_unlock(srq->eng);
	return metaroce_errno(ret);
}

int metaroce_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);

	metaroce_engine_lock(srq->eng);
	attr->max_wr = srq->max_wr;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = srq->limit;
	metaroce_engine_unlock(srq->eng);
	return 0;
}

int metaroce_destroy_srq(struct ibv_srq *ibsrq)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	int ret;

	if (srq->users)
		return EBUSY;
	metaroce_engine_lock(srq->eng);
	ret = mr_srq_destroy(srq->core);
	metaroce_engine_unlock(srq->eng);
	if (ret)
		return metaroce_errno(ret);
	srq->pd->users--;
	metaroce_free_obj(srq->mctx, srq, &ibsrq->mutex,
			  &ibsrq->events_completed, srq->async_events);
	return 0;
}
