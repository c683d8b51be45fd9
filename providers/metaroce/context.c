// SPDX-License-Identifier: BSD-2-Clause
/*
 * The verbs context: open/close without any kernel command, the async
 * event pipe, and the device and port queries.
 */
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metaroce.h"
#include "xlate.h"
#if METAROCE_HAVE_ENGINE
#include "engine.h"
#include "mrdp.h"
#endif

#ifndef METAROCE_VERSION
#error "METAROCE_VERSION must be set by the build"
#endif

int metaroce_debug_on; /* set by the constructor (device.c) */

static void metaroce_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops metaroce_ctx_ops = {
	.alloc_pd = metaroce_alloc_pd,
	.cq_event = metaroce_cq_event,
	.create_ah = metaroce_create_ah,
	.create_cq = metaroce_create_cq,
	.create_cq_ex = metaroce_create_cq_ex,
	.dealloc_pd = metaroce_dealloc_pd,
	.dereg_mr = metaroce_dereg_mr,
	.destroy_ah = metaroce_destroy_ah,
	.destroy_cq = metaroce_destroy_cq,
	.free_context = metaroce_free_context,
	.poll_cq = metaroce_poll_cq,
	.query_device_ex = metaroce_query_device_ex,
	.query_port = metaroce_query_port,
	.query_rt_values = metaroce_query_rt_values,
	.reg_dmabuf_mr = metaroce_reg_dmabuf_mr,
	.reg_mr = metaroce_reg_mr,
	.req_notify_cq = metaroce_req_notify_cq,
	.rereg_mr = metaroce_rereg_mr,
	.resize_cq = metaroce_resize_cq,
};

struct verbs_context *metaroce_alloc_context(struct ibv_device *ibdev,
					     int cmd_fd, void *private_data)
{
	struct metaroce_context *mctx;
	int fds[2], ret;

	/* cmd_fd is our /dev/infiniband node (/dev/full's numbers): we keep
	 * it open and never write to it, so libibverbs' own ioctls on it
	 * (GID queries) fail with ENOTTY and fall back to sysfs. */
	mctx = mr_pabi_alloc_context(ibdev, cmd_fd, struct metaroce_context,
				     vctx, MR_PABI_DRIVER_ID_UNKNOWN);
	if (!mctx)
		return NULL;
	mctx->dev = to_mdev(ibdev);
	mctx->async_wfd = -1;

	/* libibverbs reads 16-byte ib_uverbs_async_event_desc records from
	 * async_fd, blocking unless the application sets O_NONBLOCK itself;
	 * our writer side never blocks. */
	if (pipe2(fds, O_CLOEXEC)) {
		ret = errno;
		goto err_uninit;
	}
	mctx->vctx.context.async_fd = fds[0];
	mctx->async_wfd = fds[1];
	if (fcntl(fds[1], F_SETFL, O_NONBLOCK)) {
		ret = errno;
		goto err_uninit;
	}
	ret = pthread_mutex_init(&mctx->lock, NULL);
	if (ret)
		goto err_uninit;
	mctx->vctx.context.num_comp_vectors = 1;
#if METAROCE_HAVE_ENGINE
	{
		/* Ports of a datapath service (metaroced): without the
		 * daemon the device cannot carry a frame, so its open fails
		 * now, with the reason, rather than its first QP. */
		char err[256];

		if (mrdp_service_probe(&mctx->dev->conf, err, sizeof(err))) {
			fprintf(stderr, "metaroce: %s\n", err);
			pthread_mutex_destroy(&mctx->lock);
			ret = ENODEV;
			goto err_uninit;
		}
	}
#endif
	verbs_set_ops(&mctx->vctx, &metaroce_ctx_ops);
#if METAROCE_HAVE_ENGINE
	verbs_set_ops(&mctx->vctx, &metaroce_engine_ctx_ops);
#endif
	metaroce_dbg("%s: context opened", ibdev->name);
	return &mctx->vctx;

err_uninit:
	if (mctx->async_wfd >= 0)
		close(mctx->async_wfd);
	verbs_uninit_context(&mctx->vctx); /* closes cmd_fd and async_fd */
	free(mctx);
	errno = ret;
	return NULL;
}

