/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The simulated cluster: hosts (one core endpoint each, one NIC port per
 * plane), leaf-spine switches per plane, the links between them, the
 * packets in flight, and the connections of the workload. Time is in
 * picoseconds; the core is given nanoseconds.
 *
 *   mrsim_net.c   topology, ports (serialisation, queues, ECN, drop-tail,
 *                 loss, corruption, failures), ECMP forwarding
 *   mrsim_host.c  the endpoints, driven as lib/dp drives them; memory
 *                 and the check of every placed byte
 *   mrsim_wl.c    the workloads (which messages, when)
 *   mrsim_out.c   summary.json, CSV time series, gnuplot plots
 */
#ifndef MRSIM_NET_H
#define MRSIM_NET_H

#include <stdint.h>
#include <stdio.h>

#include "mr_core.h"
#include "mrsim_cfg.h"
#include "mrsim_ev.h"

/* On the wire around a core packet: Ethernet 14 + IPv4 20 + UDP 8 + FCS 4,
 * and preamble + inter-frame gap 20 that the link also spends. */
#define MRSIM_WIRE_OVERHEAD 66
#define MRSIM_PKT_MAX 4608
#define MRSIM_ROCE_PORT 4791

enum mrsim_ev_type {
	MRSIM_EV_PORT_DONE = 1, /* p = port: its head packet is sent */
	MRSIM_EV_ARRIVE,	/* p = packet, at the far end of pkt->hop */
	MRSIM_EV_TIMER,		/* p = host: a core deadline */
	MRSIM_EV_SAMPLE,	/* time series */
};

struct mrsim_pkt {
	struct mrsim_pkt *next;
	struct mrsim_port *hop; /* the port that sent it last */
	uint32_t len;		/* core packet (BTH .. ICRC) */
	uint16_t src, dst;	/* hosts */
	uint16_t sport;		/* UDP source port: the path's entropy */
	uint16_t path_id;	/* the sender's path (mrsim_redraw.c) */
	uint8_t plane, ce, corrupted;
	uint8_t data[MRSIM_PKT_MAX];
};

enum mrsim_port_kind {
	MRSIM_HOST_UP = 0, /* host NIC -> leaf */
	MRSIM_LEAF_DOWN,   /* leaf -> host */
	MRSIM_LEAF_UP,	   /* leaf -> spine */
	MRSIM_SPINE_DOWN,  /* spine -> leaf */
	MRSIM_PORT_KINDS
};

struct mrsim_switch;

struct mrsim_port {
	struct mrsim_world *w;
	uint8_t kind, plane;
	uint16_t leaf, spine, host; /* ends it joins (as its kind says) */
	uint64_t mbps;
	uint64_t delay_ps;
	uint64_t buf_bytes;	   /* 0: unlimited (a host's own queue) */
	uint64_t ecn_min, ecn_max; /* bytes; ecn_min 0: no marking */
	double ecn_pmax;
	double loss, corrupt;
	struct mrsim_pkt *head, *tail;
	uint64_t qbytes, qmax;
	uint32_t qpkts;
	int busy;
	int to_host;		    /* >= 0: delivers to this host */
	struct mrsim_switch *to_sw; /* else to this switch */
	uint64_t rng;
	const struct mrsim_fail *fail[MRSIM_MAX_FAIL];
	int nfail;
	/* counters */
	uint64_t tx_pkts, tx_bytes, drops_overflow, drops_loss, drops_failed;
	uint64_t corrupted, ecn_marked;
	uint64_t sample_bytes; /* sent since the last sample */
	/* A host port's idle time by cause (enum mrsim_idle), since idle_from. */
	uint8_t idle_why;
	uint64_t idle_from;
};

/* Why a host's port has nothing to send (host uplinks) or to deliver
 * (leaf downlinks), the time series' idle columns: where the ports of k
 * planes lose their rate. */
enum mrsim_idle {
	MRSIM_BUSY = 0,
	MRSIM_IDLE_ALL,	 /* no other port of the host (the same side) has
			  * a packet waiting: the core gave none (uplink),
			  * none is on its way (downlink) */
	MRSIM_IDLE_SKEW, /* another plane's port of the host has packets
			  * waiting behind the one it sends */
	MRSIM_IDLE_NIC,	 /* uplink: the NIC takes none, another port's ring
			  * being full (mrsim_host.c) */
	MRSIM_IDLE_CAUSES
};

struct mrsim_switch {
	int spine; /* 0: leaf */
	int plane, idx;
	uint64_t seed;		  /* ECMP hash seed of this switch */
	struct mrsim_port **down; /* leaf: [hosts_per_leaf], spine: [leaves] */
	struct mrsim_port **up;	  /* leaf: [spines] */
};

struct mrsim_msg {
	uint64_t post_ps;
	uint64_t placed;
	uint32_t len;
	uint32_t src_off; /* in the sender's pattern buffer */
	uint32_t seq;
	uint8_t bad, busy;
};

struct mrsim_flow {
	int src, dst;
	uint64_t bytes, done_bytes;
	uint64_t start_ps, end_ps;
	uint64_t first_rx_ps; /* its first byte placed (0: none yet) */
	int conns_left;
};

struct mrsim_conn {
	int idx, src, dst, flow, plane;
	struct mr_qp *qs, *qd; /* requester on src, responder on dst */
	uint32_t qpn_s, qpn_d;
	uint64_t bytes_left; /* not yet posted */
	uint32_t next_seq, outstanding;
	struct mrsim_msg *msg; /* [window] */
	/* allreduce: one WRITE_WITH_IMM per step */
	uint32_t imm_rcvd;
};

