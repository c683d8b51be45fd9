// SPDX-License-Identifier: BSD-2-Clause
/* mr_policy: the transport policy from the knobs (MR-POL-1..3). */
#include <stdlib.h>
#include <string.h>

#include "mr_cc.h"
#include "mr_knobs.h"
#include "mr_pathsel.h"
#include "mr_policy.h"
#include "mr_test.h"

static void clean_env(void)
{
	for (int i = 0; i < MR_KNOBS_N; i++)
		unsetenv(mr_knob_defs()[i].env);
}

static void resolve(struct mr_knobs *k, const char *nv)
{
	struct mr_knob_set set;
	char err[256];

	memset(&set, 0, sizeof(set));
	if (nv)
		MR_CHECK_EQ(
			mr_knob_set_parse(&set, nv, "--opt", err, sizeof(err)),
			0);
	MR_CHECK_EQ(mr_knobs_resolve(k, &set, err, sizeof(err)), 0);
}

/* The knob rows offer exactly the registries' algorithms, after "auto":
 * a name in the row without its file, or a file without its name, fails
 * here. */
static void test_choices_are_the_registry(void)
{
	const struct mr_knob_def *d = mr_knob_defs();
	char name[64];
	unsigned i;

	mr_policy_choice(MR_KNOB_CC, 0, name, sizeof(name));
	MR_CHECK(strcmp(name, "auto") == 0);
	for (i = 0; mr_cc_algo(i); i++) {
		mr_policy_choice(MR_KNOB_CC, i + 1, name, sizeof(name));
		MR_CHECK(strcmp(name, mr_cc_algo(i)->name) == 0);
	}
	MR_CHECK_EQ(d[MR_KNOB_CC].max, (int64_t)i);
	mr_policy_choice(MR_KNOB_PATHSEL, 0, name, sizeof(name));
	MR_CHECK(strcmp(name, "auto") == 0);
	for (i = 0; mr_pathsel_algo(i); i++) {
		mr_policy_choice(MR_KNOB_PATHSEL, i + 1, name, sizeof(name));
		MR_CHECK(strcmp(name, mr_pathsel_algo(i)->name) == 0);
	}
	MR_CHECK_EQ(d[MR_KNOB_PATHSEL].max, (int64_t)i);
	mr_policy_choice(MR_KNOB_CC, 99, name, sizeof(name));
	MR_CHECK(name[0] == 0);
}

/* MR-POL-1: defaults per mode; paths 4 per plane up to 64. */
static void test_defaults(void)
{
	struct mr_policy p;
	struct mr_knobs k;
	char err[256];

	clean_env();
	resolve(&k, NULL);
	MR_CHECK_EQ(mr_policy_resolve(&k, 2, &p, err, sizeof(err)), 0);
	MR_CHECK_EQ(p.mode, MR_MODE_METAROCE);
	MR_CHECK(strcmp(p.cc->name, "metaroce") == 0);
	MR_CHECK(strcmp(p.pathsel->name, "spray") == 0);
	MR_CHECK_EQ(p.paths, 8);
	MR_CHECK_EQ(mr_policy_resolve(&k, 1, &p, err, sizeof(err)), 0);
	MR_CHECK_EQ(p.paths, 4);
	MR_CHECK_EQ(mr_policy_resolve(&k, 0, &p, err, sizeof(err)), 0);
	MR_CHECK_EQ(p.paths, 4);
	resolve(&k, "mode=gbn");
	MR_CHECK_EQ(mr_policy_resolve(&k, 2, &p, err, sizeof(err)), 0);
	MR_CHECK_EQ(p.mode, MR_MODE_GBN);
	MR_CHECK(strcmp(p.cc->name, "dcqcn") == 0);
	MR_CHECK(strcmp(p.pathsel->name, "single") == 0);
	resolve(&k, "cc=fixed");
	MR_CHECK_EQ(mr_policy_resolve(&k, 2, &p, err, sizeof(err)), 0);
	MR_CHECK(strcmp(p.cc->name, "fixed") == 0);
}

/* MR-POL-2: gbn sprays nothing; paths below the planes are refused with
 * one message, and *out is untouched. */
static void test_refused(void)
{
	struct mr_policy p = { .paths = 77 };
	struct mr_knobs k;
	char err[256];

	clean_env();
	resolve(&k, "pathsel=spray");
	setenv("METAROCE_MODE", "gbn", 1);
	resolve(&k, "pathsel=spray");
	MR_CHECK_EQ(mr_policy_resolve(&k, 1, &p, err, sizeof(err)), -1);
	MR_CHECK(strstr(err, "gbn mode runs one path") != NULL);
	MR_CHECK_EQ(p.paths, 77);
	unsetenv("METAROCE_MODE");
	resolve(&k, "paths=1");
	MR_CHECK_EQ(mr_policy_resolve(&k, 2, &p, err, sizeof(err)), -1);
	MR_CHECK(strstr(err, "expected 2..") != NULL);
	MR_CHECK_EQ(p.paths, 77);
}

/* MR-POL-3: the environment overrides the record. */
static void test_env_overrides(void)
{
	struct mr_policy p;
	struct mr_knobs k;
	char err[256];

	clean_env();
	setenv("METAROCE_CC", "metaroce-nohint", 1);
	resolve(&k, "cc=dcqcn");
	MR_CHECK_EQ(mr_policy_resolve(&k, 1, &p, err, sizeof(err)), 0);
	MR_CHECK(strcmp(p.cc->name, "metaroce-nohint") == 0);
	MR_CHECK_EQ(k.src[MR_KNOB_CC], MR_KNOB_SRC_ENV);
	setenv("METAROCE_CC", "cubic", 1);
	{
		struct mr_knob_set set;

		memset(&set, 0, sizeof(set));
		MR_CHECK_EQ(mr_knobs_resolve(&k, &set, err, sizeof(err)), -1);
		MR_CHECK(strstr(err, "METAROCE_CC") != NULL);
	}
	clean_env();
}

MR_TEST_MAIN(MR_TEST(test_choices_are_the_registry), MR_TEST(test_defaults),
	     MR_TEST(test_refused), MR_TEST(test_env_overrides))
