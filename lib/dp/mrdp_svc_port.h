/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A plane whose port is the datapath service (mrdp_svc_port.c), and the
 * burst calls mrdp_io.c makes on any plane: an ethdev queue, or the
 * service's rings.
 */
#ifndef MRDP_SVC_PORT_H
#define MRDP_SVC_PORT_H

#include <rte_ethdev.h>

#include "mrdp_int.h"

int mrdp_svc_is_port(const char *args);
/* Connect (the first port of the device) and take plane idx's rings;
 * want: the QPN slot asked for (0: any). 0 or -errno (-ENODEV: no
 * daemon), the reason in err. */
int mrdp_svc_port_open(struct mrdp_dev *d, unsigned idx, unsigned want,
		       char *err, size_t errlen);
void mrdp_svc_port_close(struct mrdp_dev *d, unsigned idx);
uint16_t mrdp_svc_rx_burst(struct mrdp_dev *d, unsigned idx,
			   struct rte_mbuf **v, uint16_t n);
uint16_t mrdp_svc_tx_burst(struct mrdp_dev *d, unsigned idx,
			   struct rte_mbuf **v, uint16_t n);
/* 1 while the device's daemon is there. */
int mrdp_svc_alive(const struct mrdp_dev *d);

static inline uint16_t mrdp_plane_rx(struct mrdp_dev *d, unsigned i,
				     struct rte_mbuf **v, uint16_t n)
{
	if (d->plane[i].svc)
		return mrdp_svc_rx_burst(d, i, v, n);
	return rte_eth_rx_burst(d->plane[i].port_id, 0, v, n);
}

static inline uint16_t mrdp_plane_tx(struct mrdp_dev *d, unsigned i,
				     struct rte_mbuf **v, uint16_t n)
{
	if (d->plane[i].svc)
		return mrdp_svc_tx_burst(d, i, v, n);
	return rte_eth_tx_burst(d->plane[i].port_id, 0, v, n);
}

#endif /* MRDP_SVC_PORT_H */
