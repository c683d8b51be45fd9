/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-ctl link gc: remove the /dev/infiniband nodes and the views of
 * network namespaces that no longer exist. A namespace that is gone
 * without `link del` (ip netns del, a test killed half-way) leaves its
 * node behind, and /dev is shared by every namespace.
 *
 * A node is named metaroce-<netns cookie>-<n> (or metaroce-i<inode>-<n>
 * on kernels without cookies). Cookies are never reused, so the node's
 * namespace is alive exactly when some namespace that can still be
 * reached has that cookie. Conservatively, every namespace anything could
 * still reach counts as alive:
 *   - every process's /proc/<pid>/ns/net,
 *   - every open descriptor of a network namespace (/proc/<pid>/fd),
 *   - every nsfs bind mount (ip netns's /run/netns/<name>, Docker's...)
 *     in every mount namespace (/proc/<pid>/mountinfo, opened through
 *     /proc/<pid>/root),
 * and a node some process holds open is kept whatever its namespace.
 * The cookie of each namespace is read inside it (setns, then
 * SO_NETNS_COOKIE); this needs root, and gc refuses to run if any
 * process could not be inspected. Nodes are listed before namespaces are
 * looked at: a node made afterwards belongs to a namespace that exists
 * during the scan.
 *
 * Views are looked for in this command's runtime directory only
 * ($METAROCE_RUNDIR); nodes everywhere in /dev/infiniband.
 */
#include "mr_ctl_gc.h"
#include "mr_ctl_opt.h"
#include "mr_ctl_stats.h"
#include "mr_ctl_view.h"
#include "mr_netns.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define NODE_PREFIX "metaroce-"
#define MAX_BAD 8

struct gc_ns {
	dev_t dev;
	ino_t ino;
	uint64_t cookie;
	int has_cookie;
};

struct gc {
	struct gc_ns *ns;
	size_t n, cap;
	int self_fd;	  /* our own network namespace, to return to */
	int incomplete;	  /* out of memory: nothing can be proven */
	int pid;	  /* the process being inspected */
	int bad[MAX_BAD]; /* processes that could not be inspected */
	unsigned nbad;
	int *skip; /* --skip-pid: vouched to hold no namespace */
	unsigned nskip;
	char err[512];
};

/* The process being inspected hides something from us. */
static void mark_bad(struct gc *g)
{
	for (unsigned i = 0; i < g->nskip; i++)
		if (g->skip[i] == g->pid)
			return;
	for (unsigned i = 0; i < g->nbad && i < MAX_BAD; i++)
		if (g->bad[i] == g->pid)
			return;
	if (g->nbad < MAX_BAD)
		g->bad[g->nbad] = g->pid;
	g->nbad++;
}

static int gc_err(struct gc *g, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(g->err, sizeof(g->err), fmt, ap);
	va_end(ap);
	return -1;
}

/* Record the namespace behind path (if it is a network namespace not
 * seen yet). 0, or -1 when we could not return to our own namespace. */
static int add_ns(struct gc *g, const char *path)
{
	struct gc_ns *e;
	struct stat st;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		/* Gone meanwhile: fine. Not allowed: we cannot prove. */
		if (errno != ENOENT && errno != ESRCH)
			mark_bad(g);
		return 0;
	}
	if (fstat(fd, &st)) {
		close(fd);
		return 0;
	}
	for (size_t i = 0; i < g->n; i++) {
		if (g->ns[i].dev == st.st_dev && g->ns[i].ino == st.st_ino) {
			close(fd);
			return 0;
		}
	}
	if (setns(fd, CLONE_NEWNET)) {
		/* EINVAL: an nsfs mount of another namespace type. */
		if (errno != EINVAL)
			mark_bad(g);
		close(fd);
		return 0;
	}
	close(fd);
	if (g->n == g->cap) {
		size_t cap = g->cap ? 2 * g->cap : 16;
		struct gc_ns *p = realloc(g->ns, cap * sizeof(*p));

		if (!p) {
			g->incomplete = 1;
			goto back;
		}
		g->ns = p;
		g->cap = cap;
	}
	e = &g->ns[g->n++];
	memset(e, 0, sizeof(*e));
	e->dev = st.st_dev;
	e->ino = st.st_ino;
	e->has_cookie = !mrctl_netns_cookie(&e->cookie);
