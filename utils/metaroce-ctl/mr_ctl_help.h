/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The help line of a counter by its Prometheus name (metaroce-ctl stats
 * --prom writes it as # HELP), from the same tables that make the
 * counters and the stats file: lib/dp/mrdp_counters.h (device, plane,
 * drops by reason), lib/core/mr_counters.h (engine) and MR_PATH_COUNTERS
 * (paths).
 */
#ifndef MR_CTL_HELP_H
#define MR_CTL_HELP_H

/* NULL when the name is none of the tables' (a newer writer's field). */
const char *mrctl_counter_help(const char *metric);

#endif /* MR_CTL_HELP_H */
