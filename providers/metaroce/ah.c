// SPDX-License-Identifier: BSD-2-Clause
/*
 * Address handles for UD: the checked attributes and the destination id
 * the datapath sends to. No datapath state is touched: a UD send resolves
 * the peer's MAC through the datapath's neighbour table when it goes out.
 */
#include <errno.h>
#include <stdlib.h>

#include "metaroce.h"
#include "xlate.h"

struct ibv_ah *metaroce_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	const struct metaroce_device *dev = to_mctx(pd->context)->dev;
	struct ibv_ah_attr gattr;
	struct metaroce_ah *ah;
	uint32_t dest;
	int ret;

	/* Without GRH the vector names the peer by LID (xlate.h). */
	ret = metaroce_av_from_lid(attr, dev->conf.ip, dev->conf.prefix,
				   &gattr);
	if (!ret)
		ret = metaroce_check_av(&gattr, &dev->gids, &dest);
	if (ret) {
		errno = ret;
		return NULL;
	}
	/* UD has no retransmission: a datagram sent before the next hop's
	 * MAC is known could be dropped, so learn it now; a peer no plane
	 * routes to is refused here, as RoCE refuses it (MR-ROUTE-6). */
	ret = metaroce_resolve(to_mctx(pd->context), dest);
	if (ret) {
		errno = ret;
		return NULL;
	}
	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	ah->attr = gattr;
	ah->dest = dest;
	to_mpd(pd)->users++;
	/* libibverbs sets ah->context and ah->pd; set them for callers
	 * inside the provider that look before it does. */
	ah->ibv_ah.context = pd->context;
	ah->ibv_ah.pd = pd;
	return &ah->ibv_ah;
}

int metaroce_destroy_ah(struct ibv_ah *ibah)
{
	struct metaroce_ah *ah = to_mah(ibah);

	to_mpd(ibah->pd)->users--;
	free(ah);
	return 0;
}
