/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Internals of lib/dp shared by its source files. Only lib/dp includes
 * this; DPDK types appear as incomplete struct pointers so files that do
 * not touch DPDK need no DPDK header.
 */
#ifndef MRDP_INT_H
#define MRDP_INT_H

#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>

#include "mrdp.h"
#include "mrdp_encap.h"
#include "mrdp_neigh.h"

struct rte_mbuf;
struct rte_mempool;

#define MRDP_BURST 32
#define MRDP_BACKLOG 256   /* frames a port refused, retried next round */
#define MRDP_TX_BUDGET 256 /* engine packets pulled per round */
#define MRDP_RING 1024	   /* descriptors per queue (PMDs that use them) */
#define MRDP_STATS_PERIOD_NS 1000000000ull

extern int mrdp_debug;
#define MRDP_LOG(...)                                          \
	do {                                                   \
		if (mrdp_debug)                                \
			fprintf(stderr, "mrdp: " __VA_ARGS__); \
	} while (0)

struct mrdp_plane {
	uint16_t port_id;
	int open; /* probed (needs hot-unplug on close) */
	int started;
	char vdev_name[64];  /* name given to rte_dev_probe */
	int tx_csum_offload; /* port computes IPv4 + UDP checksums */
	int rx_csum_offload; /* port reports checksum status */
	unsigned nstage;     /* frames built this round */
	struct rte_mbuf *stage[MRDP_BURST];
	unsigned nbacklog; /* frames the port refused earlier */
	struct rte_mbuf *backlog[MRDP_BACKLOG];
	struct mrdp_plane_counters c;
};

struct mrdp_dev {
	struct mr_devconf conf;
	struct mrdp_ops ops;
	struct mrdp_local me;
	char stats_path[PATH_MAX];
	int has_stats;
	int udp_csum;

	unsigned nplanes;
	struct mrdp_plane plane[MR_DEVCONF_MAX_PORTS];
	struct rte_mempool *pool;
	size_t max_pkt;	  /* largest engine packet (BTH..ICRC) */
	size_t max_frame; /* MRDP_HDR_LEN + max_pkt */
	uint8_t *scratch; /* a multi-segment frame made contiguous */

	pthread_mutex_t lock;
	struct mrdp_neigh_table *neigh;
	uint64_t loopback_pkts;
	uint64_t progress_rounds;
	uint64_t inline_rounds;
	uint64_t sleeps;

	pthread_t thread;
	int has_thread;
	atomic_int stop;
	atomic_int sleeping;
	atomic_int kicked;
	pthread_mutex_t sleep_mu;
	pthread_cond_t sleep_cv;
	uint64_t next_stats_ns;
	/* When an application thread last called mrdp_progress(). */
	_Atomic uint64_t last_inline_ns;
	/* When a round (any thread) last had work: inline progress keeps the
	 * progress thread out of its long idle sleeps too. */
	_Atomic uint64_t last_work_ns;
};

/* mrdp_eal.c: start EAL once per process (0 or -errno, reason in err). */
int mrdp_eal_start(const struct mr_devconf *c, char *err, size_t errlen);
/* Is this port argument a PCI address (rather than a vdev)? */
int mrdp_is_pci(const char *args);
/* Run f(arg) with every signal blocked, restoring the caller's mask. */
int mrdp_with_signals_blocked(int (*f)(void *), void *arg);

/* mrdp_port.c: the buffer pool and the ports of a device. */
int mrdp_pool_create(struct mrdp_dev *d, unsigned seq, char *err,
		     size_t errlen);
void mrdp_pool_free(struct mrdp_dev *d);
int mrdp_port_open(struct mrdp_dev *d, unsigned idx, unsigned seq, char *err,
		   size_t errlen);
void mrdp_port_close(struct mrdp_dev *d, unsigned idx);

/* mrdp_io.c: one round of receive, timers and transmit. Lock held. */
int mrdp_io_round(struct mrdp_dev *d, uint64_t now);
/* Earliest time a round has timed work (engine, ARP). Lock held. */
uint64_t mrdp_io_next_deadline(struct mrdp_dev *d);
/* Free every mbuf the device still holds (staged, backlog, neighbour
 * queues). Lock held, ports stopped. */
void mrdp_io_release(struct mrdp_dev *d);
/* Start resolving ip now (send the first ARP request). Lock held. */
int mrdp_io_resolve(struct mrdp_dev *d, uint32_t ip, uint8_t mac[6],
		    uint64_t now);

/* mrdp_stats.c: write the counters file (atomically). */
int mrdp_stats_write(struct mrdp_dev *d);
void mrdp_snapshot(struct mrdp_dev *d, struct mrdp_counters *out);

#endif /* MRDP_INT_H */
