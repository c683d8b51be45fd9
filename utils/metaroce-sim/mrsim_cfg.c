// SPDX-License-Identifier: BSD-2-Clause
/* Scenario keys, their file and command-line forms, checks (mrsim_cfg.h). */
#include "mrsim_cfg.h"

#include <errno.h>
#include <json-c/json.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mr_wire.h"

enum kind { K_INT, K_U64, K_DBL, K_STR, K_FAIL };

struct key {
	const char *name;
	enum kind kind;
	size_t off;
	double min, max;
	const char *def;
	const char *choices; /* K_STR: '|'-separated */
	const char *help;
};

#define O(f) offsetof(struct mrsim_scn, f)

/* The one table of every scenario key. */
static const struct key keys[] = {
	{ "hosts", K_INT, O(hosts), 2, 4096, "16", NULL, "hosts" },
	{ "planes", K_INT, O(planes), 1, 8, "1", NULL,
	  "network planes: host port k attaches to plane k" },
	{ "spines", K_INT, O(spines), 1, 256, "4", NULL,
	  "spine switches per plane (unused with one leaf)" },
	{ "hosts_per_leaf", K_INT, O(hosts_per_leaf), 1, 4096, "16", NULL,
	  "hosts under each leaf switch" },
	{ "oversub", K_DBL, O(oversub), 0.01, 1000, "1", NULL,
	  "leaf oversubscription: host bandwidth / uplink bandwidth" },
	{ "link_gbps", K_DBL, O(link_gbps), 0.001, 3200, "100", NULL,
	  "host link rate, Gb/s" },
	{ "delay_ns", K_DBL, O(delay_ns), 0, 1e9, "1000", NULL,
	  "propagation delay of every link, ns" },
	{ "buffer_kb", K_INT, O(buffer_kb), 1, 1 << 20, "1024", NULL,
	  "switch output queue size, KiB (drop-tail beyond)" },
	{ "ecn_kb", K_INT, O(ecn_kb), 0, 1 << 20, "100", NULL,
	  "ECN: queue at which CE marking starts, KiB (0: no ECN)" },
	{ "ecn_max_kb", K_INT, O(ecn_max_kb), 0, 1 << 20, "0", NULL,
	  "ECN: queue at which marking reaches ecn_pmax then 1 (0 = "
	  "ecn_kb: a step)" },
	{ "ecn_pmax", K_DBL, O(ecn_pmax), 0, 1, "1", NULL,
	  "ECN: marking probability at ecn_max_kb (RED-like ramp)" },
	{ "loss", K_DBL, O(loss), 0, 0.99, "0", NULL,
	  "probability a packet is lost, once per packet (last hop)" },
	{ "corrupt", K_DBL, O(corrupt), 0, 0.99, "0", NULL,
	  "probability a packet is corrupted, once per packet (last hop)" },
	{ "workload", K_STR, O(workload), 0, 0, "flows",
	  "flows|incast|"
	  "permutation|alltoall|allreduce",
	  "traffic pattern" },
	{ "size", K_U64, O(size), 1, 1ull << 40, "1M", NULL,
	  "bytes per pair (allreduce: the buffer reduced)" },
	{ "msg_size", K_U64, O(msg_size), 1, 1ull << 30, "1M", NULL,
	  "bytes per RDMA WRITE message (at most)" },
	{ "window", K_INT, O(window), 1, 1024, "4", NULL,
	  "messages outstanding per QP" },
	{ "qps_per_pair", K_INT, O(qps_per_pair), 1, 64, "1", NULL,
	  "QPs per host pair (the pair's bytes are split over them)" },
	{ "transport", K_STR, O(transport), 0, 0, "metaroce", "metaroce|roce",
	  "metaroce (the core) or roce (the core's go-back-N, 1 path, "
	  "DCQCN, IB local ACK timeout)" },
	{ "paths", K_INT, O(paths), 0, MR_MAX_PATHS, "0", NULL,
	  "metaroce paths per QP (0: max(4, planes))" },
	{ "mtu", K_INT, O(mtu), 256, 4096, "4096", NULL, "payload bytes" },
	{ "nic_ring", K_INT, O(nic_ring), 2, 4096, "16", NULL,
	  "NIC transmit ring per port, packets: the host takes no packet "
	  "from the core while one port's ring is full" },
	{ "steer", K_INT, O(steer), 0, 4096, "14", NULL,
	  "the NIC tells the core, before each packet it takes, which "
	  "ports have this many packets queued (14: two short of a full "
	  "ring), and the core sends on the others while it may "
	  "(MR-MP-12); 0: it does not" },
	{ "pace_burst", K_U64, O(pace_burst), 0, 1 << 20, "0", NULL,
	  "NIC pacer's credit, bytes: a connection served late sends up "
	  "to this much at once (0: each packet at its gap; MR-CC-4)" },
	{ "first_pkt", K_INT, O(first_pkt), 0, 4096, "1024", NULL,
	  "metaroce: payload bytes of a connection's packets until its "
	  "first ACK (0: MTU-sized; MR-CC-16)" },
	{ "first_pkt_starts", K_INT, O(first_pkt_starts), 0, 65535, "4", NULL,
	  "metaroce: first_pkt only while the host started at most this "
	  "many connections in the last 2-4 base RTTs (0: always; MR-CC-16)" },
	{ "cc_start", K_INT, O(cc_start), 0, 2, "2", NULL,
	  "metaroce: a connection's start (0: the core's default, 1: one "
	  "packet, then the first hint, MR-CC-5; 2: first ACKs in slots, "
	  "MR-CC-17)" },
	{ "ib_timeout", K_INT, O(ib_timeout), 1, 31, "14", NULL,
	  "roce: local ACK timeout 4.096 us x 2^t (perftest 14, NCCL 18)" },
	{ "ib_retry", K_INT, O(ib_retry), 0, 7, "7", NULL,
	  "retry count (perftest and NCCL: 7)" },
	{ "seed", K_U64, O(seed), 0, 1.8e19, "1", NULL,
	  "seed of every random choice" },
	{ "stop_ms", K_DBL, O(stop_ms), 0.001, 1e7, "10000", NULL,
	  "simulated time limit, ms" },
	{ "sample_us", K_DBL, O(sample_us), 0.01, 1e9, "10", NULL,
	  "time-series interval, us" },
	{ "out", K_STR, O(out), 0, 0, "sim-out", NULL, "output directory" },
	{ "fail", K_FAIL, 0, 0, 0, NULL, NULL,
	  "plane=K,at=T[,until=T][,leaf=L,spine=S] (T: 10us, 2ms; "
	  "repeatable)" },
};

