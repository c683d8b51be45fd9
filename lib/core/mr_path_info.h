/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Read-only snapshots of the connections of an endpoint and of each of
 * their paths, for tools (metaroce-ctl paths): what the sender of each
 * path knows now (plane, UDP source port, RTTs, what is in flight, ECN
 * marks, losses, the path's state). Counters only grow; the rest is the
 * value at the snapshot.
 *
 * Every field is one row of an X-macro below, from which the struct, the
 * names and the writers (lib/dp/mrdp_conns.c: the stats file's "conns")
 * are made: a new field is one X(...) line here and one assignment in
 * mr_path_info.c. Every value is a uint64_t; a field whose value is one
 * of a set of names (the state) is written by its name.
 *
 * A connection is a QP with paths (RC; not UD, whose datagrams have no
 * per-path state) that has left INIT: RTR, RTS, SQD, SQE or ERR.
 *
 * Threading: none (the caller holds whatever serialises the endpoint:
 * the datapath's device lock).
 */
#ifndef MR_PATH_INFO_H
#define MR_PATH_INFO_H

#include <stdint.h>

#include "mr_core.h"

/* The state of a path as the sender sees it (MR-MP-4, MR-MP-8, MR-PM-*):
 * X(ID, name), the first that applies. */
#define MR_PATH_STATES(X)                                                      \
	X(ACTIVE, "active")	/* carries data on its home plane */           \
	X(BACKOFF, "backoff")	/* its RTO fired, no progress since: probed    \
				 * one packet at a time (MR-MP-4) */           \
	X(SUSPECT, "suspect")	/* silent while others progressed (MR-MP-8) */ \
	X(PROBING, "probing")	/* carries probes only, no data (MR-PM-1) */   \
	X(REMAPPED, "remapped") /* its home plane is down: carries data on     \
				 * another plane (MR-PM-4) */

enum mr_path_state {
#define MR_PS_ENUM(id, name) MR_PATH_##id,
	MR_PATH_STATES(MR_PS_ENUM)
#undef MR_PS_ENUM
		MR_PATH_NSTATES
};

/* X(field, help): one per path. */
#define MR_PATH_INFO_FIELDS(X)                                                \
	X(path, "path id")                                                    \
	X(plane, "plane (device port) the path uses")                         \
	X(home_plane, "plane it was given (path % planes; MR-PM-4)")          \
	X(sport, "UDP source port (the ECMP entropy)")                        \
	X(state, "enum mr_path_state, written by name")                       \
	X(weight, "spraying weight, 0 (no data) to MR_PATHSEL_WEIGHT_FULL")   \
	X(min_rtt_ns, "minimum RTT sampled (0: no sample yet)")               \
	X(srtt_ns, "smoothed RTT (0: no sample yet)")                         \
	X(latest_rtt_ns, "last RTT sample")                                   \
	X(rto_ns, "retransmission timeout in force, backoff included")        \
	X(inflight_pkts, "packets sent and not settled")                      \
	X(inflight_bytes, "their bytes")                                      \
	X(window_pkts, "packets the path may have in flight")                 \
	X(tx_pkts, "packets sent, retransmissions included")                  \
	X(tx_bytes, "their bytes")                                            \
	X(retx_pkts, "retransmissions sent on the path")                      \
	X(acked_pkts, "packets acknowledged")                                 \
	X(lost_pkts, "packets declared lost (SACK hole, time, RTO, suspect, tail)") \
	X(ce_pkts, "acknowledged packets the peer saw CE-marked")             \
	X(rto_events, "retransmission timeouts")                              \
	X(repaths, "times the path got a new UDP source port")                \
	X(ce_frac_1024, "smoothed CE fraction the weight is set from, /1024") \
	X(loss_frac_1024, "smoothed loss fraction, /1024 (MR-PM-7)")          \
	X(rx_pkts, "packets of the peer received on the path")                \
	X(rx_ce, "of which CE-marked")

/* X(field, help): one per connection. */
#define MR_CONN_INFO_FIELDS(X)                                  \
	X(qpn, "our QP number")                                 \
	X(dest_qpn, "the peer's QP number")                     \
	X(dest, "the peer's address id (mr_qp_attr.dest)")      \
	X(qp_state, "enum mr_qp_state")                         \
	X(npaths, "paths of the connection")                    \
	X(planes_down, "planes the path manager marked down")   \
	X(cwnd_bytes, "congestion window")                      \
	X(inflight_bytes, "bytes in flight over all paths")     \
	X(rate_mbps, "pacing rate (0: unpaced)")                \
	X(hint_mbps, "the receiver's last rate hint (0: none)") \
	X(retries, "RTOs since the last progress")              \
	X(tx_pkts, "packets sent")                              \
	X(retx_pkts, "retransmissions")                         \
	X(sack_holes, "packets found lost from a SACK hole")

#define MR_INFO_FIELD(f, help) uint64_t f;
struct mr_path_info {
	MR_PATH_INFO_FIELDS(MR_INFO_FIELD)
};

struct mr_conn_info {
	MR_CONN_INFO_FIELDS(MR_INFO_FIELD)
};
#undef MR_INFO_FIELD

#define MR_INFO_COUNT(f, help) +1
enum {
	MR_PATH_INFO_N = 0 MR_PATH_INFO_FIELDS(MR_INFO_COUNT),
	MR_CONN_INFO_N = 0 MR_CONN_INFO_FIELDS(MR_INFO_COUNT),
};
#undef MR_INFO_COUNT

_Static_assert(sizeof(struct mr_path_info) == MR_PATH_INFO_N * sizeof(uint64_t),
	       "struct mr_path_info is its fields");
_Static_assert(sizeof(struct mr_conn_info) == MR_CONN_INFO_N * sizeof(uint64_t),
	       "struct mr_conn_info is its fields");

/* Field names, in struct order (MR_PATH_INFO_N / MR_CONN_INFO_N). */
extern const char *const mr_path_info_names[MR_PATH_INFO_N];
extern const char *const mr_conn_info_names[MR_CONN_INFO_N];

/* "active", ...; "?" outside the enum. */
const char *mr_path_state_name(uint64_t state);

/* "RTS", ...; "?" outside the enum. */
const char *mr_qp_state_name(uint64_t state);

/* How many connections the endpoint has now and their paths in total
 * (to size the arrays of mr_ep_conn_info). */
void mr_ep_conn_count(const struct mr_ep *ep, unsigned *nconn,
		      unsigned *npaths);

/* Snapshot at most maxc connections into conns[] and their paths, one
 * after the other in connection order, into paths[] (at most maxp; a
 * connection whose paths do not fit is left out). Returns the
 * connections written. */
unsigned mr_ep_conn_info(const struct mr_ep *ep, struct mr_conn_info *conns,
			 unsigned maxc, struct mr_path_info *paths,
			 unsigned maxp);

#endif /* MR_PATH_INFO_H */
