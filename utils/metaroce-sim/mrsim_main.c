// SPDX-License-Identifier: BSD-2-Clause
/*
 * metaroce-sim: a cluster-scale discrete-event simulator that runs the
 * real protocol core (lib/core, unchanged) on every host.
 *
 *   metaroce-sim run [SCENARIO.json] [--KEY VALUE]...
 *   metaroce-sim sweep [SCENARIO.json] --vary KEY=V1,V2,... [--vary ...]
 *                [--jobs N] [--KEY VALUE]...
 *   metaroce-sim keys
 *
 * Every scenario key can be given in the file or as --key-with-dashes on
 * the command line (which wins). `sweep` crosses the --vary lists, runs
 * each point as a `run` of its own (N at a time, default: every core)
 * into OUT/<key=value,...>/ and writes OUT/sweep.csv, one row per point.
 */
#include <getopt.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "mrsim_net.h"
#include "mrsim_redraw.h"

#define MAX_KV 128

struct kv {
	char key[64];
	const char *val;
};

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* CPU time of this process: on a shared machine the honest speed. */
static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: metaroce-sim run [SCENARIO.json] [--KEY VALUE]...\n"
		"       metaroce-sim sweep [SCENARIO.json] --vary KEY=V1,V2,..."
		" [--vary ...] [--jobs N] [--KEY VALUE]...\n"
		"       metaroce-sim keys\n"
		"keys (in a scenario file: the same names with '_'):\n");
	mrsim_scn_usage(f);
}

/* --key-with-dashes VALUE pairs and positional arguments. Returns the
 * number of pairs, -1 on a bad flag (message printed). */
static int parse_args(int argc, char **argv, struct kv *kv, const char **file,
		      const char **vary, int *nvary, int *jobs, int sweep)
{
	int i, n = 0;

	*file = NULL;
	for (i = 0; i < argc; i++) {
		const char *a = argv[i];
		char key[64];
		size_t j;

		if (strncmp(a, "--", 2)) {
			if (*file) {
				fprintf(stderr,
					"metaroce-sim: unexpected argument "
					"'%s' (one scenario file at most)\n",
					a);
				return -1;
			}
			*file = a;
			continue;
		}
		if (!strcmp(a, "--help")) {
			usage(stdout);
			exit(0);
		}
		if (strlen(a + 2) >= sizeof(key)) {
			fprintf(stderr, "metaroce-sim: unknown flag '%s'\n", a);
			return -1;
		}
		for (j = 0; a[2 + j]; j++)
			key[j] = a[2 + j] == '-' ? '_' : a[2 + j];
		key[j] = 0;
		if (i + 1 >= argc) {
			fprintf(stderr, "metaroce-sim: %s needs a value\n", a);
			return -1;
		}
		if (sweep && !strcmp(key, "vary")) {
			vary[(*nvary)++] = argv[++i];
			if (*nvary == 8) {
				fprintf(stderr, "metaroce-sim: --vary: at most "
						"7 keys\n");
				return -1;
			}
			continue;
		}
		if (sweep && !strcmp(key, "jobs")) {
			*jobs = atoi(argv[++i]);
			if (*jobs < 1 || *jobs > 256) {
				fprintf(stderr,
					"metaroce-sim: --jobs: '%s' "
					"is not 1..256\n",
					argv[i]);
				return -1;
			}
			continue;
		}
		if (!mrsim_scn_is_key(key)) {
			fprintf(stderr, "metaroce-sim: unknown flag '%s'\n", a);
			return -1;
		}
		if (n == MAX_KV) {
			fprintf(stderr, "metaroce-sim: too many flags\n");
			return -1;
		}
		strcpy(kv[n].key, key);
		kv[n++].val = argv[++i];
	}
	return n;
}

/* The scenario: defaults, then the file, then the flags (a --fail on the
 * command line replaces the file's failures). */
static int resolve(struct mrsim_scn *s, const char *file, const struct kv *kv,
		   int n)
{
	char err[512];
	int i, fail_reset = 0;

	mrsim_scn_defaults(s);
	if (file && mrsim_scn_load(s, file, err, sizeof(err))) {
		fprintf(stderr, "metaroce-sim: %s\n", err);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (!strcmp(kv[i].key, "fail") && !fail_reset) {
			s->nfail = 0;
			fail_reset = 1;
		}
		if (mrsim_scn_set(s, kv[i].key, kv[i].val, err, sizeof(err))) {
			fprintf(stderr, "metaroce-sim: %s\n", err);
			return -1;
		}
	}
	if (mrsim_scn_check(s, err, sizeof(err))) {
		fprintf(stderr, "metaroce-sim: %s\n", err);
		return -1;
	}
	return 0;
}

