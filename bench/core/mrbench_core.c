// SPDX-License-Identifier: BSD-2-Clause
/*
 * The core's own cost: two endpoints in one process, no I/O, joined by the
 * unit harness's scripted link (tests/unit/sim/) with a tiny fixed delay.
 * Node 0 streams 1 MiB RDMA WRITEs to node 1 (4096-byte MTU, a window of
 * messages in flight) until a fixed number of messages completed; the
 * process CPU time of that loop (CLOCK_PROCESS_CPUTIME_ID, one thread, so
 * one core) gives packets per second per core. The CPU time includes the
 * harness (link queue copies, placement memcpy), so it is an upper bound
 * on the core's own cost.
 *
 * Usage: mrbench-core [-m msgs] [-o results.md] [-c "command line"]
 *                     [-C results.csv]
 * -C writes the same rows as comma-separated values (one header line), the
 * data set bench/core/plot.sh draws from.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>

#include "mr_counters.h"
#include "mrsim_scen.h"
#include "mrsim_world.h"

#define MSG_LEN (1u << 20)
#define MTU 4096
#define WINDOW 8 /* messages in flight */

struct bench {
	struct mrsim_world w;
	struct mr_qp *qp[2];
	struct mrsim_region *src, *tgt;
	unsigned target, posted, done_msgs;
	int failed;
};

struct row {
	const char *mode;
	double loss;
	unsigned msgs;
	double cpu_s;
	double harness_s; /* the harness's share, measured alone */
	uint64_t data_pkts, ack_pkts, retx, all_pkts;
	uint64_t sim_ns;
};

static uint64_t post_more(void *user, struct mrsim_world *w)
{
	struct bench *b = user;
	size_t i;

	/* Count completions; every WRITE is signaled. */
	for (i = b->done_msgs; i < w->node[0].ncqe; i++)
		if (w->node[0].cqes[i].c.status != MR_WC_SUCCESS)
			b->failed = 1;
	b->done_msgs = (unsigned)w->node[0].ncqe;
	while (b->posted < b->target && b->posted - b->done_msgs < WINDOW) {
		struct mr_sge sge = { .addr = b->src->iova,
				      .length = MSG_LEN,
				      .lkey = b->src->lkey };
		struct mr_send_wr wr = { .wr_id = b->posted,
					 .opcode = MR_WR_RDMA_WRITE,
					 .flags = MR_SEND_SIGNALED,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .remote_addr = b->tgt->iova,
					 .rkey = b->tgt->rkey };

		if (mr_qp_post_send(b->qp[0], &wr, w->now)) {
			b->failed = 1;
			break;
		}
		b->posted++;
	}
	return UINT64_MAX;
}

static int all_done(void *user)
{
	struct bench *b = user;

	return b->failed || b->done_msgs >= b->target;
}

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The harness's own per-packet work, without the core: every packet of
 * the run through a link direction (copy in, heap, copy out) and, for data
 * packets, the placement memcpy. Subtracted to estimate the core alone. */
static double harness_cost(uint64_t data_pkts, uint64_t ack_pkts)
{
	static uint8_t pkt[MTU + 128], dst[MTU];
	struct mrsim_link_cfg l = { .delay_ns = 1000 };
	struct mrsim_dir d;
	uint64_t i, n = data_pkts + ack_pkts;
	double t0, t;

	memset(pkt, 0x5a, sizeof(pkt));
	if (mrsim_dir_init(&d, &l, 1, 0))
		return 0;
	t0 = cpu_now();
	for (i = 0; i < n; i++) {
		int data = i < data_pkts;
		struct mrsim_pkt *p;

		mrsim_dir_send(&d, i, pkt, data ? sizeof(pkt) : 120, 0);
		while ((p = mrsim_dir_pop(&d, i))) {
			if (p->len > 200)
				memcpy(dst, p->data + 100, MTU);
			mrsim_dir_release(&d, p);
		}
	}
	while (mrsim_dir_pop(&d, UINT64_MAX))
		;
	t = cpu_now() - t0;
	mrsim_dir_fini(&d);
	return t;
}

