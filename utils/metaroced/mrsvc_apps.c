/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroced's applications: the hello on a new connection (the
 * application's record must be the daemon's device: same address, MAC,
 * MTU, UDP port and number of ports, else it is refused saying which),
 * its QPN slot, its shared region and eventfds (mrdp_svc.h), and its end:
 * a connection that ends without MRSVC_BYE is an application that died,
 * counted, and its slot and rings are freed at once either way.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrsvc_apps.h"

void mrsvc_apps_init(struct mrsvc_apps *t, const struct mr_devconf *conf,
		     size_t max_frame)
{
	unsigned i, k;

	memset(t, 0, sizeof(*t));
	t->conf = conf;
	t->max_frame = max_frame;
	for (i = 0; i < MRSVC_MAX_APPS; i++) {
		t->app[i].sock = -1;
		for (k = 0; k < MRSVC_MAX_PLANES; k++)
			t->app[i].rx_efd[k] = t->app[i].tx_efd[k] = -1;
	}
}

struct mrsvc_app *mrsvc_app_add(struct mrsvc_apps *t, int sock)
{
	unsigned i;

	for (i = 0; i < MRSVC_MAX_APPS; i++)
		if (!t->app[i].used) {
			struct mrsvc_app *a = &t->app[i];
			struct ucred cr;
			socklen_t len = sizeof(cr);

			a->used = 1;
			a->sock = sock;
			a->hello_done = 0;
			a->pid = getsockopt(sock, SOL_SOCKET, SO_PEERCRED, &cr,
					    &len) == 0
					 ? cr.pid
					 : 0;
			memset(&a->c, 0, sizeof(a->c));
			return a;
		}
	/* The application sees its connection end before any answer. */
	close(sock);
	t->c.apps_refused++;
	fprintf(stderr, "metaroced: %d applications already: one refused\n",
		MRSVC_MAX_APPS);
	return NULL;
}

void mrsvc_app_free(struct mrsvc_apps *t, struct mrsvc_app *a, int died)
{
	unsigned k;

	if (!a->used)
		return;
	if (a->hello_done) {
		t->by_slot[a->slot] = NULL;
		t->napps--;
		if (died)
			t->c.apps_died++;
		else
			t->c.apps_closed++;
		fprintf(stderr,
			"metaroced: %s (pid %d, slot %u) %s: slot and rings "
			"freed (%llu frames to it, %llu from it, %llu "
			"dropped: its ring full)\n",
			a->name, (int)a->pid, a->slot, died ? "died" : "closed",
			(unsigned long long)a->c.rx_frames,
			(unsigned long long)a->c.tx_frames,
			(unsigned long long)a->c.rx_ring_full);
		t->changed = 1;
	}
	for (k = 0; k < MRSVC_MAX_PLANES; k++) {
		if (a->rx_efd[k] >= 0)
			close(a->rx_efd[k]);
		if (a->tx_efd[k] >= 0)
			close(a->tx_efd[k]);
		a->rx_efd[k] = a->tx_efd[k] = -1;
	}
	if (a->shm)
		munmap(a->shm, a->lay.len);
	a->shm = NULL;
	if (a->sock >= 0)
		close(a->sock);
	a->sock = -1;
	a->used = 0;
	a->hello_done = 0;
}