struct metaroce_parked {
	struct metaroce_parked *next;
	void *obj;
};

void metaroce_free_obj(struct metaroce_context *mctx, void *obj,
		       pthread_mutex_t *mutex, const uint32_t *acked,
		       uint32_t queued)
{
	struct metaroce_parked *p;
	bool pending;

	pthread_mutex_lock(mutex);
	pending = *acked != queued;
	pthread_mutex_unlock(mutex);
	if (!pending) {
		pthread_mutex_destroy(mutex);
		free(obj);
		return;
	}
	p = malloc(sizeof(*p));
	if (!p)
		return; /* leaking is safe, freeing is not */
	p->obj = obj;
	pthread_mutex_lock(&mctx->lock);
	p->next = mctx->parked;
	mctx->parked = p;
	pthread_mutex_unlock(&mctx->lock);
}

static void metaroce_free_context(struct ibv_context *ibctx)
{
	struct metaroce_context *mctx = to_mctx(ibctx);

	while (mctx->parked) {
		struct metaroce_parked *p = mctx->parked;

		mctx->parked = p->next;
		free(p->obj);
		free(p);
	}

	metaroce_engine_release(mctx);
	pthread_mutex_destroy(&mctx->lock);
	close(mctx->async_wfd);
	verbs_uninit_context(&mctx->vctx);
	free(mctx);
}

#if !METAROCE_HAVE_ENGINE
/* Built without lib/core's engine or without lib/dp (-Ddpdk=disabled): no
 * QP can be created, so there is never an engine to progress or release,
 * and the device advertises no QPs. */
void metaroce_progress(struct metaroce_context *mctx)
{
}

void metaroce_progress_cq(struct metaroce_context *mctx, bool armed)
{
}

void metaroce_engine_release(struct metaroce_context *mctx)
{
}

int metaroce_resolve(struct metaroce_context *mctx, uint32_t dest)
{
	return 0;
}
#endif

int metaroce_async_event(struct metaroce_context *mctx, uint64_t element,
			 uint32_t event_type)
{
	struct ib_uverbs_async_event_desc d = {
		.element = element,
		.event_type = event_type,
	};
	ssize_t n;

	_Static_assert(sizeof(d) == 16, "libibverbs reads 16-byte records");
	/* A pipe write of at most PIPE_BUF bytes is all or nothing. */
	n = write(mctx->async_wfd, &d, sizeof(d));
	if (n == (ssize_t)sizeof(d))
		return 0;
	return n < 0 ? errno : EIO;
}

/* Everything the device does, and 0 for what it does not do yet. */
static void fill_device_attr(const struct metaroce_device *dev,
			     struct ibv_device_attr_ex *a)
{
	struct ibv_device_attr *o = &a->orig_attr;
	uint64_t guid = htobe64(mr_devconf_node_guid(dev->conf.mac));

