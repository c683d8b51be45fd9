/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * /sys/class/infiniband for programs that read it directly, part of
 * metaroce-run's preload shim. libibverbs finds our devices in the sysfs
 * view because it honours SYSFS_PATH; many verbs programs do not, and open
 * /sys/class/infiniband/<dev>/... themselves: UCX reads
 * ports/<p>/gid_attrs/types/<i> to tell RoCE v1 from v2 (and assumed v1
 * when the file was missing), NCCL and others pick their GID the same way.
 * Without a kernel those files exist only in the view.
 *
 * So a path under /sys/class/infiniband/<dev> is opened in the view
 * ($SYSFS_PATH/class/infiniband/<dev>/...) when <dev> is a MetaRoCE device
 * there (its directory holds metaroce.conf); /sys/class/infiniband itself
 * is the view's list when the view has one, as libibverbs sees it. Any
 * other path, and every path when SYSFS_PATH is unset or /sys, goes to the
 * real file system unchanged.
 *
 * Covered calls: what programs use to read such files (open, openat and
 * their 64-bit and fortified forms, fopen, opendir, access, stat, lstat).
 * A path reached another way (a relative path, realpath, readlink, a
 * directory fd) sees the real /sys; so does a binary built before glibc
 * 2.33 that calls __xstat for stat.
 */
/* Our definitions must carry libc's plain names and signatures: no
 * large-file renaming, no fortify inline wrappers. */
#undef _FILE_OFFSET_BITS
#undef _FORTIFY_SOURCE
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mr_dirorder_shim.h"

#define MR_EXPORT __attribute__((visibility("default")))

#define IB_CLASS "/sys/class/infiniband"

/* The view's path for a /sys/class/infiniband path, or path itself. buf
 * holds the result (PATH_MAX bytes). Uses raw syscalls: the library's own
 * entry points are the ones interposed here. */
static const char *map(const char *path, char *buf)
{
	const char *view, *rest, *dev_end;
	char probe[PATH_MAX];
	int n;

	if (!path || strncmp(path, IB_CLASS, sizeof(IB_CLASS) - 1))
		return path;
	rest = path + sizeof(IB_CLASS) - 1;
	if (*rest && *rest != '/')
		return path; /* infiniband_verbs, infiniband_mad, ... */
	view = getenv("SYSFS_PATH");
	if (!view || !*view || !strcmp(view, "/sys") || view[0] != '/')
		return path;
	while (*rest == '/' && rest[1] == '/')
		rest++;
	if (!*rest || !rest[1]) {
		/* The class directory: the view's list of devices. */
		n = snprintf(probe, sizeof(probe), "%s/class/infiniband", view);
	} else {
		dev_end = strchrnul(rest + 1, '/');
		n = snprintf(probe, sizeof(probe),
			     "%s/class/infiniband/%.*s/metaroce.conf", view,
			     (int)(dev_end - rest - 1), rest + 1);
	}
	if (n < 0 || n >= (int)sizeof(probe) ||
	    syscall(SYS_faccessat, AT_FDCWD, probe, F_OK) != 0)
		return path;
	n = snprintf(buf, PATH_MAX, "%s/class/infiniband%s", view, rest);
	if (n < 0 || n >= PATH_MAX)
		return path;
	return buf;
}

