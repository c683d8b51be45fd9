/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port reached through the datapath service (port=service:<socket>):
 * the application's side of mrdp_svc.h. Every port of the record names
 * the same daemon; the first one opened connects (one connection, one QPN
 * slot, one shared region per device), each plane then moves frames
 * through its own pair of rings. Receive and transmit are bursts of the
 * device's own mbufs, so the rest of lib/dp does not know the port is not
 * an ethdev: one copy into the shared buffer on transmit, one out of it
 * on receive.
 *
 * The plane's wait_fd (mrdp_wait.c) is an epoll set of the plane's rx
 * eventfd and the control socket, so the progress thread sleeps until a
 * frame arrives or the daemon goes away. A daemon that is absent fails the
 * open with -ENODEV (nothing made); one that dies later is reported once
 * on stderr, and every frame then sent is refused (counted as the port's
 * drops) until the device is closed.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "mrdp_int.h"
#include "mrdp_svc.h"
#include "mrdp_svc_port.h"

/* Empty receive bursts between two looks at the control socket when no
 * wake-up came (the daemon's death wakes a sleeper through the epoll set
 * at once; a thread that never sleeps looks this often). */
#define SVC_HUP_CHECK 1024u

struct mrdp_svc {
	char path[108];
	int sock;
	int dead;
	unsigned slot;
	void *shm;
	struct mrsvc_layout lay;
	int rx_efd[MRSVC_MAX_PLANES], tx_efd[MRSVC_MAX_PLANES];
	int epfd[MRSVC_MAX_PLANES];
	unsigned empty[MRSVC_MAX_PLANES];
	unsigned nopen;
};

int mrdp_svc_is_port(const char *args)
{
	return mrsvc_port_path(args, NULL, 0) == 1;
}

int mrdp_service_probe(const struct mr_devconf *c, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd, e;

	if (!c->nports ||
	    mrsvc_port_path(c->ports[0], sa.sun_path, sizeof(sa.sun_path)) != 1)
		return 0;
	/* The daemon sees a connection that ends before its hello: not an
	 * application, not counted. */
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		close(fd);
		return 0;
	}
	e = errno;
	if (fd >= 0)
		close(fd);
	snprintf(err, errlen,
		 "%s: no datapath service at %s (%s): start metaroced for the "
		 "device's ports",
		 c->name, sa.sun_path, strerror(e));
	return -ENODEV;
}

static void svc_free(struct mrdp_svc *s)
{
	unsigned i;

	for (i = 0; i < MRSVC_MAX_PLANES; i++) {
		if (s->rx_efd[i] >= 0)
			close(s->rx_efd[i]);
		if (s->tx_efd[i] >= 0)
			close(s->tx_efd[i]);
		if (s->epfd[i] >= 0)
			close(s->epfd[i]);
	}
	if (s->shm)
		munmap(s->shm, s->lay.len);
	if (s->sock >= 0)
		close(s->sock);
	free(s);
}

