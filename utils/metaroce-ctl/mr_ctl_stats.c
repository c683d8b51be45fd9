/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_stats.h"
#include "mr_ctl_help.h"
#include "mr_ctl_opt.h"
#include "mr_ctl_view.h"
#include "mr_devconf.h"

#include <ctype.h>
#include <json-c/json.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>


/* --- text output: one "name value" line per counter, objects indented,
 * arrays of objects as "<singular> <i>:" blocks ("planes" -> "plane 0"). */

static void text_value(struct json_object *n, int indent);

/* A scalar as the writer wrote it (numbers exactly, strings unquoted). */
static const char *scalar(struct json_object *v)
{
	if (json_object_is_type(v, json_type_string))
		return json_object_get_string(v);
	return json_object_to_json_string_ext(v, JSON_C_TO_STRING_PLAIN);
}

static void text_members(struct json_object *obj, int indent, const char *skip)
{
	json_object_object_foreach(obj, key, c)
	{
		if (skip && !strcmp(key, skip))
			continue;
		if (json_object_is_type(c, json_type_object)) {
			printf("%*s%s:\n", indent, "", key);
			text_members(c, indent + 4, NULL);
		} else if (json_object_is_type(c, json_type_array)) {
			char one[64];
			size_t k = strlen(key), n = json_object_array_length(c);

			/* "planes" -> "plane": the element header. */
			snprintf(one, sizeof(one), "%.*s",
				 (int)(k > 1 && key[k - 1] == 's' ? k - 1 : k),
				 key);
			for (size_t i = 0; i < n; i++) {
				struct json_object *e =
					json_object_array_get_idx(c, i);

				printf("%*s%s %zu:\n", indent, "", one, i);
				if (json_object_is_type(e, json_type_object))
					text_members(e, indent + 4, one);
				else
					text_value(e, indent + 4);
			}
		} else {
			printf("%*s%-24s %s\n", indent, "", key, scalar(c));
		}
	}
}

static void text_value(struct json_object *n, int indent)
{
	if (json_object_is_type(n, json_type_object))
		text_members(n, indent, NULL);
	else if (json_object_is_type(n, json_type_array))
		for (size_t i = 0; i < json_object_array_length(n); i++)
			text_value(json_object_array_get_idx(n, i), indent);
	else
		printf("%*s%s\n", indent, "", scalar(n));
}

/* --- who holds the device's node open */


unsigned mrctl_node_holders(const char *node, int *pids, unsigned max,
			    int *incomplete)
{
	char want[PATH_MAX];
	struct dirent *d;
	unsigned n = 0;
	DIR *proc;

	*incomplete = 0;
	snprintf(want, sizeof(want), MRCTL_DEVDIR "/%s", node);
	proc = opendir("/proc");
	if (!proc) {
		*incomplete = 1;
		return 0;
	}
	while ((d = readdir(proc))) {
		char path[64];
		struct dirent *f;
		DIR *fds;
		int pid, held = 0;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = atoi(d->d_name);
		if (pid == getpid()) /* an inherited descriptor: not a user */
			continue;
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = opendir(path);
		if (!fds) {
			if (errno != ENOENT) /* not gone: not ours to see */
				*incomplete = 1;
			continue;
		}
		while (!held && (f = readdir(fds))) {
			char link[PATH_MAX], lpath[320];
			ssize_t len;

			if (f->d_name[0] == '.')
				continue;
			snprintf(lpath, sizeof(lpath), "%s/%s", path,
				 f->d_name);
			len = readlink(lpath, link, sizeof(link) - 1);
			if (len <= 0)
				continue;
			link[len] = 0;
			held = !strcmp(link, want);
		}
		closedir(fds);
		if (held) {
			if (n < max)
				pids[n] = pid;
			n++;
		}
	}
	closedir(proc);
	return n;
}

/* Returns how many processes hold node open. */
static unsigned find_holders(const char *node, struct mrctl_holders *h)
{
	memset(h, 0, sizeof(*h));
	h->n = mrctl_node_holders(node, h->pid, MAX_PIDS, &h->incomplete);
	return h->n;
}

