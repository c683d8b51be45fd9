/* SPDX-License-Identifier: BSD-2-Clause */
/* mri-verbs (see mri_verbs.c): what its three files share. */
#ifndef MRI_VERBS_H
#define MRI_VERBS_H

#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>

/* Memory of one side: src (gather source, READ source), dst (WRITE and
 * receive target, READ and atomic result target), 64 atomic slots; then
 * an unmodelled scratch area for inline data. */
#define REGION (4u << 20)
#define OFF_SRC 0u
#define OFF_DST REGION
#define OFF_ATOM (2u * REGION)
#define ATOM_SLOTS 64u
#define IMG_LEN (OFF_ATOM + ATOM_SLOTS * 8u)
#define OFF_SCR (OFF_ATOM + 4096u)
#define SCR_LEN (64u << 10)
#define BUF_LEN (OFF_SCR + SCR_LEN)
#define MAX_MSG (3u << 20)
#define MAX_OPS 40
#define MAX_SGE 16
#define DEPTH 256
#define WAIT_S 45
#define IB_PORT 1
/* The IPv4-mapped GID (MR-ADDR-1: 0 is link-local, which a routed fabric
 * does not carry); MRI_GID_INDEX=N picks another. */
#define GID_IDX mri_gid_index()
int mri_gid_index(void);
/* Local ACK timeout 14 (67 ms) and retry_cnt 2 where a peer vanishes:
 * the retry-exceeded error may not come before (retry_cnt + 1) tries. */
#define GONE_TIMEOUT 14
#define GONE_RETRY 2

enum opk {
	OP_SEND,
	OP_SEND_IMM,
	OP_WRITE,
	OP_WRITE_IMM,
	OP_READ,
	OP_CAS,
	OP_FAA,
	OP_NKINDS
};

struct sg {
	uint32_t off; /* in the owner's buffer */
	uint32_t len;
};

struct op {
	enum opk kind;
	uint32_t len;
	int nsge;
	struct sg sge[MAX_SGE]; /* requester's memory */
	uint32_t roff;		/* responder's memory */
	int rnsge;		/* receive buffers (SEND*, WRITE_IMM) */
	struct sg rsge[MAX_SGE];
	uint32_t imm;
	uint64_t cmp, swp;
	int signaled, inl, fence;
};

struct step {
	int k, nops;
	struct op ops[MAX_OPS];
	char what[32];
};

/* One side present in this process. */
struct side {
	struct ibv_pd *pd;
	struct ibv_mr *mr, *ro_mr; /* ro_mr: dst, remote read only */
	uint8_t *buf;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	uint32_t psn;
	uint32_t max_inline;
};

/* What the other side of a QP pair tells us. */
struct remote {
	uint32_t qpn, psn, rkey, ro_rkey, max_inline;
	uint64_t base;
	union ibv_gid gid;
};
#define NSTEPS 18

enum bad {
	BAD_WRITE_RKEY,
	BAD_READ_RKEY,
	BAD_ATOMIC_RKEY,
	BAD_WRITE_RANGE,
	BAD_WRITE_RO,
	BAD_N
};

/* Where the responder's receive for the follow-up SEND sits. */
#define BAD_RECV_OFF (OFF_DST + 8192u)
#define BAD_LEN 4096u

extern uint64_t mri_seed;
extern uint8_t *mri_img[2]; /* model: [0] requester, [1] responder */
extern const char *const mri_op_name[];
extern const char *const mri_bad_name[];

/* mri_verbs.c */
void mri_fail(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* mri_gen.c: the seeded generator and the model of both memories */
uint64_t mri_rnd(uint64_t *s);
uint32_t mri_rr(uint64_t *s, uint32_t lo, uint32_t hi);
void mri_fill(uint8_t *p, size_t n, uint64_t s);
int mri_has_recv(enum opk k);
void mri_gen_step(int k, uint32_t max_inline, struct step *st);

/* mri_io.c: work requests, completions, memory checks, bad requests */
double mri_now_s(void);
void mri_post_recvs(struct side *s, const struct step *st);
void mri_post_sends(struct side *s, const struct remote *rm,
		    const struct step *st);
void mri_poll_one(struct ibv_cq *cq, struct ibv_wc *wc, const char *who,
		  double limit);
void mri_no_more(struct ibv_cq *cq, const char *who);
void mri_expect_wc(const struct ibv_wc *wc, const char *who, uint64_t id,
		   enum ibv_wc_status status, int opc, uint32_t len, int imm,
		   uint32_t immv, uint32_t qpn);
int mri_poll_sends(struct side *s, const struct step *st);
int mri_poll_recvs(struct side *s, const struct step *st);
void mri_verify_mem(const struct side *s, int i, const char *when);
void mri_step_report(const struct step *st, int nsc, int nrc);
void mri_bad_post_recv(struct side *s);
void mri_bad_run(struct side *s, const struct remote *rm, enum bad b);
void mri_bad_drain(struct side *s);

/* mri_verbs.c: the line-based TCP channel to the peer */
void mri_tcp_send(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *mri_tcp_expect(char *line, size_t len);

/* mri_mw.c: case mw, memory windows between the two hosts */
#define MRI_MW_CASES 3
void mri_mw_client(struct side *s, int i);
void mri_mw_server(struct side *s, const char *line);
void mri_mw_free(void);

#endif
