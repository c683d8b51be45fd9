/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The core's allocator (struct mr_mem, mr_core.h) over the C heap, for
 * tests that need no accounting or failure injection of their own. ASan
 * in CI sees every leak or double free through it.
 */
#ifndef MR_TEST_MEM_H
#define MR_TEST_MEM_H

#include <stdlib.h>

#include "mr_core.h"

static inline void *mr_test_calloc(void *user, size_t n, size_t size)
{
	(void)user;
	return calloc(n, size);
}

static inline void mr_test_free(void *user, void *p)
{
	(void)user;
	free(p);
}

static const struct mr_mem mr_test_heap = { .calloc = mr_test_calloc,
					    .free = mr_test_free };

#endif /* MR_TEST_MEM_H */
