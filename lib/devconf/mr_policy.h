/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The transport policy a device runs (docs/spec/reliability.md MR-POL-*):
 * reliability mode, congestion controller, path selection and paths per
 * connection, from the knobs `mode`, `cc`, `pathsel` and `paths`
 * (mr_knobs.h: defaults < device record `--opt` < METAROCE_<KNOB>) and
 * lib/core's registries of algorithms. The provider applies it to every
 * connection of the device.
 *
 * The knob rows name the choices; tests/unit/test_policy.c checks that
 * they are exactly the registries' names, so a new algorithm is its file,
 * its registry line and its name in the knob row.
 *
 * Threading: none; no allocation.
 */
#ifndef MR_POLICY_H
#define MR_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "mr_core.h"
#include "mr_knobs.h"

/* Default paths per connection: this many per plane (MR-POL-1). */
#define MR_POLICY_PATHS_PER_PLANE 4

struct mr_policy {
	enum mr_mode mode;
	const struct mr_cc_ops *cc;
	const struct mr_pathsel_ops *pathsel;
	uint16_t paths; /* per connection, >= planes */
};

/* The policy of knobs k on a device of nplanes planes. Returns 0, or -1
 * with one line in err naming the bad value and what is accepted (a
 * controller or path policy the core does not have, a path policy that
 * gbn mode cannot run, fewer paths than planes); *out is then untouched. */
int mr_policy_resolve(const struct mr_knobs *k, unsigned nplanes,
		      struct mr_policy *out, char *err, size_t errlen);

/* The name of choice v of a MR_KNOB_CHOICE knob into buf ("" if none). */
void mr_policy_choice(int knob, int64_t v, char *buf, size_t cap);

#endif /* MR_POLICY_H */
