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

#include "mr_gid.h"
#include "mrdp.h"
#include "mrdp_addr.h"
#include "mrdp_encap.h"
#include "mrdp_neigh.h"
#include "mrdp_route.h"

struct rte_mbuf;
struct rte_mempool;
struct sock_filter;
struct mrdp_svc;
struct bpf_insn;

#define MRDP_BURST 32
#define MRDP_BACKLOG 256   /* frames a port refused, retried next round */
#define MRDP_TX_BUDGET 256 /* engine packets pulled per round */
#define MRDP_RING 1024	   /* descriptors per queue (PMDs that use them) */
#define MRDP_STATS_PERIOD_NS 1000000000ull
#define MRDP_WAIT_SCAN_MAX 16 /* AF_PACKET sockets looked at per interface */
/* Steering (mrdp_steer.c): QPN slots of 2^16 QPNs, slot 0 unused. */
#define MRDP_STEER_SLOT_BITS 16
#define MRDP_STEER_SLOTS (1u << (24 - MRDP_STEER_SLOT_BITS))
#define MRDP_STEER_PROG_MAX 32
#define MRDP_SILENCE_PROG_MAX 32

extern int mrdp_debug;
#define MRDP_LOG(...)                                          \
	do {                                                   \
		if (mrdp_debug)                                \
			fprintf(stderr, "mrdp: " __VA_ARGS__); \
	} while (0)

struct mrdp_pkt;

struct mrdp_plane {
	uint16_t port_id;
	int svc; /* reached through the datapath service (mrdp_svc_port.c) */
	/* A net_mrpkt port (mrdp_pkt.c) instead of an ethdev: port_id is
	 * then not a port. */
	struct mrdp_pkt *pkt;
	int open; /* probed (needs hot-unplug on close) */
	int started;
	char vdev_name[64];  /* name given to rte_dev_probe */
	int pci;	     /* a PCI device (vdev_name = its address) */
	int tx_csum_offload; /* port computes IPv4 + UDP checksums */
	int rx_csum_offload; /* port reports checksum status */
	unsigned nstage;     /* frames built and not yet sent */
	struct rte_mbuf *stage[MRDP_BURST];
	/* Transmit hold (mrdp_io.c, dp_tx_hold_us): the staged frames may
	 * all wait, until hold_until at most, for later ones to share their
	 * system call; stage_urgent: one may not (sent this round). */
	uint64_t hold_until;
	int stage_urgent;
	unsigned nbacklog; /* frames the port refused earlier */
	struct rte_mbuf *backlog[MRDP_BACKLOG];
	struct mrdp_plane_counters c;
	/* The kernel interface the port attaches to (0: none the kernel
	 * sees; the plane's peers are on-link), for its routes. */
	int ifindex;
	/* The kernel socket a sleeping progress thread polls for frames
	 * (-1: none); see mrdp_wait.c. */
	int wait_fd;
	/* The tcx link that keeps the kernel stack off our frames on this
	 * plane's interface (mrdp_silence.c; -1: none). */
	int silence_fd;
	int wait_ifindex;
	int wait_xsk; /* looking for an AF_XDP socket, not AF_PACKET */
	unsigned wait_nbefore;
	int wait_before[MRDP_WAIT_SCAN_MAX];
};

struct mrdp_dev {
	struct mr_devconf conf;
	struct mr_knobs knobs; /* in force (mrdp_config.knobs) */
	struct mrdp_pcap *pcap; /* capture switch on, else NULL */
	struct mrdp_ops ops;
	struct mrdp_local me;
	char stats_path[PATH_MAX];
	char pcap_path[PATH_MAX];
	int has_stats;
	/* CLOCK_REALTIME at open, ns: the file's "started_ns", which tells
	 * metaroce-ctl stats --last a previous run from this one. */
	uint64_t stats_started_ns;
	int udp_csum;

	unsigned nplanes;
	struct mrdp_plane plane[MR_DEVCONF_MAX_PORTS];
	struct rte_mempool *pool;
	size_t max_pkt;	  /* largest engine packet (BTH..ICRC) */
	size_t max_frame; /* MRDP_HDR_LEN + max_pkt */
	uint8_t *scratch; /* a multi-segment frame made contiguous */

