/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * rx=block: the net_mrpkt port's receive ring in TPACKET_V3 blocks.
 *
 * Why: with rx=frame (TPACKET_V2, mrdp_pkt.c) the kernel wakes the
 * socket's sleeper at every frame it puts in the ring. With several
 * processes per host, each steered to its own frames (mrdp_steer.c), each
 * progress thread is woken per arrival and finds little to do: 4
 * ib_write_bw pairs moved the bytes of one with 2.1 x its context
 * switches per byte (bench/wire/FINDINGS.md 17.3). A V3 ring is cut in
 * blocks (MRDP_PKT_BLOCK); the kernel puts frames one after another in
 * the open block and wakes the sleeper once, when it retires the block:
 * full, or when its retire timer (block_ms) finds it holding frames. The
 * cost: a lone frame (a ping-pong's) waits in its block until then, up to
 * block_ms, which is why rx=frame stays the default.
 *
 * Walk: a retired block (TP_STATUS_USER) is read frame by frame
 * (tp_next_offset), each frame (a super-frame's segments, or one frame)
 * through mrdp_pkt_frame_each as a V2 slot's, where it lies; the block
 * goes back to the kernel (TP_STATUS_KERNEL) after its last frame, and
 * the blocks in their order, as the kernel fills them. A call that stops
 * within a block (its max) resumes there.
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <string.h>
#include <sys/socket.h>

#include "mrdp_pkt_int.h"

/* A super-frame fits a block beside the block's and the frame's headers
 * (the kernel's max_frame_len is the block less its descriptor). */
_Static_assert(MRDP_PKT_FRAME_MAX + 96u + sizeof(struct tpacket_block_desc) <=
		       MRDP_PKT_BLOCK,
	       "a super-frame fits a block");

static struct tpacket_block_desc *blk(struct mrdp_pkt *k, unsigned i)
{
	return (struct tpacket_block_desc *)(void *)(k->ring +
						     (size_t)i * k->slot_sz);
}

static uint32_t blk_status(const struct tpacket_block_desc *b)
{
	return __atomic_load_n(&b->hdr.bh1.block_status, __ATOMIC_ACQUIRE);
}

int mrdp_pkt_block_open(struct mrdp_pkt *k)
{
	int v = TPACKET_V3;
	struct tpacket_req3 req;

	k->slot_sz = MRDP_PKT_BLOCK;
	k->nslots = MRDP_PKT_BLOCKS;
	if (setsockopt(k->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		return -errno;
	memset(&req, 0, sizeof(req));
	req.tp_block_size = k->slot_sz;
	req.tp_block_nr = k->nslots;
	/* V3 frames take what they need in a block; the kernel still
	 * checks a frame geometry: one "frame" a block. */
	req.tp_frame_size = k->slot_sz;
	req.tp_frame_nr = k->nslots;
	req.tp_retire_blk_tov = k->block_ms;
	if (setsockopt(k->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		return -errno;
	return mrdp_pkt_ring_map(k, (size_t)k->slot_sz * k->nslots);
}

/* Give block b (k->cur) back to the kernel; the next one is current. */
static void blk_done(struct mrdp_pkt *k, struct tpacket_block_desc *b)
{
	__atomic_store_n(&b->hdr.bh1.block_status, TP_STATUS_KERNEL,
			 __ATOMIC_RELEASE);
	k->cur = (k->cur + 1) % k->nslots;
	k->boff = 0;
	k->bleft = 0;
	k->soff = 0;
	k->skip = 0;
	k->c->rx_blocks++;
}

int mrdp_pkt_block_rx(struct mrdp_pkt *k, unsigned max, mrdp_pkt_rx_fn fn,
		      void *arg)
{
	unsigned left = max;
	int work = 0;

	while (left) {
		struct tpacket_block_desc *b = blk(k, k->cur);
		uint32_t st = blk_status(b);

		if (!(st & TP_STATUS_USER))
			break;
		if (!k->boff) {
			/* A block begun (its first frame is never at 0). */
			if (st & TP_STATUS_LOSING)
				mrdp_pkt_ring_drops(k);
			k->boff = b->hdr.bh1.offset_to_first_pkt;
			k->bleft = k->skip ? 0 : b->hdr.bh1.num_pkts;
		}
		while (k->bleft && left) {
			struct tpacket3_hdr *h;

			if (k->boff + sizeof(*h) > k->slot_sz) {
				k->c->rx_gso_bad++; /* not the kernel's */
				k->bleft = 0;
				break;
			}
			h = (struct tpacket3_hdr *)(void *)((uint8_t *)b +
							    k->boff);
			if (!mrdp_pkt_frame_each(
				    k, (uint8_t *)h, k->slot_sz - k->boff,
				    h->tp_mac, h->tp_snaplen, h->tp_len, &left,
				    fn, arg, &work))
				break; /* left ran out in a super-frame */
			k->bleft--;
			if (!h->tp_next_offset)
				k->bleft = 0; /* the block's last */
			k->boff += h->tp_next_offset;
		}
		if (k->bleft)
			break;
		blk_done(k, b);
	}
	return work;
}

void mrdp_pkt_block_drain(struct mrdp_pkt *k)
{
	unsigned n;

	for (n = 0; n < k->nslots; n++) {
		struct tpacket_block_desc *b = blk(k, k->cur);

		if (!(blk_status(b) & TP_STATUS_USER))
			break;
		blk_done(k, b);
	}
	/* The block the kernel is filling: frames in it now came before
	 * the filter and would be handed out when it retires, so the whole
	 * block is dropped then. Its frames from after the filter are ours
	 * but cannot be a QP's (none exists before the device is open); an
	 * ARP answer lost with them is asked again. A frame past the old
	 * filter and not yet in the block at this moment is rx=frame's race
	 * too. */
	k->skip = __atomic_load_n(&blk(k, k->cur)->hdr.bh1.num_pkts,
				  __ATOMIC_ACQUIRE) != 0;
}