static int recv_welcome(struct mrdp_svc *s, struct mrsvc_welcome *w, int *fds,
			unsigned *nfds)
{
	char cbuf[CMSG_SPACE(MRSVC_MAX_FDS * sizeof(int))];
	struct iovec iov = { .iov_base = w, .iov_len = sizeof(*w) };
	struct msghdr mh = { .msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = cbuf,
			     .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *c;
	ssize_t n;

	*nfds = 0;
	do
		n = recvmsg(s->sock, &mh, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	for (c = CMSG_FIRSTHDR(&mh); c; c = CMSG_NXTHDR(&mh, c))
		if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
			size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

			if (k > MRSVC_MAX_FDS)
				k = MRSVC_MAX_FDS;
			memcpy(fds, CMSG_DATA(c), k * sizeof(int));
			*nfds = (unsigned)k;
		}
	if ((size_t)n != sizeof(*w) || w->magic != MRSVC_MAGIC)
		return -EPROTO;
	return 0;
}

/* Connect, say hello, map what the daemon gives: 0 or -errno. */
static int svc_connect(struct mrdp_dev *d, const char *path, unsigned want,
		       struct mrdp_svc **out, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct mrsvc_hello h = { .magic = MRSVC_MAGIC,
				 .version = MRSVC_VERSION,
				 .nplanes = d->nplanes,
				 .mtu = d->conf.mtu,
				 .ip = d->conf.ip,
				 .udp_port = d->conf.udp_port,
				 .want_slot = want,
				 .max_frame = (uint32_t)d->max_frame };
	struct mrsvc_welcome w;
	int fds[MRSVC_MAX_FDS];
	unsigned nfds = 0, i;
	struct mrdp_svc *s;
	struct stat st;
	int ret;

	s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->sock = -1;
	for (i = 0; i < MRSVC_MAX_PLANES; i++)
		s->rx_efd[i] = s->tx_efd[i] = s->epfd[i] = -1;
	snprintf(s->path, sizeof(s->path), "%s", path);
	snprintf(h.name, sizeof(h.name), "%s", d->conf.name);
	memcpy(h.mac, d->conf.mac, 6);
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "service socket path '%s' too long",
			 path);
		ret = -EINVAL;
		goto fail;
	}
	strcpy(sa.sun_path, path);
	s->sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->sock < 0 ||
	    connect(s->sock, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		snprintf(err, errlen,
			 "%s: no datapath service at %s (%s): start metaroced "
			 "for the device's ports",
			 d->conf.name, path, strerror(errno));
		ret = -ENODEV;
		goto fail;
	}
	if (send(s->sock, &h, sizeof(h), MSG_NOSIGNAL) != (ssize_t)sizeof(h)) {
		snprintf(err, errlen, "%s: service %s: %s", d->conf.name, path,
			 strerror(errno));
		ret = -ENODEV;
		goto fail;
	}
	ret = recv_welcome(s, &w, fds, &nfds);
	if (ret) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen, "%s: service %s did not answer (%s)",
			 d->conf.name, path, strerror(-ret));
		ret = -ENODEV;
		goto fail;
	}
	if (w.status) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen, "%s: service %s refused: %.*s",
			 d->conf.name, path, (int)sizeof(w.msg), w.msg);
		ret = -(int)w.status;
		goto fail;
	}
	if (nfds != 1 + 2 * d->nplanes || w.nplanes != d->nplanes ||
	    mrsvc_layout_of(&s->lay, d->nplanes, d->max_frame) ||
	    s->lay.buf_size != w.buf_size || s->lay.len != w.shm_len ||
	    w.slot == 0 || w.slot >= MRSVC_SLOTS || fstat(fds[0], &st) ||
	    (uint64_t)st.st_size < w.shm_len) {
		for (i = 0; i < nfds; i++)
			close(fds[i]);
		snprintf(err, errlen,
			 "%s: service %s answered what this library does not "
			 "understand (another version?)",
			 d->conf.name, path);
		ret = -EPROTO;
		goto fail;
	}
	s->shm = mmap(NULL, s->lay.len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      fds[0], 0);
	close(fds[0]);
	for (i = 0; i < d->nplanes; i++) {
		s->rx_efd[i] = fds[1 + 2 * i];
		s->tx_efd[i] = fds[2 + 2 * i];
	}
	if (s->shm == MAP_FAILED) {
		s->shm = NULL;
		snprintf(err, errlen, "%s: mapping the service's rings: %s",
			 d->conf.name, strerror(errno));
		ret = -ENOMEM;
		goto fail;
	}
	for (i = 0; i < d->nplanes; i++) {
		struct epoll_event ev = { .events = EPOLLIN };

		s->epfd[i] = epoll_create1(EPOLL_CLOEXEC);
		ev.data.fd = s->rx_efd[i];
		if (s->epfd[i] < 0 ||
		    epoll_ctl(s->epfd[i], EPOLL_CTL_ADD, s->rx_efd[i], &ev)) {
			ret = -errno;
			snprintf(err, errlen, "epoll: %s", strerror(errno));
			goto fail;
		}
		ev.data.fd = s->sock;
		if (epoll_ctl(s->epfd[i], EPOLL_CTL_ADD, s->sock, &ev)) {
			ret = -errno;
			snprintf(err, errlen, "epoll: %s", strerror(errno));
			goto fail;
		}
	}
	s->slot = w.slot;
	*out = s;
	return 0;
