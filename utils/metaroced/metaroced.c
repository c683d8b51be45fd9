/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroced: the datapath service. It owns a device's ports (opened with
 * lib/dp exactly as an application would: af_packet, af_xdp, a PCI NIC
 * that only one DPDK process may drive) and switches frames between them
 * and the applications connected on its Unix socket (mrdp_svc.h): a frame
 * from a port goes to the application whose QPN slot holds its BTH dqpn
 * (mrsvc_switch.c), a frame from an application's ring goes to the port
 * of its plane. The protocol runs in each application, unchanged; the
 * daemon holds no connection state.
 *
 * Progress: one thread. It polls the ports' receive queues and the
 * applications' transmit rings while there is work; after MRSVC_SPIN
 * rounds without work it arms every ring's wake-up flag and sleeps in
 * poll() on the ports' kernel sockets (mrdp_wait.c found them), the
 * applications' transmit eventfds and connections, and the listening
 * socket, so an idle daemon costs no CPU on a shared host. With --core N
 * it runs pinned to CPU N and never sleeps (a host with a core to spare).
 *
 * Usage: metaroced [--socket PATH] [--stats FILE] [--core N] RECORD
 * RECORD is a device record (mr_devconf.h) with the ports; applications
 * use a record with the same address, MAC, MTU and UDP port and
 * port=service:PATH for each of its ports.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "mr_core.h"
#include "mr_knobs.h"
#include "mrdp_int.h"
#include "mrdp_pkt.h"
#include "mrdp_svc.h"
#include "mrsvc_apps.h"
#include "mrsvc_switch.h"

/* Rounds without work before sleeping: a few microseconds of polling,
 * enough to catch the next frame of a burst without a wake-up. */
#define MRSVC_SPIN 64
/* Rounds with work between two looks at the sockets (connections, ends). */
#define MRSVC_CTL_EVERY 256
#define MRSVC_STATS_MS 1000
#define MRSVC_POLL_MAX \
	(2 + MRSVC_MAX_APPS * (1 + MRSVC_MAX_PLANES) + MRSVC_MAX_PLANES)

static volatile sig_atomic_t stop;

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

