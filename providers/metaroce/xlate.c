// SPDX-License-Identifier: BSD-2-Clause
/* verbs <-> core translations (see xlate.h). */
#include "mrdp_addr.h"
#include "xlate.h"

#include <errno.h>
#include <string.h>

#include "metaroce.h"

/* The core's enums are defined equal to the verbs ones, so values pass
 * through unchanged; these asserts keep that true. */
_Static_assert((int)MR_WC_REM_ACCESS_ERR == (int)IBV_WC_REM_ACCESS_ERR,
	       "wc status");
_Static_assert((int)MR_WC_RETRY_EXC_ERR == (int)IBV_WC_RETRY_EXC_ERR,
	       "wc status");
_Static_assert((int)MR_WC_WR_FLUSH_ERR == (int)IBV_WC_WR_FLUSH_ERR,
	       "wc status");
_Static_assert((int)MR_WC_RNR_RETRY_EXC_ERR == (int)IBV_WC_RNR_RETRY_EXC_ERR,
	       "wc status");
_Static_assert((int)MR_WC_GENERAL_ERR == (int)IBV_WC_GENERAL_ERR, "wc status");
_Static_assert((int)MR_WC_RECV_RDMA_WITH_IMM == (int)IBV_WC_RECV_RDMA_WITH_IMM,
	       "wc opcode");
_Static_assert((int)MR_WC_FETCH_ADD == (int)IBV_WC_FETCH_ADD, "wc opcode");
_Static_assert((int)MR_WR_ATOMIC_FETCH_AND_ADD ==
		       (int)IBV_WR_ATOMIC_FETCH_AND_ADD,
	       "wr opcode");
_Static_assert((int)MR_WR_RDMA_READ == (int)IBV_WR_RDMA_READ, "wr opcode");
_Static_assert((int)MR_SEND_INLINE == (int)IBV_SEND_INLINE, "send flags");
_Static_assert((int)MR_SEND_SOLICITED == (int)IBV_SEND_SOLICITED, "send flags");
_Static_assert((int)MR_WC_F_GRH == (int)IBV_WC_GRH, "wc flags");
_Static_assert((int)MR_WC_F_WITH_IMM == (int)IBV_WC_WITH_IMM, "wc flags");
_Static_assert((int)MR_WC_F_WITH_INV == (int)IBV_WC_WITH_INV, "wc flags");
_Static_assert((int)MR_WC_MW_BIND_ERR == (int)IBV_WC_MW_BIND_ERR, "wc status");
_Static_assert((int)MR_WC_BIND_MW == (int)IBV_WC_BIND_MW, "wc opcode");
_Static_assert((int)MR_WC_LOCAL_INV == (int)IBV_WC_LOCAL_INV, "wc opcode");
_Static_assert((int)MR_WR_LOCAL_INV == (int)IBV_WR_LOCAL_INV, "wr opcode");
_Static_assert((int)MR_WR_BIND_MW == (int)IBV_WR_BIND_MW, "wr opcode");
_Static_assert((int)MR_WR_ATOMIC_WRITE == (int)IBV_WR_ATOMIC_WRITE &&
		       (int)MR_WC_ATOMIC_WRITE == (int)IBV_WC_ATOMIC_WRITE,
	       "atomic write");
_Static_assert((int)MR_WR_SEND_WITH_INV == (int)IBV_WR_SEND_WITH_INV,
	       "wr opcode");
_Static_assert((int)MR_ACCESS_MW_BIND == (int)IBV_ACCESS_MW_BIND, "access");
_Static_assert((int)MR_ACCESS_ZERO_BASED == (int)IBV_ACCESS_ZERO_BASED,
	       "access");
_Static_assert((int)MR_QPS_ERR == (int)IBV_QPS_ERR &&
		       (int)MR_QPS_SQD == (int)IBV_QPS_SQD,
	       "qp state");
_Static_assert((int)MR_QP_DEST_QPN == (int)IBV_QP_DEST_QPN &&
		       (int)MR_QP_DEST == (int)IBV_QP_AV,
	       "qp attr mask");
_Static_assert((int)MR_QP_MAX_DEST_RD_ATOMIC == (int)IBV_QP_MAX_DEST_RD_ATOMIC,
	       "qp attr mask");