static int run_one(enum mr_mode mode, uint32_t loss_ppm, unsigned msgs,
		   struct row *r)
{
	struct mrsim_link_cfg l = { .delay_ns = 1000, .loss_ppm = loss_ppm };
	struct mr_ep_config ec = { .mtu = MTU,
				   .num_paths = mode == MR_MODE_GBN ? 1 : 4,
				   .max_qp = 2 };
	struct mrsim_rc_opts o = { .mode = mode,
				   .max_send_wr = 2 * WINDOW,
				   .max_recv_wr = 4,
				   .timeout = 8,
				   .retry_cnt = 7,
				   .rnr_retry = 7,
				   .min_rnr_timer = 1,
				   .psn = { 1000, 2000 } };
	const uint32_t qpn[2] = { 0x10, 0x20 };
	struct bench *b = calloc(1, sizeof(*b));
	const struct mr_counters *c0, *c1;
	double t0;
	int rc = -1, i;

	if (!b)
		return -1;
	if (mrsim_world_init(&b->w, &ec, &l, &l, 0xbe7c4 + loss_ppm))
		goto out;
	b->src = mrsim_mem_reg(&b->w.node[0].mem, 0, MSG_LEN, 1, 0);
	b->tgt = mrsim_mem_reg(&b->w.node[1].mem, 0, MSG_LEN, 1,
			       MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE);
	if (!b->src || !b->tgt)
		goto out;
	if (mrsim_rc_connect(&b->w, &o, qpn, b->qp))
		goto out;
	b->target = msgs;
	b->w.on_instant = post_more;
	b->w.on_instant_user = b;
	t0 = cpu_now();
	i = mrsim_world_run(&b->w, all_done, b, UINT64_MAX - 1);
	r->cpu_s = cpu_now() - t0;
	if (i || b->failed) {
		fprintf(stderr, "run failed: %d %s\n", i, b->w.why);
		goto out;
	}
	c0 = mr_ep_counters(b->w.node[0].ep);
	c1 = mr_ep_counters(b->w.node[1].ep);
	r->mode = mode == MR_MODE_GBN ? "gbn" : "metaroce";
	r->loss = loss_ppm / 1e4;
	r->msgs = msgs;
	r->data_pkts = c0->tx_data_pkts + c0->retx_pkts;
	r->retx = c0->retx_pkts;
	r->ack_pkts = c1->tx_ack_pkts;
	r->all_pkts = c0->tx_pkts + c1->tx_pkts;
	r->sim_ns = b->w.now;
	r->harness_s = harness_cost(r->data_pkts, r->all_pkts - r->data_pkts);
	rc = 0;
out:
	for (i = 0; i < 2; i++)
		if (b->qp[i])
			mr_qp_destroy(b->qp[i]);
	mrsim_world_fini(&b->w);
	free(b);
	return rc;
}

static void print_table(FILE *f, const struct row *rows, int n)
{
	int i;

	fprintf(f, "| mode | loss | messages | data pkts (incl. retx) | "
		   "retx | ACK pkts | CPU s | data Mpps/core | all Mpps/core "
		   "| payload Gb/s/core | harness CPU s | core-only data "
		   "Mpps/core |\n");
	fprintf(f, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | "
		   "---: | ---: | ---: | ---: |\n");
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];
		double goodput = (double)r->msgs * MSG_LEN * 8 / r->cpu_s / 1e9;

		fprintf(f,
			"| %s | %.0f%% | %u | %llu | %llu | %llu | %.3f | "
			"%.3f | %.3f | %.1f | %.3f | %.3f |\n",
			r->mode, r->loss, r->msgs,
			(unsigned long long)r->data_pkts,
			(unsigned long long)r->retx,
			(unsigned long long)r->ack_pkts, r->cpu_s,
			r->data_pkts / r->cpu_s / 1e6,
			r->all_pkts / r->cpu_s / 1e6, goodput, r->harness_s,
			r->data_pkts / (r->cpu_s - r->harness_s) / 1e6);
	}
}

/* The rows of print_table, unrounded: what bench/core/plot.sh draws. */
static int write_csv(const char *path, const struct row *rows, int n)
{
	FILE *f = fopen(path, "w");
	int i;

	if (!f) {
		perror(path);
		return -1;
	}
	fprintf(f, "mode,loss_pct,messages,data_pkts,retx_pkts,ack_pkts,"
		   "cpu_s,data_mpps_core,all_mpps_core,payload_gbps_core,"
		   "harness_cpu_s,core_only_data_mpps_core\n");
	for (i = 0; i < n; i++) {
		const struct row *r = &rows[i];

		fprintf(f,
			"%s,%.0f,%u,%llu,%llu,%llu,%.4f,%.4f,%.4f,%.3f,"
			"%.4f,%.4f\n",
			r->mode, r->loss, r->msgs,
			(unsigned long long)r->data_pkts,
			(unsigned long long)r->retx,
			(unsigned long long)r->ack_pkts, r->cpu_s,
			r->data_pkts / r->cpu_s / 1e6,
			r->all_pkts / r->cpu_s / 1e6,
			(double)r->msgs * MSG_LEN * 8 / r->cpu_s / 1e9,
			r->harness_s,
			r->data_pkts / (r->cpu_s - r->harness_s) / 1e6);
	}
	if (fclose(f)) {
		perror(path);
		return -1;
	}
	return 0;
}