fail:
	svc_free(s);
	return ret;
}

int mrdp_svc_port_open(struct mrdp_dev *d, unsigned idx, unsigned want,
		       char *err, size_t errlen)
{
	char path[108], path0[108];
	struct mrdp_plane *p = &d->plane[idx];
	unsigned i;
	int ret;

	if (mrsvc_port_path(d->conf.ports[idx], path, sizeof(path)) != 1) {
		snprintf(err, errlen, "port '%s': service:<socket path>",
			 d->conf.ports[idx]);
		return -EINVAL;
	}
	/* One daemon owns all the device's ports: a record that mixes it
	 * with ports of its own would have two owners of one QPN space. */
	for (i = 0; i < d->nplanes; i++)
		if (mrsvc_port_path(d->conf.ports[i], path0, sizeof(path0)) !=
			    1 ||
		    strcmp(path0, path) != 0) {
			snprintf(err, errlen,
				 "%s: port '%s': a device's ports are all "
				 "service ports of one daemon, or none",
				 d->conf.name, d->conf.ports[i]);
			return -EINVAL;
		}
	if (!d->svc) {
		ret = svc_connect(d, path, want, &d->svc, err, errlen);
		if (ret)
			return ret;
		d->qpn_base = d->svc->slot << MRSVC_SLOT_BITS;
		d->qpn_count = 1u << MRSVC_SLOT_BITS;
		MRDP_LOG("%s: service %s: QPN slot %u\n", d->conf.name, path,
			 d->svc->slot);
	}
	d->svc->nopen++;
	p->svc = 1;
	/* No ethdev: DPDK calls on port_id fail (zero-copy off, no link
	 * speed) instead of touching another port. */
	p->port_id = RTE_MAX_ETHPORTS;
	p->wait_fd = d->svc->epfd[idx];
	p->wait_xsk = 0;
	p->open = 0;
	p->started = 1;
	return 0;
}

