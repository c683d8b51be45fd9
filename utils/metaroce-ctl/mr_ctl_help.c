/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_ctl_help.h"

#include <stdio.h>
#include <string.h>

#include "mr_core.h"
#include "mr_counters.h"
#include "mrdp_counters.h"

struct help {
	const char *name; /* after "metaroce_" */
	const char *help;
};

/* The names the stats file's JSON gives them (lib/dp/mrdp_stats.c), as
 * print_prom turns a path of keys into a name: "planes" -> "plane_". */
#define DEV(name, help) { #name, help },
#define PLANE(name, help) { "plane_" #name, help },
#define REASON(id, reason, help) { PREFIX #reason, help },
#define PLANE_BY(name, reasons, n, help) /* below, per table */
static const struct help fixed[] = {
	{ "processes", "processes whose counters are summed" },
	{ "counters_age_seconds", "age of the newest counters file" },
	MRDP_DEV_COUNTERS(DEV) MRDP_PLANE_COUNTERS(PLANE, PLANE_BY)
#define PREFIX "plane_rx_drop_"
		MRDP_RX_DROPS(REASON)
#undef PREFIX
#define PREFIX "plane_tx_drop_"
			MRDP_TX_DROPS(REASON)
#undef PREFIX
#define PATH(name, help) { "path_" #name, help },
				MR_PATH_COUNTERS(PATH)
};

const char *mrctl_counter_help(const char *metric)
{
	const char *const *names = mr_counters_names();
	const char *const *help = mr_counters_help();
	const char *m;
	size_t i;

	if (strncmp(metric, "metaroce_", 9))
		return NULL;
	m = metric + 9;
	for (i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		if (!strcmp(m, fixed[i].name))
			return fixed[i].help;
	if (strncmp(m, "engine_", 7))
		return NULL;
	for (i = 0; i < MR_COUNTERS_N; i++)
		if (!strcmp(m + 7, names[i]))
			return help[i];
	return NULL;
}
