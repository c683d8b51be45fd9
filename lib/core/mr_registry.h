/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The lookups of a policy registry (congestion control, path selection):
 * a table of pointers to ops structs that each have a name. One
 * definition for every registry, so "by index" and "by name" cannot
 * drift apart between them:
 *   MR_REGISTRY_LOOKUP(struct mr_cc_ops, mr_cc_algo, mr_cc_find, algos)
 * defines algo_fn(i) (entry i, NULL past the end) and find_fn(name) (the
 * entry called name, NULL if none or name is NULL), both declared in the
 * policy's header.
 */
#ifndef MR_REGISTRY_H
#define MR_REGISTRY_H

#include <stddef.h>
#include <string.h>

#define MR_REGISTRY_LOOKUP(type, algo_fn, find_fn, tab)                 \
	const type *algo_fn(unsigned i)                                 \
	{                                                               \
		return i < sizeof(tab) / sizeof(tab[0]) ? tab[i] : NULL; \
	}                                                               \
                                                                        \
	const type *find_fn(const char *name)                           \
	{                                                               \
		unsigned i;                                             \
                                                                        \
		if (!name)                                              \
			return NULL;                                    \
		for (i = 0; i < sizeof(tab) / sizeof(tab[0]); i++)      \
			if (!strcmp(tab[i]->name, name))                \
				return tab[i];                          \
		return NULL;                                            \
	}

#endif /* MR_REGISTRY_H */
