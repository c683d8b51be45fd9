/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * What the two framing files (mrdp_encap.c, mrdp_encap6.c) share on top
 * of DPDK's rte_ip.h. Private to them: mrdp_encap.h stays free of DPDK
 * types.
 */
#ifndef MRDP_ENCAP_RTE_H
#define MRDP_ENCAP_RTE_H

#include <stdint.h>

/* The one's-complement sum of two partial sums, each as rte_raw_cksum
 * returns it (not inverted, in memory order): rte_ip.h's own
 * __rte_raw_cksum_reduce step, which is internal there. */
static inline uint16_t mrdp_cksum_add(uint16_t a, uint16_t b)
{
	uint32_t s = (uint32_t)a + b;

	return (uint16_t)((s & 0xffff) + (s >> 16));
}

#endif /* MRDP_ENCAP_RTE_H */
