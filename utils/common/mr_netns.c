/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_netns.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SO_NETNS_COOKIE
#define SO_NETNS_COOKIE 71
#endif

const char *mrctl_rundir(void)
{
	const char *d = getenv("METAROCE_RUNDIR");

	return d && *d ? d : MRCTL_RUNDIR_DEFAULT;
}

int mrctl_netns_ino(unsigned long *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/net", &st))
		return -1;
	*ino = (unsigned long)st.st_ino;
	return 0;
}

int mrctl_netns_cookie(uint64_t *cookie)
{
	socklen_t len = sizeof(*cookie);
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	int ret;

	if (fd < 0)
		return -1;
	ret = getsockopt(fd, SOL_SOCKET, SO_NETNS_COOKIE, cookie, &len);
	close(fd);
	return ret || len != sizeof(*cookie) ? -1 : 0;
}

int mrctl_view_dir(char *buf, size_t len)
{
	unsigned long ino;
	int n;

	if (mrctl_netns_ino(&ino))
		return -1;
	n = snprintf(buf, len, "%s/net-%lu", mrctl_rundir(), ino);
	if (n < 0 || (size_t)n >= len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	return 0;
}

int mrctl_view_current(const char *dir)
{
	char path[4096], line[64];
	uint64_t cookie, stored;
	struct stat st;
	FILE *f;
	int ok;

	if (stat(dir, &st) || !S_ISDIR(st.st_mode))
		return -1;
	if (mrctl_netns_cookie(&cookie))
		return 1; /* no cookies on this kernel: cannot tell */
	snprintf(path, sizeof(path), "%s/%s", dir, MRCTL_COOKIE_FILE);
	f = fopen(path, "re");
	if (!f)
		return 0;
	ok = fgets(line, sizeof(line), f) &&
	     sscanf(line, "%" SCNu64, &stored) == 1 && stored == cookie;
	fclose(f);
	return ok;
}