void mrdp_svc_port_close(struct mrdp_dev *d, unsigned idx)
{
	struct mrdp_plane *p = &d->plane[idx];
	uint32_t bye = MRSVC_BYE;

	if (!p->svc || !d->svc)
		return;
	p->svc = 0;
	p->started = 0;
	p->wait_fd = -1;
	if (--d->svc->nopen)
		return;
	/* A clean close, told apart from a death in the daemon's count. */
	if (!d->svc->dead && send(d->svc->sock, &bye, sizeof(bye),
				  MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		MRDP_LOG("%s: service bye: %s\n", d->conf.name,
			 strerror(errno));
	svc_free(d->svc);
	d->svc = NULL;
	d->qpn_count = 0;
}

/* The daemon closed its end: say so once, stop the plane's wake-ups. */
static void svc_check_gone(struct mrdp_dev *d)
{
	struct mrdp_svc *s = d->svc;
	struct pollfd pfd = { .fd = s->sock, .events = POLLIN };
	unsigned i;

	if (s->dead || poll(&pfd, 1, 0) <= 0)
		return;
	s->dead = 1;
	for (i = 0; i < d->nplanes; i++)
		epoll_ctl(s->epfd[i], EPOLL_CTL_DEL, s->sock, NULL);
	fprintf(stderr,
		"mrdp: %s: the datapath service at %s is gone (metaroced "
		"stopped): the device's ports are down, frames are "
		"dropped\n",
		d->conf.name, s->path);
}

uint16_t mrdp_svc_rx_burst(struct mrdp_dev *d, unsigned idx,
			   struct rte_mbuf **v, uint16_t n)
{
	struct mrdp_svc *s = d->svc;
	struct mrsvc_ring *r = mrsvc_ring_at(s->shm, &s->lay, 2 * idx);
	uint32_t tail, ready, k;

	if (s->dead)
		return 0;
	ready = mrsvc_ring_ready(r, &tail);
	if (!ready) {
		if (++s->empty[idx] % SVC_HUP_CHECK == 0)
			svc_check_gone(d);
		return 0;
	}
	/* Awake and receiving: the daemon need not write the eventfd. Only
	 * a thread about to sleep asks for it (mrdp_svc_arm): asked at
	 * every empty burst instead, the daemon wrote it for nearly every
	 * frame (22,454 writes in one ib_write_bw -D 5 receiver's run). */
	if (atomic_load_explicit(&r->sleeping, memory_order_relaxed))
		atomic_store_explicit(&r->sleeping, 0, memory_order_relaxed);
	if (ready > n)
		ready = n;
	if (rte_pktmbuf_alloc_bulk(d->pool, v, ready) != 0)
		return 0; /* the frames wait in the ring */
	for (k = 0; k < ready; k++) {
		uint32_t len = r->len[(tail + k) & (MRSVC_RING_SLOTS - 1)];
		const uint8_t *b =
			mrsvc_buf_at(s->shm, &s->lay, 2 * idx, tail + k);

		if (len > s->lay.buf_size)
			len = 0; /* counted as short by the receive path */
		memcpy(rte_pktmbuf_mtod(v[k], uint8_t *), b, len);
		v[k]->data_len = (uint16_t)len;
		v[k]->pkt_len = len;
	}
	mrsvc_ring_consume(r, tail, ready);
	return (uint16_t)ready;
}

uint16_t mrdp_svc_tx_burst(struct mrdp_dev *d, unsigned idx,
			   struct rte_mbuf **v, uint16_t n)
{
	struct mrdp_svc *s = d->svc;
	struct mrsvc_ring *r = mrsvc_ring_at(s->shm, &s->lay, 2 * idx + 1);
	uint32_t head, room, k;

	if (s->dead)
		return 0;
	room = mrsvc_ring_room(r, &head);
	if (room > n)
		room = n;
	for (k = 0; k < room; k++) {
		uint32_t len = rte_pktmbuf_pkt_len(v[k]);
		uint8_t *b =
			mrsvc_buf_at(s->shm, &s->lay, 2 * idx + 1, head + k);

		if (len > s->lay.buf_size)
			len = (uint32_t)s->lay.buf_size; /* cannot be */
		if (v[k]->nb_segs == 1)
			memcpy(b, rte_pktmbuf_mtod(v[k], uint8_t *), len);
		else
			rte_pktmbuf_read(v[k], 0, len, b);
		r->len[(head + k) & (MRSVC_RING_SLOTS - 1)] = len;
	}
	if (room && mrsvc_ring_publish(r, head, room)) {
		uint64_t one = 1;

		if (write(s->tx_efd[idx], &one, sizeof(one)) < 0 &&
		    errno != EAGAIN)
			MRDP_LOG("%s: service kick: %s\n", d->conf.name,
				 strerror(errno));
	}
	/* Sent means handed over: the mbufs are ours to free, as a PMD
	 * frees them after transmit. */
	for (k = 0; k < room; k++)
		rte_pktmbuf_free(v[k]);
	if (!room && ++s->empty[idx] % SVC_HUP_CHECK == 0)
		svc_check_gone(d);
	return (uint16_t)room;
}

int mrdp_svc_arm(struct mrdp_dev *d, unsigned idx)
{
	struct mrdp_svc *s = d->svc;

	if (!s || s->dead)
		return 1;
	return mrsvc_ring_arm(mrsvc_ring_at(s->shm, &s->lay, 2 * idx));
}

void mrdp_svc_woken(struct mrdp_dev *d, unsigned idx)
{
	struct mrdp_svc *s = d->svc;
	uint64_t x;

	if (!s)
		return;
	/* The daemon wrote the eventfd once for our flag (mrdp_svc.h):
	 * take the count back so the next sleep is a real one. */
	if (read(s->rx_efd[idx], &x, sizeof(x)) < 0 && errno != EAGAIN)
		MRDP_LOG("%s: service eventfd: %s\n", d->conf.name,
			 strerror(errno));
	svc_check_gone(d);
}

int mrdp_svc_alive(const struct mrdp_dev *d)
{
	return d->svc && !d->svc->dead;
}
