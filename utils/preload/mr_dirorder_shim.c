/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The sysfs view's device lists in name order, part of metaroce-run's
 * preload shim.
 *
 * Why: libibverbs lists devices in the order readdir() gives the entries
 * of $SYSFS_PATH/class/infiniband_verbs, and programs that are not told a
 * device open the first one (qperf, ibv_rc_pingpong and perftest without
 * -d). The view lives on an ordinary file system (ext4 here), whose
 * readdir order follows a hash of the entry names; the node names carry
 * the namespace (mr_ctl_view.c), so two runs of the same script listed the
 * same devices in different orders, and the two ends of a test could pick
 * different devices (bench/wire/FINDINGS.md 16.1: "Retries exceeded").
 * With the list sorted by device name, as ibv_devices shows mlx5_0 before
 * mlx5_1 on a real host, every program of every run sees the same order.
 *
 * How: opendir() of the view's class/infiniband_verbs or class/infiniband
 * (mr_sysfs_shim.c's opendir calls mr_dirorder_adopt) reads the whole
 * directory at once, sorts it (infiniband_verbs entries by the device name
 * in their ibdev file, class/infiniband entries by name) and serves
 * readdir() from that copy until closedir(). Any other directory goes to
 * libc unchanged. Entries are few (one per device), so a linear list of
 * adopted streams and qsort are enough.
 */
#undef _FILE_OFFSET_BITS
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mr_dirorder_shim.h"

#define MR_EXPORT __attribute__((visibility("default")))

struct sorted_ent {
	struct dirent ent;
	char key[sizeof(((struct dirent *)0)->d_name) + 2]; /* the sort key */
};

struct sorted_dir {
	DIR *dir;
	struct sorted_ent *ents;
	size_t n, pos;
	struct sorted_dir *next;
};

static pthread_mutex_t dirs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct sorted_dir *dirs;

MR_EXPORT struct dirent *readdir(DIR *dir);
MR_EXPORT struct dirent64 *readdir64(DIR *dir);
MR_EXPORT int closedir(DIR *dir);
MR_EXPORT void rewinddir(DIR *dir);

static void *next_sym(void **slot, const char *name)
{
	if (!*slot)
		*slot = dlsym(RTLD_NEXT, name);
	return *slot;
}

static struct dirent *libc_readdir(DIR *dir)
{
	static void *next;
	struct dirent *(*fn)(DIR *) =
		(struct dirent * (*)(DIR *)) next_sym(&next, "readdir");

	return fn ? fn(dir) : NULL;
}

/* An entry's sort key: "." and ".." first, then for an infiniband_verbs
 * entry the device name of its ibdev file (a node whose file cannot be
 * read sorts by its own name, after the devices), else the entry name. */
static void entry_key(int dfd, int verbs, const struct dirent *e,
		      char *key, size_t len)
{
	char path[sizeof(e->d_name) + 8];
	ssize_t n;
	int fd;

	if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) {
		snprintf(key, len, "\001%s", e->d_name);
		return;
	}
	if (verbs) {
		snprintf(path, sizeof(path), "%s/ibdev", e->d_name);
		fd = openat(dfd, path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			n = read(fd, key, len - 1);
			close(fd);
			if (n > 0) {
				key[n] = 0;
				key[strcspn(key, "\n")] = 0;
				if (*key)
					return;
			}
		}
		snprintf(key, len, "\177%s", e->d_name);
		return;
	}
	snprintf(key, len, "%s", e->d_name);
}

static int ent_cmp(const void *a, const void *b)
{
	const struct sorted_ent *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : strcmp(x->ent.d_name, y->ent.d_name);
}

