/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The `net_mrpkt,iface=IF[,gso=yes|no][,rx=frame|block[,block_ms=N]]`
 * port: a kernel netdev (veth, a NIC's kernel driver) through an
 * AF_PACKET socket of our own, with a virtio-net header in front of every
 * frame (PACKET_VNET_HDR).
 *
 * Why: DPDK's af_packet PMD is bound by packets (about 450,000 a second
 * on the test bed at any size): every 4 KiB frame pays its share of a
 * system call and the kernel's whole per-skb path, on both sides. Kernel
 * TCP over the same veth moves 64 KiB segments (GSO), which is why it was
 * twice as fast. With the virtio-net header an AF_PACKET socket can hand
 * the kernel one UDP GSO super-frame (VIRTIO_NET_HDR_GSO_UDP_L4): one
 * Ethernet/IP/UDP header and up to 64 segments of gso_size UDP payload
 * each. veth passes it to its peer unsegmented, where an AF_PACKET socket
 * with the header receives it whole with gso_size; a NIC with UDP
 * segmentation offload cuts it in hardware, any other device in software
 * (validate_xmit_skb), so the wire always carries ordinary frames.
 * Measured with a standalone prototype between two namespaces over veth
 * (MTU 9000, 4142-byte UDP payloads, 2026-12-02, load 2-3): one frame per
 * segment 4.3-5.2 Gb/s (131-157 kpps, 32 frames a sendmmsg), 15 segments
 * per super-frame 20.6-23.7 Gb/s (620-715 k segments/s), received whole
 * (no truncation) and split by the receiver at that rate
 * (docs/architecture.md, "The net_mrpkt port").
 *
 * Transmit: the frames of a burst that go to the same destination QP on
 * the same path (the same Ethernet, IP and UDP header and BTH dqpn) and
 * have the same UDP payload length (the last may be shorter) become one
 * super-frame. Each segment keeps its own MetaRoCE headers and ICRC (UDP
 * GSO copies only the IP and UDP headers); the UDP checksum is left to
 * the kernel (VIRTIO_NET_HDR_F_NEEDS_CSUM, which GSO requires: nothing
 * computes it on veth, a NIC or software GSO does). Frames of other flows
 * in between do not stop a flow's coalescing (the pacer interleaves a
 * connection's paths); a flow's frames keep their order. One sendmmsg per
 * burst sends every super-frame and single frame; the kernel copies the
 * data (zero-copy mbufs included) before it returns, so no mbuf outlives
 * the call (the lifetime rule of mrdp_io.c).
 *
 * Receive: a TPACKET_V2 ring of 64 KiB slots, so a super-frame lands
 * whole in one slot: the kernel's only copy, and no system call. Its
 * segments are handed to the engine one at a time where they lie, each
 * with its own Ethernet/IP/UDP header (lengths and the IPv4 header
 * checksum rewritten) written just in front of its payload, over the
 * tail of the segment before, which the engine is done with: the engine
 * sees ordinary frames and copies each payload once, to its destination.
 * The kernel's word on the UDP checksum (NEEDS_CSUM: a local sender's
 * partial checksum; DATA_VALID: checked) is passed on as the mbuf's L4
 * checksum status. rx=block puts the ring in TPACKET_V3 blocks instead,
 * a wake-up per block of frames rather than per frame, for several
 * processes per host (mrdp_pkt_block.c; a lone frame waits up to
 * block_ms, so rx=frame is the default). rx=frame's receive hold
 * (mrdp_pkt_hold.c, dp_rx_hold_us) wakes the sleeper by a timer instead
 * of per frame while a one-way stream comes in.
 *
 * What the socket does besides: PACKET_IGNORE_OUTGOING (no copy of the
 * host's own transmitted frames), PACKET_QDISC_BYPASS (as the PMD's
 * transmit bypasses tc egress anyway), deep socket buffers instead of
 * mapped rings. The steering filter (mrdp_steer.c) attaches to it as to
 * the PMD's socket: it reads the first segment's headers, which are every
 * segment's since dqpn is part of the coalescing key. dp_silence's tcx
 * program runs after the socket took the frame, as before.
 *
 * gso=no sends every frame singly and claims no checksum offload, so the
 * frames are what the af_packet PMD sends: for a peer that receives with
 * the af_packet PMD (which cannot take a super-frame: it would be
 * truncated in its ring slot).
 */
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "mrdp_pkt_int.h"

/* Debian 12's linux/virtio_net.h predates it (Linux 6.2 added it to the
 * uapi header; the kernel accepts it on AF_PACKET since 5.x, and veth
 * carries SKB_GSO_UDP_L4). */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif
#ifndef PACKET_IGNORE_OUTGOING
#define PACKET_IGNORE_OUTGOING 23
#endif

