/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The DPDK datapath of a MetaRoCE device (lib/dp): the public API the
 * provider (and tests) call. No DPDK header is needed to use it.
 *
 * One struct mrdp_dev is one opened device record (mr_devconf.h): every
 * `port=` of the record is one plane, opened as a DPDK port with one RX and
 * one TX queue. The datapath encapsulates the packets of a sans-IO engine
 * (lib/core's struct mr_ep, or anything with the same four entry points)
 * in Ethernet / IPv4 or IPv6 / UDP, answers and resolves ARP and IPv6
 * neighbour discovery, and runs a progress
 * thread that polls every plane, feeds received packets to the engine,
 * drains the engine's transmit queue and runs its timers.
 *
 * Addresses (docs/spec/routing.md MR-ADDR-*): the engine's `dest` (tx
 * meta, mr_qp_attr.dest) and `src` (rx meta, mr_cqe.ud_src) ids are IPv4
 * addresses in host byte order, or ids of IPv6 addresses from the address
 * book (mrdp_addr.h; lib/devconf/mr_gid.h: MR_GID_ID6_BASE..); 0 is never
 * a valid id. The provider maps a GID ::ffff:a.b.c.d to the id
 * (a << 24 | b << 16 | c << 8 | d) and an IPv6 GID to its book id. A
 * packet to IPv6 peer goes from our address of the same kind: link-local
 * from link-local, global from global (MR-ADDR-2). IPv6 packets carry the
 * mandatory UDP checksum; neighbours on IPv6 are resolved with ND. A
 * packet to one of the device's own addresses goes straight back into
 * its receive path (loopback), without a port.
 *
 * Routing (docs/spec/routing.md): the device's one address is its source
 * on every plane (MR-ROUTE-1); each plane sends a peer's packets to the
 * next hop its route table names (the kernel's routes through the port's
 * interface, read with libnl-route and followed; on-link for ports the
 * kernel does not see), resolved by the kernel's neighbour table or our
 * own ARP / ND on that plane (MR-ROUTE-2..5, MR-ADDR-4); entries expire
 * and are re-verified after 30 s (MR-ROUTE-8; counted in arp_* and
 * neigh_* like ARP).
 *
 * Encapsulation: UDP destination port = the record's udp_port; UDP source
 * port = tx meta `entropy` (0 is replaced by 0xc000 | path_id, since a UDP
 * source port of 0 is legal but defeats ECMP); plane = tx meta `plane`
 * modulo the number of planes; IPv4 TTL 64, DF set, ECN ECT(0); IPv6 hop
 * limit 64, flow label = UDP source port, ECT(0). Checksums: IPv4 header
 * always, UDP over the pseudo-header and payload (offloaded where the
 * port can; software otherwise). Environment variable
 * METAROCE_DP_UDP_CSUM=0 sends UDP checksum 0 (legal in IPv4) to save the
 * per-byte cost; over IPv6 the checksum is always sent (MR-ENC-12), so a
 * frame to an IPv6 peer on a port without checksum offload is copied, not
 * zero-copy. Receivers verify a nonzero UDP checksum always and refuse a
 * zero one over IPv6.
 *
 * Threading and locking: every call into the engine (the ops below) is
 * made with the device lock held, and the caller of mr_qp_post_send() etc.
 * must hold it too (mrdp_lock/mrdp_unlock): the lock serialises all engine
 * calls and the one TX queue of each plane. The progress thread and
 * mrdp_progress() take it themselves.
 *
 * Ports: net_af_packet (iface=; framesz/blocksz/framecnt are added for
 * the record's mtu when absent: slots of the frame rounded up to 256
 * bytes, 8 MiB of payload per direction (2,048 frames at mtu 4096, at
 * most 4,096), every page touched once at open (mrdp_warm.c), MAP_LOCKED,
 * so RLIMIT_MEMLOCK must allow about 18 MiB per port; the interface MTU must be
 * at least mtu + 124 (IPv6), else open fails saying so), net_memif (bsize and
 * rsize added: one buffer per frame), net_af_xdp (frames up to 2 KiB:
 * record mtu 1024 at most). PCI NICs are refused: this build links no PCI
 * driver. The record's MAC is the source of every frame and the only
 * unicast destination accepted; af_packet sees every frame of the
 * interface, so it need not equal the interface's MAC (for a real NIC it
 * should).
 *
 * One open of a device per process (-EBUSY otherwise: two af_packet
 * sockets of one process on one interface share a fanout group and would
 * each see half the traffic). Several processes may open the same device
 * in one network namespace. With mrdp_config.steer_dir (the provider's
 * default) each claims a QPN slot and the kernel filters its af_packet
 * sockets to its own QPNs (mrdp_steer.c); without it each receives every
 * frame and its engine drops packets for QPNs it does not own, so QPNs
 * must be unique across those processes.
 *
 * Memory: EAL gets -m 512 MB of ordinary memory (no hugepages),
 * METAROCE_DP_MEM_MB changes it; each device makes a pool of about
 * 2,900 buffers of one frame each.
 *
 * Progress thread: it sleeps at SCHED_FIFO priority 1 where allowed
 * (knob dp_rtprio; 0 turns it off), so a frame's wakeup preempts at once;
 * after a round without work it sleeps until the engine's next
 * deadline, a kick, or (af_packet, af_xdp ports) a frame arriving on the
 * port's socket. It first polls dp_spin_us (200 us) after work in
 * SCHED_OTHER with sched_yield, except while the machine has no spare
 * CPU (dp_spin_spare_cpu: more runnable threads than CPUs plus one),
 * while an application may spin on its memory (a verb within
 * dp_spin_memory_ms, no armed channel) and once a yield gave the CPU
 * away for dp_spin_crowd_us; without real-time priority it
 * sleeps at nice -10. While an application polls its CQ (its last verb
 * an empty poll of an unarmed CQ, within dp_poll_guard_us, or any poll
 * in the last 10 us) the thread stays off the lock, napping 50 us at a
 * time in SCHED_OTHER off its sockets; while it waits in poll_cq for a
 * send's answer (mrdp_polled(-1), the lease) frames do not wake the
 * thread at all, the application's own rounds take them; with dp_inline=no
 * application threads run no rounds at all (mrdp_progress() returns 0)
 * while the thread is real-time. dp_core=N: a dedicated poller on CPU N
 * instead. Counters: wake_frame, wake_kick, wake_timer, spins,
 * spin_cut_memory, spin_cut_crowd.
 * The engine's `now` is read with the device lock held and never goes
 * backwards.
 *
 * Zero-copy transmit: a packet whose payload is at least 1024 bytes and
 * comes from registered memory (ops.tx_zc) goes out as a chain of mbufs:
 * the headers in a pool mbuf, each payload segment in an mbuf attached to
 * the application's memory as an external buffer (its free callback does
 * nothing: the memory is the application's), the ICRC in a last small
 * mbuf. Lifetime rule: such a chain never outlives the rte_eth_tx_burst()
 * that hands it to the port, because the memory may be deregistered or
 * reused as soon as the device lock is dropped; so a frame the port
 * refuses (backlog), a frame waiting for ARP, and a loopback packet are
 * made contiguous (one copy) first. Only ports whose PMD copies multi-
 * segment mbufs on transmit and frees them before tx_burst returns use it:
 * net_af_packet and net_memif in copy mode (both advertise
 * RTE_ETH_TX_OFFLOAD_MULTI_SEGS; memif's zero-copy=yes keeps mbufs, so it
 * copies); net_af_xdp copies only a frame's first segment in DPDK 22.11
 * and so always gets contiguous frames, as do other PMDs. A software UDP
 * checksum (METAROCE_DP_UDP_CSUM=1 without offload) also turns it off.
 * METAROCE_DP_ZEROCOPY=0 turns it off. Counted per plane: tx_zc_pkts,
 * tx_zc_linearized.
 *
 * Errors: negative errno. Logging: METAROCE_DP_DEBUG=1 prints the
 * datapath's decisions to stderr; EAL logs to stderr at level notice
 * (METAROCE_DP_EAL_LOG=<1..8> changes it).
 */