#define NKEYS (int)(sizeof(keys) / sizeof(keys[0]))

int mrsim_scn_nkeys(void)
{
	return NKEYS;
}

const char *mrsim_scn_key(int i)
{
	return keys[i].name;
}

static const struct key *find(const char *name)
{
	int i;

	for (i = 0; i < NKEYS; i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

int mrsim_scn_is_key(const char *key)
{
	return find(key) != NULL;
}

/* 123, 64K, 1M, 2G (binary multiples). */
static int parse_u64(const char *v, uint64_t *out)
{
	char *end;
	unsigned long long x;

	errno = 0;
	if (!*v || *v == '-')
		return -1;
	x = strtoull(v, &end, 10);
	if (errno || end == v)
		return -1;
	switch (*end) {
	case 'K':
	case 'k':
		x <<= 10, end++;
		break;
	case 'M':
	case 'm':
		x <<= 20, end++;
		break;
	case 'G':
	case 'g':
		x <<= 30, end++;
		break;
	default:
		break;
	}
	if (*end)
		return -1;
	*out = x;
	return 0;
}

/* 10us, 2ms, 1s, 500ns; a bare number is microseconds. */
static int parse_time_ps(const char *v, uint64_t *out)
{
	char *end;
	double x;

	errno = 0;
	x = strtod(v, &end);
	if (errno || end == v || x < 0 || !isfinite(x))
		return -1;
	if (!strcmp(end, "ns"))
		x *= 1e3;
	else if (!strcmp(end, "us") || !*end)
		x *= 1e6;
	else if (!strcmp(end, "ms"))
		x *= 1e9;
	else if (!strcmp(end, "s"))
		x *= 1e12;
	else
		return -1;
	if (x > 1.8e19)
		return -1;
	*out = (uint64_t)llround(x);
	return 0;
}

static int parse_fail(struct mrsim_scn *s, const char *v, char *err,
		      size_t errlen)
{
	struct mrsim_fail f = { -1, -1, -1, UINT64_MAX, UINT64_MAX };
	char buf[256], *tok, *save = NULL;

	if (s->nfail == MRSIM_MAX_FAIL) {
		snprintf(err, errlen, "fail: at most %d failures",
			 MRSIM_MAX_FAIL);
		return -1;
	}
	if (strlen(v) >= sizeof(buf)) {
		snprintf(err, errlen, "fail: '%s' is too long", v);
		return -1;
	}
	strcpy(buf, v);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');
		uint64_t x;

		if (!eq)
			goto bad;
		*eq++ = 0;
		if (!strcmp(tok, "at") || !strcmp(tok, "until")) {
			if (parse_time_ps(eq, &x))
				goto bad;
			if (tok[0] == 'a')
				f.at_ps = x;
			else
				f.until_ps = x;
		} else if (!strcmp(tok, "plane") || !strcmp(tok, "leaf") ||
			   !strcmp(tok, "spine")) {
			if (parse_u64(eq, &x) || x > 4096)
				goto bad;
			if (tok[0] == 'p')
				f.plane = (int)x;
			else if (tok[0] == 'l')
				f.leaf = (int)x;
			else
				f.spine = (int)x;
		} else {
			goto bad;
		}
	}
	if (f.plane < 0 || f.at_ps == UINT64_MAX)
		goto bad;
	if (f.until_ps <= f.at_ps) {
		snprintf(err, errlen, "fail: until must be after at in '%s'",
			 v);
		return -1;
	}
	if ((f.leaf < 0) != (f.spine < 0)) {
		snprintf(err, errlen,
			 "fail: give both leaf and spine, or "
			 "neither, in '%s'",
			 v);
		return -1;
	}
	s->fail[s->nfail++] = f;
	return 0;
bad:
	snprintf(err, errlen,
		 "fail: '%s' is not plane=K,at=T[,until=T][,leaf=L,spine=S]",
		 v);
	return -1;
}

static int set_key(struct mrsim_scn *s, const struct key *k, const char *v,
		   char *err, size_t errlen)
{
	char *p = (char *)s + k->off, *end;
	uint64_t u;
	double d;
	long long i;

	switch (k->kind) {
	case K_INT:
		errno = 0;
		i = strtoll(v, &end, 10);
		if (errno || end == v || *end)
			goto notnum;
		if (i < k->min || i > k->max)
			goto range;
		*(int *)(void *)p = (int)i;
		return 0;
	case K_U64:
		if (parse_u64(v, &u))
			goto notnum;
		if ((double)u < k->min || (double)u > k->max)
			goto range;
		*(uint64_t *)(void *)p = u;
		return 0;
	case K_DBL:
		errno = 0;
		d = strtod(v, &end);
		if (errno || end == v || *end || !isfinite(d))
			goto notnum;
		if (d < k->min || d > k->max)
			goto range;
		*(double *)(void *)p = d;
		return 0;
	case K_STR:
		if (strlen(v) >=
		    (k->off == O(out) ? sizeof(s->out) : (size_t)MRSIM_STR)) {
			snprintf(err, errlen, "%s: '%s' is too long", k->name,
				 v);
			return -1;
		}
		if (k->choices) {
			const char *c = k->choices;
			size_t n = strlen(v);
			int ok = 0;

			while (*c) {
				size_t m = strcspn(c, "|");

				if (m == n && !strncmp(c, v, n))
					ok = 1;
				c += m + (c[m] == '|');
			}
			if (!ok) {
				snprintf(err, errlen,
					 "%s: '%.64s' is not one of %s", k->name,
					 v, k->choices);
				return -1;
			}
		}
		strcpy(p, v);
		return 0;
	case K_FAIL:
		return parse_fail(s, v, err, errlen);
	}
	return -1;
notnum:
	snprintf(err, errlen, "%s: '%s' is not a %s", k->name, v,
		 k->kind == K_INT ? "whole number" : "number");
	return -1;
range:
	snprintf(err, errlen, "%s: %s is out of range [%g, %g]", k->name, v,
		 k->min, k->max);
	return -1;
}

void mrsim_scn_defaults(struct mrsim_scn *s)
{
	char err[256];
	int i;

	memset(s, 0, sizeof(*s));
	for (i = 0; i < NKEYS; i++)
		if (keys[i].def)
			set_key(s, &keys[i], keys[i].def, err, sizeof(err));
}

int mrsim_scn_set(struct mrsim_scn *s, const char *key, const char *val,
		  char *err, size_t errlen)
{
	const struct key *k = find(key);

	if (!k) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -1;
	}
	return set_key(s, k, val, err, errlen);
}

