// SPDX-License-Identifier: BSD-2-Clause
/*
 * Sender side of one path: ppsn assignment, sent-packet ring, SACK
 * processing, per-path loss detection and RTO (MR-PATH-*, MR-LOSS-*,
 * MR-TMR-*).
 */
#include "mr_pathtx.h"

#include <string.h>

#include "mr_be.h"
#include "mr_err.h"

#define RING_MASK (MR_PATHTX_RING - 1)

/* Loss time threshold = 9/8 x max(srtt, latest_rtt), as QUIC's: a little
 * more than one RTT, so a packet overtaken on the same path (rare: one
 * ECMP route) is not declared lost on the first later ack (MR-LOSS-2). */
#define TIME_THRESH_NUM 9
#define TIME_THRESH_DEN 8
#define BACKOFF_MAX 32

static struct mr_pathtx_rec *rec_of(struct mr_pathtx *tx, uint32_t ppsn)
{
	return &tx->ring[ppsn & RING_MASK];
}

int mr_pathtx_init(struct mr_pathtx *tx, const struct mr_pathtx_config *cfg,
		   const struct mr_pathtx_cb *cb)
{
	struct mr_pathtx_config c;

	if (!tx || !cfg)
		return -MR_EINVAL;
	c = *cfg;
	if (c.max_inflight > MR_PATHTX_RING)
		return -MR_EINVAL;
	if (!c.max_inflight)
		c.max_inflight = MR_PATHTX_RING;
	if (!c.reorder_thresh)
		c.reorder_thresh = 3;
	if (!c.rto_init_ns)
		c.rto_init_ns = 1000000;
	if (!c.rto_min_ns)
		c.rto_min_ns = 100000;
	if (!c.rto_max_ns)
		c.rto_max_ns = 1000000000;
	if (!c.granularity_ns)
		c.granularity_ns = 1000;
	if (c.rto_min_ns > c.rto_max_ns)
		return -MR_EINVAL;
	memset(tx, 0, sizeof(*tx));
	tx->cfg = c;
	if (cb)
		tx->cb = *cb;
	tx->una = c.init_ppsn;
	tx->nxt = c.init_ppsn;
	tx->rto = c.rto_init_ns;
	if (tx->rto < c.rto_min_ns)
		tx->rto = c.rto_min_ns;
	if (tx->rto > c.rto_max_ns)
		tx->rto = c.rto_max_ns;
	tx->loss_time = UINT64_MAX;
	return 0;
}

uint32_t mr_pathtx_space(const struct mr_pathtx *tx)
{
	uint32_t span = tx->nxt - tx->una;

	return span >= tx->cfg.max_inflight ? 0 : tx->cfg.max_inflight - span;
}

uint64_t mr_pathtx_rto(const struct mr_pathtx *tx)
{
	uint64_t rto = tx->rto;
	uint32_t i;

	for (i = 0; i < tx->backoff && rto < tx->cfg.rto_max_ns; i++)
		rto <<= 1;
	return rto > tx->cfg.rto_max_ns ? tx->cfg.rto_max_ns : rto;
}

int mr_pathtx_send(struct mr_pathtx *tx, uint32_t ssn, uint32_t bytes,
		   unsigned retx, uint64_t ctx, uint64_t now, uint32_t *ppsn)
{
	struct mr_pathtx_rec *r;

	if (!mr_pathtx_space(tx))
		return -MR_EAGAIN;
	r = rec_of(tx, tx->nxt);
	r->ppsn = tx->nxt;
	r->ssn = ssn;
	r->bytes = bytes;
	r->state = MR_PATHTX_OUT;
	r->retx = retx > 255 ? 255 : (uint8_t)retx;
	r->late = 0;
	r->sent_at = now;
	r->ctx = ctx;
	/* RFC 6298 (5.1): start the timer when it is not running. */
	if (!tx->out_pkts)
		tx->rto_start = now;
	tx->out_pkts++;
	tx->out_bytes += bytes;
	tx->tx_pkts++;
	tx->tx_bytes += bytes;
	if (retx)
		tx->retx_pkts++;
	*ppsn = tx->nxt++;
	return 0;
}