struct svc {
	struct mrdp_dev *d;
	struct mrsvc_apps t;
	int lsock;
	char sock_path[108];
	char stats_path[4096];
	int core; /* -1: sleep when idle */
	unsigned rr;
	uint64_t next_stats;
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void write_stats(struct svc *s)
{
	static char buf[65536];
	char tmp[4200];
	int n = mrsvc_apps_json(&s->t, buf, sizeof(buf));
	FILE *f;

	if (n < 0 || !s->stats_path[0])
		return;
	snprintf(tmp, sizeof(tmp), "%s.tmp", s->stats_path);
	f = fopen(tmp, "w");
	if (!f)
		return;
	fwrite(buf, 1, (size_t)n, f);
	if (fclose(f) == 0)
		rename(tmp, s->stats_path);
	s->t.changed = 0;
}

/* A port of the daemon: lib/dp's own net_mrpkt socket (mrdp_pkt.c) or an
 * ethdev, as mrdp_io.c sees its planes. */
static uint16_t port_rx(struct svc *s, unsigned i, struct rte_mbuf **v,
			uint16_t n)
{
	struct mrdp_plane *p = &s->d->plane[i];

	return p->pkt ? mrdp_pkt_rx(p->pkt, v, n)
		      : rte_eth_rx_burst(p->port_id, 0, v, n);
}

static uint16_t port_tx(struct svc *s, unsigned i, struct rte_mbuf **v,
			uint16_t n)
{
	struct mrdp_plane *p = &s->d->plane[i];

	return p->pkt ? mrdp_pkt_tx(p->pkt, v, n)
		      : rte_eth_tx_burst(p->port_id, 0, v, n);
}

/* Give frame m (from plane i) to application a: 1 if taken. */
static int to_app(struct svc *s, struct mrsvc_app *a, unsigned i,
		  const uint8_t *f, uint32_t len)
{
	struct mrsvc_ring *r = mrsvc_ring_at(a->shm, &a->lay, 2 * i);
	uint32_t head;

	if (len > a->lay.buf_size || mrsvc_ring_room(r, &head) == 0) {
		a->c.rx_ring_full++;
		s->t.c.ring_full++;
		return 0;
	}
	memcpy(mrsvc_buf_at(a->shm, &a->lay, 2 * i, head), f, len);
	r->len[head & (MRSVC_RING_SLOTS - 1)] = len;
	if (mrsvc_ring_publish(r, head, 1)) {
		uint64_t one = 1;

		if (write(a->rx_efd[i], &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			fprintf(stderr, "metaroced: wake-up: %s\n",
				strerror(errno));
	}
	a->c.rx_frames++;
	a->c.rx_bytes += len;
	return 1;
}

static unsigned rx_plane(struct svc *s, unsigned i)
{
	struct rte_mbuf *pkts[MRDP_BURST];
	uint16_t n = port_rx(s, i, pkts, MRDP_BURST), k;
	const struct mr_devconf *c = &s->d->conf;

	for (k = 0; k < n; k++) {
		struct rte_mbuf *m = pkts[k];
		const uint8_t *f;
		uint32_t len = rte_pktmbuf_pkt_len(m);
		unsigned slot = 0, j;

		if (m->nb_segs > 1 && rte_pktmbuf_linearize(m) != 0) {
			s->t.c.malformed++;
			rte_pktmbuf_free(m);
			continue;
		}
		f = rte_pktmbuf_mtod(m, const uint8_t *);
		s->t.c.rx_frames++;
		switch (mrsvc_classify(f, len, c->udp_port, c->ip, &slot)) {
		case MRSVC_TO_SLOT:
			if (slot < MRSVC_SLOTS && s->t.by_slot[slot])
				to_app(s, s->t.by_slot[slot], i, f, len);
			else
				s->t.c.no_app++;
			break;
		case MRSVC_TO_ALL:
			s->t.c.to_all++;
			for (j = 0; j < MRSVC_MAX_APPS; j++)
				if (s->t.app[j].used && s->t.app[j].hello_done)
					to_app(s, &s->t.app[j], i, f, len);
			break;
		case MRSVC_ARP_ASK: {
			uint8_t reply[MRSVC_ARP_FRAME];
			size_t rl = mrsvc_arp_reply(f, c->mac, c->ip, reply);

			memcpy(rte_pktmbuf_mtod(m, uint8_t *), reply, rl);
			m->data_len = (uint16_t)rl;
			m->pkt_len = (uint32_t)rl;
			if (port_tx(s, i, &m, 1) == 1) {
				s->t.c.arp_answered++;
				continue; /* the port frees it */
			}
			break;
		}
		case MRSVC_NOT_OURS:
			s->t.c.not_ours++;
			break;
		case MRSVC_MALFORMED:
			s->t.c.malformed++;
			break;
		}
		rte_pktmbuf_free(m);
	}
	return n;
}

/* Frames of one transmit round on a plane: up to MRDP_BURST from each
 * application, MRSVC_TX_BATCH in all, handed to the port in one burst (an
 * af_packet port makes one sendto per burst: one per application per
 * round before, eight with eight applications). */
#define MRSVC_TX_BATCH 128
struct tx_batch {
	struct rte_mbuf *m[MRSVC_TX_BATCH];
	uint32_t len[MRSVC_TX_BATCH]; /* the port owns m[] once it took it */
	unsigned n;
	struct {
		struct mrsvc_app *a;
		struct mrsvc_ring *r;
		uint32_t tail, bad, first, count;
	} from[MRSVC_MAX_APPS];
	unsigned nfrom;
};

/* Copy application a's waiting frames on plane i into the batch. */
static void tx_take(struct svc *s, struct tx_batch *tb, struct mrsvc_app *a,
		    unsigned i)
{
	struct mrsvc_ring *r = mrsvc_ring_at(a->shm, &a->lay, 2 * i + 1);
	struct mrdp_dev *d = s->d;
	uint32_t tail, ready = mrsvc_ring_ready(r, &tail), k, bad = 0;
	uint32_t room =
		rte_pktmbuf_data_room_size(d->pool) - RTE_PKTMBUF_HEADROOM;
	unsigned first = tb->n, f;

	if (!ready)
		return;
	if (ready > MRDP_BURST)
		ready = MRDP_BURST;
	if (ready > MRSVC_TX_BATCH - tb->n)
		ready = MRSVC_TX_BATCH - tb->n;
	if (!ready || rte_pktmbuf_alloc_bulk(d->pool, tb->m + tb->n, ready))
		return; /* the frames wait in the ring */
	for (k = 0; k < ready; k++) {
		uint32_t len = r->len[(tail + k) & (MRSVC_RING_SLOTS - 1)];
		const uint8_t *b =
			mrsvc_buf_at(a->shm, &a->lay, 2 * i + 1, tail + k);
		struct rte_mbuf *m = tb->m[tb->n];

		/* Its region is the application's to write: bound the
		 * length, and it may send as the device only. */
		if (len < 14 || len > a->lay.buf_size || len > room ||
		    memcmp(b + 6, d->conf.mac, 6) != 0) {
			if (tb->n > first)
				break; /* after the good ones go */
			bad++;
			continue;
		}
		memcpy(rte_pktmbuf_mtod(m, uint8_t *), b, len);
		m->data_len = (uint16_t)len;
		m->pkt_len = len;
		tb->len[tb->n++] = len;
	}
	/* The buffers allocated and not filled. */
	for (k = tb->n; k < first + ready; k++)
		rte_pktmbuf_free(tb->m[k]);
	f = tb->nfrom++;
	tb->from[f].a = a;
	tb->from[f].r = r;
	tb->from[f].tail = tail;
	tb->from[f].bad = bad;
	tb->from[f].first = first;
	tb->from[f].count = tb->n - first;
}

/* Every application's frames on plane i to the port; how many moved. */
static unsigned tx_plane(struct svc *s, unsigned i)
{
	static struct tx_batch tb;
	unsigned j, k, moved = 0;
	uint16_t sent;

	tb.n = tb.nfrom = 0;
	/* Round robin: each round another application goes first. */
	for (j = 0; j < MRSVC_MAX_APPS && tb.n < MRSVC_TX_BATCH; j++) {
		struct mrsvc_app *a = &s->t.app[(j + s->rr) % MRSVC_MAX_APPS];

		if (a->used && a->hello_done)
			tx_take(s, &tb, a, i);
	}
	if (!tb.nfrom)
		return 0;
	sent = tb.n ? port_tx(s, i, tb.m, (uint16_t)tb.n) : 0;
	if (sent < tb.n)
		s->t.c.tx_port_busy++;
	for (k = sent; k < tb.n; k++)
		rte_pktmbuf_free(tb.m[k]);
	/* An application's frames are one run of the batch, sent in order:
	 * those the port took are a prefix of it. Only they (and the
	 * refused ones before them) leave its ring; the rest is sent next
	 * round, and a full ring pushes back on the application. */
	for (j = 0; j < tb.nfrom; j++) {
		uint32_t took = 0;

		if (sent > tb.from[j].first)
			took = sent - tb.from[j].first;
		if (took > tb.from[j].count)
			took = tb.from[j].count;
		for (k = 0; k < took; k++)
			tb.from[j].a->c.tx_bytes +=
				tb.len[tb.from[j].first + k];
		tb.from[j].a->c.tx_frames += took;
		tb.from[j].a->c.tx_bad += tb.from[j].bad;
		s->t.c.tx_bad += tb.from[j].bad;
		mrsvc_ring_consume(tb.from[j].r, tb.from[j].tail,
				   tb.from[j].bad + took);
		moved += tb.from[j].bad + took;
	}
	return moved;
}

static unsigned round_once(struct svc *s)
{
	unsigned work = 0, i, nplanes = s->d->nplanes;

	for (i = 0; i < nplanes; i++)
		work += rx_plane(s, i);
	s->rr++;
	for (i = 0; i < nplanes; i++)
		work += tx_plane(s, i);
	return work;
}

/* Arm every application's transmit rings: 1 if all were empty (the
 * daemon may sleep), 0 if a frame arrived meanwhile. */
static int arm_all(struct svc *s)
{
	unsigned j, i;
	int idle = 1;

	for (j = 0; j < MRSVC_MAX_APPS; j++) {
		struct mrsvc_app *a = &s->t.app[j];

		if (!a->used || !a->hello_done)
			continue;
		for (i = 0; i < s->d->nplanes; i++)
			idle &= mrsvc_ring_arm(
				mrsvc_ring_at(a->shm, &a->lay, 2 * i + 1));
	}
	return idle;
}

static void accept_all(struct svc *s)
{
	for (;;) {
		int fd = accept4(s->lsock, NULL, NULL,
				 SOCK_CLOEXEC | SOCK_NONBLOCK);

		if (fd < 0)
			return;
		mrsvc_app_add(&s->t, fd);
	}
}

/* One look at every socket, waiting up to ms (0: do not wait). */
static void events(struct svc *s, int ms)
{
	struct pollfd pfd[MRSVC_POLL_MAX];
	struct mrsvc_app *who[MRSVC_POLL_MAX];
	int efd_plane[MRSVC_POLL_MAX];
	unsigned n = 0, i, j;
	int timed = 0;

	pfd[n].fd = s->lsock;
	pfd[n].events = POLLIN;
	who[n++] = NULL;
	for (j = 0; j < MRSVC_MAX_APPS; j++) {
		struct mrsvc_app *a = &s->t.app[j];

		if (!a->used)
			continue;
		pfd[n].fd = a->sock;
		pfd[n].events = POLLIN;
		efd_plane[n] = -1;
		who[n++] = a;
		if (!a->hello_done || !ms)
			continue;
		for (i = 0; i < s->d->nplanes; i++) {
			pfd[n].fd = a->tx_efd[i];
			pfd[n].events = POLLIN;
			efd_plane[n] = (int)i;
			who[n++] = a;
		}
	}
	if (ms)
		for (i = 0; i < s->d->nplanes; i++) {
			if (s->d->plane[i].wait_fd < 0) {
				timed = 1; /* no socket to sleep on */
				continue;
			}
			pfd[n].fd = s->d->plane[i].wait_fd;
			pfd[n].events = POLLIN;
			who[n++] = NULL;
		}
	if (poll(pfd, n, timed && ms > 1 ? 1 : ms) <= 0)
		return;
	if (pfd[0].revents & POLLIN)
		accept_all(s);
	for (i = 1; i < n; i++) {
		struct mrsvc_app *a = who[i];

		if (!a || !pfd[i].revents || !a->used)
			continue;
		if (efd_plane[i] >= 0) {
			uint64_t x;

			/* Drained: the application writes it once per
			 * arming (mrdp_svc.h). */
			if (read(pfd[i].fd, &x, sizeof(x)) < 0 &&
			    errno != EAGAIN)
				fprintf(stderr, "metaroced: eventfd: %s\n",
					strerror(errno));
			continue;
		}
		if (pfd[i].fd == a->sock && mrsvc_app_event(&s->t, a) == 1) {
			unsigned k, r;

			/* Its last frames may be in its rings still (the bye
			 * and they came in one sleep of ours): a ring's worth
			 * at most, while the port takes them. */
			for (k = 0; k < s->d->nplanes; k++)
				for (r = 0; r < MRSVC_RING_SLOTS / MRDP_BURST &&
					    tx_plane(s, k);
				     r++)
					;
			mrsvc_app_free(&s->t, a, 0);
		}
	}
}

static void maybe_stats(struct svc *s)
{
	uint64_t t = now_ms();

	if (t >= s->next_stats || s->t.changed) {
		write_stats(s);
		s->next_stats = t + MRSVC_STATS_MS;
	}
}

static void run(struct svc *s)
{
	unsigned idle = 0, busy = 0;

	while (!stop) {
		if (round_once(s)) {
			idle = 0;
			if (++busy % MRSVC_CTL_EVERY == 0) {
				events(s, 0);
				maybe_stats(s);
			}
			continue;
		}
		/* Not at every idle round: clock_gettime there was 8% of a
		 * receiving daemon's samples (perf record, 1 pair). */
		if (s->core >= 0 || ++idle < MRSVC_SPIN) {
			if (idle % MRSVC_CTL_EVERY == 0) {
				events(s, 0);
				maybe_stats(s);
			}
			continue;
		}
		maybe_stats(s);
		if (!arm_all(s))
			continue;
		events(s, MRSVC_STATS_MS);
		idle = 0;
	}
}

static int listen_on(struct svc *s, mode_t mode)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(s->sock_path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "metaroced: socket path too long\n");
		return -1;
	}
	strcpy(sa.sun_path, s->sock_path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	/* A socket file left by a daemon that died: nobody answers it. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		fprintf(stderr, "metaroced: another daemon serves %s already\n",
			s->sock_path);
		close(fd);
		return -1;
	}
	unlink(s->sock_path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0 ||
	    chmod(s->sock_path, mode) != 0 || listen(fd, 64) != 0) {
		fprintf(stderr, "metaroced: %s: %s\n", s->sock_path,
			strerror(errno));
		close(fd);
		return -1;
	}
	fcntl(fd, F_SETFL, O_NONBLOCK);
	s->lsock = fd;
	return 0;
}

/* The device's ports, opened with lib/dp's own port code. */
static int open_ports(struct svc *s, const struct mr_devconf *c)
{
	static struct mr_knobs knobs;
	char err[512] = "";
	struct mrdp_dev *d;
	unsigned i;

	if (mr_knobs_resolve(&knobs, &c->opts, err, sizeof(err))) {
		fprintf(stderr, "metaroced: %s\n", err);
		return -1;
	}
	for (i = 0; i < c->nports; i++)
		if (mrsvc_port_path(c->ports[i], NULL, 0)) {
			fprintf(stderr,
				"metaroced: %s: port '%s' is a service port: "
				"the daemon's record names the real ports\n",
				c->name, c->ports[i]);
			return -1;
		}
	if (mrdp_eal_start(c, &knobs, err, sizeof(err))) {
		fprintf(stderr, "metaroced: %s\n", err);
		return -1;
	}
	d = calloc(1, sizeof(*d));
	if (!d)
		return -1;
	d->conf = *c;
	d->knobs = knobs;
	d->nplanes = c->nports;
	mrdp_dev_blank(d);
	s->d = d;
	if (mrdp_pool_create(d, 0, err, sizeof(err))) {
		fprintf(stderr, "metaroced: %s\n", err);
		return -1;
	}
	for (i = 0; i < d->nplanes; i++)
		if (mrdp_port_open(d, i, 0, err, sizeof(err))) {
			fprintf(stderr, "metaroced: %s\n", err);
			return -1;
		}
	return 0;
}

static void close_ports(struct svc *s)
{
	unsigned i;

	if (!s->d)
		return;
	for (i = 0; i < s->d->nplanes; i++)
		mrdp_port_close(s->d, i);
	if (s->d->pool)
		mrdp_pool_free(s->d);
	free(s->d);
	s->d = NULL;
}

/*
 * The daemon's class: SCHED_FIFO one above the applications' progress
 * threads (knob dp_rtprio of the record, mrdp_dev.c), so a frame's
 * wake-up preempts at once and the switch every application waits on is
 * never queued behind them. On a 2-vCPU host shared by 8 ib_write_bw
 * pairs, CFS gave the daemon 1/17 of the CPU: 0.30 Gb/s aggregate
 * against 2.84 for one pair alone on its own port (bench/wire/svc.md,
 * first run). It sleeps when idle, so the class costs nothing then.
 * Without the privilege: nice -10, said on stderr.
 */
static void set_class(const struct mr_knobs *k, int core)
{
	struct sched_param sp = {
		.sched_priority = (int)mr_knob_get(k, MR_KNOB_DP_RTPRIO) + 1
	};

	if (core >= 0)
		return; /* dedicated core: polls, alone on it */
	if (sp.sched_priority > sched_get_priority_max(SCHED_FIFO))
		sp.sched_priority = sched_get_priority_max(SCHED_FIFO);
	if (sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp) == 0)
		return;
	fprintf(stderr,
		"metaroced: SCHED_FIFO refused (%s): nice -10 instead; "
		"applications' real-time progress threads may delay it\n",
		strerror(errno));
	if (setpriority(PRIO_PROCESS, 0, -10) != 0)
		fprintf(stderr, "metaroced: nice -10: %s\n", strerror(errno));
}

static void usage(void)
{
	fprintf(stderr,
		"usage: metaroced [--socket PATH] [--stats FILE] [--mode "
		"OCTAL] [--core N] RECORD\n"
		"  RECORD  the device record with the real ports (as written "
		"by\n"
		"          metaroce-ctl: name=, port=, ip=, mac=, mtu=, "
		"udp_port=)\n"
		"  --socket  where applications connect (default "
		"/run/metaroce/<name>.sock);\n"
		"            their record says port=service:PATH\n"
		"  --stats   the counters, JSON, rewritten every second "
		"(default PATH.json)\n"
		"  --mode    the socket's permissions (default 0660)\n"
		"  --core    dedicated-core mode: pinned to CPU N, never "
		"sleeps\n");
}

int main(int argc, char **argv)
{
	static struct svc s;
	struct mr_devconf c;
	struct sigaction sa = { .sa_handler = on_signal };
	const char *record = NULL, *sock = NULL, *stats = NULL;
	mode_t mode = 0660;
	char err[512];
	int i, ret = 1;

	s.core = -1;
	s.lsock = -1;
	for (i = 1; i < argc; i++) {
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;

		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			usage();
			return 0;
		} else if (!strcmp(argv[i], "--socket") && v) {
			sock = v;
			i++;
		} else if (!strcmp(argv[i], "--stats") && v) {
			stats = v;
			i++;
		} else if (!strcmp(argv[i], "--mode") && v) {
			mode = (mode_t)strtoul(v, NULL, 8);
			i++;
		} else if (!strcmp(argv[i], "--core") && v) {
			char *end;

			s.core = (int)strtol(v, &end, 10);
			if (*end || s.core < 0 || s.core >= CPU_SETSIZE) {
				fprintf(stderr,
					"metaroced: --core %s: not a "
					"CPU number\n",
					v);
				return 2;
			}
			i++;
		} else if (argv[i][0] != '-' && !record) {
			record = argv[i];
		} else {
			usage();
			return 2;
		}
	}
	if (!record) {
		usage();
		return 2;
	}
	if (mr_devconf_read(record, &c, err, sizeof(err))) {
		fprintf(stderr, "metaroced: %s\n", err);
		return 1;
	}
	if (sock)
		snprintf(s.sock_path, sizeof(s.sock_path), "%s", sock);
	else {
		mkdir("/run/metaroce", 0755);
		snprintf(s.sock_path, sizeof(s.sock_path),
			 "/run/metaroce/%s.sock", c.name);
	}
	snprintf(s.stats_path, sizeof(s.stats_path), "%s",
		 stats ? stats : s.sock_path);
	if (!stats)
		strncat(s.stats_path, ".json",
			sizeof(s.stats_path) - strlen(s.stats_path) - 1);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (s.core >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(s.core, &set);
		if (sched_setaffinity(0, sizeof(set), &set) != 0) {
			fprintf(stderr, "metaroced: --core %d: %s\n", s.core,
				strerror(errno));
			return 1;
		}
	}
	if (open_ports(&s, &c) || listen_on(&s, mode))
		goto out;
	mrsvc_apps_init(&s.t, &s.d->conf, s.d->max_frame);
	set_class(&s.d->knobs, s.core);
	write_stats(&s);
	fprintf(stderr,
		"metaroced: %s: %u port(s), serving at %s (counters in %s)%s\n",
		c.name, s.d->nplanes, s.sock_path, s.stats_path,
		s.core >= 0 ? ", dedicated core" : "");
	run(&s);
	for (i = 0; i < MRSVC_MAX_APPS; i++)
		mrsvc_app_free(&s.t, &s.t.app[i], 0);
	write_stats(&s);
	ret = 0;
out:
	if (s.lsock >= 0) {
		close(s.lsock);
		unlink(s.sock_path);
	}
	close_ports(&s);
	return ret;
}
