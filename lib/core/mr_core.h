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
struct mr_srq;
struct mr_counters;    /* mr_counters.h */
struct mr_cc_ops;      /* mr_cc.h */
struct mr_pathsel_ops; /* mr_pathsel.h */

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
	MR_ACCESS_MW_BIND = 1u << 4,   /* windows may be bound to it */
	MR_ACCESS_ZERO_BASED = 1u << 5, /* window addressed from 0 */
};

/* What a bind of a memory window asks (MR_WR_BIND_MW, ibv_bind_mw;
 * docs/spec/windows.md MR-MW-*). The core does not interpret it: it hands
 * it to memreg.bind() when the send queue reaches the WR. */
struct mr_mw_bind {
	uint32_t mw_rkey;  /* the window's current rkey: names the window */
	uint32_t new_rkey; /* its rkey once bound (MR-MW-7) */
	uint32_t mr_lkey;  /* the region; 0 with length 0: unbind (type 1) */
	uint64_t addr;	   /* first byte of the window, in the region's iova */
	uint64_t length;
	unsigned access; /* MR_ACCESS_REMOTE_* (MR_ACCESS_ZERO_BASED: refused) */
};

/* The caller's registered memory. lookup() resolves a key (lkey for local
 * SGEs, rkey for remote access) of protection domain pd for [addr,
 * addr+len) with the rights in `need` to a host pointer. `remote` is 0
 * for a local key, else the QPN of the QP the remote access arrived at
 * (nonzero): a type 2 memory window answers only through its own QP
 * (MR-MW-3). Returns 0 and sets *host, or -MR_EACCESS (key unknown, other
 * PD, out of bounds, or rights missing). len 0 always succeeds with *host
 * = NULL.
 *
 * Memory windows (docs/spec/windows.md), optional: without bind and
 * invalidate, BIND_MW and LOCAL_INV are refused at post (-MR_EINVAL) and
 * a received SEND_WITH_INV fails as an invalid request (MR-MW-4).
 * bind() binds a window for a QP of protection domain pd and number qpn;
 * invalidate() invalidates rkey for that QP, remote = 1 when a peer's
 * SEND_WITH_INV asks it, 0 for our LOCAL_INV. Both are called in the
 * order of MR-MW-6, return 0 or a negative MR_E* (the WR fails). */
struct mr_memreg {
	int (*lookup)(void *user, uint32_t pd, uint32_t key, int remote,
		      uint64_t addr, uint64_t len, unsigned need,
		      uint8_t **host);
	int (*bind)(void *user, uint32_t pd, uint32_t qpn,
		    const struct mr_mw_bind *b);
	int (*invalidate)(void *user, uint32_t pd, uint32_t qpn, uint32_t rkey,
			  int remote);
	void *user;
};

/* Work completion status, numerically equal to enum ibv_wc_status. */
enum mr_wc_status {
	MR_WC_SUCCESS = 0,
	MR_WC_LOC_LEN_ERR = 1,
	MR_WC_LOC_QP_OP_ERR = 2,
	MR_WC_LOC_PROT_ERR = 4,
	MR_WC_WR_FLUSH_ERR = 5,
	MR_WC_MW_BIND_ERR = 6,
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
	MR_WC_BIND_MW = 5,
	MR_WC_LOCAL_INV = 6,
	MR_WC_ATOMIC_WRITE = 9,
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
	MR_WR_LOCAL_INV = 7, /* no packet: memreg.invalidate (MR-MW-4) */
	MR_WR_BIND_MW = 8,   /* no packet: memreg.bind (MR-MW-2) */
	MR_WR_SEND_WITH_INV = 9,
	/* 8 bytes placed atomically at an aligned remote address (MR-AW-*):
	 * from the WR's SGEs (8 bytes, lkey or inline) or, with num_sge 0,
	 * from `swap`, whose 8 bytes are taken as they lie in memory. */
	MR_WR_ATOMIC_WRITE = 15,
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
	MR_WC_F_WITH_INV = 1u << 3, /* cqe.imm holds the invalidated rkey */
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
	/* SEND_WITH_INV: the peer's rkey to invalidate; LOCAL_INV: ours. */
	uint32_t invalidate_rkey;
	struct mr_mw_bind bind; /* BIND_MW */
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
	/* raw big-endian imm_data; with MR_WC_F_WITH_INV the invalidated
	 * rkey (host order, as ibv_wc.invalidated_rkey) */
	uint32_t imm;
	uint32_t qp_num;
	uint32_t src_qp;
	unsigned wc_flags; /* enum mr_wc_flag */
	int is_recv;	   /* 1: receive queue (or SRQ) completion */
	int solicited;	   /* receive: the sender set the solicited flag */
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
	/* A QP entered the error state on its own without an error
	 * completion saying why (async QP fatal event, MR-ERR-6). Errors
	 * reported by an error CQE (NAKs, retry exhaustion, receive length)
	 * do not call it, as with verbs hardware. */
	void (*qp_error)(void *user, void *qp_user);
	/* An SRQ fell below its limit (async SRQ limit event). */
	void (*srq_limit)(void *user, void *srq_user);
	/* A QP moved to SQD has completed every message it had started
	 * (async SQ drained event); optional, once per entry into SQD. */
	void (*sq_drained)(void *user, void *qp_user);
	void *user;
};