_Static_assert((int)MR_QP_MIN_RNR_TIMER == (int)IBV_QP_MIN_RNR_TIMER,
	       "qp attr mask");
_Static_assert((int)MR_QPT_RC == (int)IBV_QPT_RC &&
		       (int)MR_QPT_UC == (int)IBV_QPT_UC &&
		       (int)MR_QPT_UD == (int)IBV_QPT_UD,
	       "qp type");
_Static_assert(sizeof(struct mr_sge) == sizeof(struct ibv_sge), "sge");

int metaroce_gid_to_dest(const union ibv_gid *gid, uint32_t *dest)
{
	static const uint8_t v4map[12] = { 0, 0, 0, 0, 0,    0,
					   0, 0, 0, 0, 0xff, 0xff };
	const uint8_t *r = gid->raw;
	uint32_t ip;

	if (memcmp(r, v4map, sizeof(v4map)) != 0)
		return EINVAL;
	ip = (uint32_t)r[12] << 24 | (uint32_t)r[13] << 16 |
	     (uint32_t)r[14] << 8 | r[15];
	/* 0.0.0.0, 224/4 multicast, 240/4 reserved and broadcast. */
	if (ip == 0 || (ip >> 28) >= 0xe)
		return EINVAL;
	*dest = ip;
	return 0;
}

uint32_t metaroce_mtu_bytes(enum ibv_mtu mtu)
{
	switch (mtu) {
	case IBV_MTU_256:
		return 256;
	case IBV_MTU_512:
		return 512;
	case IBV_MTU_1024:
		return 1024;
	case IBV_MTU_2048:
		return 2048;
	case IBV_MTU_4096:
		return 4096;
	default:
		return 0;
	}
}

enum ibv_mtu metaroce_mtu_enum(uint32_t bytes)
{
	switch (bytes) {
	case 256:
		return IBV_MTU_256;
	case 512:
		return IBV_MTU_512;
	case 1024:
		return IBV_MTU_1024;
	case 2048:
		return IBV_MTU_2048;
	default:
		return IBV_MTU_4096;
	}
}

int metaroce_check_av(const struct ibv_ah_attr *av,
		      const struct metaroce_gids *g, uint32_t *dest)
{
	int kind;

	/* RoCE addresses by GID: a LID vector was turned into a global
	 * one before (metaroce_av_from_lid). */
	if (!av->is_global)
		return EINVAL;
	if (av->port_num != 1)
		return EINVAL;
	/* A GID index the device does not list: EINVAL, as the kernel
	 * answers for a RoCE device. */
	if (av->grh.sgid_index >= g->n)
		return EINVAL;
	kind = mr_gid_kind_of(av->grh.dgid.raw);
	if (kind < 0 || kind != (int)g->gid[av->grh.sgid_index].kind)
		return EINVAL; /* MR-ADDR-2: the source's kind */
	if (kind == MR_GID_IPV4)
		return metaroce_gid_to_dest(&av->grh.dgid, dest);
	if (!g->book)
		return EINVAL;
	return mrdp_addrs_id(g->book, av->grh.dgid.raw, 0, 1, dest) ? ENOMEM
								     : 0;
}

/* Host bits of a subnet: 0 for /32 (no host part to speak of). */
static uint32_t host_mask(uint8_t prefix)
{
	return prefix >= 32 ? 0 : 0xffffffffu >> prefix;
}

uint16_t metaroce_port_lid(uint32_t ip, uint8_t prefix)
{
	uint32_t hm = host_mask(prefix), host = ip & hm;

	if (!host || host == hm || host > METAROCE_LID_MAX)
		return 0;
	return (uint16_t)host;
}

int metaroce_av_from_lid(const struct ibv_ah_attr *in, uint32_t ip,
			 uint8_t prefix, struct ibv_ah_attr *out)
{
	uint32_t hm = host_mask(prefix), dst;
	uint8_t *g;

	*out = *in;
	if (in->is_global)
		return 0;
	if (!in->dlid || in->dlid > METAROCE_LID_MAX || (in->dlid & ~hm) ||
	    in->dlid == hm)
		return EINVAL;
	dst = (ip & ~hm) | in->dlid;
	memset(&out->grh, 0, sizeof(out->grh));
	g = out->grh.dgid.raw;
	g[10] = 0xff;
	g[11] = 0xff;
	g[12] = (uint8_t)(dst >> 24);
	g[13] = (uint8_t)(dst >> 16);
	g[14] = (uint8_t)(dst >> 8);
	g[15] = (uint8_t)dst;
	out->grh.sgid_index = MR_GID_INDEX_IPV4;
	out->grh.hop_limit = 64;
	out->is_global = 1;
	return 0;
}

