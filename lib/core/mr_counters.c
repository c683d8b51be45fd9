/* SPDX-License-Identifier: BSD-2-Clause */
/* The names and help of struct mr_counters and struct
 * mr_path_counters, from their tables. */
#include "mr_core.h"
#include "mr_counters.h"

#define NAME(name, help) #name,
#define SUFFIX_NAME(base, suffix) #base "_" #suffix,
#define ARRAY_NAMES(name, n, suffixes, help) suffixes(SUFFIX_NAME, name)
static const char *const counter_names[] = { MR_COUNTERS(NAME, ARRAY_NAMES) };

#define HELP(name, help) help,
#define SUFFIX_HELP(base, suffix) base##_help,
#define ARRAY_HELP(name, n, suffixes, help) suffixes(SUFFIX_HELP, name)
/* The arrays' help strings, by name, for SUFFIX_HELP. */
#define DECLARE_HELP(name, n, suffixes, help) \
	static const char name##_help[] = help;
#define NO_HELP(name, help)
MR_COUNTERS(NO_HELP, DECLARE_HELP)

static const char *const counter_help[] = { MR_COUNTERS(HELP, ARRAY_HELP) };

_Static_assert(sizeof(counter_names) / sizeof(counter_names[0]) ==
		       MR_COUNTERS_N,
	       "one name per counter");
_Static_assert(sizeof(counter_help) / sizeof(counter_help[0]) == MR_COUNTERS_N,
	       "one help line per counter");

const char *const *mr_counters_names(void)
{
	return counter_names;
}

const char *const *mr_counters_help(void)
{
	return counter_help;
}

static const char *const path_names[] = { MR_PATH_COUNTERS(NAME) };
static const char *const path_help[] = { MR_PATH_COUNTERS(HELP) };

_Static_assert(sizeof(path_names) / sizeof(path_names[0]) == MR_PATH_COUNTERS_N,
	       "one name per path counter");

const char *const *mr_path_counters_names(void)
{
	return path_names;
}

const char *const *mr_path_counters_help(void)
{
	return path_help;
}