#ifndef MRDP_H
#define MRDP_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_counters.h"
#include "mr_devconf.h"
#include "mrdp_counters.h"
#include "mr_path_info.h"
#include "mrdp_addr.h"

struct mrdp_dev;

/*
 * The engine the datapath drives. Called with the device lock held, from
 * the progress thread or from a thread inside mrdp_progress(). Their
 * signatures are those of mr_ep_rx, mr_ep_tx, mr_ep_next_deadline and
 * mr_ep_handle_expiry with `user` in place of the endpoint (see
 * mrdp_ep_ops() for the ready-made binding).
 */
struct mrdp_ops {
	/* One received MetaRoCE packet, BTH to ICRC inclusive. The buffer is
	 * valid only during the call. The return value is counted (drops
	 * by the engine), not acted on. */
	int (*rx)(void *user, uint64_t now, const uint8_t *pkt, size_t len,
		  const struct mr_rx_meta *meta);
	/* The next packet to send: at most cap bytes (cap is at least
	 * MR_TX_BUF_MIN(record mtu)); fills meta; returns its length, 0 if
	 * nothing is to be sent now. */
	size_t (*tx)(void *user, uint64_t now, uint8_t *buf, size_t cap,
		     struct mr_tx_meta *meta);
	/* tx, with the payload of a large packet left in registered memory
	 * (mr_ep_tx_zc: zc->nseg > 0). Optional (NULL: tx only). The
	 * datapath is done with the segments (the port copied them, or they
	 * were copied into a frame) before it releases the device lock (see
	 * Zero-copy below). */
	size_t (*tx_zc)(void *user, uint64_t now, uint8_t *buf, size_t cap,
			struct mr_tx_meta *meta, struct mr_tx_zc *zc);
	/* When the engine next needs mrdp to call expire (UINT64_MAX:
	 * never). Optional (NULL = never). */
	uint64_t (*next_deadline)(void *user);
	/* Run the engine's timers due at now. Optional. */
	void (*expire)(void *user, uint64_t now);
	/* The engine's counters and the use of each of its paths, for the
	 * stats file (mr_ep_counters, mr_ep_path_counters). Optional (NULL:
	 * the file holds the datapath's counters only). */
	const struct mr_counters *(*counters)(void *user);
	unsigned (*path_counters)(void *user, struct mr_path_counters *out,
				  unsigned max);
	/* The engine's connections and each of their paths, for the stats
	 * file's "conns" (mr_ep_conn_count, mr_ep_conn_info). Optional
	 * (NULL: no "conns"). */
	void (*conn_count)(void *user, unsigned *nconn, unsigned *npaths);
	unsigned (*conn_info)(void *user, struct mr_conn_info *conns,
			      unsigned maxc, struct mr_path_info *paths,
			      unsigned maxp);
	/* The planes whose port refused frames at its last transmit call
	 * (bit k: plane k), once per round before tx
	 * (mr_ep_set_planes_backlogged, MR-MP-12; mrdp_backlog.c).
	 * Optional (NULL: not told). */
	void (*planes_backlogged)(void *user, uint32_t planes);
	void *user;
};

