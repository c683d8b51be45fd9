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
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "mr_devconf.h"
#include "mr_pabi.h"
#include "mr_table.h"
#include "xlate.h"

/* Our own ids, not those of mlx4/mlx5/EFA (perftest and UCX change
 * behaviour for theirs): 0x4d52 is "MR". */
#define METAROCE_VENDOR_ID 0x4d52
#define METAROCE_VENDOR_PART_ID 0x0001
#define METAROCE_HW_VER 1

#define METAROCE_MAX_MR (1u << 16)
#define METAROCE_MAX_PD (1u << 16)
#define METAROCE_MAX_MSG_SZ (1u << 31)
#define METAROCE_MAX_CQ (1u << 16)
#define METAROCE_MAX_CQE (1u << 20) /* ring allocated at create_cq */
#define METAROCE_MAX_AH (1u << 20)
#define METAROCE_MAX_QP 4096
#define METAROCE_MAX_QP_WR 16384
#define METAROCE_MAX_SRQ 1024
#define METAROCE_MAX_SRQ_WR 16384
/* device_cap_flags_ex bit of ATOMIC WRITE: IB_UVERBS_DEVICE_ATOMIC_WRITE of
 * the kernel's uapi (ib_user_verbs.h since Linux 6.2; rdma-core 44's copy
 * of the header predates it). rxe reports it there; programs test the bit
 * of attr.device_cap_flags_ex from ibv_query_device_ex. */
#define METAROCE_DEVICE_ATOMIC_WRITE (1ull << 40)

struct metaroce_engine; /* engine.h: the core endpoint + datapath */

/* One per device and process, shared by every context opened on it: the
 * datapath can open a device's ports once per process, and an rkey must
 * resolve whichever context registered it. */
struct metaroce_device {
	struct verbs_device vdev;
	struct mr_devconf conf; /* the device record, read at alloc_device */
	/* Its GID table (lib/devconf/mr_gid.h; the sysfs view lists the
	 * same) and the address book of its IPv6 ids, shared with the
	 * datapath (mrdp_config.addrs). */
	struct metaroce_gids gids;
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	struct metaroce_mrt mrt;     /* every MR of every context */
	_Atomic uint32_t next_pdn;   /* PD numbers, unique on the device */
	pthread_mutex_t eng_lock;    /* protects eng, eng_users */
	struct metaroce_engine *eng; /* opened by the first QP or SRQ */
	unsigned eng_users;	     /* contexts that use eng */
};