/* Reliability mode of a QP. */
enum mr_mode {
	MR_MODE_METAROCE = 0, /* multipath, per-path SACK, selective retx */
	MR_MODE_GBN = 1,      /* RoCEv2 baseline model: 1 path, go-back-N */
};

enum mr_qp_type {
	MR_QPT_RC = 2, /* = IBV_QPT_RC */
	MR_QPT_UC = 3, /* = IBV_QPT_UC (MR-UC-*) */
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

/* MR-CC-17: the start of a metaroce connection. */
enum mr_cc_start {
	MR_CC_START_DEFAULT = 0,
	/* MR-CC-5 alone: the first ACK at ack_every / ack_delay_ns, its
	 * hint's cap with the coalescing slack. */
	MR_CC_START_ONE = 1,
	/* MR-CC-17: a receiver spaces the first ACKs of its newcomers by one
	 * full packet's time at its port rate and keeps a connection first
	 * seen in the epoch just closed greedy one more epoch; a sender's
	 * first hinted window is hint x min RTT (at least one packet) */
	MR_CC_START_SLOTS = 2,
};

/* Endpoint configuration. Zero fields take the default named. Both peers
 * of a connection must use the same mtu, ssn_window and msg_window (they
 * are protocol windows, not local tuning: MR-REQ-4). */
struct mr_ep_config {
	uint32_t mtu;	    /* payload bytes per packet (256..4096) */
	uint16_t num_paths; /* paths per connection (1..MR_MAX_PATHS), 1 */
	uint32_t max_qp;    /* QPs on the endpoint (1024) */
	uint8_t num_planes; /* planes; path p uses plane p % num_planes (1) */
	uint16_t ack_every; /* ACK at least every n data packets (4) */
	uint32_t ack_delay_ns; /* ACK at most this long after data (2000) */
	/* MR-RSP-12: an ACK_REQ packet's ACK may wait this long for the next
	 * messages' packets, at most ack_delay_ns (0: at once, the default) */
	uint32_t ack_req_delay_ns;
	uint32_t ssn_window; /* packets in flight per direction, pow2 (1024) */
	uint32_t msg_window; /* messages in flight per QP, pow2 (256) */
	uint16_t max_rd_atomic;	 /* responder records per QP (16, max 64) */
	uint16_t hold_slots;	 /* held final WRITE packets per QP (4) */
	uint64_t min_rto_ns;	 /* lower bound of a path's RTO (100000) */
	uint32_t link_rate_mbps; /* initial / maximum sending rate (100000) */
	uint64_t base_rtt_ns;	 /* unloaded RTT for the controller (10000) */
	uint64_t pace_quantum;	 /* pacing credit in bytes, MR-CC-4 (0) */
	uint16_t path_run; /* packets a path takes in a row, MR-MP-3 (1) */
	/* MR-CC-16: payload bytes of a metaroce RC connection's new request
	 * packets until its first ACK (the receiver's first rate hint); 0
	 * (the default) or at least the path MTU: MTU-sized throughout. */
	uint32_t first_pkt_bytes;
	/* MR-CC-16: ... only while the endpoint started at most this many
	 * connections in the last 2-4 base RTTs (0: always) */
	uint16_t first_pkt_starts;
	/* MR-CC-17: how a metaroce connection's first hinted round starts
	 * (enum mr_cc_start; 0: the default, MR_CC_START_ONE). */
	uint8_t cc_start;
	/* gbn QPs time out as RoCE NICs do: after the QP's IB local ACK
	 * timeout (4.096 us x 2^timeout), fixed, no backoff, instead of the
	 * RTT-based RTO (0). The RoCEv2 baseline of metaroce-sim sets it. */
	uint8_t gbn_ib_timeout;
	/* Policies per mode (NULL: mr_cc_ops_metaroce + mr_pathsel_ops_spray
	 * for MetaRoCE, mr_cc_ops_dcqcn + mr_pathsel_ops_single for gbn). */
	const struct mr_cc_ops *cc_metaroce;
	const struct mr_cc_ops *cc_gbn;
	const struct mr_pathsel_ops *pathsel;
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
	void *user;	    /* echoed as cqe.qp_user */
};

struct mr_srq_config {
	uint32_t pd;
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t limit; /* srq_limit event when fewer WQEs remain (0 = off) */
	void *user;	/* passed to callbacks.srq_limit */
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
	/* Caller's id of the peer address, echoed in tx meta; an RC QP takes
	 * packets only whose rx meta src equals it (MR-RSP-1). */
	uint32_t dest;
	/* mr_qp_query() only: */
	uint8_t sq_draining; /* SQD, messages started still in flight */
	uint32_t qp_num;
	enum mr_mode mode;
	enum mr_qp_type type;
};

/* Which mr_qp_attr fields mr_qp_modify() applies; numerically equal to
 * the matching enum ibv_qp_attr_mask bits (DEST rides on IBV_QP_AV). */
enum mr_qp_attr_mask {
	MR_QP_STATE = 1u << 0,
	MR_QP_ACCESS_FLAGS = 1u << 3,
	MR_QP_QKEY = 1u << 6,
	MR_QP_DEST = 1u << 7,
	MR_QP_PATH_MTU = 1u << 8,
	MR_QP_TIMEOUT = 1u << 9,
	MR_QP_RETRY_CNT = 1u << 10,
	MR_QP_RNR_RETRY = 1u << 11,
	MR_QP_RQ_PSN = 1u << 12,
	MR_QP_MAX_QP_RD_ATOMIC = 1u << 13,
	MR_QP_MIN_RNR_TIMER = 1u << 15,
	MR_QP_SQ_PSN = 1u << 16,
	MR_QP_MAX_DEST_RD_ATOMIC = 1u << 17,
	MR_QP_DEST_QPN = 1u << 20,
};

/* Metadata of a received packet, from the datapath. */
struct mr_rx_meta {
	uint32_t src;	/* caller's id of the source address (UD completions) */
	uint32_t dst;	/* caller's id of the destination address (UD GRH) */
	uint8_t ecn_ce; /* 1 if the IP header carried CE */
	/* The packet's IPv6 header as received (40 bytes), which a UD
	 * receive places in its GRH area as is (MR-UD-5); NULL: an IPv4
	 * packet, whose header the core writes from src and dst. */
	const uint8_t *l3_ip6;
};

/* Metadata of a packet to transmit, for the datapath. */
struct mr_tx_meta {
	uint32_t dest;	  /* caller's id of the destination address */
	uint16_t path_id; /* -> UDP source port (entropy) and plane */
	uint16_t entropy; /* the UDP source port the path currently uses */
	uint8_t plane;
	/* A new request or response packet of a QP with other packets of
	 * its stream in flight: its ACK clock runs without it, so the caller
	 * may hold it briefly to send it with the next ones (one system call
	 * for several). 0 for ACKs, probes, retransmissions and a lone packet
	 * (a ping-pong's message is never held). */
	uint8_t batch;
};

/*
 * Zero-copy transmit (mr_ep_tx_zc): a data packet's payload may be left in
 * registered memory and described by segments instead of being copied into
 * the caller's buffer. A segment points into memory the memreg lookup
 * resolved; it stays valid only while that memory stays registered, so the
 * caller must be done with it (copied it, or handed it to a device that
 * copied it) before any call that may deregister memory, and must not let
 * it outlive its own serialisation of the endpoint (mr_core.h threading).
 */
struct mr_tx_seg {
	const uint8_t *addr;
	uint32_t len;
};

/* At most this many segments per packet; a payload scattered over more
 * pieces of memory is copied. */
#define MR_TX_ZC_MAX_SEGS 8

struct mr_tx_zc {
	/* In: payloads shorter than this are copied into buf (one call's
	 * packet has segments only if its payload is at least this long and
	 * comes from registered memory: WRITE, SEND, READ response; inline
	 * data, ACKs, atomics and UD datagrams are always copied). */
	uint32_t min_len;
	/* Out. nseg 0: buf holds the whole packet, ICRC included, exactly
	 * as mr_ep_tx() writes it. nseg > 0: the packet is buf[0, hdr_len),
	 * then seg[0..nseg) in order, then the 4 bytes of icrc; the return
	 * value is still the whole packet's length. */
	unsigned nseg;
	uint32_t hdr_len;
	uint8_t icrc[MR_ICRC_LEN]; /* as on the wire (big-endian) */
	struct mr_tx_seg seg[MR_TX_ZC_MAX_SEGS];
};

/* Largest packet mr_ep_tx() writes: headers + mtu payload + ICRC, or the
 * largest ACK (MR_ACK_MAX_SACK_BYTES of blocks), whichever is larger. */
#define MR_TX_BUF_MIN(mtu)                                          \
	((size_t)(mtu) + MR_MAX_HDR_LEN + MR_ICRC_LEN >             \
			 MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN +    \
				 MR_ACK_MAX_SACK_BYTES + MR_ICRC_LEN \
		 ? (size_t)(mtu) + MR_MAX_HDR_LEN + MR_ICRC_LEN     \
		 : (size_t)(MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN + \
			    MR_ACK_MAX_SACK_BYTES + MR_ICRC_LEN))

/*
 * Endpoint. cfg, mem, rnd, memreg and cb are copied; their user pointers
 * must stay valid until mr_ep_destroy(). Returns 0 and *out, -MR_EINVAL
 * (bad config or a missing callback), -MR_ENOMEM.
 */
int mr_ep_create(const struct mr_ep_config *cfg, const struct mr_mem *mem,
		 const struct mr_rand *rnd, const struct mr_memreg *memreg,
		 const struct mr_callbacks *cb, struct mr_ep **out);

/* Frees the endpoint. -MR_EBUSY while QPs or SRQs exist (nothing freed). */
int mr_ep_destroy(struct mr_ep *ep);

/* The port's real rate became known (the provider reads it from the
 * port's link once the port is up; summed over the planes): the receiver's
 * rate hints share it from now on (MR-CC-7) and QPs reset from now on use
 * it as their line rate. Returns 0 or -MR_EINVAL (NULL ep, mbps 0). */
int mr_ep_set_link_rate(struct mr_ep *ep, uint32_t mbps);

/* The endpoint's effective configuration (defaults filled in). */
const struct mr_ep_config *mr_ep_config(const struct mr_ep *ep);

/*
 * Queue pair in RESET. cfg->qpn must be unique on the endpoint, nonzero
 * and fit MR_QPN_MASK (-MR_EINVAL otherwise); all queues, inline storage,
 * message tables and retransmit records are allocated here and never
 * later. RC QPs of mode MR_MODE_GBN use one path. UD QPs ignore mode.
 * cfg->srq, if set, must belong to the same ep and the same pd.
 */
int mr_qp_create(struct mr_ep *ep, const struct mr_qp_config *cfg,
		 struct mr_qp **out);

/* Frees the QP without completions (verbs: destroy discards). */
int mr_qp_destroy(struct mr_qp *qp);

/*
 * Applies the attr fields selected by mask (enum mr_qp_attr_mask).
 * Transitions follow verbs: RESET->INIT (needs ACCESS_FLAGS for RC and UC,
 * QKEY for UD), INIT->RTR (RC: DEST_QPN, RQ_PSN, PATH_MTU, DEST,
 * MAX_DEST_RD_ATOMIC, MIN_RNR_TIMER; UC: DEST, PATH_MTU, DEST_QPN,
 * RQ_PSN; UD: none), RTR->RTS (RC: SQ_PSN, TIMEOUT, RETRY_CNT, RNR_RETRY,
 * MAX_QP_RD_ATOMIC; UC and UD: SQ_PSN), any->ERR,
 * any->RESET (discards all state, no completions). Missing required
 * attributes or an illegal transition: -MR_EINVAL and nothing changes.
 * Moving to ERR flushes every outstanding WR (MR_WC_WR_FLUSH_ERR).
 * rq_psn/sq_psn seed the ssn spaces (peer's sq_psn must equal rq_psn).
 * path_mtu_bytes must not exceed the endpoint mtu.
 */
int mr_qp_modify(struct mr_qp *qp, const struct mr_qp_attr *attr,
		 unsigned attr_mask);

/* Current attributes (state is ERR if the QP failed on its own). */
int mr_qp_query(const struct mr_qp *qp, struct mr_qp_attr *out);

uint32_t mr_qp_num(const struct mr_qp *qp);

/* Send WQEs that can still be posted (max_send_wr minus those not yet
 * completed): a caller that posts a batch all or nothing checks it first. */
uint32_t mr_qp_sq_room(const struct mr_qp *qp);

/*
 * Post one send WR (RTS; RC also SQD is refused with -MR_ESTATE). The WR
 * and its sg_list are copied (inline data copied now); the SGEs' lkeys
 * are checked at post time (-MR_EACCESS). Errors leave nothing posted:
 * -MR_EAGAIN send queue full, -MR_EINVAL bad opcode/flags/num_sge or
 * atomic not 8 bytes / not 8-aligned, -MR_EMSGSIZE message over 2 GiB, UD
 * over the mtu, or inline over max_inline. In ERR the WR is accepted and
 * completed at once with MR_WC_WR_FLUSH_ERR. now drives the pacer.
 */
int mr_qp_post_send(struct mr_qp *qp, const struct mr_send_wr *wr,
		    uint64_t now);

/*
 * Post one receive WR (any state but RESET; a QP with an SRQ refuses:
 * -MR_EINVAL). Copied. -MR_EAGAIN queue full, -MR_EINVAL too many SGEs,
 * -MR_EACCESS an SGE's lkey does not give LOCAL_WRITE over it. In ERR
 * completed at once with MR_WC_WR_FLUSH_ERR. Posting may complete a
 * WRITE_WITH_IMM that was waiting for a WQE (callbacks run inside).
 */
int mr_qp_post_recv(struct mr_qp *qp, const struct mr_recv_wr *wr);

int mr_srq_create(struct mr_ep *ep, const struct mr_srq_config *cfg,
		  struct mr_srq **out);
/* -MR_EBUSY while a QP uses it. */
int mr_srq_destroy(struct mr_srq *srq);
int mr_srq_post_recv(struct mr_srq *srq, const struct mr_recv_wr *wr);
/* Re-arm the limit event with a new limit (verbs IBV_SRQ_LIMIT). */
int mr_srq_modify_limit(struct mr_srq *srq, uint32_t limit);
/* WQEs posted and not yet consumed. */
uint32_t mr_srq_count(const struct mr_srq *srq);

/*
 * One received packet (BTH onwards, ICRC included). Parsed, verified and
 * demultiplexed by dqpn; placements and completions happen through the
 * callbacks before this returns. Returns 0 if the packet was accepted
 * (duplicates included), or the negative reason it was dropped:
 * -MR_EPROTO (parse error, inconsistent fields, unexpected opcode),
 * -MR_ENOENT (no such QP), -MR_ESTATE (QP state does not take it),
 * -MR_EACCESS (qkey mismatch or access violation, NAKed for RC),
 * -MR_EAGAIN (out of window, no hold slot, or a SEND refused for want of
 * a receive WQE: RNR NAKed). Every drop is counted.
 */
int mr_ep_rx(struct mr_ep *ep, uint64_t now, const uint8_t *pkt, size_t len,
	     const struct mr_rx_meta *meta);

/*
 * The next packet to send at `now`, written to buf (cap must be at least
 * MR_TX_BUF_MIN(mtu)), sealed with its ICRC. Returns its length, or 0 if
 * nothing may be sent now (then mr_ep_next_deadline() says when to try
 * again, or new work arrives). Round-robin over QPs with work; per QP:
 * ACK/NAK first, then retransmissions, then responses and new data, within
 * the path window and the congestion controller's pace.
 */
size_t mr_ep_tx(struct mr_ep *ep, uint64_t now, uint8_t *buf, size_t cap,
		struct mr_tx_meta *meta);

/*
 * mr_ep_tx() that may leave the payload of a large data packet in
 * registered memory (struct mr_tx_zc above): the same packet, byte for
 * byte and ICRC for ICRC, as mr_ep_tx() would have written, with the same
 * effect on the endpoint. zc->min_len is read; the rest is written.
 */
size_t mr_ep_tx_zc(struct mr_ep *ep, uint64_t now, uint8_t *buf, size_t cap,
		   struct mr_tx_meta *meta, struct mr_tx_zc *zc);

/* The planes whose local port is about to stop taking packets (bit k:
 * plane k: its transmit ring nearly full), as the caller sees its
 * transmit queues before it asks mr_ep_tx() for the next packet: a QP's
 * next packet then goes on a path of another plane when it has one that
 * may send (MR-MP-12). A datapath that stops taking packets when one
 * port is full would otherwise let that port's backlog idle the others.
 * Report a port only when nearly full, not whenever it has a queue
 * (MR-MP-12's rationale). 0 (the default): no preference. */
void mr_ep_set_planes_backlogged(struct mr_ep *ep, uint32_t planes);

/* Earliest time at which mr_ep_handle_expiry() or mr_ep_tx() has work that
 * is waiting on time (RTO, RNR wait, delayed ACK, pacing); UINT64_MAX if
 * none. */
uint64_t mr_ep_next_deadline(const struct mr_ep *ep);

/* Run the timers due at now (RTO: retransmit or fail with
 * MR_WC_RETRY_EXC_ERR; RNR wait end; delayed ACK). Call it at or after the
 * deadline; calling it early is harmless. */
void mr_ep_handle_expiry(struct mr_ep *ep, uint64_t now);

/* Counters (mr_counters.h). The endpoint's include every QP's, and drops
 * that match no QP. Valid until the object is destroyed. */
const struct mr_counters *mr_ep_counters(const struct mr_ep *ep);
const struct mr_counters *mr_qp_counters(const struct mr_qp *qp);

/* Use of each path id, summed over the endpoint's QPs, those destroyed
 * included. Plane of path i: i % num_planes. (mr_ep_stats.c) One X(name,
 * help) row per counter; names and help: mr_path_counters_names() and
 * mr_path_counters_help() (mr_counters.c). */
#define MR_PATH_COUNTERS(X)                                                  \
	X(tx_pkts, "packets sent on the path, retransmissions too")          \
	X(tx_bytes, "their bytes")                                           \
	X(retx_pkts, "retransmissions sent on the path")                     \
	X(lost_pkts, "packets declared lost: SACK hole, time, RTO, suspect, tail") \
	X(rto_events, "retransmission timeouts")                             \
	X(repaths, "new UDP source ports after a timeout")                   \
	X(rx_pkts, "packets received on the path, any outcome")              \
	X(rx_dups, "of which duplicates")                                    \
	X(rx_ce, "of which CE-marked")

#define MR_PATH_COUNTERS_FIELD(name, help) uint64_t name;
struct mr_path_counters {
	MR_PATH_COUNTERS(MR_PATH_COUNTERS_FIELD)
};
#undef MR_PATH_COUNTERS_FIELD

#define MR_PATH_COUNTERS_N (sizeof(struct mr_path_counters) / sizeof(uint64_t))

const char *const *mr_path_counters_names(void);
const char *const *mr_path_counters_help(void);

/* Fill out[0..max) with path ids 0..; returns the number of path ids the
 * endpoint uses (its configured num_paths, capped at max). */
unsigned mr_ep_path_counters(const struct mr_ep *ep,
			     struct mr_path_counters *out, unsigned max);

#endif /* MR_CORE_H */