static void dispatch(struct mrsim_world *w, const struct mrsim_event *e)
{
	switch (e->type) {
	case MRSIM_EV_PORT_DONE:
		mrsim_port_done(e->p);
		break;
	case MRSIM_EV_ARRIVE:
		mrsim_arrive(w, e->p);
		break;
	case MRSIM_EV_TIMER:
		mrsim_host_timer(e->p, e->at);
		break;
	case MRSIM_EV_SAMPLE:
		mrsim_out_sample(w);
		if (!w->done)
			mrsim_evq_push(
				&w->q,
				e->at + (uint64_t)(w->scn.sample_us * 1e6),
				MRSIM_EV_SAMPLE, 0, NULL);
		break;
	}
}

static int simulate(const struct mrsim_scn *s)
{
	struct mrsim_world *w = calloc(1, sizeof(*w));
	uint64_t stop = (uint64_t)(s->stop_ms * 1e9), next_check = 1 << 16;
	double t0 = wall_now(), last = t0, wall, setup, c0;
	struct mrsim_event e;
	char err[512];
	int i, rc = 0;

	if (!w)
		return 1;
	w->scn = *s;
	w->roce = mrsim_scn_roce(s);
	w->paths = w->roce    ? 1
		   : s->paths ? s->paths
			      : (s->planes > 4 ? s->planes : 4);
	w->host = calloc((size_t)s->hosts, sizeof(*w->host));
	if (!w->host || mrsim_evq_init(&w->q)) {
		fprintf(stderr, "metaroce-sim: out of memory\n");
		return 1;
	}
	if (mrsim_net_build(w, err, sizeof(err)) ||
	    mrsim_wl_setup(w, err, sizeof(err)) ||
	    mrsim_hosts_create(w, err, sizeof(err))) {
		fprintf(stderr, "metaroce-sim: %s\n", err);
		return 1;
	}
	for (i = 0; i < w->nconn; i++) {
		int r = mrsim_conn_open(w, &w->conn[i]);

		if (r) {
			fprintf(stderr,
				"metaroce-sim: connection %d (host %d -> %d): "
				"%s\n",
				i, w->conn[i].src, w->conn[i].dst,
				mr_strerror(r));
			return 1;
		}
	}
	if (mrsim_out_open(w, err, sizeof(err))) {
		fprintf(stderr, "metaroce-sim: %s\n", err);
		return 1;
	}
	/* The QPs' memory is touched here: setup is timed apart. */
	setup = wall_now() - t0;
	t0 = last = wall_now();
	c0 = cpu_now();
	mrsim_evq_push(&w->q, 0, MRSIM_EV_SAMPLE, 0, NULL);
	mrsim_wl_start(w);
	while (!w->done && !mrsim_evq_pop(&w->q, &e)) {
		if (e.at > stop) {
			w->q.now = stop;
			break;
		}
		dispatch(w, &e);
		if (w->q.popped >= next_check) {
			double t = wall_now();

			next_check = w->q.popped + (1 << 16);
			if (t - last >= 2.0) {
				last = t;
				fprintf(stderr,
					"metaroce-sim: %.1f us simulated, "
					"%.1fM "
					"events (%.2fM/s), %llu/%llu "
					"messages\n",
					w->q.now / 1e6, w->q.popped / 1e6,
					w->q.popped / 1e6 / (t - t0),
					(unsigned long long)w->st.msgs_done,
					(unsigned long long)w->st.msgs_total);
			}
		}
	}
	if (w->done)
		mrsim_out_sample(w);
	wall = wall_now() - t0;
	w->cpu_s = cpu_now() - c0;
	if (mrsim_out_finish(w, wall, setup))
		rc = 1;
	if (!w->done)
		fprintf(stderr,
			"metaroce-sim: not complete at %.1f us (%llu/%llu "
			"messages)%s%s\n",
			w->q.now / 1e6, (unsigned long long)w->st.msgs_done,
			(unsigned long long)w->st.msgs_total,
			w->st.first_error[0] ? ": " : "", w->st.first_error);
	if (w->st.verify_errors) {
		fprintf(stderr, "metaroce-sim: %llu verification errors: %s\n",
			(unsigned long long)w->st.verify_errors,
			w->st.first_error);
		rc = 1;
	}
	/* Packets still in flight are owned by their arrival events. */
	while (!mrsim_evq_pop(&w->q, &e))
		if (e.type == MRSIM_EV_ARRIVE)
			mrsim_pkt_free(w, e.p);
	mrsim_hosts_free(w);
	mrsim_net_free(w);
	mrsim_redraw_free(w);
	for (i = 0; i < w->nconn; i++)
		free(w->conn[i].msg);
	free(w->conn);
	free(w->flow);
	free(w->st.fct_us);
	free(w->path_prev);
	free(w->host);
	mrsim_evq_fini(&w->q);
	free(w);
	return rc;
}