#define ETH_HLEN_ 14
#define IP4_HLEN 20
#define IP6_HLEN 40
#define UDP_HLEN 8
/* BTH dqpn: bytes 4..7 of the BTH (reserved byte + 24-bit QPN). */
#define BTH_DQPN_OFF 4
#define TX_MAX MRDP_PKT_TX_MAX
#define TX_IOV_MAX MRDP_PKT_TX_IOV_MAX
/* The kernel's UIO_MAXIOV: iovecs of one message. */
#define MSG_IOV_MAX 1024
/* Receive ring: slots of 64 KiB, one a block (the kernel allocates a
 * block as a power of two of pages: nothing is lost), each taking a
 * super-frame whole (MRDP_PKT_FRAME_MAX, the kernel's slot header and the
 * virtio-net header: 76 bytes on 6.x, RING_SLOT_OVERHEAD kept), so the
 * kernel copies a frame once, into the ring, and the engine reads it
 * there. 128 slots: 8 MiB, the af_packet PMD's ring (2,048 slots of 4 KiB
 * frames); an ordinary frame takes a slot too, so the ring holds 128
 * frames of any size. */
#define RING_SLOT (64u << 10)
#define RING_SLOT_OVERHEAD 96u
#define RING_SLOTS 128u
#define RCVBUF (16 << 20)
#define SNDBUF (4 << 20)

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static void put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

int mrdp_pkt_is(const char *args)
{
	return strncmp(args, "net_mrpkt", 9) == 0;
}

_Static_assert(MRDP_PKT_FRAME_MAX + RING_SLOT_OVERHEAD <= RING_SLOT,
	       "a super-frame fits a ring slot");

/* A frame that may join a super-frame: Ethernet, IPv4 without options
 * and not a fragment or IPv6 without extension headers, UDP whose length
 * is the frame's rest, and a BTH. Its L4 offset, or 0. */
static unsigned udp_off(const struct mrdp_pkt_frame *f)
{
	const uint8_t *h = f->hdr;
	unsigned l4;

	if (f->hdr_len < ETH_HLEN_ + IP4_HLEN + UDP_HLEN + 8)
		return 0;
	switch (be16(h + 12)) {
	case 0x0800:
		if (h[14] != 0x45 || h[23] != IPPROTO_UDP ||
		    (be16(h + 20) & 0x3fff) != 0 ||
		    ETH_HLEN_ + (size_t)be16(h + 16) != f->len)
			return 0;
		l4 = ETH_HLEN_ + IP4_HLEN;
		break;
	case 0x86dd:
		if (f->hdr_len < ETH_HLEN_ + IP6_HLEN + UDP_HLEN + 8 ||
		    h[20] != IPPROTO_UDP ||
		    ETH_HLEN_ + IP6_HLEN + (size_t)be16(h + 18) != f->len)
			return 0;
		l4 = ETH_HLEN_ + IP6_HLEN;
		break;
	default:
		return 0;
	}
	if ((size_t)be16(h + l4 + 4) != f->len - l4 || f->len - l4 <= UDP_HLEN)
		return 0;
	return l4;
}

/* Same flow: the headers a segment inherits from the super-frame, and the
 * BTH dqpn the receiver's steering filter reads in the first one. */
static int same_flow(const uint8_t *a, const uint8_t *b, unsigned l4)
{
	if (memcmp(a, b, ETH_HLEN_) != 0)
		return 0;
	if (l4 == ETH_HLEN_ + IP4_HLEN) {
		if (a[15] != b[15] || a[20] != b[20] || a[21] != b[21] ||
		    a[22] != b[22] || memcmp(a + 26, b + 26, 8) != 0)
			return 0;
	} else if (memcmp(a + 14, b + 14, 4) != 0 || a[21] != b[21] ||
		   memcmp(a + 22, b + 22, 32) != 0) {
		return 0;
	}
	return memcmp(a + l4, b + l4, 4) == 0 &&
	       memcmp(a + l4 + UDP_HLEN + BTH_DQPN_OFF,
		      b + l4 + UDP_HLEN + BTH_DQPN_OFF, 4) == 0;
}

unsigned mrdp_pkt_plan(const struct mrdp_pkt_frame *f, unsigned n,
		       unsigned *group)
{
	struct {
		unsigned first, n, l4, iov;
		size_t seg, total;
		int open;
	} g[TX_MAX];
	unsigned i, ng = 0;

	for (i = 0; i < n && ng < TX_MAX; i++) {
		unsigned l4 = udp_off(&f[i]);
		size_t seg = l4 ? f[i].len - l4 - UDP_HLEN : 0;
		int j = -1;

		if (l4) {
			/* The flow's latest super-frame, if any. */
			for (j = (int)ng - 1; j >= 0; j--)
				if (g[j].l4 == l4 &&
				    same_flow(f[g[j].first].hdr, f[i].hdr, l4))
					break;
		}
		if (j >= 0) {
			/* The receiver's ring slot (MRDP_PKT_FRAME_MAX),
			 * within the IP packet's 64 KiB. */
			size_t max = MRDP_PKT_FRAME_MAX - l4 - UDP_HLEN;

			if (g[j].open && seg <= g[j].seg &&
			    g[j].n < MRDP_PKT_MAX_SEGS &&
			    g[j].total + seg <= max &&
			    g[j].iov + f[i].nseg <= MSG_IOV_MAX) {
				g[j].n++;
				g[j].total += seg;
				g[j].iov += f[i].nseg;
				/* A shorter segment can only be the last. */
				if (seg < g[j].seg)
					g[j].open = 0;
				group[i] = (unsigned)j;
				continue;
			}
			/* No later frame of the flow may go there: that
			 * would pass this one. */
			g[j].open = 0;
		}
		g[ng].first = i;
		g[ng].n = 1;
		g[ng].l4 = l4;
		g[ng].iov = 2 + f[i].nseg;
		g[ng].seg = seg;
		g[ng].total = seg;
		g[ng].open = l4 != 0;
		group[i] = ng++;
	}
	/* Frames beyond TX_MAX groups (n is at most TX_MAX: none). */
	for (; i < n; i++)
		group[i] = ng - 1;
	return ng;
}