/* Attributes we do not have. */
#define QP_ATTR_UNSUPPORTED (IBV_QP_ALT_PATH | IBV_QP_CAP | IBV_QP_RATE_LIMIT)
/* Attributes checked here and kept by verbs only. */
#define QP_ATTR_VERBS_ONLY                                                   \
	(IBV_QP_CUR_STATE | IBV_QP_EN_SQD_ASYNC_NOTIFY | IBV_QP_PKEY_INDEX | \
	 IBV_QP_PORT | IBV_QP_PATH_MIG_STATE)
/* Attributes the core applies. */
#define QP_ATTR_CORE                                                        \
	(IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_QKEY | IBV_QP_AV |     \
	 IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |              \
	 IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC |       \
	 IBV_QP_MIN_RNR_TIMER | IBV_QP_SQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | \
	 IBV_QP_DEST_QPN)
/* Connected-only attributes: a UD QP refuses them. */
#define QP_ATTR_RC_ONLY                                                       \
	(IBV_QP_ACCESS_FLAGS | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_TIMEOUT | \
	 IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_RQ_PSN |                \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |                     \
	 IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_DEST_QPN)
/* Attributes IB's table does not give a UC QP. */
#define QP_ATTR_NOT_UC                                                     \
	(IBV_QP_QKEY | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | \
	 IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER |                     \
	 IBV_QP_MAX_DEST_RD_ATOMIC)
#define QP_ACCESS_ALL                                       \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

int metaroce_xlate_qp_attr(const struct ibv_qp_attr *a, int mask,
			   enum ibv_qp_type qpt, uint32_t dev_mtu,
			   const struct metaroce_gids *g,
			   struct mr_qp_attr *out, unsigned *core_mask)
{
	unsigned m = (unsigned)mask;
	int ret;

	memset(out, 0, sizeof(*out));
	*core_mask = 0;
	if (mask < 0 ||
	    m & ~(QP_ATTR_CORE | QP_ATTR_VERBS_ONLY | QP_ATTR_UNSUPPORTED))
		return EINVAL;
	if (m & QP_ATTR_UNSUPPORTED)
		return EOPNOTSUPP;
	if (qpt != IBV_QPT_RC && qpt != IBV_QPT_UC && qpt != IBV_QPT_UD)
		return EINVAL;
	/* As the kernel's transition table: connection attributes (and
	 * access flags) are not attributes of a UD QP, reliability and
	 * READ/atomic attributes and the qkey not of a UC QP (MR-UC-9). */
	if (qpt == IBV_QPT_UD && (m & QP_ATTR_RC_ONLY))
		return EINVAL;
	if (qpt == IBV_QPT_UC && (m & QP_ATTR_NOT_UC))
		return EINVAL;