/* ---- sweep ------------------------------------------------------------- */

struct axis {
	char key[64];
	char *vals[64];
	int n;
};

static int parse_vary(const char *v, struct axis *a)
{
	const char *eq = strchr(v, '=');
	char *list, *tok, *save = NULL;

	if (!eq || eq == v || (size_t)(eq - v) >= sizeof(a->key)) {
		fprintf(stderr,
			"metaroce-sim: --vary: '%s' is not "
			"KEY=V1,V2,...\n",
			v);
		return -1;
	}
	memcpy(a->key, v, (size_t)(eq - v));
	a->key[eq - v] = 0;
	for (char *c = a->key; *c; c++)
		if (*c == '-')
			*c = '_';
	if (!mrsim_scn_is_key(a->key) || !strcmp(a->key, "out")) {
		fprintf(stderr, "metaroce-sim: --vary: unknown key '%s'\n",
			a->key);
		return -1;
	}
	list = strdup(eq + 1);
	a->n = 0;
	for (tok = strtok_r(list, ",", &save); tok && a->n < 64;
	     tok = strtok_r(NULL, ",", &save))
		a->vals[a->n++] = tok;
	if (!a->n) {
		fprintf(stderr, "metaroce-sim: --vary %s: no values\n", a->key);
		return -1;
	}
	return 0;
}

/* "key=value,key=value" of point i (the first axis varies fastest). */
static int point_name(const struct axis *ax, int nvary, int i, char *b,
		      size_t n)
{
	size_t len = 0;
	int j;

	for (j = 0; j < nvary; j++) {
		const char *v = ax[j].vals[i % ax[j].n];
		size_t kl = strlen(ax[j].key), vl = strlen(v);

		i /= ax[j].n;
		if (len + kl + vl + 3 > n)
			return -1;
		if (j)
			b[len++] = ',';
		memcpy(b + len, ax[j].key, kl);
		len += kl;
		b[len++] = '=';
		memcpy(b + len, v, vl);
		len += vl;
	}
	b[len] = 0;
	return 0;
}

static const char *value_of(const struct axis *ax, int nvary, int i, int j)
{
	int k;

	for (k = 0; k < j; k++)
		i /= ax[k].n;
	return ax[j].vals[i % ax[j].n];
}

static const char *const sweep_cols[] = {
	"complete",	   "goodput_gbps",   "fct_p50_us",  "fct_p99_us",
	"fct_max_us",	   "collective_us",  "retx_pkts",   "timeouts",
	"max_queue_bytes", "drops_overflow", "drops_loss",  "drops_failed",
	"ecn_marked_pkts", "jain",	     "connections", "verify_errors",
	"cqe_errors",	   "sim_time_us",    "events",	    "events_per_s",
	"wall_s",
};

