/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_port.h"
#include "mr_ctl_stats.h"
#include "mr_ctl_view.h"
#include "mr_gid.h"
#include "mr_netns.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* libibverbs keeps "<SYSFS_PATH>/class/infiniband/<dev>" in 256 bytes. */
#define MRCTL_IBV_PATH_MAX 256
#define NODE_MAJOR 1 /* /dev/full: stray kernel commands fail cleanly */
#define NODE_MINOR 7
#define MRCTL_RUNDIR_MAX 512

static void seterr(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
}

/* snprintf for paths. The runtime directory is checked to be short (see
 * mrctl_view_open) and names are at most 255 bytes, so paths fit PATH_MAX;
 * a function keeps the compiler from flagging every call. */
static void pathf(char *buf, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void pathf(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}

static const char *hint(int e)
{
	return e == EPERM || e == EACCES || e == EROFS ? " (run as root)" : "";
}

const char *mrctl_host_sysfs(void)
{
	const char *s = getenv("METAROCE_HOST_SYSFS");

	return s && *s ? s : "/sys";
}

static int rm_one(const char *p, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(p) ? -1 : 0;
}

static int rm_rf(const char *path)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -1;
	return nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int mkdirs(const char *path)
{
	char tmp[PATH_MAX];
	size_t n = strlen(path);

	if (n >= sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	memcpy(tmp, path, n + 1);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, 0755) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(tmp, 0755) && errno != EEXIST)
		return -1;
	return 0;
}

static int exists(const char *path)
{
	struct stat st;

	return !lstat(path, &st);
}

/* Write base/rel (parents created) with printf-formatted content. */
static int put(const char *base, const char *rel, const char *fmt, ...)
{
	char path[PATH_MAX], *slash;
	va_list ap;
	FILE *f;
	int ret;

	pathf(path, sizeof(path), "%s/%s", base, rel);
	slash = strrchr(path, '/');
	*slash = 0;
	if (mkdirs(path))
		return -1;
	*slash = '/';
	f = fopen(path, "wxe");
	if (!f)
		return -1;
	va_start(ap, fmt);
	ret = vfprintf(f, fmt, ap);
	va_end(ap);
	if (fclose(f) || ret < 0)
		return -1;
	return 0;
}

void mrctl_guid_str(const struct mr_devconf *c, char buf[20])
{
	uint64_t g = mr_devconf_node_guid(c->mac);

	snprintf(buf, 20, "%04x:%04x:%04x:%04x", (unsigned)(g >> 48),
		 (unsigned)(g >> 32) & 0xffff, (unsigned)(g >> 16) & 0xffff,
		 (unsigned)g & 0xffff);
}


/* The part of node names that keeps namespaces apart: the netns cookie
 * (never reused, so a stale view's nodes are never a live view's), or the
 * inode on kernels without cookies. */
static void node_prefix(const struct mrctl_view *v, char *buf, size_t len)
{
	uint64_t cookie;

	if (!mrctl_netns_cookie(&cookie))
		snprintf(buf, len, "metaroce-%" PRIu64 "-", cookie);
	else
		snprintf(buf, len, "metaroce-i%lu-", v->ino);
}

static void unlink_node(const char *node)
{
	char path[PATH_MAX];
	struct stat st;

	pathf(path, sizeof(path), MRCTL_DEVDIR "/%s", node);
	if (!lstat(path, &st) && S_ISCHR(st.st_mode))
		unlink(path);
}

static int is_device_dir(const char *sysfs, const char *name)
{
	char path[PATH_MAX];
	struct stat st;

	pathf(path, sizeof(path), "%s/class/infiniband/%s/%s", sysfs, name,
	      MR_DEVCONF_FILE);
	return !lstat(path, &st) && S_ISREG(st.st_mode);
}

/* Drop the view's mirrors of real devices and link them again from the
 * host's sysfs; a MetaRoCE device keeps its name if a real one has it. */
