/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The knob table (lib/devconf/mr_knobs.h): defaults, then the device's
 * record, then the environment; ranges, names and the record's opt. lines.
 */
#include "mr_devconf.h"
#include "mr_knobs.h"
#include "mr_test.h"

#include <unistd.h>

static void clear_env(void)
{
	for (int i = 0; i < MR_KNOBS_N; i++)
		unsetenv(mr_knob_defs()[i].env);
}

/* Every row is sane: env name from the name, default in range. */
static void test_table_rows(void)
{
	const struct mr_knob_def *d = mr_knob_defs();
	char up[64];

	for (int i = 0; i < MR_KNOBS_N; i++) {
		size_t n = strlen(d[i].name);

		MR_CHECK(n && n < sizeof(up));
		for (size_t j = 0; j <= n; j++)
			up[j] = (char)(d[i].name[j] >= 'a' &&
						       d[i].name[j] <= 'z'
					       ? d[i].name[j] - 32
					       : d[i].name[j]);
		MR_CHECK(!strncmp(d[i].env, "METAROCE_", 9));
		MR_CHECK(!strcmp(d[i].env + 9, up));
		MR_CHECK(d[i].min <= d[i].max);
		MR_CHECK((d[i].def >= d[i].min && d[i].def <= d[i].max) ||
			 (d[i].def == 0 && (d[i].flags & MR_KNOB_F_ZERO_OFF)));
		MR_CHECK(d[i].help && *d[i].help && d[i].layer);
		/* A choice row's max is its last name's index. */
		if (d[i].type == MR_KNOB_CHOICE) {
			int64_t names = 1;

			MR_CHECK(d[i].choices && *d[i].choices);
			for (const char *p = d[i].choices; *p; p++)
				names += *p == '|';
			MR_CHECK_EQ(d[i].min, 0);
			MR_CHECK_EQ(d[i].max, names - 1);
		} else {
			MR_CHECK(!d[i].choices);
		}
		MR_CHECK_EQ(mr_knob_find(d[i].name), i);
	}
	MR_CHECK_EQ(mr_knob_find("no_such_knob"), -1);
	MR_CHECK_EQ(mr_knob_find("PATHS"), -1);
}

static void test_defaults(void)
{
	struct mr_knobs k;
	char err[200];

	clear_env();
	MR_CHECK_EQ(mr_knobs_resolve(&k, NULL, err, sizeof(err)), 0);
	MR_CHECK_EQ(k.v[MR_KNOB_PATHS], 4);
	MR_CHECK_EQ(k.v[MR_KNOB_MIN_RTO_US], 20000);
	MR_CHECK_EQ(k.v[MR_KNOB_DP_NICE], -10);
	MR_CHECK_EQ(k.v[MR_KNOB_DP_ZEROCOPY], 1);
	for (int i = 0; i < MR_KNOBS_N; i++)
		MR_CHECK_EQ(k.src[i], MR_KNOB_SRC_DEFAULT);
}

/* The device's record overrides the default, the environment both. */
static void test_order(void)
{
	struct mr_knob_set set = { 0 };
	struct mr_knobs k;
	char err[200];

	clear_env();
	MR_CHECK_EQ(
		mr_knob_set_parse(&set, "paths=8", "--opt", err, sizeof(err)),
		0);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_nice=-3", "--opt", err,
				      sizeof(err)),
		    0);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_zerocopy=off", "--opt", err,
				      sizeof(err)),
		    0);
	setenv("METAROCE_DP_NICE", "5", 1);
	setenv("METAROCE_ACK_EVERY", "", 1); /* empty: not given */
	MR_CHECK_EQ(mr_knobs_resolve(&k, &set, err, sizeof(err)), 0);
	MR_CHECK_EQ(k.v[MR_KNOB_PATHS], 8);
	MR_CHECK_EQ(k.src[MR_KNOB_PATHS], MR_KNOB_SRC_DEVICE);
	MR_CHECK_EQ(k.v[MR_KNOB_DP_NICE], 5);
	MR_CHECK_EQ(k.src[MR_KNOB_DP_NICE], MR_KNOB_SRC_ENV);
	MR_CHECK_EQ(k.v[MR_KNOB_DP_ZEROCOPY], 0);
	MR_CHECK_EQ(k.v[MR_KNOB_ACK_EVERY], 16);
	MR_CHECK_EQ(k.src[MR_KNOB_ACK_EVERY], MR_KNOB_SRC_DEFAULT);
	clear_env();
}

/* One clear error for each kind of bad value, naming what to fix. */
static void test_errors(void)
{
	struct mr_knob_set set = { 0 };
	struct mr_knobs k;
	char err[200];

	clear_env();
	MR_CHECK_EQ(
		mr_knob_set_parse(&set, "paths=65", "--opt", err, sizeof(err)),
		-1);
	MR_CHECK(!strcmp(err, "--opt paths=65: paths must be 1..64"));
	MR_CHECK_EQ(
		mr_knob_set_parse(&set, "pathz=1", "--opt", err, sizeof(err)),
		-1);
	MR_CHECK(strstr(err, "no knob named pathz"));
	MR_CHECK_EQ(mr_knob_set_parse(&set, "paths", "--opt", err, sizeof(err)),
		    -1);
	MR_CHECK(strstr(err, "expected NAME=VALUE"));
	/* No hex, spaces, signs on unsigned knobs, trailing junk. */
	MR_CHECK_EQ(mr_knob_set_parse(&set, "paths=0x4", "x", err, 200), -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "paths= 4", "x", err, 200), -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "paths=+4", "x", err, 200), -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "paths=4k", "x", err, 200), -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_spin_us=-1", "x", err, 200),
		    -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_nice=-21", "x", err, 200), -1);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_nice=-20", "x", err, 200), 0);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "debug=maybe", "x", err, 200), -1);
	MR_CHECK(strstr(err, "0 or 1"));
	/* 0 is off for dp_slice_us, 1..99 is not a slice. */
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_slice_us=0", "x", err, 200), 0);
	MR_CHECK_EQ(mr_knob_set_parse(&set, "dp_slice_us=99", "x", err, 200),
		    -1);
	MR_CHECK(strstr(err, "0 (off) or 100..100000"));
	MR_CHECK_EQ(set.mask,
		    (1ull << MR_KNOB_DP_NICE) | (1ull << MR_KNOB_DP_SLICE_US));
	/* The environment: the variable is named. */
	setenv("METAROCE_MIN_RTO_US", "0", 1);
	MR_CHECK_EQ(mr_knobs_resolve(&k, NULL, err, sizeof(err)), -1);
	MR_CHECK(!strcmp(err, "METAROCE_MIN_RTO_US=0: must be 1..10000000"));
	clear_env();
}

