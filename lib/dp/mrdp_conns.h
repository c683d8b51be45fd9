/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The connections of the device's engine and their paths, for the stats
 * file's "conns" array (metaroce-ctl paths reads it): a snapshot taken
 * under the device lock (ops.conn_count / ops.conn_info), then written as
 * JSON from the field tables of lib/core/mr_path_info.h:
 *   "conns_total":N,"conns":[{"qpn":..,"dest_qpn":..,"dest":..,
 *    "peer":"a.b.c.d" or an IPv6 address,"qp_state":"RTS",...,"paths":[{"path":0,
 *    "plane":0,"sport":49152,"state":"active","weight":1,...}]}]
 * At most MRDP_CONNS_MAX connections are written (conns_total says how
 * many there were).
 */
#ifndef MRDP_CONNS_H
#define MRDP_CONNS_H

#include "mr_path_info.h"
#include "mrdp_jbuf.h"

#define MRDP_CONNS_MAX 256

struct mrdp_dev;

struct mrdp_conns {
	unsigned total; /* connections the engine had */
	unsigned n;	/* in c[] */
	struct mr_conn_info *c;
	struct mr_path_info *p; /* c[0]'s paths, then c[1]'s, ... */
};

/* Snapshot (allocates; the engine has no ops: n = 0). Returns 0 or
 * -ENOMEM. */
int mrdp_conns_snapshot(struct mrdp_dev *d, struct mrdp_conns *s);
void mrdp_conns_free(struct mrdp_conns *s);

struct mrdp_addrs;

/* Append ,"conns_total":N,"conns":[...] to b; "peer" is the dest id's
 * address (IPv6 ids from book, which may be NULL: "?"). */
void mrdp_conns_json(const struct mrdp_conns *s,
		     const struct mrdp_addrs *book, struct mrdp_jbuf *b);

#endif /* MRDP_CONNS_H */