static void refuse(struct mrsvc_apps *t, struct mrsvc_app *a, int e,
		   const char *fmt, ...)
{
	struct mrsvc_welcome w = { .magic = MRSVC_MAGIC,
				   .version = MRSVC_VERSION,
				   .status = e };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w.msg, sizeof(w.msg), fmt, ap);
	va_end(ap);
	if (send(a->sock, &w, sizeof(w), MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
		fprintf(stderr, "metaroced: refusing pid %d: %s\n", (int)a->pid,
			strerror(errno));
	fprintf(stderr, "metaroced: pid %d refused: %s\n", (int)a->pid, w.msg);
	t->c.apps_refused++;
	mrsvc_app_free(t, a, 0);
}

static int check_record(const struct mrsvc_apps *t, const struct mrsvc_hello *h,
			char *why, size_t cap)
{
	const struct mr_devconf *c = t->conf;

	if (h->nplanes != c->nports)
		snprintf(why, cap,
			 "the record has %u ports, the service's device %s %u",
			 h->nplanes, c->name, c->nports);
	else if (h->ip != c->ip)
		snprintf(why, cap,
			 "the record's address is not the service device "
			 "%s's (%u.%u.%u.%u)",
			 c->name, c->ip >> 24, (c->ip >> 16) & 255,
			 (c->ip >> 8) & 255, c->ip & 255);
	else if (memcmp(h->mac, c->mac, 6))
		snprintf(why, cap,
			 "the record's MAC is not the service device %s's "
			 "(%02x:%02x:%02x:%02x:%02x:%02x)",
			 c->name, c->mac[0], c->mac[1], c->mac[2], c->mac[3],
			 c->mac[4], c->mac[5]);
	else if (h->mtu != c->mtu || h->max_frame != t->max_frame)
		snprintf(why, cap,
			 "the record's mtu %u is not the service device %s's "
			 "(%u)",
			 h->mtu, c->name, c->mtu);
	else if (h->udp_port != c->udp_port)
		snprintf(why, cap,
			 "the record's udp_port %u is not the service device "
			 "%s's (%u)",
			 h->udp_port, c->name, c->udp_port);
	else
		return 0;
	return -1;
}

static int make_region(struct mrsvc_app *a, unsigned nplanes, size_t max_frame,
		       int *memfd)
{
	unsigned k;

	if (mrsvc_layout_of(&a->lay, nplanes, max_frame))
		return -EINVAL;
	*memfd = memfd_create("metaroced", MFD_CLOEXEC);
	if (*memfd < 0)
		return -errno;
	if (ftruncate(*memfd, (off_t)a->lay.len) != 0)
		return -errno;
	a->shm = mmap(NULL, a->lay.len, PROT_READ | PROT_WRITE, MAP_SHARED,
		      *memfd, 0);
	if (a->shm == MAP_FAILED) {
		a->shm = NULL;
		return -errno;
	}
	for (k = 0; k < nplanes; k++) {
		a->rx_efd[k] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		a->tx_efd[k] = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
		if (a->rx_efd[k] < 0 || a->tx_efd[k] < 0)
			return -errno;
	}
	return 0;
}

static int hello(struct mrsvc_apps *t, struct mrsvc_app *a,
		 const struct mrsvc_hello *h)
{
	struct mrsvc_welcome w = { .magic = MRSVC_MAGIC,
				   .version = MRSVC_VERSION };
	char cbuf[CMSG_SPACE(MRSVC_MAX_FDS * sizeof(int))];
	int fds[MRSVC_MAX_FDS];
	struct iovec iov = { .iov_base = &w, .iov_len = sizeof(w) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1 };
	struct cmsghdr *cm;
	char why[160];
	unsigned s, k, n = t->conf->nports;
	int memfd = -1, ret;

	if (h->magic != MRSVC_MAGIC || h->version != MRSVC_VERSION) {
		refuse(t, a, EPROTO, "protocol version %u, the service's %u",
		       h->version, MRSVC_VERSION);
		return -1;
	}
	memcpy(a->name, h->name, sizeof(a->name));
	a->name[sizeof(a->name) - 1] = 0;
	/* It goes into logs and JSON: a device name's characters only. */
	for (k = 0; a->name[k]; k++)
		if (!isalnum((unsigned char)a->name[k]) &&
		    !strchr("_.-", a->name[k]))
			a->name[k] = '_';
	if (check_record(t, h, why, sizeof(why))) {
		refuse(t, a, EINVAL, "%s", why);
		return -1;
	}
	if (h->want_slot >= MRSVC_SLOTS) {
		refuse(t, a, EINVAL, "QPN slot %u is not 1..%u", h->want_slot,
		       MRSVC_SLOTS - 1);
		return -1;
	}
	if (h->want_slot) {
		s = h->want_slot;
		if (t->by_slot[s]) {
			refuse(t, a, EBUSY, "QPN slot %u is in use by pid %d",
			       s, (int)t->by_slot[s]->pid);
			return -1;
		}
	} else {
		for (s = 1; s < MRSVC_SLOTS && t->by_slot[s]; s++)
			;
		if (s == MRSVC_SLOTS) {
			refuse(t, a, EBUSY, "every QPN slot is in use");
			return -1;
		}
	}
	ret = make_region(a, n, t->max_frame, &memfd);
	if (ret) {
		if (memfd >= 0)
			close(memfd);
		refuse(t, a, -ret, "cannot make the shared rings: %s",
		       strerror(-ret));
		return -1;
	}
	w.slot = s;
	w.nplanes = n;
	w.buf_size = (uint32_t)a->lay.buf_size;
	w.shm_len = a->lay.len;
	fds[0] = memfd;
	for (k = 0; k < n; k++) {
		fds[1 + 2 * k] = a->rx_efd[k];
		fds[2 + 2 * k] = a->tx_efd[k];
	}
	memset(cbuf, 0, sizeof(cbuf));
	mh.msg_control = cbuf;
	mh.msg_controllen = CMSG_SPACE((1 + 2 * n) * sizeof(int));
	cm = CMSG_FIRSTHDR(&mh);
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN((1 + 2 * n) * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, (1 + 2 * n) * sizeof(int));
	ret = (int)sendmsg(a->sock, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(memfd); /* the mapping and the application keep it */
	if (ret != (int)sizeof(w)) {
		fprintf(stderr, "metaroced: pid %d: welcome: %s\n", (int)a->pid,
			strerror(errno));
		mrsvc_app_free(t, a, 1);
		return -1;
	}
	a->slot = s;
	a->hello_done = 1;
	t->by_slot[s] = a;
	t->napps++;
	t->c.apps_accepted++;
	t->changed = 1;
	fprintf(stderr,
		"metaroced: %s (pid %d) connected: QPN slot %u (QPNs "
		"0x%06x..0x%06x)\n",
		a->name, (int)a->pid, s, s << MRSVC_SLOT_BITS,
		((s + 1) << MRSVC_SLOT_BITS) - 1);
	return 0;
}

int mrsvc_app_event(struct mrsvc_apps *t, struct mrsvc_app *a)
{
	union {
		struct mrsvc_hello h;
		uint32_t bye;
	} m;
	ssize_t n = recv(a->sock, &m, sizeof(m), MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0) {
		mrsvc_app_free(t, a, 1);
		return -1;
	}
	if (!a->hello_done) {
		if ((size_t)n != sizeof(m.h)) {
			refuse(t, a, EPROTO, "a hello of %zd bytes", n);
			return -1;
		}
		return hello(t, a, &m.h);
	}
	/* A clean close: the caller sends what is left in its transmit
	 * rings (its last ACKs), then frees it. */
	if ((size_t)n == sizeof(m.bye) && m.bye == MRSVC_BYE)
		return 1;
	/* Nothing else is said on the connection. */
	mrsvc_app_free(t, a, 1);
	return -1;
}

int mrsvc_apps_json(const struct mrsvc_apps *t, char *buf, size_t cap)
{
	size_t w = 0;
	unsigned i;
	int first = 1;

#define PUT(...)                                                               \
	do {                                                                   \
		int r_ =                                                       \
			snprintf(buf + w, w < cap ? cap - w : 0, __VA_ARGS__); \
		if (r_ < 0)                                                    \
			return -1;                                             \
		w += (size_t)r_;                                               \
	} while (0)
#define JC(name, help) PUT("\"" #name "\":%llu,", (unsigned long long)c->name);
	PUT("{\"device\":\"%s\",\"apps\":%u,", t->conf->name, t->napps);
	{
		const struct mrsvc_counters *c = &t->c;

		MRSVC_COUNTERS(JC)
	}
	PUT("\"app\":[");
	for (i = 0; i < MRSVC_MAX_APPS; i++) {
		const struct mrsvc_app *a = &t->app[i];
		const struct mrsvc_app_counters *c = &a->c;

		if (!a->used || !a->hello_done)
			continue;
		PUT("%s{\"name\":\"%s\",\"pid\":%d,\"slot\":%u,",
		    first ? "" : ",", a->name, (int)a->pid, a->slot);
		MRSVC_APP_COUNTERS(JC)
		w--; /* the last comma */
		PUT("}");
		first = 0;
	}
	PUT("]}\n");
#undef JC
#undef PUT
	return w < cap ? (int)w : -1;
}