void mr_dirorder_adopt(DIR *dir, const char *path)
{
	const char *view = getenv("SYSFS_PATH");
	struct sorted_dir *sd;
	struct dirent *e;
	size_t vlen, cap = 8;
	int verbs;

	if (!dir || !path || !view || view[0] != '/' || !strcmp(view, "/sys"))
		return;
	vlen = strlen(view);
	while (vlen > 1 && view[vlen - 1] == '/')
		vlen--;
	if (strncmp(path, view, vlen))
		return;
	if (!strcmp(path + vlen, "/class/infiniband_verbs") ||
	    !strcmp(path + vlen, "/class/infiniband_verbs/"))
		verbs = 1;
	else if (!strcmp(path + vlen, "/class/infiniband") ||
		 !strcmp(path + vlen, "/class/infiniband/"))
		verbs = 0;
	else
		return;
	sd = calloc(1, sizeof(*sd));
	if (!sd)
		return;
	sd->ents = malloc(cap * sizeof(*sd->ents));
	if (!sd->ents)
		goto fail;
	while ((e = libc_readdir(dir)) != NULL) {
		if (sd->n == cap) {
			struct sorted_ent *m;

			cap *= 2;
			m = realloc(sd->ents, cap * sizeof(*sd->ents));
			if (!m)
				goto fail;
			sd->ents = m;
		}
		memcpy(&sd->ents[sd->n].ent, e, sizeof(*e));
		entry_key(dirfd(dir), verbs, e, sd->ents[sd->n].key,
			  sizeof(sd->ents[sd->n].key));
		sd->n++;
	}
	qsort(sd->ents, sd->n, sizeof(*sd->ents), ent_cmp);
	sd->dir = dir;
	pthread_mutex_lock(&dirs_lock);
	sd->next = dirs;
	dirs = sd;
	pthread_mutex_unlock(&dirs_lock);
	return;
fail:
	/* Out of memory: the stream is read from the start, unsorted. */
	free(sd->ents);
	free(sd);
	{
		static void *next;
		void (*rw)(DIR *) =
			(void (*)(DIR *))next_sym(&next, "rewinddir");

		if (rw)
			rw(dir);
	}
}

/* Called with dirs_lock held. */
static struct sorted_dir **find(DIR *dir)
{
	struct sorted_dir **p;

	for (p = &dirs; *p; p = &(*p)->next)
		if ((*p)->dir == dir)
			return p;
	return NULL;
}

struct dirent *readdir(DIR *dir)
{
	struct sorted_dir **p;
	struct dirent *e = NULL;

	pthread_mutex_lock(&dirs_lock);
	p = dirs ? find(dir) : NULL;
	if (p) {
		if ((*p)->pos < (*p)->n)
			e = &(*p)->ents[(*p)->pos++].ent;
		pthread_mutex_unlock(&dirs_lock);
		return e;
	}
	pthread_mutex_unlock(&dirs_lock);
	return libc_readdir(dir);
}

/* On the 64-bit ABIs this shim is built for, struct dirent64 and struct
 * dirent are the same layout (glibc makes readdir64 an alias). */
struct dirent64 *readdir64(DIR *dir)
{
	_Static_assert(sizeof(struct dirent) == sizeof(struct dirent64),
		       "dirent64 differs from dirent");
	static void *next;
	struct sorted_dir **p;
	struct dirent64 *(*fn)(DIR *);

	pthread_mutex_lock(&dirs_lock);
	p = dirs ? find(dir) : NULL;
	pthread_mutex_unlock(&dirs_lock);
	if (p)
		return (struct dirent64 *)readdir(dir);
	fn = (struct dirent64 * (*)(DIR *)) next_sym(&next, "readdir64");
	return fn ? fn(dir) : NULL;
}

void rewinddir(DIR *dir)
{
	static void *next;
	struct sorted_dir **p;
	void (*fn)(DIR *);

	pthread_mutex_lock(&dirs_lock);
	p = dirs ? find(dir) : NULL;
	if (p)
		(*p)->pos = 0;
	pthread_mutex_unlock(&dirs_lock);
	if (p)
		return;
	fn = (void (*)(DIR *))next_sym(&next, "rewinddir");
	if (fn)
		fn(dir);
}

int closedir(DIR *dir)
{
	static void *next;
	struct sorted_dir **p, *sd = NULL;
	int (*fn)(DIR *);

	pthread_mutex_lock(&dirs_lock);
	p = dirs ? find(dir) : NULL;
	if (p) {
		sd = *p;
		*p = sd->next;
	}
	pthread_mutex_unlock(&dirs_lock);
	if (sd) {
		free(sd->ents);
		free(sd);
	}
	fn = (int (*)(DIR *))next_sym(&next, "closedir");
	return fn ? fn(dir) : -1;
}