	if (m & IBV_QP_STATE) {
		if (a->qp_state > IBV_QPS_ERR)
			return EINVAL;
		out->state = (enum mr_qp_state)a->qp_state;
	}
	if ((m & IBV_QP_PKEY_INDEX) && a->pkey_index != 0)
		return EINVAL;
	if ((m & IBV_QP_PORT) && a->port_num != 1)
		return EINVAL;
	if ((m & IBV_QP_PATH_MIG_STATE) &&
	    a->path_mig_state != IBV_MIG_MIGRATED)
		return EOPNOTSUPP;
	if (m & IBV_QP_ACCESS_FLAGS) {
		if ((unsigned)a->qp_access_flags & ~QP_ACCESS_ALL)
			return EINVAL;
		out->access = (unsigned)a->qp_access_flags;
	}
	if (m & IBV_QP_QKEY)
		out->qkey = a->qkey;
	if (m & IBV_QP_AV) {
		ret = metaroce_check_av(&a->ah_attr, g, &out->dest);
		if (ret)
			return ret;
	}
	if (m & IBV_QP_PATH_MTU) {
		out->path_mtu_bytes = metaroce_mtu_bytes(a->path_mtu);
		/* Larger than the device's MTU cannot be carried. */
		if (!out->path_mtu_bytes || out->path_mtu_bytes > dev_mtu)
			return EINVAL;
	}
	if (m & IBV_QP_TIMEOUT) {
		if (a->timeout > 31)
			return EINVAL;
		out->timeout = a->timeout;
	}
	if (m & IBV_QP_RETRY_CNT) {
		if (a->retry_cnt > 7)
			return EINVAL;
		out->retry_cnt = a->retry_cnt;
	}
	if (m & IBV_QP_RNR_RETRY) {
		if (a->rnr_retry > 7)
			return EINVAL;
		out->rnr_retry = a->rnr_retry;
	}
	if (m & IBV_QP_MIN_RNR_TIMER) {
		if (a->min_rnr_timer > 31)
			return EINVAL;
		out->min_rnr_timer = a->min_rnr_timer;
	}
	if (m & IBV_QP_RQ_PSN) {
		if (a->rq_psn & ~0xffffffu)
			return EINVAL;
		out->rq_psn = a->rq_psn;
	}
	if (m & IBV_QP_SQ_PSN) {
		if (a->sq_psn & ~0xffffffu)
			return EINVAL;
		out->sq_psn = a->sq_psn;
	}
	if (m & IBV_QP_MAX_QP_RD_ATOMIC) {
		if (a->max_rd_atomic > METAROCE_MAX_QP_RD_ATOM)
			return EINVAL;
		out->max_rd_atomic = a->max_rd_atomic;
	}
	if (m & IBV_QP_MAX_DEST_RD_ATOMIC) {
		if (a->max_dest_rd_atomic > METAROCE_MAX_QP_RD_ATOM)
			return EINVAL;
		out->max_dest_rd_atomic = a->max_dest_rd_atomic;
	}
	if (m & IBV_QP_DEST_QPN) {
		if (a->dest_qp_num == 0 || a->dest_qp_num & ~0xffffffu)
			return EINVAL;
		out->dest_qpn = a->dest_qp_num;
	}
	*core_mask = m & QP_ATTR_CORE;
	return 0;
}

#define SEND_FLAGS_OK                                              \
	(IBV_SEND_FENCE | IBV_SEND_SIGNALED | IBV_SEND_SOLICITED | \
	 IBV_SEND_INLINE)

static int copy_sges(const struct ibv_sge *sg, int num, unsigned max_sge,
		     struct mr_sge *sges)
{
	int i;

	if (num < 0 || (unsigned)num > max_sge)
		return EINVAL;
	for (i = 0; i < num; i++) {
		sges[i].addr = sg[i].addr;
		sges[i].length = sg[i].length;
		sges[i].lkey = sg[i].lkey;
	}
	return 0;
}