back:
	if (setns(g->self_fd, CLONE_NEWNET))
		return gc_err(g, "cannot return to this network namespace: %s",
			      strerror(errno));
	return 0;
}

/* Undo mountinfo's octal escapes (\040 for a space) in place. */
static void unescape(char *s)
{
	char *o = s;

	for (; *s; s++) {
		if (s[0] == '\\' && isdigit((unsigned char)s[1]) &&
		    isdigit((unsigned char)s[2]) &&
		    isdigit((unsigned char)s[3])) {
			*o++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 +
				      (s[3] - '0'));
			s += 3;
		} else {
			*o++ = *s;
		}
	}
	*o = 0;
}

/* The nsfs mounts of the mount namespace of pid. */
static int add_mounts(struct gc *g, int pid)
{
	char path[64], line[4096];
	FILE *f;
	int ret = 0;

	snprintf(path, sizeof(path), "/proc/%d/mountinfo", pid);
	f = fopen(path, "re");
	if (!f) {
		if (errno != ENOENT && errno != ESRCH)
			mark_bad(g);
		return 0;
	}
	while (!ret && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, " - "), *fld[5], *save = NULL;
		char full[4200];
		int i;

		/* ID PARENT MAJ:MIN ROOT MOUNTPOINT ... - FSTYPE ... */
		if (!sep || strncmp(sep + 3, "nsfs ", 5))
			continue;
		fld[0] = strtok_r(line, " ", &save);
		for (i = 1; i < 5 && fld[i - 1]; i++)
			fld[i] = strtok_r(NULL, " ", &save);
		if (i < 5 || !fld[4])
			continue;
		unescape(fld[4]);
		snprintf(full, sizeof(full), "/proc/%d/root%s", pid, fld[4]);
		ret = add_ns(g, full);
	}
	fclose(f);
	return ret;
}

/* Every network namespace any process is in, holds, or can mount. */
static int scan(struct gc *g)
{
	ino_t *mnt = NULL;
	size_t nmnt = 0, capmnt = 0;
	struct dirent *d;
	DIR *proc;
	int ret = 0;

	proc = opendir("/proc");
	if (!proc)
		return gc_err(g, "cannot read /proc: %s", strerror(errno));
	while (!ret && (d = readdir(proc))) {
		char path[320], link[64];
		struct dirent *f;
		struct stat st;
		DIR *fds;
		int pid;

		if (!isdigit((unsigned char)d->d_name[0]))
			continue;
		pid = atoi(d->d_name);
		g->pid = pid;
		snprintf(path, sizeof(path), "/proc/%d/ns/net", pid);
		ret = add_ns(g, path);
		/* One mountinfo per mount namespace. */
		snprintf(path, sizeof(path), "/proc/%d/ns/mnt", pid);
		if (!ret && stat(path, &st) && errno != ENOENT)
			mark_bad(g);
		else if (!ret && !stat(path, &st)) {
			size_t i;

			for (i = 0; i < nmnt && mnt[i] != st.st_ino; i++)
				;
			if (i == nmnt) {
				if (nmnt == capmnt) {
					size_t c = capmnt ? 2 * capmnt : 16;
					ino_t *p = realloc(mnt, c * sizeof(*p));

					if (!p) {
						g->incomplete = 1;
						continue;
					}
					mnt = p;
					capmnt = c;
				}
				mnt[nmnt++] = st.st_ino;
				ret = add_mounts(g, pid);
			}
		}
		snprintf(path, sizeof(path), "/proc/%d/fd", pid);
		fds = ret ? NULL : opendir(path);
		if (!fds) {
			if (!ret && errno != ENOENT)
				mark_bad(g);
			continue;
		}
		while (!ret && (f = readdir(fds))) {
			char fdp[600];
			ssize_t n;

			if (f->d_name[0] == '.')
				continue;
			snprintf(fdp, sizeof(fdp), "%s/%s", path, f->d_name);
			n = readlink(fdp, link, sizeof(link) - 1);
			if (n <= 0) {
				if (errno != ENOENT)
					mark_bad(g);
				continue;
			}
			link[n] = 0;
			if (!strncmp(link, "net:[", 5))
				ret = add_ns(g, fdp);
		}
		closedir(fds);
	}
	closedir(proc);
	free(mnt);
	return ret;
}

