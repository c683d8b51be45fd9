/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The device's engine in this process: lib/core's endpoint (struct mr_ep)
 * driven by lib/dp's datapath (struct mrdp_dev). Opened by the first QP or
 * SRQ of any context of the device, so listing and querying a device
 * (ibv_devinfo) never starts DPDK; closed when the last context that used
 * it is closed.
 *
 * Locking: every call into the endpoint or one of its QPs/SRQs is made
 * between metaroce_engine_lock() and metaroce_engine_unlock() (the
 * datapath's device lock, which its progress thread also takes). The
 * engine's callbacks run with that lock held; the CQ ring they fill is
 * single-producer and takes no lock on that side (metaroce.h). Only
 * resize_cq takes a CQ's lock inside the engine lock; nothing takes the
 * engine lock while holding a CQ lock.
 *
 * Callbacks: completions go to the QP's send or receive CQ; a QP that
 * fails on its own raises IBV_EVENT_QP_FATAL and an SRQ below its limit
 * IBV_EVENT_SRQ_LIMIT_REACHED through its context's async pipe.
 */
#ifndef METAROCE_ENGINE_H
#define METAROCE_ENGINE_H

#include "metaroce.h"
#include "mr_core.h"
#include "mr_policy.h"
#include "mrdp.h"

struct metaroce_engine {
	struct metaroce_device *dev;
	struct mr_ep *ep;
	struct mrdp_dev *dp;
	uint64_t rng;		   /* splitmix64 state for the core */
	_Atomic uint32_t next_qpn; /* QP numbers handed to the core */
	struct mr_knobs knobs;	   /* in force, resolved at open */
	struct mr_policy policy;   /* mode, cc, pathsel, paths (MR-POL-1) */
	/* Steering (mrdp_qpn_range): this process's QPNs are qpn_base ..
	 * qpn_base + qpn_count - 1; qpn_count 0: any 24-bit QPN. */
	uint32_t qpn_base, qpn_count;
};

/* The device's engine, opened if needed, for a context about to create a
 * QP or SRQ. 0 or a positive errno (with one line on stderr saying why
 * the datapath could not be opened). */
int metaroce_engine_use(struct metaroce_context *mctx,
			struct metaroce_engine **out);

void metaroce_engine_lock(struct metaroce_engine *eng);
void metaroce_engine_unlock(struct metaroce_engine *eng);

/* A QP number not used by a live QP of this engine (24 bits, not 0/1). */
uint32_t metaroce_engine_qpn(struct metaroce_engine *eng);

/* A core error (negative MR_E*) as the errno a verb returns. */
int metaroce_errno(int core_err);

/* The verbs that need the engine (installed by alloc_context when the
 * provider is built with lib/core's engine and lib/dp). */
extern const struct verbs_context_ops metaroce_engine_ctx_ops;

/* qp.c */
struct ibv_qp *metaroce_create_qp(struct ibv_pd *pd,
				  struct ibv_qp_init_attr *attr);
int metaroce_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		       int attr_mask);
int metaroce_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_qp_init_attr *init_attr);
int metaroce_destroy_qp(struct ibv_qp *qp);
/* ibv_create_qp_ex: comp_mask PD, SEND_OPS_FLAGS, CREATE_FLAGS (0). */
struct ibv_qp *metaroce_create_qp_ex(struct ibv_context *context,
				     struct ibv_qp_init_attr_ex *attr);

/* qp_ex.c */
/* The IBV_QP_EX_WITH_* operations a QP of this type offers. */
uint64_t metaroce_qp_ex_ops(enum ibv_qp_type type);
/* Give a created QP the ibv_wr_* interface for ops: 0, EOPNOTSUPP (an
 * operation not offered), ENOMEM. */
int metaroce_qp_ex_init(struct metaroce_qp *qp, uint64_t ops);
void metaroce_qp_ex_free(struct metaroce_qp_ex *x);

/* srq.c */
struct ibv_srq *metaroce_create_srq(struct ibv_pd *pd,
				    struct ibv_srq_init_attr *init);
int metaroce_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			int mask);
int metaroce_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr);
int metaroce_destroy_srq(struct ibv_srq *srq);

/* post.c */
int metaroce_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
		       struct ibv_send_wr **bad_wr);
int metaroce_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
		       struct ibv_recv_wr **bad_wr);
int metaroce_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			   struct ibv_recv_wr **bad_wr);

#endif /* METAROCE_ENGINE_H */
