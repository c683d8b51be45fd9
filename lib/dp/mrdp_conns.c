/* SPDX-License-Identifier: BSD-2-Clause */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mr_gid.h"
#include "mrdp_addr.h"
#include "mrdp_conns.h"
#include "mrdp_int.h"

int mrdp_conns_snapshot(struct mrdp_dev *d, struct mrdp_conns *s)
{
	unsigned nc, np, want, capc = 0, capp = 0, tries;

	memset(s, 0, sizeof(*s));
	if (!d->ops.conn_count || !d->ops.conn_info)
		return 0;
	/* Sized from a count taken under the lock, allocated without it
	 * (the progress thread must not wait for malloc), filled under it
	 * again; if connections were made in between, counted again. */
	for (tries = 0; tries < 3; tries++) {
		mrdp_lock(d);
		d->ops.conn_count(d->ops.user, &nc, &np);
		want = nc < MRDP_CONNS_MAX ? nc : MRDP_CONNS_MAX;
		if (s->c && want <= capc && np <= capp) {
			s->n = d->ops.conn_info(d->ops.user, s->c, want, s->p,
						capp);
			mrdp_unlock(d);
			s->total = nc;
			return 0;
		}
		mrdp_unlock(d);
		free(s->c);
		free(s->p);
		capc = want + 4;
		capp = np + 4 * MR_MAX_PATHS;
		s->c = calloc(capc, sizeof(*s->c));
		s->p = calloc(capp, sizeof(*s->p));
		if (!s->c || !s->p) {
			mrdp_conns_free(s);
			return -ENOMEM;
		}
	}
	/* Still growing: none this second rather than wait. */
	mrdp_conns_free(s);
	s->total = nc;
	return 0;
}

void mrdp_conns_free(struct mrdp_conns *s)
{
	free(s->c);
	free(s->p);
	memset(s, 0, sizeof(*s));
}

#define MR_INFO_IDX(f, help) CF_##f,
enum { MR_CONN_INFO_FIELDS(MR_INFO_IDX) };
#undef MR_INFO_IDX
#define MR_INFO_IDX(f, help) PF_##f,
enum { MR_PATH_INFO_FIELDS(MR_INFO_IDX) };
#undef MR_INFO_IDX

/* An address id as text: IPv4 ids are the address in host order, IPv6
 * ids name an address of the book (mrdp.h, MR-ADDR-3). */
static void peer_text(const struct mrdp_addrs *book, uint64_t id, char *buf,
		      size_t cap)
{
	const uint8_t *a6;

	if (mr_gid_id_is6((uint32_t)id)) {
		a6 = book ? mrdp_addrs_get(book, (uint32_t)id, NULL) : NULL;
		if (!a6 || !inet_ntop(AF_INET6, a6, buf, (socklen_t)cap))
			snprintf(buf, cap, "?");
		return;
	}
	snprintf(buf, cap, "%u.%u.%u.%u", (unsigned)(id >> 24) & 255,
		 (unsigned)(id >> 16) & 255, (unsigned)(id >> 8) & 255,
		 (unsigned)id & 255);
}

static void conn_json(const struct mr_conn_info *c,
		      const struct mr_path_info *p,
		      const struct mrdp_addrs *book, struct mrdp_jbuf *b)
{
	char peer[INET6_ADDRSTRLEN];

	const uint64_t *v = (const uint64_t *)c;
	unsigned i, k;

	for (i = 0; i < MR_CONN_INFO_N; i++) {
		mrdp_jp(b, "%s\"%s\":", i ? "," : "{", mr_conn_info_names[i]);
		if (i == CF_qp_state)
			mrdp_jp(b, "\"%s\"", mr_qp_state_name(v[i]));
		else
			mrdp_jp(b, "%llu", (unsigned long long)v[i]);
		if (i == CF_dest) {
			peer_text(book, v[i], peer, sizeof(peer));
			mrdp_jp(b, ",\"peer\":\"%s\"", peer);
		}
	}
	mrdp_jp(b, ",\"paths\":[");
	for (k = 0; k < c->npaths; k++) {
		const uint64_t *pv = (const uint64_t *)&p[k];

		for (i = 0; i < MR_PATH_INFO_N; i++) {
			mrdp_jp(b, "%s\"%s\":",
				i   ? ","
				: k ? ",{"
				    : "{",
				mr_path_info_names[i]);
			if (i == PF_state)
				mrdp_jp(b, "\"%s\"", mr_path_state_name(pv[i]));
			else
				mrdp_jp(b, "%llu", (unsigned long long)pv[i]);
		}
		mrdp_jp(b, "}");
	}
	mrdp_jp(b, "]}");
}

void mrdp_conns_json(const struct mrdp_conns *s,
		     const struct mrdp_addrs *book, struct mrdp_jbuf *b)
{
	const struct mr_path_info *p = s->p;
	unsigned i;

	mrdp_jp(b, ",\"conns_total\":%u,\"conns\":[", s->total);
	for (i = 0; i < s->n; i++) {
		if (i)
			mrdp_jp(b, ",");
		conn_json(&s->c[i], p, book, b);
		p += s->c[i].npaths;
	}
	mrdp_jp(b, "]");
}