/* Is the namespace of a node name ("metaroce-<cookie>-<n>" or
 * "metaroce-i<ino>-<n>") alive? -1: not one of our node names. */
static int node_alive(const struct gc *g, const char *name)
{
	const char *p = name + strlen(NODE_PREFIX);
	int by_ino = *p == 'i';
	unsigned long long v;
	char *end;

	if (strncmp(name, NODE_PREFIX, strlen(NODE_PREFIX)))
		return -1;
	p += by_ino;
	if (!isdigit((unsigned char)*p))
		return -1;
	errno = 0;
	v = strtoull(p, &end, 10);
	if (errno || *end != '-' || !isdigit((unsigned char)end[1]) ||
	    strspn(end + 1, "0123456789") != strlen(end + 1))
		return -1;
	for (size_t i = 0; i < g->n; i++) {
		if (by_ino ? (unsigned long long)g->ns[i].ino == v
			   : g->ns[i].has_cookie && g->ns[i].cookie == v)
			return 1;
	}
	return 0;
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(p) ? -1 : 0;
}

/* The views of the runtime directory whose namespace is gone. */
static unsigned gc_views(const struct gc *g, int dry, unsigned *kept)
{
	const char *rundir = mrctl_rundir();
	unsigned removed = 0;
	struct dirent *d;
	DIR *dir = opendir(rundir);

	if (!dir)
		return 0;
	while ((d = readdir(dir))) {
		char path[PATH_MAX], line[64];
		unsigned long long ino, cookie;
		int alive = 0, have_cookie = 0;
		FILE *f;

		if (strncmp(d->d_name, "net-", 4) ||
		    sscanf(d->d_name + 4, "%llu", &ino) != 1)
			continue;
		snprintf(path, sizeof(path), "%s/%s/%s", rundir, d->d_name,
			 MRCTL_COOKIE_FILE);
		f = fopen(path, "re");
		if (f) {
			have_cookie = fgets(line, sizeof(line), f) &&
				      sscanf(line, "%llu", &cookie) == 1;
			fclose(f);
		}
		for (size_t i = 0; i < g->n && !alive; i++)
			alive = have_cookie
					? g->ns[i].has_cookie &&
						  g->ns[i].cookie == cookie
					: (unsigned long long)g->ns[i].ino ==
						  ino;
		if (alive) {
			(*kept)++;
			continue;
		}
		snprintf(path, sizeof(path), "%s/%s", rundir, d->d_name);
		printf("%s view %s (network namespace gone)\n",
		       dry ? "would remove" : "removed", path);
		if (!dry)
			nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
		removed++;
	}
	closedir(dir);
	return removed;
}