static int json_text(struct json_object *v, char *buf, size_t n)
{
	switch (json_object_get_type(v)) {
	case json_type_string:
		snprintf(buf, n, "%s", json_object_get_string(v));
		return 0;
	case json_type_int:
		snprintf(buf, n, "%lld", (long long)json_object_get_int64(v));
		return 0;
	case json_type_double:
		snprintf(buf, n, "%.17g", json_object_get_double(v));
		return 0;
	default:
		return -1;
	}
}

int mrsim_scn_load(struct mrsim_scn *s, const char *path, char *err,
		   size_t errlen)
{
	struct json_object *root = json_object_from_file(path);
	char e2[256], text[512];
	int rc = 0;

	if (!root) {
		const char *e = json_util_get_last_err();
		size_t n;

		snprintf(err, errlen, "%s: not a valid JSON scenario: %s", path,
			 e ? e : "unreadable");
		n = strlen(err);
		while (n && (err[n - 1] == '\n' || err[n - 1] == ' '))
			err[--n] = 0;
		return -1;
	}
	if (!json_object_is_type(root, json_type_object)) {
		snprintf(err, errlen, "%s: not a JSON object", path);
		json_object_put(root);
		return -1;
	}
	json_object_object_foreach(root, key, val)
	{
		const struct key *k = find(key);
		size_t i, n = 1;

		if (!k) {
			snprintf(err, errlen, "%s: unknown key '%s'", path,
				 key);
			rc = -1;
			break;
		}
		if (k->kind == K_FAIL &&
		    json_object_is_type(val, json_type_array))
			n = json_object_array_length(val);
		for (i = 0; i < n && !rc; i++) {
			struct json_object *v =
				json_object_is_type(val, json_type_array)
					? json_object_array_get_idx(val, i)
					: val;

			if (json_text(v, text, sizeof(text))) {
				snprintf(err, errlen,
					 "%s: %s: not a number or string", path,
					 key);
				rc = -1;
			} else if (set_key(s, k, text, e2, sizeof(e2))) {
				snprintf(err, errlen, "%s: %s", path, e2);
				rc = -1;
			}
		}
		if (rc)
			break;
	}
	json_object_put(root);
	return rc;
}