	pthread_mutex_t lock;
	uint64_t last_now; /* latest `now` given to the engine (lock held) */
	struct mrdp_neigh_table *neigh;
	/* Next hops (mrdp_nexthop.c): a route table per plane, the kernel
	 * view (NULL when no plane has a kernel interface). */
	struct mrdp_route_table *rt;
	struct mrdp_route6_table *rt6; /* IPv6 (MR-ADDR-4) */
	struct mrdp_route_nl *rnl;
	/* IPv6 address ids (mrdp_addr.h): the book (the provider's, or
	 * own_addrs when none was given) and our two addresses' ids. */
	struct mrdp_addrs *addrs;
	struct mrdp_addrs *own_addrs;
	uint32_t ll6_id, ip6_id;
	uint64_t route_check_ns;
	uint64_t route_reloads;
	uint64_t loopback_pkts;
	uint64_t progress_rounds;
	uint64_t inline_rounds;
	uint64_t sleeps;
	/* The progress thread's own (no lock): what woke it (MRDP_WOKE_*),
	 * its spin rounds, the spins its rules cut (mrdp_dev.c). */
	uint64_t wake_frame, wake_kick, wake_timer;
	uint64_t spins, spin_cut_memory, spin_cut_crowd;
	/* Zero-copy transmit (mrdp_io.c): decided on the first round, per
	 * plane in plane[i].c.zerocopy; the shared info of every mbuf
	 * attached to application memory (a struct
	 * rte_mbuf_ext_shared_info, kept opaque here). */
	int zc_ready;
	int zc_any;
	uint64_t zc_outlived;
	_Alignas(16) unsigned char zc_shinfo[32];

	/* Steering: the flock()ed slot file (-1: none), the slot and the
	 * QPNs it holds (qpn_count 0: no steering). */
	int steer_fd;
	unsigned steer_slot;
	uint32_t qpn_base, qpn_count;
	/* The datapath service's connection (service ports), else NULL. */
	struct mrdp_svc *svc;

	/* Dedicated-core mode (mrdp_busy.c): the poller's CPU, -1: off;
	 * application threads waiting for the lock. */
	int busy_core;
	atomic_int lock_wanted;

	pthread_t thread;
	int has_thread;
	atomic_int stop;
	atomic_int sleeping;
	atomic_int kicked;
	atomic_int rt_class; /* the progress thread runs at SCHED_FIFO */
	int no_inline; /* knob dp_inline=no: application threads run no
			* rounds while the thread is real-time */
	/* The progress thread naps because an application thread is
	 * polling (it wakes within MRDP_INLINE_NAP_NS by itself). */
	atomic_int napping;
	int kick_fd; /* eventfd: mrdp_kick() wakes a thread in mrdp_wait() */
	/* timerfd in every sleep's poll set: a thread that made the engine's
	 * next deadline earlier than the sleeper's wake moves the wake
	 * (mrdp_wait_rearm) instead of waking it now (mrdp_dev.c). */
	int timer_fd;
	/* When the sleeping (or about to sleep) progress thread wakes by
	 * itself, CLOCK_MONOTONIC ns; 0 while it is awake. */
	_Atomic uint64_t sleep_until;
	/* A polling round (mrdp_progress) pushed a completion and left its
	 * transmit to the next round (mrdp_io.c); completed: the engine's
	 * completion callback ran in this round (mrdp_completed). Lock. */
	atomic_int tx_deferred; /* written under the lock; read as a hint */
	int round_completed;
	int round_poll;
	uint64_t tx_defers;
	/* The answer hold (mrdp_dev.c answer_round): a placement in this
	 * round counts as a completion for the deferral (mrdp_placed; lock
	 * held); when the last deferral began (CLOCK_MONOTONIC ns); the
	 * last hold ended with nobody's answer (no hold until the next
	 * post); when the application last posted. */
	int round_place_defer;
	_Atomic uint64_t defer_ns;
	atomic_int hold_unanswered;
	_Atomic uint64_t last_post_ns;
	uint64_t hold_first, hold_stamp; /* the thread's: a chain of holds
					  * began, the last one began */
	uint64_t answer_holds, answer_expired; /* the thread's own */
	uint64_t next_stats_ns;
	/* When an application thread last called mrdp_progress(). */
	_Atomic uint64_t last_inline_ns;
	/* When an application thread last posted or polled (any verb that
	 * reaches the datapath), and whether its last word was an armed CQ
	 * (it blocks on a completion channel next): the spin rule
	 * (mrdp_dev.c spin_allowed). */
	_Atomic uint64_t last_verb_ns;
	atomic_int chan_armed;
	/* The application's last word was a poll of an unarmed CQ (not a
	 * completion, a post or an arm): it is in a poll_cq loop
	 * (mrdp_dev.c app_polls). */
	atomic_int app_polling;
	/* The lease (mrdp_wait.c): an epoll fd with the planes' sockets that
	 * the thread sleeps on (-1: none, it sleeps on the sockets); leased:
	 * an application waits in poll_cq and the sockets' events are off in
	 * it; lease_mu orders the changes. */
	int lease_fd;
	atomic_int leased;
	/* The application's last word was an empty poll of a CQ of sends
	 * that leases (mrdp_polled(-1)): the lease, not a nap, steps the
	 * thread aside (app_polls). */
	atomic_int app_waits;
	/* The last change of the lease was a poll's completion ending it. */
	atomic_int lease_done;
	/* When the application's polls started finding nothing (0: the
	 * last found a completion). */
	_Atomic uint64_t empty_since;
	uint64_t lease_sleeps, lease_expired; /* the thread's own */
	pthread_mutex_t lease_mu;