/* RFC 6298 (2.2, 2.3) with the granularity G and the clamp to
 * [rto_min, rto_max] (MR-TMR-1, MR-TMR-2). */
static void rtt_update(struct mr_pathtx *tx, uint64_t r)
{
	uint64_t var;

	if (r == 0)
		r = 1;
	/* A sample beyond rto_max says nothing the RTO could use, and one
	 * from a broken clock must not poison srtt for good. */
	if (r > tx->cfg.rto_max_ns)
		r = tx->cfg.rto_max_ns;
	tx->latest_rtt = r;
	if (!tx->min_rtt || r < tx->min_rtt)
		tx->min_rtt = r;
	if (!tx->srtt) {
		tx->srtt = r;
		tx->rttvar = r / 2;
	} else {
		uint64_t err = tx->srtt > r ? tx->srtt - r : r - tx->srtt;

		tx->rttvar = (3 * tx->rttvar + err) / 4;
		tx->srtt = (7 * tx->srtt + r) / 8;
	}
	var = 4 * tx->rttvar;
	if (var < tx->cfg.granularity_ns)
		var = tx->cfg.granularity_ns;
	tx->rto = tx->srtt + var;
	tx->rto_floor -= tx->rto_floor >> 12;
	if (tx->rto < tx->rto_floor)
		tx->rto = tx->rto_floor;
	if (tx->rto < tx->cfg.rto_min_ns)
		tx->rto = tx->cfg.rto_min_ns;
	if (tx->rto > tx->cfg.rto_max_ns)
		tx->rto = tx->cfg.rto_max_ns;
}

static uint64_t loss_delay(const struct mr_pathtx *tx)
{
	uint64_t rtt = tx->srtt > tx->latest_rtt ? tx->srtt : tx->latest_rtt;
	uint64_t d;

	if (!rtt)
		rtt = tx->cfg.rto_init_ns;
	d = rtt * TIME_THRESH_NUM / TIME_THRESH_DEN;
	return d < tx->cfg.granularity_ns ? tx->cfg.granularity_ns : d;
}

static void declare_lost(struct mr_pathtx *tx, struct mr_pathtx_rec *r, int why)
{
	r->state = MR_PATHTX_LOST;
	tx->out_pkts--;
	tx->out_bytes -= r->bytes;
	switch (why) {
	case MR_PATHTX_LOSS_REORDER:
		tx->lost_reorder++;
		break;
	case MR_PATHTX_LOSS_TIME:
		tx->lost_time++;
		break;
	case MR_PATHTX_LOSS_TAIL:
		/* MR-TMR-9: not tracked as late (it is not at the span's
		 * start, where MR-TMR-8 looks): an ACK of it is ignored, its
		 * resend's is the progress. */
		tx->lost_tail++;
		break;
	case MR_PATHTX_LOSS_SUSPECT:
	case MR_PATHTX_LOSS_RTO:
		if (why == MR_PATHTX_LOSS_RTO)
			tx->lost_rto++;
		else
			tx->lost_suspect++;
		/* Its ACK may only be late (MR-TMR-8): remember it. */
		r->late = 1;
		if (!tx->any_late) {
			tx->any_late = 1;
			tx->late_lo = r->ppsn;
		}
		break;
	default:
		tx->lost_forced++;
		break;
	}
	if (tx->cb.lost)
		tx->cb.lost(tx->cb.user, tx->cfg.path_id, r->ssn, r->bytes,
			    r->ctx, why);
}

static int settled(const struct mr_pathtx_rec *r)
{
	return r->state != MR_PATHTX_OUT;
}

static int acked_state(const struct mr_pathtx_rec *r)
{
	return r->state == MR_PATHTX_ACKED;
}

/* Drop settled records from the tail of the span. */
static void advance_una(struct mr_pathtx *tx)
{
	while (tx->una != tx->nxt) {
		struct mr_pathtx_rec *r = rec_of(tx, tx->una);

		if (!settled(r))
			break;
		if (acked_state(r))
			tx->acked_in_span--;
		r->state = MR_PATHTX_FREE;
		tx->una++;
	}
}

