/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Translation between the verbs structs the application passes and the
 * core's (lib/core/mr_core.h), with every check verbs asks for. Pure
 * functions: no locks, no allocation, no I/O; unit-tested on their own
 * (tests/abi/test_xlate.c). Errors: positive errno.
 */
#ifndef METAROCE_XLATE_H
#define METAROCE_XLATE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#include "mr_core.h"
#include "mr_gid.h"

struct mrdp_addrs;

/* Device limits the translations check against (also what
 * query_device_ex advertises once QPs are wired). */
#define METAROCE_MAX_QP_RD_ATOM 16
#define METAROCE_MAX_SGE 16
#define METAROCE_MAX_INLINE 256

/* The destination id of an IPv4-mapped GID: ::ffff:a.b.c.d gives
 * a << 24 | ... | d (the datapath's address id, lib/dp/mrdp.h). EINVAL
 * for any other GID, and for 0.0.0.0, multicast and broadcast addresses. */
int metaroce_gid_to_dest(const union ibv_gid *gid, uint32_t *dest);

/* The device's GID table (lib/devconf/mr_gid.h: 0 link-local, 1 IPv4,
 * 2 global IPv6) and the address book its IPv6 GIDs take ids from. */
struct metaroce_gids {
	unsigned n;
	struct mr_gid gid[MR_GID_MAX];
	struct mrdp_addrs *book;
};

/* Bytes of an enum ibv_mtu; 0 if it is not one. */
uint32_t metaroce_mtu_bytes(enum ibv_mtu mtu);
/* The enum ibv_mtu of a byte count the device allows (256..4096); 4096
 * for anything else (the record parser and the QP checks allow nothing
 * else). */
enum ibv_mtu metaroce_mtu_enum(uint32_t bytes);

/* Check the address vector of a QP (RC: ah_attr at RTR) or an AH:
 * global route present (RoCE), port 1, sgid_index within the GID table,
 * a destination GID of the same kind as the source GID (docs/spec/
 * routing.md MR-ADDR-2: IPv4 to IPv4, link-local to link-local, global
 * IPv6 to global IPv6). Sets *dest (an IPv6 GID's id from g->book).
 * EINVAL for a bad vector, ENOMEM when the book is full. */
int metaroce_check_av(const struct ibv_ah_attr *av,
		      const struct metaroce_gids *g, uint32_t *dest);

/*
 * LIDs. RoCE addresses by GID, but clients written for InfiniBand (qperf
 * without rdma_cm, ibv_*_pingpong without -g) exchange the port's LID and
 * build address vectors without a GRH. A MetaRoCE port's LID is the host
 * part of the device's IPv4 address in its subnet (ip/prefix), when that
 * is a unicast LID (1..0xbfff) and not the subnet's broadcast address;
 * otherwise the port has no LID (0) and only GIDs reach it. So a LID names
 * a peer in the same IPv4 subnet, as an IB LID names a port of the same
 * IB subnet.
 */
#define METAROCE_LID_MAX 0xbfff
/* The LID of a port with this address, 0 for none. */
uint16_t metaroce_port_lid(uint32_t ip, uint8_t prefix);
/* An address vector with is_global 0 (dlid set) as the equivalent global
 * one: dgid = the IPv4-mapped GID of the subnet's host dlid, sgid_index
 * MR_GID_INDEX_IPV4 (our IPv4-mapped GID), hop_limit 64. A global vector is copied as it
 * is. EINVAL when dlid is no host of this device's subnet. */
int metaroce_av_from_lid(const struct ibv_ah_attr *in, uint32_t ip,
			 uint8_t prefix, struct ibv_ah_attr *out);

/*
 * modify_qp: translate attr/mask for a QP of type qpt on a device whose
 * active MTU is dev_mtu bytes. Attributes that only verbs keeps
 * (PKEY_INDEX 0, PORT 1, EN_SQD_ASYNC_NOTIFY, CUR_STATE,
 * PATH_MIG_STATE = MIGRATED) are checked and dropped; unsupported ones
 * (ALT_PATH, CAP, RATE_LIMIT, ...) give EOPNOTSUPP for known bits and
 * EINVAL for unknown bits; out-of-range values give EINVAL. Attributes
 * that do not apply to qpt (UD: AV, DEST_QPN, PATH_MTU, ...) give EINVAL,
 * as a kernel does. The address vector is checked against the GID
 * table g (metaroce_check_av). Fills *out and *core_mask (enum
 * mr_qp_attr_mask).
 */
int metaroce_xlate_qp_attr(const struct ibv_qp_attr *attr, int mask,
			   enum ibv_qp_type qpt, uint32_t dev_mtu,
			   const struct metaroce_gids *g,
			   struct mr_qp_attr *out, unsigned *core_mask);

/*
 * post_send: one WR of a QP of type qpt with at most max_sge SGEs. sges
 * receives the SGE list (caller storage of max_sge entries; no
 * allocation). UD WRs carry their AH's destination: ud_dest is what the
 * caller resolved from wr->wr.ud.ah (ignored for RC). EINVAL for an
 * opcode the QP type does not have, unknown flags, too many SGEs.
 */
int metaroce_xlate_send_wr(const struct ibv_send_wr *wr, enum ibv_qp_type qpt,
			   unsigned max_sge, uint32_t ud_dest,
			   struct mr_sge *sges, struct mr_send_wr *out);

/* A window bind (ibv_bind_mw, IBV_WR_BIND_MW, ibv_wr_bind_mw) in the
 * core's form; new_rkey is the rkey the window gets (MR-MW-7). EINVAL: a
 * range without a region, or a region of another context. The rules of
 * MR-MW-2 are applied when the send queue reaches it. */
int metaroce_xlate_bind(const struct ibv_mw *mw, uint32_t new_rkey,
			const struct ibv_mw_bind_info *bi,
			struct mr_mw_bind *out);

/* post_recv / post_srq_recv: one WR with at most max_sge SGEs. */
int metaroce_xlate_recv_wr(const struct ibv_recv_wr *wr, unsigned max_sge,
			   struct mr_sge *sges, struct mr_recv_wr *out);

/*
 * The SL of a UD receive completion. On RoCE the SL field of a UD receive
 * carries the packet's network type, as mlx5 reports it (bit 3: the frame
 * has a UDP header, i.e. RoCE v2; bits 2-0: 2 = IPv4). Consumers read it
 * to know where the destination address lies in the 40-byte GRH area
 * (IPv4: the last 4 bytes): UCX's ud_verbs drops every datagram whose
 * destination is not one of the port's GIDs (uct_ud_iface_check_grh), and
 * takes anything else for a 16-byte GID at the GRH's destination. RoCE
 * v2 over IPv6 is 0x9 (bits 2-0: 1 = IPv6), the GRH area then holding the
 * IPv6 header itself (MR-UD-5).
 */
#define METAROCE_WC_SL_ROCE_V2_IPV4 0xa
#define METAROCE_WC_SL_ROCE_V2_IPV6 0x9

/* A core completion as the application sees it: a UD receive (GRH
 * present) has sl METAROCE_WC_SL_ROCE_V2_IPV4 or _IPV6 (its source id
 * says which, mr_gid.h), every other completion 0. */
void metaroce_cqe_to_wc(const struct mr_cqe *cqe, struct ibv_wc *wc);

#endif /* METAROCE_XLATE_H */
