/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The public face of the sans-IO MetaRoCE core (lib/core).
 *
 * The core does no I/O: no clock, socket, thread, allocation of its own or
 * global random source. Inputs: posted work requests, received packets, and
 * `now` in nanoseconds. Outputs: packets to transmit (written into buffers
 * the caller provides), completions and memory placements (through the
 * callbacks below, which the caller performs), and the next deadline at
 * which the caller must call mr_ep_handle_expiry().
 *
 * One struct mr_ep is one device endpoint (a verbs context's worth of QPs);
 * it demultiplexes received packets to its QPs by destination QPN. The
 * DPDK datapath, the simulator, the conformance suite and the unit harness
 * all drive this same API.
 *
 * Threading: none of these functions lock; the caller serialises all calls
 * on one mr_ep.
 *
 * Errors: 0 or a negative MR_E* (mr_err.h).
 */
#ifndef MR_CORE_H
#define MR_CORE_H

#include <stddef.h>
#include <stdint.h>

#include "mr_err.h"
#include "mr_wire.h"

struct mr_ep;
struct mr_qp;

/* Injected memory: the core allocates only when an endpoint or QP is
 * created (pools sized then), never per packet. */
struct mr_mem {
	void *(*calloc)(void *user, size_t n, size_t size);
	void (*free)(void *user, void *p);
	void *user;
};

/* Injected randomness (initial sequence numbers, path entropy). */
struct mr_rand {
	uint64_t (*next)(void *user);
	void *user;
};

/* Access rights, numerically equal to enum ibv_access_flags. */
enum mr_access {
	MR_ACCESS_LOCAL_WRITE = 1u << 0,
	MR_ACCESS_REMOTE_WRITE = 1u << 1,
	MR_ACCESS_REMOTE_READ = 1u << 2,
	MR_ACCESS_REMOTE_ATOMIC = 1u << 3,
};

/* The caller's registered memory. lookup() resolves a key (lkey for local
 * SGEs, rkey for remote access) of protection domain pd for [addr,
 * addr+len) with the rights in `need` to a host pointer. Returns 0 and sets
 * *host, or -MR_EACCESS (key unknown, other PD, out of bounds, or rights
 * missing). len 0 always succeeds with *host = NULL. */
struct mr_memreg {
	int (*lookup)(void *user, uint32_t pd, uint32_t key, int remote,
		      uint64_t addr, uint64_t len, unsigned need,
		      uint8_t **host);
	void *user;
};

/* Work completion status, numerically equal to enum ibv_wc_status. */
enum mr_wc_status {
	MR_WC_SUCCESS = 0,
	MR_WC_LOC_LEN_ERR = 1,
	MR_WC_LOC_QP_OP_ERR = 2,
	MR_WC_LOC_PROT_ERR = 4,
	MR_WC_WR_FLUSH_ERR = 5,
	MR_WC_BAD_RESP_ERR = 7,
	MR_WC_LOC_ACCESS_ERR = 8,
	MR_WC_REM_INV_REQ_ERR = 9,
	MR_WC_REM_ACCESS_ERR = 10,
	MR_WC_REM_OP_ERR = 11,
	MR_WC_RETRY_EXC_ERR = 12,
	MR_WC_RNR_RETRY_EXC_ERR = 13,
	MR_WC_GENERAL_ERR = 21,
};

/* Work completion opcodes, numerically equal to enum ibv_wc_opcode. */
enum mr_wc_opcode {
	MR_WC_SEND = 0,
	MR_WC_RDMA_WRITE = 1,
	MR_WC_RDMA_READ = 2,
	MR_WC_COMP_SWAP = 3,
	MR_WC_FETCH_ADD = 4,
	MR_WC_RECV = 128,
	MR_WC_RECV_RDMA_WITH_IMM = 129,
};

/* Send opcodes, numerically equal to enum ibv_wr_opcode. */
enum mr_wr_opcode {
	MR_WR_RDMA_WRITE = 0,
	MR_WR_RDMA_WRITE_WITH_IMM = 1,
	MR_WR_SEND = 2,
	MR_WR_SEND_WITH_IMM = 3,
	MR_WR_RDMA_READ = 4,
	MR_WR_ATOMIC_CMP_AND_SWP = 5,
	MR_WR_ATOMIC_FETCH_AND_ADD = 6,
};

/* Send flags, numerically equal to enum ibv_send_flags. */
enum mr_send_flag {
	MR_SEND_FENCE = 1u << 0,
	MR_SEND_SIGNALED = 1u << 1,
	MR_SEND_SOLICITED = 1u << 2,
	MR_SEND_INLINE = 1u << 3,
};

/* wc_flags, numerically equal to enum ibv_wc_flags. */
enum mr_wc_flag {
	MR_WC_F_GRH = 1u << 0,
	MR_WC_F_WITH_IMM = 1u << 1,
};

struct mr_sge {
	uint64_t addr;
	uint32_t length;
	uint32_t lkey;
};

struct mr_send_wr {
	uint64_t wr_id;
	enum mr_wr_opcode opcode;
	unsigned flags; /* enum mr_send_flag */
	const struct mr_sge *sg_list;
	unsigned num_sge;
	uint32_t imm; /* raw big-endian, as ibv_send_wr.imm_data */
	uint64_t remote_addr;
	uint32_t rkey;
	uint64_t compare_add;
	uint64_t swap;
	/* UD only: destination */
	uint32_t ud_remote_qpn;
	uint32_t ud_remote_qkey;
	uint32_t ud_dest; /* caller's address handle id, echoed in tx meta */
};

struct mr_recv_wr {
	uint64_t wr_id;
	const struct mr_sge *sg_list;
	unsigned num_sge;
};

/* A completion. qp_user is what the QP was created with. */
struct mr_cqe {
	uint64_t wr_id;
	void *qp_user;
	enum mr_wc_status status;
	enum mr_wc_opcode opcode;
	uint32_t byte_len;
	uint32_t imm; /* raw big-endian */
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned wc_flags; /* enum mr_wc_flag */
	int is_recv;       /* 1: receive queue (or SRQ) completion */
	uint32_t ud_src;   /* UD receive: caller's source id from rx meta */
};

/* Outputs the caller performs. */
struct mr_callbacks {
	/* Copy len bytes from src (inside a received packet) to dst (inside
	 * registered memory the core has validated). */
	void (*place)(void *user, uint8_t *dst, const uint8_t *src,
		      uint32_t len);
	/* Deliver a completion (send queue, receive queue or SRQ). */
	void (*complete)(void *user, const struct mr_cqe *cqe);
	/* A QP entered the error state on its own (async QP fatal event). */
	void (*qp_error)(void *user, void *qp_user);
	/* An SRQ fell below its limit (async SRQ limit event). */
	void (*srq_limit)(void *user, void *srq_user);
	void *user;
};

/* Reliability mode of a QP. */
enum mr_mode {
	MR_MODE_METAROCE = 0, /* multipath, per-path SACK, selective retx */
	MR_MODE_GBN = 1,      /* RoCEv2 baseline model: 1 path, go-back-N */
};

enum mr_qp_type {
	MR_QPT_RC = 2, /* = IBV_QPT_RC */
	MR_QPT_UD = 4, /* = IBV_QPT_UD */
};

/* Verbs QP states, numerically equal to enum ibv_qp_state. */
enum mr_qp_state {
	MR_QPS_RESET = 0,
	MR_QPS_INIT = 1,
	MR_QPS_RTR = 2,
	MR_QPS_RTS = 3,
	MR_QPS_SQD = 4,
	MR_QPS_SQE = 5,
	MR_QPS_ERR = 6,
};

struct mr_ep_config {
	uint32_t mtu;       /* payload bytes per packet (256..4096) */
	uint16_t num_paths; /* paths per connection (1..MR_ACK_MAX_PATHS) */
	uint32_t max_qp;
};

struct mr_qp_config {
	enum mr_qp_type type;
	enum mr_mode mode;
	uint32_t qpn;
	uint32_t pd;
	uint32_t max_send_wr;
	uint32_t max_recv_wr;
	uint32_t max_send_sge;
	uint32_t max_recv_sge;
	uint32_t max_inline;
	int sq_sig_all;
	struct mr_srq *srq; /* NULL: own receive queue */
	void *user;         /* echoed as cqe.qp_user */
};

/* What modify_qp sets when moving to RTR / RTS (subset of ibv_qp_attr). */
struct mr_qp_attr {
	enum mr_qp_state state;
	uint32_t dest_qpn;
	uint32_t rq_psn;
	uint32_t sq_psn;
	uint32_t qkey;
	uint32_t access; /* qp_access_flags */
	uint32_t path_mtu_bytes;
	uint8_t timeout;   /* IB encoded: 4.096 us * 2^timeout, 0 = infinite */
	uint8_t retry_cnt; /* 0..7 */
	uint8_t rnr_retry; /* 0..7, 7 = infinite */
	uint8_t min_rnr_timer;
	uint8_t max_rd_atomic;
	uint8_t max_dest_rd_atomic;
	uint32_t dest; /* caller's id of the peer address, echoed in tx meta */
};

/* Metadata of a received packet, from the datapath. */
struct mr_rx_meta {
	uint32_t src; /* caller's id of the source address (UD completions) */
	uint8_t ecn_ce; /* 1 if the IP header carried CE */
};

/* Metadata of a packet to transmit, for the datapath. */
struct mr_tx_meta {
	uint32_t dest;    /* caller's id of the destination address */
	uint16_t path_id; /* -> UDP source port (entropy) and plane */
	uint16_t entropy; /* the UDP source port the path currently uses */
	uint8_t plane;
};

#endif /* MR_CORE_H */