static int refresh_mirrors(const struct mrctl_view *v, char *err, size_t errlen)
{
	static const char *const classes[] = { "infiniband",
					       "infiniband_verbs" };
	char path[PATH_MAX], target[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir;

	for (int i = 0; i < 2; i++) {
		pathf(path, sizeof(path), "%s/class/%s", v->sysfs, classes[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			if (d->d_name[0] == '.' ||
			    fstatat(dirfd(dir), d->d_name, &st,
				    AT_SYMLINK_NOFOLLOW) ||
			    !S_ISLNK(st.st_mode))
				continue;
			unlinkat(dirfd(dir), d->d_name, 0);
		}
		closedir(dir);
	}
	for (int i = 0; i < 2; i++) {
		pathf(path, sizeof(path), "%s/class/%s", mrctl_host_sysfs(),
		      classes[i]);
		dir = opendir(path);
		if (!dir)
			continue;
		while ((d = readdir(dir))) {
			char src[PATH_MAX], dst[PATH_MAX];

			if (d->d_name[0] == '.' ||
			    !strcmp(d->d_name, "abi_version"))
				continue;
			pathf(src, sizeof(src), "%s/%s", path, d->d_name);
			pathf(dst, sizeof(dst), "%s/class/%s/%s", v->sysfs,
			      classes[i], d->d_name);
			if (exists(dst) || !realpath(src, target))
				continue;
			if (symlink(target, dst)) {
				seterr(err, errlen, "cannot link %s: %s", dst,
				       strerror(errno));
				closedir(dir);
				return -1;
			}
		}
		closedir(dir);
	}
	return 0;
}

static int count_devices(const struct mrctl_view *v)
{
	char path[PATH_MAX];
	struct dirent *d;
	int n = 0;
	DIR *dir;

	pathf(path, sizeof(path), "%s/class/infiniband", v->sysfs);
	dir = opendir(path);
	if (!dir)
		return 0;
	while ((d = readdir(dir)))
		if (d->d_name[0] != '.' && is_device_dir(v->sysfs, d->d_name))
			n++;
	closedir(dir);
	return n;
}

/* A dead namespace's view: remove it and the nodes its records name. */
static void purge_stale(const struct mrctl_view *v)
{
	char path[PATH_MAX];
	struct mr_devconf c;
	struct dirent *d;
	DIR *dir;

	pathf(path, sizeof(path), "%s/class/infiniband", v->sysfs);
	dir = opendir(path);
	if (dir) {
		while ((d = readdir(dir))) {
			char rec[PATH_MAX];

			if (d->d_name[0] == '.')
				continue;
			pathf(rec, sizeof(rec), "%s/%s/%s", path, d->d_name,
			      MR_DEVCONF_FILE);
			if (!mr_devconf_read(rec, &c, NULL, 0) && c.uverbs[0])
				unlink_node(c.uverbs);
		}
		closedir(dir);
	}
	rm_rf(v->dir);
}

/* Leftovers of a command that was killed half-way. */
static void remove_stages(const struct mrctl_view *v)
{
	struct dirent *d;
	DIR *dir = opendir(v->dir);

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		char path[PATH_MAX];

		if (strncmp(d->d_name, ".stage-", 7))
			continue;
		pathf(path, sizeof(path), "%s/%s", v->dir, d->d_name);
		rm_rf(path);
	}
	closedir(dir);
}

int mrctl_view_open(struct mrctl_view *v, int lock, char *err, size_t errlen)
{
	const char *rundir = mrctl_rundir();

	memset(v, 0, sizeof(*v));
	v->lock_fd = -1;
	if (mrctl_netns_ino(&v->ino)) {
		seterr(err, errlen, "cannot read /proc/self/ns/net: %s",
		       strerror(errno));
		return -1;
	}
	/* libibverbs's own limit is 256 for the whole device path. */
	if (strlen(rundir) > MRCTL_RUNDIR_MAX ||
	    mrctl_view_dir(v->dir, sizeof(v->dir))) {
		seterr(err, errlen,
		       "runtime directory path too long (more "
		       "than %d bytes): %s",
		       MRCTL_RUNDIR_MAX, rundir);
		return -1;
	}
	pathf(v->sysfs, sizeof(v->sysfs), "%s/sysfs", v->dir);
	if (!lock)
		return 0;
	if (!exists(rundir)) {
		if (lock != MRCTL_LOCK_CREATE)
			return 0; /* nothing to lock: no view either */
		if (mkdirs(rundir)) {
			seterr(err, errlen, "cannot create %s: %s%s", rundir,
			       strerror(errno), hint(errno));
			return -1;
		}
		v->made_rundir = 1;
	}
	v->lock_fd = open(rundir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (v->lock_fd < 0 || flock(v->lock_fd, LOCK_EX)) {
		seterr(err, errlen, "cannot lock %s: %s%s", rundir,
		       strerror(errno), hint(errno));
		mrctl_view_close(v);
		return -1;
	}
	if (mrctl_view_current(v->dir) == 0)
		purge_stale(v);
	remove_stages(v);
	return 0;
}

void mrctl_view_close(struct mrctl_view *v)
{
	if (v->lock_fd >= 0)
		close(v->lock_fd); /* releases the flock */
	v->lock_fd = -1;
	/* A command that created the runtime directory and then failed
	 * leaves no trace; rmdir fails harmlessly if a view is in it. */
	if (v->made_rundir)
		rmdir(mrctl_rundir());
	v->made_rundir = 0;
}

/* The view's skeleton: directories, cookie, global abi_version. */
static int make_skeleton(const struct mrctl_view *v, char *err, size_t errlen)
{
	char path[PATH_MAX], abi[16];
	uint64_t cookie;

	pathf(path, sizeof(path), "%s/class/infiniband", v->sysfs);
	if (mkdirs(path))
		goto fail;
	pathf(path, sizeof(path), "%s/class/infiniband_verbs", v->sysfs);
	if (mkdirs(path))
		goto fail;
	pathf(path, sizeof(path), "%s/%s", v->dir, MRCTL_COOKIE_FILE);
	if (!exists(path) && !mrctl_netns_cookie(&cookie) &&
	    put(v->dir, MRCTL_COOKIE_FILE, "%" PRIu64 "\n", cookie))
		goto fail;
	pathf(path, sizeof(path), "%s/class/infiniband_verbs/abi_version",
	      v->sysfs);
	if (!exists(path)) {
		char host[PATH_MAX];

		/* Real devices in the view need the kernel's value. */
		pathf(host, sizeof(host),
		      "%s/class/infiniband_verbs/abi_version",
		      mrctl_host_sysfs());
		if (mr_devconf_read_line(host, abi, sizeof(abi)) || !abi[0])
			snprintf(abi, sizeof(abi), "%d", MRCTL_VERBS_ABI);
		if (put(v->sysfs, "class/infiniband_verbs/abi_version", "%s\n",
			abi))
			goto fail;
	}
	return 0;
fail:
	seterr(err, errlen, "cannot create %s: %s%s", path, strerror(errno),
	       hint(errno));
	return -1;
}

/* The port's LID, as the provider's query_port gives it: the host part
 * of the device's address in its subnet when that is a unicast LID
 * (providers/metaroce/xlate.h, metaroce_port_lid), else 0. */
static unsigned view_lid(const struct mr_devconf *c)
{
	uint32_t hm = c->prefix >= 32 ? 0 : 0xffffffffu >> c->prefix;
	uint32_t host = c->ip & hm;

	return host && host != hm && host <= 0xbfff ? host : 0;
}

/* The kernel netdev a GID of the device is on, as the kernel writes
 * gid_attrs/ndevs/N: the interface of the first port that drives one of
 * this namespace (af_packet, af_xdp: iface=). "" when no port does (PCI
 * ports: the NIC is DPDK's, no netdev has the address). */
static void view_ndev(const struct mr_devconf *c, char ndev[IF_NAMESIZE])
{
	struct mrctl_port p;
	char err[160];

	ndev[0] = 0;
	for (unsigned i = 0; i < c->nports; i++)
		if (!mrctl_port_parse(c->ports[i], &p, err, sizeof(err)) &&
		    p.iface_exists) {
			memcpy(ndev, p.iface, IF_NAMESIZE);
			return;
		}
}

/* Build the device's sysfs directory in d (does not exist yet). */
static int build_device(const char *d, const struct mr_devconf *c)
{
	char guid[20], gid[40], path[PATH_MAX], ndev[IF_NAMESIZE];
	struct mr_gid gids[MR_GID_MAX];
	unsigned n;
	FILE *f;
	int ret;

	mrctl_guid_str(c, guid);
	view_ndev(c, ndev);
	/* The GID table in the one order the provider and the datapath
	 * use (lib/devconf/mr_gid.h, routing.md MR-ADDR-1): every GID is
	 * one the datapath sends from and receives on, all RoCE v2, on the
	 * port's netdev (libibverbs' ibv_query_gid_ex and UCX read
	 * gid_attrs/ndevs: the kernel's netdev name). */
	n = mr_gid_table(c, gids);
	for (unsigned i = 0; i < n; i++) {
		char name[48];

		mr_gid_sysfs(gids[i].raw, gid);
		snprintf(name, sizeof(name), "ports/1/gids/%u", i);
		if (put(d, name, "%s\n", gid))
			return -1;
		snprintf(name, sizeof(name), "ports/1/gid_attrs/types/%u", i);
		if (put(d, name, "RoCE v2\n"))
			return -1;
		snprintf(name, sizeof(name), "ports/1/gid_attrs/ndevs/%u", i);
		if (ndev[0] && put(d, name, "%s\n", ndev))
			return -1;
	}
	if (put(d, "node_type", "1: CA\n") ||
	    put(d, "node_guid", "%s\n", guid) ||
	    put(d, "sys_image_guid", "%s\n", guid) ||
	    put(d, "node_desc", "MetaRoCE %s\n", c->name) ||
	    put(d, "fw_ver", "%s\n", MR_VERSION) ||
	    put(d, "hca_type", "MetaRoCE\n") ||
	    put(d, "ports/1/state", "4: ACTIVE\n") ||
	    put(d, "ports/1/phys_state", "5: LinkUp\n") ||
	    put(d, "ports/1/link_layer", "Ethernet\n") ||
	    put(d, "ports/1/rate", "100 Gb/sec (4X EDR)\n") ||
	    put(d, "ports/1/lid", "0x%x\n", view_lid(c)) ||
	    put(d, "ports/1/sm_lid", "0x0\n") ||
	    put(d, "ports/1/lid_mask_count", "0\n") ||
	    put(d, "ports/1/sm_sl", "0\n") ||
	    put(d, "ports/1/pkeys/0", "0xffff\n"))
		return -1;
	/* Where every process using the device writes its counters
	 * (metaroce.stats.<pid>, mr_ctl_stats.h): programs of any user, so
	 * world-writable, sticky so that none can remove another's. chmod:
	 * mkdir's mode passes through the umask. */
	pathf(path, sizeof(path), "%s/%s", d, MRCTL_STATS_DIR);
	if (mkdir(path, 0755) || chmod(path, 01777))
		return -1;
	pathf(path, sizeof(path), "%s/%s", d, MR_DEVCONF_FILE);
	f = fopen(path, "wxe");
	if (!f)
		return -1;
	ret = mr_devconf_write(f, c);
	if (fclose(f) || ret)
		return -1;
	return 0;
}

/* Create the lowest free /dev/infiniband/<prefix><n>; name into c. */
static int make_node(const struct mrctl_view *v, struct mr_devconf *c,
		     int *made_devdir, char *err, size_t errlen)
{
	char prefix[48], path[PATH_MAX];

	node_prefix(v, prefix, sizeof(prefix));
	if (mkdir(MRCTL_DEVDIR, 0755) == 0)
		*made_devdir = 1;
	else if (errno != EEXIST)
		goto fail_dir;
	for (unsigned n = 0; n < 1000; n++) {
		snprintf(c->uverbs, sizeof(c->uverbs), "%s%u", prefix, n);
		pathf(path, sizeof(path), "%s/class/infiniband_verbs/%s",
		      v->sysfs, c->uverbs);
		if (exists(path))
			continue;
		pathf(path, sizeof(path), MRCTL_DEVDIR "/%s", c->uverbs);
		if (mknod(path, S_IFCHR | 0666,
			  makedev(NODE_MAJOR, NODE_MINOR))) {
			if (errno == EEXIST)
				continue;
			seterr(err, errlen, "cannot create %s: %s%s", path,
			       strerror(errno), hint(errno));
			c->uverbs[0] = 0;
			return -1;
		}
		/* The node is what every verbs user opens: not the umask's. */
		if (chmod(path, 0666)) {
			seterr(err, errlen, "chmod %s: %s", path,
			       strerror(errno));
			unlink(path);
			c->uverbs[0] = 0;
			return -1;
		}
		return 0;
	}
	seterr(err, errlen, "no free node name %s<n> in " MRCTL_DEVDIR, prefix);
	c->uverbs[0] = 0;
	return -1;
fail_dir:
	seterr(err, errlen, "cannot create " MRCTL_DEVDIR ": %s%s",
	       strerror(errno), hint(errno));
	return -1;
}

static int check_free(struct mrctl_view *v, const struct mr_devconf *c,
		      char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct mr_devconf *all;
	struct stat st;
	unsigned n;

	pathf(path, sizeof(path), "%s/class/infiniband/%s", v->sysfs, c->name);
	if (!lstat(path, &st)) {
		seterr(err, errlen, "device %s already exists%s", c->name,
		       S_ISLNK(st.st_mode) ? " (a real RDMA device)" : "");
		return -1;
	}
	pathf(path, sizeof(path), "%s/class/infiniband/%s", mrctl_host_sysfs(),
	      c->name);
	if (!lstat(path, &st)) {
		seterr(err, errlen, "name %s is in use by a real RDMA device",
		       c->name);
		return -1;
	}
	if (mrctl_view_list(v, NULL, &all, &n, err, errlen))
		return -1;
	for (unsigned i = 0; i < n; i++) {
		if (all[i].ip == c->ip) {
			seterr(err, errlen,
			       "address %u.%u.%u.%u is in use by "
			       "device %s",
			       c->ip >> 24, (c->ip >> 16) & 255,
			       (c->ip >> 8) & 255, c->ip & 255, all[i].name);
			free(all);
			return -1;
		}
		if (c->has_ip6 && all[i].has_ip6 &&
		    !memcmp(all[i].ip6, c->ip6, 16)) {
			char a[46];

			mr_devconf_ip6_str(c->ip6, a);
			seterr(err, errlen, "address %s is in use by device %s",
			       a, all[i].name);
			free(all);
			return -1;
		}
		if (!memcmp(all[i].mac, c->mac, 6)) {
			seterr(err, errlen,
			       "MAC %02x:%02x:%02x:%02x:%02x:%02x "
			       "is in use by device %s (give --mac)",
			       c->mac[0], c->mac[1], c->mac[2], c->mac[3],
			       c->mac[4], c->mac[5], all[i].name);
			free(all);
			return -1;
		}
	}
	free(all);
	return 0;
}

int mrctl_view_add(struct mrctl_view *v, struct mr_devconf *c, char *err,
		   size_t errlen)
{
	char stage[PATH_MAX], sdev[PATH_MAX], sverbs[PATH_MAX];
	char ddev[PATH_MAX], dverbs[PATH_MAX];
	int made_devdir = 0, dev_in = 0, verbs_in = 0;

	if (strlen(v->sysfs) + strlen("/class/infiniband/") + strlen(c->name) >=
	    MRCTL_IBV_PATH_MAX) {
		seterr(err, errlen,
		       "%s/class/infiniband/%s is longer than "
		       "libibverbs accepts (%d bytes): use a shorter "
		       "METAROCE_RUNDIR",
		       v->sysfs, c->name, MRCTL_IBV_PATH_MAX - 1);
		return -1;
	}
	if (faccessat(AT_FDCWD, exists(MRCTL_DEVDIR) ? MRCTL_DEVDIR : "/dev",
		      W_OK | X_OK, AT_EACCESS)) {
		seterr(err, errlen,
		       "cannot create nodes in " MRCTL_DEVDIR ": %s%s",
		       strerror(errno), hint(errno));
		return -1;
	}
	if (check_free(v, c, err, errlen))
		return -1;
	c->uverbs[0] = 0;
	pathf(stage, sizeof(stage), "%s/.stage-%d", v->dir, (int)getpid());
	pathf(sdev, sizeof(sdev), "%s/dev", stage);
	pathf(sverbs, sizeof(sverbs), "%s/verbs", stage);
	pathf(ddev, sizeof(ddev), "%s/class/infiniband/%s", v->sysfs, c->name);

	if (make_skeleton(v, err, errlen))
		goto undo;
	if (mkdir(stage, 0755)) {
		seterr(err, errlen, "cannot create %s: %s%s", stage,
		       strerror(errno), hint(errno));
		goto undo;
	}
	if (make_node(v, c, &made_devdir, err, errlen))
		goto undo;
	pathf(dverbs, sizeof(dverbs), "%s/class/infiniband_verbs/%s", v->sysfs,
	      c->uverbs);
	if (build_device(sdev, c) || put(sverbs, "ibdev", "%s\n", c->name) ||
	    put(sverbs, "dev", "%d:%d\n", NODE_MAJOR, NODE_MINOR) ||
	    put(sverbs, "abi_version", "%d\n", MRCTL_UVERBS_ABI)) {
		seterr(err, errlen, "cannot write the view in %s: %s", stage,
		       strerror(errno));
		goto undo;
	}
	if (refresh_mirrors(v, err, errlen))
		goto undo;
	/* The device directory first: libibverbs lists a device only once
	 * its infiniband_verbs entry exists, so it never sees half of one. */
	if (rename(sdev, ddev)) {
		seterr(err, errlen, "cannot create %s: %s", ddev,
		       strerror(errno));
		goto undo;
	}
	dev_in = 1;
	if (rename(sverbs, dverbs)) {
		seterr(err, errlen, "cannot create %s: %s", dverbs,
		       strerror(errno));
		goto undo;
	}
	verbs_in = 1;
	rm_rf(stage);
	return 0;

undo:
	if (verbs_in)
		rm_rf(dverbs);
	if (dev_in)
		rm_rf(ddev);
	rm_rf(stage);
	if (c->uverbs[0])
		unlink_node(c->uverbs);
	if (made_devdir)
		rmdir(MRCTL_DEVDIR);
	if (!count_devices(v))
		rm_rf(v->dir);
	c->uverbs[0] = 0;
	return -1;
}

/* The infiniband_verbs entry (ours: a directory) whose ibdev is name. */
static int find_verbs_entry(const struct mrctl_view *v, const char *name,
			    char *node, size_t len)
{
	char path[PATH_MAX], line[128];
	struct dirent *d;
	struct stat st;
	DIR *dir;
	int found = -1;

	pathf(path, sizeof(path), "%s/class/infiniband_verbs", v->sysfs);
	dir = opendir(path);
	if (!dir)
		return -1;
	while (found && (d = readdir(dir))) {
		char ibdev[PATH_MAX];

		if (d->d_name[0] == '.' ||
		    fstatat(dirfd(dir), d->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISDIR(st.st_mode))
			continue;
		pathf(ibdev, sizeof(ibdev), "%s/%s/ibdev", path, d->d_name);
		if (!mr_devconf_read_line(ibdev, line, sizeof(line)) &&
		    !strcmp(line, name) && strlen(d->d_name) < len) {
			strcpy(node, d->d_name);
			found = 0;
		}
	}
	closedir(dir);
	return found;
}

int mrctl_view_del(struct mrctl_view *v, const char *name, char *err,
		   size_t errlen)
{
	char ddev[PATH_MAX], dverbs[PATH_MAX], stage[PATH_MAX];
	char sdev[PATH_MAX], sverbs[PATH_MAX], node[MR_DEVCONF_NAME_MAX];
	struct stat st;
	int have_verbs;

	pathf(ddev, sizeof(ddev), "%s/class/infiniband/%s", v->sysfs, name);
	if (lstat(ddev, &st) || mrctl_view_current(v->dir) != 1) {
		seterr(err, errlen,
		       "no MetaRoCE device %s in this network namespace", name);
		return -1;
	}
	if (!is_device_dir(v->sysfs, name)) {
		seterr(err, errlen,
		       "%s is a real RDMA device, not a MetaRoCE "
		       "device",
		       name);
		return -1;
	}
	if (faccessat(AT_FDCWD, v->sysfs, W_OK | X_OK, AT_EACCESS) ||
	    (exists(MRCTL_DEVDIR) &&
	     faccessat(AT_FDCWD, MRCTL_DEVDIR, W_OK | X_OK, AT_EACCESS))) {
		seterr(err, errlen, "cannot remove %s: %s%s", name,
		       strerror(errno), hint(errno));
		return -1;
	}
	have_verbs = !find_verbs_entry(v, name, node, sizeof(node));
	pathf(stage, sizeof(stage), "%s/.stage-%d", v->dir, (int)getpid());
	pathf(sdev, sizeof(sdev), "%s/dev", stage);
	pathf(sverbs, sizeof(sverbs), "%s/verbs", stage);
	if (mkdir(stage, 0755)) {
		seterr(err, errlen, "cannot create %s: %s%s", stage,
		       strerror(errno), hint(errno));
		return -1;
	}
	/* Reverse order of add: invisible to libibverbs first. */
	if (have_verbs) {
		pathf(dverbs, sizeof(dverbs), "%s/class/infiniband_verbs/%s",
		      v->sysfs, node);
		if (rename(dverbs, sverbs)) {
			seterr(err, errlen, "cannot remove %s: %s", dverbs,
			       strerror(errno));
			rm_rf(stage);
			return -1;
		}
	}
	if (rename(ddev, sdev)) {
		seterr(err, errlen, "cannot remove %s: %s", ddev,
		       strerror(errno));
		if (have_verbs)
			rename(sverbs, dverbs);
		rm_rf(stage);
		return -1;
	}
	if (have_verbs)
		unlink_node(node);
	rm_rf(stage);
	if (!count_devices(v)) {
		rm_rf(v->dir);
		rmdir(MRCTL_DEVDIR); /* only if empty: real nodes stay */
		return 0;
	}
	return refresh_mirrors(v, err, errlen);
}

static int cmp_conf(const void *a, const void *b)
{
	return strcmp(((const struct mr_devconf *)a)->name,
		      ((const struct mr_devconf *)b)->name);
}

int mrctl_view_set_opts(struct mrctl_view *v, const char *name,
			const struct mr_knob_set *set, uint64_t unset,
			char *err, size_t errlen)
{
	char rec[PATH_MAX], tmp[PATH_MAX];
	struct mr_devconf c;
	FILE *f;
	int ret;

	if (!is_device_dir(v->sysfs, name)) {
		seterr(err, errlen,
		       "no MetaRoCE device %s in this network namespace", name);
		return -1;
	}
	pathf(rec, sizeof(rec), "%s/class/infiniband/%s/%s", v->sysfs, name,
	      MR_DEVCONF_FILE);
	if (mr_devconf_read(rec, &c, err, errlen))
		return -1;
	c.opts.mask &= ~unset;
	for (int i = 0; i < MR_KNOBS_N; i++)
		if (set->mask & (1ull << i))
			c.opts.v[i] = set->v[i];
	c.opts.mask |= set->mask;
	pathf(tmp, sizeof(tmp), "%s.tmp-%d", rec, (int)getpid());
	f = fopen(tmp, "wxe");
	if (!f) {
		seterr(err, errlen, "cannot write %s: %s%s", tmp,
		       strerror(errno), hint(errno));
		return -1;
	}
	ret = mr_devconf_write(f, &c);
	if (fclose(f) || ret || rename(tmp, rec)) {
		seterr(err, errlen, "cannot write %s: %s", rec,
		       strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int mrctl_view_list(struct mrctl_view *v, const char *name,
		    struct mr_devconf **out, unsigned *n, char *err,
		    size_t errlen)
{
	char path[PATH_MAX];
	struct mr_devconf *all = NULL;
	unsigned cnt = 0, cap = 0;
	struct dirent *d;
	DIR *dir = NULL;

	*out = NULL;
	*n = 0;
	pathf(path, sizeof(path), "%s/class/infiniband", v->sysfs);
	if (mrctl_view_current(v->dir) == 1)
		dir = opendir(path);
	while (dir && (d = readdir(dir))) {
		char rec[PATH_MAX];

		if (d->d_name[0] == '.' || (name && strcmp(name, d->d_name)) ||
		    !is_device_dir(v->sysfs, d->d_name))
			continue;
		if (cnt == cap) {
			struct mr_devconf *p;

			cap = cap ? 2 * cap : 4;
			p = realloc(all, cap * sizeof(*all));
			if (!p) {
				seterr(err, errlen, "out of memory");
				goto fail;
			}
			all = p;
		}
		pathf(rec, sizeof(rec), "%s/%s/%s", path, d->d_name,
		      MR_DEVCONF_FILE);
		if (mr_devconf_read(rec, &all[cnt], err, errlen))
			goto fail;
		cnt++;
	}
	if (dir)
		closedir(dir);
	if (name && !cnt) {
		seterr(err, errlen,
		       "no MetaRoCE device %s in this network namespace", name);
		free(all);
		return -1;
	}
	if (cnt)
		qsort(all, cnt, sizeof(*all), cmp_conf);
	*out = all;
	*n = cnt;
	return 0;
fail:
	closedir(dir);
	free(all);
	return -1;
}