/* The header of message gi, whose first frame is m and whose frames'
 * UDP payloads sum to total (nf frames of seg bytes, the last maybe
 * fewer): lengths, checksums and the virtio-net header. */
static void build_hdr(struct mrdp_pkt *k, unsigned gi, struct rte_mbuf *m,
		      unsigned l4, unsigned nf, size_t seg, size_t total)
{
	struct virtio_net_hdr *vh = &k->vh[gi];
	uint8_t *h = k->hdr[gi];
	int v4 = l4 == ETH_HLEN_ + IP4_HLEN;
	int need_csum;

	memset(vh, 0, sizeof(*vh));
	memcpy(h, rte_pktmbuf_mtod(m, const uint8_t *), l4 + UDP_HLEN);
	put_be16(h + l4 + 4, (uint16_t)(UDP_HLEN + total));
	if (v4) {
		struct rte_ipv4_hdr *ip =
			(struct rte_ipv4_hdr *)(h + ETH_HLEN_);

		ip->total_length = rte_cpu_to_be_16(
			(uint16_t)(IP4_HLEN + UDP_HLEN + total));
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		/* Over IPv4 a single frame goes without a UDP checksum
		 * (what the af_packet PMD sends) unless one was asked for;
		 * a super-frame must have the kernel's. */
		need_csum = nf > 1 || (k->udp_csum &&
				       (m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM));
		if (need_csum)
			put_be16(h + l4 + 6,
				 rte_be_to_cpu_16(rte_ipv4_phdr_cksum(ip, 0)));
		else if (m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM)
			put_be16(h + l4 + 6, 0);
	} else {
		struct rte_ipv6_hdr *ip =
			(struct rte_ipv6_hdr *)(h + ETH_HLEN_);

		ip->payload_len =
			rte_cpu_to_be_16((uint16_t)(UDP_HLEN + total));
		/* MR-ENC-12: IPv6 always carries one. */
		need_csum = nf > 1 || (m->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM);
		if (need_csum)
			put_be16(h + l4 + 6,
				 rte_be_to_cpu_16(rte_ipv6_phdr_cksum(ip, 0)));
	}
	if (need_csum) {
		/* The pseudo-header sum is in the field, as the kernel's
		 * CHECKSUM_PARTIAL wants it. */
		vh->flags = VIRTIO_NET_HDR_F_NEEDS_CSUM;
		vh->csum_start = (uint16_t)l4;
		vh->csum_offset = 6;
	}
	if (nf > 1) {
		vh->gso_type = VIRTIO_NET_HDR_GSO_UDP_L4;
		vh->gso_size = (uint16_t)seg;
		vh->hdr_len = (uint16_t)(l4 + UDP_HLEN);
	}
}

/* iovecs of frame m from byte off of its first segment; 0 or -1 when
 * they do not fit. */
static int add_iov(struct mrdp_pkt *k, unsigned *ni, struct rte_mbuf *m,
		   size_t off)
{
	for (; m; m = m->next, off = 0) {
		if (m->data_len <= off)
			continue;
		if (*ni == TX_IOV_MAX)
			return -1;
		k->iov[*ni].iov_base =
			rte_pktmbuf_mtod_offset(m, uint8_t *, off);
		k->iov[(*ni)++].iov_len = m->data_len - off;
	}
	return 0;
}