static void machine(FILE *f)
{
	struct utsname u;
	char line[256];
	FILE *ci = fopen("/proc/cpuinfo", "r");
	int ncpu = 0;
	char model[256] = "unknown";

	if (ci) {
		while (fgets(line, sizeof(line), ci)) {
			if (!strncmp(line, "model name", 10)) {
				char *p = strchr(line, ':');

				ncpu++;
				if (p) {
					snprintf(model, sizeof(model), "%s",
						 p + 2);
					model[strcspn(model, "\n")] = 0;
				}
			}
		}
		fclose(ci);
	}
	uname(&u);
	fprintf(f,
		"- machine: %s, %d logical CPUs (shared with other jobs "
		"while measured)\n",
		model, ncpu);
	fprintf(f, "- kernel: %s %s %s\n", u.sysname, u.release, u.machine);
	fprintf(f, "- compiler: %s, build: %s\n", __VERSION__,
#ifdef __OPTIMIZE__
		"optimized"
#else
		"not optimized"
#endif
	);
}

int main(int argc, char **argv)
{
	static const struct {
		enum mr_mode mode;
		uint32_t loss_ppm;
	} cfgs[] = {
		{ MR_MODE_METAROCE, 0 },
		{ MR_MODE_METAROCE, 10000 },
		{ MR_MODE_GBN, 0 },
		{ MR_MODE_GBN, 10000 },
	};
	struct row rows[4];
	const char *out = NULL, *cmd = NULL, *csv = NULL;
	unsigned msgs = 200;
	int opt, i;
	time_t now = time(NULL);
	char date[64];
	FILE *f;

	while ((opt = getopt(argc, argv, "m:o:c:C:")) != -1) {
		switch (opt) {
		case 'm':
			msgs = (unsigned)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			out = optarg;
			break;
		case 'c':
			cmd = optarg;
			break;
		case 'C':
			csv = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: %s [-m msgs] [-o results.md] "
				"[-c command] [-C results.csv]\n",
				argv[0]);
			return 2;
		}
	}
	if (!msgs) {
		fprintf(stderr, "-m: need at least one message\n");
		return 2;
	}
	for (i = 0; i < 4; i++) {
		if (run_one(cfgs[i].mode, cfgs[i].loss_ppm, msgs, &rows[i])) {
			fprintf(stderr, "benchmark configuration %d failed\n",
				i);
			return 1;
		}
		fprintf(stderr, "%s %.0f%%: %.3f s CPU\n", rows[i].mode,
			rows[i].loss, rows[i].cpu_s);
	}
	print_table(stdout, rows, 4);
	if (csv && write_csv(csv, rows, 4))
		return 1;
	if (!out)
		return 0;
	f = fopen(out, "w");
	if (!f) {
		perror(out);
		return 1;
	}
	strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
	fprintf(f, "# lib/core cost: two endpoints in one process, no I/O\n\n");
	fprintf(f,
		"Node 0 streams 1 MiB RDMA WRITEs (%u in flight, 4096-byte "
		"MTU) to node 1 over the unit harness's scripted link (1 us "
		"delay, random loss as given, both directions); metaroce "
		"sprays 4 paths, gbn uses 1. CPU time is "
		"CLOCK_PROCESS_CPUTIME_ID of the event loop (one thread = one "
		"core), and includes the harness's own work (link queue "
		"copies, placement memcpy). 'harness CPU s' replays the same "
		"packet count through the link and memcpy alone; the last "
		"column divides the data packets by the difference, an "
		"estimate of the core alone (ICRC CRC32C over every packet "
		"twice, headers, SACK/ACK processing, gather copy into the "
		"transmit buffer). 'data pkts' are requests sent including "
		"retransmissions; 'all' adds ACKs.\n\n",
		WINDOW);
	print_table(f, rows, 4);
	fprintf(f, "\n- command: `%s`\n", cmd ? cmd : argv[0]);
	fprintf(f, "- date: %s\n", date);
	machine(f);
	fclose(f);
	return 0;
}
