/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_paths.h"
#include "mr_ctl_opt.h"
#include "mr_ctl_stats.h"

#include <errno.h>
#include <json-c/json.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* --- reading the writer's objects */

static uint64_t num(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int) ||
	    json_object_get_int64(v) < 0)
		return 0;
	return json_object_get_uint64(v);
}

static const char *str(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return "?";
	return json_object_get_string(v);
}

static struct json_object *arr(struct json_object *o, const char *key)
{
	struct json_object *v;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_array))
		return NULL;
	return v;
}

static double frac(uint64_t part, uint64_t whole)
{
	return whole ? (double)part / (double)whole : 0.0;
}

/* --- text: one table per connection. A column is a key of the path
 * object and how to show it; a new column is one row. */

enum col_kind { COL_NUM, COL_STR, COL_US, COL_PCT_ECN, COL_PCT_LOSS };

static const struct col {
	const char *head, *key;
	int width;
	enum col_kind kind;
} cols[] = {
	{ "path", "path", 4, COL_NUM },
	{ "plane", "plane", 5, COL_NUM },
	{ "home", "home_plane", 4, COL_NUM },
	{ "sport", "sport", 5, COL_NUM },
	{ "state", "state", 8, COL_STR },
	{ "weight", "weight", 6, COL_NUM },
	{ "min_rtt", "min_rtt_ns", 9, COL_US },
	{ "srtt", "srtt_ns", 9, COL_US },
	{ "rto", "rto_ns", 9, COL_US },
	{ "inflight", "inflight_pkts", 8, COL_NUM },
	{ "window", "window_pkts", 6, COL_NUM },
	{ "tx_pkts", "tx_pkts", 9, COL_NUM },
	{ "retx", "retx_pkts", 6, COL_NUM },
	{ "lost", "lost_pkts", 6, COL_NUM },
	{ "loss%", "lost_pkts", 6, COL_PCT_LOSS },
	{ "ce", "ce_pkts", 6, COL_NUM },
	{ "ecn%", "ce_pkts", 6, COL_PCT_ECN },
	{ "repaths", "repaths", 7, COL_NUM },
};

#define NCOLS (sizeof(cols) / sizeof(cols[0]))

static void cell(const struct col *c, struct json_object *p)
{
	uint64_t v = num(p, c->key);
	char txt[32];

	switch (c->kind) {
	case COL_STR:
		snprintf(txt, sizeof(txt), "%s", str(p, c->key));
		break;
	case COL_US:
		if (v >= 10000000)
			snprintf(txt, sizeof(txt), "%.1fms", (double)v / 1e6);
		else if (v >= 1000000)
			snprintf(txt, sizeof(txt), "%.2fms", (double)v / 1e6);
		else if (v)
			snprintf(txt, sizeof(txt), "%.1fus", (double)v / 1e3);
		else
			snprintf(txt, sizeof(txt), "-");
		break;
	case COL_PCT_ECN:
		snprintf(txt, sizeof(txt), "%.2f",
			 100.0 * frac(v, num(p, "acked_pkts")));
		break;
	case COL_PCT_LOSS:
		snprintf(txt, sizeof(txt), "%.2f",
			 100.0 * frac(v, num(p, "tx_pkts")));
		break;
	default:
		snprintf(txt, sizeof(txt), "%llu", (unsigned long long)v);
	}
	printf(" %*s", c->width, txt);
}

static void text_conn(struct json_object *c)
{
	struct json_object *paths = arr(c, "paths");
	uint64_t rate = num(c, "rate_mbps");

	printf("  qpn %llu -> %s qpn %llu, %s, %llu paths, %llu planes down, "
	       "cwnd %llu B, in flight %llu B, rate %s%.0f%s, retries %llu\n",
	       (unsigned long long)num(c, "qpn"), str(c, "peer"),
	       (unsigned long long)num(c, "dest_qpn"), str(c, "qp_state"),
	       (unsigned long long)num(c, "npaths"),
	       (unsigned long long)num(c, "planes_down"),
	       (unsigned long long)num(c, "cwnd_bytes"),
	       (unsigned long long)num(c, "inflight_bytes"),
	       rate ? "" : "unpaced", rate ? (double)rate : 0.0,
	       rate ? " Mb/s" : "", (unsigned long long)num(c, "retries"));
	if (!paths)
		return;
	printf("   ");
	for (size_t k = 0; k < NCOLS; k++)
		printf(" %*s", cols[k].width, cols[k].head);
	printf("\n");
	for (size_t i = 0; i < json_object_array_length(paths); i++) {
		printf("   ");
		for (size_t k = 0; k < NCOLS; k++)
			cell(&cols[k], json_object_array_get_idx(paths, i));
		printf("\n");
	}
}