int metaroce_xlate_send_wr(const struct ibv_send_wr *wr, enum ibv_qp_type qpt,
			   unsigned max_sge, uint32_t ud_dest,
			   struct mr_sge *sges, struct mr_send_wr *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	if (wr->send_flags & ~(unsigned)SEND_FLAGS_OK)
		return EINVAL;
	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		/* MR-UC-6: UC writes but does not read. */
		if (qpt == IBV_QPT_UD ||
		    (qpt == IBV_QPT_UC && wr->opcode == IBV_WR_RDMA_READ))
			return EINVAL;
		out->remote_addr = wr->wr.rdma.remote_addr;
		out->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		if (qpt != IBV_QPT_RC)
			return EINVAL;
		out->remote_addr = wr->wr.atomic.remote_addr;
		out->rkey = wr->wr.atomic.rkey;
		out->compare_add = wr->wr.atomic.compare_add;
		out->swap = wr->wr.atomic.swap;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* MR-AW-1: RC; the 8 bytes are in the SGE list (lkey or
		 * inline), the target in wr.rdma as rdma-core documents. */
		if (qpt != IBV_QPT_RC || wr->num_sge < 1)
			return EINVAL;
		out->remote_addr = wr->wr.rdma.remote_addr;
		out->rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_SEND_WITH_INV:
		if (qpt != IBV_QPT_RC) /* MR-MW-8 */
			return EINVAL;
		out->invalidate_rkey = wr->invalidate_rkey;
		break;
	case IBV_WR_LOCAL_INV:
	case IBV_WR_BIND_MW:
		/* MR-MW-8; no data: the SGE list is not read. */
		if (qpt == IBV_QPT_UD)
			return EINVAL;
		if (wr->opcode == IBV_WR_LOCAL_INV) {
			out->invalidate_rkey = wr->invalidate_rkey;
		} else {
			/* MR-MW-1: type 2 windows only (type 1: ibv_bind_mw) */
			if (!wr->bind_mw.mw ||
			    wr->bind_mw.mw->type != IBV_MW_TYPE_2)
				return EINVAL;
			ret = metaroce_xlate_bind(wr->bind_mw.mw, wr->bind_mw.rkey,
						  &wr->bind_mw.bind_info,
						  &out->bind);
			if (ret)
				return ret;
		}
		out->wr_id = wr->wr_id;
		out->opcode = (enum mr_wr_opcode)wr->opcode;
		out->flags = wr->send_flags;
		return 0;
	default:
		/* TSO, DRIVER1: not offered (FLUSH has no opcode in
		 * rdma-core 44, whose private ABI this provider is built
		 * for: docs/verbs.md). */
		return EINVAL;
	}
	ret = copy_sges(wr->sg_list, wr->num_sge, max_sge, sges);
	if (ret)
		return ret;
	out->wr_id = wr->wr_id;
	out->opcode = (enum mr_wr_opcode)wr->opcode;
	out->flags = wr->send_flags;
	out->sg_list = sges;
	out->num_sge = (unsigned)wr->num_sge;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		out->imm = wr->imm_data;
	if (qpt == IBV_QPT_UD) {
		out->ud_remote_qpn = wr->wr.ud.remote_qpn;
		out->ud_remote_qkey = wr->wr.ud.remote_qkey;
		out->ud_dest = ud_dest;
	}
	return 0;
}

int metaroce_xlate_bind(const struct ibv_mw *mw, uint32_t new_rkey,
			const struct ibv_mw_bind_info *bi,
			struct mr_mw_bind *out)
{
	memset(out, 0, sizeof(*out));
	if (!bi->mr && (bi->addr || bi->length))
		return EINVAL;
	if (bi->mr && bi->mr->context != mw->context)
		return EINVAL;
	/* The handle is the window's first key: its slot and tag name the
	 * window whichever key byte binds gave it (MR-MW-7). */
	out->mw_rkey = mw->handle;
	out->new_rkey = new_rkey;
	out->mr_lkey = bi->mr ? bi->mr->lkey : 0;
	out->addr = bi->addr;
	out->length = bi->length;
	out->access = bi->mw_access_flags;
	return 0;
}

int metaroce_xlate_recv_wr(const struct ibv_recv_wr *wr, unsigned max_sge,
			   struct mr_sge *sges, struct mr_recv_wr *out)
{
	int ret;

	memset(out, 0, sizeof(*out));
	ret = copy_sges(wr->sg_list, wr->num_sge, max_sge, sges);
	if (ret)
		return ret;
	out->wr_id = wr->wr_id;
	out->sg_list = sges;
	out->num_sge = (unsigned)wr->num_sge;
	return 0;
}

void metaroce_cqe_to_wc(const struct mr_cqe *cqe, struct ibv_wc *wc)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = (enum ibv_wc_status)cqe->status;
	wc->opcode = (enum ibv_wc_opcode)cqe->opcode;
	wc->byte_len = cqe->byte_len;
	if (cqe->wc_flags & MR_WC_F_WITH_IMM)
		wc->imm_data = cqe->imm;
	if (cqe->wc_flags & MR_WC_F_WITH_INV)
		wc->invalidated_rkey = cqe->imm;
	wc->qp_num = cqe->qp_num;
	wc->src_qp = cqe->src_qp;
	wc->wc_flags = cqe->wc_flags;
	if (cqe->wc_flags & MR_WC_F_GRH)
		wc->sl = mr_gid_id_is6(cqe->ud_src) ? METAROCE_WC_SL_ROCE_V2_IPV6
						    : METAROCE_WC_SL_ROCE_V2_IPV4;
}
