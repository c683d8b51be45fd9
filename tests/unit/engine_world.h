/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Harness of the engine unit tests (test_engine.c, test_engine_timing.c):
 * two endpoints joined by a scripted link (an array of packets in
 * flight, loss by mask or seeded PRNG, fixed delay plus seeded jitter),
 * literal timestamps. Not thread safe; one world at a time.
 */
#ifndef ENGINE_WORLD_H
#define ENGINE_WORLD_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mr_core.h"
#include "mr_counters.h"
#include "mr_mw.h"
#include "mr_test.h"

#define MAXQ 8192
#define MAXREG 16
#define MAXCQE 4096
#define MAXMW 4

struct reg {
	uint32_t key, pd;
	uint8_t *base;
	uint64_t len;
	unsigned access;
};

struct inflight {
	uint8_t buf[4400];
	size_t len;
	uint64_t at;
	struct mr_rx_meta meta;
};

struct node {
	struct mr_ep *ep;
	struct reg regs[MAXREG];
	int nregs;
	/* Memory windows (mr_mw.h rules): keys apart from regs' keys. */
	struct mr_mw mws[MAXMW];
	int nmws;
	struct mr_cqe cqe[MAXCQE];
	int ncqe;
	int qp_errors;
	int srq_limits;
	int sq_drained;
	/* Two threads that read the clock before taking the endpoint's
	 * lock: every stale_every-th packet is delivered with a time
	 * stale_ns older than the calls before it (0: never). */
	uint32_t stale_every, stale_n;
	uint64_t stale_ns;
	/* Called at each completion, when it is made (before any later
	 * placement): what the application would see at that moment. */
	void (*on_cqe)(struct node *n, const struct mr_cqe *c);
	int hook_ok, hook_calls;
	/* placement log for the visibility test */
	uint8_t *watch; /* a byte whose first write is recorded */
	uint64_t places, watch_at_place;
};

struct link {
	struct inflight q[MAXQ];
	int n;
	uint64_t delay, jitter;
	uint32_t loss_ppm; /* random loss */
	uint64_t rng;
	uint64_t sent;
	/* drop the packets whose send index (0-based) is set here */
	const uint64_t *drop_idx;
	int ndrop;
	int drop_all;
	int corrupt_next;
	int reverse_next; /* deliver the next n packets in reverse order */
	uint32_t ce_ppm;
	/* A receiver that is not scheduled (a loaded host): packets sent
	 * during the first stall_len ns of every stall_every ns period
	 * are delivered together when the stall ends (order kept). */
	uint64_t stall_every, stall_len;
	uint8_t drop_op; /* drop every packet of this wire opcode (0: none) */
	/* A failed plane or path: drop every packet whose PTH plane
	 * (bit) or path id (bit) is set here (MR-HDR-14). */
	uint64_t drop_planes, drop_paths;
	uint64_t plane_pkts[8]; /* packets sent on plane i (i < 8) */
	uint64_t plane_delay[8]; /* added to the delay of plane i's packets */
	/* Sees every packet sent on the link, before any drop (NULL:
	 * none); tap_user is the test's. */
	void (*tap)(struct link *l, const uint8_t *buf, size_t len);
	void *tap_user;
};

struct world {
	struct node n[2];
	struct link l[2]; /* l[i]: from node i */
	uint64_t now;
	/* world_step() jumps no further than this (0: no limit), so a test
	 * can act at a time of its own between events. */
	uint64_t until;
};

struct pair {
	struct mr_qp *a, *b;
};

#define RW                                                \
	(MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE | \
	 MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_ATOMIC)

/* xorshift64: the seeded generator of the link and the tests */
uint64_t xs(uint64_t *s);
extern int want_a, want_b;
/* path MTU connect_qps() sets (1024; at most the endpoint's mtu) */
extern uint32_t world_path_mtu;
extern const struct mr_ep_config base_cfg;

int world_init(struct world *w, const struct mr_ep_config *cfg);
void world_fini(struct world *w);
void reg(struct node *n, uint32_t key, uint8_t *base, uint64_t len,
	 unsigned access);
/* A free window of type (enum mr_mw_type) with rkey, PD 1. */
void world_alloc_mw(struct node *n, uint8_t type, uint32_t rkey);
void link_send(struct link *l, const uint8_t *buf, size_t len, uint64_t now);
/* One step: expiry, drain tx, deliver what is due; then jump to the next
 * event. Returns 0 when nothing is left to happen. */
int world_step(struct world *w);
/* Step until done(w) (NULL: until t); dumps the state on failure. */
int run_until(struct world *w, int (*done)(struct world *), uint64_t t);
void connect_qps(struct world *w, struct pair *p, enum mr_mode mode,
		 uint32_t max_wr, struct mr_srq *srq_b);
/* How world_connect() joins its two QPs: index i is node i's QP. */
struct world_conn {
	uint32_t qpn[2];
	uint32_t rq_psn[2], sq_psn[2];
	uint32_t path_mtu;
	uint8_t rd_atomic; /* max_dest_rd_atomic and max_rd_atomic */
	uint8_t min_rnr_timer, timeout;
	int rts; /* how many, from node 0's, go on from RTR to RTS */
	struct mr_srq *srq_b; /* node 1's QP receives from it (NULL: none) */
};
/* Two QPs connected in a world: c (its qpn replaced) created on each
 * node, INIT (RW), RTR towards the other, RTS as k says (retries 7);
 * every call checked. */
void world_connect(struct world *w, struct pair *p,
		   const struct mr_qp_config *c, const struct world_conn *k);
void fill(uint8_t *p, size_t n, uint32_t seed);
int post_send(struct mr_qp *qp, enum mr_wr_opcode op, uint64_t wr_id,
	      void *laddr, uint32_t len, uint32_t lkey, void *raddr,
	      uint32_t rkey, unsigned flags, uint64_t now);
int post_recv(struct mr_qp *qp, uint64_t wr_id, void *addr, uint32_t len,
	      uint32_t lkey);
/* The stream of test_pathmgr.c and tests/dp/test_backlog.c: src (filled
 * from seed) registered on node 0 with key 5, dst (zeroed) on node 1 with
 * key 6, nmsg signalled WRITEs of msg bytes from p->a, the last one with
 * an immediate (one receive posted at p->b); want_a = nmsg, want_b = 1. */
void world_post_writes(struct world *w, struct pair *p, uint8_t *src,
		       uint8_t *dst, int nmsg, uint32_t msg, uint32_t seed);
void dump(struct world *w);
int cqe_done(struct world *w);
void destroy_pair(struct pair *p);
/* Modify an RTS QP: mask selects which of rnr_retry/retry_cnt/timeout
 * take val. */
void set_rts_attr(struct mr_qp *qp, unsigned mask, uint8_t val);

#endif /* ENGINE_WORLD_H */
