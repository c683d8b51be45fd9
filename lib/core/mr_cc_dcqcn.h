/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The state of the DCQCN-like controller (mr_cc_dcqcn.c, MR-CC-9), for
 * its tests and for tools that show it. Rates in Mb/s, alpha in 1/65536.
 */
#ifndef MR_CC_DCQCN_H
#define MR_CC_DCQCN_H

#include "mr_cc.h"

struct mr_cc_dcqcn {
	uint64_t rc, rt;
	uint32_t alpha;
	uint32_t stage;
	uint64_t last_cnp, last_alpha, last_inc;
};

/* The state of cc, which must run the dcqcn algorithm. */
static inline const struct mr_cc_dcqcn *mr_cc_dcqcn_of(const struct mr_cc *cc)
{
	return (const struct mr_cc_dcqcn *)(const void *)cc->state;
}

#endif /* MR_CC_DCQCN_H */