static void print_text(const struct mrctl_stats *st)
{
	printf("%s: %s\n", st->all[0].name,
	       st->in_use ? "in use" : "NOT in use");
	for (unsigned i = 0; i < st->shown; i++) {
		const struct mrctl_proc *p = &st->ps[i];
		struct json_object *conns = arr(p->root, "conns");
		uint64_t total = num(p->root, "conns_total");
		size_t n = conns ? json_object_array_length(conns) : 0;

		printf("process %d (%s), %zu connection%s%s, written %.1f s "
		       "ago\n",
		       p->pid,
		       p->live	  ? (p->comm[0] ? p->comm : "?")
		       : p->alive ? "datapath stopped"
				  : "ended",
		       n, n == 1 ? "" : "s",
		       total > n ? " (of more: the file keeps 256)" : "",
		       p->age);
		for (size_t k = 0; k < n; k++)
			text_conn(json_object_array_get_idx(conns, k));
	}
}

/* --- JSON: the writer's objects, each path with its ECN and loss
 * fractions added. */

static struct json_object *frac_num(double v)
{
	char txt[32];

	snprintf(txt, sizeof(txt), "%.6f", v);
	return json_object_new_double_s(v, txt);
}

static int print_json(const struct mrctl_stats *st, int watch)
{
	struct json_object *o = json_object_new_object(), *procs;
	char when[32];
	struct tm tm;
	time_t now = time(NULL);

	if (!o || !(procs = json_object_new_array())) {
		json_object_put(o);
		return -1;
	}
	gmtime_r(&now, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	json_object_object_add(o, "device",
			       json_object_new_string(st->all[0].name));
	json_object_object_add(o, "time", json_object_new_string(when));
	json_object_object_add(o, "in_use",
			       json_object_new_boolean(st->in_use));
	for (unsigned i = 0; i < st->shown; i++) {
		const struct mrctl_proc *p = &st->ps[i];
		struct json_object *e = json_object_new_object(), *conns;

		if (!e)
			break;
		json_object_object_add(e, "pid", json_object_new_int(p->pid));
		json_object_object_add(e, "comm",
				       json_object_new_string(p->comm));
		json_object_object_add(e, "live",
				       json_object_new_boolean(p->live));
		json_object_object_add(
			e, "conns_total",
			json_object_new_uint64(num(p->root, "conns_total")));
		conns = arr(p->root, "conns");
		for (size_t k = 0; conns && k < json_object_array_length(conns);
		     k++) {
			struct json_object *paths = arr(
				json_object_array_get_idx(conns, k), "paths");

			for (size_t j = 0;
			     paths && j < json_object_array_length(paths);
			     j++) {
				struct json_object *pa =
					json_object_array_get_idx(paths, j);

				json_object_object_add(
					pa, "ecn_frac",
					frac_num(frac(num(pa, "ce_pkts"),
						      num(pa, "acked_pkts"))));
				json_object_object_add(
					pa, "loss_frac",
					frac_num(frac(num(pa, "lost_pkts"),
						      num(pa, "tx_pkts"))));
			}
		}
		json_object_object_add(e, "conns",
				       conns ? json_object_get(conns)
					     : json_object_new_array());
		json_object_array_add(procs, e);
	}
	json_object_object_add(o, "processes", procs);
	/* --watch: one object per line (JSON lines). */
	puts(json_object_to_json_string_ext(
		o, watch ? JSON_C_TO_STRING_PLAIN : JSON_C_TO_STRING_SPACED));
	json_object_put(o);
	return 0;
}

static int parse_interval(const char *s, double *v)
{
	char *end;

	errno = 0;
	*v = strtod(s, &end);
	return errno || end == s || *end || !(*v >= 0.1 && *v <= 3600);
}

int mrctl_cmd_paths(int argc, char **argv)
{
	const char *name = NULL;
	int json = 0, last = 0, watch = 0, ret;
	double every = 1.0;

	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "last", no_argument, NULL, 'l' },
		{ "watch", optional_argument, NULL, 'w' },
		{ 0 },
	};
	int o;

	mrctl_opt_begin("paths");
	while ((o = mrctl_getopt(argc, argv, "jw", lo)) != -1) {
		if (o == 'j') {
			json = 1;
		} else if (o == 'l') {
			last = 1;
		} else {
			watch = 1;
			if (optarg && parse_interval(optarg, &every))
				return mrctl_stats_usage(
					"paths: --watch=SECONDS takes 0.1 to "
					"3600, not '%s'",
					optarg);
		}
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return mrctl_stats_usage("unexpected argument '%s'",
					 argv[optind]);
	if (!name)
		return mrctl_stats_usage("%s", "paths: missing device NAME");
	if (watch && last)
		return mrctl_stats_usage("%s",
					 "paths: --watch or --last, not both");
	for (;;) {
		struct mrctl_stats st;
		struct timespec ts;

		ret = mrctl_stats_load(name, last, &st);
		if (ret)
			return ret;
		if (json)
			ret = print_json(&st, watch)
				      ? mrctl_stats_fail("out of memory")
				      : 0;
		else
			print_text(&st);
		mrctl_stats_release(&st);
		if (fflush(stdout))
			return mrctl_stats_fail("cannot write output");
		if (ret || !watch)
			return ret;
		if (!json)
			printf("\n");
		ts.tv_sec = (time_t)every;
		ts.tv_nsec = (long)((every - (double)ts.tv_sec) * 1e9);
		nanosleep(&ts, NULL);
	}
}