/* The ops that drive a lib/core endpoint (mr_ep_rx, mr_ep_tx,
 * mr_ep_next_deadline, mr_ep_handle_expiry, and its counters). The
 * endpoint must outlive the device; create its QPs and post to them with
 * the device lock held.
 * The endpoint's mtu should be the record's mtu (the transmit buffers are
 * sized for it). */
struct mrdp_ops mrdp_ep_ops(struct mr_ep *ep);

struct mrdp_config {
	const struct mr_devconf *conf; /* copied */
	struct mrdp_ops ops;	       /* copied; user must outlive the dev */
	/* Where the counters are written once per second and at close, as
	 * JSON (replaced atomically by rename of "<stats_path>.tmp", which
	 * is created exclusively and never through a symlink: the
	 * directory may be world-writable). NULL: nowhere. The provider
	 * passes "<ibdev_path>/stats/metaroce.stats.<pid>": one file per
	 * process, in the directory metaroce-ctl link add creates with mode
	 * 1777 so that programs of any user can write theirs. */
	const char *stats_path;
	/* 1: do not start the progress thread; the owner calls
	 * mrdp_progress() itself (tests, single-threaded tools). */
	int no_thread;
	/* The knobs in force (lib/devconf/mr_knobs.h), copied; NULL:
	 * resolved here from conf's record and the environment. */
	const struct mr_knobs *knobs;
	/* Steering (several processes on one device): a directory shared
	 * by the processes that open this device (the provider passes its
	 * stats directory). The device claims a QPN slot there (a file
	 * qpn-slot.N held with flock() while open; steer_slot 1..255 asks
	 * for that slot, 0 for the first free one) and filters its
	 * af_packet sockets to ARP, IPv6 other than UDP, and UDP to the
	 * record's port whose dqpn lies in the slot: the frames of other
	 * processes never reach this one. Its QPs must then take their
	 * QPNs from mrdp_qpn_range(). NULL: no steering (every frame of
	 * the interface arrives; QPNs must be unique by other means). */
	const char *steer_dir;
	unsigned steer_slot;
	/* Where the capture switch (knob dp_pcap_mb) writes every frame
	 * (pcapng, mrdp_pcap.h); NULL: no capture whatever the knob. */
	const char *pcap_path;
	/* The address book the device's IPv6 ids come from (the caller's,
	 * shared with its own GID translation; must outlive the device).
	 * NULL: the device makes its own (tests, tools). */
	struct mrdp_addrs *addrs;
};

