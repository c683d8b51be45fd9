/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroce-run CMD [ARGS...]: run an unmodified verbs program so that it
 * sees the MetaRoCE devices of its network namespace.
 *
 * - SYSFS_PATH = this namespace's view (mr_netns.h), when one exists and
 *   belongs to this namespace; otherwise the caller's environment is kept,
 *   so the machine's real devices (default /sys) stay visible.
 * - From a build tree (the provider exists at ../providers/metaroce/ next to
 *   this binary's directory) RDMAV_DRIVERS gets the build's provider,
 *   so nothing has to be installed; installed, /etc/libibverbs.d is used.
 * - LD_PRELOAD gains the netlink shim (utils/preload), appended to any
 *   existing LD_PRELOAD, so that libibverbs reads sysfs even on a kernel
 *   with ib_core.
 */
#include "mr_netns.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SHIM_NAME "libmetaroce-netlink.so"
#define PROVIDER_BUILD_REL "/../providers/metaroce/libmetaroce"
#define PROVIDER_SUFFIX "-rdmav34.so"

static void usage(FILE *f)
{
	fprintf(f, "Usage: metaroce-run CMD [ARGS...]\n"
		   "Runs CMD so that libibverbs sees the MetaRoCE devices of "
		   "this network namespace\n"
		   "(SYSFS_PATH, the build tree's provider, the netlink "
		   "shim).\n");
}

static int is_file(const char *p)
{
	struct stat st;

	return !stat(p, &st) && S_ISREG(st.st_mode);
}

/* Directory of this executable, resolved (no symlinks). */
static int self_dir(char *buf, size_t len)
{
	char *slash;
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);

	if (n <= 0 || (size_t)n >= len - 1)
		return -1;
	buf[n] = 0;
	slash = strrchr(buf, '/');
	if (!slash)
		return -1;
	*slash = 0;
	return 0;
}

static int find_shim(const char *dir, char *buf, size_t len)
{
	/* Build tree: <build>/utils/preload/; installed: MR_SHIM_PATH. */
	snprintf(buf, len, "%s/preload/%s", dir, SHIM_NAME);
	if (is_file(buf))
		return 0;
	snprintf(buf, len, "%s", MR_SHIM_PATH);
	return is_file(buf) ? 0 : -1;
}

/* Appends item to the list in variable var (sep-separated) unless there. */
static int env_add(const char *var, const char *item, const char *sep,
		   int prepend)
{
	const char *old = getenv(var);
	char *v;
	int ret;

	if (!old || !*old)
		return setenv(var, item, 1);
	if (strstr(old, item))
		return 0;
	if (prepend)
		ret = asprintf(&v, "%s%s%s", item, sep, old);
	else
		ret = asprintf(&v, "%s%s%s", old, sep, item);
	if (ret < 0)
		return -1;
	ret = setenv(var, v, 1);
	free(v);
	return ret;
}

/* execvp, but with a shell's exit statuses and messages: a directory of
 * PATH this user cannot search is skipped (glibc's execvp would then
 * report EACCES for a command that simply does not exist). */
static int run(char **args)
{
	const char *path = getenv("PATH"), *p, *end;
	int saved = 0;

	if (strchr(args[0], '/')) {
		execv(args[0], args);
		saved = errno;
	} else {
		if (!path || !*path)
			path = "/usr/local/bin:/usr/bin:/bin";
		for (p = path; p; p = *end ? end + 1 : NULL) {
			char file[PATH_MAX];
			size_t n;

			end = strchrnul(p, ':');
			n = (size_t)(end - p);
			if (snprintf(file, sizeof(file), "%.*s%s%s", (int)n, p,
				     n ? "/" : "",
				     args[0]) >= (int)sizeof(file))
				continue;
			if (access(file, F_OK))
				continue;
			execv(file, args);
			if (!saved)
				saved = errno;
		}
		if (!saved)
			saved = ENOENT;
	}
	if (saved == ENOENT) {
		fprintf(stderr, "metaroce-run: %s: command not found\n",
			args[0]);
		return 127;
	}
	fprintf(stderr, "metaroce-run: %s: %s\n", args[0], strerror(saved));
	return 126;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], shim[PATH_MAX + 64], view[PATH_MAX];
	char prov[PATH_MAX + 64], sysfs[PATH_MAX + 8];
	int argi = 1;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		usage(stdout);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "--"))
		argi++;
	if (argi >= argc) {
		fprintf(stderr, "metaroce-run: no command given (usage: "
				"metaroce-run CMD [ARGS...])\n");
		return 127;
	}
	if (self_dir(dir, sizeof(dir))) {
		fprintf(stderr,
			"metaroce-run: cannot resolve /proc/self/exe: "
			"%s\n",
			strerror(errno));
		return 127;
	}
	if (find_shim(dir, shim, sizeof(shim))) {
		fprintf(stderr,
			"metaroce-run: netlink shim %s not found in "
			"%s/preload nor at %s\n",
			SHIM_NAME, dir, MR_SHIM_PATH);
		return 127;
	}
	if (env_add("LD_PRELOAD", shim, ":", 0)) {
		perror("metaroce-run: LD_PRELOAD");
		return 127;
	}

	snprintf(prov, sizeof(prov), "%s" PROVIDER_BUILD_REL PROVIDER_SUFFIX,
		 dir);
	if (is_file(prov)) {
		char abs[PATH_MAX];

		if (!realpath(prov, abs)) {
			perror("metaroce-run: provider path");
			return 127;
		}
		/* libibverbs appends the suffix to absolute entries. */
		abs[strlen(abs) - strlen(PROVIDER_SUFFIX)] = 0;
		if (env_add("RDMAV_DRIVERS", abs, ":", 1)) {
			perror("metaroce-run: RDMAV_DRIVERS");
			return 127;
		}
	}

	if (mrctl_view_dir(view, sizeof(view))) {
		fprintf(stderr, "metaroce-run: network namespace: %s\n",
			strerror(errno));
		return 127;
	}
	if (mrctl_view_current(view) == 1) {
		snprintf(sysfs, sizeof(sysfs), "%s/sysfs", view);
		if (setenv("SYSFS_PATH", sysfs, 1)) {
			perror("metaroce-run: SYSFS_PATH");
			return 127;
		}
	}

	return run(argv + argi);
}
