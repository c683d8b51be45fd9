/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_knobs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const struct mr_knob_def defs[MR_KNOBS_N] = {
#define MR_KNOB_ROW(id, n, t, d, lo, hi, f, lay, ch, h) \
	[MR_KNOB_##id] = { .name = n,                   \
			   .env = "METAROCE_" #id,      \
			   .type = t,                   \
			   .def = d,                    \
			   .min = lo,                   \
			   .max = hi,                   \
			   .flags = f,                  \
			   .layer = lay,                \
			   .choices = ch,               \
			   .help = h },
	MR_KNOBS(MR_KNOB_ROW)
#undef MR_KNOB_ROW
};

const struct mr_knob_def *mr_knob_defs(void)
{
	return defs;
}

int mr_knob_find(const char *name)
{
	for (int i = 0; i < MR_KNOBS_N; i++)
		if (!strcmp(defs[i].name, name))
			return i;
	return -1;
}

/* The n-th name of a choice row ("" if none), into buf. */
static void choice_name(const struct mr_knob_def *d, int64_t n, char *buf,
			size_t cap)
{
	const char *p = d->choices, *bar;

	for (; n > 0 && p; n--) {
		p = strchr(p, '|');
		if (p)
			p++;
	}
	if (!p) {
		snprintf(buf, cap, "?");
		return;
	}
	bar = strchr(p, '|');
	snprintf(buf, cap, "%.*s", (int)(bar ? bar - p : (long)strlen(p)), p);
}

static int parse_choice(const struct mr_knob_def *d, const char *s, int64_t *v)
{
	size_t n = strlen(s);
	const char *p = d->choices;

	for (int64_t i = 0; p && n; i++) {
		const char *bar = strchr(p, '|');
		size_t len = bar ? (size_t)(bar - p) : strlen(p);

		if (len == n && !strncmp(p, s, n)) {
			*v = i;
			return 0;
		}
		p = bar ? bar + 1 : NULL;
	}
	return -1;
}

static void range_text(const struct mr_knob_def *d, char *buf, size_t cap)
{
	if (d->type == MR_KNOB_CHOICE)
		snprintf(buf, cap, "one of %s", d->choices);
	else if (d->type == MR_KNOB_BOOL)
		snprintf(buf, cap, "0 or 1 (no/yes, off/on, false/true)");
	else if (d->flags & MR_KNOB_F_ZERO_OFF)
		snprintf(buf, cap, "0 (off) or %lld..%lld", (long long)d->min,
			 (long long)d->max);
	else
		snprintf(buf, cap, "%lld..%lld", (long long)d->min,
			 (long long)d->max);
}

static int parse_bool(const char *s, int64_t *v)
{
	static const char *const yes[] = { "1", "yes", "on", "true" };
	static const char *const no[] = { "0", "no", "off", "false" };

	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++) {
		if (!strcasecmp(s, yes[i])) {
			*v = 1;
			return 0;
		}
		if (!strcasecmp(s, no[i])) {
			*v = 0;
			return 0;
		}
	}
	return -1;
}

/* Decimal digits only (strtoll would take spaces, '+', hex with 0x). */
static int parse_num(const char *s, int sign, int64_t *v)
{
	const char *p = s;
	char *end;
	long long x;

	if (sign && *p == '-')
		p++;
	if (!*p || strspn(p, "0123456789") != strlen(p))
		return -1;
	errno = 0;
	x = strtoll(s, &end, 10);
	if (errno || *end)
		return -1;
	*v = x;
	return 0;
}

int mr_knob_parse(int id, const char *s, int64_t *v, const char *what,
		  char *err, size_t errlen)
{
	const struct mr_knob_def *d = &defs[id];
	char range[64];
	int64_t x;
	int bad;

	if (d->type == MR_KNOB_BOOL)
		bad = parse_bool(s, &x);
	else if (d->type == MR_KNOB_CHOICE)
		bad = parse_choice(d, s, &x);
	else
		bad = parse_num(s, d->type == MR_KNOB_INT, &x) ||
		      ((x < d->min || x > d->max) &&
		       !(x == 0 && (d->flags & MR_KNOB_F_ZERO_OFF)));
	if (bad) {
		range_text(d, range, sizeof(range));
		if (what)
			snprintf(err, errlen, "%s %s=%s: %s must be %s", what,
				 d->name, s, d->name, range);
		else
			snprintf(err, errlen, "%s=%s: must be %s", d->env, s,
				 range);
		return -1;
	}
	*v = x;
	return 0;
}