/*
 * Per-path loss detection (MR-LOSS-1, -2, -4): an outstanding packet is
 * lost when reorder_thresh packets sent after it on this path have been
 * acked, or when at least one has and it is older than the time
 * threshold. Only this path's records are consulted, so packets of other
 * paths overtaking it never count. Recomputes loss_time.
 */
static void detect_losses(struct mr_pathtx *tx, uint64_t now)
{
	uint32_t total = tx->acked_in_span, before = 0, p;
	uint64_t delay = loss_delay(tx);

	tx->loss_time = UINT64_MAX;
	/* Only records before the newest acked one can be lost: stop
	 * there. */
	for (p = tx->una; p != tx->nxt && before < total; p++) {
		struct mr_pathtx_rec *r = rec_of(tx, p);
		uint32_t later = total - before;

		if (acked_state(r)) {
			before++;
			continue;
		}
		if (r->state != MR_PATHTX_OUT)
			continue;
		if (later >= tx->cfg.reorder_thresh) {
			declare_lost(tx, r, MR_PATHTX_LOSS_REORDER);
		} else if (now - r->sent_at >= delay) {
			declare_lost(tx, r, MR_PATHTX_LOSS_TIME);
		} else if (r->sent_at + delay < tx->loss_time) {
			tx->loss_time = r->sent_at + delay;
		}
	}
}

static int block_acks(const struct mr_sack_block *blk, uint32_t p)
{
	int32_t d = mr_seq_diff(p, blk->cum_ppsn);

	if (d < 0)
		return 1;
	if (d == 0 || d > MR_SACK_BITS)
		return 0;
	d--;
	return blk->bitmap[d / 8] >> (d % 8) & 1;
}

/* One past the newest ppsn the block can acknowledge (<= nxt), so a
 * SACK only walks the records it may touch. */
static uint32_t block_end(const struct mr_pathtx *tx,
			  const struct mr_sack_block *blk)
{
	uint32_t end = blk->cum_ppsn;
	int i;

	for (i = MR_SACK_BYTES - 1; i >= 0; i--) {
		if (blk->bitmap[i]) {
			int b = 7;

			while (!(blk->bitmap[i] >> b & 1))
				b--;
			end = blk->cum_ppsn + 2 + (uint32_t)(i * 8 + b);
			break;
		}
	}
	return mr_seq_lt(tx->nxt, end) ? tx->nxt : end;
}

/* A block may only acknowledge ppsns this path has sent. */
static int block_valid(const struct mr_pathtx *tx,
		       const struct mr_sack_block *blk)
{
	int32_t room = mr_seq_diff(tx->nxt, blk->cum_ppsn);
	uint32_t first, i;

	if (room < 0)
		return 0;
	/* Bits i >= room - 1 name ppsn >= nxt: they must all be clear. */
	first = room > 0 ? (uint32_t)room - 1 : 0;
	if (first >= MR_SACK_BITS)
		return 1;
	if (blk->bitmap[first / 8] >> (first % 8))
		return 0;
	for (i = first / 8 + 1; i < MR_SACK_BYTES; i++)
		if (blk->bitmap[i])
			return 0;
	return 1;
}

/*
 * MR-TMR-8: ACKs of transmissions the RTO declared lost. The records left
 * the span but stay in the ring until their slot is reused (ppsn + 256),
 * so they are still known. Such an ACK shows the RTO fired too early: its
 * RTT is a sample the estimator needs (without it the RTO only ever sees
 * the RTTs shorter than itself, and keeps firing early on a host whose
 * RTT jumps from microseconds to milliseconds), and the path is alive.
 * Returns the newest sample (0 if none).
 */
