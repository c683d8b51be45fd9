/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The `net_mrpkt` port (mrdp_pkt.c, mrdp_pkt_block.c): a kernel netdev
 * driven through an AF_PACKET socket of our own with a virtio-net header,
 * so that frames of one burst to the same peer QP and path leave as one
 * UDP GSO super-frame and such super-frames are received whole and split
 * again. Only lib/dp includes this.
 */
#ifndef MRDP_PKT_H
#define MRDP_PKT_H

#include <stddef.h>
#include <stdint.h>

struct mrdp_dev;
struct mrdp_pkt;
struct rte_mbuf;

/* Largest number of frames one super-frame carries: the kernel's
 * UDP_MAX_SEGMENTS is 64 on older kernels (128 since 6.x). */
#define MRDP_PKT_MAX_SEGS 64

/* Is this port argument a net_mrpkt port? */
int mrdp_pkt_is(const char *args);

/* Open plane idx of d as a net_mrpkt port (mrdp_port_open's work for this
 * kind): 0 or -errno with the reason in err. */
int mrdp_pkt_port_open(struct mrdp_dev *d, unsigned idx, char *err,
		       size_t errlen);
void mrdp_pkt_close(struct mrdp_pkt *k);

/* The largest frame a super-frame may be (its Ethernet header on): what a
 * receiver's ring slot of 64 KiB holds beside the kernel's headers. */
#define MRDP_PKT_FRAME_MAX (65536 - 96)

/* Receive: up to max frames, each handed to fn(arg, m) as an mbuf that
 * points into the receive ring, where the kernel copied it (a
 * super-frame's segments one by one, each with its own Ethernet/IP/UDP
 * headers written in front of its payload); fn must free m before it
 * returns (the slot is reused). No system call. Returns the sum of fn's
 * returns. */
typedef int (*mrdp_pkt_rx_fn)(void *arg, struct rte_mbuf *m);
int mrdp_pkt_rx_each(struct mrdp_pkt *k, unsigned max, mrdp_pkt_rx_fn fn,
		     void *arg);

/* After a round's receive at now (mrdp_io_round): the receive hold's
 * step (mrdp_pkt_hold.c; nothing without one). */
void mrdp_pkt_rx_hold(struct mrdp_pkt *k, uint64_t now);

/* The port's AF_PACKET socket (the steering filter's; the plane's
 * wait_fd may be the hold's epoll set instead). */
int mrdp_pkt_fd(const struct mrdp_pkt *k);

/* How many frames a round takes from the port at once (mrdp_io.c):
 * rx=block walks a retired block in one pass. */
unsigned mrdp_pkt_rx_burst(const struct mrdp_pkt *k);

/* Drop what the ring holds now, without handing it out: frames that
 * reached the socket before its steering filter (mrdp_steer.c), which may
 * be other processes'. In rx=block mode also the block the kernel is
 * filling, if it has frames: they would show up when it retires. */
void mrdp_pkt_drain(struct mrdp_pkt *k);

/* rte_eth_rx_burst's contract, for who keeps frames (metaroced): up to n
 * frames, each copied out of the ring into an mbuf of the device's pool. */
uint16_t mrdp_pkt_rx(struct mrdp_pkt *k, struct rte_mbuf **v, uint16_t n);

/* rte_eth_tx_burst's contract: the frames taken are v[0..ret), freed
 * (their data copied by the kernel before this returns); v is permuted so
 * that they come first, the others following in their order. */
uint16_t mrdp_pkt_tx(struct mrdp_pkt *k, struct rte_mbuf **v, uint16_t n);

/* The coalescing plan of a burst, without the socket (for tests): for
 * each of the n frames (their first segment's bytes and lengths), the
 * index of its super-frame; returns how many super-frames. */
struct mrdp_pkt_frame {
	const uint8_t *hdr; /* the frame's first segment */
	size_t hdr_len;	    /* bytes of it */
	size_t len;	    /* the whole frame */
	unsigned nseg;	    /* mbuf segments */
};
unsigned mrdp_pkt_plan(const struct mrdp_pkt_frame *f, unsigned n,
		       unsigned *group);

#endif /* MRDP_PKT_H */
