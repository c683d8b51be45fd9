/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Two-process test of lib/dp over a real port (run by dp_echo.sh, one
 * process per network namespace):
 *
 *   mrdp-peer server RECORD PEER_IP
 *     echoes every packet it receives back to its sender, with UDP source
 *     port (entropy) 0x8000 | seq, until it receives "BYE!" (or 60 s).
 *   mrdp-peer client RECORD PEER_IP IFACE COUNT IDLE_S STATS_PATH
 *     loopback check; ARP resolution of the peer; COUNT payloads of
 *     seeded random bytes and sizes 1..max sent and every byte of every
 *     echo compared; every received frame captured on IFACE by a raw
 *     socket of its own and its Ethernet/IPv4/UDP headers and checksums
 *     checked independently of lib/dp; idle CPU of the process over
 *     IDLE_S seconds printed (a figure, not an assertion); the stats file
 *     checked.
 *
 * Payload format (ours, not MetaRoCE: lib/dp does not look inside):
 *   u32 seq | u32 len | bytes from a generator seeded by seq.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "mrdp.h"
#include "mrdp_encap.h"

#define MAXQ 1024
#define WINDOW 32

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static void fill(uint8_t *p, uint32_t seq, uint32_t len)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seq + 1);
	uint32_t i;

	put32(p, seq);
	put32(p + 4, len);
	for (i = 8; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		p[i] = (uint8_t)(x >> 24);
	}
}

/* A queue of packets to send (both roles), touched under the dev lock. */
struct pkt {
	uint32_t dest;
	uint16_t entropy;
	uint32_t len;
	uint8_t *data;
};

struct peer {
	struct pkt q[MAXQ];
	unsigned head, tail;
	size_t max;
	uint32_t self_ip;
	/* server */
	int bye;
	uint64_t echoed;
	uint64_t streamed, streamed_bytes;
	/* client */
	uint8_t *got; /* per seq: echo verified */
	unsigned ngot;
	unsigned bad;
	unsigned loop_got;
	unsigned count;
};

static struct peer P;

static int q_push(struct peer *p, uint32_t dest, uint16_t ent,
		  const uint8_t *data, uint32_t len)
{
	struct pkt *k;

	if (p->tail - p->head == MAXQ)
		return -1;
	k = &p->q[p->tail % MAXQ];
	k->dest = dest;
	k->entropy = ent;
	k->len = len;
	memcpy(k->data, data, len);
	p->tail++;
	return 0;
}

static size_t op_tx(void *user, uint64_t now, uint8_t *buf, size_t cap,
		    struct mr_tx_meta *meta)
{
	struct peer *p = user;
	struct pkt *k;

	(void)now;
	if (p->head == p->tail)
		return 0;
	k = &p->q[p->head % MAXQ];
	if (k->len > cap) {
		fprintf(stderr, "tx cap %zu < %u\n", cap, k->len);
		exit(1);
	}
	memcpy(buf, k->data, k->len);
	meta->dest = k->dest;
	meta->entropy = k->entropy;
	meta->path_id = 0;
	meta->plane = 0;
	p->head++;
	return k->len;
}

static int server_rx(void *user, uint64_t now, const uint8_t *pkt, size_t len,
		     const struct mr_rx_meta *meta)
{
	struct peer *p = user;

	(void)now;
	if (len == 4 && !memcmp(pkt, "BYE!", 4)) {
		p->bye = 1;
		return 0;
	}
	if (len < 8)
		return -1;
	if (get32(pkt) >= 0x50000000u) { /* stream phase: count only */
		p->streamed++;
		p->streamed_bytes += len;
		return 0;
	}
	if (q_push(p, meta->src, (uint16_t)(0x8000 | (get32(pkt) & 0x7fff)),
		   pkt, (uint32_t)len) == 0)
		p->echoed++;
	return 0;
}