static uint64_t late_acks(struct mr_pathtx *tx, const struct mr_sack_block *blk,
			  uint64_t now)
{
	uint32_t p, lo = tx->late_lo, end = tx->una;
	uint64_t sample = 0;
	int pending = 0;

	if (mr_seq_lt(lo, tx->nxt - MR_PATHTX_RING))
		lo = tx->nxt - MR_PATHTX_RING; /* older slots are reused */
	for (p = lo; mr_seq_lt(p, end); p++) {
		struct mr_pathtx_rec *r = rec_of(tx, p);

		if (r->ppsn != p || !r->late)
			continue;
		if (!block_acks(blk, p)) {
			if (!pending) {
				pending = 1;
				tx->late_lo = p;
			}
			continue;
		}
		if (r->late == 2 && tx->suspect_open) {
			tx->suspect_open = 0;
			tx->suspect_false++; /* MR-MP-8: it was only late */
		}
		r->late = 0;
		tx->late_acked++;
		if (r->sent_at > tx->acked_sent_at)
			tx->acked_sent_at = r->sent_at;
		if (!r->retx && now > r->sent_at)
			sample = now - r->sent_at;
	}
	if (!pending)
		tx->any_late = 0;
	return sample;
}

int mr_pathtx_on_sack(struct mr_pathtx *tx, const struct mr_sack_block *blk,
		      uint64_t now)
{
	return mr_pathtx_on_sack_flags(tx, blk, now, 0);
}

int mr_pathtx_on_sack_flags(struct mr_pathtx *tx,
			    const struct mr_sack_block *blk, uint64_t now,
			    unsigned flags)
{
	int16_t ce_new = (int16_t)(uint16_t)(blk->ce_cum - tx->peer_ce);
	uint64_t late_rtt = 0, late_before = tx->late_acked;
	struct mr_pathtx_rec *sample = NULL;
	int newly = 0;
	uint32_t p, end;

	if (blk->path_id != tx->cfg.path_id)
		return -MR_EINVAL;
	if (!block_valid(tx, blk)) {
		tx->bad_sacks++;
		return -MR_EPROTO;
	}
	/* MR-ACK-11: the block's CE count is cumulative; an older block
	 * (an ACK overtaken by a later one) adds nothing. */
	if (ce_new > 0) {
		tx->peer_ce = blk->ce_cum;
		tx->ce_pkts += (uint64_t)ce_new;
		tx->ce_new += (uint32_t)ce_new;
	}
	if (tx->any_late)
		late_rtt = late_acks(tx, blk, now);
	/* A late ACK's RTT (MR-TMR-8) is kept whatever path the ACK came
	 * on: it is the delay the RTO must cover (a stalled receiver), not a
	 * measure of this path's route. */
	end = block_end(tx, blk);
	for (p = tx->una; mr_seq_lt(p, end); p++) {
		struct mr_pathtx_rec *r = rec_of(tx, p);
		uint64_t rtt;

		if (!block_acks(blk, p))
			continue;
		if (r->state != MR_PATHTX_OUT)
			continue;
		r->state = MR_PATHTX_ACKED;
		tx->acked_in_span++;
		tx->out_pkts--;
		tx->out_bytes -= r->bytes;
		tx->acked_pkts++;
		newly++;
		if (r->sent_at > tx->acked_sent_at) {
			tx->acked_sent_at = r->sent_at;
			if (!r->retx && now >= r->sent_at)
				tx->latest_delay = now - r->sent_at;
		}
		if (!tx->any_acked || mr_seq_lt(tx->largest_acked, p)) {
			tx->largest_acked = p;
			tx->any_acked = 1;
		}
		/* Karn: only first transmissions give RTT samples; the
		 * newest one in this block is the freshest (MR-TMR-1). */
		rtt = 0;
		if (!r->retx && now >= r->sent_at &&
		    !(flags & MR_PATHTX_SACK_NO_RTT)) {
			rtt = now - r->sent_at;
			sample = r;
		}
		if (tx->cb.acked)
			tx->cb.acked(tx->cb.user, tx->cfg.path_id, r->ssn,
				     r->bytes, r->ctx, rtt);
	}
	if (late_rtt) {
		/* RFC 6298 forgets a rare long RTT within a few samples, so
		 * the next one would fire the RTO again: keep it as a floor
		 * that fades over thousands of samples. */
		rtt_update(tx, late_rtt);
		if (late_rtt + late_rtt / 4 > tx->rto_floor)
			tx->rto_floor = late_rtt + late_rtt / 4;
		if (tx->rto < tx->rto_floor)
			tx->rto = tx->rto_floor < tx->cfg.rto_max_ns
					  ? tx->rto_floor
					  : tx->cfg.rto_max_ns;
	}
	if (sample)
		rtt_update(tx, now - sample->sent_at);
	if (tx->late_acked != late_before) {
		/* The RTO was spurious: undo its backoff (MR-TMR-8). */
		tx->backoff = 0;
		if (!newly)
			tx->rto_start = now;
	}
	if (!newly)
		return 0; /* nothing changed: the loss timer covers ageing */
	/* Progress: reset the backoff, restart the timer (RFC 6298 5.3,
	 * MR-TMR-4). */
	tx->last_ack_at = now;
	tx->suspect = 0; /* MR-MP-8: a packet of it came back */
	tx->backoff = 0;
	tx->rto_start = now;
	detect_losses(tx, now);
	advance_una(tx);
	return newly;
}

