/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Sender side of one path (docs/spec/reliability.md MR-PATH-*, MR-LOSS-*,
 * MR-TMR-*).
 *
 * Assigns per-path sequence numbers (ppsn), keeps a ring of 256 records of
 * sent packets {ppsn, ssn, bytes, sent_at, retx, ctx}, and turns the
 * receiver's SACK block for this path into:
 *   - acked(ssn)  for every packet newly covered by cum_ppsn or a bitmap
 *                 bit;
 *   - lost(ssn)   for every outstanding packet with at least
 *                 reorder_thresh (3) later packets of the same path acked
 *                 (MR-LOSS-1), or one later packet acked and older than
 *                 the time threshold 9/8 x max(srtt, latest_rtt)
 *                 (MR-LOSS-2), or all outstanding packets when the path's
 *                 retransmission timer expires (MR-LOSS-3, MR-TMR-*).
 * Only packets of THIS path count for each other: reordering across paths
 * is never loss (MR-LOSS-4).
 *
 * Every packet is reported exactly once: either acked or lost. Packets
 * are declared lost oldest first (the later-ack count and the age only
 * shrink with ppsn), so a lost record leaves the ring at once and an ACK
 * of its ppsn arriving afterwards (the original did arrive: a spurious
 * retransmission) is ignored here; the receiver's ssn window counts the
 * duplicate. The engine must tolerate acked()/lost() for an ssn it
 * already considers acknowledged (e.g. via AETH cum_ssn, or both an
 * original and its retransmission arriving).
 *
 * In flight: at most min(max_inflight, 256) packets, counted as the span
 * from the oldest unsettled ppsn to the next ppsn (MR-PATH-4), so the
 * receiver's 256-bit SACK always covers every unsettled packet.
 *
 * Time: every entry point takes now (ns). mr_pathtx_next_deadline() says
 * when mr_pathtx_on_timeout() must run next (UINT64_MAX: nothing armed).
 *
 * No allocation: the ring lives in the struct. Threading: none.
 */
#ifndef MR_PATHTX_H
#define MR_PATHTX_H

#include <stdint.h>

#include "mr_wire.h"

#define MR_PATHTX_RING 256 /* = MR_SACK_BITS */

/* Why a packet was declared lost (lost() callback, counters). */
enum mr_pathtx_loss {
	MR_PATHTX_LOSS_REORDER = 0, /* >= reorder_thresh later acked */
	MR_PATHTX_LOSS_TIME = 1,    /* later acked and older than threshold */
	MR_PATHTX_LOSS_RTO = 2,	    /* path retransmission timeout */
	MR_PATHTX_LOSS_FORCED = 3,  /* mr_pathtx_lose_all() (gbn go-back) */
	MR_PATHTX_LOSS_SUSPECT = 4, /* the path went silent (MR-MP-8) */
	MR_PATHTX_LOSS_TAIL = 5,    /* tail-loss probe (MR-TMR-9) */
};

/* Events returned by mr_pathtx_on_timeout() (bit mask). */
enum mr_pathtx_event {
	MR_PATHTX_EV_LOSS_TIMER = 1u << 0, /* time-threshold loss ran */
	MR_PATHTX_EV_RTO = 1u << 1,	   /* the RTO fired (repath, retry) */
	MR_PATHTX_EV_SUSPECT = 1u << 2,	   /* silent while others progress:
					    * repath, no retry (MR-MP-8) */
};

struct mr_pathtx_cb {
	/* A packet was acknowledged on this path. rtt_ns = now - sent_at
	 * for a first transmission, 0 for a retransmission (Karn). The
	 * callbacks must not call mr_pathtx_* on the same path (queue the
	 * work and run it after mr_pathtx_on_sack()/on_timeout() returns). */
	void (*acked)(void *user, uint16_t path_id, uint32_t ssn,
		      uint32_t bytes, uint64_t ctx, uint64_t rtt_ns);
	/* A packet is declared lost (enum mr_pathtx_loss why): the engine
	 * retransmits exactly this ssn, on any path with window. */
	void (*lost)(void *user, uint16_t path_id, uint32_t ssn, uint32_t bytes,
		     uint64_t ctx, int why);
	void *user;
};

struct mr_pathtx_config {
	uint16_t path_id;
	uint32_t init_ppsn;	 /* first ppsn (connection's initial psn) */
	uint32_t max_inflight;	 /* packets, 1..256 (0 = 256) */
	uint32_t reorder_thresh; /* 0 = 3 */
	uint64_t rto_init_ns;	 /* before the first RTT sample (0 = 1 ms) */
	uint64_t rto_min_ns;	 /* floor (0 = 100 us) */
	uint64_t rto_max_ns;	 /* ceiling incl. backoff (0 = 1 s) */
	uint64_t granularity_ns; /* timer granularity G (0 = 1 us) */
};

/* Record states. */
enum mr_pathtx_state {
	MR_PATHTX_FREE = 0,
	MR_PATHTX_OUT = 1,   /* sent, not settled */
	MR_PATHTX_ACKED = 2, /* settled: acknowledged */
	MR_PATHTX_LOST = 3,  /* settled: declared lost */
};

