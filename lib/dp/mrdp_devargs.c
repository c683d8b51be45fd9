/* SPDX-License-Identifier: BSD-2-Clause */
/* Devargs lookups with DPDK's own parser (rte_kvargs), so a port string
 * means to us what it means to the PMD that gets it (lists in [], keys
 * without values). */
#include <stdio.h>
#include <string.h>

#include <rte_kvargs.h>

#include "mrdp_int.h"

const char *mrdp_devarg(const char *args, const char *key, char *val,
			size_t cap)
{
	const char *rest = strchr(args, ',');
	struct rte_kvargs *kv;
	const char *v;

	if (!rest || cap == 0)
		return NULL;
	kv = rte_kvargs_parse(rest + 1, NULL);
	if (!kv)
		return NULL;
	v = rte_kvargs_get(kv, key);
	if (v)
		snprintf(val, cap, "%s", v);
	rte_kvargs_free(kv);
	return v ? val : NULL;
}