static uint32_t lose_all(struct mr_pathtx *tx, int why)
{
	uint32_t p, n = 0;

	for (p = tx->una; p != tx->nxt; p++) {
		struct mr_pathtx_rec *r = rec_of(tx, p);

		if (r->state == MR_PATHTX_OUT) {
			declare_lost(tx, r, why);
			n++;
		}
	}
	tx->loss_time = UINT64_MAX;
	advance_una(tx);
	return n;
}

/* The oldest outstanding packet, or NULL. */
static struct mr_pathtx_rec *oldest_rec(struct mr_pathtx *tx)
{
	uint32_t p;

	for (p = tx->una; p != tx->nxt; p++) {
		struct mr_pathtx_rec *r = rec_of(tx, p);

		if (r->state == MR_PATHTX_OUT)
			return r;
	}
	return NULL;
}

/* The oldest outstanding packet's send time, or UINT64_MAX. */
static uint64_t oldest_out(const struct mr_pathtx *tx)
{
	uint32_t p;

	for (p = tx->una; p != tx->nxt; p++) {
		const struct mr_pathtx_rec *r = &tx->ring[p & RING_MASK];

		if (r->state == MR_PATHTX_OUT)
			return r->sent_at;
	}
	return UINT64_MAX;
}

uint64_t mr_pathtx_suspect_at(const struct mr_pathtx *tx)
{
	uint64_t sent, ref, quiet, at = UINT64_MAX;

	if ((!tx->suspect_ns && !tx->overtake_ns) || !tx->out_pkts)
		return UINT64_MAX;
	sent = oldest_out(tx);
	if (sent == UINT64_MAX)
		return UINT64_MAX;
	ref = tx->last_ack_at > sent ? tx->last_ack_at : sent;
	/* Overtaken: the allowance counts from the oldest packet's send time
	 * (a later one came back: ours is late by its own RTT), and the path
	 * must also have been quiet for half of it. From its last ACK
	 * instead, an ACK of an older packet arriving just after a route died
	 * (the black hole's, 14 us after the send of the first packet lost)
	 * put the suspicion a whole RTT later (33 us after the loss, over 3
	 * base RTTs); a path whose ACKs still flow behind a queue is not
	 * quiet. */
	quiet = tx->last_ack_at + tx->overtake_ns / 2;
	/* Only while another path progressed since: a silent peer is
	 * the RTO's and retry_cnt's business, not a path's. Overtaken: a
	 * packet sent after ours came back on another path (a thread that
	 * lost the CPU and finds old ACKs waiting sees no such packet). */
	if (tx->overtake_ns && tx->plane_sent_at > ref) {
		at = sent + tx->overtake_ns;
	} else if (tx->overtake_ns && tx->conn_sent_at > ref) {
		/* Overtaken by another plane only: while the plane's other
		 * paths progress its queue is draining, ours behind it (a run
		 * of 16 packets is 2.7 ms of a 200 Mb/s link: the plane's
		 * smoothed RTT lags such a queue and bench/wire/plane_fail
		 * counted 30-50 false suspicions per 10 s). A dead plane makes
		 * no progress: the limit counts from its last. */
		uint64_t base = tx->plane_progress_at > sent
					? tx->plane_progress_at
					: sent;

		at = base + tx->overtake_ns;
	}
	if (at != UINT64_MAX && at < quiet)
		at = quiet;
	/* Tail: nothing else was outstanding to overtake it. */
	if (tx->suspect_ns && tx->conn_progress_at > ref &&
	    ref + tx->suspect_ns < at)
		at = ref + tx->suspect_ns;
	return at;
}

