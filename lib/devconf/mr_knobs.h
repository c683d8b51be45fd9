/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Every tuning knob of MetaRoCE, one row each (MR_KNOBS below), and how
 * its value in force is found:
 *
 *   1. the default of its row,
 *   2. the device's configuration: `opt.<name>=<value>` lines of the
 *      device record (metaroce-ctl link add/set NAME --opt name=value),
 *   3. the environment: METAROCE_<NAME> (upper case), for experiments.
 *
 * Each later source overrides the earlier ones. A value out of its row's
 * range, or a name no row has, is one error (never silently ignored).
 * The provider resolves the knobs once, when a device's engine opens, and
 * hands them to the datapath (struct mrdp_config.knobs).
 *
 * To add a knob: one X() row here (the README's knob table must list it:
 * tests/cli/test_knobs.sh checks), then read it where it applies with
 * mr_knob_get(k, MR_KNOB_<ID>). Nothing else: parsing, range checks,
 * `--opt`, `link show -v` and the environment come from the row.
 *
 * Who calls: any thread; the functions keep no state.
 */
#ifndef MR_KNOBS_H
#define MR_KNOBS_H

#include <stddef.h>
#include <stdint.h>

enum mr_knob_type {
	MR_KNOB_UINT,	/* decimal, min..max */
	MR_KNOB_INT,	/* decimal with sign, min..max */
	MR_KNOB_BOOL,	/* 0/1, no/yes, off/on, false/true */
	MR_KNOB_CHOICE, /* one of the row's names "a|b|c"; the value is
			 * its index, min 0, max the last index */
};

/* Row flags. */
#define MR_KNOB_F_ZERO_OFF 1u /* 0 (= off) is accepted besides min..max */
#define MR_KNOB_F_PROCESS                                \
	2u /* process-wide: the first device opened in a \
	    * process sets it (DPDK's EAL, logging) */

/* The most paths a connection has (lib/core MR_MAX_PATHS,
 * checked where the core is at hand, providers/metaroce/engine.c). */
#define MR_KNOBS_PATHS_MAX 64

/*
 * X(ID, name, type, default, min, max, flags, layer, choices, help)
 *   layer: "core" (the protocol core, passed by the provider),
 *          "provider" (the verbs provider), "dp" (the DPDK datapath).
 *   choices: NULL, or for MR_KNOB_CHOICE the names "a|b|c" (default and
 *          values are indices; tests/unit/test_knobs.c checks max).
 */