static int client_rx(void *user, uint64_t now, const uint8_t *pkt, size_t len,
		     const struct mr_rx_meta *meta)
{
	struct peer *p = user;
	static uint8_t want[8192];
	uint32_t seq;

	(void)now;
	if (len < 8 || get32(pkt + 4) != len) {
		p->bad++;
		return -1;
	}
	seq = get32(pkt);
	fill(want, seq, (uint32_t)len);
	if (memcmp(want, pkt, len) != 0) {
		fprintf(stderr, "seq %u: payload differs\n", seq);
		p->bad++;
		return -1;
	}
	if (seq >= 0x40000000u) { /* loopback packets */
		if (meta->src != p->self_ip) {
			p->bad++;
			return -1;
		}
		p->loop_got++;
		return 0;
	}
	if (seq >= p->count) {
		p->bad++;
		return -1;
	}
	if (!p->got[seq]) {
		p->got[seq] = 1;
		p->ngot++;
	}
	return 0;
}

/* Sizes 8..max, every fifth the largest. */
static uint32_t size_of(uint32_t seq)
{
	if (seq % 5 == 0)
		return (uint32_t)P.max;
	return 8 + (uint32_t)((seq * 2654435761u) % (P.max - 7));
}

static double now_s(void)
{
	return (double)mrdp_now() / 1e9;
}

static int open_dev(const char *record, int server, struct mrdp_dev **d,
		    struct mr_devconf *c, const char *stats)
{
	struct mrdp_config cfg;
	char err[256];
	int ret;
	unsigned i;

	if (mr_devconf_read(record, c, err, sizeof(err)) != 0) {
		fprintf(stderr, "%s: %s\n", record, err);
		return -1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.conf = c;
	cfg.ops.rx = server ? server_rx : client_rx;
	cfg.ops.tx = op_tx;
	cfg.ops.user = &P;
	cfg.stats_path = stats;
	P.max = MR_TX_BUF_MIN(c->mtu);
	P.self_ip = c->ip;
	for (i = 0; i < MAXQ; i++)
		P.q[i].data = malloc(P.max);
	ret = mrdp_open(&cfg, d, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "mrdp_open: %s (%d)\n", err, ret);
		return -1;
	}
	return 0;
}

static int run_server(const char *record, uint32_t peer)
{
	struct mr_devconf c;
	struct mrdp_dev *d;
	struct mrdp_counters k;
	char json[8192];
	double end = now_s() + 60;
	int bye = 0;

	(void)peer;
	if (open_dev(record, 1, &d, &c, NULL))
		return 1;
	printf("server: up\n");
	fflush(stdout);
	while (now_s() < end) {
		mrdp_lock(d);
		bye = P.bye && P.head == P.tail;
		mrdp_unlock(d);
		if (bye)
			break;
		usleep(1000);
	}
	mrdp_get_counters(d, &k);
	mrdp_counters_json(&k, c.name, json, sizeof(json));
	printf("server: echoed %llu, stream received %llu packets "
	       "(%llu bytes), counters %s",
	       (unsigned long long)P.echoed, (unsigned long long)P.streamed,
	       (unsigned long long)P.streamed_bytes, json);
	mrdp_close(d);
	if (!bye) {
		fprintf(stderr, "server: no BYE within 60 s\n");
		return 1;
	}
	return 0;
}

/* Checks one captured frame independently of lib/dp. */
struct capcheck {
	const struct mr_devconf *c;
	uint32_t peer;
	uint8_t peer_mac[6];
	int have_peer_mac;
	unsigned frames, bad;
};

static uint16_t csum16(const uint8_t *p, size_t n, uint32_t s)
{
	size_t i;

	for (i = 0; i + 1 < n; i += 2)
		s += (uint32_t)(p[i] << 8 | p[i + 1]);
	if (n & 1)
		s += (uint32_t)p[n - 1] << 8;
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)s;
}

#define CAPFAIL(...)                                      \
	do {                                              \
		fprintf(stderr, "capture: " __VA_ARGS__); \
		cc->bad++;                                \
		return;                                   \
	} while (0)

