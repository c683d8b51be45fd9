// SPDX-License-Identifier: BSD-2-Clause
/*
 * Extended CQs: ibv_create_cq_ex, the ibv_start_poll / ibv_next_poll /
 * ibv_end_poll iteration and the ibv_wc_read_* readers, completion
 * timestamps (metaroce_hca_clock), and ibv_query_rt_values_ex.
 *
 * An extended CQ is the same ring of ibv_wc as a plain one (ibv_poll_cq
 * works on it too), plus a time per entry when asked. start_poll and
 * next_poll each take one entry out of the ring under the CQ lock (the
 * consumers' lock; the producer never takes it) into cq->cur, so no lock is held while the application reads it between
 * the calls; end_poll has nothing left to release.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "metaroce.h"

/* The wc_flags we can fill: every standard field and the timestamp.
 * Not: CVLAN, FLOW_TAG, TM_INFO, the wallclock timestamp. */
#define CQ_EX_WC_FLAGS \
	(IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)

static struct metaroce_cq *cqx_to_mcq(struct ibv_cq_ex *cx)
{
	return (struct metaroce_cq *)cx;
}

/* Take the next entry into cur; ENOENT when the ring is empty. The
 * ring's memory order: metaroce.h. */
static int take(struct metaroce_cq *cq)
{
	struct ibv_cq_ex *cx = &cq->vcq.cq_ex;
	uint32_t head;
	int ret = ENOENT;

	if (atomic_load_explicit(&cq->tail, memory_order_acquire) ==
	    atomic_load_explicit(&cq->head, memory_order_relaxed))
		return ENOENT;
	pthread_mutex_lock(&cq->lock);
	head = atomic_load_explicit(&cq->head, memory_order_relaxed);
	if (head != atomic_load_explicit(&cq->tail, memory_order_acquire)) {
		uint32_t i = head & (cq->size - 1);

		cq->cur = cq->ring[i];
		cq->cur_ts = cq->ts ? cq->ts[i] : 0;
		atomic_store_explicit(&cq->head, head + 1,
				      memory_order_release);
		cx->wr_id = cq->cur.wr_id;
		cx->status = cq->cur.status;
		ret = 0;
	}
	pthread_mutex_unlock(&cq->lock);
	if (ret == 0 && !(cq->cur.opcode & IBV_WC_RECV))
		metaroce_cq_sends_done(cq, 1);
	if (ret == 0 && metaroce_wc_is_read(cq->cur.opcode))
		metaroce_cq_reads_done(cq, 1);
	return ret;
}

static int cqx_start_poll(struct ibv_cq_ex *cx, struct ibv_poll_cq_attr *attr)
{
	struct metaroce_cq *cq = cqx_to_mcq(cx);
	int ret;
	bool armed;

	if (attr->comp_mask)
		return EINVAL;
	/* As poll_cq (cq.c): an armed CQ is checked before a wait on its
	 * channel, not polled continuously, and never leased. */
	armed = metaroce_cq_armed(cq);
	metaroce_progress_cq(cq->mctx, armed);
	ret = take(cq);
	/* ENOENT: nothing, the application waits (the lease, as poll_cq). */
	if (ret == 0) {
		metaroce_polled(cq->mctx, 1);
	} else if (!armed) {
		int w = metaroce_cq_waits(cq);

		if (w)
			metaroce_polled(cq->mctx, w);
	}
	return ret;
}

static int cqx_next_poll(struct ibv_cq_ex *cx)
{
	return take(cqx_to_mcq(cx));
}

static void cqx_end_poll(struct ibv_cq_ex *cx)
{
}

static enum ibv_wc_opcode cqx_opcode(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.opcode;
}

static uint32_t cqx_vendor_err(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.vendor_err;
}

static uint32_t cqx_byte_len(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.byte_len;
}

static __be32 cqx_imm_data(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.imm_data;
}

static uint32_t cqx_qp_num(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.qp_num;
}

static uint32_t cqx_src_qp(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.src_qp;
}

static unsigned int cqx_wc_flags(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.wc_flags;
}

static uint32_t cqx_slid(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.slid;
}

static uint8_t cqx_sl(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.sl;
}

static uint8_t cqx_dlid_path_bits(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur.dlid_path_bits;
}

static uint64_t cqx_completion_ts(struct ibv_cq_ex *cx)
{
	return cqx_to_mcq(cx)->cur_ts;
}

struct ibv_cq_ex *metaroce_create_cq_ex(struct ibv_context *context,
					struct ibv_cq_init_attr_ex *attr)
{
	const uint32_t known = IBV_CQ_INIT_ATTR_MASK_FLAGS;
	struct metaroce_cq *cq;
	struct ibv_cq_ex *cx;

	/* What we cannot do is refused before anything is made: a parent
	 * domain, flags other than SINGLE_THREADED (a hint we may ignore),
	 * wc_flags we cannot fill. */
	if ((attr->comp_mask & ~known) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED)) ||
	    (attr->wc_flags & ~(uint64_t)CQ_EX_WC_FLAGS)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->cqe > INT32_MAX || attr->comp_vector > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	cq = metaroce_cq_alloc(
		context, (int)attr->cqe, attr->channel, (int)attr->comp_vector,
		attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	if (!cq)
		return NULL;
	cq->wc_flags = attr->wc_flags;
	cx = &cq->vcq.cq_ex;
	/* libibverbs' wrapper of create_cq_ex (__lib_ibv_create_cq_ex, like
	 * ibv_create_cq) sets context, channel, cq_context and the sync
	 * objects after we return, and takes the channel reference that
	 * ibv_destroy_cq drops: taking it here too left the channel busy
	 * forever (UCX: ibv_destroy_comp_channel returned EBUSY). */
	cx->start_poll = cqx_start_poll;
	cx->next_poll = cqx_next_poll;
	cx->end_poll = cqx_end_poll;
	cx->read_opcode = cqx_opcode;
	cx->read_vendor_err = cqx_vendor_err;
	cx->read_wc_flags = cqx_wc_flags;
	if (attr->wc_flags & IBV_WC_EX_WITH_BYTE_LEN)
		cx->read_byte_len = cqx_byte_len;
	if (attr->wc_flags & IBV_WC_EX_WITH_IMM)
		cx->read_imm_data = cqx_imm_data;
	if (attr->wc_flags & IBV_WC_EX_WITH_QP_NUM)
		cx->read_qp_num = cqx_qp_num;
	if (attr->wc_flags & IBV_WC_EX_WITH_SRC_QP)
		cx->read_src_qp = cqx_src_qp;
	if (attr->wc_flags & IBV_WC_EX_WITH_SLID)
		cx->read_slid = cqx_slid;
	if (attr->wc_flags & IBV_WC_EX_WITH_SL)
		cx->read_sl = cqx_sl;
	if (attr->wc_flags & IBV_WC_EX_WITH_DLID_PATH_BITS)
		cx->read_dlid_path_bits = cqx_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cx->read_completion_ts = cqx_completion_ts;
	return cx;
}

int metaroce_query_rt_values(struct ibv_context *context,
			     struct ibv_values_ex *values)
{
	if (values->comp_mask & ~(uint32_t)IBV_VALUES_MASK_RAW_CLOCK)
		return EOPNOTSUPP;
	if (values->comp_mask & IBV_VALUES_MASK_RAW_CLOCK) {
		/* As mlx5: the raw counter in tv_nsec, tv_sec 0. */
		values->raw_clock.tv_sec = 0;
		values->raw_clock.tv_nsec = (long)metaroce_hca_clock();
	}
	return 0;
}
