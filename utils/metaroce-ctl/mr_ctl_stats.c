/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_stats.h"
#include "mr_ctl_view.h"
#include "mr_devconf.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 16
#define MAX_PIDS 8

/* A parsed JSON value. Scalars keep their text as written (numbers are
 * printed back exactly, whatever their size). */
enum jtype { J_OBJ, J_ARR, J_STR, J_LIT };

struct jnode {
	enum jtype type;
	char *key;  /* member name inside an object, else NULL */
	char *text; /* J_STR (unescaped) and J_LIT (number, true, ...) */
	struct jnode *child, *last, *next;
};

struct jparser {
	const char *s;
	size_t pos, len;
	const char *err;
};

static void jfree(struct jnode *n)
{
	while (n) {
		struct jnode *next = n->next;

		jfree(n->child);
		free(n->key);
		free(n->text);
		free(n);
		n = next;
	}
}

static void jskip(struct jparser *p)
{
	while (p->pos < p->len && strchr(" \t\r\n", p->s[p->pos]))
		p->pos++;
}

static char *jstring(struct jparser *p)
{
	char *out = malloc(p->len - p->pos + 1);
	size_t n = 0;

	if (!out) {
		p->err = "out of memory";
		return NULL;
	}
	p->pos++; /* the opening quote */
	while (p->pos < p->len && p->s[p->pos] != '"') {
		char c = p->s[p->pos++];

		if ((unsigned char)c < 0x20) {
			p->err = "control character in a string";
			goto fail;
		}
		if (c == '\\') {
			if (p->pos >= p->len)
				break;
			c = p->s[p->pos++];
			switch (c) {
			case '"':
			case '\\':
			case '/':
				break;
			case 'n':
				c = '\n';
				break;
			case 't':
				c = '\t';
				break;
			default:
				/* The writer never escapes anything else. */
				p->err = "unsupported escape in a string";
				goto fail;
			}
		}
		out[n++] = c;
	}
	if (p->pos >= p->len) {
		p->err = "unterminated string";
		goto fail;
	}
	p->pos++;
	out[n] = 0;
	return out;
fail:
	free(out);
	return NULL;
}

static struct jnode *jvalue(struct jparser *p, int depth);

/* Members of an object or elements of an array, after the bracket. */
static int jitems(struct jparser *p, struct jnode *n, int depth)
{
	char close = n->type == J_OBJ ? '}' : ']';

	p->pos++;
	jskip(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct jnode *c;

		jskip(p);
		if (n->type == J_OBJ) {
			if (p->pos >= p->len || p->s[p->pos] != '"') {
				p->err = "expected a member name";
				return -1;
			}
			key = jstring(p);
			if (!key)
				return -1;
			jskip(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				p->err = "expected ':'";
				return -1;
			}
			p->pos++;
		}
		c = jvalue(p, depth + 1);
		if (!c) {
			free(key);
			return -1;
		}
		c->key = key;
		if (n->last)
			n->last->next = c;
		else
			n->child = c;
		n->last = c;
		jskip(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		p->err = n->type == J_OBJ ? "expected ',' or '}'"
					  : "expected ',' or ']'";
		return -1;
	}
}

static struct jnode *jvalue(struct jparser *p, int depth)
{
	struct jnode *n;
	size_t start;

	jskip(p);
	if (depth > MAX_DEPTH) {
		p->err = "nested too deeply";
		return NULL;
	}
	if (p->pos >= p->len) {
		p->err = "unexpected end";
		return NULL;
	}
	n = calloc(1, sizeof(*n));
	if (!n) {
		p->err = "out of memory";
		return NULL;
	}
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		n->type = p->s[p->pos] == '{' ? J_OBJ : J_ARR;
		if (jitems(p, n, depth))
			goto fail;
		return n;
	case '"':
		n->type = J_STR;
		n->text = jstring(p);
		if (!n->text)
			goto fail;
		return n;
	default:
		break;
	}
	n->type = J_LIT;
	start = p->pos;
	while (p->pos < p->len && (isalnum((unsigned char)p->s[p->pos]) ||
				   strchr("+-.", p->s[p->pos])))
		p->pos++;
	if (p->pos == start) {
		p->err = "unexpected character";
		goto fail;
	}
	n->text = strndup(p->s + start, p->pos - start);
	if (!n->text) {
		p->err = "out of memory";
		goto fail;
	}
	if (strcmp(n->text, "true") && strcmp(n->text, "false") &&
	    strcmp(n->text, "null") &&
	    strspn(n->text, "0123456789+-.eE") != strlen(n->text)) {
		p->err = "not a number";
		goto fail;
	}
	return n;
fail:
	jfree(n);
	return NULL;
}

