// SPDX-License-Identifier: BSD-2-Clause
/*
 * Queue pairs (RC, UC and UD) on the core: create, modify through the verbs
 * state machine (the core enforces the transitions; xlate.c checks every
 * attribute first), query, destroy.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "engine.h"
#include "xlate.h"

static int check_init_attr(struct ibv_pd *pd, const struct ibv_qp_init_attr *a)
{
	if (a->qp_type != IBV_QPT_RC && a->qp_type != IBV_QPT_UC &&
	    a->qp_type != IBV_QPT_UD)
		return EOPNOTSUPP; /* XRC, raw packet */
	if (!a->send_cq || !a->recv_cq || a->send_cq->context != pd->context ||
	    a->recv_cq->context != pd->context)
		return EINVAL;
	/* MR-UC-8: RC and UC receive from an SRQ; UD does not here. */
	if (a->srq && (a->srq->pd != pd || a->qp_type == IBV_QPT_UD))
		return EINVAL;
	if (a->cap.max_send_wr > METAROCE_MAX_QP_WR ||
	    a->cap.max_recv_wr > METAROCE_MAX_QP_WR ||
	    a->cap.max_send_sge > METAROCE_MAX_SGE ||
	    a->cap.max_recv_sge > METAROCE_MAX_SGE ||
	    a->cap.max_inline_data > METAROCE_MAX_INLINE)
		return EINVAL;
	return 0;
}

struct ibv_qp *metaroce_create_qp(struct ibv_pd *ibpd,
				  struct ibv_qp_init_attr *attr)
{
	struct metaroce_context *mctx = to_mctx(ibpd->context);
	struct mr_qp_config qc = { 0 };
	struct metaroce_qp *qp;
	struct ibv_qp *q;
	int ret, tries;

	ret = check_init_attr(ibpd, attr);
	if (ret)
		goto err;
	qp = calloc(1, sizeof(*qp));
	if (!qp) {
		ret = ENOMEM;
		goto err;
	}
	ret = metaroce_engine_use(mctx, &qp->eng);
	if (ret)
		goto err_free;
	qp->pd = to_mpd(ibpd);
	qp->scq = to_mcq(attr->send_cq);
	qp->rcq = to_mcq(attr->recv_cq);
	qp->srq = attr->srq ? to_msrq(attr->srq) : NULL;
	qp->cap = attr->cap;
	/* At least one WR and one SGE each way: a zero-sized queue is legal
	 * in verbs but the core sizes its pools from these. */
	if (!qp->cap.max_send_wr)
		qp->cap.max_send_wr = 1;
	if (!qp->cap.max_send_sge)
		qp->cap.max_send_sge = 1;
	if (qp->srq) {
		qp->cap.max_recv_wr = 0;
		qp->cap.max_recv_sge = 0;
	} else {
		if (!qp->cap.max_recv_wr)
			qp->cap.max_recv_wr = 1;
		if (!qp->cap.max_recv_sge)
			qp->cap.max_recv_sge = 1;
	}
	qp->sq_sig_all = attr->sq_sig_all;

	qc.type = (enum mr_qp_type)attr->qp_type;
	/* The device's policy (engine.h): UC and UD QPs ignore the mode. */
	qc.mode = qp->eng->policy.mode;
	qc.pd = qp->pd->pdn;
	qc.max_send_wr = qp->cap.max_send_wr;
	qc.max_recv_wr = qp->cap.max_recv_wr;
	qc.max_send_sge = qp->cap.max_send_sge;
	qc.max_recv_sge = qp->cap.max_recv_sge;
	qc.max_inline = qp->cap.max_inline_data;
	qc.sq_sig_all = attr->sq_sig_all;
	qc.srq = qp->srq ? qp->srq->core : NULL;
	qc.user = qp;
	metaroce_engine_lock(qp->eng);
	/* A number in use (after 2^24 QPs) is refused: take the next. */
	for (tries = 0; tries < 8; tries++) {
		qc.qpn = metaroce_engine_qpn(qp->eng);
		ret = mr_qp_create(qp->eng->ep, &qc, &qp->core);
		if (ret != -MR_EINVAL)
			break;
	}
	metaroce_engine_unlock(qp->eng);
	if (ret) {
		ret = metaroce_errno(ret);
		goto err_free;
	}

