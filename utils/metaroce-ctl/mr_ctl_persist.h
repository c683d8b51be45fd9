/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Devices that outlive a reboot: `link add --persist` writes the device's
 * record (mr_devconf.h, without the /dev node name, which is chosen anew)
 * to <confdir>/<name>.conf; `link restore` (metaroce.service at boot)
 * creates every device recorded there in the caller's network namespace,
 * and `link del --persisted` (the service's stop) removes them again,
 * keeping the files. `link del NAME --persist` removes the device and its
 * file. <confdir> is /etc/metaroce, or $METAROCE_CONFDIR.
 */
#ifndef MR_CTL_PERSIST_H
#define MR_CTL_PERSIST_H

#include <stddef.h>

#include "mr_devconf.h"

#define MRCTL_CONFDIR "/etc/metaroce"

/* $METAROCE_CONFDIR or /etc/metaroce. */
const char *mrctl_confdir(void);

/* 0 if name has no record in the confdir yet (add --persist may write
 * one), else -1 + err. */
int mrctl_persist_check(const char *name, char *err, size_t errlen);
/* Write c's record (atomically). 0 or -1 + err. */
int mrctl_persist_write(const struct mr_devconf *c, char *err, size_t errlen);

/* The commands; each returns the exit status. */
int mrctl_persist_del(const char *name);
int mrctl_persist_del_all(void);
int mrctl_cmd_restore(int argc, char **argv);

#endif /* MR_CTL_PERSIST_H */