struct metaroce_context {
	struct verbs_context vctx;
	struct metaroce_device *dev;
	/* Write end of the async event pipe; the read end is
	 * vctx.context.async_fd, which verbs_uninit_context() closes. */
	int async_wfd;
	/* A receive completion was pushed on one of its CQs: its send-only
	 * CQs keep the old rule (no lease; metaroce_cq_waits). */
	_Atomic bool recvs;
	pthread_mutex_t lock; /* protects npd, uses_engine, parked */
	uint32_t npd;
	bool uses_engine;		/* holds one of dev->eng_users */
	struct metaroce_parked *parked; /* destroyed objects events name */
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

enum metaroce_cq_arm {
	METAROCE_CQ_DISARMED = 0,
	METAROCE_CQ_ARMED_ANY,
	METAROCE_CQ_ARMED_SOLICITED,
};

/* Completion queue: a single-producer ring of work completions. The
 * producer is the engine's complete callback, which always runs with the
 * datapath lock held (so one producer at a time, whatever the thread); the
 * consumers are poll_cq / start_poll, serialised among themselves by the
 * CQ lock, which the producer never takes: a CQ the application polls
 * while the progress thread fills it costs no lock hand-off (a contended
 * CQ lock cost ib_send_lat milliseconds, bench/wire FINDINGS 9.4). tail is
 * published with release after the entry is written, head with release
 * after it is read. resize takes both locks (datapath, then CQ). */
struct metaroce_cq {
	struct verbs_cq vcq;
	pthread_mutex_t lock;
	struct ibv_wc *ring;
	uint32_t size;	     /* power of 2 >= the cqe asked for */
	/* free-running; tail - head entries. tail: producer, head: consumers */
	_Atomic uint32_t head, tail;
	_Atomic int armed; /* enum metaroce_cq_arm */
	bool overrun;	      /* CQ_ERR raised */
	int chan_wfd;	      /* write end of the channel's pipe, or -1 */
	uint64_t notify_lost; /* events not written: channel pipe full */
	struct metaroce_context *mctx;
	_Atomic uint32_t users; /* QPs using it: destroy answers EBUSY */
	uint32_t async_events;	/* CQ_ERR records queued */
	/* Extended CQs (cq_ex.c): completion time of each ring entry (NULL
	 * unless IBV_WC_EX_WITH_COMPLETION_TIMESTAMP), the wc_flags asked
	 * for, and the entry start_poll/next_poll took. */
	uint64_t *ts;
	uint64_t wc_flags;
	struct ibv_wc cur;
	uint64_t cur_ts;
	/* A receive completion has been pushed here (so its context's
	 * recvs is set: no CQ of that context leases, metaroce_cq_waits). */
	_Atomic bool recvs;
	/* Signaled sends posted (post_send) on QPs whose send CQ this is,
	 * less the send completions polled (cq_send_done): at most one
	 * outstanding, a poll that finds nothing waits for its answer
	 * (ib_write_lat, ib_read_lat: the ACK, the read's response) and
	 * leases too; a stream's sender (ib_write_bw, 128) does not: its
	 * lease would change at every completion (two epoll_ctl each). */
	atomic_int sends_out;
	/* Of those, READs and atomics (their completions polled taken off):
	 * their answer is response data the progress thread places, not an
	 * ACK, and with the lease ib_read_lat's p99 doubled (FINDINGS 26):
	 * while one is outstanding a send CQ does not lease. */
	atomic_int reads_out;
};

/* The lease rule of a poll that found nothing (cq.c, cq_ex.c): -1 a CQ
 * of sends waiting for its one outstanding send in a context that never
 * took a receive (an application that spins on its memory next:
 * ib_write_lat, ib_read_lat; mrdp_polled), 0 none. A CQ that takes
 * receives does not lease: its application polls it until the receive
 * arrives, the thread naps off its sockets meanwhile (mrdp_dev.c
 * app_polls), and the lease only added its costs on the application's
 * side of every wait: an epoll_ctl 5 us in, a timerfd_settime for its
 * guard (5-13 us on the test VM) and an epoll_ctl at the completion,
 * before the application sees it. ib_send_lat 7-10 against 23-37 us
 * typical without it (bench/wire/FINDINGS.md 28-lat). A receiving
 * context's send CQs do not lease either. */
static inline int metaroce_cq_waits(struct metaroce_cq *cq)
{
	if (atomic_load_explicit(&cq->mctx->recvs, memory_order_relaxed))
		return 0;
	if (atomic_load_explicit(&cq->sends_out, memory_order_relaxed) > 1 ||
	    atomic_load_explicit(&cq->reads_out, memory_order_relaxed) > 0)
		return 0;
	return -1;
}

/* n send completions polled (a flush of unsignaled WRs may take it below
 * zero: held at zero). */
static inline void metaroce_cq_sends_done(struct metaroce_cq *cq, int n)
{
	if (n && atomic_fetch_sub_explicit(&cq->sends_out, n,
					   memory_order_relaxed) < n)
		atomic_store_explicit(&cq->sends_out, 0, memory_order_relaxed);
}

/* n READ or atomic completions polled (held at zero, as above). */
static inline void metaroce_cq_reads_done(struct metaroce_cq *cq, int n)
{
	if (n && atomic_fetch_sub_explicit(&cq->reads_out, n,
					   memory_order_relaxed) < n)
		atomic_store_explicit(&cq->reads_out, 0, memory_order_relaxed);
}

/* Is a completion's opcode a READ's or an atomic's (reads_out)? */
static inline bool metaroce_wc_is_read(enum ibv_wc_opcode op)
{
	return op == IBV_WC_RDMA_READ || op == IBV_WC_COMP_SWAP ||
	       op == IBV_WC_FETCH_ADD;
}

struct metaroce_srq;
struct metaroce_qp_ex; /* qp_ex.c: the ibv_wr_* staging of a QP */

/* Queue pair: the core's QP and what verbs asks of it that the core does
 * not keep (caps as granted, the AV and timers for query_qp). */
struct metaroce_qp {
	struct verbs_qp vqp;
	struct mr_qp *core;
	struct metaroce_engine *eng;
	struct metaroce_pd *pd;
	struct metaroce_cq *scq, *rcq;
	struct metaroce_srq *srq;
	struct ibv_qp_cap cap;
	int sq_sig_all;
	struct ibv_qp_attr attr;       /* last values set, for query_qp */
	struct metaroce_qp_ex *qpx;    /* created with send_ops_flags */
	_Atomic uint32_t async_events; /* records queued naming this QP */
};

/* Shared receive queue. */
struct metaroce_srq {
	struct verbs_srq vsrq;
	struct mr_srq *core;
	struct metaroce_engine *eng;
	struct metaroce_context *mctx;
	struct metaroce_pd *pd;
	uint32_t max_wr, max_sge, limit;
	_Atomic uint32_t users;	       /* QPs using it */
	_Atomic uint32_t async_events; /* records queued naming this SRQ */
};

/* Address handle (UD): the attributes as given, and the datapath's id of
 * the destination address (IPv4, host order; see lib/dp/mrdp.h). */
struct metaroce_ah {
	struct ibv_ah ibv_ah;
	struct ibv_ah_attr attr;
	uint32_t dest;
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

static inline struct metaroce_cq *to_mcq(struct ibv_cq *cq)
{
	return (struct metaroce_cq *)cq;
}

static inline struct metaroce_ah *to_mah(struct ibv_ah *ah)
{
	return (struct metaroce_ah *)ah;
}

static inline struct metaroce_qp *to_mqp(struct ibv_qp *qp)
{
	return (struct metaroce_qp *)qp;
}

static inline struct metaroce_srq *to_msrq(struct ibv_srq *srq)
{
	return (struct metaroce_srq *)srq;
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
/* Free a destroyed CQ/QP/SRQ (obj, with the library's mutex and event
 * counter of it), unless fewer of its async events were acknowledged
 * than were queued: a record in the pipe, or one the application has read
 * and not acked, still names it, and ibv_ack_async_event() locks its
 * mutex. Such an object is parked and freed with the context. */
void metaroce_free_obj(struct metaroce_context *mctx, void *obj,
		       pthread_mutex_t *mutex, const uint32_t *acked,
		       uint32_t queued);

/* Inline progress of the device's datapath (poll_cq, post_send): a no-op
 * while no QP has opened the datapath. Must not be called with a CQ lock
 * or the datapath lock held. */
void metaroce_progress(struct metaroce_context *mctx);
/* metaroce_progress for a poll of a CQ (mrdp_progress_cq); armed: the CQ
 * is armed for its channel (the application polls before it blocks). */
void metaroce_progress_cq(struct metaroce_context *mctx, bool armed);
/* After the progress of a poll_cq: got, the completions it returned
 * (mrdp_polled: the lease). */
void metaroce_polled(struct metaroce_context *mctx, int got);
/* The caller stops polling: the progress thread takes over now. */
void metaroce_progress_handoff(struct metaroce_context *mctx);
/* The context's engine with its lock taken (release it with
 * metaroce_engine_unlock), or NULL while the context has none (then no
 * completion can be pushed to its CQs). */
struct metaroce_engine *metaroce_engine_hold(struct metaroce_context *mctx);
void metaroce_engine_unlock(struct metaroce_engine *eng);
/* Resolve the peer's MAC (ARP) before the first packet, as a RoCE kernel
 * does in create_ah and modify_qp: waits up to 1 s for the answer; an
 * unanswered peer is not an error here (packets to it are counted as
 * dropped, RC retransmits). No-op until the context uses the datapath. */
/* Start resolving the next hops toward dest and wait for them a little
 * (up to 1 s). 0, or ENETUNREACH when no plane has a route to dest
 * (MR-ROUTE-6): the verb that asked fails, as a RoCE device's does. */
int metaroce_resolve(struct metaroce_context *mctx, uint32_t dest);
/* free_context: drop the context's use of the device's engine; the last
 * user closes it. */
void metaroce_engine_release(struct metaroce_context *mctx);

/* cq.c */
struct ibv_cq *metaroce_create_cq(struct ibv_context *context, int cqe,
				  struct ibv_comp_channel *channel,
				  int comp_vector);
int metaroce_destroy_cq(struct ibv_cq *cq);
int metaroce_poll_cq(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
int metaroce_req_notify_cq(struct ibv_cq *cq, int solicited_only);
void metaroce_cq_event(struct ibv_cq *cq);
/* Append one completion (solicited: the sender asked for an event).
 * 0, or ENOSPC on overrun (completion lost, IBV_EVENT_CQ_ERR raised). */
int metaroce_cq_push(struct metaroce_cq *cq, const struct ibv_wc *wc,
		     bool solicited);
uint32_t metaroce_cq_count(struct metaroce_cq *cq);
/* Is the CQ armed for its channel's event? */
bool metaroce_cq_armed(struct metaroce_cq *cq);
/* create_cq's work; stamps: keep a completion time per entry. */
struct metaroce_cq *metaroce_cq_alloc(struct ibv_context *context, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector, bool stamps);
/* ibv_resize_cq: EINVAL below the entries it holds (nothing changes). */
int metaroce_resize_cq(struct ibv_cq *cq, int cqe);
/*
 * The device's free-running clock: CLOCK_MONOTONIC in ns, so
 * hca_core_clock is 1,000,000 kHz, completion timestamps are in ns, and
 * ibv_query_rt_values_ex's raw_clock (tv_nsec, as mlx5 gives it) reads
 * the same clock.
 */
#define METAROCE_HCA_CLOCK_KHZ 1000000ull
uint64_t metaroce_hca_clock(void);

/* cq_ex.c */
struct ibv_cq_ex *metaroce_create_cq_ex(struct ibv_context *context,
					struct ibv_cq_init_attr_ex *attr);
int metaroce_query_rt_values(struct ibv_context *context,
			     struct ibv_values_ex *values);

/* ah.c */
struct ibv_ah *metaroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int metaroce_destroy_ah(struct ibv_ah *ah);

/* pd_mr.c */
struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context);
int metaroce_dealloc_pd(struct ibv_pd *pd);
struct ibv_mr *metaroce_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			       uint64_t hca_va, int access);
struct ibv_mr *metaroce_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				      size_t length, uint64_t iova, int fd,
				      int access);
int metaroce_dereg_mr(struct verbs_mr *vmr);
/* mw.c (memory windows, needs the engine) */
struct ibv_mw *metaroce_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int metaroce_dealloc_mw(struct ibv_mw *mw);
int metaroce_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		     struct ibv_mw_bind *mw_bind);
/* ibv_rereg_mr: translation, PD and access; the keys stay. */
int metaroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		      void *addr, size_t length, int access);

/* Debug logging (METAROCE_DEBUG=1). */
extern int metaroce_debug_on;
#define metaroce_dbg(fmt, ...)                                                 \
	do {                                                                   \
		if (metaroce_debug_on)                                         \
			fprintf(stderr, "metaroce: " fmt "\n", ##__VA_ARGS__); \
	} while (0)

#endif /* METAROCE_H */
