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

int mr_pci_check(const char *root, const char *addr, char *err, size_t errlen)
{
	char path[PATH_MAX], drv[64], group[32];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", root, addr);
	if (stat(path, &st) != 0) {
		snprintf(err, errlen,
			 "no PCI device %s on this machine (lspci -D lists "
			 "them)",
			 addr);
		return -ENODEV;
	}
	if (link_base(root, addr, "driver", drv, sizeof(drv)) != 0) {
		snprintf(err, errlen,
			 "PCI device %s is bound to no driver: bind it to "
			 "vfio-pci (dpdk-devbind.py -b vfio-pci %s)",
			 addr, addr);
		return -EBUSY;
	}
	if (strcmp(drv, "vfio-pci") != 0) {
		if (!strcmp(drv, "uio_pci_generic") || !strcmp(drv, "igb_uio"))
			snprintf(err, errlen,
				 "PCI device %s is bound to %s, which gives "
				 "DPDK physical DMA addresses, and those need "
				 "hugepages; MetaRoCE runs DPDK without them: "
				 "bind it to vfio-pci (dpdk-devbind.py -b "
				 "vfio-pci %s)",
				 addr, drv, addr);
		else
			snprintf(err, errlen,
				 "PCI device %s is bound to the kernel driver "
				 "%s: bind it to vfio-pci for DPDK "
				 "(dpdk-devbind.py -b vfio-pci %s; the kernel "
				 "then loses it)",
				 addr, drv, addr);
		return -EBUSY;
	}
	/* vfio's no-IOMMU mode has no IOMMU group of a real IOMMU and
	 * gives physical addresses only. */
	if (link_base(root, addr, "iommu_group", group, sizeof(group)) != 0) {
		snprintf(err, errlen,
			 "PCI device %s is bound to vfio-pci but has no IOMMU "
			 "group: MetaRoCE runs DPDK without hugepages, which "
			 "needs an IOMMU (intel_iommu=on / amd_iommu=on)",
			 addr);
		return -EPERM;
	}
	snprintf(path, sizeof(path), "/dev/vfio/noiommu-%s", group);
	if (access(path, F_OK) == 0) {
		snprintf(err, errlen,
			 "PCI device %s is bound to vfio-pci in no-IOMMU mode "
			 "(physical DMA addresses, which need hugepages); "
			 "MetaRoCE runs DPDK without them: enable the IOMMU",
			 addr);
		return -EPERM;
	}
	return 0;
}