int mr_knob_set_parse(struct mr_knob_set *set, const char *nv, const char *what,
		      char *err, size_t errlen)
{
	const char *eq = strchr(nv, '=');
	char name[64];
	int id;

	if (!eq || eq == nv || (size_t)(eq - nv) >= sizeof(name)) {
		snprintf(err, errlen, "%s '%s': expected NAME=VALUE", what, nv);
		return -1;
	}
	memcpy(name, nv, (size_t)(eq - nv));
	name[eq - nv] = 0;
	id = mr_knob_find(name);
	if (id < 0) {
		snprintf(err, errlen,
			 "%s '%s': no knob named %s (metaroce-ctl knobs "
			 "lists them)",
			 what, nv, name);
		return -1;
	}
	if (mr_knob_parse(id, eq + 1, &set->v[id], what, err, errlen))
		return -1;
	set->mask |= 1ull << id;
	return 0;
}

void mr_knob_format(int id, int64_t v, char *buf, size_t cap)
{
	if (defs[id].type == MR_KNOB_BOOL)
		snprintf(buf, cap, "%s", v ? "yes" : "no");
	else if (defs[id].type == MR_KNOB_CHOICE)
		choice_name(&defs[id], v, buf, cap);
	else
		snprintf(buf, cap, "%lld", (long long)v);
}

/* METAROCE_* variables that are not knobs: the tools' own (mr_knobs.h). */
static const char *const other_env[] = { MR_KNOBS_OTHER_ENV };
static const char *const other_env_prefix[] = { MR_KNOBS_OTHER_ENV_PREFIX };

/* Edit distance of a and b (at most 63 characters each; more: far). */
static unsigned distance(const char *a, const char *b)
{
	size_t n = strlen(a), m = strlen(b), i, j;
	unsigned row[64], prev, tmp;

	if (n > 63 || m > 63)
		return 64;
	for (j = 0; j <= m; j++)
		row[j] = (unsigned)j;
	for (i = 1; i <= n; i++) {
		prev = row[0];
		row[0] = (unsigned)i;
		for (j = 1; j <= m; j++) {
			unsigned best = prev + (a[i - 1] != b[j - 1]);

			if (row[j] + 1 < best)
				best = row[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			tmp = row[j];
			row[j] = best;
			prev = tmp;
		}
	}
	return row[m];
}

static int known_env(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < MR_KNOBS_N; i++)
		if (strlen(defs[i].env) == len &&
		    !strncmp(defs[i].env, name, len))
			return 1;
	for (i = 0; i < sizeof(other_env) / sizeof(other_env[0]); i++)
		if (strlen(other_env[i]) == len &&
		    !strncmp(other_env[i], name, len))
			return 1;
	for (i = 0; i < sizeof(other_env_prefix) / sizeof(other_env_prefix[0]);
	     i++)
		if (!strncmp(other_env_prefix[i], name,
			     strlen(other_env_prefix[i])))
			return 1;
	return 0;
}

int mr_knobs_check_env(char *const *env, char *err, size_t errlen)
{
	for (; env && *env; env++) {
		const char *eq = strchr(*env, '=');
		size_t len = eq ? (size_t)(eq - *env) : strlen(*env);
		unsigned best = 64, d;
		int near = -1;
		char name[64];

		if (strncmp(*env, "METAROCE_", 9) || known_env(*env, len))
			continue;
		snprintf(name, sizeof(name), "%.*s", (int)len, *env);
		for (int i = 0; i < MR_KNOBS_N; i++) {
			d = distance(name, defs[i].env);
			if (d < best) {
				best = d;
				near = i;
			}
		}
		/* A typo is a few edits away; otherwise name none. */
		if (near >= 0 && best <= 3)
			snprintf(err, errlen,
				 "environment variable %s is not a knob (did "
				 "you mean %s? metaroce-ctl knobs lists them)",
				 name, defs[near].env);
		else
			snprintf(err, errlen,
				 "environment variable %s is not a knob "
				 "(metaroce-ctl knobs lists them)",
				 name);
		return -1;
	}
	return 0;
}

int mr_knobs_resolve(struct mr_knobs *k, const struct mr_knob_set *set,
		     char *err, size_t errlen)
{
	extern char **environ;

	if (mr_knobs_check_env(environ, err, errlen))
		return -1;
	for (int i = 0; i < MR_KNOBS_N; i++) {
		const char *e = getenv(defs[i].env);

		k->v[i] = defs[i].def;
		k->src[i] = MR_KNOB_SRC_DEFAULT;
		if (set && (set->mask & (1ull << i))) {
			k->v[i] = set->v[i];
			k->src[i] = MR_KNOB_SRC_DEVICE;
		}
		/* Unset or empty: not given (as the shell's VAR= unsets). */
		if (!e || !*e)
			continue;
		if (mr_knob_parse(i, e, &k->v[i], NULL, err, errlen))
			return -1;
		k->src[i] = MR_KNOB_SRC_ENV;
	}
	return 0;
}

const char *mr_knob_src_name(int src)
{
	switch (src) {
	case MR_KNOB_SRC_DEVICE:
		return "device";
	case MR_KNOB_SRC_ENV:
		return "environment";
	default:
		return "default";
	}
}