	snprintf(o->fw_ver, sizeof(o->fw_ver), "%s", METAROCE_VERSION);
	o->node_guid = guid;
	o->sys_image_guid = guid;
	o->max_mr_size = UINT64_MAX;
	o->page_size_cap = ~(uint64_t)4095; /* any size from 4 KiB */
	o->vendor_id = METAROCE_VENDOR_ID;
	o->vendor_part_id = METAROCE_VENDOR_PART_ID;
	o->hw_ver = METAROCE_HW_VER;
	o->max_mr = METAROCE_MAX_MR;
	o->max_pd = METAROCE_MAX_PD;
	o->max_cq = METAROCE_MAX_CQ;
	o->max_cqe = METAROCE_MAX_CQE;
	o->max_ah = METAROCE_MAX_AH;
#if METAROCE_HAVE_ENGINE
	/* QPs, SRQs and atomics exist only with the engine and datapath. */
	o->max_qp = METAROCE_MAX_QP;
	o->max_qp_wr = METAROCE_MAX_QP_WR;
	/* Memory windows of type 1 and 2B (docs/spec/windows.md); regions
	 * and windows share one key table of max_mr entries. */
	o->device_cap_flags =
		IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT |
		IBV_DEVICE_MEM_WINDOW | IBV_DEVICE_MEM_WINDOW_TYPE_2B;
	o->max_mw = METAROCE_MAX_MR;
	o->max_sge = METAROCE_MAX_SGE;
	o->max_sge_rd = METAROCE_MAX_SGE;
	o->max_qp_rd_atom = METAROCE_MAX_QP_RD_ATOM;
	o->max_qp_init_rd_atom = METAROCE_MAX_QP_RD_ATOM;
	o->max_res_rd_atom = METAROCE_MAX_QP_RD_ATOM * METAROCE_MAX_QP;
	o->atomic_cap = IBV_ATOMIC_HCA;
	/* The 64-bit flags, as the kernel reports them (the low half is
	 * device_cap_flags); MR-AW-*: ATOMIC WRITE. No FLUSH: rdma-core 44
	 * has no verb for it, so neither FLUSH_GLOBAL nor FLUSH_PERSISTENT
	 * is claimed. */
	a->device_cap_flags_ex =
		o->device_cap_flags | METAROCE_DEVICE_ATOMIC_WRITE;
	o->max_srq = METAROCE_MAX_SRQ;
	o->max_srq_wr = METAROCE_MAX_SRQ_WR;
	o->max_srq_sge = METAROCE_MAX_SGE;
	o->local_ca_ack_delay = 15;
#endif
	o->max_pkeys = 1;
	o->phys_port_cnt = 1;
	a->phys_port_cnt_ex = 1;
	/* Completion timestamps of extended CQs (cq_ex.c). */
	a->hca_core_clock = METAROCE_HCA_CLOCK_KHZ;
	a->completion_timestamp_mask = UINT64_MAX;
}

int metaroce_query_device_ex(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size)
{
	struct ibv_device_attr_ex a;

	if (input && input->comp_mask)
		return EINVAL;
	if (!attr || attr_size < sizeof(struct ibv_device_attr))
		return EINVAL;
	memset(&a, 0, sizeof(a));
	fill_device_attr(to_mctx(context)->dev, &a);
	/* The caller's struct may be older (232 bytes from
	 * ibv_query_device) or newer than ours: copy what fits and zero the
	 * fields we do not know. */
	if (attr_size > sizeof(a)) {
		memset((uint8_t *)attr + sizeof(a), 0, attr_size - sizeof(a));
		attr_size = sizeof(a);
	}
	memcpy(attr, &a, attr_size);
	return 0;
}

int metaroce_query_port(struct ibv_context *context, uint8_t port_num,
			struct ibv_port_attr *port_attr)
{
	const struct metaroce_device *dev = to_mctx(context)->dev;

	if (port_num != 1 || !port_attr)
		return EINVAL;
	memset(port_attr, 0, sizeof(*port_attr));
	port_attr->state = IBV_PORT_ACTIVE;
	port_attr->max_mtu = IBV_MTU_4096;
	port_attr->active_mtu = metaroce_mtu_enum(dev->conf.mtu);
	port_attr->gid_tbl_len = (int)dev->gids.n;
	/* What RoCE ports show: GIDs are derived from IP addresses. No
	 * CM_SUP: there is no rdma_cm without a kernel. */
	port_attr->port_cap_flags = IBV_PORT_IP_BASED_GIDS;
	port_attr->max_msg_sz = METAROCE_MAX_MSG_SZ;
	port_attr->pkey_tbl_len = 1;
	port_attr->max_vl_num = 1;
	port_attr->active_width = 2;  /* 4X */
	port_attr->active_speed = 32; /* EDR: 4X EDR = 100 Gb/s */
	port_attr->phys_state = 5;    /* LinkUp */
	port_attr->link_layer = IBV_LINK_LAYER_ETHERNET;
	/* For clients that address by LID (xlate.h); GIDs work as well. */
	port_attr->lid = metaroce_port_lid(dev->conf.ip, dev->conf.prefix);
#if MR_RDMA_CORE_MAJOR >= 56
	port_attr->active_speed_ex = 0; /* 0: use active_speed */
#endif
	return 0;
}
