/* SPDX-License-Identifier: BSD-2-Clause */
/* The datapath driving lib/core's endpoint: mrdp_ops over struct mr_ep. */
#include "mrdp.h"

static int ep_rx(void *user, uint64_t now, const uint8_t *pkt, size_t len,
		 const struct mr_rx_meta *meta)
{
	return mr_ep_rx(user, now, pkt, len, meta);
}

static size_t ep_tx(void *user, uint64_t now, uint8_t *buf, size_t cap,
		    struct mr_tx_meta *meta)
{
	return mr_ep_tx(user, now, buf, cap, meta);
}

static size_t ep_tx_zc(void *user, uint64_t now, uint8_t *buf, size_t cap,
		       struct mr_tx_meta *meta, struct mr_tx_zc *zc)
{
	return mr_ep_tx_zc(user, now, buf, cap, meta, zc);
}

static uint64_t ep_deadline(void *user)
{
	return mr_ep_next_deadline(user);
}

static void ep_expire(void *user, uint64_t now)
{
	mr_ep_handle_expiry(user, now);
}

static const struct mr_counters *ep_counters(void *user)
{
	return mr_ep_counters(user);
}

static unsigned ep_path_counters(void *user, struct mr_path_counters *out,
				 unsigned max)
{
	return mr_ep_path_counters(user, out, max);
}

static void ep_conn_count(void *user, unsigned *nconn, unsigned *npaths)
{
	mr_ep_conn_count(user, nconn, npaths);
}

static unsigned ep_conn_info(void *user, struct mr_conn_info *conns,
			     unsigned maxc, struct mr_path_info *paths,
			     unsigned maxp)
{
	return mr_ep_conn_info(user, conns, maxc, paths, maxp);
}

static void ep_planes_backlogged(void *user, uint32_t planes)
{
	mr_ep_set_planes_backlogged(user, planes);
}

struct mrdp_ops mrdp_ep_ops(struct mr_ep *ep)
{
	struct mrdp_ops ops = {
		.rx = ep_rx,
		.tx = ep_tx,
		.tx_zc = ep_tx_zc,
		.next_deadline = ep_deadline,
		.expire = ep_expire,
		.counters = ep_counters,
		.path_counters = ep_path_counters,
		.conn_count = ep_conn_count,
		.conn_info = ep_conn_info,
		.planes_backlogged = ep_planes_backlogged,
		.user = ep,
	};

	return ops;
}
