// SPDX-License-Identifier: BSD-2-Clause
/*
 * The congestion controllers by name. A new algorithm is its file
 * (mr_cc_<name>.c defining `const struct mr_cc_ops mr_cc_ops_<name>`, in
 * lib/core/meson.build) and one line here.
 */
#include <string.h>

#include "mr_cc.h"

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

const struct mr_cc_ops *mr_cc_algo(unsigned i)
{
	return i < sizeof(algos) / sizeof(algos[0]) ? algos[i] : NULL;
}

const struct mr_cc_ops *mr_cc_find(const char *name)
{
	unsigned i;

	if (!name)
		return NULL;
	for (i = 0; i < sizeof(algos) / sizeof(algos[0]); i++)
		if (!strcmp(algos[i]->name, name))
			return algos[i];
	return NULL;
}
