/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_stats.h"
#include "mr_ctl_opt.h"
#include "mr_ctl_view.h"
#include "mr_devconf.h"

#include <ctype.h>
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

#define MAX_DEPTH 16
#define MAX_PIDS 64

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

static struct jnode *jcopy(const struct jnode *n)
{
	struct jnode *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->type = n->type;
	if ((n->key && !(c->key = strdup(n->key))) ||
	    (n->text && !(c->text = strdup(n->text))))
		goto fail;
	for (const struct jnode *e = n->child; e; e = e->next) {
		struct jnode *k = jcopy(e);

		if (!k)
			goto fail;
		if (c->last)
			c->last->next = k;
		else
			c->child = k;
		c->last = k;
	}
	return c;
fail:
	jfree(c);
	return NULL;
}

/* An unsigned integer as written, or -1. */
static int juint(const struct jnode *n, unsigned long long *v)
{
	char *end;

	if (n->type != J_LIT || !isdigit((unsigned char)n->text[0]))
		return -1;
	errno = 0;
	*v = strtoull(n->text, &end, 10);
	return errno || *end ? -1 : 0;
}

static int jappend(struct jnode *parent, const struct jnode *src)
{
	struct jnode *c = jcopy(src);

	if (!c)
		return -1;
	if (parent->last)
		parent->last->next = c;
	else
		parent->child = c;
	parent->last = c;
	return 0;
}

/* Add src into dst (same shape expected; what only src has is copied,
 * what differs in type is left as dst has it). */
static int jadd(struct jnode *dst, const struct jnode *src)
{
	unsigned long long a, b;

	if (dst->type != src->type)
		return 0;
	if (dst->type == J_LIT) {
		char num[24];

		if (is_ident(dst->key) || juint(dst, &a) || juint(src, &b))
			return 0;
		/* Saturate rather than wrap: a sum never goes down. */
		snprintf(num, sizeof(num), "%llu",
			 a + b < a ? (unsigned long long)-1 : a + b);
		free(dst->text);
		dst->text = strdup(num);
		return dst->text ? 0 : -1;
	}
	if (dst->type == J_ARR) {
		struct jnode *d = dst->child;
		const struct jnode *s = src->child;

		for (; s; s = s->next, d = d ? d->next : NULL)
			if (d ? jadd(d, s) : jappend(dst, s))
				return -1;
		return 0;
	}
	if (dst->type != J_OBJ)
		return 0;
	for (const struct jnode *s = src->child; s; s = s->next) {
		struct jnode *d = dst->child;

		while (d && strcmp(d->key, s->key))
			d = d->next;
		if (d ? jadd(d, s) : jappend(dst, s))
			return -1;
	}
	return 0;
}

/* Unlink member key from obj and free it. */
static void jdrop(struct jnode *obj, const char *key)
{
	struct jnode **pp = &obj->child, *prev = NULL;

	while (*pp && strcmp((*pp)->key, key)) {
		prev = *pp;
		pp = &(*pp)->next;
	}
	if (!*pp)
		return;
	struct jnode *n = *pp;

	*pp = n->next;
	if (obj->last == n)
		obj->last = prev;
	n->next = NULL;
	jfree(n);
}

static void jprint(const struct jnode *n)
{
	if (n->key)
		printf("\"%s\": ", n->key); /* keys the writer made: plain */
	if (n->type == J_LIT) {
		fputs(n->text, stdout);
	} else if (n->type == J_STR) {
		putchar('"');
		for (const char *c = n->text; *c; c++) {
			if (*c == '"' || *c == '\\')
				printf("\\%c", *c);
			else if (*c == '\n')
				fputs("\\n", stdout);
			else if (*c == '\t')
				fputs("\\t", stdout);
			else
				putchar(*c);
		}
		putchar('"');
	} else {
		putchar(n->type == J_OBJ ? '{' : '[');
		for (const struct jnode *e = n->child; e; e = e->next) {
			jprint(e);
			if (e->next)
				fputs(", ", stdout);
		}
		putchar(n->type == J_OBJ ? '}' : ']');
	}
}

/* --- the per-process files */

struct proc {
	int pid;
	char name[NAME_MAX + 1];
	struct stat st;
	double age;
	int alive; /* the pid exists */
	int live;  /* alive, fresh and (as far as we can see) holds the node */
	char comm[32];
	char *raw;
	size_t len;
	struct jnode *root;
};

