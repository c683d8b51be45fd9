/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Inside the net_mrpkt port: its state, shared by mrdp_pkt.c (the socket,
 * transmit, the TPACKET_V2 ring of rx=frame) and mrdp_pkt_block.c (the
 * TPACKET_V3 ring of rx=block). Only those two include this.
 */
#ifndef MRDP_PKT_INT_H
#define MRDP_PKT_INT_H

#include <linux/virtio_net.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <rte_mbuf.h>

#include "mrdp_int.h"
#include "mrdp_pkt.h"
#include "mrdp_pkt_hold.h"

/* Frames handled per transmit call: a round's burst or the backlog. */
#define MRDP_PKT_TX_MAX MRDP_BACKLOG
#define MRDP_PKT_TX_IOV_MAX 4096

/* rx=block: blocks of 256 KiB (four 64 KiB super-frames, or ~60 frames
 * of a 4 KiB MTU), 32 of them (8 MiB, rx=frame's ring), a block retired
 * by the kernel at the latest MRDP_PKT_BLOCK_MS_DEFAULT ms after its
 * first frame (the devarg block_ms=1..MRDP_PKT_BLOCK_MS_MAX). */
#define MRDP_PKT_BLOCK (256u << 10)
#define MRDP_PKT_BLOCKS 32u
#define MRDP_PKT_BLOCK_MS_DEFAULT 1u
#define MRDP_PKT_BLOCK_MS_MAX 100u

struct mrdp_pkt {
	int fd;
	int gso;      /* coalesce into super-frames */
	int udp_csum; /* METAROCE_DP_UDP_CSUM: singles keep a checksum */
	int block;    /* rx=block: a TPACKET_V3 ring */
	unsigned block_ms;
	struct rte_mempool *pool;
	struct mrdp_plane_counters *c;
	/* transmit */
	struct virtio_net_hdr vh[MRDP_PKT_TX_MAX];
	uint8_t hdr[MRDP_PKT_TX_MAX][64]; /* each message's L2-L4 header */
	struct iovec iov[MRDP_PKT_TX_IOV_MAX];
	struct mmsghdr msg[MRDP_PKT_TX_MAX];
	/* receive: a ring whose slots (rx=frame) or blocks (rx=block) each
	 * take a whole super-frame; the frames are handed out where they
	 * lie. */
	uint8_t *ring;
	size_t ring_len, max_frame;
	unsigned slot_sz, nslots, cur; /* slots or blocks */
	/* rx=block: the current block's next frame (offset in the block,
	 * 0: the block not begun) and frames left in it; skip: drop the
	 * current block's frames (it held frames from before the steering
	 * filter, mrdp_pkt_drain). */
	size_t boff;
	unsigned bleft;
	int skip;
	size_t soff;  /* the current frame's next segment (payload offset) */
	unsigned sl4; /* its super-frame's L4 offset */
	uint8_t shdr[64]; /* and headers, as received */
	unsigned out;	  /* frames handed out and not back */
	struct rte_mbuf_ext_shared_info shinfo;
	/* The receive hold (mrdp_pkt_hold.c; rx=frame, dp_rx_hold_us): the
	 * epoll set the plane's wait_fd is (the socket and the timer), -1
	 * without a hold. */
	struct mrdp_pkt_hold hold;
	int hold_efd, hold_tfd;
};

/* The frames of one received frame (a super-frame's segments, or the
 * frame) at base + mac, snaplen of its len bytes there, room bytes from
 * base being its slot, from where the last call stopped, while *left:
 * 1 when it is done, 0 when *left ran out inside a super-frame (call
 * again with the same frame). fn's returns are added to *work. */
int mrdp_pkt_frame_each(struct mrdp_pkt *k, uint8_t *base, size_t room,
			unsigned mac, size_t snaplen, size_t len,
			unsigned *left, mrdp_pkt_rx_fn fn, void *arg,
			int *work);

/* mmap the socket's ring of len bytes into k->ring: 0 or -errno. */
int mrdp_pkt_ring_map(struct mrdp_pkt *k, size_t len);

/* Add the kernel's ring drops to rx_ring_drops (a slot or block said
 * TP_STATUS_LOSING). */
void mrdp_pkt_ring_drops(struct mrdp_pkt *k);

/* rx=block (mrdp_pkt_block.c): the ring (after PACKET_VNET_HDR, before
 * bind), 0 or -errno; the walk (mrdp_pkt_rx_each's); the drain. */
int mrdp_pkt_block_open(struct mrdp_pkt *k);
int mrdp_pkt_block_rx(struct mrdp_pkt *k, unsigned max, mrdp_pkt_rx_fn fn,
		      void *arg);
void mrdp_pkt_block_drain(struct mrdp_pkt *k);

/* The receive hold (mrdp_pkt_hold.c): its epoll set and timer for a
 * period of us microseconds, after the socket is bound; the fd to sleep
 * on, or -errno (no hold then). Close: both fds. */
int mrdp_pkt_hold_open(struct mrdp_pkt *k, unsigned us);
void mrdp_pkt_hold_close(struct mrdp_pkt *k);

#endif /* MRDP_PKT_INT_H */