struct mr_pathtx_rec {
	uint32_t ppsn;
	uint32_t ssn;
	uint32_t bytes;
	uint8_t state; /* enum mr_pathtx_state */
	uint8_t retx;  /* earlier transmissions of this ssn (any path) */
	uint8_t late;  /* declared lost by the RTO (1) or a suspicion (2),
			* no ACK seen yet */
	uint64_t sent_at;
	uint64_t ctx; /* engine's cookie, echoed in the callbacks */
};

struct mr_pathtx {
	struct mr_pathtx_config cfg;
	struct mr_pathtx_cb cb;
	uint32_t una;		/* oldest unsettled ppsn (== nxt: none) */
	uint32_t nxt;		/* next ppsn to assign */
	uint32_t out_pkts;	/* records in state OUT */
	uint32_t acked_in_span; /* records in state ACKED in [una, nxt) */
	uint64_t out_bytes;
	uint32_t largest_acked; /* informational; valid when any_acked */
	int any_acked;
	/* RTT estimator (RFC 6298), ns. srtt == 0: no sample yet. */
	uint64_t srtt, rttvar, min_rtt, latest_rtt;
	uint64_t rto; /* current base RTO, before backoff */
	/* 5/4 x the largest RTT a late ACK revealed, decaying by 1/4096 per
	 * RTT sample: the RTO never drops below it (MR-TMR-8). */
	uint64_t rto_floor;
	uint32_t backoff;   /* consecutive RTOs without progress */
	uint64_t rto_start; /* timer reference; armed iff out_pkts > 0 */
	uint64_t loss_time; /* time-threshold deadline, UINT64_MAX: none */
	/* Counters (never reset by the module). */
	uint64_t tx_pkts, tx_bytes, retx_pkts;
	uint64_t acked_pkts, lost_reorder, lost_time, lost_rto, lost_forced;
	uint64_t rto_events;
	uint64_t bad_sacks; /* rejected by mr_pathtx_on_sack */
	/* ACKs of transmissions the RTO had declared lost (MR-TMR-8): the
	 * RTO was spurious, the path is alive. */
	uint64_t late_acked;
	/* ECN (MR-ACK-11): the last cumulative CE count of the peer's block,
	 * CE marks in total, and since the caller last cleared ce_new. */
	uint16_t peer_ce;
	uint32_t ce_new;
	uint64_t ce_pkts;
	uint64_t last_ack_at; /* last SACK that acked something new (ns) */
	/* Send time of the latest-sent packet of this path acknowledged so
	 * far (any transmission, late ones too): what the other paths'
	 * silence is measured against (MR-MP-8). */
	uint64_t acked_sent_at;
	/* How long that packet took, if a first transmission, to the ACK
	 * that settled it, whatever path the ACK came on (an RTT sample
	 * only if its own, MR-MP-7): the path's recent delay, MR-MP-13. */
	uint64_t latest_delay;
	/* Suspect (MR-MP-8), set by the engine at each ACK of progress.
	 * Overtaken: conn_sent_at is the send time of the latest-sent
	 * packet another path had acknowledged, and the path may stay
	 * silent overtake_ns past its oldest outstanding packet once one
	 * sent after it came back. Tail: when the path held the
	 * connection's only outstanding packets (no other can overtake
	 * them), conn_progress_at is the time of that ACK and suspect_ns
	 * the silence allowed (0: none armed). A suspect path carries no
	 * data until an ACK of it returns. */
	uint64_t conn_sent_at, overtake_ns;
	/* The same for the other paths of its plane only: the send time of
	 * the latest-sent packet they had acknowledged, and when one of them
	 * last made progress (0: none). A plane's paths share its queues: a
	 * later packet of the plane back first is a route of its own failing;
	 * a plane whose other paths keep progressing is draining a queue the
	 * path's packets wait in, whatever the other planes' packets do. */
	uint64_t plane_sent_at, plane_progress_at;
	uint64_t conn_progress_at;
	uint64_t suspect_ns;
	uint8_t suspect;
	uint64_t suspect_events, lost_suspect;
	uint64_t lost_tail; /* declared lost by a tail-loss probe (MR-TMR-9) */
	/* Suspicions proved false: a packet one declared lost was ACKed
	 * after all (it was late, not lost: MR-MP-8). suspect_open: the
	 * last suspicion is not proved false yet. */
	uint64_t suspect_false;
	uint8_t suspect_open;
	uint32_t late_lo; /* oldest ppsn that may be a late candidate */
	int any_late;
	struct mr_pathtx_rec ring[MR_PATHTX_RING];
};

/* Packets path t declared lost so far, for every reason. */
static inline uint64_t mr_pathtx_lost(const struct mr_pathtx *t)
{
	return t->lost_reorder + t->lost_time + t->lost_rto + t->lost_forced +
	       t->lost_suspect + t->lost_tail;
}