	q = &qp->vqp.qp;
	q->context = ibpd->context;
	q->qp_context = attr->qp_context;
	q->pd = ibpd;
	q->send_cq = attr->send_cq;
	q->recv_cq = attr->recv_cq;
	q->srq = attr->srq;
	q->handle = qc.qpn;
	q->qp_num = qc.qpn;
	q->state = IBV_QPS_RESET;
	q->qp_type = attr->qp_type;
	pthread_mutex_init(&q->mutex, NULL);
	pthread_cond_init(&q->cond, NULL);
	q->events_completed = 0;
	qp->attr.qp_state = IBV_QPS_RESET;
	qp->attr.cap = qp->cap;
	qp->attr.port_num = 1;
	qp->pd->users++;
	qp->scq->users++;
	qp->rcq->users++;
	if (qp->srq)
		qp->srq->users++;
	attr->cap = qp->cap; /* what was granted */
	metaroce_dbg("qp 0x%x created (%s)", qc.qpn,
		     attr->qp_type == IBV_QPT_RC   ? "RC"
		     : attr->qp_type == IBV_QPT_UC ? "UC"
						   : "UD");
	return q;

err_free:
	free(qp);
err:
	errno = ret;
	return NULL;
}

struct ibv_qp *metaroce_create_qp_ex(struct ibv_context *context,
				     struct ibv_qp_init_attr_ex *ax)
{
	const uint32_t known = IBV_QP_INIT_ATTR_PD |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			       IBV_QP_INIT_ATTR_CREATE_FLAGS;
	struct ibv_qp_init_attr a = { 0 };
	struct ibv_qp *q;
	int ret;

