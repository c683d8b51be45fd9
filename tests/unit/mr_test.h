/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A minimal test harness shared by every unit test: no framework, no
 * allocation, deterministic. A test file defines test functions and lists
 * them in MR_TEST_MAIN(...). A failed check prints file:line and the
 * expression and fails the test (exit status 1); exit 77 means skipped.
 */
#ifndef MR_TEST_H
#define MR_TEST_H

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern int mr_test_failures;

#define MR_CHECK(cond)                                                        \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s\n",          \
				__FILE__, __LINE__, #cond);                   \
			mr_test_failures++;                                   \
			return;                                               \
		}                                                             \
	} while (0)

#define MR_CHECK_EQ(a, b)                                                     \
	do {                                                                  \
		long long mr_a_ = (long long)(a), mr_b_ = (long long)(b);     \
		if (mr_a_ != mr_b_) {                                         \
			fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, mr_a_, mr_b_);    \
			mr_test_failures++;                                   \
			return;                                               \
		}                                                             \
	} while (0)

#define MR_CHECK_MEM(a, b, n)                                                 \
	do {                                                                  \
		if (memcmp((a), (b), (n)) != 0) {                             \
			fprintf(stderr, "%s:%d: memory %s != %s (%zu bytes)\n", \
				__FILE__, __LINE__, #a, #b, (size_t)(n));     \
			mr_test_failures++;                                   \
			return;                                               \
		}                                                             \
	} while (0)

struct mr_test_case {
	const char *name;
	void (*fn)(void);
};

#define MR_TEST(fn) { #fn, fn }

#define MR_TEST_MAIN(...)                                                     \
	int mr_test_failures;                                                 \
	int main(void)                                                        \
	{                                                                     \
		static const struct mr_test_case cases[] = { __VA_ARGS__ };   \
		size_t i, n = sizeof(cases) / sizeof(cases[0]);               \
		int failed = 0;                                               \
		for (i = 0; i < n; i++) {                                     \
			int before = mr_test_failures;                        \
			cases[i].fn();                                        \
			if (mr_test_failures != before) {                     \
				failed++;                                     \
				fprintf(stderr, "FAIL %s\n", cases[i].name);  \
			} else {                                              \
				printf("ok %s\n", cases[i].name);             \
			}                                                     \
		}                                                             \
		printf("%zu tests, %d failed\n", n, failed);                  \
		return failed ? 1 : 0;                                        \
	}

#endif /* MR_TEST_H */
