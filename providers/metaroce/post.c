// SPDX-License-Identifier: BSD-2-Clause
/*
 * post_send / post_recv / post_srq_recv: each WR is checked and
 * translated (xlate.c) and handed to the core, which copies it; a list is
 * posted under one hold of the engine lock. Then one round of inline
 * progress sends what can go now, so latency does not wait for the
 * progress thread.
 */
#include <errno.h>

#include "engine.h"
#include "xlate.h"

int metaroce_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct mr_sge sges[METAROCE_MAX_SGE];
	struct mr_send_wr cw;
	int ret = 0, signaled = 0, is_read;

	metaroce_engine_lock(qp->eng);
	for (; wr; wr = wr->next) {
		uint32_t dest = 0;

		if (ibqp->qp_type == IBV_QPT_UD) {
			if (!wr->wr.ud.ah) {
				ret = EINVAL;
				break;
			}
			dest = to_mah(wr->wr.ud.ah)->dest;
		}
		ret = metaroce_xlate_send_wr(wr, ibqp->qp_type,
					     qp->cap.max_send_sge, dest, sges,
					     &cw);
		if (ret)
			break;
		/* Counted before the core has it (the lock held): its
		 * completion, pushed by a later round, is polled after. The
		 * lease rule of the send CQ's polls (metaroce_cq_waits). */
		signaled = qp->scq &&
			   (qp->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED));
		is_read = wr->opcode == IBV_WR_RDMA_READ ||
			  wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			  wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD;
		if (signaled)
			atomic_fetch_add_explicit(&qp->scq->sends_out, 1,
						  memory_order_relaxed);
		if (signaled && is_read)
			atomic_fetch_add_explicit(&qp->scq->reads_out, 1,
						  memory_order_relaxed);
		ret = metaroce_errno(
			mr_qp_post_send(qp->core, &cw, mrdp_now()));
		if (ret) {
			if (signaled)
				metaroce_cq_sends_done(qp->scq, 1);
			if (signaled && is_read)
				metaroce_cq_reads_done(qp->scq, 1);
			break;
		}
	}
	metaroce_engine_unlock(qp->eng);
	if (ret)
		*bad_wr = wr;
	/* Send what can go now, and keep the progress thread awake for
	 * what cannot (pacing, the rest of a long message). */
	mrdp_posted(qp->eng->dp);
	return ret;
}

int metaroce_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr)
{
	struct metaroce_qp *qp = to_mqp(ibqp);
	struct mr_sge sges[METAROCE_MAX_SGE];
	struct mr_recv_wr cw;
	int ret = 0;

	if (qp->srq) {
		*bad_wr = wr;
		return EINVAL; /* receives go to the SRQ */
	}
	metaroce_engine_lock(qp->eng);
	for (; wr; wr = wr->next) {
		ret = metaroce_xlate_recv_wr(wr, qp->cap.max_recv_sge, sges,
					     &cw);
		if (ret)
			break;
		ret = metaroce_errno(mr_qp_post_recv(qp->core, &cw));
		if (ret)
			break;
	}
	metaroce_engine_unlock(qp->eng);
	if (ret)
		*bad_wr = wr;
	return ret;
}

int metaroce_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr)
{
	struct metaroce_srq *srq = to_msrq(ibsrq);
	struct mr_sge sges[METAROCE_MAX_SGE];
	struct mr_recv_wr cw;
	int ret = 0;

	metaroce_engine_lock(srq->eng);
	for (; wr; wr = wr->next) {
		ret = metaroce_xlate_recv_wr(wr, srq->max_sge, sges, &cw);
		if (ret)
			break;
		ret = metaroce_errno(mr_srq_post_recv(srq->core, &cw));
		if (ret)
			break;
	}
	metaroce_engine_unlock(srq->eng);
	if (ret)
		*bad_wr = wr;
	return ret;
}