static void check_frame(struct capcheck *cc, const uint8_t *f, size_t n)
{
	const uint8_t *ip = f + 14, *udp = f + 34;
	uint8_t ph[12];
	uint32_t s;
	size_t ulen;

	if (n < 42 || f[12] != 0x08 || f[13] != 0x00 || ip[9] != 17 ||
	    get32(ip + 12) != cc->peer)
		return; /* not a frame from the peer's datapath */
	cc->frames++;
	if (memcmp(f, cc->c->mac, 6))
		CAPFAIL("destination MAC is not ours\n");
	if (!cc->have_peer_mac) {
		memcpy(cc->peer_mac, f + 6, 6);
		cc->have_peer_mac = 1;
	} else if (memcmp(cc->peer_mac, f + 6, 6)) {
		CAPFAIL("source MAC changed\n");
	}
	if (ip[0] != 0x45 || (ip[1] & 3) != 2 || ip[8] != 64 ||
	    (ip[6] & 0x40) == 0)
		CAPFAIL("IPv4 header: ver/ihl %02x tos %02x ttl %u\n", ip[0],
			ip[1], ip[8]);
	if (get32(ip + 16) != cc->c->ip)
		CAPFAIL("IPv4 destination is not ours\n");
	if ((size_t)(ip[2] << 8 | ip[3]) + 14 > n)
		CAPFAIL("IPv4 total length beyond the frame\n");
	if (csum16(ip, 20, 0) != 0xffff)
		CAPFAIL("IPv4 header checksum wrong\n");
	ulen = (size_t)(udp[4] << 8 | udp[5]);
	if (ulen + 20 != (size_t)(ip[2] << 8 | ip[3]))
		CAPFAIL("UDP length %zu vs IPv4 length\n", ulen);
	if ((udp[2] << 8 | udp[3]) != cc->c->udp_port)
		CAPFAIL("UDP destination port\n");
	/* The server echoes with entropy 0x8000 | seq. */
	if (ulen >= 16 && (uint32_t)(udp[0] << 8 | udp[1]) !=
				  (0x8000 | (get32(udp + 8) & 0x7fff)))
		CAPFAIL("UDP source port is not the entropy asked for\n");
	if (udp[6] == 0 && udp[7] == 0)
		CAPFAIL("UDP checksum not computed\n");
	memcpy(ph, ip + 12, 8);
	ph[8] = 0;
	ph[9] = 17;
	ph[10] = udp[4];
	ph[11] = udp[5];
	s = csum16(ph, 12, 0);
	if (csum16(udp, ulen, s) != 0xffff)
		CAPFAIL("UDP checksum wrong\n");
}