void mrctl_comm_of(int pid, char *buf, size_t len)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	buf[0] = 0;
	f = fopen(path, "re");
	if (!f)
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = 0;
	fclose(f);
}

int mrctl_stats_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("metaroce-ctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

int mrctl_stats_usage(const char *fmt, const char *arg)
{
	fputs("metaroce-ctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see metaroce-ctl --help)\n", stderr);
	return 2;
}

/* Read the whole file (at most MRCTL_STATS_MAX bytes) into *out. */
static int read_all(int fd, char **out, size_t *len)
{
	char *buf = malloc(MRCTL_STATS_MAX + 1);
	size_t n = 0;
	ssize_t r;

	if (!buf)
		return -1;
	while ((r = read(fd, buf + n, MRCTL_STATS_MAX + 1 - n)) > 0) {
		n += (size_t)r;
		if (n > MRCTL_STATS_MAX)
			break;
	}
	close(fd);
	if (r < 0 || n > MRCTL_STATS_MAX) {
		if (n > MRCTL_STATS_MAX)
			errno = EFBIG;
		free(buf);
		return -1;
	}
	buf[n] = 0;
	*out = buf;
	*len = n;
	return 0;
}

static void fmt_time(time_t t, char *buf, size_t len, int iso)
{
	struct tm tm;

	gmtime_r(&t, &tm);
	strftime(buf, len, iso ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%d %H:%M:%S UTC",
		 &tm);
}

/* --- the sum over processes: numbers at the same place are added,
 * identifiers (device, plane, path) kept, the writer's pid dropped. */

static int is_ident(const char *key)
{
	return key && (!strcmp(key, "device") || !strcmp(key, "plane") ||
		       !strcmp(key, "path"));
}

static struct json_object *jcopy(struct json_object *n)
{
	struct json_object *c = NULL;

	return json_object_deep_copy(n, &c, NULL) ? NULL : c;
}

/* An unsigned integer, or -1. */
static int juint(struct json_object *n, uint64_t *v)
{
	if (!json_object_is_type(n, json_type_int) ||
	    json_object_get_int64(n) < 0)
		return -1;
	*v = json_object_get_uint64(n);
	return 0;
}

/* Add src into dst (same shape expected; what only src has is copied,
 * what differs in type is left as dst has it). key: dst's name in its
 * object, or NULL. */
static int jadd(struct json_object *dst, struct json_object *src,
		const char *key)
{
	enum json_type t = json_object_get_type(dst);
	uint64_t a, b;

	if (t != json_object_get_type(src))
		return 0;
	if (t == json_type_int) {
		if (is_ident(key) || juint(dst, &a) || juint(src, &b))
			return 0;
		/* Saturate rather than wrap: a sum never goes down. */
		return json_object_set_uint64(dst,
					      a + b < a ? UINT64_MAX : a + b)
			       ? 0
			       : -1;
	}
	if (t == json_type_array) {
		size_t nd = json_object_array_length(dst);

		for (size_t i = 0; i < json_object_array_length(src); i++) {
			struct json_object *s = json_object_array_get_idx(src,
									  i),
					   *c;

			if (i < nd) {
				if (jadd(json_object_array_get_idx(dst, i), s,
					 NULL))
					return -1;
			} else if (!(c = jcopy(s)) ||
				   json_object_array_add(dst, c)) {
				json_object_put(c);
				return -1;
			}
		}
		return 0;
	}
	if (t != json_type_object)
		return 0;
	json_object_object_foreach(src, k, s)
	{
		struct json_object *d, *c;

		if (json_object_object_get_ex(dst, k, &d)) {
			if (jadd(d, s, k))
				return -1;
		} else if (!(c = jcopy(s)) ||
			   json_object_object_add(dst, k, c)) {
			json_object_put(c);
			return -1;
		}
	}
	return 0;
}

/* --- the per-process files */


static int proc_cmp(const void *a, const void *b)
{
	const struct mrctl_proc *x = a, *y = b;

	return (x->pid > y->pid) - (x->pid < y->pid);
}

/* "metaroce.stats.<pid>": the pid, else 0. */
static int file_pid(const char *name, int *tmp)
{
	size_t k = strlen(MRCTL_STATS_FILE);
	char *end;
	long v;

	*tmp = 0;
	if (strncmp(name, MRCTL_STATS_FILE ".", k + 1) ||
	    !isdigit((unsigned char)name[k + 1]))
		return 0;
	errno = 0;
	v = strtol(name + k + 1, &end, 10);
	if (errno || v <= 0 || v > INT_MAX)
		return 0;
	if (!strcmp(end, ".tmp"))
		*tmp = 1;
	else if (*end)
		return 0;
	return (int)v;
}

static int pid_alive(int pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Owner of a live process (for files in a world-writable directory:
 * one user must not pass counters off as another's process). */
static int pid_uid(int pid, uid_t *uid)
{
	char path[32];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/%d", pid);
	if (stat(path, &st))
		return -1;
	*uid = st.st_uid;
	return 0;
}

static int holds(const struct mrctl_holders *h, int pid)
{
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++)
		if (h->pid[i] == pid)
			return 1;
	return 0;
}

static double age_of(const struct stat *st, const struct timespec *now)
{
	double age = (double)(now->tv_sec - st->st_mtim.tv_sec) +
		     (double)(now->tv_nsec - st->st_mtim.tv_nsec) / 1e9;

	return age < 0 ? 0 : age;
}

static uint64_t mtime_ns(const struct stat *st)
{
	return (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
	       (uint64_t)st->st_mtim.tv_nsec;
}

/* The file a was written after b. */
static int newer(const struct mrctl_proc *a, const struct mrctl_proc *b)
{
	return mtime_ns(&a->st) > mtime_ns(&b->st);
}

/* When the writer of file name opened the device ("started_ns",
 * lib/dp/mrdp_stats.c), or 0: not said (an older writer), unreadable. */
static uint64_t started_of(int dfd, const char *name)
{
	int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct json_object *root, *v;
	uint64_t ns = 0;
	size_t len;
	char *raw;

	/* read_all closes fd. */
	if (fd < 0 || read_all(fd, &raw, &len))
		return 0;
	root = json_tokener_parse(raw);
	if (root && json_object_object_get_ex(root, "started_ns", &v) &&
	    juint(v, &ns))
		ns = 0;
	json_object_put(root);
	free(raw);
	return ns;
}

/*
 * Every process file of the directory into ps (sorted by pid). Files of
 * processes that no longer exist are removed, except the last run's,
 * which --last shows: the one written last and those of the processes
 * that ran alongside it, i.e. wrote after it started (its "started_ns").
 * Without that field (files of an older writer) a run is the files
 * written within MRCTL_STATS_LAST_S of the last one. Not by pid (pids
 * wrap) nor by a fixed window alone: a program run twice within
 * seconds is two runs, and --last is about the second. Leftover
 * temporary files of dead processes go too. Removal that is not
 * permitted (another user's file, sticky directory) is skipped; such a
 * file of an earlier run is not shown either.
 */
static int scan_dir(int dfd, const struct mrctl_holders *h, struct mrctl_proc *ps,
		    unsigned *np)
{
	struct timespec now;
	struct dirent *e;
	uint64_t started = 0;
	time_t last_s = 0;
	unsigned n = 0, i, k, last = MRCTL_STATS_MAX_PROCS;
	DIR *dir;
	int fd = dup(dfd);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(dir)) && n < MRCTL_STATS_MAX_PROCS) {
		struct mrctl_proc *p = &ps[n];
		int tmp, pid = file_pid(e->d_name, &tmp);
		uid_t uid;

		if (!pid)
			continue;
		if (tmp) {
			if (!pid_alive(pid))
				unlinkat(dfd, e->d_name, 0);
			continue;
		}
		memset(p, 0, sizeof(*p));
		if (fstatat(dfd, e->d_name, &p->st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(p->st.st_mode))
			continue;
		p->pid = pid;
		snprintf(p->name, sizeof(p->name), "%s", e->d_name);
		p->age = age_of(&p->st, &now);
		p->alive = pid_alive(pid);
		if (p->alive && pid_uid(pid, &uid) == 0 && uid != p->st.st_uid)
			continue; /* not that process's file */
		p->live = p->alive && p->age <= MRCTL_STATS_FRESH_S &&
			  (holds(h, pid) || h->incomplete);
		if (p->alive)
			mrctl_comm_of(pid, p->comm, sizeof(p->comm));
		n++;
	}
	closedir(dir);
	for (i = 0; i < n; i++)
		if (!ps[i].alive &&
		    (last == MRCTL_STATS_MAX_PROCS || newer(&ps[i], &ps[last])))
			last = i;
	if (last < n) {
		started = started_of(dfd, ps[last].name);
		last_s = ps[last].st.st_mtim.tv_sec;
	}
	for (i = k = 0; i < n; i++) {
		/* (Compaction overwrites ps[]: last's times are copied.) */
		const struct mrctl_proc *p = &ps[i];
		int same_run;

		if (i == last)
			same_run = 1;
		else if (started)
			same_run = mtime_ns(&p->st) >= started;
		else
			same_run = p->st.st_mtim.tv_sec + MRCTL_STATS_LAST_S >=
				   last_s;

		/* An earlier run's: gone, and not shown even when it is not
		 * ours to remove. */
		if (!p->alive && !same_run) {
			unlinkat(dfd, p->name, 0);
			continue;
		}
		ps[k++] = ps[i];
	}
	qsort(ps, k, sizeof(*ps), proc_cmp);
	*np = k;
	return 0;
}

/* Read and parse one process's file; on error a message and -1. */
static int load(int dfd, const char *dir, struct mrctl_proc *p)
{
	int fd = openat(dfd, p->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct json_tokener *tok;
	size_t end;

	/* read_all closes fd. */
	if (fd < 0 || read_all(fd, &p->raw, &p->len)) {
		mrctl_stats_fail("cannot read %s/%s: %s", dir, p->name,
			   strerror(errno));
		return -1;
	}
	tok = json_tokener_new();
	if (!tok) {
		mrctl_stats_fail("out of memory");
		return -1;
	}
	p->root = json_tokener_parse_ex(tok, p->raw, (int)p->len);
	end = json_tokener_get_parse_end(tok);
	if (!p->root || !json_object_is_type(p->root, json_type_object) ||
	    p->raw[end + strspn(p->raw + end, " \t\r\n")]) {
		enum json_tokener_error e = json_tokener_get_error(tok);

		mrctl_stats_fail("%s/%s is malformed: %s at byte %zu", dir, p->name,
			   !p->root && e == json_tokener_continue
				   ? "unexpected end of data"
			   : !p->root && e != json_tokener_success
				   ? json_tokener_error_desc(e)
			   : !p->root || json_object_is_type(p->root,
							     json_type_object)
				   ? "trailing data"
				   : "not an object",
			   end);
		json_tokener_free(tok);
		return -1;
	}
	json_tokener_free(tok);
	return 0;
}

/* ", started <time>" when the writer said when (started_ns), else "". */
static void started_txt(struct json_object *root, char *buf, size_t len,
			int iso)
{
	struct json_object *v;
	uint64_t ns;

	buf[0] = 0;
	if (json_object_object_get_ex(root, "started_ns", &v) && !juint(v, &ns))
		fmt_time((time_t)(ns / 1000000000ull), buf, len, iso);
}

static void proc_label(const struct mrctl_proc *p, char *buf, size_t len)
{
	if (p->live)
		snprintf(buf, len, "%s", p->comm[0] ? p->comm : "?");
	else
		snprintf(buf, len, "%s",
			 p->alive ? "datapath stopped" : "ended");
}

/* A number printed with one decimal (json-c would print 17 digits). */
static struct json_object *num1(double v)
{
	char txt[32];

	snprintf(txt, sizeof(txt), "%.1f", v);
	return json_object_new_double_s(v, txt);
}

static int print_json(const struct mr_devconf *c, int in_use,
		      const struct mrctl_holders *h, const struct mrctl_proc *ps,
		      unsigned n, const struct mrctl_proc *newest,
		      struct json_object *sum)
{
	struct json_object *o = json_object_new_object(), *pids, *procs;
	char when[32];

	if (!o)
		return -1;
	fmt_time(newest->st.st_mtim.tv_sec, when, sizeof(when), 1);
	json_object_object_add(o, "device", json_object_new_string(c->name));
	json_object_object_add(o, "node", json_object_new_string(c->uverbs));
	json_object_object_add(o, "in_use", json_object_new_boolean(in_use));
	json_object_object_add(o, "written", json_object_new_string(when));
	json_object_object_add(o, "age_s", num1(newest->age));
	pids = json_object_new_array();
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++)
		json_object_array_add(pids, json_object_new_int(h->pid[i]));
	json_object_object_add(o, "pids", pids);
	procs = json_object_new_array();
	for (unsigned i = 0; i < n; i++) {
		const struct mrctl_proc *p = &ps[i];
		struct json_object *e = json_object_new_object();

		fmt_time(p->st.st_mtim.tv_sec, when, sizeof(when), 1);
		json_object_object_add(e, "pid", json_object_new_int(p->pid));
		/* comm: "" once the process is gone. */
		json_object_object_add(e, "comm",
				       json_object_new_string(p->comm));
		json_object_object_add(e, "running",
				       json_object_new_boolean(p->alive));
		json_object_object_add(e, "live",
				       json_object_new_boolean(p->live));
		json_object_object_add(e, "written",
				       json_object_new_string(when));
		started_txt(p->root, when, sizeof(when), 1);
		if (when[0])
			json_object_object_add(e, "started",
					       json_object_new_string(when));
		json_object_object_add(e, "age_s", num1(p->age));
		/* The writer's object as it is: every field it has, and the
		 * ones later versions add, reach JSON readers unchanged. */
		json_object_object_add(e, "counters", json_object_get(p->root));
		json_object_array_add(procs, e);
	}
	json_object_object_add(o, "processes", procs);
	json_object_object_add(o, "counters", json_object_get(sum));
	puts(json_object_to_json_string_ext(o, JSON_C_TO_STRING_SPACED));
	json_object_put(o);
	return 0;
}

/* --- Prometheus text exposition (--prom): the summed counters, one
 * sample per number. Names: metaroce_ + the path of keys ("engine" +
 * "retx_pkts" -> metaroce_engine_retx_pkts); an array element's
 * identifiers (plane, path) become labels of the singular name
 * (planes[0].rx_drop.short -> metaroce_plane_rx_drop_short{plane="0"}).
 * Samples are grouped by name, as the format wants. */

struct prom {
	char **line;
	size_t n, cap;
	int oom;
};

static void prom_add(struct prom *pr, const char *name, const char *labels,
		     const char *value)
{
	char *l;

	if (pr->oom)
		return;
	if (pr->n == pr->cap) {
		size_t cap = pr->cap ? 2 * pr->cap : 256;
		char **v = realloc(pr->line, cap * sizeof(*v));

		if (!v) {
			pr->oom = 1;
			return;
		}
		pr->line = v;
		pr->cap = cap;
	}
	if (asprintf(&l, "%s{%s} %s", name, labels, value) < 0) {
		pr->oom = 1;
		return;
	}
	pr->line[pr->n++] = l;
}

/* Metric names are [a-zA-Z_:][a-zA-Z0-9_:]*: anything else becomes _. */
static void prom_name(char *dst, size_t cap, const char *prefix,
		      const char *key)
{
	size_t n = (size_t)snprintf(dst, cap, "%s_%s", prefix, key);

	for (size_t i = 0; i < n && i < cap; i++)
		if (!isalnum((unsigned char)dst[i]) && dst[i] != '_')
			dst[i] = '_';
}

/* elem: o is an array element, whose identifiers are labels already. */
static void prom_walk(struct prom *pr, struct json_object *o,
		      const char *prefix, const char *labels, int elem)
{
	json_object_object_foreach(o, key, v)
	{
		char name[256], lab[512];

		if (elem && is_ident(key))
			continue;
		prom_name(name, sizeof(name), prefix, key);
		if (json_object_is_type(v, json_type_int) ||
		    json_object_is_type(v, json_type_double)) {
			prom_add(pr, name, labels, scalar(v));
		} else if (json_object_is_type(v, json_type_boolean)) {
			prom_add(pr, name, labels,
				 json_object_get_boolean(v) ? "1" : "0");
		} else if (json_object_is_type(v, json_type_object)) {
			prom_walk(pr, v, name, labels, 0);
		} else if (json_object_is_type(v, json_type_array)) {
			size_t k = strlen(name);

			if (k > 1 && name[k - 1] == 's')
				name[k - 1] = 0; /* planes -> plane */
			for (size_t i = 0; i < json_object_array_length(v);
			     i++) {
				struct json_object *e =
					json_object_array_get_idx(v, i);
				size_t off;

				if (!json_object_is_type(e, json_type_object))
					continue;
				off = (size_t)snprintf(lab, sizeof(lab), "%s",
						       labels);
				json_object_object_foreach(e, ek, ev)
				{
					if (is_ident(ek) && off < sizeof(lab))
						off += (size_t)snprintf(
							lab + off,
							sizeof(lab) - off,
							",%s=\"%s\"", ek,
							scalar(ev));
				}
				prom_walk(pr, e, name, lab, 1);
			}
		}
	}
}

static int prom_cmp(const void *a, const void *b)
{
	const char *x = *(char *const *)a, *y = *(char *const *)b;
	size_t nx = strcspn(x, "{"), ny = strcspn(y, "{");
	int c = strncmp(x, y, nx < ny ? nx : ny);

	return c ? c : (nx > ny) - (nx < ny);
}

static int print_prom(const struct mr_devconf *c, unsigned n,
		      const struct mrctl_proc *newest, struct json_object *sum)
{
	struct prom pr = { 0 };
	char labels[128], num[32];

	snprintf(labels, sizeof(labels), "device=\"%s\"", c->name);
	snprintf(num, sizeof(num), "%u", n);
	prom_add(&pr, "metaroce_processes", labels, num);
	snprintf(num, sizeof(num), "%.1f", newest->age);
	prom_add(&pr, "metaroce_counters_age_seconds", labels, num);
	prom_walk(&pr, sum, "metaroce", labels, 0);
	if (pr.oom)
		return -1;
	/* Group by name, keeping each name's samples in walk order
	 * (insertion sort: stable, and a few hundred lines). */
	for (size_t i = 1; i < pr.n; i++)
		for (size_t j = i;
		     j && prom_cmp(&pr.line[j - 1], &pr.line[j]) > 0; j--) {
			char *t = pr.line[j];

			pr.line[j] = pr.line[j - 1];
			pr.line[j - 1] = t;
		}
	for (size_t i = 0; i < pr.n; i++) {
		if (!i || prom_cmp(&pr.line[i - 1], &pr.line[i])) {
			char metric[256];
			const char *help;

			snprintf(metric, sizeof(metric), "%.*s",
				 (int)strcspn(pr.line[i], "{"), pr.line[i]);
			help = mrctl_counter_help(metric);
			if (help)
				printf("# HELP %s %s\n", metric, help);
			printf("# TYPE %s untyped\n", metric);
		}
		puts(pr.line[i]);
	}
	for (size_t i = 0; i < pr.n; i++)
		free(pr.line[i]);
	free(pr.line);
	return 0;
}

static void print_text(const struct mr_devconf *c, int in_use,
		       const struct mrctl_holders *h, struct mrctl_proc *ps, unsigned n,
		       struct json_object *sum)
{
	char when[32], label[32], started[32];

	printf("%s: node %s, %s", c->name, c->uverbs,
	       in_use ? "in use" : "NOT in use");
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++) {
		char comm[32];

		mrctl_comm_of(h->pid[i], comm, sizeof(comm));
		printf("%s %d (%s)", i ? "," : " by pid", h->pid[i], comm);
	}
	if (h->n > MAX_PIDS)
		printf(" and %u more", h->n - MAX_PIDS);
	printf("\n");
	for (unsigned i = 0; i < n; i++) {
		fmt_time(ps[i].st.st_mtim.tv_sec, when, sizeof(when), 0);
		proc_label(&ps[i], label, sizeof(label));
		started_txt(ps[i].root, started, sizeof(started), 0);
		printf("process %d (%s)%s%s", ps[i].pid, label,
		       started[0] ? ", started " : "", started);
		printf(", counters written %s (%.1f s ago)\n", when, ps[i].age);
		json_object_object_del(ps[i].root, "pid");
		json_object_object_del(ps[i].root, "started_ns");
		text_members(ps[i].root, 4, "device");
	}
	if (n > 1) {
		printf("sum of %u processes:\n", n);
		text_members(sum, 4, "device");
	}
}

/* No counters to show: say why (exit status 1). */
static int why_none(const char *name, const struct mrctl_holders *h,
		    const struct mrctl_proc *newest)
{
	char when[32];

	if (!newest && !h->n)
		return mrctl_stats_fail("device %s is not in use (no counters "
				  "written yet: no program has run its "
				  "datapath)",
				  name);
	if (!newest)
		return mrctl_stats_fail("device %s is open by pid %d but has no "
				  "counters yet: its datapath has not "
				  "started",
				  name, h->pid[0]);
	fmt_time(newest->st.st_mtim.tv_sec, when, sizeof(when), 0);
	if (h->n)
		return mrctl_stats_fail("device %s is not in use: open by pid %d, "
				  "but its datapath is not running "
				  "(counters last written %s, %.0f s ago; "
				  "--last shows them)",
				  name, h->pid[0], when, newest->age);
	return mrctl_stats_fail("device %s is not in use (counters last written "
			  "%s, %.0f s ago; --last shows them)",
			  name, when, newest->age);
}

void mrctl_stats_release(struct mrctl_stats *st)
{
	for (unsigned i = 0; st->ps && i < st->shown; i++) {
		json_object_put(st->ps[i].root);
		free(st->ps[i].raw);
	}
	free(st->ps);
	if (st->dfd >= 0)
		close(st->dfd);
	free(st->all);
	memset(st, 0, sizeof(*st));
	st->dfd = -1;
}

int mrctl_stats_load(const char *name, int last, struct mrctl_stats *st)
{
	struct mrctl_view view;
	char err[512];
	unsigned n = 0, nall = 0;
	struct mrctl_proc *newest = NULL;
	int ret = 1;

	memset(st, 0, sizeof(*st));
	st->dfd = -1;
	if (!mr_devconf_valid_name(name))
		return mrctl_stats_usage("invalid device name '%s'", name);
	if (mrctl_view_open(&view, MRCTL_LOCK_NONE, err, sizeof(err)) ||
	    mrctl_view_list(&view, name, &st->all, &nall, err, sizeof(err)))
		return mrctl_stats_fail("%s", err);

	snprintf(st->dir, sizeof(st->dir), "%s/class/infiniband/%s/%s",
		 view.sysfs, name, MRCTL_STATS_DIR);
	st->dfd = open(st->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (st->dfd < 0) {
		ret = mrctl_stats_fail("cannot read %s: %s%s", st->dir,
				 strerror(errno),
				 errno == ENOENT ? " (device added by an older "
						   "metaroce-ctl: delete and "
						   "add it again)"
						 : "");
		goto fail;
	}
	st->ps = calloc(MRCTL_STATS_MAX_PROCS, sizeof(*st->ps));
	if (!st->ps) {
		ret = mrctl_stats_fail("out of memory");
		goto fail;
	}
	find_holders(st->all[0].uverbs, &st->h);
	if (scan_dir(st->dfd, &st->h, st->ps, &n)) {
		ret = mrctl_stats_fail("cannot read %s: %s", st->dir,
				 strerror(errno));
		goto fail;
	}
	/* Shown: live processes; with --last every file kept. */
	for (unsigned i = 0; i < n; i++) {
		struct mrctl_proc *p = &st->ps[i];

		if (!newest || newer(p, newest))
			newest = p;
		st->in_use |= p->live;
	}
	for (unsigned i = 0; i < n; i++)
		if (st->ps[i].live || last)
			st->ps[st->shown++] = st->ps[i];
	if (!st->shown) {
		ret = why_none(name, &st->h, newest);
		goto fail;
	}
	st->newest = &st->ps[0];
	for (unsigned i = 0; i < st->shown; i++) {
		if (load(st->dfd, st->dir, &st->ps[i]))
			goto fail;
		if (newer(&st->ps[i], st->newest))
			st->newest = &st->ps[i];
	}
	return 0;
fail:
	mrctl_stats_release(st);
	return ret;
}

int mrctl_cmd_stats(int argc, char **argv)
{
	const char *name = NULL;
	int json = 0, prom = 0, last = 0, ret;
	struct json_object *sum = NULL;
	struct mrctl_stats st;

	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "last", no_argument, NULL, 'l' },
		{ "prom", no_argument, NULL, 'P' },
		{ 0 },
	};
	int o;

	mrctl_opt_begin("stats");
	while ((o = mrctl_getopt(argc, argv, "j", lo)) != -1) {
		if (o == 'j')
			json = 1;
		else if (o == 'P')
			prom = 1;
		else
			last = 1;
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return mrctl_stats_usage("unexpected argument '%s'", argv[optind]);
	if (json && prom)
		return mrctl_stats_usage("%s", "stats: --json or --prom, not both");
	if (!name)
		return mrctl_stats_usage("%s", "stats: missing device NAME");
	ret = mrctl_stats_load(name, last, &st);
	if (ret)
		return ret;
	ret = 1;
	/* The connections and their paths are metaroce-ctl paths' (they
	 * are a snapshot, not counters to add up over processes). */
	for (unsigned i = 0; i < st.shown; i++) {
		json_object_object_del(st.ps[i].root, "conns");
		json_object_object_del(st.ps[i].root, "conns_total");
	}
	sum = jcopy(st.ps[0].root);
	for (unsigned i = 1; sum && i < st.shown; i++)
		if (jadd(sum, st.ps[i].root, NULL)) {
			json_object_put(sum);
			sum = NULL;
		}
	if (!sum) {
		ret = mrctl_stats_fail("out of memory");
		goto out;
	}
	/* Not counters: who wrote and since when (per process). */
	json_object_object_del(sum, "pid");
	json_object_object_del(sum, "started_ns");
	if (prom) {
		if (print_prom(&st.all[0], st.shown, st.newest, sum)) {
			ret = mrctl_stats_fail("out of memory");
			goto out;
		}
	} else if (json) {
		if (print_json(&st.all[0], st.in_use, &st.h, st.ps, st.shown,
			       st.newest, sum)) {
			ret = mrctl_stats_fail("out of memory");
			goto out;
		}
	} else
		print_text(&st.all[0], st.in_use, &st.h, st.ps, st.shown, sum);
	ret = fflush(stdout) ? mrctl_stats_fail("cannot write output") : 0;
out:
	json_object_put(sum);
	mrctl_stats_release(&st);
	return ret;
}
