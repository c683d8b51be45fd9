/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starting DPDK's EAL inside an application process, once: no hugepages,
 * no PCI scan unless the device has PCI ports (then only those, by an
 * allow-list), no shared config or telemetry (no extra threads, files or
 * atexit handlers), a file prefix of our own, the caller's CPU set and
 * signal mask unchanged (../shared/guides/testbed.md measured why each
 * matters inside a verbs application).
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

#include "mr_pci.h"
#include "mrdp_int.h"

int mrdp_debug;

static pthread_mutex_t eal_mu = PTHREAD_MUTEX_INITIALIZER;
/* 0: not tried; 1: running; <0: failed (EAL cannot be retried). */
static int eal_state;
static char eal_fail[160];

int mrdp_is_pci(const char *args)
{
	char addr[MR_PCI_ADDR_LEN];

	return mr_pci_port_addr(args, addr) != 0;
}

/* The PCI devices EAL was started with (its allow-list); a later device
 * of this process can use only those. */
static char eal_pci[MR_DEVCONF_MAX_PORTS][MR_PCI_ADDR_LEN];
static unsigned eal_npci;

int mrdp_with_signals_blocked(int (*f)(void *), void *arg)
{
	sigset_t all, old;
	int ret;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = f(arg);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* "0-1,3" from a CPU set, for --lcores=0@(...). */
static int cpuset_list(const cpu_set_t *set, char *buf, size_t cap)
{
	size_t off = 0;
	int cpu, first = -1, n = 0;

	buf[0] = 0;
	for (cpu = 0; cpu <= CPU_SETSIZE; cpu++) {
		int in = cpu < CPU_SETSIZE && CPU_ISSET(cpu, set);

		if (in && first < 0)
			first = cpu;
		if (!in && first >= 0) {
			int w;

			if (first == cpu - 1)
				w = snprintf(buf + off, cap - off, "%s%d",
					     n ? "," : "", first);
			else
				w = snprintf(buf + off, cap - off, "%s%d-%d",
					     n ? "," : "", first, cpu - 1);
			if (w < 0 || (size_t)w >= cap - off)
				return -1;
			off += (size_t)w;
			n++;
			first = -1;
		}
	}
	return n ? 0 : -1;
}

struct eal_call {
	int argc;
	char **argv;
	int ret;
	int err;
};

static int eal_init_call(void *p)
{
	struct eal_call *c = p;

	c->ret = rte_eal_init(c->argc, c->argv);
	c->err = c->ret < 0 ? rte_errno : 0;
	return 0;
}

/* Every PCI port of c: its full address, after checking (sysfs) that
 * DPDK can drive it; n set to how many. 0 or -errno, reason in err. */
static int pci_ports(const struct mr_devconf *c,
		     char addr[MR_DEVCONF_MAX_PORTS][MR_PCI_ADDR_LEN],
		     unsigned *n, char *err, size_t errlen)
{
	char why[400];
	unsigned i;
	int ret;

	*n = 0;
	for (i = 0; i < c->nports && i < MR_DEVCONF_MAX_PORTS; i++) {
		if (!mr_pci_port_addr(c->ports[i], addr[*n]))
			continue;
		ret = mr_pci_check(MR_PCI_SYSFS, addr[*n], why, sizeof(why));
		if (ret) {
			/* A message cut at errlen is still one clear line. */
			if (snprintf(err, errlen, "port '%s': %s", c->ports[i],
				     why) >= (int)errlen)
				err[errlen - 1] = 0;
			return ret;
		}
		(*n)++;
	}
	return 0;
}

int mrdp_eal_argv_build(struct mrdp_eal_argv *a, const struct mr_devconf *c,
			long mem_mb, long log_level, const char *cpus,
			const char *file_prefix, char *err, size_t errlen)
{
	unsigned i, npci = 0;
	int w;

	a->argc = 0;
#define ARG(...)                                                       \
	do {                                                           \
		if (a->argc == MRDP_EAL_ARGS)                          \
			goto toolong;                                  \
		w = snprintf(a->buf[a->argc], sizeof(a->buf[a->argc]), \
			     __VA_ARGS__);                             \
		if (w < 0 || (size_t)w >= sizeof(a->buf[a->argc]))     \
			goto toolong;                                  \
		a->argv[a->argc] = a->buf[a->argc];                    \
		a->argc++;                                             \
	} while (0)
	ARG("metaroce");
	ARG("--no-huge");
	ARG("-m");
	ARG("%ld", mem_mb);
	/* Only the PCI devices of the record, with their device arguments:
	 * EAL probes nothing else (a NIC the kernel uses stays the
	 * kernel's). Without hugepages DMA addresses must be virtual. */
	for (i = 0; i < c->nports && i < MR_DEVCONF_MAX_PORTS; i++) {
		char addr[MR_PCI_ADDR_LEN];
		size_t n = mr_pci_port_addr(c->ports[i], addr);

		if (!n)
			continue;
		ARG("-a");
		ARG("%s%s", addr, c->ports[i] + n);
		npci++;
	}
	if (npci)
		ARG("--iova-mode=va");
	else
		ARG("--no-pci");
	ARG("--no-shconf");
	ARG("--no-telemetry");
	ARG("--file-prefix=%s", file_prefix);
	ARG("--lcores=0@(%s)", cpus);
	ARG("--log-level=%ld", log_level);
#undef ARG
	a->argv[a->argc] = NULL;
	return 0;
toolong:
	snprintf(err, errlen, "%s: EAL arguments too long", c->name);
	return -EINVAL;
}

static int eal_start_locked(const struct mr_devconf *c,
			    const struct mr_knobs *k, char *err, size_t errlen)
{
	/* Static: EAL keeps pointers into its argv. */
	static struct mrdp_eal_argv a;
	char **argv;
	char cpus[400], prefix[64];
	cpu_set_t set;
	struct eal_call call;
	int argc, saved_optind, saved_opterr, saved_optopt, ret;
	char *saved_optarg;
	long mem, loglvl;
	struct timespec ts;

	mrdp_debug = (int)mr_knob_get(k, MR_KNOB_DP_DEBUG);
	mem = (long)mr_knob_get(k, MR_KNOB_DP_MEM_MB);
	loglvl = (long)mr_knob_get(k, MR_KNOB_DP_EAL_LOG);
	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0 ||
	    cpuset_list(&set, cpus, sizeof(cpus)) != 0) {
		snprintf(err, errlen, "cannot read the caller's CPU set");
		return -EIO;
	}
	/* Refused before EAL sees it: EAL would take a device the kernel
	 * uses, or fail in ways it reports less clearly. */
	ret = pci_ports(c, eal_pci, &eal_npci, err, errlen);
	if (ret)
		return -EINVAL; /* refused, EAL untouched: can be retried */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(prefix, sizeof(prefix), "metaroce-%ld-%lx", (long)getpid(),
		 (unsigned long)ts.tv_nsec);
	ret = mrdp_eal_argv_build(&a, c, mem, loglvl, cpus, prefix, err,
				  errlen);
	if (ret)
		return ret;
	argc = a.argc;
	argv = a.argv;

	/* EAL parses with getopt: leave the application's state as it
	 * was. Its logs go to stderr, not syslog. */
	saved_optind = optind;
	saved_opterr = opterr;
	saved_optopt = optopt;
	saved_optarg = optarg;
	rte_openlog_stream(stderr);
	call.argc = argc;
	call.argv = argv;
	/* Threads EAL starts inherit a fully blocked signal mask, so they
	 * never take the application's signals. */
	mrdp_with_signals_blocked(eal_init_call, &call);
	optind = saved_optind;
	opterr = saved_opterr;
	optopt = saved_optopt;
	optarg = saved_optarg;
	/* --lcores=0@(current set) should not move us; make sure. */
	pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	if (call.ret < 0) {
		snprintf(err, errlen, "DPDK EAL init failed: %s",
			 rte_strerror(call.err));
		return -EIO;
	}
	MRDP_LOG("EAL started: -m %ld, lcores 0@(%s), %u PCI device(s)\n", mem,
		 cpus, eal_npci);
	return 0;
}

