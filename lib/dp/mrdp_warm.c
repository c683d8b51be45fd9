/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A port's ring memory, touched once while the device opens, so that the
 * first frames of a connection do not pay for it.
 *
 * Why: the first access to a page costs far more than later ones even
 * when the kernel has it populated and locked (af_packet maps its rings
 * MAP_LOCKED). Measured on this project's 2-vCPU VM, whose hypervisor
 * shadows the guest's page tables (a PVM guest): 7-20 us for the first
 * read of a populated page, 20-40 us for its first write (again after a
 * read), 0.03 us afterwards (bench/wire FINDINGS section 10). The PMD
 * uses its TX ring's slots in turn, so the first 2,048 frames of a
 * process each met a cold slot: 23-29 us of CPU per 4 KiB frame instead
 * of 2-3 us, the first 100-200 ms of every run (ib_write_bw -n 200 at
 * 0.16 x its -D figure). On bare metal a first touch is a TLB miss and
 * this walk costs about a millisecond.
 *
 * How: one atomic OR of 0 into each page of the socket's mapping (found
 * in /proc/self/maps by the socket's inode). It is a write as far as the
 * page tables go, and changes no value: the kernel may be writing a frame
 * into the RX ring at the same moment, and a locked read-modify-write of
 * 0 neither tears nor undoes its store.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mrdp_int.h"

long mrdp_warm_mapping(int fd)
{
	const uintptr_t psz = (uintptr_t)sysconf(_SC_PAGESIZE);
	char line[512], tag[48];
	struct stat st;
	long pages = 0;
	FILE *f;

	if (fd < 0 || fstat(fd, &st) != 0)
		return -EBADF;
	snprintf(tag, sizeof(tag), " socket:[%lu]\n", (unsigned long)st.st_ino);
	f = fopen("/proc/self/maps", "re");
	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		uintptr_t lo, hi, a;
		size_t n = strlen(line), t = strlen(tag);

		if (n < t || strcmp(line + n - t, tag) != 0 ||
		    sscanf(line, "%" SCNxPTR "-%" SCNxPTR, &lo, &hi) != 2)
			continue;
		for (a = lo; a < hi; a += psz) {
			__atomic_fetch_or((uint32_t *)a, 0u, __ATOMIC_RELAXED);
			pages++;
		}
	}
	fclose(f);
	return pages;
}