/* opt. lines survive a write and a read; a bad one is refused by line. */
static void test_record(void)
{
	char path[] = "/tmp/mrknobs.XXXXXX", err[300];
	struct mr_devconf c = { 0 }, r;
	FILE *f;
	int fd;

	strcpy(c.name, "mr0");
	c.nports = 1;
	strcpy(c.ports[0], "net_af_packet0,iface=lo");
	c.ip = 0xc0000201;
	c.prefix = 24;
	memcpy(c.mac, "\x02\x00\xc0\x00\x02\x01", 6);
	c.mtu = 1024;
	c.udp_port = 4797;
	MR_CHECK_EQ(mr_knob_set_parse(&c.opts, "ack_every=32", "x", err, 300),
		    0);
	MR_CHECK_EQ(
		mr_knob_set_parse(&c.opts, "dp_udp_csum=yes", "x", err, 300),
		0);
	fd = mkstemp(path);
	MR_CHECK(fd >= 0);
	f = fdopen(fd, "w");
	MR_CHECK(f);
	MR_CHECK_EQ(mr_devconf_write(f, &c), 0);
	fclose(f);
	MR_CHECK_EQ(mr_devconf_read(path, &r, err, sizeof(err)), 0);
	MR_CHECK_EQ(r.opts.mask, c.opts.mask);
	MR_CHECK_EQ(r.opts.v[MR_KNOB_ACK_EVERY], 32);
	MR_CHECK_EQ(r.opts.v[MR_KNOB_DP_UDP_CSUM], 1);
	f = fopen(path, "a");
	MR_CHECK(f);
	fputs("opt.ack_every=0\n", f);
	fclose(f);
	MR_CHECK_EQ(mr_devconf_read(path, &r, err, sizeof(err)), -1);
	MR_CHECK(strstr(err, ":10: opt ack_every=0: ack_every must be "
			     "1..256"));
	unlink(path);
}

/* METAROCE_* variables that are no knob: one error naming the variable
 * and the nearest knob; the tools' own variables and other names pass. */
static void test_unknown_env(void)
{
	char *ok[] = { "METAROCE_PATHS=4",   "METAROCE_RUNDIR=/x",
		       "METAROCE_TEST_CTL=y", "PATH=/bin",
		       "METAROCE",	      "XMETAROCE_PATH=1",
		       NULL };
	char *typo[] = { "HOME=/", "METAROCE_PATH=3", NULL };
	char *far[] = { "METAROCE_WHATEVER_ELSE_ENTIRELY=1", NULL };
	char *noeq[] = { "METAROCE_DP_ZEROCPY", NULL };
	char err[300];
	struct mr_knobs k;

	MR_CHECK_EQ(mr_knobs_check_env(ok, err, sizeof(err)), 0);
	MR_CHECK_EQ(mr_knobs_check_env(NULL, err, sizeof(err)), 0);
	MR_CHECK_EQ(mr_knobs_check_env(typo, err, sizeof(err)), -1);
	MR_CHECK_EQ(strcmp(err, "environment variable METAROCE_PATH is not a "
				"knob (did you mean METAROCE_PATHS? "
				"metaroce-ctl knobs lists them)"),
		    0);
	MR_CHECK_EQ(mr_knobs_check_env(far, err, sizeof(err)), -1);
	MR_CHECK_EQ(strcmp(err, "environment variable "
				"METAROCE_WHATEVER_ELSE_ENTIRELY is not a knob "
				"(metaroce-ctl knobs lists them)"),
		    0);
	MR_CHECK_EQ(mr_knobs_check_env(noeq, err, sizeof(err)), -1);
	MR_CHECK(strstr(err, "did you mean METAROCE_DP_ZEROCOPY?"));
	/* resolve reads the process's environment. */
	setenv("METAROCE_ACK_EVRY", "3", 1);
	MR_CHECK_EQ(mr_knobs_resolve(&k, NULL, err, sizeof(err)), -1);
	MR_CHECK(strstr(err, "METAROCE_ACK_EVRY is not a knob (did you mean "
			     "METAROCE_ACK_EVERY?"));
	unsetenv("METAROCE_ACK_EVRY");
	MR_CHECK_EQ(mr_knobs_resolve(&k, NULL, err, sizeof(err)), 0);
}

MR_TEST_MAIN(MR_TEST(test_table_rows), MR_TEST(test_defaults),
	     MR_TEST(test_order), MR_TEST(test_errors), MR_TEST(test_record),
	     MR_TEST(test_unknown_env))