static int sweep(const char *file, const struct kv *kv, int nkv,
		 const char **vary, int nvary, int jobs)
{
	struct axis ax[8];
	struct mrsim_scn base, s;
	static char flags[MAX_KV][70], vflags[8][70];
	int npt = 1, i, j, running = 0, failed = 0;
	char err[512], outdir[256], self[512];
	FILE *csv;

	if (!nvary) {
		fprintf(stderr,
			"metaroce-sim: sweep needs --vary KEY=V1,...\n");
		return 2;
	}
	if (resolve(&base, file, kv, nkv))
		return 2;
	snprintf(outdir, sizeof(outdir), "%s", base.out);
	for (i = 0; i < nvary; i++) {
		if (parse_vary(vary[i], &ax[i]))
			return 2;
		npt *= ax[i].n;
	}
	/* Every point checked before anything runs. */
	for (i = 0; i < npt; i++) {
		s = base;
		for (j = 0; j < nvary; j++) {
			if (!strcmp(ax[j].key, "fail"))
				s.nfail = 0;
			if (mrsim_scn_set(&s, ax[j].key,
					  value_of(ax, nvary, i, j), err,
					  sizeof(err)) ||
			    mrsim_scn_check(&s, err, sizeof(err))) {
				fprintf(stderr, "metaroce-sim: --vary: %s\n",
					err);
				return 2;
			}
		}
	}
	if (mrsim_mkdirs(outdir)) {
		fprintf(stderr, "metaroce-sim: out: cannot create %s\n",
			outdir);
		return 1;
	}
	{
		ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);

		if (sl <= 0) {
			fprintf(stderr, "metaroce-sim: cannot find myself\n");
			return 1;
		}
		self[sl] = 0;
	}
	for (i = 0; i < nkv; i++) {
		flags[i][0] = flags[i][1] = '-';
		strcpy(flags[i] + 2, kv[i].key);
	}
	for (j = 0; j < nvary; j++) {
		vflags[j][0] = vflags[j][1] = '-';
		strcpy(vflags[j] + 2, ax[j].key);
	}
	for (i = 0; i < npt || running; i++) {
		char name[256], dir[600], log[700], *args[2 * MAX_KV + 40];
		int a = 0, k, st;
		pid_t pid;

		if (i >= npt || running == jobs) {
			if (wait(&st) > 0 &&
			    (!WIFEXITED(st) || WEXITSTATUS(st)))
				failed++;
			running--;
			if (i >= npt)
				continue;
		}
		if (point_name(ax, nvary, i, name, sizeof(name))) {
			fprintf(stderr,
				"metaroce-sim: --vary: names too long\n");
			return 2;
		}
		snprintf(dir, sizeof(dir), "%s/%s", outdir, name);
		args[a++] = self;
		args[a++] = (char *)"run";
		if (file)
			args[a++] = (char *)file;
		for (k = 0; k < nkv; k++) {
			args[a++] = flags[k];
			args[a++] = (char *)kv[k].val;
		}
		for (j = 0; j < nvary; j++) {
			args[a++] = vflags[j];
			args[a++] = (char *)value_of(ax, nvary, i, j);
		}
		args[a++] = (char *)"--out";
		args[a++] = dir;
		args[a] = NULL;
		fprintf(stderr, "metaroce-sim: sweep point %d/%d: %s\n", i + 1,
			npt, name);
		snprintf(log, sizeof(log), "%s.log", dir);
		pid = fork();
		if (pid == 0) {
			if (!freopen(log, "w", stderr))
				_exit(1);
			execv(self, args);
			_exit(127);
		}
		if (pid < 0)
			return 1;
		running++;
	}
	{
		char p[600];

		snprintf(p, sizeof(p), "%s/sweep.csv", outdir);
		csv = fopen(p, "w");
		if (!csv) {
			fprintf(stderr, "metaroce-sim: cannot write %s\n", p);
			return 1;
		}
	}
	for (j = 0; j < nvary; j++)
		fprintf(csv, "%s,", ax[j].key);
	for (j = 0; j < (int)(sizeof(sweep_cols) / sizeof(*sweep_cols)); j++)
		fprintf(csv, "%s%s", j ? "," : "", sweep_cols[j]);
	fprintf(csv, "\n");
	for (i = 0; i < npt; i++) {
		char name[256], p[700];
		struct json_object *o, *v;

		point_name(ax, nvary, i, name, sizeof(name));
		for (j = 0; j < nvary; j++)
			fprintf(csv, "%s,", value_of(ax, nvary, i, j));
		snprintf(p, sizeof(p), "%s/%s/summary.json", outdir, name);
		o = json_object_from_file(p);
		for (j = 0; j < (int)(sizeof(sweep_cols) / sizeof(*sweep_cols));
		     j++) {
			const char *t = "NaN";

			if (o &&
			    json_object_object_get_ex(o, sweep_cols[j], &v) &&
			    v)
				t = json_object_get_string(v);
			fprintf(csv, "%s%s", j ? "," : "", t);
		}
		fprintf(csv, "\n");
		if (o)
			json_object_put(o);
	}
	fclose(csv);
	fprintf(stderr, "metaroce-sim: %d points, %d failed; %s/sweep.csv\n",
		npt, failed, outdir);
	return failed ? 1 : 0;
}

int main(int argc, char **argv)
{
	static struct kv kv[MAX_KV];
	const char *file, *vary[8];
	int n, nvary = 0, jobs = (int)sysconf(_SC_NPROCESSORS_ONLN);
	struct mrsim_scn s;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "keys") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "run") && strcmp(argv[1], "sweep")) {
		fprintf(stderr,
			"metaroce-sim: unknown command '%s' (run, "
			"sweep, keys)\n",
			argv[1]);
		return 2;
	}
	n = parse_args(argc - 2, argv + 2, kv, &file, vary, &nvary, &jobs,
		       argv[1][0] == 's');
	if (n < 0)
		return 2;
	if (jobs < 1)
		jobs = 1;
	if (argv[1][0] == 's')
		return sweep(file, kv, n, vary, nvary, jobs);
	if (resolve(&s, file, kv, n))
		return 2;
	return simulate(&s);
}