/*
 * Open the device: starts DPDK in this process on the first open (no
 * hugepages, no PCI scan unless a port is a PCI address, unique file
 * prefix, the caller's CPU affinity and signal mask kept), opens every
 * port of the record as a plane, and starts the progress thread. Returns
 * 0 and *out, or a negative errno with a one-line reason in err (if errlen
 * > 0): -EINVAL bad record or port arguments, -ENODEV a port could not be
 * probed, -ENOMEM, -EIO DPDK could not be started or configured. On error
 * nothing is left open.
 */
int mrdp_open(const struct mrdp_config *cfg, struct mrdp_dev **out, char *err,
	      size_t errlen);

/* Stop the progress thread, write the counters a last time, release the
 * ports (DPDK itself stays up for later opens; it cannot be restarted in
 * a process). The ops are not called after this returns. */
void mrdp_close(struct mrdp_dev *dev);

/* The device lock (see above). Not recursive. */
void mrdp_lock(struct mrdp_dev *dev);
void mrdp_unlock(struct mrdp_dev *dev);

/*
 * Inline progress from an application thread (poll_cq, post_send): if the
 * device lock is free, one round of receive on every plane, transmit of
 * what the engine has, and due timers; if the lock is busy (the progress
 * thread is at work), returns at once. Returns the number of packets
 * handled (0: nothing, or lock busy). Must not be called with the lock
 * held.
 */
int mrdp_progress(struct mrdp_dev *dev);

/* After posting work (post_send, with the lock released): one inline
 * round, as mrdp_progress() (what can go now goes at once), then a kick
 * for what cannot (pacing, the rest of a long message). Unlike
 * mrdp_progress() it does not mark the caller as polling: the thread
 * stays ready to take the answer. */
void mrdp_posted(struct mrdp_dev *dev);

/* mrdp_progress() for a poll of a completion queue; armed: the CQ is
 * armed for its channel's event (the application checks it before it
 * blocks in ibv_get_cq_event), so the round does not mark the caller as
 * polling and the thread stays on its sockets for the frame that
 * application will wait for. */
int mrdp_progress_cq(struct mrdp_dev *dev, int armed);

/* After mrdp_progress() in a poll of the CQ: got, the completions that
 * poll returned. Nothing (the application waits and polls again): its
 * own rounds receive, and frames stop waking the progress thread (the
 * lease, mrdp_wait.c). A completion ends the lease: the application may
 * spin on its memory next and the thread takes the next frame. */
void mrdp_polled(struct mrdp_dev *dev, int got);
/* got -1: nothing, on a CQ of sends that waits for its one outstanding
 * send's answer (the ACK, a read's response) in an application that
 * spins on its memory next (ib_write_lat): leased as 0, and the thread
 * does not nap meanwhile (mrdp_dev.c app_polls). The provider passes 0
 * for no CQ: a receive CQ's wait is served by the nap (metaroce.h,
 * metaroce_cq_waits). */

/* Wake the progress thread now (new work posted by a thread that will
 * not call mrdp_progress()). Cheap when the thread is awake. */
void mrdp_kick(struct mrdp_dev *dev);

/* The engine's completion callback, lock held: a completion was pushed
 * in the current round. A round run by mrdp_progress() (the application
 * polls its CQ) then returns before its transmit step, once: the caller
 * sees its completion one transmit system call sooner, and what that step
 * would have sent (the ACK) leaves with the next round's, typically the
 * answer the application posts at once (docs/cost-budget.md). */
void mrdp_completed(struct mrdp_dev *dev);

/* The engine's placement callback, lock held: payload was placed in
 * application memory in the current round. A round of the progress
 * thread while the application is in an exchange (it posted within the
 * last millisecond, armed no channel) then leaves its transmit step (the
 * ACK) for up to dp_answer_hold_us, for the answer an application that
 * spins on that memory posts (ib_write_lat): the ACK and the answer
 * share one transmit call and reach the peer together. */
void mrdp_placed(struct mrdp_dev *dev);

/* Run the transmit a polling round deferred (mrdp_completed()), if any,
 * now: before a QP's state changes or it is destroyed. Lock not held. */
void mrdp_settle(struct mrdp_dev *dev);

/* The calling application thread stops polling (it is about to block,
 * e.g. ibv_req_notify_cq before ibv_get_cq_event): the progress thread
 * takes over at once, even from a nap; a thread asleep on its sockets is
 * left asleep (the next frame wakes it). */
void mrdp_handoff(struct mrdp_dev *dev);

/* CLOCK_MONOTONIC in ns: the `now` the datapath passes to the engine. */
uint64_t mrdp_now(void);

