/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PCI ports of a device record: recognising a PCI address among the
 * `--port` arguments and checking, before DPDK is started, that the device
 * exists and is bound to a driver DPDK can use here. Shared by
 * metaroce-ctl (refuse at link add) and the datapath (refuse at open,
 * before EAL scans anything): both give the same one-line reason.
 */
#ifndef MR_PCI_H
#define MR_PCI_H

#include <stddef.h>

/* "DDDD:BB:DD.F" and its NUL. */
#define MR_PCI_ADDR_LEN 13
/* Where Linux lists PCI devices; mr_pci_check() takes it as a parameter
 * so a test can point it at a tree of its own. */
#define MR_PCI_SYSFS "/sys/bus/pci/devices"

/* If a port argument starts with a PCI address (DDDD:BB:DD.F or BB:DD.F,
 * then ',' and device arguments, or the end), write its full form (domain
 * 0000 added, lower case) to addr and return the length of the address
 * part of port; else return 0. */
size_t mr_pci_port_addr(const char *port, char addr[MR_PCI_ADDR_LEN]);

/*
 * Can DPDK drive the PCI device addr (full form) as MetaRoCE starts it
 * (no hugepages, so DMA addresses are virtual: vfio-pci with an IOMMU)?
 * root is MR_PCI_SYSFS. 0, or a negative errno with a one-line reason in
 * err: -ENODEV no such device, -EBUSY bound to another driver or to none,
 * -EPERM vfio-pci without an IOMMU.
 */
int mr_pci_check(const char *root, const char *addr, char *err, size_t errlen);

#endif /* MR_PCI_H */
