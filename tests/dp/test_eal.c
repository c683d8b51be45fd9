/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * PCI ports and EAL's command line (lib/dp/mrdp_eal.c, lib/devconf/mr_pci.c):
 * PCI addresses among port arguments; EAL scans PCI only when the record
 * has PCI ports, and then only those (an allow-list), else --no-pci; the
 * sysfs checks that refuse a device DPDK cannot drive, on a sysfs tree the
 * test builds and on the machine's own; a refused PCI port leaves EAL
 * unstarted, so the next device of the process still opens.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mr_pci.h"
#include "mr_test.h"
#include "mrdp_int.h"

static void conf_init(struct mr_devconf *c, const char *const *ports,
		      unsigned n)
{
	unsigned i;

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "mrt0");
	for (i = 0; i < n; i++)
		snprintf(c->ports[i], sizeof(c->ports[i]), "%s", ports[i]);
	c->nports = n;
	c->ip = 0xc0000201;
	c->prefix = 24;
	c->mtu = 1024;
	c->udp_port = 4797;
	memcpy(c->mac, "\x02\x00\xc0\x00\x02\x01", 6);
}

/* Index of the argument equal to s, or -1; how many are equal in *n. */
static int find_arg(const struct mrdp_eal_argv *a, const char *s, int *n)
{
	int i, at = -1;

	*n = 0;
	for (i = 0; i < a->argc; i++)
		if (!strcmp(a->argv[i], s)) {
			if (at < 0)
				at = i;
			(*n)++;
		}
	return at;
}

