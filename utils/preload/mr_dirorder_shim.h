/* SPDX-License-Identifier: BSD-2-Clause */
#ifndef MR_DIRORDER_SHIM_H
#define MR_DIRORDER_SHIM_H

#include <dirent.h>

/* If path (as opened) is the sysfs view's class/infiniband_verbs or
 * class/infiniband, read dir whole and serve its readdir() in device-name
 * order until closedir() (mr_dirorder_shim.c). */
void mr_dirorder_adopt(DIR *dir, const char *path);

#endif