/* The next definition of a symbol (libc's). */
#define NEXT(fn, type)                                   \
	static type next_##fn;                           \
	if (!next_##fn)                                  \
		next_##fn = (type)dlsym(RTLD_NEXT, #fn); \
	if (!next_##fn) {                                \
		errno = ENOSYS;                          \
		return -1;                               \
	}

/* Only O_CREAT and O_TMPFILE open() calls carry a mode. */
#define GET_MODE(flags, mode)                             \
	do {                                              \
		va_list ap;                               \
		(mode) = 0;                               \
		if ((flags) & (O_CREAT | O_TMPFILE)) {    \
			va_start(ap, flags);              \
			(mode) = (mode_t)va_arg(ap, int); \
			va_end(ap);                       \
		}                                         \
	} while (0)

MR_EXPORT int open(const char *path, int flags, ...);
MR_EXPORT int open64(const char *path, int flags, ...);
MR_EXPORT int openat(int dirfd, const char *path, int flags, ...);
MR_EXPORT int openat64(int dirfd, const char *path, int flags, ...);
MR_EXPORT int __open_2(const char *path, int flags);
MR_EXPORT int __open64_2(const char *path, int flags);
MR_EXPORT int __openat_2(int dirfd, const char *path, int flags);
MR_EXPORT int __openat64_2(int dirfd, const char *path, int flags);
MR_EXPORT FILE *fopen(const char *path, const char *mode);
MR_EXPORT FILE *fopen64(const char *path, const char *mode);
MR_EXPORT DIR *opendir(const char *path);
MR_EXPORT int access(const char *path, int amode);
MR_EXPORT int stat(const char *path, struct stat *st);
MR_EXPORT int lstat(const char *path, struct stat *st);

typedef int (*open_fn)(const char *, int, ...);
typedef int (*openat_fn)(int, const char *, int, ...);
typedef int (*open2_fn)(const char *, int);
typedef int (*openat2_fn)(int, const char *, int);
typedef int (*access_fn)(const char *, int);
typedef int (*stat_fn)(const char *, struct stat *);

int open(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode;

	GET_MODE(flags, mode);
	NEXT(open, open_fn);
	return next_open(map(path, buf), flags, mode);
}

int open64(const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode;

	GET_MODE(flags, mode);
	NEXT(open64, open_fn);
	return next_open64(map(path, buf), flags, mode);
}

int openat(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode;

	GET_MODE(flags, mode);
	NEXT(openat, openat_fn);
	return next_openat(dirfd, map(path, buf), flags, mode);
}

int openat64(int dirfd, const char *path, int flags, ...)
{
	char buf[PATH_MAX];
	mode_t mode;

	GET_MODE(flags, mode);
	NEXT(openat64, openat_fn);
	return next_openat64(dirfd, map(path, buf), flags, mode);
}

int __open_2(const char *path, int flags)
{
	char buf[PATH_MAX];

	NEXT(__open_2, open2_fn);
	return next___open_2(map(path, buf), flags);
}

int __open64_2(const char *path, int flags)
{
	char buf[PATH_MAX];

	NEXT(__open64_2, open2_fn);
	return next___open64_2(map(path, buf), flags);
}

int __openat_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];

	NEXT(__openat_2, openat2_fn);
	return next___openat_2(dirfd, map(path, buf), flags);
}

int __openat64_2(int dirfd, const char *path, int flags)
{
	char buf[PATH_MAX];

	NEXT(__openat64_2, openat2_fn);
	return next___openat64_2(dirfd, map(path, buf), flags);
}

int access(const char *path, int amode)
{
	char buf[PATH_MAX];

	NEXT(access, access_fn);
	return next_access(map(path, buf), amode);
}

int stat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	NEXT(stat, stat_fn);
	return next_stat(map(path, buf), st);
}

int lstat(const char *path, struct stat *st)
{
	char buf[PATH_MAX];

	NEXT(lstat, stat_fn);
	return next_lstat(map(path, buf), st);
}

/* The pointer-returning ones cannot use NEXT (it returns -1). */
static void *next_sym(void **cache, const char *name)
{
	if (!*cache)
		*cache = dlsym(RTLD_NEXT, name);
	if (!*cache)
		errno = ENOSYS;
	return *cache;
}

FILE *fopen(const char *path, const char *mode)
{
	static void *next;
	char buf[PATH_MAX];
	FILE *(*fn)(const char *, const char *);

	fn = (FILE * (*)(const char *, const char *)) next_sym(&next, "fopen");
	return fn ? fn(map(path, buf), mode) : NULL;
}

FILE *fopen64(const char *path, const char *mode)
{
	static void *next;
	char buf[PATH_MAX];
	FILE *(*fn)(const char *, const char *);

	fn = (FILE * (*)(const char *, const char *))
		next_sym(&next, "fopen64");
	return fn ? fn(map(path, buf), mode) : NULL;
}

DIR *opendir(const char *path)
{
	static void *next;
	char buf[PATH_MAX];
	DIR *(*fn)(const char *);

	const char *real;
	DIR *dir;

	fn = (DIR * (*)(const char *)) next_sym(&next, "opendir");
	if (!fn)
		return NULL;
	real = map(path, buf);
	dir = fn(real);
	mr_dirorder_adopt(dir, real);
	return dir;
}