int mrctl_cmd_gc(int argc, char **argv)
{
	struct gc g = { .self_fd = -1 };
	unsigned removed = 0, kept = 0, held = 0, vkept = 0, vremoved;
	char **nodes = NULL;
	size_t nnodes = 0;
	struct mrctl_view view;
	struct dirent *d;
	int dry = 0, ret = 1;
	DIR *dir;

	g.skip = calloc((size_t)argc + 1, sizeof(int));
	if (!g.skip)
		return 1;
	mrctl_opt_begin("link gc");
	for (;;) {
		static const struct option lo[] = {
			{ "dry-run", no_argument, NULL, 'n' },
			{ "skip-pid", required_argument, NULL, 's' },
			{ 0 },
		};
		int o = mrctl_getopt(argc, argv, "n", lo);

		if (o == -1)
			break;
		if (o == 'n') {
			dry = 1;
			continue;
		}
		if (optarg[0] < '1' || optarg[0] > '9' ||
		    strspn(optarg, "0123456789") != strlen(optarg) ||
		    strlen(optarg) >= 8) {
			free(g.skip);
			mrctl_die_usage("--skip-pid needs a process id");
		}
		g.skip[g.nskip++] = atoi(optarg);
	}
	if (optind < argc) {
		free(g.skip);
		mrctl_die_usage("unexpected argument '%s' for link gc",
				argv[optind]);
	}
	if (geteuid()) {
		fprintf(stderr, "metaroce-ctl: link gc needs root: it looks "
				"into every process's network namespace\n");
		return 1;
	}
	/* Serialised with add/del of this runtime directory. */
	if (mrctl_view_open(&view, MRCTL_LOCK, g.err, sizeof(g.err))) {
		fprintf(stderr, "metaroce-ctl: %s\n", g.err);
		return 1;
	}
	/* Nodes first (see above). */
	dir = opendir(MRCTL_DEVDIR);
	while (dir && (d = readdir(dir))) {
		struct stat st;
		char **p;

		if (strncmp(d->d_name, NODE_PREFIX, strlen(NODE_PREFIX)) ||
		    fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISCHR(st.st_mode))
			continue;
		p = realloc(nodes, (nnodes + 1) * sizeof(*p));
		if (!p || !(p[nnodes] = strdup(d->d_name))) {
			nodes = p ? p : nodes;
			fprintf(stderr, "metaroce-ctl: out of memory\n");
			goto out;
		}
		nodes = p;
		nnodes++;
	}
	if (dir)
		closedir(dir);

	g.self_fd = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (g.self_fd < 0) {
		fprintf(stderr,
			"metaroce-ctl: cannot open /proc/self/ns/net: "
			"%s\n",
			strerror(errno));
		goto out;
	}
	if (scan(&g)) {
		fprintf(stderr, "metaroce-ctl: %s\n", g.err);
		goto out;
	}
	if (g.incomplete) {
		fprintf(stderr, "metaroce-ctl: link gc: out of memory; nothing "
				"removed\n");
		goto out;
	}
	if (g.nbad) {
		char comm[64] = "", path[64];
		FILE *f;

		snprintf(path, sizeof(path), "/proc/%d/comm", g.bad[0]);
		f = fopen(path, "re");
		if (f) {
			if (fgets(comm, sizeof(comm), f))
				comm[strcspn(comm, "\n")] = 0;
			fclose(f);
		}
		fprintf(stderr,
			"metaroce-ctl: link gc: cannot inspect the network "
			"namespaces of pid %d (%s)%s, so cannot prove which "
			"are "
			"gone; nothing removed (--skip-pid %d if it holds "
			"none of ours)\n",
			g.bad[0], comm, g.nbad > 1 ? " and others" : "",
			g.bad[0]);
		goto out;
	}
	for (size_t i = 0; i < nnodes; i++) {
		int alive = node_alive(&g, nodes[i]), inc, pid;
		char path[PATH_MAX];

		if (alive) { /* alive, or not a name of ours (-1) */
			kept += alive > 0;
			continue;
		}
		if (mrctl_node_holders(nodes[i], &pid, 1, &inc) || inc) {
			held++;
			continue;
		}
		snprintf(path, sizeof(path), MRCTL_DEVDIR "/%s", nodes[i]);
		if (!dry && unlink(path) && errno != ENOENT) {
			fprintf(stderr, "metaroce-ctl: cannot remove %s: %s\n",
				path, strerror(errno));
			goto out;
		}
		printf("%s node %s (network namespace gone)\n",
		       dry ? "would remove" : "removed", path);
		removed++;
	}
	vremoved = gc_views(&g, dry, &vkept);
	printf("link gc: %s %u node(s) and %u view(s) of dead network "
	       "namespaces; kept %u live node(s)%s\n",
	       dry ? "would remove" : "removed", removed, vremoved, kept,
	       held ? " and the nodes still held open" : "");
	ret = fflush(stdout) ? 1 : 0;
out:
	for (size_t i = 0; i < nnodes; i++)
		free(nodes[i]);
	free(nodes);
	free(g.ns);
	free(g.skip);
	if (g.self_fd >= 0)
		close(g.self_fd);
	mrctl_view_close(&view);
	return ret;
}