/* Initialise with cfg (zero fields take the defaults above) and the
 * callbacks (copied; NULL: none). Returns 0 or -MR_EINVAL (NULL cfg,
 * max_inflight > 256, or rto_min > rto_max). */
int mr_pathtx_init(struct mr_pathtx *tx, const struct mr_pathtx_config *cfg,
		   const struct mr_pathtx_cb *cb);

/* Packets this path may still send now (0..max_inflight). */
uint32_t mr_pathtx_space(const struct mr_pathtx *tx);

/* Record the transmission of ssn (bytes on the wire or payload: the unit
 * is the caller's, echoed back) at now. retx = how many times this ssn was
 * sent before (0 for a first transmission; RTT is sampled only then).
 * Returns the ppsn to put in the PTH via *ppsn, and 0; or -MR_EAGAIN if
 * mr_pathtx_space() is 0. Arms the RTO if it was idle. */
int mr_pathtx_send(struct mr_pathtx *tx, uint32_t ssn, uint32_t bytes,
		   unsigned retx, uint64_t ctx, uint64_t now, uint32_t *ppsn);

/* Process this path's SACK block from an ACK received at now. Invokes
 * acked() for newly acknowledged packets (oldest first), then lost() for
 * packets declared lost. A stale block (older cum_ppsn) is harmless.
 * An acknowledgement of a first transmission that the RTO declared lost
 * (still in the ring) is an RTT sample, resets the backoff and counts in
 * late_acked (MR-TMR-8); no callback (it was reported lost already).
 * Returns the number of newly acked packets (>= 0), or -MR_EINVAL if the
 * block is for another path id or -MR_EPROTO if it acknowledges a ppsn
 * never sent (nothing is changed then; counted in bad_sacks).
 * Progress (>= 1 newly acked) resets the backoff and restarts the RTO. */
int mr_pathtx_on_sack(struct mr_pathtx *tx, const struct mr_sack_block *blk,
		      uint64_t now);

/* Flags of mr_pathtx_on_sack_flags(). */
enum mr_pathtx_sack_flag {
	/* The block came in an ACK that travelled on another path: it
	 * settles packets but gives no RTT sample (MR-MP-7). */
	MR_PATHTX_SACK_NO_RTT = 1u << 0,
};

/* mr_pathtx_on_sack() with flags (enum mr_pathtx_sack_flag). It also
 * takes the block's cumulative CE count (MR-ACK-11): the new marks are
 * added to ce_pkts and ce_new. */
int mr_pathtx_on_sack_flags(struct mr_pathtx *tx,
			    const struct mr_sack_block *blk, uint64_t now,
			    unsigned flags);

/* Run the timers due at now: time-threshold loss and the RTO (declares
 * every outstanding packet lost, doubles the backoff up to rto_max).
 * Returns a mask of enum mr_pathtx_event (0: nothing was due). */
unsigned mr_pathtx_on_timeout(struct mr_pathtx *tx, uint64_t now);

/* When the path becomes suspect (MR-MP-8). Its reference is the later of
 * its oldest outstanding packet's send time and its last ACK. A packet
 * sent after the reference was acknowledged on another path of its plane
 * and the oldest outstanding packet was sent overtake_ns ago; or such a
 * packet came back on another plane only and overtake_ns passed since
 * that send time and since the last progress of its plane's other paths;
 * either not before the path has had no ACK for overtake_ns / 2. Or the
 * reference is suspect_ns old and the tail rule is armed with an ACK
 * after it. UINT64_MAX: not armed. */
uint64_t mr_pathtx_suspect_at(const struct mr_pathtx *tx);

/* Send time of the newest outstanding packet via *sent_at, and 1; 0 if
 * nothing is outstanding (MR-TMR-9). */
int mr_pathtx_newest_out(const struct mr_pathtx *tx, uint64_t *sent_at);

/* MR-TMR-9: the connection's tail-loss probe chose this path (it holds the
 * newest outstanding packet and nothing came back for a probe timeout):
 * that packet alone is declared lost (MR_PATHTX_LOSS_TAIL), so the engine
 * resends it on the next path the selector picks; the older ones stay
 * outstanding. No backoff, no suspicion; an ACK of it arriving after
 * all is ignored (not an MR-TMR-8 late ACK). Returns 1, or 0 if nothing
 * was outstanding. */
int mr_pathtx_tail_probe(struct mr_pathtx *tx);

/* Earliest time at which mr_pathtx_on_timeout() has work, or UINT64_MAX. */
uint64_t mr_pathtx_next_deadline(const struct mr_pathtx *tx);

/* The current RTO including backoff, clamped to rto_max (ns). */
uint64_t mr_pathtx_rto(const struct mr_pathtx *tx);

/* Declare every outstanding packet lost (MR_PATHTX_LOSS_FORCED), e.g. the
 * gbn sender going back on a SEQ_ERR NAK or QP teardown. Returns how many
 * were declared lost. Does not change the backoff. */
uint32_t mr_pathtx_lose_all(struct mr_pathtx *tx, uint64_t now);

#endif /* MR_PATHTX_H */