/* --- text output: one "name value" line per counter, objects indented,
 * arrays of objects as "<singular> <i>:" blocks ("planes" -> "plane 0"). */

static void text_value(const struct jnode *n, int indent);

static void text_members(const struct jnode *obj, int indent, const char *skip)
{
	for (const struct jnode *c = obj->child; c; c = c->next) {
		if (skip && !strcmp(c->key, skip))
			continue;
		if (c->type == J_STR || c->type == J_LIT) {
			printf("%*s%-24s %s\n", indent, "", c->key, c->text);
		} else if (c->type == J_OBJ) {
			printf("%*s%s:\n", indent, "", c->key);
			text_members(c, indent + 4, NULL);
		} else {
			char one[64];
			size_t k = strlen(c->key);
			unsigned i = 0;

			/* "planes" -> "plane": the element header. */
			snprintf(one, sizeof(one), "%.*s",
				 (int)(k > 1 && c->key[k - 1] == 's' ? k - 1
								     : k),
				 c->key);
			for (const struct jnode *e = c->child; e;
			     e = e->next, i++) {
				printf("%*s%s %u:\n", indent, "", one, i);
				if (e->type == J_OBJ)
					text_members(e, indent + 4, one);
				else
					text_value(e, indent + 4);
			}
		}
	}
}

static void text_value(const struct jnode *n, int indent)
{
	if (n->type == J_OBJ)
		text_members(n, indent, NULL);
	else if (n->type == J_ARR)
		for (const struct jnode *e = n->child; e; e = e->next)
			text_value(e, indent);
	else
		printf("%*s%s\n", indent, "", n->text);
}

/* --- who holds the device's node open */

struct holders {
	int pid[MAX_PIDS];
	unsigned n;	/* found (at most MAX_PIDS kept) */
	int incomplete; /* some process could not be inspected */
};

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
static unsigned find_holders(const char *node, struct holders *h)
{
	memset(h, 0, sizeof(*h));
	h->n = mrctl_node_holders(node, h->pid, MAX_PIDS, &h->incomplete);
	return h->n;
}

static void comm_of(int pid, char *buf, size_t len)
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

static int stats_fail(const char *fmt, ...)
{
	va_list ap;

	fputs("metaroce-ctl: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return 1;
}

static int stats_usage(const char *fmt, const char *arg)
{
	fputs("metaroce-ctl: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (see metaroce-ctl --help)\n", stderr);
	return 2;
}

/* Read the whole file (at most MRCTL_STATS_MAX bytes) into *out. */
static int read_all(const char *path, char **out, size_t *len)
{
	char *buf = malloc(MRCTL_STATS_MAX + 1);
	size_t n = 0;
	ssize_t r;
	int fd;

	if (!buf)
		return -1;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		free(buf);
		return -1;
	}
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

static void print_json(const struct mr_devconf *c, int in_use,
		       const struct holders *h, const struct stat *st,
		       double age, const char *raw, size_t rawlen)
{
	char when[32];

	fmt_time(st->st_mtim.tv_sec, when, sizeof(when), 1);
	/* Names are [A-Za-z0-9_.-]: no escaping needed. */
	printf("{\"device\": \"%s\", \"node\": \"%s\", \"in_use\": %s,\n",
	       c->name, c->uverbs, in_use ? "true" : "false");
	printf(" \"written\": \"%s\", \"age_s\": %.1f, \"pids\": [", when, age);
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++)
		printf("%s%d", i ? ", " : "", h->pid[i]);
	/* The writer's object as it is: every field it has, and the ones
	 * later versions add, reach JSON readers unchanged. */
	while (rawlen && strchr(" \t\r\n", raw[rawlen - 1]))
		rawlen--;
	printf("],\n \"counters\": %.*s}\n", (int)rawlen, raw);
}