unsigned mr_pathtx_on_timeout(struct mr_pathtx *tx, uint64_t now)
{
	unsigned ev = 0;
	uint64_t sus = mr_pathtx_suspect_at(tx);

	if (sus <= now) {
		/* MR-MP-8: what the silent path holds is resent elsewhere
		 * at once; the path carries one packet at a time until one
		 * returns. No backoff: this is not a timeout of the peer. */
		struct mr_pathtx_rec *w = oldest_rec(tx);

		tx->suspect_events++;
		tx->suspect = 1;
		tx->suspect_open = 1;
		lose_all(tx, MR_PATHTX_LOSS_SUSPECT);
		/* The oldest packet is the suspicion's witness: if its ACK
		 * comes after all, the suspicion was false (the others were
		 * merely younger, in flight behind it). */
		if (w)
			w->late = 2;
		ev |= MR_PATHTX_EV_SUSPECT;
	}

	if (tx->loss_time != UINT64_MAX && now >= tx->loss_time) {
		detect_losses(tx, now);
		advance_una(tx);
		ev |= MR_PATHTX_EV_LOSS_TIMER;
	}
	if (tx->out_pkts && now >= tx->rto_start + mr_pathtx_rto(tx)) {
		/* Tail loss or a dead route: everything outstanding on this
		 * path is lost (MR-LOSS-3); back off (MR-TMR-3). */
		tx->rto_events++;
		lose_all(tx, MR_PATHTX_LOSS_RTO);
		if (tx->backoff < BACKOFF_MAX)
			tx->backoff++;
		ev |= MR_PATHTX_EV_RTO;
	}
	return ev;
}

uint64_t mr_pathtx_next_deadline(const struct mr_pathtx *tx)
{
	uint64_t d = tx->loss_time, sus = mr_pathtx_suspect_at(tx);

	if (sus < d)
		d = sus;

	if (tx->out_pkts) {
		uint64_t rto = tx->rto_start + mr_pathtx_rto(tx);

		if (rto < d)
			d = rto;
	}
	return d;
}

int mr_pathtx_newest_out(const struct mr_pathtx *tx, uint64_t *sent_at)
{
	uint32_t p;

	for (p = tx->nxt; p != tx->una; p--) {
		const struct mr_pathtx_rec *r = &tx->ring[(p - 1) & RING_MASK];

		if (r->state == MR_PATHTX_OUT) {
			*sent_at = r->sent_at;
			return 1;
		}
	}
	return 0;
}

int mr_pathtx_tail_probe(struct mr_pathtx *tx)
{
	uint32_t p;

	for (p = tx->nxt; p != tx->una; p--) {
		struct mr_pathtx_rec *r = rec_of(tx, p - 1);

		if (r->state == MR_PATHTX_OUT) {
			/* The only record declared lost out of order: the
			 * older ones stay out (its ACK on the next path
			 * overtakes them, MR-MP-8). */
			declare_lost(tx, r, MR_PATHTX_LOSS_TAIL);
			if (!tx->out_pkts)
				tx->loss_time = UINT64_MAX;
			advance_una(tx);
			return 1;
		}
	}
	return 0;
}

uint32_t mr_pathtx_lose_all(struct mr_pathtx *tx, uint64_t now)
{
	(void)now;
	return lose_all(tx, MR_PATHTX_LOSS_FORCED);
}
