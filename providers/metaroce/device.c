// SPDX-License-Identifier: BSD-2-Clause
/*
 * Registration with libibverbs and device matching.
 *
 * Which devices are ours: libibverbs hands every provider each rdma device
 * it found (in sysfs mode: $SYSFS_PATH/class/infiniband/<name>). We have no
 * match table at all - no PCI id, modalias or driver id that another
 * provider could also claim, and no name pattern, so a device may be named
 * anything - and decide in match_device() on the presence of our device
 * record, <ibdev_path>/metaroce.conf, which only metaroce-ctl writes.
 * Other providers do not claim such a device either: it has no
 * device/modalias and no driver id in sysfs mode; only rxe's name pattern
 * ("rxe*") could take a device whose name starts with "rxe".
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "metaroce.h"
#include "mrdp_addr.h"

/* <ibdev_path>/metaroce.conf into path; false if it does not fit. */
static bool conf_path(const struct verbs_sysfs_dev *sd, char *path, size_t size)
{
	int n = snprintf(path, size, "%s/%s", sd->ibdev_path, MR_DEVCONF_FILE);

	return n > 0 && (size_t)n < size;
}

/* Read and check the record of a device; 0, or -1 after saying why on
 * stderr (quiet = say nothing, when the record is simply absent). */
static int read_record(const struct verbs_sysfs_dev *sd, struct mr_devconf *c,
		       bool quiet_if_absent)
{
	char path[IBV_SYSFS_PATH_MAX + sizeof(MR_DEVCONF_FILE) + 1];
	char err[256];

	if (!conf_path(sd, path, sizeof(path)))
		return -1;
	if (quiet_if_absent && access(path, F_OK) != 0)
		return -1;
	if (mr_devconf_read(path, c, err, sizeof(err))) {
		fprintf(stderr, "metaroce: %s\n", err); /* err names path */
		return -1;
	}
	if (strcmp(c->name, sd->ibdev_name) != 0) {
		fprintf(stderr,
			"metaroce: %s: record is for device '%s', not '%s'\n",
			path, c->name, sd->ibdev_name);
		return -1;
	}
	return 0;
}

/*
 * libibverbs without a kernel reads the GIDs from the view (ibv_query_gid),
 * the provider serves the table it computes from the record: a view made
 * before that table changed (GID 0 became the link-local address,
 * routing.md MR-ADDR-1) lists other GIDs at the same indexes, and every
 * QP or AH addressed by index would be refused. Refuse the device
 * instead, once, saying how to mend it. 0, or -1 after saying why.
 */
static int check_view_gids(const struct verbs_sysfs_dev *sd,
			   const struct mr_devconf *c)
{
	char why[160];

	if (!mr_gid_view_check(sd->ibdev_path, c, why, sizeof(why)))
		return 0;
	fprintf(stderr,
		"metaroce: %s: the view's GID table (%s/ports/1/gids) is not "
		"the device's: %s. The device was made by an older "
		"metaroce-ctl: recreate it (note its options with "
		"'metaroce-ctl link show -v %s', then 'metaroce-ctl link del "
		"%s' and 'metaroce-ctl link add %s ...')\n",
		sd->ibdev_name, sd->ibdev_path, why, sd->ibdev_name,
		sd->ibdev_name, sd->ibdev_name);
	return -1;
}

static bool metaroce_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct mr_devconf c;

	if (read_record(sysfs_dev, &c, true))
		return false;
	metaroce_dbg("%s: matched (%s)", sysfs_dev->ibdev_name,
		     sysfs_dev->ibdev_path);
	return true;
}

static struct verbs_device *
metaroce_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct metaroce_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;
	/* Read again: the record may have changed since match_device, and
	 * what we keep must be what we checked. */
	if (read_record(sysfs_dev, &dev->conf, false)) {
		free(dev);
		errno = EINVAL;
		return NULL;
	}
	dev->gids.n = mr_gid_table(&dev->conf, dev->gids.gid);
	if (check_view_gids(sysfs_dev, &dev->conf)) {
		free(dev);
		errno = EINVAL;
		return NULL;
	}
	dev->gids.book = mrdp_addrs_new();
	if (!dev->gids.book) {
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	if (metaroce_mrt_init(&dev->mrt, METAROCE_MAX_MR)) {
		mrdp_addrs_free(dev->gids.book);
		free(dev);
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_init(&dev->eng_lock, NULL);
	dev->next_pdn = 1;
	snprintf(dev->ibdev_path, sizeof(dev->ibdev_path), "%s",
		 sysfs_dev->ibdev_path);
	/* We honour (by ignoring) the optional access bits; without this
	 * libibverbs strips IBV_ACCESS_RELAXED_ORDERING before reg_mr. */
	dev->vdev.core_support = IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS;
	return &dev->vdev;
}

/* libibverbs calls this once no context is open and the device has left
 * its list, so no engine is open any more. */
static void metaroce_uninit_device(struct verbs_device *vdev)
{
	struct metaroce_device *dev = to_mdev(&vdev->device);

	metaroce_mrt_fini(&dev->mrt);
	mrdp_addrs_free(dev->gids.book);
	pthread_mutex_destroy(&dev->eng_lock);
	free(dev);
}

static const struct verbs_device_ops metaroce_dev_ops = {
	.name = "metaroce",
	/* The uverbs abi_version file of our view may be absent (0) or say
	 * anything: no kernel ABI is spoken. */
	.match_min_abi_version = 0,
	.match_max_abi_version = INT32_MAX,
	.match_table = NULL,
	.match_device = metaroce_match_device,
	.alloc_device = metaroce_alloc_device,
	.uninit_device = metaroce_uninit_device,
	.alloc_context = metaroce_alloc_context,
};

/* As in-tree providers do: register when libibverbs dlopen()s us. */
__attribute__((constructor)) static void metaroce_register(void)
{
	/* Logging may be needed before any device is opened: the
	 * environment's word here (the table's parser), the device's
	 * record's when its engine opens (engine.c). */
	const char *d = getenv(mr_knob_defs()[MR_KNOB_DEBUG].env);
	int64_t on = 0;
	char err[160];

	if (d && *d &&
	    mr_knob_parse(MR_KNOB_DEBUG, d, &on, NULL, err, sizeof(err)))
		fprintf(stderr, "metaroce: %s\n", err);
	metaroce_debug_on = (int)on;
	verbs_register_driver_34(&metaroce_dev_ops);
}