struct mrsim_host {
	struct mrsim_world *w;
	int idx;
	struct mr_ep *ep;
	struct mrsim_port *nic[8];  /* uplinks, one per plane */
	struct mrsim_port *down[8]; /* the leaves' downlinks to it */
	uint8_t *pat; /* the pattern every message is sent from */
	uint64_t pat_len;
	uint64_t rng;
	uint64_t timer_at; /* ps of the earliest timer event pending */
	int in_pump;
	/* allreduce */
	uint32_t ar_sent, ar_rcvd_steps, ar_send_done;
	uint32_t *ar_rcvd; /* per step: WRITE_IMMs received */
	uint8_t txbuf[MRSIM_PKT_MAX];
};

struct mrsim_stats {
	uint64_t placed_bytes, sample_placed;
	/* idle ps of host ports since the last sample: [uplink 0 /
	 * downlink 1][enum mrsim_idle] */
	uint64_t sample_idle[2][MRSIM_IDLE_CAUSES];
	uint64_t msgs_total, msgs_done;
	/* ACKs and NAKs the hosts sent, and their bytes on the wire (with
	 * MRSIM_WIRE_OVERHEAD each): what the ACK format costs. */
	uint64_t ack_pkts, ack_wire_bytes;
	uint64_t verify_errors, cqe_errors;
	uint64_t first_ps, last_done_ps;
	char first_error[256];
	double *fct_us; /* per flow */
};

struct mrsim_world {
	struct mrsim_scn scn;
	struct mrsim_evq q;
	int roce, paths, leaves;
	uint64_t host_mbps, up_mbps;
	struct mrsim_host *host;
	struct mrsim_switch *leaf;  /* [planes * leaves] */
	struct mrsim_switch *spine; /* [planes * spines] */
	struct mrsim_port **port;   /* every port */
	int nport;
	struct mrsim_conn *conn;
	int nconn;
	struct mrsim_flow *flow;
	int nflow;
	struct mrsim_pkt *free_pkts;
	uint64_t pkts_alloc;
	struct mrsim_stats st;
	int done;
	FILE *ts, *qcsv;     /* time series being written, or NULL */
	uint64_t *path_prev; /* [paths] path tx bytes at the last sample */
	double cpu_s;	     /* CPU time of the event loop */
	/* Black-holed paths (mrsim_redraw.c), allocated at the first. */
	struct mrsim_redraw_ent *redraw;
	uint64_t redraw_affected;
};

/* mrsim_net.c */
int mrsim_net_build(struct mrsim_world *w, char *err, size_t errlen);
void mrsim_net_free(struct mrsim_world *w);
struct mrsim_pkt *mrsim_pkt_alloc(struct mrsim_world *w);
void mrsim_pkt_free(struct mrsim_world *w, struct mrsim_pkt *p);
void mrsim_port_enqueue(struct mrsim_port *p, struct mrsim_pkt *pkt);
void mrsim_port_done(struct mrsim_port *p);
/* Account a host port's idle time up to now and set its cause
 * (MRSIM_BUSY while it sends). */
void mrsim_port_idle(struct mrsim_port *p, int why);
/* The host's downlinks' causes after one of them started or emptied. */
void mrsim_host_down_idle(struct mrsim_world *w, int host);
void mrsim_arrive(struct mrsim_world *w, struct mrsim_pkt *pkt);
int mrsim_port_failed(const struct mrsim_port *p, uint64_t t);
/* ECMP: the uplink a leaf picks for a packet (exposed for the tests). */
uint32_t mrsim_ecmp_hash(uint64_t seed, uint32_t src, uint32_t dst,
			 uint16_t sport, uint16_t dport);
uint64_t mrsim_rand(uint64_t *s);

/* mrsim_host.c */
int mrsim_hosts_create(struct mrsim_world *w, char *err, size_t errlen);
void mrsim_hosts_free(struct mrsim_world *w);
/* Connect conn (QPs created, moved to RTS as the provider does). */
int mrsim_conn_open(struct mrsim_world *w, struct mrsim_conn *c);
int mrsim_conn_post(struct mrsim_world *w, struct mrsim_conn *c, uint32_t len,
		    int with_imm, uint32_t imm);
void mrsim_host_rx(struct mrsim_host *h, struct mrsim_pkt *pkt);
void mrsim_host_pump(struct mrsim_host *h);
void mrsim_host_timer(struct mrsim_host *h, uint64_t at);

/* mrsim_wl.c */
int mrsim_wl_setup(struct mrsim_world *w, char *err, size_t errlen);
void mrsim_wl_start(struct mrsim_world *w);
void mrsim_wl_send_done(struct mrsim_world *w, struct mrsim_conn *c,
			struct mrsim_msg *m);
void mrsim_wl_recv_imm(struct mrsim_world *w, struct mrsim_conn *c,
		       uint32_t imm);

/* mrsim_out.c */
int mrsim_mkdirs(const char *path); /* mkdir -p */
int mrsim_out_open(struct mrsim_world *w, char *err, size_t errlen);
void mrsim_out_sample(struct mrsim_world *w);
int mrsim_out_finish(struct mrsim_world *w, double wall_s, double setup_s);

#endif /* MRSIM_NET_H */