#define MR_KNOBS(X)                                                            \
	X(PATHS, "paths", MR_KNOB_UINT, 4, 1, MR_KNOBS_PATHS_MAX, 0, "core",   \
	  NULL,                                                                \
	  "paths (UDP source ports) per connection, at least one per "         \
	  "plane; unset: 4 per plane (MR-POL-1)")                              \
	X(MODE, "mode", MR_KNOB_CHOICE, 0, 0, 1, 0, "core", "metaroce|gbn",    \
	  "reliability mode: multipath selective repeat, or gbn (RoCEv2's "    \
	  "go-back-N on one path, the baseline; MR-POL-1)")                    \
	X(CC, "cc", MR_KNOB_CHOICE, 0, 0, 4, 0, "core",                        \
	  "auto|metaroce|metaroce-nohint|dcqcn|fixed",                         \
	  "congestion control (auto: metaroce, dcqcn in gbn mode)")            \
	X(PATHSEL, "pathsel", MR_KNOB_CHOICE, 0, 0, 2, 0, "core",              \
	  "auto|spray|single",                                                 \
	  "path selection (auto: spray, single in gbn mode)")                  \
	X(PATH_RUN, "path_run", MR_KNOB_UINT, 16, 1, 64, 0, "core", NULL,      \
	  "packets a path sends in a row before spray passes the turn "        \
	  "(MR-MP-3; a net_mrpkt port sends a run as one GSO super-frame)")    \
	X(MIN_RTO_US, "min_rto_us", MR_KNOB_UINT, 20000, 1, 10000000, 0,       \
	  "core", NULL, "floor of the retransmission timeout, us")             \
	X(BASE_RTT_US, "base_rtt_us", MR_KNOB_UINT, 1000, 1, 1000000, 0,       \
	  "core", NULL,                                                        \
	  "round-trip time the controller assumes, us (a software "            \
	  "datapath's, not a NIC's)")                                          \
	X(LINK_MBPS, "link_mbps", MR_KNOB_UINT, 0, 0, 1000000, 0, "core",      \
	  NULL,                                                                \
	  "rate of each plane's port, Mb/s (0: read from the port, 100000 "    \
	  "where it reports none; MR-CC-11)")                                  \
	X(PACE_QUANTUM, "pace_quantum", MR_KNOB_UINT, 262144, 1, 67108864, 0,  \
	  "core", NULL,                                                        \
	  "pacing credit a round may send at once, bytes (MR-CC-4)")           \
	X(ACK_EVERY, "ack_every", MR_KNOB_UINT, 16, 1, 256, 0, "core", NULL,   \
	  "the responder ACKs after this many packets")                        \
	X(ACK_DELAY_US, "ack_delay_us", MR_KNOB_UINT, 20, 1, 1000000, 0,       \
	  "core", NULL,                                                        \
	  "... or this long after the first unacknowledged one, us")           \
	X(ACK_REQ_DELAY_US, "ack_req_delay_us", MR_KNOB_UINT, 0, 1, 1000,     \
	  MR_KNOB_F_ZERO_OFF, "core", NULL,                                     \
	  "a message's ACK request is answered within this long, so one ACK " \
	  "covers the messages behind it (at most ack_delay_us; 0: at once, " \
	  "MR-RSP-12)")                                                        \
	X(FIRST_PKT_BYTES, "first_pkt_bytes", MR_KNOB_UINT, 1024, 64, 4096,     \
	  MR_KNOB_F_ZERO_OFF, "core", NULL,                                     \
	  "payload bytes of a connection's packets until its first ACK "      \
	  "brings the receiver's rate hint (0: MTU-sized; MR-CC-16)")          \
	X(FIRST_PKT_STARTS, "first_pkt_starts", MR_KNOB_UINT, 4, 1, 65535,      \
	  MR_KNOB_F_ZERO_OFF, "core", NULL,                                     \
	  "first_pkt_bytes only while the endpoint started at most this "       \
	  "many connections in the last 2-4 base RTTs (0: always; MR-CC-16)")   \
	X(CC_START, "cc_start", MR_KNOB_CHOICE, 1, 0, 1, 0, "core",             \
	  "one|slots",                                                          \
	  "a connection's start: one packet, then the first hint (MR-CC-5), "   \
	  "or also the receiver's first ACKs in slots a packet apart, the "     \
	  "first hint's window without slack, a newcomer greedy one more "      \
	  "epoch and the drain on recent samples (MR-CC-17)")                   \
	X(DP_TX_HOLD_US, "dp_tx_hold_us", MR_KNOB_UINT, 10, 1, 1000,          \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "small frames of a connection with others in flight wait this long " \
	  "for more to share one transmit call (0: off)")                      \
	X(DP_RX_HOLD_US, "dp_rx_hold_us", MR_KNOB_UINT, 500, 10, 10000,       \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "a net_mrpkt rx=frame port receiving a one-way stream is woken "    \
	  "once per this long for all its frames, not per frame (us; "        \
	  "0: per frame)")                                                     \
	X(DP_ANSWER_HOLD_US, "dp_answer_hold_us", MR_KNOB_UINT, 30, 1, 1000,   \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "the progress thread's round that placed data for an application "  \
	  "in an exchange leaves its ACK up to this long for the answer to "   \
	  "share one transmit call (0: off)")                                  \
	X(DEBUG, "debug", MR_KNOB_BOOL, 0, 0, 1, MR_KNOB_F_PROCESS,            \
	  "provider", NULL, "the provider's debug log on stderr")              \
	X(ENGINE_STATS, "engine_stats", MR_KNOB_BOOL, 0, 0, 1, 0, "provider",  \
	  NULL, "the engine's nonzero counters on stderr at close")            \
	X(DP_SPIN_US, "dp_spin_us", MR_KNOB_UINT, 200, 0, 1000000, 0, "dp",    \
	  NULL, "the progress thread polls this long after its last work, us") \
	X(DP_SPIN_SPARE_CPU, "dp_spin_spare_cpu", MR_KNOB_BOOL, 1, 0, 1, 0,    \
	  "dp", NULL,                                                          \
	  "the spin only while the machine has no more runnable threads "      \
	  "than CPUs, plus one (it takes no CPU from anyone)")                 \
	X(DP_SPIN_MEMORY_MS, "dp_spin_memory_ms", MR_KNOB_UINT, 1000, 1,       \
	  60000, MR_KNOB_F_ZERO_OFF, "dp", NULL,                               \
	  "no spin while an application called a verb this recently and "     \
	  "armed no channel (it may spin on its memory), ms (0: off)")       \
	X(DP_SPIN_CROWD_US, "dp_spin_crowd_us", MR_KNOB_UINT, 50, 1, 100000,   \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "the spin ends, and none begins for 100 ms, when a sched_yield "     \
	  "gave the CPU away this long, us (0: off)")                          \
	X(DP_POLL_GUARD_US, "dp_poll_guard_us", MR_KNOB_UINT, 200, 1, 100000,  \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "an application whose last verb was an empty poll_cq counts as "     \
	  "polling this long: the thread naps off its sockets (us; 0: 10 us " \
	  "after any poll)")                                                   \
	X(DP_SLICE_US, "dp_slice_us", MR_KNOB_UINT, 0, 100, 100000,            \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "scheduler slice asked for the progress thread, us (0: off)")        \
	X(DP_NICE, "dp_nice", MR_KNOB_INT, -10, -20, 19, 0, "dp", NULL,        \
	  "nice value of the sleeping progress thread (when allowed)")         \
	X(DP_RTPRIO, "dp_rtprio", MR_KNOB_UINT, 1, 1, 99, MR_KNOB_F_ZERO_OFF,  \
	  "dp", NULL,                                                          \
	  "SCHED_FIFO priority of the progress thread where allowed; 0: "      \
	  "nice and spin instead")                                             \
	X(DP_CORE, "dp_core", MR_KNOB_INT, -1, -1, 1023, 0, "dp", NULL,        \
	  "dedicated-core mode: the progress thread polls on this CPU, "       \
	  "never sleeping (-1: off)")                                          \
	X(DP_CPU, "dp_cpu", MR_KNOB_INT, -1, -1, 1023, 0, "dp", NULL,          \
	  "the progress thread runs on this CPU only, away from the "          \
	  "application's (-1: wherever the application may)")                 \
	X(DP_STEER, "dp_steer", MR_KNOB_BOOL, 1, 0, 1, 0, "dp", NULL,          \
	  "each process's sockets take only its own QPs' frames")              \
	X(DP_SILENCE, "dp_silence", MR_KNOB_BOOL, 1, 0, 1, 0, "dp", NULL,      \
	  "the interface's kernel stack drops UDP to the device's port "      \
	  "after our socket took it (tcx ingress, where permitted)")          \
	X(DP_INLINE, "dp_inline", MR_KNOB_BOOL, 1, 0, 1, 0, "dp", NULL,        \
	  "poll_cq and post_send run rounds inline; no: only the real-time "   \
	  "progress thread does")                                              \
	X(DP_NEIGH_REACH_MS, "dp_neigh_reach_ms", MR_KNOB_UINT, 30000, 100,   \
	  3600000, 0, "dp", NULL,                                              \
	  "a neighbour entry is re-verified this long after its last "        \
	  "confirmation, ms (MR-ROUTE-8)")                                     \
	X(DP_UDP_CSUM, "dp_udp_csum", MR_KNOB_BOOL, 0, 0, 1, 0, "dp", NULL,    \
	  "send UDP checksums (MR-ENC-4: zero by default)")                    \
	X(DP_ZEROCOPY, "dp_zerocopy", MR_KNOB_BOOL, 1, 0, 1, 0, "dp", NULL,    \
	  "send payloads from registered memory where the port allows")        \
	X(DP_MEM_MB, "dp_mem_mb", MR_KNOB_UINT, 512, 64, 65536,                \
	  MR_KNOB_F_PROCESS, "dp", NULL, "memory DPDK's EAL reserves, MB")     \
	X(DP_EAL_LOG, "dp_eal_log", MR_KNOB_UINT, 6, 1, 8, MR_KNOB_F_PROCESS,  \
	  "dp", NULL, "DPDK's log level (1 emergency..8 debug)")               \
	X(DP_PCAP_MB, "dp_pcap_mb", MR_KNOB_UINT, 0, 1, 4096,                  \
	  MR_KNOB_F_ZERO_OFF, "dp", NULL,                                      \
	  "capture every frame to a pcapng file of at most this many MB "      \
	  "(0: off)")                                                          \
	X(DP_DEBUG, "dp_debug", MR_KNOB_BOOL, 0, 0, 1, MR_KNOB_F_PROCESS,      \
	  "dp", NULL, "the datapath's debug log on stderr")

