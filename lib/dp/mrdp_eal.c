/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Starting DPDK's EAL inside an application process, once: no hugepages,
 * no PCI scan, no shared config or telemetry (no extra threads, files or
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

#include "mrdp_int.h"

#define MRDP_EAL_MEM_MB_DEFAULT 512
#define MRDP_EAL_ARGS 24

int mrdp_debug;

static pthread_mutex_t eal_mu = PTHREAD_MUTEX_INITIALIZER;
/* 0: not tried; 1: running; <0: failed (EAL cannot be retried). */
static int eal_state;
static char eal_fail[160];

int mrdp_is_pci(const char *args)
{
	unsigned dom, bus, dev, fn;
	char c;

	/* DDDD:BB:DD.F or BB:DD.F, then ',' or end. */
	if (sscanf(args, "%x:%x:%x.%x%c", &dom, &bus, &dev, &fn, &c) >= 4)
		return 1;
	if (sscanf(args, "%x:%x.%x%c", &bus, &dev, &fn, &c) >= 3 &&
	    isxdigit((unsigned char)args[0]) && strchr(args, '.') &&
	    strncmp(args, "net_", 4) != 0)
		return 1;
	return 0;
}

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

/* A positive decimal number in [lo, hi] from the environment, or def. */
static long env_num(const char *name, long lo, long hi, long def, int *bad)
{
	const char *s = getenv(name);
	char *end;
	long v;

	if (!s || !*s)
		return def;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v < lo || v > hi) {
		*bad = 1;
		return def;
	}
	return v;
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

static int eal_start_locked(const struct mr_devconf *c, char *err,
			    size_t errlen)
{
	static char args[MRDP_EAL_ARGS][PATH_MAX > 512 ? 512 : PATH_MAX];
	char *argv[MRDP_EAL_ARGS + 1];
	char cpus[400];
	cpu_set_t set;
	struct eal_call call;
	int argc = 0, bad = 0, saved_optind, saved_opterr, saved_optopt;
	char *saved_optarg;
	long mem, loglvl;
	unsigned i;
	struct timespec ts;

	mrdp_debug = getenv("METAROCE_DP_DEBUG") &&
		     strcmp(getenv("METAROCE_DP_DEBUG"), "0") != 0;
	mem = env_num("METAROCE_DP_MEM_MB", 64, 65536, MRDP_EAL_MEM_MB_DEFAULT,
		      &bad);
	if (bad) {
		snprintf(err, errlen,
			 "METAROCE_DP_MEM_MB must be a number of MB in "
			 "64..65536");
		return -EINVAL;
	}
	loglvl = env_num("METAROCE_DP_EAL_LOG", 1, 8, RTE_LOG_NOTICE, &bad);
	if (bad) {
		snprintf(err, errlen,
			 "METAROCE_DP_EAL_LOG must be a level in 1..8");
		return -EINVAL;
	}
	for (i = 0; i < c->nports; i++) {
		if (mrdp_is_pci(c->ports[i])) {
			/* This build links the af_packet, af_xdp and memif
			 * PMDs only; a PCI NIC needs its own driver. */
			snprintf(err, errlen,
				 "port '%s' is a PCI device: this build has "
				 "no PCI drivers (use net_af_packet, "
				 "net_af_xdp or net_memif)",
				 c->ports[i]);
			return -EINVAL;
		}
	}
	if (pthread_getaffinity_np(pthread_self(), sizeof(set), &set) != 0 ||
	    cpuset_list(&set, cpus, sizeof(cpus)) != 0) {
		snprintf(err, errlen, "cannot read the caller's CPU set");
		return -EIO;
	}
	clock_gettime(CLOCK_MONOTONIC, &ts);

#define ARG(...)                                                       \
	do {                                                           \
		snprintf(args[argc], sizeof(args[argc]), __VA_ARGS__); \
		argv[argc] = args[argc];                               \
		argc++;                                                \
	} while (0)
	ARG("metaroce");
	ARG("--no-huge");
	ARG("-m");
	ARG("%ld", mem);
	ARG("--no-pci");
	ARG("--no-shconf");
	ARG("--no-telemetry");
	ARG("--file-prefix=metaroce-%ld-%lx", (long)getpid(),
	    (unsigned long)ts.tv_nsec);
	ARG("--lcores=0@(%s)", cpus);
	ARG("--log-level=%ld", loglvl);
#undef ARG
	argv[argc] = NULL;

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
	MRDP_LOG("EAL started: -m %ld, lcores 0@(%s)\n", mem, cpus);
	return 0;
}

int mrdp_eal_start(const struct mr_devconf *c, char *err, size_t errlen)
{
	int ret;

	pthread_mutex_lock(&eal_mu);
	if (eal_state == 0) {
		ret = eal_start_locked(c, eal_fail, sizeof(eal_fail));
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