/* The device's own IPv4 address (host order), i.e. its own address id. */
uint32_t mrdp_local_ip(const struct mrdp_dev *dev);

/* Is id one of the device's own addresses (IPv4, link-local, global)? */
int mrdp_is_local(const struct mrdp_dev *dev, uint32_t id);
/* The address book of the device (mrdp_config.addrs or its own). */
struct mrdp_addrs *mrdp_dev_addrs(const struct mrdp_dev *dev);

/* The QPNs this process's QPs must use when steering is on
 * (mrdp_config.steer_dir): base .. base + count - 1. -ENOENT without
 * steering. */
int mrdp_qpn_range(const struct mrdp_dev *dev, uint32_t *base,
		   uint32_t *count);

/* A record whose ports are a datapath service's (port=service:SOCKET,
 * utils/metaroced): is its daemon there? 0 (or no service port), or
 * -ENODEV with the reason in err. Opens nothing that stays open (the
 * provider asks at ibv_open_device, so a missing daemon fails the open,
 * not the first QP). */
int mrdp_service_probe(const struct mr_devconf *c, char *err, size_t errlen);

/* Number of planes (ports) of the device. */
unsigned mrdp_num_planes(const struct mrdp_dev *dev);

/* The sum over the planes of each port's link speed, Mb/s (MR-CC-11,
 * mrdp_speed.c); a port that reports none counts dflt. *nread (if not
 * NULL): the ports that reported a speed. */
uint32_t mrdp_link_mbps(const struct mrdp_dev *dev, uint32_t dflt,
			unsigned *nread);

/*
 * Start resolving the next hop of every plane toward a peer now (e.g. when
 * a QP moves to RTR), so the first packet does not wait (MR-ROUTE-3: the
 * next hop is the peer itself where it is on-link, else the gateway of
 * the plane's route). Returns 1 if every plane with a route has its next
 * hop resolved (mac: the first plane's next hop, if non-NULL), 0 if
 * resolution is under way, -ENETUNREACH if no plane has a route to the
 * peer (MR-ROUTE-6), -EINVAL for 0 / multicast / broadcast ids, -ENOSPC if
 * the neighbour table is full. Takes the lock.
 */
int mrdp_resolve(struct mrdp_dev *dev, uint32_t ip, uint8_t mac[6]);

/* Drop reasons (enum mrdp_rx_drop, enum mrdp_tx_drop) and every counter
 * of a plane and of the device: one table each, mrdp_counters.h. */
#define MRDP_CNT_FIELD(name, help) uint64_t name;
#define MRDP_CNT_BY(name, reasons, n, help) uint64_t name[n];
struct mrdp_plane_counters {
	MRDP_PLANE_COUNTERS(MRDP_CNT_FIELD, MRDP_CNT_BY)
};

struct mrdp_counters {
	unsigned nplanes;
	int has_engine; /* ops.counters given: engine, npaths, path valid */
	struct mr_counters engine;
	unsigned npaths;
	struct mr_path_counters path[MR_MAX_PATHS];
	struct mrdp_plane_counters plane[MR_DEVCONF_MAX_PORTS];
	MRDP_DEV_COUNTERS(MRDP_CNT_FIELD)
};
#undef MRDP_CNT_FIELD
#undef MRDP_CNT_BY

/* A snapshot of the counters. Takes the lock. */
void mrdp_get_counters(struct mrdp_dev *dev, struct mrdp_counters *out);

/* Write counters as one JSON object and a newline to buf (NUL-terminated),
 * every name from its table (mrdp_counters.h, mr_counters.h, mr_core.h's
 * MR_PATH_COUNTERS):
 *   {"device":"mr0","pid":1234,<MRDP_DEV_COUNTERS>,
 *    "planes":[{"plane":0,<MRDP_PLANE_COUNTERS>, "rx_drop":{"short":..,
 *    ...},"tx_drop":{"no_buffer":..,...}}],
 *    "engine":{<MR_COUNTERS: "tx_pkts":..,...>},
 *    "paths":[{"path":0,"plane":0,<MR_PATH_COUNTERS>}]}
 * ("engine" and "paths" only with has_engine; "pid" is the writer's
 * process id). This is the content of the stats file, which also holds
 * "conns" (mrdp_conns.h). Returns the length, or -ENOSPC. */
int mrdp_counters_json(const struct mrdp_counters *c, const char *name,
		       char *buf, size_t cap);

/* Names of the drop reasons, as used in the JSON ("short", ...). */
const char *mrdp_rx_drop_name(enum mrdp_rx_drop r);
const char *mrdp_tx_drop_name(enum mrdp_tx_drop r);

#endif /* MRDP_H */