enum mr_knob_id {
#define MR_KNOB_ENUM(id, ...) MR_KNOB_##id,
	MR_KNOBS(MR_KNOB_ENUM)
#undef MR_KNOB_ENUM
		MR_KNOBS_N
};

enum mr_knob_src {
	MR_KNOB_SRC_DEFAULT,
	MR_KNOB_SRC_DEVICE,
	MR_KNOB_SRC_ENV,
};

struct mr_knob_def {
	const char *name; /* as in --opt and the record */
	const char *env;  /* METAROCE_<NAME> */
	enum mr_knob_type type;
	int64_t def, min, max;
	unsigned flags;
	const char *layer;
	const char *choices; /* MR_KNOB_CHOICE: "a|b|c", else NULL */
	const char *help;
};

/* The device configuration's layer: the knobs its record sets. */
struct mr_knob_set {
	uint64_t mask; /* bit i: knob i set */
	int64_t v[MR_KNOBS_N];
};

/* The values in force and where each came from. */
struct mr_knobs {
	int64_t v[MR_KNOBS_N];
	uint8_t src[MR_KNOBS_N]; /* enum mr_knob_src */
};

_Static_assert(MR_KNOBS_N <= 64, "mr_knob_set.mask holds 64 knobs");

/* The table (MR_KNOBS_N rows, in MR_KNOBS order). */
const struct mr_knob_def *mr_knob_defs(void);
/* The row named name (as in --opt), or -1. */
int mr_knob_find(const char *name);
/* Parse a value for knob id. 0, or -1 with one line in err naming the
 * knob and what it accepts. what: where the value came from, for err
 * ("--opt"); NULL: the environment (err names the variable). */
