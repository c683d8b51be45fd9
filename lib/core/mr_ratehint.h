/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Receiver rate hint (docs/spec/reliability.md MR-CC-7, -8, -12): one
 * struct mr_ratehint per receiving endpoint (its port rate, summed over
 * its planes), one struct mr_ratehint_conn per connection.
 *
 * A sender that marks a packet IDLE (nothing queued after it) leaves the
 * list at once, its share to the others (MR-CC-14): a finished sender
 * would otherwise keep its demand for up to two epochs.
 *
 * Time is cut into epochs of `epoch_ns` (a few base RTTs). The hint is the
 * max-min fair level of the port's rate over the senders it serves: a
 * connection that delivered data in one of the last two closed epochs
 * demands twice its mean rate over them (twice, so a sender limited by
 * the last hint, or unlucky in one short epoch, is not mistaken for one
 * that wants less, and an application-limited sender may double per
 * epoch); a connection silent in both that delivers now demands
 * everything. Water-filling gives each demand below the level its demand
 * and shares the rest equally among the others: a sender using less than
 * its share leaves the rest to the others, and N greedy senders of an
 * incast each get 1/N of the port within the RTT that carries the hint
 * back (MR-CC-8).
 *
 * The port's rate R is the planes' that deliver (MR-CC-12): a plane that
 * delivered before and has been silent for half an epoch (two base RTTs)
 * while the others delivered 32 packets per plane is down for the hint, so a receiver whose
 * plane failed shares what its live planes carry, not the rate of all of
 * them; a plane is live again with its next packet.
 *
 * The caller gives the storage of the lists (capacity `cap` connections:
 * the endpoint's QPs); a connection past the capacity counts as a greedy
 * newcomer in every epoch it delivers in. No allocation. Threading: none.
 */
#ifndef MR_RATEHINT_H
#define MR_RATEHINT_H

#include <stdint.h>

struct mr_ratehint_conn {
	uint64_t last;	  /* last epoch it delivered in, + 1 (0: never) */
	uint64_t b_last;  /* bytes it delivered in that epoch */
	uint64_t b_prev;  /* ... in the epoch before it */
	uint32_t slot;	  /* its index in the port's list, if listed */
	uint32_t dem;	  /* its demand in the port's demand[] (listed and
			   * not fresh) */
	uint32_t idle_ssn; /* the ssn of its last IDLE packet, MR-CC-14 */
	uint64_t first_ack; /* MR-CC-17: the slot of its first ACK + 1
			     * (0: none taken) */
	uint8_t listed;	  /* in the port's list */
	uint8_t fresh;	  /* listed in this epoch as a newcomer */
	uint8_t idle;	  /* its sender said it has nothing queued */
	uint8_t young;	  /* MR-CC-17: held greedy through the epoch after
			   * its first; measured on its last epoch only */
};

/* Planes the hint judges (an endpoint with more: its first 16). */
#define MR_RATEHINT_MAX_PLANES 16

struct mr_ratehint {
	uint32_t link_mbps; /* R: port_mbps x live planes / nplanes */
	uint32_t port_mbps; /* the port's rate over all its planes */
	uint8_t nplanes;    /* planes of the port (1..MAX_PLANES tracked) */
	uint8_t live;	    /* planes counted in link_mbps */
	uint64_t plane_rx[MR_RATEHINT_MAX_PLANES]; /* last arrival + 1
						    * (0: none yet) */
	uint64_t rx_pkts; /* data packets received, all planes */
	uint64_t plane_pk[MR_RATEHINT_MAX_PLANES]; /* rx_pkts at it */
	uint64_t epoch_ns;
	uint64_t epoch;	/* current epoch number (now / epoch_ns) */
	uint32_t cap;	/* capacity of act[] and demand[] */
	uint32_t nact;	/* connections listed: active now or in the last
			 * two closed epochs */
	uint32_t ndem;	/* demands of the last closed epoch */
	uint32_t nnew;	/* greedy newcomers of this epoch */
	uint32_t level; /* the hint, recomputed when an input changes */
	/* MR-CC-17 (start = 1): newcomers' first ACKs leave one packet of
	 * slot_bytes at link_mbps apart, the next at slot_next or later;
	 * a connection first seen in a closed epoch stays greedy one more. */
	uint8_t start;
	uint32_t slot_bytes;
	uint64_t slot_next;
	struct mr_ratehint_conn **act;
	uint32_t *demand; /* Mb/s, ascending */
};

/* Returns 0 or -MR_EINVAL (link_mbps, epoch_ns or cap 0, NULL storage).
 * act and demand hold cap entries each and stay the caller's. */
int mr_ratehint_init(struct mr_ratehint *h, uint32_t link_mbps,
		     uint64_t epoch_ns, uint32_t cap,
		     struct mr_ratehint_conn **act, uint32_t *demand);

/* The port's rate changed (read from the port after it came up). */
int mr_ratehint_set_link(struct mr_ratehint *h, uint32_t link_mbps);

/* MR-CC-17: the paced start, its slots one packet of pkt_bytes (a full
 * one, on the wire) at the port's rate apart. */
void mr_ratehint_set_start(struct mr_ratehint *h, uint32_t pkt_bytes);

/* MR-CC-17: when the first ACK of connection c, due at `due`, may
 * leave: at due, or, with the paced start, at the slot it takes (the
 * first call takes it; later calls before c is reset return it, or due
 * if later). */
uint64_t mr_ratehint_first_ack(struct mr_ratehint *h,
			       struct mr_ratehint_conn *c, uint64_t due);

/* The port has n planes (>= 1; 1 after init): MR-CC-12. */
int mr_ratehint_set_planes(struct mr_ratehint *h, unsigned n);

static inline void mr_ratehint_conn_init(struct mr_ratehint_conn *c)
{
	c->last = 0;
	c->b_last = 0;
	c->b_prev = 0;
	c->slot = 0;
	c->dem = 0;
	c->idle_ssn = 0;
	c->first_ack = 0;
	c->listed = 0;
	c->fresh = 0;
	c->idle = 0;
	c->young = 0;
}

/* A data packet of `bytes` (on the wire) of connection c arrived at now
 * on `plane`. */
void mr_ratehint_on_rx(struct mr_ratehint *h, struct mr_ratehint_conn *c,
		       uint32_t bytes, unsigned plane, uint64_t now);

/* MR-CC-14: the same for a data packet of sequence number ssn; idle: it
 * carries IDLE (its sender has no new data queued after it). Such a
 * packet takes the connection out of the hint at once (its demand, or
 * its newcomer's share, goes to the others); packets older than it
 * (reordered over paths, retransmitted) keep it out; a newer one brings
 * it back as a newcomer. */
void mr_ratehint_on_pkt(struct mr_ratehint *h, struct mr_ratehint_conn *c,
			uint32_t bytes, unsigned plane, uint32_t ssn, int idle,
			uint64_t now);

/* Connection c goes away (QP destroyed or reset): off the port's list. */
void mr_ratehint_conn_gone(struct mr_ratehint *h, struct mr_ratehint_conn *c);

/* The hint (Mb/s, >= 1; R over the live planes, MR-CC-12) to put in the AETH of an ACK sent at now. */
uint32_t mr_ratehint_get(struct mr_ratehint *h, uint64_t now);

/* Max-min fair level of link_mbps over n ascending demands plus `greedy`
 * senders that take all they get (>= 1). */
uint32_t mr_ratehint_level(uint32_t link_mbps, const uint32_t *demand,
			   uint32_t n, uint32_t greedy);

#endif /* MR_RATEHINT_H */
