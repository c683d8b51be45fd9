// SPDX-License-Identifier: BSD-2-Clause
/* The transport policy of a device from its knobs (MR-POL-1, -2). */
#include "mr_policy.h"

#include <stdio.h>
#include <string.h>

#include "mr_cc.h"
#include "mr_pathsel.h"

void mr_policy_choice(int knob, int64_t v, char *buf, size_t cap)
{
	const char *p = mr_knob_defs()[knob].choices;
	int64_t i = 0;
	size_t n;

	buf[0] = 0;
	if (!p)
		return;
	while (i < v && (p = strchr(p, '|'))) {
		p++;
		i++;
	}
	if (!p)
		return;
	n = strcspn(p, "|");
	if (n >= cap)
		n = cap - 1;
	memcpy(buf, p, n);
	buf[n] = 0;
}

int mr_policy_resolve(const struct mr_knobs *k, unsigned nplanes,
		      struct mr_policy *out, char *err, size_t errlen)
{
	unsigned planes = nplanes ? nplanes : 1;
	char cc[32], ps[32];
	struct mr_policy p;
	int64_t paths;

	memset(&p, 0, sizeof(p));
	p.mode = mr_knob_get(k, MR_KNOB_MODE) ? MR_MODE_GBN : MR_MODE_METAROCE;
	mr_policy_choice(MR_KNOB_CC, mr_knob_get(k, MR_KNOB_CC), cc,
			 sizeof(cc));
	if (!strcmp(cc, "auto"))
		strcpy(cc, p.mode == MR_MODE_GBN ? "dcqcn" : "metaroce");
	mr_policy_choice(MR_KNOB_PATHSEL, mr_knob_get(k, MR_KNOB_PATHSEL), ps,
			 sizeof(ps));
	if (!strcmp(ps, "auto"))
		strcpy(ps, p.mode == MR_MODE_GBN ? "single" : "spray");
	p.cc = mr_cc_find(cc);
	p.pathsel = mr_pathsel_find(ps);
	if (!p.cc || !p.pathsel) {
		snprintf(err, errlen, "%s '%s': lib/core has no such algorithm",
			 p.cc ? "pathsel" : "cc", p.cc ? ps : cc);
		return -1;
	}
	if (p.mode == MR_MODE_GBN && strcmp(ps, "single")) {
		snprintf(err, errlen,
			 "pathsel '%s': gbn mode runs one path (single)", ps);
		return -1;
	}
	paths = mr_knob_get(k, MR_KNOB_PATHS);
	if (k->src[MR_KNOB_PATHS] == MR_KNOB_SRC_DEFAULT) {
		/* MR-POL-1: the default grows with the planes (the row's
		 * default is the figure for one plane). */
		paths = MR_POLICY_PATHS_PER_PLANE * (int64_t)planes;
		if (paths > MR_MAX_PATHS)
			paths = MR_MAX_PATHS;
	}
	if (paths < planes || paths > MR_MAX_PATHS) {
		snprintf(err, errlen,
			 "paths %lld: the device has %u planes: expected "
			 "%u..%u (at least one path per plane)",
			 (long long)paths, planes, planes, MR_MAX_PATHS);
		return -1;
	}
	p.paths = (uint16_t)paths;
	*out = p;
	return 0;
}
