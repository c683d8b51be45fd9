/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * bench/wire/gso_probe.c: what UDP GSO through an AF_PACKET socket with a
 * virtio-net header buys over one frame per send on veth, without the
 * rest of the stack (the measurement behind lib/dp's net_mrpkt port).
 *   gso_probe tx IF NSEG SEGPAY SECS BATCH: send super-frames of NSEG
 *     segments of SEGPAY UDP payload bytes (NSEG 1: plain frames), BATCH
 *     of them per sendmmsg, for SECS seconds;
 *   gso_probe rxm IF SECS: receive with recvmmsg and split each
 *     super-frame into 4 KiB buffers (one copy per segment, as the port);
 *   gso_probe rx IF SECS: receive through a TPACKET_V3 ring (no split).
 * Prints frames/segments per second and Gb/s of UDP payload. Run by
 * gso_probe.sh. Root.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <linux/virtio_net.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
/* Debian 12's uapi header predates it (Linux 6.2). */
#ifndef VIRTIO_NET_HDR_GSO_UDP_L4
#define VIRTIO_NET_HDR_GSO_UDP_L4 5
#endif
static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
static uint32_t sum16(const void *p, size_t n, uint32_t s)
{
	const uint8_t *b = p;
	for (size_t i = 0; i + 1 < n; i += 2)
		s += (b[i] << 8) | b[i + 1];
	if (n & 1)
		s += b[n - 1] << 8;
	return s;
}
static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return s;
}
int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr,
			"p tx IF NSEG SEGPAY SECS BATCH | p rx IF SECS\n");
		return 2;
	}
	int tx = !strcmp(argv[1], "tx");
	int s = socket(AF_PACKET, SOCK_RAW, htons(ETH_P_ALL));
	if (s < 0) {
		perror("socket");
		return 1;
	}
	int one = 1;
	if (setsockopt(s, SOL_PACKET, PACKET_VNET_HDR, &one, sizeof one)) {
		perror("vnet");
		return 1;
	}
	struct sockaddr_ll sll = { .sll_family = AF_PACKET,
				   .sll_protocol = htons(ETH_P_ALL),
				   .sll_ifindex = if_nametoindex(argv[2]) };
	if (tx) {
		int nseg = atoi(argv[3]), pay = atoi(argv[4]);
		double secs = atof(argv[5]);
		int batch = atoi(argv[6]);
		setsockopt(s, SOL_PACKET, PACKET_QDISC_BYPASS, &one,
			   sizeof one);
		if (bind(s, (void *)&sll, sizeof sll)) {
			perror("bind");
			return 1;
		}
		size_t hl = 14 + 20 + 8, len = hl + (size_t)nseg * pay;
		uint8_t *f = calloc(1, len + 64);
		memset(f, 0xff, 6);
		memcpy(f + 6, "\x02\0\0\0\0\1", 6);
		f[12] = 8;
		f[13] = 0;
		uint8_t *ip = f + 14;
		ip[0] = 0x45;
		uint16_t tl = htons(len - 14);
		memcpy(ip + 2, &tl, 2);
		ip[8] = 64;
		ip[9] = 17;
		uint32_t sa = inet_addr("10.9.0.1"), da = inet_addr("10.9.0.2");
		memcpy(ip + 12, &sa, 4);
		memcpy(ip + 16, &da, 4);
		uint16_t c = htons(~fold(sum16(ip, 20, 0)));
		memcpy(ip + 10, &c, 2);
		uint8_t *u = ip + 20;
		u[0] = 0x12;
		u[1] = 0x34;
		u[2] = 0x12;
		u[3] = 0xbd;
		uint16_t ul = htons(len - 34);
		memcpy(u + 4, &ul, 2);
		/* partial csum: pseudo header */
		uint32_t ps = sum16(ip + 12, 8, 0) + 17 + (len - 34);
		uint16_t pc = htons(fold(ps));
		memcpy(u + 6, &pc, 2);
		struct virtio_net_hdr vh = {
			.flags = VIRTIO_NET_HDR_F_NEEDS_CSUM,
			.gso_type = nseg > 1 ? VIRTIO_NET_HDR_GSO_UDP_L4 : 0,
			.hdr_len = hl,
			.gso_size = nseg > 1 ? pay : 0,
			.csum_start = 34,
			.csum_offset = 6
		};
		struct iovec iov[64][2];
		struct mmsghdr mm[64];
		for (int i = 0; i < batch; i++) {
			iov[i][0] = (struct iovec){ &vh, sizeof vh };
			iov[i][1] = (struct iovec){ f, len };
			memset(&mm[i], 0, sizeof mm[i]);
			mm[i].msg_hdr.msg_iov = iov[i];
			mm[i].msg_hdr.msg_iovlen = 2;
		}
		double t0 = now();
		long calls = 0, frames = 0, err = 0;
		while (now() - t0 < secs) {
			int r = sendmmsg(s, mm, batch, 0);
			calls++;
			if (r < 0) {
				err++;
				if (err < 3)
					perror("sendmmsg");
				continue;
			}
			frames += r;
		}
		double dt = now() - t0;
		printf("tx nseg %d pay %d: %ld super-frames %ld segs in %.2fs, "
		       "%.0f seg/s %.2f Gb/s payload, %.1f segs/syscall err "
		       "%ld\n",
		       nseg, pay, frames, frames * nseg, dt, frames * nseg / dt,
		       frames * (double)nseg * pay * 8 / dt / 1e9,
		       (double)frames * nseg / calls, err);
		return 0;
	}
	double secs = atof(argv[3]);
	if (!strcmp(argv[1], "rxm")) {
		int big = 32 << 20;
		setsockopt(s, SOL_SOCKET, SO_RCVBUFFORCE, &big, sizeof big);
		if (bind(s, (void *)&sll, sizeof sll)) {
			perror("bind");
			return 1;
		}
		enum { B = 16, SZ = 70000 };
		static uint8_t buf[B][SZ];
		static uint8_t mb[64][4352];
		struct iovec iov[B];
		struct mmsghdr mm[B];
		for (int i = 0; i < B; i++) {
			iov[i] = (struct iovec){ buf[i], SZ };
			memset(&mm[i], 0, sizeof mm[i]);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
		}
		long pk = 0, segs = 0, gso = 0, calls = 0, polls = 0;
		double bytes = 0, t0 = 0, tl = 0, start = now();
		while (now() - start < secs + 5) {
			int r = recvmmsg(s, mm, B, MSG_DONTWAIT, NULL);
			calls++;
			if (r <= 0) {
				struct pollfd p = { s, POLLIN, 0 };
				polls++;
				poll(&p, 1, 100);
				if (t0 && now() - tl > 1)
					break;
				continue;
			}
			for (int i = 0; i < r; i++) {
				uint8_t *f =
					buf[i] + sizeof(struct virtio_net_hdr);
				struct virtio_net_hdr *vh = (void *)buf[i];
				unsigned L = mm[i].msg_len - sizeof *vh;
				if (!(f[12] == 8 && f[23] == 17 &&
				      f[36] == 0x12 && f[37] == 0xbd))
					continue;
				if (!t0)
					t0 = now();
				tl = now();
				unsigned pl = L - 42;
				pk++;
				bytes += pl;
				unsigned gs =
					vh->gso_type == VIRTIO_NET_HDR_GSO_UDP_L4
						? vh->gso_size
						: pl;
				if (vh->gso_type)
					gso++;
				for (unsigned o = 0; o < pl; o += gs) {
					unsigned n = pl - o < gs ? pl - o : gs;
					memcpy(mb[segs & 63] + 42, f + 42 + o,
					       n > 4300 ? 4300 : n);
					segs++;
				}
			}
		}
		double dt = tl - t0;
		printf("rxm: %ld skbs (%ld gso) %ld segs in %.2fs: %.2f Gb/s "
		       "payload, %.0f seg/s, calls %ld polls %ld\n",
		       pk, gso, segs, dt, bytes * 8 / dt / 1e9, segs / dt,
		       calls, polls);
		return 0;
	}
	int v = TPACKET_V3;
	setsockopt(s, SOL_PACKET, PACKET_VERSION, &v, sizeof v);
	struct tpacket_req3 rq = { .tp_block_size = 1 << 18,
				   .tp_block_nr = 64,
				   .tp_frame_size = 1 << 16,
				   .tp_frame_nr = (1 << 18) / (1 << 16) * 64,
				   .tp_retire_blk_tov = 1 };
	if (setsockopt(s, SOL_PACKET, PACKET_RX_RING, &rq, sizeof rq)) {
		perror("ring");
		return 1;
	}
	uint8_t *ring =
		mmap(0, (size_t)rq.tp_block_size * rq.tp_block_nr,
		     PROT_READ | PROT_WRITE, MAP_SHARED | MAP_LOCKED, s, 0);
	if (ring == MAP_FAILED) {
		perror("mmap");
		return 1;
	}
	if (bind(s, (void *)&sll, sizeof sll)) {
		perror("bind");
		return 1;
	}
	long pk = 0, segs = 0, gso = 0, trunc = 0;
	double bytes = 0;
	unsigned bi = 0;
	double t0 = 0, tl = 0;
	long polls = 0;
	double start = now();
	while (now() - start < secs + 5) {
		struct tpacket_block_desc *bd =
			(void *)(ring + (size_t)bi * rq.tp_block_size);
		if (!(bd->hdr.bh1.block_status & TP_STATUS_USER)) {
			struct pollfd p = { s, POLLIN, 0 };
			polls++;
			poll(&p, 1, 100);
			if (t0 && now() - tl > 1)
				break;
			continue;
		}
		struct tpacket3_hdr *h =
			(void *)((uint8_t *)bd +
				 bd->hdr.bh1.offset_to_first_pkt);
		for (unsigned i = 0; i < bd->hdr.bh1.num_pkts; i++) {
			struct virtio_net_hdr *vh =
				(void *)((uint8_t *)h + h->tp_mac -
					 sizeof(*vh));
			uint8_t *f = (uint8_t *)h + h->tp_mac;
			if (f[12] == 8 && f[23] == 17 && f[36] == 0x12 &&
			    f[37] == 0xbd) {
				if (!t0)
					t0 = now();
				tl = now();
				if (h->tp_snaplen != h->tp_len)
					trunc++;
				unsigned pl = h->tp_len - 42;
				pk++;
				bytes += pl;
				if (vh->gso_type == VIRTIO_NET_HDR_GSO_UDP_L4) {
					gso++;
					segs += (pl + vh->gso_size - 1) /
						vh->gso_size;
				} else
					segs++;
			}
			h = (void *)((uint8_t *)h + h->tp_next_offset);
		}
		bd->hdr.bh1.block_status = TP_STATUS_KERNEL;
		bi = (bi + 1) % rq.tp_block_nr;
	}
	double dt = tl - t0;
	printf("rx: %ld skbs (%ld gso) %ld segs trunc %ld in %.2fs: %.2f Gb/s "
	       "payload, %.0f seg/s, polls %ld\n",
	       pk, gso, segs, trunc, dt, bytes * 8 / dt / 1e9, segs / dt,
	       polls);
	return 0;
}
