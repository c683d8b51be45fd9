/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Randomized scenarios with a reference model. From one seed: a QP pair
 * (RC in either reliability mode, or UD), registered regions filled with
 * random bytes, a random mix of work requests on both sides (SEND,
 * SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ, both atomics;
 * sizes 0, 1, MTU-1, MTU, MTU+1, random and occasionally large; random SGE
 * splits, inline, signaled or not, fences) posted over simulated time
 * through a scripted link. The model computes the final contents of every
 * registered byte on both sides and the exact completion lists (send queue
 * in posting order, receive queue in message order); after the run both
 * are compared in full. A run that does not finish within its simulated
 * time bound fails and names its seed.
 */
#ifndef MRSIM_SCEN_H
#define MRSIM_SCEN_H

#include <stdint.h>

#include "mr_core.h"
#include "mrsim_world.h"

struct mrsim_scen_cfg {
	const char *name; /* for summaries */
	enum mr_qp_type type;
	enum mr_mode mode;
	uint32_t mtu;	    /* 0: chosen per seed from 256, 1024, 4096 */
	uint16_t num_paths; /* 0: chosen per seed (1..8; gbn uses 1) */
	uint32_t loss_ppm;  /* both directions */
	uint32_t dup_ppm, reorder_ppm, corrupt_ppm, ce_ppm;
	uint64_t delay_ns, jitter_ns;
	unsigned max_wr;   /* WRs per side: 1..max_wr */
	uint64_t big_max;  /* largest message */
	uint32_t big_ppm;  /* probability a WR is large (up to big_max) */
	int bidir;	   /* both sides post requests */
	int late_recv;	   /* some receives posted late (RNR and retry) */
	uint64_t bound_ns; /* simulated-time bound */
	unsigned max_qps;  /* QP pairs per scenario: 1..max_qps (0 = 1) */
	int srq;	   /* receivers use an SRQ in half the scenarios */
};

/* After the last completion the endpoints must fall idle within this much
 * simulated time (retransmissions back off to a 1 s ceiling). */
#define MRSIM_SETTLE_NS (20ull * 1000000000ull)

/* QP pairs a scenario may run at once (5 regions per QP, 16 per node). */
#define MRSIM_MAX_QPS 3

struct mrsim_scen_result {
	int ok;
	char why[768];
	uint64_t pkts;	   /* packets sent by both endpoints */
	uint64_t retx;	   /* retransmissions (core counters) */
	uint64_t lost;	   /* packets the link dropped */
	uint64_t sim_ns;   /* simulated time to completion */
	uint64_t wrs;	   /* work requests posted */
	uint64_t bytes;	   /* message bytes requested */
	uint64_t ud_lost;  /* UD: datagrams not delivered */
	unsigned qp_pairs; /* QP pairs run */
	unsigned srqs;	   /* receive sides that used an SRQ */
};

/* Run one scenario. Returns 0 if it passed, -1 otherwise (res->why). */
int mrsim_scen_run(const struct mrsim_scen_cfg *cfg, uint64_t seed,
		   struct mrsim_scen_result *res);

/* The UD flavour (mrsim_scen_run calls it for cfg->type MR_QPT_UD). */
int mrsim_ud_run(const struct mrsim_scen_cfg *cfg, uint64_t seed,
		 struct mrsim_scen_result *res);

/* Connected RC pair for hand-written scenarios. */
struct mrsim_rc_opts {
	enum mr_mode mode;
	uint32_t max_send_wr, max_recv_wr;
	uint32_t max_inline;
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	uint32_t psn[2]; /* sq_psn of node i = rq_psn of node 1 - i */
	int sq_sig_all[2];
	struct mr_srq *srq[2]; /* receive queue of node i's QP (NULL: own) */
};

/* Create RC QP qpn[i] on node i, both connected to each other and in RTS.
 * Returns 0 or the failing call's negative MR_E*. */
int mrsim_rc_connect(struct mrsim_world *w, const struct mrsim_rc_opts *o,
		     const uint32_t qpn[2], struct mr_qp *qp[2]);

/* Sum of the retransmission counters of both endpoints. */
uint64_t mrsim_world_retx(const struct mrsim_world *w);

/* Number of scenarios to run: the default, times MRSIM_SCALE (a float,
 * environment) for soak runs; MRSIM_SEED runs that single seed. */
unsigned mrsim_scen_count(unsigned dflt);

#endif /* MRSIM_SCEN_H */
