/* SPDX-License-Identifier: BSD-2-Clause */
/* Internals of the RC scenario runner shared by mrsim_scen.c (generation,
 * model, execution) and mrsim_check.c (verification, diagnostics). */
#ifndef MRSIM_SCEN_INT_H
#define MRSIM_SCEN_INT_H

#include "mrsim_scen.h"

#define MAX_SGE 4
#define MAX_INLINE 256
#define RO_ZONE 4096   /* never written: READs of untouched bytes */
#define ATOMIC_WORDS 8 /* atomics of a side share these words */

struct pwr {
	struct mr_send_wr wr;
	struct mr_sge sge[MAX_SGE];
	uint32_t len;
	int inl;
	uint64_t t_post;
	/* Model marks for checks at completion time: the peer's target
	 * bytes [RO_ZONE, RO_ZONE + tgt_mark) and our own READ/atomic
	 * destination bytes [0, ldst_mark) are final once this WR
	 * completes; a WRITE's bytes start at tgt_off of the peer's target
	 * region. */
	uint64_t tgt_mark, ldst_mark, tgt_off;
};

struct prcv {
	struct mr_recv_wr wr;
	struct mr_sge sge[MAX_SGE];
	uint64_t t_post;
	/* Final once this WQE completes: our receive bytes [0, rcv_mark)
	 * and target bytes [RO_ZONE, RO_ZONE + tgt_mark). */
	uint64_t rcv_mark, tgt_mark;
};

enum { R_SRC, R_RCV, R_TGT, R_LDST, R_INL, R_N };

struct side {
	struct mrsim_node *nd;
	struct mr_qp *qp;
	uint32_t qpn;
	struct mrsim_region *reg[R_N];
	uint8_t *exp[R_N];
	uint64_t need[R_N];
	struct pwr *wrs;
	unsigned nwr, posted;
	struct prcv *rcvs;
	unsigned nrcv, rposted;
	struct mr_cqe *exp_sq, *exp_rq;
	size_t nexp_sq, nexp_rq;
	uint64_t cur_rcv, cur_tgt, cur_ldst;
	int sig_all;
	uint32_t psn;	    /* its sq_psn (the peer's rq_psn) */
	struct mr_srq *srq; /* receives go to this SRQ (NULL: own RQ) */
};

struct scen {
	const struct mrsim_scen_cfg *cfg;
	uint64_t seed;
	struct mrsim_rand r;
	struct mrsim_world w;
	/* Side i is on node i & 1; sides 2q and 2q+1 are QP pair q. */
	struct side s[2 * MRSIM_MAX_QPS];
	unsigned nq;
	uint32_t mtu;
	uint16_t paths;
	uint32_t max_send_wr;
	int failed;
	char why[512];
};

void mrsim_scen_fail(struct scen *sc, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Compare side i's send (recv = 0) or receive completions with the
 * model's list, in order. */
void mrsim_scen_check_cqes(struct scen *sc, int i, int recv);
/* Compare every byte of side i's regions with the model. */
void mrsim_scen_check_memory(struct scen *sc, int i);
/* MRSIM_VERBOSE: the plan, completions and counters on stderr. */
void mrsim_scen_dump(struct scen *sc);
const struct mr_cqe *mrsim_scen_first_error(const struct mrsim_world *w);
/* World hooks: data visible when its completion is delivered, and the
 * last byte of a WRITE placed last. */
void mrsim_scen_on_cqe(void *user, int node, const struct mr_cqe *cqe);
void mrsim_scen_on_place(void *user, int node, const uint8_t *dst,
			 uint32_t len);

#endif /* MRSIM_SCEN_INT_H */