	/* When a round (any thread) last had work: inline progress keeps the
	 * progress thread out of its long idle sleeps too. */
	_Atomic uint64_t last_work_ns;
};

/* mrdp_eal.c: start EAL once per process (0 or -errno, reason in err). */
/* Start EAL once per process; its process-wide knobs (dp_mem_mb,
 * dp_eal_log, dp_debug) come from k, the first device's. */
int mrdp_eal_start(const struct mr_devconf *c, const struct mr_knobs *k,
		   char *err, size_t errlen);
/* EAL's command line for the first device record c (its PCI ports, if
 * any, as an allow-list; else --no-pci). */
#define MRDP_EAL_ARGS (16 + 2 * MR_DEVCONF_MAX_PORTS)
struct mrdp_eal_argv {
	int argc;
	char *argv[MRDP_EAL_ARGS + 1]; /* NULL-terminated */
	char buf[MRDP_EAL_ARGS][2 * MR_DEVCONF_ARGS_MAX];
};
int mrdp_eal_argv_build(struct mrdp_eal_argv *a, const struct mr_devconf *c,
			long mem_mb, long log_level, const char *cpus,
			const char *file_prefix, char *err, size_t errlen);
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
/* Discard every frame waiting in the planes' receive queues (those that
 * arrived before the steering filter was attached). Ports started. */
void mrdp_io_drain(struct mrdp_dev *d);
/* Free every mbuf the device still holds (staged, backlog, neighbour
 * queues). Lock held, ports stopped. */
void mrdp_io_release(struct mrdp_dev *d);
/* Start resolving ip now (send the first ARP request). Lock held. */
int mrdp_io_resolve(struct mrdp_dev *d, uint32_t ip, uint8_t mac[6],
		    uint64_t now);

/* Learn that ip is at mac (create: add it if absent), and send what
 * waited for it. Lock held. */
void mrdp_io_learn(struct mrdp_dev *d, uint32_t ip, const uint8_t mac[6],
		   int create, uint64_t now);
/* Value of key=... in a port's devargs string (after the name), or NULL. */
const char *mrdp_devarg(const char *args, const char *key, char *val,
			size_t cap);

/* mrdp_warm.c: touch every page the socket fd has mapped (a port's
 * rings); the pages touched, or -errno. */
long mrdp_warm_mapping(int fd);

/* mrdp_nexthop.c: the next hop of each plane (MR-ROUTE-*). Lock held. */
struct mrdp_route_nl;
/* After the ports are open: their interfaces, routes, kernel view. */
int mrdp_nexthop_init(struct mrdp_dev *d, char *err, size_t errlen);
void mrdp_nexthop_fini(struct mrdp_dev *d);
/* The next hop on plane toward dst: 0 and *nh, or -ENETUNREACH. */
int mrdp_nexthop_of(const struct mrdp_dev *d, unsigned plane, uint32_t dst,
		    uint32_t *nh);
/* Is ip on-link on plane (its own next hop)? */
int mrdp_nexthop_onlink(const struct mrdp_dev *d, unsigned plane, uint32_t ip);
/* The kernel's MAC of next hop nh on plane: 1 and mac, or 0. */
int mrdp_nexthop_kernel_mac(struct mrdp_dev *d, unsigned plane, uint32_t nh,
			    uint8_t mac[6]);
/* Follow kernel changes (at most every 100 ms; cheap otherwise). */
void mrdp_nexthop_poll(struct mrdp_dev *d, uint64_t now);

/* mrdp_wait.c: sleeping until a frame, a kick or a timeout. Around
 * rte_dev_probe() of a port (ifname: its interface, NULL if none), or
 * with xsk around an AF_XDP port's RX queue setup: find the socket the
 * port opened. */