	/* Unknown or unsupported parts first: XRC domains, RSS, TSO,
	 * source QPNs and create flags are not offered. */
	if (ax->comp_mask & ~known) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!(ax->comp_mask & IBV_QP_INIT_ATTR_PD) || !ax->pd ||
	    ax->pd->context != context) {
		errno = EINVAL;
		return NULL;
	}
	if ((ax->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    ax->create_flags) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if ((ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (ax->qp_type == IBV_QPT_RC || ax->qp_type == IBV_QPT_UC ||
	     ax->qp_type == IBV_QPT_UD) &&
	    (ax->send_ops_flags & ~metaroce_qp_ex_ops(ax->qp_type))) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	a.qp_context = ax->qp_context;
	a.send_cq = ax->send_cq;
	a.recv_cq = ax->recv_cq;
	a.srq = ax->srq;
	a.cap = ax->cap;
	a.qp_type = ax->qp_type;
	a.sq_sig_all = ax->sq_sig_all;
	q = metaroce_create_qp(ax->pd, &a);
	if (!q)
		return NULL;
	if (ax->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		ret = metaroce_qp_ex_init(to_mqp(q), ax->send_ops_flags);
		if (ret) {
			metaroce_destroy_qp(q);
			errno = ret;
			return NULL;
		}
	}
	ax->cap = a.cap;
	return q;
}

/* Keep what query_qp reports and the core does not. */
static void remember_attr(struct metaroce_qp *qp, const struct ibv_qp_attr *a,
			  int mask)
{
	struct ibv_qp_attr *r = &qp->attr;

	if (mask & IBV_QP_STATE)
		r->qp_state = a->qp_state;
	if (mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		r->en_sqd_async_notify = a->en_sqd_async_notify;
	if (mask & IBV_QP_ACCESS_FLAGS)
		r->qp_access_flags = a->qp_access_flags;
	if (mask & IBV_QP_QKEY)
		r->qkey = a->qkey;
	if (mask & IBV_QP_AV)
		r->ah_attr = a->ah_attr;
	if (mask & IBV_QP_PATH_MTU)
		r->path_mtu = a->path_mtu;
	if (mask & IBV_QP_TIMEOUT)
		r->timeout = a->timeout;
	if (mask & IBV_QP_RETRY_CNT)
		r->retry_cnt = a->retry_cnt;
	if (mask & IBV_QP_RNR_RETRY)
		r->rnr_retry = a->rnr_retry;
	if (mask & IBV_QP_RQ_PSN)
		r->rq_psn = a->rq_psn;
	if (mask & IBV_QP_SQ_PSN)
		r->sq_psn = a->sq_psn;
	if (mask & IBV_QP_MAX_QP_RD_ATOMIC)
		r->max_rd_atomic = a->max_rd_atomic;
	if (mask & IBV_QP_MAX_DEST_RD_ATOMIC)
		r->max_dest_rd_atomic = a->max_dest_rd_atomic;
	if (mask & IBV_QP_MIN_RNR_TIMER)
		r->min_rnr_timer = a->min_rnr_timer;
	if (mask & IBV_QP_DEST_QPN)
		r->dest_qp_num = a->dest_qp_num;
}

int metaroce_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		       int attr_mask)
{
	struct metaroce_device *dev = to_mctx(ibqp->context)->dev;
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct ibv_qp_attr lattr;
	struct mr_qp_attr ca;
	struct mr_qp_attr now;
	unsigned cmask;
	uint8_t old_notify;
	int ret;

	if (attr_mask & IBV_QP_AV) {
		/* A vector without GRH addresses the peer by LID. */
		lattr = *attr;
		ret = metaroce_av_from_lid(&attr->ah_attr, dev->conf.ip,
					   dev->conf.prefix, &lattr.ah_attr);
		if (ret)
			return ret;
		attr = &lattr;
	}
	ret = metaroce_xlate_qp_attr(attr, attr_mask, ibqp->qp_type,
				     dev->conf.mtu, &dev->gids, &ca, &cmask);
	if (ret)
		return ret;
	/* Resolve the peer's next hops now, so the first packet does not
	 * wait; a peer no plane routes to fails the modify, as on RoCE
	 * (MR-ROUTE-6). */
	if ((attr_mask & IBV_QP_AV) && ca.dest) {
		ret = metaroce_resolve(to_mctx(ibqp->context), ca.dest);
		if (ret)
			return ret;
	}
	/* What the last round left (an ACK deferred by mrdp_completed())
	 * leaves before the state changes under it. */
	if (attr_mask & IBV_QP_STATE)
		mrdp_settle(qp->eng->dp);
	metaroce_engine_lock(qp->eng);
	if (attr_mask & IBV_QP_CUR_STATE) {
		mr_qp_query(qp->core, &now);
		if ((enum ibv_qp_state)now.state != attr->cur_qp_state) {
			metaroce_engine_unlock(qp->eng);
			return EINVAL;
		}
	}
	/* The move to SQD may report "drained" from inside mr_qp_modify()
	 * (nothing in flight): the callback must see the request. */
	old_notify = qp->attr.en_sqd_async_notify;
	if (attr_mask & IBV_QP_EN_SQD_ASYNC_NOTIFY)
		qp->attr.en_sqd_async_notify = attr->en_sqd_async_notify;
	ret = mr_qp_modify(qp->core, &ca, cmask);
	if (ret)
		qp->attr.en_sqd_async_notify = old_notify;
	metaroce_engine_unlock(qp->eng);
	if (ret)
		return metaroce_errno(ret);
	remember_attr(qp, attr, attr_mask);
	metaroce_dbg("qp 0x%x modify mask 0x%x -> state %d", ibqp->qp_num,
		     attr_mask,
		     (attr_mask & IBV_QP_STATE) ? (int)attr->qp_state : -1);
	return 0;
}

int metaroce_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct mr_qp_attr ca;
	int ret;

	metaroce_engine_lock(qp->eng);
	ret = mr_qp_query(qp->core, &ca);
	metaroce_engine_unlock(qp->eng);
	if (ret)
		return metaroce_errno(ret);
	/* Everything is reported whatever attr_mask asks, as providers
	 * commonly do; the mask only says what the caller will read. */
	*attr = qp->attr;
	attr->qp_state = (enum ibv_qp_state)ca.state;
	attr->cur_qp_state = attr->qp_state;
	attr->path_mig_state = IBV_MIG_MIGRATED;
	attr->sq_draining = ca.sq_draining;
	attr->port_num = 1;
	attr->pkey_index = 0;
	attr->cap = qp->cap;
	if (ibqp->qp_type == IBV_QPT_RC || ibqp->qp_type == IBV_QPT_UC) {
		if (ca.path_mtu_bytes)
			attr->path_mtu = metaroce_mtu_enum(ca.path_mtu_bytes);
		attr->dest_qp_num = ca.dest_qpn;
		attr->rq_psn = ca.rq_psn;
		attr->sq_psn = ca.sq_psn;
		attr->qp_access_flags = (int)ca.access;
	} else {
		attr->qkey = ca.qkey;
		attr->sq_psn = ca.sq_psn;
	}
	ibqp->state = attr->qp_state;
	memset(init_attr, 0, sizeof(*init_attr));
	init_attr->qp_context = ibqp->qp_context;
	init_attr->send_cq = ibqp->send_cq;
	init_attr->recv_cq = ibqp->recv_cq;
	init_attr->srq = ibqp->srq;
	init_attr->cap = qp->cap;
	init_attr->qp_type = ibqp->qp_type;
	init_attr->sq_sig_all = qp->sq_sig_all;
	return 0;
}

int metaroce_destroy_qp(struct ibv_qp *ibqp)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	int ret;

	/* An application that destroys its QP right after its last
	 * completion: the ACK of that message, deferred to the next round
	 * (mrdp_completed()), must leave first, or the peer retries until
	 * its retry count is exceeded (seen: tests/dp dp-svc). */
	mrdp_settle(qp->eng->dp);
	metaroce_engine_lock(qp->eng);
	ret = mr_qp_destroy(qp->core);
	metaroce_engine_unlock(qp->eng);
	if (ret)
		return metaroce_errno(ret);
	qp->pd->users--;
	qp->scq->users--;
	qp->rcq->users--;
	if (qp->srq)
		qp->srq->users--;
	metaroce_qp_ex_free(qp->qpx);
	qp->qpx = NULL;
	metaroce_free_obj(to_mctx(ibqp->context), qp, &ibqp->mutex,
			  &ibqp->events_completed, qp->async_events);
	return 0;
}