static void print_text(const struct mr_devconf *c, int in_use,
		       const struct holders *h, const struct stat *st,
		       double age, const struct jnode *root)
{
	char when[32];

	fmt_time(st->st_mtim.tv_sec, when, sizeof(when), 0);
	printf("%s: node %s, %s", c->name, c->uverbs,
	       in_use ? "in use" : "NOT in use");
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++) {
		char comm[32];

		comm_of(h->pid[i], comm, sizeof(comm));
		printf("%s %d (%s)", i ? "," : " by pid", h->pid[i], comm);
	}
	if (h->n > MAX_PIDS)
		printf(" and %u more", h->n - MAX_PIDS);
	printf("\n    counters written %s (%.1f s ago)\n", when, age);
	text_members(root, 4, "device");
}

int mrctl_cmd_stats(int argc, char **argv)
{
	const char *name = NULL;
	int json = 0, last = 0, in_use, ret = 1;
	struct mrctl_view view;
	struct mr_devconf *all;
	struct jparser p = { 0 };
	struct jnode *root = NULL;
	char err[512], path[PATH_MAX + 300], *raw = NULL;
	struct timespec now;
	struct holders h;
	struct stat st;
	unsigned n;
	double age;
	size_t len;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j"))
			json = 1;
		else if (!strcmp(argv[i], "--last"))
			last = 1;
		else if (argv[i][0] == '-')
			return stats_usage("unknown option '%s' for stats",
					   argv[i]);
		else if (!name)
			name = argv[i];
		else
			return stats_usage("unexpected argument '%s'", argv[i]);
	}
	if (!name)
		return stats_usage("%s", "stats: missing device NAME");
	if (!mr_devconf_valid_name(name))
		return stats_usage("invalid device name '%s'", name);
	if (mrctl_view_open(&view, MRCTL_LOCK_NONE, err, sizeof(err)) ||
	    mrctl_view_list(&view, name, &all, &n, err, sizeof(err)))
		return stats_fail("%s", err);

	snprintf(path, sizeof(path), "%s/class/infiniband/%s/%s", view.sysfs,
		 name, MRCTL_STATS_FILE);
	if (stat(path, &st)) {
		int e = errno;

		if (e == ENOENT && !find_holders(all[0].uverbs, &h))
			ret = stats_fail("device %s is not in use (no counters "
					 "written yet: no program has run "
					 "its datapath)",
					 name);
		else if (e == ENOENT)
			ret = stats_fail("device %s is open by pid %d but has "
					 "no counters yet: its datapath has "
					 "not started, or the program cannot "
					 "write %s (programs of users other "
					 "than root cannot)",
					 name, h.pid[0], path);
		else
			ret = stats_fail("cannot read %s: %s", path,
					 strerror(e));
		goto out;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	age = (double)(now.tv_sec - st.st_mtim.tv_sec) +
	      (double)(now.tv_nsec - st.st_mtim.tv_nsec) / 1e9;
	if (age < 0)
		age = 0;
	find_holders(all[0].uverbs, &h);
	in_use = age <= MRCTL_STATS_FRESH_S && (h.n || h.incomplete);
	if (!in_use && !last) {
		char when[32];

		fmt_time(st.st_mtim.tv_sec, when, sizeof(when), 0);
		if (h.n)
			ret = stats_fail("device %s is not in use: open by "
					 "pid %d, but its datapath is not "
					 "running (counters last written %s, "
					 "%.0f s ago; --last shows them)",
					 name, h.pid[0], when, age);
		else
			ret = stats_fail("device %s is not in use (counters "
					 "last written %s, %.0f s ago; --last "
					 "shows them)",
					 name, when, age);
		goto out;
	}
	if (read_all(path, &raw, &len)) {
		ret = stats_fail("cannot read %s: %s", path, strerror(errno));
		goto out;
	}
	p.s = raw;
	p.len = len;
	root = jvalue(&p, 0);
	if (root) {
		jskip(&p);
		if (p.pos != p.len)
			p.err = "trailing data";
		else if (root->type != J_OBJ)
			p.err = "not an object";
	}
	if (!root || p.err) {
		ret = stats_fail("%s is malformed: %s at byte %zu", path, p.err,
				 p.pos);
		goto out;
	}
	if (json)
		print_json(&all[0], in_use, &h, &st, age, raw, len);
	else
		print_text(&all[0], in_use, &h, &st, age, root);
	ret = fflush(stdout) ? stats_fail("cannot write output") : 0;
out:
	jfree(root);
	free(raw);
	free(all);
	return ret;
}
