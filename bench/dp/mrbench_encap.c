// SPDX-License-Identifier: BSD-2-Clause
/*
 * What framing costs per packet: mrdp_encap_write / write6 and
 * mrdp_encap_classify of one data packet, for payloads of 64, 1024 and
 * 4096 bytes, IPv4 without a UDP checksum (the default), IPv4 with one
 * (knob dp_udp_csum) and IPv6 (checksum mandatory), on plain buffers as
 * the datapath calls them. Timed with CLOCK_MONOTONIC over many calls;
 * under `valgrind --tool=callgrind` the instruction counts are the
 * figure that does not move with the machine's load (bench/dp/results.md).
 *
 * Usage: mrbench-encap [-n iterations] [-s payload bytes (64..4096)]
 *                      [-k frame: 0 IPv4, 1 IPv4 + UDP checksum, 2 IPv6]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mrdp_encap.h"

static const uint8_t mac_a[6] = { 0x02, 0, 0, 0, 0, 1 };
static const uint8_t mac_b[6] = { 0x02, 0, 0, 0, 0, 2 };

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void setup(struct mrdp_hdr *h, struct mrdp_local *me, int v6)
{
	memset(h, 0, sizeof(*h));
	memset(me, 0, sizeof(*me));
	memcpy(h->src_mac, mac_a, 6);
	memcpy(h->dst_mac, mac_b, 6);
	h->src_ip = 0x0ac80001u;
	h->dst_ip = 0x0ac80002u;
	h->sport = 0xc123;
	h->dport = 4791;
	h->ecn = MRDP_ECN_ECT0;
	h->v6 = v6;
	h->src6[0] = 0xfd;
	h->src6[15] = 1;
	h->dst6[0] = 0xfd;
	h->dst6[15] = 2;
	h->flow = h->sport;
	me->ip = h->dst_ip;
	memcpy(me->mac, mac_b, 6);
	me->udp_port = 4791;
	memcpy(me->ip6, h->dst6, 16);
	me->has_ip6 = 1;
	me->ll6[0] = 0xfe;
	me->ll6[1] = 0x80;
}

/* One case: n writes, then n classifications of the written frame. */
static void run(const char *what, int v6, int csum, size_t plen, long n)
{
	static uint8_t f[MRDP_HDR_MAX + 4096];
	size_t hl = v6 ? MRDP_HDR6_LEN : MRDP_HDR_LEN;
	struct mrdp_local me;
	struct mrdp_hdr h;
	struct mrdp_rx r;
	double t0, t1, t2;
	unsigned sink = 0;
	size_t i;
	long k;

	setup(&h, &me, v6);
	for (i = 0; i < plen; i++)
		f[hl + i] = (uint8_t)(i * 7 + 1);
	t0 = now_ns();
	for (k = 0; k < n; k++) {
		h.sport = (uint16_t)(0xc000 | (k & 0x3fff));
		if (v6)
			mrdp_encap_write6(f, &h, plen, csum);
		else
			mrdp_encap_write(f, &h, plen, csum);
		sink += f[hl - 1];
	}
	t1 = now_ns();
	for (k = 0; k < n; k++) {
		mrdp_encap_classify(f, hl + plen, &me, 0, &r);
		sink += (unsigned)r.kind;
	}
	t2 = now_ns();
	if (r.kind != MRDP_PKT_DATA || r.len != plen) {
		fprintf(stderr, "%s %zu: classified as %d (drop %d)\n", what,
			plen, (int)r.kind, r.drop);
		exit(1);
	}
	printf("| %s | %zu | %.1f | %.1f |\n", what, plen, (t1 - t0) / n,
	       (t2 - t1) / n);
	(void)sink;
}

int main(int argc, char **argv)
{
	size_t sizes[] = { 64, 1024, 4096 }, nsizes = 3, i;
	static const char *const what[] = { "IPv4, no UDP checksum",
					    "IPv4, UDP checksum",
					    "IPv6, UDP checksum" };
	long n = 200000, s, kind = -1;
	int c, k;

	while ((c = getopt(argc, argv, "n:s:k:")) != -1) {
		if (c == 'n' && (n = strtol(optarg, NULL, 10)) > 0)
			continue;
		if (c == 's' && (s = strtol(optarg, NULL, 10)) >= 64 &&
		    s <= 4096) {
			sizes[0] = (size_t)s;
			nsizes = 1;
			continue;
		}
		if (c == 'k' && (kind = strtol(optarg, NULL, 10)) >= 0 &&
		    kind <= 2)
			continue;
		fprintf(stderr, "usage: mrbench-encap [-n iterations] "
				"[-s payload bytes (64..4096)] [-k 0|1|2]\n");
		return 2;
	}
	printf("| frame | payload B | write ns | classify ns |\n");
	printf("| --- | --- | --- | --- |\n");
	for (i = 0; i < nsizes; i++) {
		for (k = 0; k < 3; k++)
			if (kind < 0 || kind == k)
				run(what[k], k == 2, k >= 1, sizes[i], n);
	}
	return 0;
}
