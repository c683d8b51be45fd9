// SPDX-License-Identifier: BSD-2-Clause
/*
 * The congestion controllers by name. A new algorithm is its file
 * (mr_cc_<name>.c defining `const struct mr_cc_ops mr_cc_ops_<name>`, in
 * lib/core/meson.build) and one line here.
 */
#include "mr_cc.h"
#include "mr_registry.h"

#define MR_CC_ALGOS(X)     \
	X(metaroce)        \
	X(metaroce_nohint) \
	X(dcqcn)           \
	X(fixed)

#define DECLARE(n) extern const struct mr_cc_ops mr_cc_ops_##n;
MR_CC_ALGOS(DECLARE)
#undef DECLARE

static const struct mr_cc_ops *const algos[] = {
#define ENTRY(n) &mr_cc_ops_##n,
	MR_CC_ALGOS(ENTRY)
#undef ENTRY
};

MR_REGISTRY_LOOKUP(struct mr_cc_ops, mr_cc_algo, mr_cc_find, algos)
