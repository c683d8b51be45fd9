/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_pci.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* s[0..n) against a pattern: x = hex digit, f = function (0-7), other
 * characters literal. */
static int match(const char *s, size_t n, const char *pat)
{
	size_t i;

	if (strlen(pat) != n)
		return 0;
	for (i = 0; i < n; i++) {
		if (pat[i] == 'x' && !isxdigit((unsigned char)s[i]))
			return 0;
		if (pat[i] == 'f' && (s[i] < '0' || s[i] > '7'))
			return 0;
		if (pat[i] != 'x' && pat[i] != 'f' && s[i] != pat[i])
			return 0;
	}
	return 1;
}

size_t mr_pci_port_addr(const char *port, char addr[MR_PCI_ADDR_LEN])
{
	size_t n = strcspn(port, ","), i, off;
	unsigned dev;

	if (match(port, n, "xxxx:xx:xx.f"))
		off = 0;
	else if (match(port, n, "xx:xx.f"))
		off = 5;
	else
		return 0;
	/* Device numbers stop at 0x1f (5 bits). */
	if (sscanf(port + n - 4, "%2x", &dev) != 1 || dev > 0x1f)
		return 0;
	memcpy(addr, "0000:", 5);
	for (i = 0; i < n; i++)
		addr[off + i] = (char)tolower((unsigned char)port[i]);
	addr[MR_PCI_ADDR_LEN - 1] = 0;
	return n;
}

/* Last component of the symbolic link root/addr/what, or "" if none. */
static int link_base(const char *root, const char *addr, const char *what,
		     char *out, size_t cap)
{
	char path[PATH_MAX], target[PATH_MAX];
	const char *slash;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/%s/%s", root, addr, what);
	n = readlink(path, target, sizeof(target) - 1);
	if (n < 0) {
		out[0] = 0;
		return -errno;
	}
	target[n] = 0;
	slash = strrchr(target, '/');
	slash = slash ? slash + 1 : target;
	if (strlen(slash) >= cap) {
		out[0] = 0;
		return -ENAMETOOLONG;
	}
	memcpy(out, slash, strlen(slash) + 1);
	return 0;
}

/* The reasons stay short: callers prefix the port's arguments and the
 * provider's error buffer is 256 bytes. */
int mr_pci_check(const char *root, const char *addr, char *err, size_t errlen)
{
	char path[PATH_MAX], drv[64], group[32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, addr);
	if (stat(path, &st) != 0) {
		snprintf(err, errlen, "no PCI device %s here (lspci -D)", addr);
		return -ENODEV;
	}
	if (link_base(root, addr, "driver", drv, sizeof(drv)) != 0) {
		snprintf(err, errlen,
			 "PCI device %s has no driver: bind it to vfio-pci "
			 "(dpdk-devbind.py -b vfio-pci %s)",
			 addr, addr);
		return -EBUSY;
	}
	if (strcmp(drv, "vfio-pci") != 0) {
		/* uio gives physical DMA addresses, which need hugepages;
		 * MetaRoCE runs DPDK without them. */
		if (!strcmp(drv, "uio_pci_generic") || !strcmp(drv, "igb_uio"))
			snprintf(err, errlen,
				 "PCI device %s is on %s, which needs "
				 "hugepages: bind it to vfio-pci",
				 addr, drv);
		else
			snprintf(err, errlen,
				 "PCI device %s is on kernel driver %s: bind "
				 "it to vfio-pci (dpdk-devbind.py -b vfio-pci "
				 "%s)",
				 addr, drv, addr);
		return -EBUSY;
	}
	/* Without hugepages DMA addresses are virtual: an IOMMU is needed,
	 * and vfio's no-IOMMU mode gives physical addresses only. */
	if (link_base(root, addr, "iommu_group", group, sizeof(group)) != 0) {
		snprintf(err, errlen,
			 "PCI device %s is on vfio-pci without an IOMMU "
			 "(needed without hugepages): boot with "
			 "intel_iommu=on or amd_iommu=on",
			 addr);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/dev/vfio/noiommu-%s", group);
	if (access(path, F_OK) == 0) {
		snprintf(err, errlen,
			 "PCI device %s is on vfio-pci in no-IOMMU mode "
			 "(needs hugepages): enable the IOMMU",
			 addr);
		return -EPERM;
	}
	return 0;
}