int mrsim_scn_check(const struct mrsim_scn *s, char *err, size_t errlen)
{
	int leaves = (s->hosts + s->hosts_per_leaf - 1) / s->hosts_per_leaf;
	int i, paths = s->paths ? s->paths : (s->planes > 4 ? s->planes : 4);

	if (paths < s->planes) {
		snprintf(err, errlen, "paths: %d paths cannot cover %d planes",
			 paths, s->planes);
		return -1;
	}
	if (s->mtu & (s->mtu - 1)) {
		snprintf(err, errlen, "mtu: %d is not a power of two", s->mtu);
		return -1;
	}
	if (s->ecn_max_kb && s->ecn_max_kb < s->ecn_kb) {
		snprintf(err, errlen, "ecn_max_kb: %d is below ecn_kb %d",
			 s->ecn_max_kb, s->ecn_kb);
		return -1;
	}
	if (!strcmp(s->workload, "allreduce") &&
	    s->size < (uint64_t)s->hosts * (uint64_t)s->qps_per_pair) {
		snprintf(err, errlen,
			 "size: %llu bytes cannot be cut into %d chunks of %d "
			 "QPs",
			 (unsigned long long)s->size, s->hosts,
			 s->qps_per_pair);
		return -1;
	}
	if (leaves > 1 && (double)s->hosts_per_leaf * s->link_gbps /
					  (s->spines * s->oversub) <
				  0.001) {
		snprintf(err, errlen, "oversub: uplinks would be below 1 Mb/s");
		return -1;
	}
	if (leaves > 1024) {
		snprintf(err, errlen, "hosts_per_leaf: %d leaves are too many",
			 leaves);
		return -1;
	}
	for (i = 0; i < s->nfail; i++) {
		const struct mrsim_fail *f = &s->fail[i];

		if (f->plane >= s->planes) {
			snprintf(err, errlen,
				 "fail: plane %d does not exist (planes = %d, "
				 "numbered from 0)",
				 f->plane, s->planes);
			return -1;
		}
		if (f->leaf >= 0 && (leaves == 1 || f->leaf >= leaves ||
				     f->spine >= s->spines)) {
			snprintf(err, errlen,
				 "fail: leaf %d - spine %d does not exist "
				 "(%d leaves, %d spines)",
				 f->leaf, f->spine, leaves,
				 leaves == 1 ? 0 : s->spines);
			return -1;
		}
	}
	return 0;
}