void mrdp_wait_probe_begin(struct mrdp_plane *p, const char *ifname, int xsk);
void mrdp_wait_probe_end(struct mrdp_plane *p);
/* The kick eventfd: 0 or -errno. */
int mrdp_wait_init(struct mrdp_dev *d);
void mrdp_wait_fini(struct mrdp_dev *d);
/* 1 if every plane has a socket to sleep on. */
int mrdp_wait_on_frames(const struct mrdp_dev *d);
/* The lease's epoll fd, after the ports are open (none on failure or
 * with a service port); turn it on (1: frames do not wake the thread) or
 * off; returns 1 if this call changed it. */
void mrdp_wait_lease_init(struct mrdp_dev *d);
int mrdp_wait_lease(struct mrdp_dev *d, int on);
/* mrdp_io.c: a port's backlog or a deferred transmit waits for the next
 * round (lock held). */
int mrdp_io_pending(const struct mrdp_dev *d);
/* Wake a thread in mrdp_wait(). */
void mrdp_wait_wake(struct mrdp_dev *d);
/* Make a thread in mrdp_wait() wake at the latest at CLOCK_MONOTONIC
 * at_ns (a timer in its poll set: no wakeup before then). */
void mrdp_wait_rearm(struct mrdp_dev *d, uint64_t at_ns);
/* Sleep up to ns, until a kick or (frames) a frame on any plane. */
/* What ended it: MRDP_WOKE_* bits (0: the timeout). */
#define MRDP_WOKE_KICK 1
#define MRDP_WOKE_TIMER 2
#define MRDP_WOKE_FRAME 4
int mrdp_wait(struct mrdp_dev *d, uint64_t ns, int frames);
/* The runnable threads of the whole machine (this one included), for
 * the spin's spare-CPU rule: the fd to read them from (-1: none), and
 * the count (-1: unreadable). */
int mrdp_wait_load_open(void);
int mrdp_wait_runnable(int fd);
/* mrdp_svc_port.c: a thread is about to sleep on plane idx (a service
 * port): ask the daemon for a wake-up; 0 if a frame is already there.
 * The plane woke a sleeper: drain its eventfd. */
int mrdp_svc_arm(struct mrdp_dev *d, unsigned idx);
void mrdp_svc_woken(struct mrdp_dev *d, unsigned idx);

/* mrdp_steer.c: claim a QPN slot in dir (want 0: the first free one)
 * and filter every af_packet plane's socket to it; 0 or -errno with the
 * reason in err. The classic BPF program itself (f has room for
 * MRDP_STEER_PROG_MAX instructions; QPNs lo <= dqpn < hi), for tests. */
int mrdp_steer_open(struct mrdp_dev *d, const char *dir, unsigned want,
		    char *err, size_t errlen);
void mrdp_steer_close(struct mrdp_dev *d);
unsigned mrdp_steer_program(struct sock_filter *f, uint16_t udp_port,
			    uint32_t lo, uint32_t hi);

/* mrdp_silence.c: a tcx ingress program on every af_packet plane's
 * interface that drops UDP to the device's port after our socket took it,
 * so the kernel's IP stack neither processes nor answers our frames.
 * Returns the planes silenced (0: none could be, nothing changed) or
 * -errno when the program could not be loaded; the open goes on either
 * way. The eBPF program itself (f has room for MRDP_SILENCE_PROG_MAX
 * instructions), for tests. */
int mrdp_silence_open(struct mrdp_dev *d);
void mrdp_silence_close(struct mrdp_dev *d);
unsigned mrdp_silence_program(struct bpf_insn *f, uint16_t udp_port);

/* mrdp_dev.c: the engine's `now`, never going back. Lock held. */
uint64_t mrdp_locked_now(struct mrdp_dev *d);

/* mrdp_busy.c: read METAROCE_DP_CORE (0 or -EINVAL with the reason), and
 * the dedicated poller's thread. */
int mrdp_busy_config(struct mrdp_dev *d, char *err, size_t errlen);
void *mrdp_busy_main(void *arg);

/* mrdp_stats.c: where the counters file goes, and when the device
 * opened (at open); write it (atomically). */
void mrdp_stats_open(struct mrdp_dev *d, const char *path);
int mrdp_stats_write(struct mrdp_dev *d);
void mrdp_snapshot(struct mrdp_dev *d, struct mrdp_counters *out);

/* What a device zeroed by calloc() needs before its ports open, for
 * mrdp_open() and for metaroced's device of frames only: the frame sizes
 * of d->conf.mtu and every descriptor "none" (-1), so that closing a
 * half-made device closes nothing it does not own. */
void mrdp_dev_blank(struct mrdp_dev *d);

#endif /* MRDP_INT_H */