static int open_capture(const char *ifname)
{
	struct sockaddr_ll sll;
	int fd = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK, htons(ETH_P_ALL));
	int sz = 64 << 20;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &sz, sizeof(sz));
	memset(&sll, 0, sizeof(sll));
	sll.sll_family = AF_PACKET;
	sll.sll_protocol = htons(ETH_P_ALL);
	sll.sll_ifindex = (int)if_nametoindex(ifname);
	if (!sll.sll_ifindex ||
	    bind(fd, (struct sockaddr *)&sll, sizeof(sll)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

static void drain_capture(int fd, struct capcheck *cc)
{
	static uint8_t buf[16384];
	struct sockaddr_ll from;
	socklen_t fl;
	ssize_t n;

	for (;;) {
		fl = sizeof(from);
		n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from,
			     &fl);
		if (n < 0)
			return;
		if (from.sll_pkttype == PACKET_OUTGOING)
			continue;
		check_frame(cc, buf, (size_t)n);
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static unsigned long long proc_cpu_ticks(void)
{
	char buf[2048], *p;
	unsigned long long ut = 0, st = 0;
	FILE *f = fopen("/proc/self/stat", "r");
	int i;

	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return 0;
	}
	fclose(f);
	/* Fields after the command name (which may hold spaces). */
	p = strrchr(buf, ')');
	if (!p)
		return 0;
	p += 2;
	for (i = 3; i < 14; i++) {
		p = strchr(p, ' ');
		if (!p)
			return 0;
		p++;
	}
	sscanf(p, "%llu %llu", &ut, &st);
	return ut + st;
}

static int run_client(const char *record, uint32_t peer, const char *ifname,
		      unsigned count, unsigned idle_s, const char *stats)
{
	struct mr_devconf c;
	struct mrdp_dev *d;
	struct mrdp_counters k;
	struct capcheck cc;
	uint8_t *buf, mac[6];
	uint64_t *sent_at;
	unsigned next = 0, i, retx = 0, fails = 0;
	double t0, end;
	int cap, ret = 0;
	char json[8192];

	if (open_dev(record, 0, &d, &c, stats))
		return 1;
	P.count = count;
	P.got = calloc(count, 1);
	sent_at = calloc(count, sizeof(*sent_at));
	buf = malloc(P.max);
	memset(&cc, 0, sizeof(cc));
	cc.c = &c;
	cc.peer = peer;
	cap = open_capture(ifname);
	if (cap < 0) {
		fprintf(stderr, "cannot capture on %s\n", ifname);
		return 1;
	}

	/* Loopback: packets to our own address come straight back. */
	mrdp_lock(d);
	for (i = 0; i < 16; i++) {
		uint32_t len = 8 + i * 97;

		fill(buf, 0x40000000u + i, len);
		q_push(&P, c.ip, 1, buf, len);
	}
	mrdp_unlock(d);
	mrdp_kick(d);
	end = now_s() + 5;
	while (now_s() < end) {
		mrdp_lock(d);
		ret = P.loop_got;
		mrdp_unlock(d);
		if (ret == 16)
			break;
		usleep(1000);
	}
	if (ret != 16) {
		fprintf(stderr, "loopback: %d of 16 came back\n", ret);
		fails++;
	}

	/* ARP. */
	t0 = now_s();
	while ((ret = mrdp_resolve(d, peer, mac)) == 0 && now_s() < t0 + 5)
		usleep(1000);
	if (ret != 1) {
		fprintf(stderr, "peer not resolved (%d)\n", ret);
		return 1;
	}
	printf("client: peer resolved in %.1f ms: "
	       "%02x:%02x:%02x:%02x:%02x:%02x\n",
	       (now_s() - t0) * 1e3, mac[0], mac[1], mac[2], mac[3], mac[4],
	       mac[5]);

	/* The exchange: a window of WINDOW payloads in flight; anything not
	 * echoed within 200 ms is sent again (veth does not lose, but a
	 * descheduled peer may overflow a ring). */
	t0 = now_s();
	end = t0 + 60;
	while (now_s() < end) {
		uint64_t now = mrdp_now();
		unsigned inflight = 0, lo;

		mrdp_lock(d);
		if (P.ngot == count) {
			mrdp_unlock(d);
			break;
		}
		for (lo = 0; lo < next; lo++) {
			if (P.got[lo])
				continue;
			inflight++;
			if (now - sent_at[lo] > 200000000ull &&
			    P.tail - P.head < MAXQ) {
				uint32_t len = size_of(lo);

				fill(buf, lo, len);
				q_push(&P, peer, 1, buf, len);
				sent_at[lo] = now;
				retx++;
			}
		}
		while (next < count && inflight < WINDOW &&
		       P.tail - P.head < MAXQ) {
			uint32_t len = size_of(next);

			fill(buf, next, len);
			q_push(&P, peer, (uint16_t)(1 + next), buf, len);
			sent_at[next++] = now;
			inflight++;
		}
		mrdp_unlock(d);
		mrdp_progress(d);
		drain_capture(cap, &cc);
	}
	usleep(100000);
	drain_capture(cap, &cc);
	printf("client: %u of %u echoed and byte-exact in %.3f s (%u resent, "
	       "%u bad)\n",
	       P.ngot, count, now_s() - t0, retx, P.bad);
	printf("client: %u frames captured from the peer, %u with bad "
	       "headers\n",
	       cc.frames, cc.bad);
	/* The capture sees the veth only: not a memif link. */
	if (P.ngot != count || P.bad || cc.bad ||
	    (!getenv("MRDP_TEST_NO_CAPTURE") && cc.frames < count))
		fails++;

	/* Round trip of one 64-byte payload at a time, through both
	 * datapaths and the server's progress thread: a figure. */
	{
		static uint64_t rtt[1000];
		unsigned n = 0, seq = count;

		memset(P.got, 0, count);
		P.ngot = 0;
		while (n < 1000) {
			uint64_t t = mrdp_now();
			unsigned want;

			fill(buf, 0, 64);
			mrdp_lock(d);
			want = P.ngot + 1;
			P.got[0] = 0;
			q_push(&P, peer, 1, buf, 64);
			mrdp_unlock(d);
			for (;;) {
				int ok;

				mrdp_progress(d);
				mrdp_lock(d);
				ok = P.ngot >= want || P.got[0];
				mrdp_unlock(d);
				if (ok)
					break;
				if (mrdp_now() - t > 1000000000ull)
					break;
			}
			rtt[n++] = mrdp_now() - t;
		}
		(void)seq;
		qsort(rtt, n, sizeof(rtt[0]), cmp_u64);
		printf("client: round trip 64 B: p50 %.1f us, p99 %.1f us "
		       "(%u samples)\n",
		       (double)rtt[n / 2] / 1e3,
		       (double)rtt[n * 99 / 100] / 1e3, n);
		drain_capture(cap, &cc);
	}

	/* One-way stream of the largest packets as fast as the datapath
	 * takes them (the server only counts): a figure of the datapath's
	 * own ceiling, to compare with testpmd's on the same link. */
	if (getenv("MRDP_TEST_STREAM")) {
		unsigned n = (unsigned)atoi(getenv("MRDP_TEST_STREAM")), q = 0;
		uint64_t t = mrdp_now();
		double dt;

		fill(buf, 0x50000000u, (uint32_t)P.max);
		while (q < n) {
			mrdp_lock(d);
			while (q < n && P.tail - P.head < MAXQ) {
				put32(buf, 0x50000000u + q);
				q_push(&P, peer, (uint16_t)q, buf,
				       (uint32_t)P.max);
				q++;
			}
			mrdp_unlock(d);
			mrdp_progress(d);
		}
		for (;;) {
			int empty;

			mrdp_lock(d);
			empty = P.head == P.tail;
			mrdp_unlock(d);
			if (empty)
				break;
			mrdp_progress(d);
		}
		dt = (double)(mrdp_now() - t) / 1e9;
		printf("client: stream %u x %zu B sent in %.3f s: %.0f kpps, "
		       "%.2f Gb/s\n",
		       n, P.max, dt, n / dt / 1e3,
		       (double)n * (double)(P.max + MRDP_HDR_LEN) * 8 / dt /
			       1e9);
		usleep(200000);
	}

	mrdp_get_counters(d, &k);
	if (k.plane[0].arp_req_tx < 1 || k.plane[0].arp_reply_rx < 1 ||
	    k.plane[0].rx_drop[MRDP_RXD_IP_CSUM] ||
	    k.plane[0].rx_drop[MRDP_RXD_UDP_CSUM] || k.loopback_pkts != 16 ||
	    k.plane[0].tx_pkts < count || k.plane[0].rx_pkts < count ||
	    k.plane[0].tx_drop[MRDP_TXD_PORT]) {
		fprintf(stderr, "counters wrong\n");
		fails++;
	}

	if (idle_s) {
		unsigned long long a, b;
		long hz = sysconf(_SC_CLK_TCK);
		double t1;

		struct mrdp_counters k0, k1;

		usleep(300000); /* past the spin phase */
		mrdp_get_counters(d, &k0);
		a = proc_cpu_ticks();
		t1 = now_s();
		sleep(idle_s);
		b = proc_cpu_ticks();
		mrdp_get_counters(d, &k1);
		printf("client: idle: %llu sleeps, %llu rounds with work, "
		       "%llu frames\n",
		       (unsigned long long)(k1.sleeps - k0.sleeps),
		       (unsigned long long)(k1.progress_rounds -
					    k0.progress_rounds),
		       (unsigned long long)(k1.plane[0].rx_frames -
					    k0.plane[0].rx_frames));
		printf("client: idle device cost %.2f%% of a core over %.1f s "
		       "(utime+stime %llu ticks at %ld Hz)\n",
		       100.0 * (double)(b - a) / (double)hz / (now_s() - t1),
		       now_s() - t1, b - a, hz);
	}

	memcpy(buf, "BYE!", 4);
	mrdp_lock(d);
	q_push(&P, peer, 1, buf, 4);
	mrdp_unlock(d);
	mrdp_kick(d);
	usleep(200000);
	mrdp_get_counters(d, &k);
	mrdp_counters_json(&k, c.name, json, sizeof(json));
	printf("client: counters %s", json);
	mrdp_close(d);
	close(cap);
	{
		FILE *f = fopen(stats, "r");
		char sbuf[8192];
		size_t n = f ? fread(sbuf, 1, sizeof(sbuf) - 1, f) : 0;

		if (f)
			fclose(f);
		sbuf[n] = 0;
		if (!n || strncmp(sbuf, "{\"device\":\"", 11) ||
		    !strstr(sbuf, "\"tx_pkts\":")) {
			fprintf(stderr, "stats file %s missing or wrong\n",
				stats);
			fails++;
		}
	}
	/* Close/reopen in the same process: the port is hot-unplugged and
	 * probed again (EAL itself cannot restart); loopback still works. */
	if (getenv("MRDP_TEST_NO_REOPEN")) {
		/* memif: the peer is gone, a reopened client cannot
		 * connect. */
	} else if (open_dev(record, 0, &d, &c, NULL)) {
		fails++;
	} else {
		P.loop_got = 0;
		mrdp_lock(d);
		fill(buf, 0x40000000u, 100);
		q_push(&P, c.ip, 1, buf, 100);
		mrdp_unlock(d);
		end = now_s() + 5;
		while (now_s() < end) {
			mrdp_progress(d);
			mrdp_lock(d);
			ret = P.loop_got;
			mrdp_unlock(d);
			if (ret)
				break;
			usleep(1000);
		}
		mrdp_close(d);
		printf("client: reopened the device: loopback %s\n",
		       ret ? "ok" : "FAILED");
		if (!ret)
			fails++;
	}
	printf("client: %s\n", fails ? "FAILED" : "ok");
	return fails ? 1 : 0;
}

/* Try to open a record; print the datapath's reason if it refuses. */
static int run_open(const char *record)
{
	struct mr_devconf c;
	struct mrdp_config cfg;
	struct mrdp_dev *d, *d2 = NULL;
	char err[256];
	int ret;

	if (mr_devconf_read(record, &c, err, sizeof(err)) != 0) {
		printf("record: %s\n", err);
		return 1;
	}
	memset(&cfg, 0, sizeof(cfg));
	cfg.conf = &c;
	cfg.ops.rx = client_rx;
	cfg.ops.tx = op_tx;
	cfg.ops.user = &P;
	ret = mrdp_open(&cfg, &d, err, sizeof(err));
	if (ret) {
		printf("open: %d: %s\n", ret, err);
		return 1;
	}
	/* A second open of the same device in this process is refused. */
	ret = mrdp_open(&cfg, &d2, err, sizeof(err));
	printf("second open: %d: %s\n", ret, err);
	if (!ret)
		mrdp_close(d2);
	mrdp_close(d);
	printf("open: ok\n");
	return ret == -EBUSY ? 0 : 1;
}

int main(int argc, char **argv)
{
	struct in_addr a;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc < 4 || inet_pton(AF_INET, argv[3], &a) != 1) {
		fprintf(stderr,
			"usage: %s server RECORD PEER_IP\n"
			"       %s open RECORD 0.0.0.0\n"
			"       %s client RECORD PEER_IP IFACE COUNT IDLE_S "
			"STATS\n",
			argv[0], argv[0], argv[0]);
		return 2;
	}
	if (!strcmp(argv[1], "open"))
		return run_open(argv[2]);
	if (!strcmp(argv[1], "server"))
		return run_server(argv[2], ntohl(a.s_addr));
	if (!strcmp(argv[1], "client") && argc == 8)
		return run_client(argv[2], ntohl(a.s_addr), argv[4],
				  (unsigned)atoi(argv[5]),
				  (unsigned)atoi(argv[6]), argv[7]);
	fprintf(stderr, "bad arguments\n");
	return 2;
}