struct json_object *mrsim_scn_json(const struct mrsim_scn *s)
{
	struct json_object *o = json_object_new_object(), *a;
	int i;

	for (i = 0; i < NKEYS; i++) {
		const struct key *k = &keys[i];
		const char *p = (const char *)s + k->off;
		struct json_object *v = NULL;

		switch (k->kind) {
		case K_INT:
			v = json_object_new_int(*(const int *)(const void *)p);
			break;
		case K_U64:
			v = json_object_new_uint64(
				*(const uint64_t *)(const void *)p);
			break;
		case K_DBL:
			v = json_object_new_double(
				*(const double *)(const void *)p);
			break;
		case K_STR:
			v = json_object_new_string(p);
			break;
		case K_FAIL:
			a = json_object_new_array();
			for (int j = 0; j < s->nfail; j++) {
				char b[160];
				int n = snprintf(b, sizeof(b),
						 "plane=%d,at=%.6fus",
						 s->fail[j].plane,
						 s->fail[j].at_ps / 1e6);

				if (s->fail[j].until_ps != UINT64_MAX)
					n += snprintf(b + n, sizeof(b) - n,
						      ",until=%.6fus",
						      s->fail[j].until_ps /
							      1e6);
				if (s->fail[j].leaf >= 0)
					snprintf(b + n, sizeof(b) - n,
						 ",leaf=%d,spine=%d",
						 s->fail[j].leaf,
						 s->fail[j].spine);
				json_object_array_add(
					a, json_object_new_string(b));
			}
			v = a;
			break;
		}
		json_object_object_add(o, k->name, v);
	}
	return o;
}

void mrsim_scn_usage(FILE *f)
{
	int i;

	for (i = 0; i < NKEYS; i++) {
		char opt[64], *c;

		snprintf(opt, sizeof(opt), "%s", keys[i].name);
		for (c = opt; *c; c++)
			if (*c == '_')
				*c = '-';
		fprintf(f, "  --%-16s %s%s%s%s\n", opt, keys[i].help,
			keys[i].def ? " [" : "", keys[i].def ? keys[i].def : "",
			keys[i].def ? "]" : "");
	}
}