static int proc_cmp(const void *a, const void *b)
{
	const struct proc *x = a, *y = b;

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

static int holds(const struct holders *h, int pid)
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

/*
 * Every process file of the directory into ps (sorted by pid). Files of
 * processes that no longer exist are removed, except the last run's (the
 * newest and those written within MRCTL_STATS_LAST_S of it), which --last
 * shows; leftover temporary files of dead processes go too. Removal that
 * is not permitted (another user's file, sticky directory) is skipped.
 */
static int scan_dir(int dfd, const struct holders *h, struct proc *ps,
		    unsigned *np)
{
	struct timespec now;
	struct dirent *e;
	time_t newest_dead = 0;
	unsigned n = 0, i, k;
	DIR *dir;
	int fd = dup(dfd);

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	clock_gettime(CLOCK_REALTIME, &now);
	while ((e = readdir(dir)) && n < MRCTL_STATS_MAX_PROCS) {
		struct proc *p = &ps[n];
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
			comm_of(pid, p->comm, sizeof(p->comm));
		else if (p->st.st_mtim.tv_sec > newest_dead)
			newest_dead = p->st.st_mtim.tv_sec;
		n++;
	}
	closedir(dir);
	for (i = k = 0; i < n; i++) {
		if (!ps[i].alive &&
		    ps[i].st.st_mtim.tv_sec + MRCTL_STATS_LAST_S <
			    newest_dead &&
		    unlinkat(dfd, ps[i].name, 0) == 0)
			continue;
		ps[k++] = ps[i];
	}
	qsort(ps, k, sizeof(*ps), proc_cmp);
	*np = k;
	return 0;
}

/* Read and parse one process's file; on error a message and -1. */
static int load(int dfd, const char *dir, struct proc *p)
{
	struct jparser jp = { 0 };
	int fd = openat(dfd, p->name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	/* read_all closes fd. */
	if (fd < 0 || read_all(fd, &p->raw, &p->len)) {
		stats_fail("cannot read %s/%s: %s", dir, p->name,
			   strerror(errno));
		return -1;
	}
	jp.s = p->raw;
	jp.len = p->len;
	p->root = jvalue(&jp, 0);
	if (p->root) {
		jskip(&jp);
		if (jp.pos != jp.len)
			jp.err = "trailing data";
		else if (p->root->type != J_OBJ)
			jp.err = "not an object";
	}
	if (!p->root || jp.err) {
		stats_fail("%s/%s is malformed: %s at byte %zu", dir, p->name,
			   jp.err, jp.pos);
		return -1;
	}
	return 0;
}

static void proc_label(const struct proc *p, char *buf, size_t len)
{
	if (p->live)
		snprintf(buf, len, "%s", p->comm[0] ? p->comm : "?");
	else
		snprintf(buf, len, "%s",
			 p->alive ? "datapath stopped" : "ended");
}

static void print_json(const struct mr_devconf *c, int in_use,
		       const struct holders *h, const struct proc *ps,
		       unsigned n, const struct proc *newest,
		       const struct jnode *sum)
{
	char when[32];

	fmt_time(newest->st.st_mtim.tv_sec, when, sizeof(when), 1);
	/* Names are [A-Za-z0-9_.-]: no escaping needed. */
	printf("{\"device\": \"%s\", \"node\": \"%s\", \"in_use\": %s,\n",
	       c->name, c->uverbs, in_use ? "true" : "false");
	printf(" \"written\": \"%s\", \"age_s\": %.1f, \"pids\": [", when,
	       newest->age);
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++)
		printf("%s%d", i ? ", " : "", h->pid[i]);
	printf("],\n \"processes\": [");
	for (unsigned i = 0; i < n; i++) {
		const struct proc *p = &ps[i];
		size_t len = p->len;

		fmt_time(p->st.st_mtim.tv_sec, when, sizeof(when), 1);
		/* The writer's object as it is: every field it has, and the
		 * ones later versions add, reach JSON readers unchanged. */
		while (len && strchr(" \t\r\n", p->raw[len - 1]))
			len--;
		/* comm: "" once the process is gone. */
		printf("%s\n  {\"pid\": %d, \"comm\": \"", i ? "," : "",
		       p->pid);
		for (const unsigned char *k = (const unsigned char *)p->comm;
		     *k; k++)
			printf(*k < 0x20		 ? "\\u%04x"
			       : *k == '"' || *k == '\\' ? "\\%c"
							 : "%c",
			       *k);
		printf("\", \"running\": %s, \"live\": %s, \"written\": "
		       "\"%s\", \"age_s\": %.1f,\n   \"counters\": %.*s}",
		       p->alive ? "true" : "false", p->live ? "true" : "false",
		       when, p->age, (int)len, p->raw);
	}
	printf("],\n \"counters\": ");
	jprint(sum);
	printf("}\n");
}

static void print_text(const struct mr_devconf *c, int in_use,
		       const struct holders *h, struct proc *ps, unsigned n,
		       struct jnode *sum)
{
	char when[32], label[32];

	printf("%s: node %s, %s", c->name, c->uverbs,
	       in_use ? "in use" : "NOT in use");
	for (unsigned i = 0; i < h->n && i < MAX_PIDS; i++) {
		char comm[32];

		comm_of(h->pid[i], comm, sizeof(comm));
		printf("%s %d (%s)", i ? "," : " by pid", h->pid[i], comm);
	}
	if (h->n > MAX_PIDS)
		printf(" and %u more", h->n - MAX_PIDS);
	printf("\n");
	for (unsigned i = 0; i < n; i++) {
		fmt_time(ps[i].st.st_mtim.tv_sec, when, sizeof(when), 0);
		proc_label(&ps[i], label, sizeof(label));
		printf("process %d (%s), counters written %s (%.1f s ago)\n",
		       ps[i].pid, label, when, ps[i].age);
		jdrop(ps[i].root, "pid");
		text_members(ps[i].root, 4, "device");
	}
	if (n > 1) {
		printf("sum of %u processes:\n", n);
		text_members(sum, 4, "device");
	}
}

/* No counters to show: say why (exit status 1). */
static int why_none(const char *name, const struct holders *h,
		    const struct proc *newest)
{
	char when[32];

	if (!newest && !h->n)
		return stats_fail("device %s is not in use (no counters "
				  "written yet: no program has run its "
				  "datapath)",
				  name);
	if (!newest)
		return stats_fail("device %s is open by pid %d but has no "
				  "counters yet: its datapath has not "
				  "started",
				  name, h->pid[0]);
	fmt_time(newest->st.st_mtim.tv_sec, when, sizeof(when), 0);
	if (h->n)
		return stats_fail("device %s is not in use: open by pid %d, "
				  "but its datapath is not running "
				  "(counters last written %s, %.0f s ago; "
				  "--last shows them)",
				  name, h->pid[0], when, newest->age);
	return stats_fail("device %s is not in use (counters last written "
			  "%s, %.0f s ago; --last shows them)",
			  name, when, newest->age);
}

int mrctl_cmd_stats(int argc, char **argv)
{
	const char *name = NULL;
	int json = 0, last = 0, in_use = 0, ret = 1, dfd = -1;
	struct mrctl_view view;
	struct mr_devconf *all;
	struct proc *ps = NULL, *newest = NULL;
	struct jnode *sum = NULL;
	char err[512], dir[PATH_MAX + 300];
	struct holders h;
	unsigned n = 0, shown = 0;

	static const struct option lo[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "last", no_argument, NULL, 'l' },
		{ 0 },
	};
	int o;

	mrctl_opt_begin("stats");
	while ((o = mrctl_getopt(argc, argv, "j", lo)) != -1) {
		if (o == 'j')
			json = 1;
		else
			last = 1;
	}
	if (optind < argc)
		name = argv[optind++];
	if (optind < argc)
		return stats_usage("unexpected argument '%s'", argv[optind]);
	if (!name)
		return stats_usage("%s", "stats: missing device NAME");
	if (!mr_devconf_valid_name(name))
		return stats_usage("invalid device name '%s'", name);
	if (mrctl_view_open(&view, MRCTL_LOCK_NONE, err, sizeof(err)) ||
	    mrctl_view_list(&view, name, &all, &n, err, sizeof(err)))
		return stats_fail("%s", err);

	snprintf(dir, sizeof(dir), "%s/class/infiniband/%s/%s", view.sysfs,
		 name, MRCTL_STATS_DIR);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (dfd < 0) {
		ret = stats_fail("cannot read %s: %s%s", dir, strerror(errno),
				 errno == ENOENT ? " (device added by an older "
						   "metaroce-ctl: delete and "
						   "add it again)"
						 : "");
		goto out;
	}
	ps = calloc(MRCTL_STATS_MAX_PROCS, sizeof(*ps));
	if (!ps) {
		ret = stats_fail("out of memory");
		goto out;
	}
	find_holders(all[0].uverbs, &h);
	if (scan_dir(dfd, &h, ps, &n)) {
		ret = stats_fail("cannot read %s: %s", dir, strerror(errno));
		goto out;
	}
	/* Shown: live processes; with --last every file kept. */
	for (unsigned i = 0; i < n; i++) {
		if (!newest ||
		    ps[i].st.st_mtim.tv_sec > newest->st.st_mtim.tv_sec ||
		    (ps[i].st.st_mtim.tv_sec == newest->st.st_mtim.tv_sec &&
		     ps[i].st.st_mtim.tv_nsec > newest->st.st_mtim.tv_nsec))
			newest = &ps[i];
		in_use |= ps[i].live;
	}
	for (unsigned i = 0; i < n; i++)
		if (ps[i].live || last)
			ps[shown++] = ps[i];
	if (!shown) {
		ret = why_none(name, &h, newest);
		goto out;
	}
	newest = &ps[0];
	for (unsigned i = 0; i < shown; i++) {
		if (load(dfd, dir, &ps[i]))
			goto out;
		if (ps[i].st.st_mtim.tv_sec > newest->st.st_mtim.tv_sec)
			newest = &ps[i];
	}
	sum = jcopy(ps[0].root);
	for (unsigned i = 1; sum && i < shown; i++)
		if (jadd(sum, ps[i].root)) {
			jfree(sum);
			sum = NULL;
		}
	if (!sum) {
		ret = stats_fail("out of memory");
		goto out;
	}
	jdrop(sum, "pid");
	if (json)
		print_json(&all[0], in_use, &h, ps, shown, newest, sum);
	else
		print_text(&all[0], in_use, &h, ps, shown, sum);
	ret = fflush(stdout) ? stats_fail("cannot write output") : 0;
out:
	for (unsigned i = 0; ps && i < shown; i++) {
		jfree(ps[i].root);
		free(ps[i].raw);
	}
	jfree(sum);
	free(ps);
	if (dfd >= 0)
		close(dfd);
	free(all);
	return ret;
}