/* A device opened after EAL started may use only the PCI devices EAL was
 * started with. */
static int pci_later(const struct mr_devconf *c, char *err, size_t errlen)
{
	char addr[MR_DEVCONF_MAX_PORTS][MR_PCI_ADDR_LEN];
	unsigned n, i, k;
	int ret;

	ret = pci_ports(c, addr, &n, err, errlen);
	if (ret)
		return ret;
	for (i = 0; i < n; i++) {
		for (k = 0; k < eal_npci; k++)
			if (!strcmp(addr[i], eal_pci[k]))
				break;
		if (k == eal_npci) {
			snprintf(err, errlen,
				 "%s: PCI device %s cannot be used in this "
				 "process: DPDK was started by the first "
				 "device opened, %s; open a device with all "
				 "the PCI ports first, or use one process per "
				 "device",
				 c->name, addr[i],
				 eal_npci ? "with other PCI devices only"
					  : "without PCI");
			return -EINVAL;
		}
	}
	return 0;
}

int mrdp_eal_start(const struct mr_devconf *c, const struct mr_knobs *k,
		   char *err, size_t errlen)
{
	struct mr_knobs own;
	int ret;

	if (!k) {
		if (mr_knobs_resolve(&own, &c->opts, err, errlen))
			return -EINVAL;
		k = &own;
	}

	pthread_mutex_lock(&eal_mu);
	if (eal_state > 0) {
		ret = pci_later(c, err, errlen);
		if (ret) {
			pthread_mutex_unlock(&eal_mu);
			return ret;
		}
	}
	if (eal_state == 0) {
		ret = eal_start_locked(c, k, eal_fail, sizeof(eal_fail));
		/* A refused environment can be fixed and retried; a failed
		 * rte_eal_init cannot (EAL refuses a second init). */
		if (ret == -EINVAL) {
			snprintf(err, errlen, "%s", eal_fail);
			pthread_mutex_unlock(&eal_mu);
			return ret;
		}
		eal_state = ret == 0 ? 1 : ret;
	}
	ret = eal_state > 0 ? 0 : eal_state;
	if (ret < 0)
		snprintf(err, errlen, "%s", eal_fail);
	pthread_mutex_unlock(&eal_mu);
	return ret;
}