uint16_t mrdp_pkt_tx(struct mrdp_pkt *k, struct rte_mbuf **v, uint16_t n)
{
	struct mrdp_pkt_frame f[TX_MAX];
	unsigned grp[TX_MAX], first[TX_MAX], cnt[TX_MAX];
	unsigned ord[TX_MAX], taken[TX_MAX];
	struct rte_mbuf *keep[TX_MAX];
	unsigned i, g, ng, nmsg, ni = 0, sent = 0, ntaken = 0, nkeep = 0;

	if (n > TX_MAX)
		n = TX_MAX;
	for (i = 0; i < n; i++) {
		f[i].hdr = rte_pktmbuf_mtod(v[i], const uint8_t *);
		f[i].hdr_len = v[i]->data_len;
		f[i].len = v[i]->pkt_len;
		f[i].nseg = v[i]->nb_segs;
	}
	if (k->gso) {
		ng = mrdp_pkt_plan(f, n, grp);
	} else {
		for (i = 0; i < n; i++)
			grp[i] = i;
		ng = n;
	}
	/* Each message's frames in their order: counting sort by group. */
	memset(cnt, 0, ng * sizeof(cnt[0]));
	for (i = 0; i < n; i++)
		cnt[grp[i]]++;
	for (g = 0, i = 0; g < ng; g++) {
		first[g] = i;
		i += cnt[g];
		cnt[g] = 0;
	}
	for (i = 0; i < n; i++)
		ord[first[grp[i]] + cnt[grp[i]]++] = i;

	for (nmsg = 0; nmsg < ng; nmsg++) {
		struct rte_mbuf *m0 = v[ord[first[nmsg]]];
		unsigned nf = cnt[nmsg], l4, start = ni, q;
		size_t total = 0, seg;
		int full = 0;

		l4 = k->gso || (m0->ol_flags & RTE_MBUF_F_TX_UDP_CKSUM)
			     ? udp_off(&f[ord[first[nmsg]]])
			     : 0;
		if (ni + 2 > TX_IOV_MAX)
			break;
		if (l4) {
			seg = m0->pkt_len - l4 - UDP_HLEN;
			for (q = 0; q < nf; q++)
				total += v[ord[first[nmsg] + q]]->pkt_len - l4 -
					 UDP_HLEN;
			build_hdr(k, nmsg, m0, l4, nf, seg, total);
			k->iov[ni].iov_base = &k->vh[nmsg];
			k->iov[ni++].iov_len = sizeof(k->vh[nmsg]);
			k->iov[ni].iov_base = k->hdr[nmsg];
			k->iov[ni++].iov_len = l4 + UDP_HLEN;
			for (q = 0; q < nf && !full; q++)
				full = add_iov(k, &ni, v[ord[first[nmsg] + q]],
					       l4 + UDP_HLEN);
		} else {
			memset(&k->vh[nmsg], 0, sizeof(k->vh[nmsg]));
			k->iov[ni].iov_base = &k->vh[nmsg];
			k->iov[ni++].iov_len = sizeof(k->vh[nmsg]);
			full = add_iov(k, &ni, m0, 0);
		}
		if (full) {
			ni = start;
			break;
		}
		memset(&k->msg[nmsg], 0, sizeof(k->msg[nmsg]));
		k->msg[nmsg].msg_hdr.msg_iov = &k->iov[start];
		k->msg[nmsg].msg_hdr.msg_iovlen = ni - start;
	}

	/* Send; a message the kernel refuses for a reason other than a full
	 * socket buffer is dropped (it would be refused again), as the PMD
	 * drops what its sendto refuses: its frames count as taken. */
	g = 0;
	while (g < nmsg) {
		int r = sendmmsg(k->fd, &k->msg[g], nmsg - g, MSG_DONTWAIT);

		k->c->tx_calls++;
		if (r > 0) {
			for (i = g; i < g + (unsigned)r; i++)
				if (cnt[i] > 1) {
					k->c->tx_gso_frames++;
					k->c->tx_gso_segs += cnt[i];
				}
			g += (unsigned)r;
			continue;
		}
		if (r < 0 &&
		    (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			break;
		MRDP_LOG("net_mrpkt: send: %s (%u frames dropped)\n",
			 r < 0 ? strerror(errno) : "nothing sent", cnt[g]);
		k->c->tx_drop[MRDP_TXD_PORT] += cnt[g];
		g++;
	}
	sent = g;
	/* v = the taken frames (in the order sent), then the others in
	 * their order. */
	{
		unsigned char is[TX_MAX];

		memset(is, 0, n);
		for (g = 0; g < sent; g++)
			for (i = 0; i < cnt[g]; i++) {
				taken[ntaken] = ord[first[g] + i];
				is[taken[ntaken++]] = 1;
			}
		for (i = 0; i < n; i++)
			if (!is[i])
				keep[nkeep++] = v[i];
		for (i = 0; i < ntaken; i++)
			keep[nkeep + i] = v[taken[i]];
		for (i = 0; i < ntaken; i++)
			v[i] = keep[nkeep + i];
		for (i = 0; i < nkeep; i++)
			v[ntaken + i] = keep[i];
	}
	for (i = 0; i < ntaken; i++) {
		mrdp_pkt_hold_tx(&k->hold, rte_pktmbuf_pkt_len(v[i]));
		rte_pktmbuf_free(v[i]);
	}
	return (uint16_t)ntaken;
}

static struct tpacket2_hdr *slot(struct mrdp_pkt *k, unsigned i)
{
	return (struct tpacket2_hdr *)(void *)(k->ring +
					       (size_t)i * k->slot_sz);
}

/* The extbuf's free callback: the mbuf handed out for one frame came
 * back (rx_frame frees every frame before it returns). */
static void frame_back(void *addr, void *opaque)
{
	(void)addr;
	((struct mrdp_pkt *)opaque)->out--;
}

/* Hand frame f (len bytes, in the ring) to fn as an mbuf pointing at it:
 * 0, or -1 when no mbuf was free (the frame is dropped). */
static int hand(struct mrdp_pkt *k, uint8_t *f, size_t len, uint64_t ol,
		mrdp_pkt_rx_fn fn, void *arg, int *work)
{
	struct rte_mbuf *m = rte_pktmbuf_alloc(k->pool);

	if (!m)
		return -1;
	rte_mbuf_ext_refcnt_set(&k->shinfo, 1);
	rte_pktmbuf_attach_extbuf(m, f, RTE_BAD_IOVA, (uint16_t)len,
				  &k->shinfo);
	m->data_off = 0;
	m->data_len = (uint16_t)len;
	m->pkt_len = (uint32_t)len;
	m->ol_flags |= ol;
	mrdp_pkt_hold_rx(&k->hold, len);
	if (k->hold.held)
		k->c->rx_hold_frames++;
	k->out++;
	*work += fn(arg, m);
	if (k->out) {
		/* fn kept the frame: the slot would be written again under
		 * it (mrdp_pkt_rx_each's contract). */
		MRDP_LOG("net_mrpkt: a received frame was not freed\n");
		abort();
	}
	return 0;
}

/* Segment s of the super-frame at f, whose headers (hl bytes, saved in
 * k->shdr) end at f + hl, payload seg bytes a segment: its own headers
 * are written just in front of its payload, over the tail of segment
 * s - 1, which the engine is done with (frames are handed one at a time
 * and come back before the next is written). Its frame: *fl bytes from
 * the return value. */
static uint8_t *seg_frame(struct mrdp_pkt *k, uint8_t *f, size_t off, size_t sl,
			  size_t *fl)
{
	unsigned l4 = k->sl4, hl = l4 + UDP_HLEN;
	uint8_t *o = f + off;

	memcpy(o, k->shdr, hl);
	put_be16(o + l4 + 4, (uint16_t)(UDP_HLEN + sl));
	if (l4 == ETH_HLEN_ + IP4_HLEN) {
		struct rte_ipv4_hdr *ip =
			(struct rte_ipv4_hdr *)(o + ETH_HLEN_);

		ip->total_length =
			rte_cpu_to_be_16((uint16_t)(IP4_HLEN + UDP_HLEN + sl));
		ip->hdr_checksum = 0;
		ip->hdr_checksum = rte_ipv4_cksum(ip);
		/* "No checksum": the kernel vouched for the super-frame's
		 * (the status the caller passes). */
		put_be16(o + l4 + 6, 0);
	} else {
		struct rte_ipv6_hdr *ip =
			(struct rte_ipv6_hdr *)(o + ETH_HLEN_);

		ip->payload_len = rte_cpu_to_be_16((uint16_t)(UDP_HLEN + sl));
		/* IPv6 may not say "none" (MR-ENC-12): the segment's
		 * pseudo-header sum, as a partial checksum, with the
		 * status. */
		put_be16(o + l4 + 6,
			 rte_be_to_cpu_16(rte_ipv6_phdr_cksum(ip, 0)));
	}
	*fl = hl + sl;
	return o;
}

int mrdp_pkt_frame_each(struct mrdp_pkt *k, uint8_t *base, size_t room,
			unsigned mac, size_t snaplen, size_t flen,
			unsigned *left, mrdp_pkt_rx_fn fn, void *arg, int *work)
{
	const struct virtio_net_hdr *vh;
	uint8_t *f = base + mac;
	size_t len = snaplen, pay;
	unsigned gso;
	uint64_t ol = 0;

	if (snaplen < flen || mac < sizeof(struct virtio_net_hdr) ||
	    (size_t)mac + len > room) {
		/* Cut by the slot: a super-frame over MRDP_PKT_FRAME_MAX
		 * (a sender that does not keep to it). */
		k->c->rx_gso_bad++;
		return 1;
	}
	vh = (const struct virtio_net_hdr *)(const void *)(f - sizeof(*vh));
	gso = vh->gso_type & ~VIRTIO_NET_HDR_GSO_ECN;
	if (vh->flags &
	    (VIRTIO_NET_HDR_F_NEEDS_CSUM | VIRTIO_NET_HDR_F_DATA_VALID))
		ol |= RTE_MBUF_F_RX_L4_CKSUM_GOOD;
	if (gso == VIRTIO_NET_HDR_GSO_NONE ||
	    (gso == VIRTIO_NET_HDR_GSO_UDP_L4 && !vh->gso_size)) {
		if (len > k->max_frame) {
			/* Longer than a frame of the RoCE MTU. */
			k->c->rx_drop[MRDP_RXD_NOT_OURS]++;
			return 1;
		}
		if (hand(k, f, len, ol, fn, arg, work))
			k->c->rx_gso_bad++;
		--*left;
		return 1;
	}
	if (gso != VIRTIO_NET_HDR_GSO_UDP_L4) {
		/* The host's TCP (or UFO): never ours. */
		k->c->rx_drop[MRDP_RXD_NOT_OURS]++;
		return 1;
	}
	if (k->soff == 0) {
		/* First visit: the super-frame's headers, kept for every
		 * segment (the first one's are overwritten by the first
		 * segment's lengths). */
		struct mrdp_pkt_frame fr = { .hdr = f,
					     .hdr_len = len,
					     .len = len };

		k->sl4 = udp_off(&fr);
		if (!k->sl4 ||
		    (size_t)k->sl4 + UDP_HLEN + vh->gso_size > k->max_frame) {
			k->c->rx_gso_bad++;
			return 1;
		}
		memcpy(k->shdr, f, k->sl4 + UDP_HLEN);
		k->c->rx_gso_frames++;
	}
	pay = len - k->sl4 - UDP_HLEN;
	while (k->soff < pay && *left) {
		size_t sl = pay - k->soff < vh->gso_size ? pay - k->soff
							 : vh->gso_size;
		size_t fl;
		uint8_t *o = seg_frame(k, f, k->soff, sl, &fl);

		k->soff += sl;
		--*left;
		if (hand(k, o, fl, ol | RTE_MBUF_F_RX_IP_CKSUM_GOOD, fn, arg,
			 work)) {
			k->c->rx_gso_bad++;
			continue;
		}
		k->c->rx_gso_segs++;
	}
	if (k->soff < pay)
		return 0;
	k->soff = 0;
	return 1;
}

/* The kernel marks a slot (a block) TP_STATUS_LOSING when it dropped
 * frames for a full ring since the statistics were last read: read them
 * (which resets them), so the cost is a system call per episode of loss,
 * none else. */
void mrdp_pkt_ring_drops(struct mrdp_pkt *k)
{
	struct tpacket_stats_v3 st; /* a tpacket_stats, then more */
	socklen_t len = k->block ? sizeof(st) : sizeof(struct tpacket_stats);

	if (getsockopt(k->fd, SOL_PACKET, PACKET_STATISTICS, &st, &len) == 0)
		k->c->rx_ring_drops += st.tp_drops;
}

int mrdp_pkt_rx_each(struct mrdp_pkt *k, unsigned max, mrdp_pkt_rx_fn fn,
		     void *arg)
{
	unsigned left = max;
	int work = 0;

	if (k->block)
		return mrdp_pkt_block_rx(k, max, fn, arg);
	while (left) {
		struct tpacket2_hdr *h = slot(k, k->cur);
		uint32_t st = __atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE);

		if (!(st & TP_STATUS_USER))
			break;
		if (st & TP_STATUS_LOSING)
			mrdp_pkt_ring_drops(k);
		if (!mrdp_pkt_frame_each(k, (uint8_t *)h, k->slot_sz, h->tp_mac,
					 h->tp_snaplen, h->tp_len, &left, fn,
					 arg, &work))
			break;
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		k->cur = (k->cur + 1) % k->nslots;
	}
	return work;
}

int mrdp_pkt_fd(const struct mrdp_pkt *k)
{
	return k->fd;
}

unsigned mrdp_pkt_rx_burst(const struct mrdp_pkt *k)
{
	/* A 256 KiB block holds up to 64 frames of a 4 KiB MTU, or four
	 * super-frames of 64 segments: most blocks go in one pass. So does
	 * a hold's period (mrdp_pkt_hold.c): one round, one ACK per QP for
	 * all of it, not one per 32 frames. */
	return k->block || k->hold.held ? 256u : MRDP_BURST;
}

void mrdp_pkt_drain(struct mrdp_pkt *k)
{
	unsigned n;

	if (k->block) {
		mrdp_pkt_block_drain(k);
		return;
	}
	/* At most one ring: whatever comes meanwhile passed the filter. */
	for (n = 0; n < k->nslots; n++) {
		struct tpacket2_hdr *h = slot(k, k->cur);

		if (!(__atomic_load_n(&h->tp_status, __ATOMIC_ACQUIRE) &
		      TP_STATUS_USER))
			break;
		__atomic_store_n(&h->tp_status, TP_STATUS_KERNEL,
				 __ATOMIC_RELEASE);
		k->cur = (k->cur + 1) % k->nslots;
	}
	k->soff = 0;
}

/* mrdp_pkt_rx: each frame copied into an mbuf of its own. */
struct rx_copy {
	struct mrdp_pkt *k;
	struct rte_mbuf **v;
	uint16_t n;
};

static int rx_copy_one(void *arg, struct rte_mbuf *m)
{
	struct rx_copy *c = arg;
	struct rte_mbuf *o = rte_pktmbuf_alloc(c->k->pool);

	if (!o || m->data_len > rte_pktmbuf_tailroom(o)) {
		rte_pktmbuf_free(o);
		rte_pktmbuf_free(m);
		c->k->c->rx_gso_bad++;
		return 0;
	}
	memcpy(rte_pktmbuf_append(o, m->data_len),
	       rte_pktmbuf_mtod(m, const void *), m->data_len);
	o->ol_flags |= m->ol_flags & ~RTE_MBUF_F_EXTERNAL;
	rte_pktmbuf_free(m);
	c->v[c->n++] = o;
	return 1;
}

uint16_t mrdp_pkt_rx(struct mrdp_pkt *k, struct rte_mbuf **v, uint16_t n)
{
	struct rx_copy c = { .k = k, .v = v, .n = 0 };

	(void)mrdp_pkt_rx_each(k, n, rx_copy_one, &c);
	return c.n;
}

int mrdp_pkt_ring_map(struct mrdp_pkt *k, size_t len)
{
	k->ring_len = len;
	k->ring = mmap(NULL, k->ring_len, PROT_READ | PROT_WRITE,
		       MAP_SHARED | MAP_LOCKED, k->fd, 0);
	if (k->ring == MAP_FAILED) /* RLIMIT_MEMLOCK: unlocked then */
		k->ring = mmap(NULL, k->ring_len, PROT_READ | PROT_WRITE,
			       MAP_SHARED, k->fd, 0);
	if (k->ring == MAP_FAILED) {
		k->ring = NULL;
		return -errno;
	}
	return 0;
}

/* The receive ring (after PACKET_VNET_HDR, before bind): 0 or -errno. */
static int ring_open(struct mrdp_pkt *k)
{
	int v = TPACKET_V2;
	struct tpacket_req req;

	if (k->block)
		return mrdp_pkt_block_open(k);
	k->slot_sz = RING_SLOT;
	k->nslots = RING_SLOTS;
	if (setsockopt(k->fd, SOL_PACKET, PACKET_VERSION, &v, sizeof(v)))
		return -errno;
	memset(&req, 0, sizeof(req));
	req.tp_frame_size = k->slot_sz;
	req.tp_block_size = k->slot_sz;
	req.tp_block_nr = k->nslots;
	req.tp_frame_nr = k->nslots;
	if (setsockopt(k->fd, SOL_PACKET, PACKET_RX_RING, &req, sizeof(req)))
		return -errno;
	return mrdp_pkt_ring_map(k,
				 (size_t)req.tp_block_size * req.tp_block_nr);
}

/* What the devargs ask for. */
struct pkt_args {
	char ifn[IF_NAMESIZE + 1];
	int gso;
	int block;
	unsigned block_ms;
};

static int is_key(const char *kv, size_t kl, const char *key)
{
	return kl == strlen(key) && !strncmp(kv, key, kl);
}

/* The devargs: iface= (required), gso=yes|no, rx=frame|block,
 * block_ms=1..MRDP_PKT_BLOCK_MS_MAX (rx=block only); nothing else. */
static int parse_args(const char *args, struct pkt_args *a, char *err,
		      size_t errlen)
{
	const char *s = strchr(args, ',');
	char v[16], *end;
	unsigned long ms;

	a->gso = 1;
	a->block = 0;
	a->block_ms = MRDP_PKT_BLOCK_MS_DEFAULT;
	for (; s && *s; s = strchr(s + 1, ',')) {
		const char *kv = s + 1, *e = strchr(kv, '=');
		size_t kl = e ? (size_t)(e - kv) : strlen(kv);

		if (!*kv)
			continue;
		if (!is_key(kv, kl, "iface") && !is_key(kv, kl, "gso") &&
		    !is_key(kv, kl, "rx") && !is_key(kv, kl, "block_ms")) {
			snprintf(err, errlen,
				 "port '%s': net_mrpkt takes iface=, "
				 "gso=yes|no, rx=frame|block and block_ms=, "
				 "not '%.*s'",
				 args, (int)kl, kv);
			return -EINVAL;
		}
	}
	if (!mrdp_devarg(args, "iface", a->ifn, sizeof(a->ifn)) || !*a->ifn) {
		snprintf(err, errlen,
			 "port '%s': net_mrpkt needs iface=<interface>", args);
		return -EINVAL;
	}
	if (mrdp_devarg(args, "gso", v, sizeof(v))) {
		if (!strcmp(v, "yes"))
			a->gso = 1;
		else if (!strcmp(v, "no"))
			a->gso = 0;
		else {
			snprintf(err, errlen,
				 "port '%s': gso=%s: say yes or no", args, v);
			return -EINVAL;
		}
	}
	if (mrdp_devarg(args, "rx", v, sizeof(v))) {
		if (!strcmp(v, "frame"))
			a->block = 0;
		else if (!strcmp(v, "block"))
			a->block = 1;
		else {
			snprintf(err, errlen,
				 "port '%s': rx=%s: say frame (a wake-up per "
				 "frame) or block (per block of frames)",
				 args, v);
			return -EINVAL;
		}
	}
	if (mrdp_devarg(args, "block_ms", v, sizeof(v))) {
		ms = strtoul(v, &end, 10);
		if (!a->block || *end || end == v || ms < 1 ||
		    ms > MRDP_PKT_BLOCK_MS_MAX) {
			if (a->block)
				snprintf(err, errlen,
					 "port '%s': block_ms=%s: say 1..%u "
					 "(ms a block waits for more frames)",
					 args, v, MRDP_PKT_BLOCK_MS_MAX);
			else
				snprintf(err, errlen,
					 "port '%s': block_ms= goes with "
					 "rx=block",
					 args);
			return -EINVAL;
		}
		a->block_ms = (unsigned)ms;
	}
	return 0;
}

int mrdp_pkt_port_open(struct mrdp_dev *d, unsigned idx, char *err,
		       size_t errlen)
{
	struct mrdp_plane *p = &d->plane[idx];
	const char *args = d->conf.ports[idx];
	struct pkt_args a;
	const char *ifn = a.ifn;
	struct sockaddr_ll sll;
	struct mrdp_pkt *k;
	struct ifreq ifr;
	int one = 1, ret, gso;
	int rcv = RCVBUF, snd = SNDBUF;
	const unsigned hold_us =
		(unsigned)mr_knob_get(&d->knobs, MR_KNOB_DP_RX_HOLD_US);

	ret = parse_args(args, &a, err, errlen);
	if (ret)
		return ret;
	gso = a.gso;
	k = aligned_alloc(64, (sizeof(*k) + 63) / 64 * 64);
	if (!k) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	memset(k, 0, sizeof(*k));
	k->fd = -1;
	k->hold_efd = -1;
	k->hold_tfd = -1;
	k->gso = gso;
	k->block = a.block;
	k->block_ms = a.block_ms;
	k->udp_csum = d->udp_csum;
	k->pool = d->pool;
	k->c = &p->c;
	k->max_frame = d->max_frame;
	/* The received frames' mbufs point into the ring: nothing to free
	 * when one comes back but the count (frame_back). */
	k->shinfo.free_cb = frame_back;
	k->shinfo.fcb_opaque = k;
	/* Protocol 0: nothing is queued before the bind below. */
	k->fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0);
	if (k->fd < 0) {
		ret = -errno;
		snprintf(err, errlen, "port '%s': AF_PACKET socket: %s%s", args,
			 strerror(errno),
			 errno == EPERM ? " (needs CAP_NET_RAW)" : "");
		goto fail;
	}
	memset(&ifr, 0, sizeof(ifr));
	if (strlen(ifn) >= sizeof(ifr.ifr_name)) {
		ret = -EINVAL;
		snprintf(err, errlen, "port '%s': interface name too long",
			 args);
		goto fail;
	}
	memcpy(ifr.ifr_name, ifn, strlen(ifn));
	if (ioctl(k->fd, SIOCGIFMTU, &ifr) != 0) {
		ret = -ENODEV;
		snprintf(err, errlen,
			 "port '%s': no interface '%s' in this network "
			 "namespace",
			 args, ifn);
		goto fail;
	}
	if ((size_t)ifr.ifr_mtu + ETH_HLEN_ < d->max_frame) {
		ret = -EINVAL;
		snprintf(err, errlen,
			 "interface %s has MTU %d but RoCE MTU %u needs %zu: "
			 "raise it (ip link set %s mtu 9000) or lower the "
			 "record's mtu",
			 ifn, ifr.ifr_mtu, d->conf.mtu,
			 d->max_frame - ETH_HLEN_, ifn);
		goto fail;
	}
	if (setsockopt(k->fd, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof(one)) !=
	    0) {
		ret = -errno;
		snprintf(err, errlen, "port '%s': PACKET_VNET_HDR: %s", args,
			 strerror(errno));
		goto fail;
	}
	/* Not fatal: an older kernel copies our own transmitted frames
	 * back (the engine drops them) and goes through the qdisc. */
	(void)setsockopt(k->fd, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one,
			 sizeof(one));
	(void)setsockopt(k->fd, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
			 sizeof(one));
	/* The socket's queues are the rings: deep enough for a receiver
	 * off the CPU for a few scheduler ticks (as the PMD's 8 MiB ring).
	 * FORCE needs CAP_NET_ADMIN; otherwise what rmem_max allows. */
	if (setsockopt(k->fd, SOL_SOCKET, SO_RCVBUFFORCE, &rcv, sizeof(rcv)))
		(void)setsockopt(k->fd, SOL_SOCKET, SO_RCVBUF, &rcv,
				 sizeof(rcv));
	if (setsockopt(k->fd, SOL_SOCKET, SO_SNDBUFFORCE, &snd, sizeof(snd)))
		(void)setsockopt(k->fd, SOL_SOCKET, SO_SNDBUF, &snd,
				 sizeof(snd));
	ret = ring_open(k);
	if (ret) {
		snprintf(err, errlen, "port '%s': receive ring: %s", args,
			 strerror(-ret));
		goto fail;
	}
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(ifn);
	if (bind(k->fd, (struct sockaddr *)&sll, sizeof(sll)) != 0) {
		ret = -errno;
		snprintf(err, errlen, "port '%s': bind to %s: %s", args, ifn,
			 strerror(errno));
		goto fail;
	}
	{
		/* The first touch of a ring page costs 7-40 us on the test
		 * VM: pay it now, not in the first frames (mrdp_warm.c). */
		uint64_t t0 = mrdp_now();
		long pg = mrdp_warm_mapping(k->fd);

		MRDP_LOG("%s: plane %u: %ld ring pages touched in %llu us\n",
			 d->conf.name, idx, pg,
			 (unsigned long long)(mrdp_now() - t0) / 1000);
	}
	p->pkt = k;
	p->port_id = RTE_MAX_ETHPORTS; /* no ethdev */
	snprintf(p->vdev_name, sizeof(p->vdev_name), "mrpkt:%s", ifn);
	p->started = 1;
	p->wait_fd = k->fd;
	p->wait_xsk = 0;
	/* The receive hold (mrdp_pkt_hold.c): rx=block has the kernel's
	 * block timer instead. Without its fds the port wakes per frame. */
	if (!k->block && hold_us) {
		int w = mrdp_pkt_hold_open(k, hold_us);

		if (w >= 0)
			p->wait_fd = w;
		else
			MRDP_LOG("%s: plane %u: no receive hold: %s\n",
				 d->conf.name, idx, strerror(-w));
	}
	/* gso=yes: the kernel does the UDP checksum (the engine leaves the
	 * pseudo-header sum, build_hdr decides); gso=no: frames exactly as
	 * the af_packet PMD's. Received: the kernel's checksum status. */
	p->tx_csum_offload = gso;
	p->rx_csum_offload = 1;
	MRDP_LOG("%s: plane %u = net_mrpkt on %s (fd %d), gso %s, rx %s, "
		 "hold %u us\n",
		 d->conf.name, idx, ifn, k->fd, gso ? "yes" : "no",
		 k->block ? "block" : "frame",
		 k->hold.period_ns ? hold_us : 0);
	return 0;
fail:
	mrdp_pkt_close(k);
	return ret;
}

void mrdp_pkt_close(struct mrdp_pkt *k)
{
	if (!k)
		return;
	mrdp_pkt_hold_close(k);
	if (k->ring)
		munmap(k->ring, k->ring_len);
	if (k->fd >= 0)
		close(k->fd);
	free(k);
}