static void test_port_addr(void)
{
	char a[MR_PCI_ADDR_LEN];

	MR_CHECK_EQ(mr_pci_port_addr("0000:3b:00.0", a), 12);
	MR_CHECK(!strcmp(a, "0000:3b:00.0"));
	MR_CHECK_EQ(mr_pci_port_addr("3B:1f.7,rxq=2", a), 7);
	MR_CHECK(!strcmp(a, "0000:3b:1f.7"));
	MR_CHECK_EQ(mr_pci_port_addr("ABCD:ff:00.1,a=1,b=[1,2]", a), 12);
	MR_CHECK(!strcmp(a, "abcd:ff:00.1"));
	/* Device 0x20 and function 8 do not exist; names are vdevs. */
	MR_CHECK_EQ(mr_pci_port_addr("0000:3b:20.0", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("0000:3b:00.8", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("net_af_xdp0,iface=v0", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("net_memif0", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("000:3b:00.0", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("0000:3b:00.0x", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("3b:00", a), 0);
	MR_CHECK_EQ(mr_pci_port_addr("", a), 0);
	MR_CHECK(mrdp_is_pci("81:00.1"));
	MR_CHECK(!mrdp_is_pci("net_af_packet0,iface=eth0"));
}

static void test_args_no_pci(void)
{
	static const char *const ports[] = { "net_af_packet0,iface=v0",
					     "net_af_xdp0,iface=v1" };
	static struct mrdp_eal_argv a;
	struct mr_devconf c;
	char err[200];
	int n;

	conf_init(&c, ports, 2);
	MR_CHECK_EQ(mrdp_eal_argv_build(&a, &c, 256, 5, "0-1", "pfx", err,
					sizeof(err)),
		    0);
	MR_CHECK(a.argv[a.argc] == NULL);
	MR_CHECK(find_arg(&a, "--no-pci", &n) > 0 && n == 1);
	MR_CHECK(find_arg(&a, "-a", &n) < 0);
	MR_CHECK(find_arg(&a, "--iova-mode=va", &n) < 0);
	MR_CHECK(find_arg(&a, "--no-huge", &n) > 0);
	MR_CHECK(find_arg(&a, "--file-prefix=pfx", &n) > 0);
	MR_CHECK(find_arg(&a, "--lcores=0@(0-1)", &n) > 0);
	MR_CHECK(find_arg(&a, "--log-level=5", &n) > 0);
	{
		int m = find_arg(&a, "-m", &n);

		MR_CHECK(m > 0 && m + 1 < a.argc);
		MR_CHECK(!strcmp(a.argv[m + 1], "256"));
	}
}

static void test_args_pci(void)
{
	static const char *const ports[] = { "net_af_packet0,iface=v0",
					     "3b:00.0",
					     "0000:81:00.1,rxq=2,txq=2" };
	static struct mrdp_eal_argv a;
	struct mr_devconf c;
	char err[200];
	int i, n, nallow = 0;

	conf_init(&c, ports, 3);
	MR_CHECK_EQ(mrdp_eal_argv_build(&a, &c, 256, 5, "0", "pfx", err,
					sizeof(err)),
		    0);
	MR_CHECK(find_arg(&a, "--no-pci", &n) < 0);
	MR_CHECK(find_arg(&a, "--iova-mode=va", &n) > 0 && n == 1);
	/* Exactly the two PCI ports, full addresses, devargs kept, in the
	 * record's order; the vdev is not in the list. */
	for (i = 0; i < a.argc; i++) {
		if (strcmp(a.argv[i], "-a"))
			continue;
		MR_CHECK(i + 1 < a.argc);
		MR_CHECK(!strcmp(a.argv[i + 1], nallow ? "0000:81:00.1,rxq=2,"
							 "txq=2"
						       : "0000:3b:00.0"));
		nallow++;
	}
	MR_CHECK_EQ(nallow, 2);
	for (i = 0; i < a.argc; i++)
		MR_CHECK(!strstr(a.argv[i], "af_packet"));
}

static void test_args_too_long(void)
{
	static struct mrdp_eal_argv a;
	struct mr_devconf c;
	char err[200], cpus[1200];
	int i;

	conf_init(&c, NULL, 0);
	for (i = 0; i < 300; i++)
		memcpy(cpus + 4 * i, "1,3,", 4);
	cpus[1199] = 0;
	err[0] = 0;
	MR_CHECK_EQ(mrdp_eal_argv_build(&a, &c, 256, 5, cpus, "pfx", err,
					sizeof(err)),
		    -EINVAL);
	MR_CHECK(strstr(err, "EAL arguments too long"));
}

static char tree[64];

static void mkpath(const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	if (mkdir(p, 0755) != 0 && errno != EEXIST)
		perror(p);
}

static void link_to(const char *target, const char *rel)
{
	char p[256];

	snprintf(p, sizeof(p), "%s/%s", tree, rel);
	if (symlink(target, p) != 0)
		perror(p);
}

/* A sysfs tree as Linux lays it out: devices/<addr>/driver and
 * iommu_group are links into drivers/ and kernel/iommu_groups/. */
static void test_pci_check_tree(void)
{
	char root[128], err[400];

	snprintf(tree, sizeof(tree), "/tmp/mrdp-test-pci.%ld", (long)getpid());
	mkpath("");
	mkpath("devices");
	mkpath("devices/0000:3b:00.0"); /* no driver */
	mkpath("devices/0000:3b:00.1"); /* a kernel driver */
	link_to("../../../bus/pci/drivers/ixgbe",
		"devices/0000:3b:00.1/driver");
	mkpath("devices/0000:3b:00.2"); /* uio */
	link_to("../../../bus/pci/drivers/uio_pci_generic",
		"devices/0000:3b:00.2/driver");
	mkpath("devices/0000:3b:00.3"); /* vfio-pci, no IOMMU group */
	link_to("../../../bus/pci/drivers/vfio-pci",
		"devices/0000:3b:00.3/driver");
	mkpath("devices/0000:3b:00.4"); /* vfio-pci with an IOMMU */
	link_to("../../../bus/pci/drivers/vfio-pci",
		"devices/0000:3b:00.4/driver");
	link_to("../../../kernel/iommu_groups/17",
		"devices/0000:3b:00.4/iommu_group");
	snprintf(root, sizeof(root), "%s/devices", tree);

	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.9", err, sizeof(err)),
		    -ENODEV);
	MR_CHECK(strstr(err, "no PCI device 0000:3b:00.9 here (lspci -D)"));
	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.0", err, sizeof(err)),
		    -EBUSY);
	MR_CHECK(strstr(err, "has no driver: bind it to vfio-pci"));
	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.1", err, sizeof(err)),
		    -EBUSY);
	MR_CHECK(strstr(err, "is on kernel driver ixgbe: bind"));
	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.2", err, sizeof(err)),
		    -EBUSY);
	MR_CHECK(strstr(err, "is on uio_pci_generic, which needs hugepages"));
	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.3", err, sizeof(err)),
		    -EPERM);
	MR_CHECK(strstr(err, "on vfio-pci without an IOMMU"));
	MR_CHECK_EQ(mr_pci_check(root, "0000:3b:00.4", err, sizeof(err)), 0);
	MR_CHECK(!strchr(err, '\n'));
}

static void test_pci_check_machine(void)
{
	char err[400];

	MR_CHECK_EQ(
		mr_pci_check(MR_PCI_SYSFS, "ffff:ff:1f.7", err, sizeof(err)),
		-ENODEV);
	MR_CHECK(strstr(err, "no PCI device ffff:ff:1f.7"));
}

/*
 * A record with a PCI port that does not exist is refused before EAL
 * starts, with one line naming the port; EAL is left unstarted, so a
 * vdev-only device opens afterwards, and the PCI one is refused again.
 */
static void test_eal_refuses_missing_pci(void)
{
	static const char *const bad[] = { "net_af_packet0,iface=lo",
					   "ffff:ff:1f.7,rxq=1" };
	static const char *const good[] = { "net_af_packet0,iface=lo" };
	struct mr_devconf c;
	char err[400];
	int ret;

	conf_init(&c, bad, 2);
	err[0] = 0;
	MR_CHECK_EQ(mrdp_eal_start(&c, NULL, err, sizeof(err)), -EINVAL);
	printf("refused: %s\n", err);
	MR_CHECK(!strcmp(err, "port 'ffff:ff:1f.7,rxq=1': no PCI device "
			      "ffff:ff:1f.7 here (lspci -D)"));
	conf_init(&c, good, 1);
	setenv("METAROCE_DP_MEM_MB", "64", 1);
	ret = mrdp_eal_start(&c, NULL, err, sizeof(err));
	if (ret)
		printf("EAL: %s\n", err);
	MR_CHECK_EQ(ret, 0);
	conf_init(&c, bad, 2);
	err[0] = 0;
	MR_CHECK(mrdp_eal_start(&c, NULL, err, sizeof(err)) < 0);
	MR_CHECK(strstr(err, "no PCI device ffff:ff:1f.7"));
}

static int no_rx(void *user, uint64_t now, const uint8_t *pkt, size_t len,
		 const struct mr_rx_meta *meta)
{
	return 0;
}

static size_t no_tx(void *user, uint64_t now, uint8_t *buf, size_t cap,
		    struct mr_tx_meta *meta)
{
	return 0;
}

/*
 * The same through mrdp_open, as the provider opens a device: a record
 * with a vdev port and a missing PCI port fails with one line naming the
 * PCI port, and leaves nothing behind: the same name with the vdev port
 * alone opens (and closes) right after.
 */
static void test_open_refuses_missing_pci(void)
{
	char sock[80], port[160], err[400];
	const char *ports[2] = { port, "ffff:ff:1f.7" };
	struct mrdp_config cfg;
	struct mr_devconf c;
	struct mrdp_dev *d = NULL;
	int ret;

	snprintf(sock, sizeof(sock), "/tmp/mrdp-test-eal.%ld.sock",
		 (long)getpid());
	unlink(sock);
	snprintf(port, sizeof(port),
		 "net_memif0,role=server,socket=%s,socket-abstract=no", sock);
	memset(&cfg, 0, sizeof(cfg));
	cfg.conf = &c;
	cfg.ops.rx = no_rx;
	cfg.ops.tx = no_tx;
	cfg.no_thread = 1;

	conf_init(&c, ports, 2);
	err[0] = 0;
	MR_CHECK(mrdp_open(&cfg, &d, err, sizeof(err)) < 0);
	printf("refused: %s\n", err);
	MR_CHECK(strstr(err, "ffff:ff:1f.7") && !strchr(err, '\n'));
	conf_init(&c, ports, 1);
	ret = mrdp_open(&cfg, &d, err, sizeof(err));
	if (ret)
		printf("open: %s\n", err);
	MR_CHECK_EQ(ret, 0);
	mrdp_close(d);
	unlink(sock);
}

static void cleanup_tree(void)
{
	char cmd[128];

	if (tree[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tree);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tree);
	}
}

static void test_cleanup(void)
{
	cleanup_tree();
	MR_CHECK(access(tree, F_OK) != 0);
}

MR_TEST_MAIN(MR_TEST(test_port_addr), MR_TEST(test_args_no_pci),
	     MR_TEST(test_args_pci), MR_TEST(test_args_too_long),
	     MR_TEST(test_pci_check_tree), MR_TEST(test_pci_check_machine),
	     MR_TEST(test_eal_refuses_missing_pci),
	     MR_TEST(test_open_refuses_missing_pci), MR_TEST(test_cleanup))
