/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The MetaRoCE verbs provider: private objects and what the files of the
 * provider share. Verbs follow rdma-core's conventions: int verbs return a
 * positive errno, pointer verbs set errno and return NULL.
 *
 * Logging: metaroce_dbg(), off unless METAROCE_DEBUG is set in the
 * environment; real misconfiguration (an unreadable device record) is
 * reported on stderr once, as libibverbs does for its own warnings.
 */
#ifndef METAROCE_H
#define METAROCE_H

#include <pthread.h>
#include <stdint.h>

#include "mr_devconf.h"
#include "mr_pabi.h"
#include "mr_table.h"

/* Our own ids, not those of mlx4/mlx5/EFA (perftest and UCX change
 * behaviour for theirs): 0x4d52 is "MR". */
#define METAROCE_VENDOR_ID 0x4d52
#define METAROCE_VENDOR_PART_ID 0x0001
#define METAROCE_HW_VER 1

#define METAROCE_MAX_MR (1u << 16)
#define METAROCE_MAX_PD (1u << 16)
#define METAROCE_GID_TBL_LEN 2 /* 0: link-local, 1: IPv4-mapped, RoCE v2 */
#define METAROCE_MAX_MSG_SZ (1u << 31)

struct metaroce_device {
	struct verbs_device vdev;
	struct mr_devconf conf; /* the device record, read at alloc_device */
};

struct metaroce_context {
	struct verbs_context vctx;
	struct metaroce_device *dev;
	/* Write end of the async event pipe; the read end is
	 * vctx.context.async_fd, which verbs_uninit_context() closes. */
	int async_wfd;
	pthread_mutex_t lock; /* protects next_pdn, npd */
	uint32_t next_pdn;
	uint32_t npd;
	struct metaroce_mrt mrt;
};

struct metaroce_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	/* Objects that use this PD (MRs now; QPs, SRQs, AHs later): a PD
	 * still in use cannot be deallocated (EBUSY), as with a kernel. */
	_Atomic uint32_t users;
};

struct metaroce_mr {
	struct verbs_mr vmr;
	uint64_t iova;
};

static inline struct metaroce_device *to_mdev(struct ibv_device *ibdev)
{
	return (struct metaroce_device *)ibdev;
}

static inline struct metaroce_context *to_mctx(struct ibv_context *ctx)
{
	return (struct metaroce_context *)((uint8_t *)ctx -
					   offsetof(struct metaroce_context,
						    vctx.context));
}

static inline struct metaroce_pd *to_mpd(struct ibv_pd *pd)
{
	return (struct metaroce_pd *)pd;
}

static inline struct metaroce_mr *to_mmr(struct verbs_mr *vmr)
{
	return (struct metaroce_mr *)vmr;
}

/* context.c */
int metaroce_query_device_ex(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size);
int metaroce_query_port(struct ibv_context *context, uint8_t port_num,
			struct ibv_port_attr *port_attr);
struct verbs_context *metaroce_alloc_context(struct ibv_device *ibdev,
					     int cmd_fd, void *private_data);
/* Queue one async event record for ibv_get_async_event(); element is the
 * ibv_cq/qp/srq pointer or the port number. 0 or a positive errno (EAGAIN
 * when the application left the pipe full). */
int metaroce_async_event(struct metaroce_context *mctx, uint64_t element,
			 uint32_t event_type);

/* pd_mr.c */
struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context);
int metaroce_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *metaroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t hca_va, int access);
struct ibv_mr *metaroce_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				      size_t length, uint64_t iova, int fd,
				      int access);
int metaroce_dereg_mr(struct verbs_mr *vmr);

/* Debug logging (METAROCE_DEBUG=1). */
extern int metaroce_debug_on;
#define metaroce_dbg(fmt, ...)                                                 \
	do {                                                                   \
		if (metaroce_debug_on)                                         \
			fprintf(stderr, "metaroce: " fmt "\n", ##__VA_ARGS__); \
	} while (0)

#endif /* METAROCE_H */
