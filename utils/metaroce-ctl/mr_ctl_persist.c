/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_persist.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mr_ctl_opt.h"
#include "mr_ctl_port.h"
#include "mr_ctl_view.h"

#define SUFFIX ".conf"

const char *mrctl_confdir(void)
{
	const char *d = getenv("METAROCE_CONFDIR");

	return d && *d ? d : MRCTL_CONFDIR;
}

static void rec_path(char *buf, size_t cap, const char *name)
{
	snprintf(buf, cap, "%s/%s" SUFFIX, mrctl_confdir(), name);
}

int mrctl_persist_check(const char *name, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct stat st;

	rec_path(path, sizeof(path), name);
	if (!lstat(path, &st)) {
		snprintf(err, errlen,
			 "%s exists: device %s was persisted before (link "
			 "del %s --persist removes it)",
			 path, name, name);
		return -1;
	}
	return 0;
}

int mrctl_persist_write(const struct mr_devconf *c, char *err, size_t errlen)
{
	char path[PATH_MAX], tmp[PATH_MAX + 16];
	struct mr_devconf r = *c;
	FILE *f;
	int ret;

	/* The node name is chosen when the device is made again. */
	r.uverbs[0] = 0;
	if (mkdir(mrctl_confdir(), 0755) && errno != EEXIST) {
		snprintf(err, errlen, "cannot create %s: %s", mrctl_confdir(),
			 strerror(errno));
		return -1;
	}
	rec_path(path, sizeof(path), c->name);
	snprintf(tmp, sizeof(tmp), "%s.tmp-%d", path, (int)getpid());
	f = fopen(tmp, "wxe");
	if (!f) {
		snprintf(err, errlen, "cannot write %s: %s", tmp,
			 strerror(errno));
		return -1;
	}
	fprintf(f, "# metaroce-ctl link add --persist; metaroce.service "
		   "(metaroce-ctl link restore)\n# creates this device at "
		   "boot.\n");
	ret = mr_devconf_write(f, &r);
	if (fclose(f) || ret || rename(tmp, path)) {
		snprintf(err, errlen, "cannot write %s: %s", path,
			 strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* The device name of "<name>.conf", or 0 if the file is not one. */
static int conf_name(const char *file, char *name, size_t cap)
{
	size_t n = strlen(file), s = strlen(SUFFIX);

	if (n <= s || strcmp(file + n - s, SUFFIX) || n - s >= cap)
		return 0;
	memcpy(name, file, n - s);
	name[n - s] = 0;
	return mr_devconf_valid_name(name) && name[0] != '.';
}

static int exists(struct mrctl_view *v, const char *name)
{
	struct mr_devconf *all;
	unsigned n = 0;
	char err[512];

	if (mrctl_view_list(v, name, &all, &n, err, sizeof(err)))
		return 0;
	free(all);
	return n == 1;
}

int mrctl_persist_del(const char *name)
{
	char path[PATH_MAX], err[512];
	struct mrctl_view view;
	int had_dev = 0, ret = 0;

	rec_path(path, sizeof(path), name);
	if (mrctl_view_open(&view, MRCTL_LOCK, err, sizeof(err)) == 0) {
		had_dev = exists(&view, name);
		if (had_dev)
			ret = mrctl_view_del(&view, name, err, sizeof(err));
		mrctl_view_close(&view);
	}
	if (ret) {
		fprintf(stderr, "metaroce-ctl: %s\n", err);
		return 1;
	}
	if (unlink(path)) {
		if (errno == ENOENT && had_dev) {
			fprintf(stderr,
				"metaroce-ctl: device %s removed; it had no "
				"record in %s\n",
				name, mrctl_confdir());
			return 1;
		}
		fprintf(stderr, "metaroce-ctl: %s: %s%s\n", path,
			strerror(errno),
			errno == ENOENT ? " (and no such device here)" : "");
		return 1;
	}
	return 0;
}

/* The records of the confdir, sorted (restore order = name order). */
static int list_records(char ***out, unsigned *n)
{
	DIR *dir = opendir(mrctl_confdir());
	char **names = NULL, name[MR_DEVCONF_NAME_MAX];
	unsigned cnt = 0;
	struct dirent *d;

	*out = NULL;
	*n = 0;
	if (!dir)
		return errno == ENOENT ? 0 : -1;
	while ((d = readdir(dir))) {
		char **p;

		if (!conf_name(d->d_name, name, sizeof(name)))
			continue;
		p = realloc(names, (cnt + 1) * sizeof(*names));
		if (!p || !(p[cnt] = strdup(name))) {
			free(p ? p : names);
			closedir(dir);
			errno = ENOMEM;
			return -1;
		}
		names = p;
		cnt++;
	}
	closedir(dir);
	for (unsigned i = 1; i < cnt; i++)
		for (unsigned j = i; j && strcmp(names[j - 1], names[j]) > 0;
		     j--) {
			char *t = names[j];

			names[j] = names[j - 1];
			names[j - 1] = t;
		}
	*out = names;
	*n = cnt;
	return 0;
}

static void free_records(char **names, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

int mrctl_persist_del_all(void)
{
	struct mrctl_view view;
	char **names, err[512];
	unsigned n;
	int failed = 0;

	if (list_records(&names, &n)) {
		fprintf(stderr, "metaroce-ctl: cannot read %s: %s\n",
			mrctl_confdir(), strerror(errno));
		return 1;
	}
	if (!n)
		return 0;
	if (mrctl_view_open(&view, MRCTL_LOCK, err, sizeof(err))) {
		free_records(names, n);
		fprintf(stderr, "metaroce-ctl: %s\n", err);
		return 1;
	}
	for (unsigned i = 0; i < n; i++) {
		if (!exists(&view, names[i]))
			continue;
		if (mrctl_view_del(&view, names[i], err, sizeof(err))) {
			fprintf(stderr, "metaroce-ctl: %s\n", err);
			failed = 1;
		}
	}
	mrctl_view_close(&view);
	free_records(names, n);
	return failed;
}

/* One record: read, checked as link add checks its options, added. */
static int restore_one(struct mrctl_view *v, const char *name)
{
	char path[PATH_MAX], err[512];
	struct mrctl_port port;
	struct mr_devconf c;

	rec_path(path, sizeof(path), name);
	if (mr_devconf_read(path, &c, err, sizeof(err))) {
		fprintf(stderr, "metaroce-ctl: %s\n", err);
		return -1;
	}
	if (strcmp(c.name, name)) {
		fprintf(stderr,
			"metaroce-ctl: %s: records device %s, not %s (the "
			"file is named after its device)\n",
			path, c.name, name);
		return -1;
	}
	for (unsigned i = 0; i < c.nports; i++) {
		if (mrctl_port_parse(c.ports[i], &port, err, sizeof(err))) {
			fprintf(stderr, "metaroce-ctl: %s: %s\n", path, err);
			return -1;
		}
		if (port.iface_exists &&
		    mrctl_roce_mtu(port.netdev_mtu) < c.mtu) {
			fprintf(stderr,
				"metaroce-ctl: %s: interface %s carries at "
				"most RoCE MTU %u, the record says %u\n",
				path, port.iface,
				mrctl_roce_mtu(port.netdev_mtu), c.mtu);
			return -1;
		}
	}
	if (exists(v, name))
		return 0; /* already there: restore is idempotent */
	if (mrctl_view_add(v, &c, err, sizeof(err))) {
		fprintf(stderr, "metaroce-ctl: %s: %s\n", name, err);
		return -1;
	}
	return 0;
}

int mrctl_cmd_restore(int argc, char **argv)
{
	static const struct option lo[] = { { 0 } };
	struct mrctl_view view;
	char **names, err[512];
	unsigned n;
	int failed = 0;

	mrctl_opt_begin("link restore");
	while (mrctl_getopt(argc, argv, "", lo) != -1)
		;
	if (optind < argc)
		mrctl_die_usage("unexpected argument '%s'", argv[optind]);
	if (list_records(&names, &n)) {
		fprintf(stderr, "metaroce-ctl: cannot read %s: %s\n",
			mrctl_confdir(), strerror(errno));
		return 1;
	}
	if (!n)
		return 0;
	if (mrctl_view_open(&view, MRCTL_LOCK_CREATE, err, sizeof(err))) {
		free_records(names, n);
		fprintf(stderr, "metaroce-ctl: %s\n", err);
		return 1;
	}
	/* Every record is tried: one bad file does not keep the others. */
	for (unsigned i = 0; i < n; i++)
		if (restore_one(&view, names[i]))
			failed = 1;
	mrctl_view_close(&view);
	free_records(names, n);
	return failed;
}