int mr_knob_parse(int id, const char *s, int64_t *v, const char *what,
		  char *err, size_t errlen);
/* "name=value" into set (as --opt and the record give it). 0 or -1 + err
 * (unknown name, bad value). */
int mr_knob_set_parse(struct mr_knob_set *set, const char *nv, const char *what,
		      char *err, size_t errlen);
/* Format a value of knob id ("yes"/"no" for booleans, the name of a
 * choice). */
void mr_knob_format(int id, int64_t v, char *buf, size_t cap);

/* METAROCE_* variables of the environment that are not knobs but are
 * read by the tools and scripts: the runtime and configuration
 * directories, the host's sysfs, the fabric's state (metaroce-fabric),
 * and whole families the scripts and tests use. */
#define MR_KNOBS_OTHER_ENV                                            \
	"METAROCE_RUNDIR", "METAROCE_CONFDIR", "METAROCE_HOST_SYSFS", \
		"METAROCE_FABRIC_DIR"
#define MR_KNOBS_OTHER_ENV_PREFIX \
	"METAROCE_TEST_", "METAROCE_DEMO_", "METAROCE_PKG_"

/* Check env (NULL-terminated "NAME=value" strings, as environ) for a
 * METAROCE_* variable that is neither a knob nor one of the above: 0, or
 * -1 with one line in err naming it and the knob nearest to it (a
 * misspelt knob would otherwise be ignored silently). */
int mr_knobs_check_env(char *const *env, char *err, size_t errlen);

/* Defaults, then set (may be NULL), then the environment. 0, or -1 with
 * one line in err naming the first bad variable (nothing else is
 * reported: fix one, see the next): a value out of range, or a METAROCE_*
 * variable that is no knob (mr_knobs_check_env). */
int mr_knobs_resolve(struct mr_knobs *k, const struct mr_knob_set *set,
		     char *err, size_t errlen);

static inline int64_t mr_knob_get(const struct mr_knobs *k, int id)
{
	return k->v[id];
}

/* "default", "device" or "environment". */
const char *mr_knob_src_name(int src);

#endif /* MR_KNOBS_H */
