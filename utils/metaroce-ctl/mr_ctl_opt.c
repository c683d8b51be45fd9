/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_opt.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void mrctl_die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("metaroce-ctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputs(" (see metaroce-ctl --help)\n", stderr);
	exit(MRCTL_EXIT_USAGE);
}

static const char *cur_cmd = "metaroce-ctl";

void mrctl_opt_begin(const char *cmd)
{
	cur_cmd = cmd;
	/* 0, not 1: getopt then also resets its internal state. */
	optind = 0;
	opterr = 0;
}

static const char *long_name(const struct option *lo, int val)
{
	for (; lo->name; lo++)
		if (lo->val == val)
			return lo->name;
	return NULL;
}

int mrctl_getopt(int argc, char **argv, const char *shorts,
		 const struct option *lo)
{
	char spec[64];
	int c;

	snprintf(spec, sizeof(spec), ":%s", shorts);
	c = getopt_long(argc, argv, spec, lo, NULL);
	if (c == '?') {
		if (optopt && !long_name(lo, optopt))
			mrctl_die_usage("unknown option '-%c' for %s", optopt,
					cur_cmd);
		mrctl_die_usage("unknown option '%s' for %s", argv[optind - 1],
				cur_cmd);
	}
	if (c == ':') {
		const char *n = long_name(lo, optopt);

		if (n)
			mrctl_die_usage("option --%s needs a value", n);
		mrctl_die_usage("option -%c needs a value", optopt);
	}
	return c;
}
