/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Options of metaroce-ctl's commands: getopt_long over a command's own
 * arguments, with the tool's one-line usage errors (exit status 2).
 */
#ifndef MR_CTL_OPT_H
#define MR_CTL_OPT_H

#include <getopt.h>

#define MRCTL_EXIT_USAGE 2

/* "metaroce-ctl: <message> (see metaroce-ctl --help)" and exit 2. */
void mrctl_die_usage(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

/* Start parsing a command's arguments argv[1..] (argv[0] is skipped);
 * cmd names the command in errors ("link add"). Options may come before
 * and after the operands. */
void mrctl_opt_begin(const char *cmd);
/* The next option's val (lo's), or -1 when none is left (operands are
 * then argv[optind..argc-1]). An unknown option or a missing value is a
 * usage error naming it. shorts: getopt's short options, without the
 * leading ':' (added here). */
int mrctl_getopt(int argc, char **argv, const char *shorts,
		 const struct option *lo);

#endif /* MR_CTL_OPT_H */
