// SPDX-License-Identifier: BSD-2-Clause
/*
 * What a run writes into its output directory (mrsim_net.h):
 *   summary.json    totals, FCT percentiles, the resolved scenario (json-c)
 *   timeseries.csv  per sample: goodput, each plane's and path's use, the
 *                   deepest and total switch queue
 *   queues.csv      per sample and non-empty switch port: its queue
 *   flows.csv       per connection: its flow's first byte placed and end,
 *                   its sending QP's retransmissions, RTOs, suspicions
 *   hosts.csv       per host: first byte received, last flow to it done,
 *                   bytes of each uplink and downlink
 *   *.png           goodput, planes, queue over time (gnuplot)
 */
#include <errno.h>
#include <inttypes.h>
#include <json-c/json.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mr_counters.h"
#include "mrsim_net.h"
#include "mrsim_redraw.h"

int mrsim_mkdirs(const char *path)
{
	char b[512], *p;

	if (strlen(path) >= sizeof(b))
		return -1;
	strcpy(b, path);
	for (p = b + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(b, 0777) && errno != EEXIST)
			return -1;
		*p = '/';
	}
	return mkdir(b, 0777) && errno != EEXIST ? -1 : 0;
}

static FILE *open_in(struct mrsim_world *w, const char *name)
{
	char p[600];

	snprintf(p, sizeof(p), "%s/%s", w->scn.out, name);
	return fopen(p, "w");
}

int mrsim_out_open(struct mrsim_world *w, char *err, size_t errlen)
{
	int k;

	if (mrsim_mkdirs(w->scn.out)) {
		snprintf(err, errlen, "out: cannot create %s: %s", w->scn.out,
			 strerror(errno));
		return -1;
	}
	w->ts = open_in(w, "timeseries.csv");
	w->qcsv = open_in(w, "queues.csv");
	w->path_prev = calloc((size_t)w->paths, sizeof(uint64_t));
	if (!w->ts || !w->qcsv || !w->path_prev) {
		snprintf(err, errlen, "out: cannot write in %s: %s", w->scn.out,
			 strerror(errno));
		return -1;
	}
	fprintf(w->ts, "t_us,goodput_gbps");
	for (k = 0; k < w->scn.planes; k++)
		fprintf(w->ts, ",plane%d_gbps", k);
	for (k = 0; k < w->paths; k++)
		fprintf(w->ts, ",path%d_gbps", k);
	fprintf(w->ts, ",queue_max_bytes,queue_total_bytes,"
		       "up_idle_all_pct,up_idle_skew_pct,up_idle_nic_pct,"
		       "down_idle_all_pct,down_idle_skew_pct\n");
	fprintf(w->qcsv, "t_us,kind,plane,leaf,spine_or_host,bytes\n");
	return 0;
}

static const char *kind_name[MRSIM_PORT_KINDS] = { "host_up", "leaf_down",
						   "leaf_up", "spine_down" };

void mrsim_out_sample(struct mrsim_world *w)
{
	double us = w->scn.sample_us, t = w->q.now / 1e6;
	double gbps = 8.0 / (us * 1e3); /* bytes in the interval -> Gb/s */
	uint64_t plane[8] = { 0 }, qmax = 0, qsum = 0, cur[MR_MAX_PATHS];
	struct mr_path_counters pc[MR_MAX_PATHS];
	int i, k;

	for (i = 0; i < w->nport; i++) {
		struct mrsim_port *p = w->port[i];

		if (p->kind == MRSIM_HOST_UP)
			plane[p->plane] += p->sample_bytes;
		p->sample_bytes = 0;
		if (p->kind == MRSIM_HOST_UP)
			continue;
		if (p->qbytes > qmax)
			qmax = p->qbytes;
		qsum += p->qbytes;
		if (p->qbytes)
			fprintf(w->qcsv, "%.3f,%s,%d,%d,%d,%llu\n", t,
				kind_name[p->kind], p->plane, p->leaf,
				p->kind == MRSIM_LEAF_DOWN ? p->host : p->spine,
				(unsigned long long)p->qbytes);
	}
	memset(cur, 0, sizeof(cur));
	for (i = 0; i < w->scn.hosts; i++) {
		unsigned n = mr_ep_path_counters(w->host[i].ep, pc,
						 MR_MAX_PATHS);

		for (k = 0; k < (int)n && k < w->paths; k++)
			cur[k] += pc[k].tx_bytes;
	}
	fprintf(w->ts, "%.3f,%.4f", t, w->st.sample_placed * gbps);
	w->st.sample_placed = 0;
	for (k = 0; k < w->scn.planes; k++)
		fprintf(w->ts, ",%.4f", plane[k] * gbps);
	for (k = 0; k < w->paths; k++) {
		fprintf(w->ts, ",%.4f", (cur[k] - w->path_prev[k]) * gbps);
		w->path_prev[k] = cur[k];
	}
	fprintf(w->ts, ",%llu,%llu", (unsigned long long)qmax,
		(unsigned long long)qsum);
	/* Host ports' idle time by cause (enum mrsim_idle), % of the
	 * ports' time in the interval. */
	for (i = 0; i < w->nport; i++) {
		struct mrsim_port *p = w->port[i];

		if (p->kind == MRSIM_HOST_UP || p->to_host >= 0)
			mrsim_port_idle(p, p->idle_why);
	}
	for (k = 0; k < 2; k++) {
		double span = us * 1e6 * w->scn.hosts * w->scn.planes / 100;
		int c;

		for (c = MRSIM_IDLE_ALL; c < (k ? MRSIM_IDLE_NIC
						 : MRSIM_IDLE_CAUSES);
		     c++) {
			fprintf(w->ts, ",%.2f", w->st.sample_idle[k][c] / span);
			w->st.sample_idle[k][c] = 0;
		}
	}
	fprintf(w->ts, "\n");
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double pct(const double *v, int n, double p)
{
	int i = (int)(p * (n - 1) + 0.5);

	return n ? v[i < n ? i : n - 1] : 0;
}

static void plot(struct mrsim_world *w)
{
	char cmd[700];
	FILE *g;
	int k;

	snprintf(cmd, sizeof(cmd), "cd '%s' && gnuplot 2>/dev/null",
		 w->scn.out);
	g = popen(cmd, "w");
	if (!g)
		return;
	fprintf(g, "set terminal png size 900,500\nset datafile separator ','\n"
		   "set key outside\nset xlabel 'time (us)'\nset grid\n");
	fprintf(g, "set output 'goodput.png'\nset ylabel 'Gb/s'\n"
		   "set title 'goodput (placed bytes)'\n"
		   "plot 'timeseries.csv' using 1:2 with lines title "
		   "'goodput'\n");
	fprintf(g, "set output 'planes.png'\nset title 'sent per plane "
		   "(host uplinks, wire bytes)'\nplot ");
	for (k = 0; k < w->scn.planes; k++)
		fprintf(g,
			"%s'timeseries.csv' using 1:%d with lines title "
			"'plane %d'",
			k ? ", " : "", 3 + k, k);
	fprintf(g, "\nset output 'paths.png'\nset title 'sent per path id "
		   "(all QPs)'\nplot ");
	for (k = 0; k < w->paths; k++)
		fprintf(g,
			"%s'timeseries.csv' using 1:%d with lines title "
			"'path %d'",
			k ? ", " : "", 3 + w->scn.planes + k, k);
	fprintf(g,
		"\nset output 'queue.png'\nset ylabel 'bytes'\n"
		"set title 'switch queues'\nplot 'timeseries.csv' using "
		"1:%d with lines title 'deepest', '' using 1:%d with lines "
		"title 'total'\n",
		3 + w->scn.planes + w->paths, 4 + w->scn.planes + w->paths);
	if (pclose(g))
		fprintf(stderr, "metaroce-sim: gnuplot failed or is missing: "
				"no plots (scripts/deps.sh installs it)\n");
}

#define ADD(o, k, v) json_object_object_add(o, k, v)

/* flows.csv: each flow's first byte placed and its end, and what its
 * sending QP went through (where a collective's start and tail go). */
static void flows_csv(struct mrsim_world *w)
{
	FILE *f = open_in(w, "flows.csv");
	int i;

	if (!f)
		return;
	fprintf(f, "flow,src,dst,first_rx_us,end_us,retx_pkts,timeouts,"
		   "path_suspects,path_suspects_false,ecn_ce_echoed\n");
	for (i = 0; i < w->nconn; i++) {
		const struct mrsim_conn *c = &w->conn[i];
		const struct mrsim_flow *fl = &w->flow[c->flow];
		const struct mr_counters *k = mr_qp_counters(c->qs);

		fprintf(f, "%d,%d,%d,%.3f,%.3f,%" PRIu64 ",%" PRIu64 ",%" PRIu64
			   ",%" PRIu64 ",%" PRIu64 "\n",
			c->flow, c->src, c->dst,
			fl->first_rx_ps ? (fl->first_rx_ps - w->st.first_ps) / 1e6
					: -1.0,
			fl->end_ps ? (fl->end_ps - fl->start_ps) / 1e6 : -1.0,
			k->retx_pkts, k->timeouts, k->path_suspects,
			k->path_suspects_false, k->ecn_ce_echoed);
	}
	fclose(f);
}

/* hosts.csv: each host's first byte received and last flow done (as a
 * receiver), and the bytes each of its uplinks and downlinks carried
 * (a receiver's planes loaded unevenly make it finish late). */
static void hosts_csv(struct mrsim_world *w)
{
	FILE *f = open_in(w, "hosts.csv");
	int i, k, n = w->scn.planes;

	if (!f)
		return;
	fprintf(f, "host,first_rx_us,last_end_us");
	for (k = 0; k < n; k++)
		fprintf(f, ",up%d_bytes", k);
	for (k = 0; k < n; k++)
		fprintf(f, ",down%d_bytes", k);
	fprintf(f, "\n");
	for (i = 0; i < w->scn.hosts; i++) {
		uint64_t first = UINT64_MAX, last = 0;
		int j;

		for (j = 0; j < w->nflow; j++) {
			const struct mrsim_flow *fl = &w->flow[j];

			if (fl->dst != i)
				continue;
			if (fl->first_rx_ps && fl->first_rx_ps < first)
				first = fl->first_rx_ps;
			if (fl->end_ps > last)
				last = fl->end_ps;
		}
		fprintf(f, "%d,%.3f,%.3f", i,
			first != UINT64_MAX ? (first - w->st.first_ps) / 1e6
					    : -1.0,
			last ? (last - w->st.first_ps) / 1e6 : -1.0);
		for (k = 0; k < n; k++)
			fprintf(f, ",%" PRIu64, w->host[i].nic[k]->tx_bytes);
		for (k = 0; k < n; k++)
			fprintf(f, ",%" PRIu64, w->host[i].down[k]->tx_bytes);
		fprintf(f, "\n");
	}
	fclose(f);
}

int mrsim_out_finish(struct mrsim_world *w, double wall_s, double setup_s)
{
	struct json_object *o = json_object_new_object(), *a;
	struct mrsim_stats *st = &w->st;
	uint64_t drops[3] = { 0 }, marked = 0, corrupted = 0, qmax = 0;
	uint64_t retx = 0, tmo = 0, done_bytes = 0, span;
	uint64_t sus = 0, sus_false = 0, tlp = 0, payload = 0, up_bytes = 0;
	double *fct = malloc(sizeof(double) * (size_t)(w->nflow + 1));
	double sx = 0, sxx = 0;
	int i, nf = 0, is_coll;
	char p[600];

	for (i = 0; i < w->nport; i++) {
		const struct mrsim_port *pt = w->port[i];

		drops[0] += pt->drops_overflow;
		drops[1] += pt->drops_loss;
		drops[2] += pt->drops_failed;
		marked += pt->ecn_marked;
		corrupted += pt->corrupted;
		if (pt->kind != MRSIM_HOST_UP && pt->qmax > qmax)
			qmax = pt->qmax;
		if (pt->kind == MRSIM_HOST_UP)
			up_bytes += pt->tx_bytes;
	}
	for (i = 0; i < w->scn.hosts; i++) {
		const struct mr_counters *c = mr_ep_counters(w->host[i].ep);

		retx += c->retx_pkts;
		tmo += c->timeouts;
		sus += c->path_suspects;
		sus_false += c->path_suspects_false;
		tlp += c->tail_probes;
		payload += c->tx_payload_bytes;
	}
	for (i = 0; i < w->nflow; i++) {
		const struct mrsim_flow *f = &w->flow[i];

		done_bytes += f->done_bytes;
		if (f->done_bytes < f->bytes || !f->end_ps)
			continue;
		fct[nf++] = st->fct_us[i];
		{
			double x = (double)f->bytes /
				   (double)(f->end_ps - f->start_ps + 1);

			sx += x;
			sxx += x * x;
		}
	}
	qsort(fct, (size_t)nf, sizeof(double), cmp_dbl);
	span = st->last_done_ps > st->first_ps ? st->last_done_ps - st->first_ps
					       : 1;
	is_coll = !strcmp(w->scn.workload, "alltoall") ||
		  !strcmp(w->scn.workload, "allreduce");
	ADD(o, "complete", json_object_new_boolean(w->done));
	ADD(o, "goodput_gbps",
	    json_object_new_double((double)done_bytes * 8000.0 / (double)span));
	ADD(o, "fct_p50_us", json_object_new_double(pct(fct, nf, 0.5)));
	ADD(o, "fct_p99_us", json_object_new_double(pct(fct, nf, 0.99)));
	ADD(o, "fct_max_us", json_object_new_double(nf ? fct[nf - 1] : 0));
	ADD(o, "collective_us",
	    is_coll && w->done ? json_object_new_double(span / 1e6) : NULL);
	ADD(o, "flows", json_object_new_int(w->nflow));
	ADD(o, "flows_done", json_object_new_int(nf));
	ADD(o, "bytes_done", json_object_new_uint64(done_bytes));
	ADD(o, "msgs_total", json_object_new_uint64(st->msgs_total));
	ADD(o, "msgs_done", json_object_new_uint64(st->msgs_done));
	ADD(o, "retx_pkts", json_object_new_uint64(retx));
	ADD(o, "timeouts", json_object_new_uint64(tmo));
	/* MR-MP-8: silences suspected, and those a late ACK proved false */
	ADD(o, "path_suspects", json_object_new_uint64(sus));
	ADD(o, "path_suspects_false", json_object_new_uint64(sus_false));
	/* MR-TMR-9: tail-loss probes sent */
	ADD(o, "tail_probes", json_object_new_uint64(tlp));
	/* What is not payload on the hosts' uplinks: headers and framing of
	 * every packet, ACKs, retransmissions, probes (payload counted once,
	 * at its first send); and the ACKs' share of it. */
	ADD(o, "overhead_wire_bytes",
	    json_object_new_uint64(up_bytes > payload ? up_bytes - payload : 0));
	ADD(o, "ack_pkts", json_object_new_uint64(st->ack_pkts));
	ADD(o, "ack_wire_bytes", json_object_new_uint64(st->ack_wire_bytes));
	ADD(o, "max_queue_bytes", json_object_new_uint64(qmax));
	ADD(o, "drops_overflow", json_object_new_uint64(drops[0]));
	ADD(o, "drops_loss", json_object_new_uint64(drops[1]));
	ADD(o, "drops_failed", json_object_new_uint64(drops[2]));
	mrsim_redraw_json(w, o);
	ADD(o, "corrupted_pkts", json_object_new_uint64(corrupted));
	ADD(o, "ecn_marked_pkts", json_object_new_uint64(marked));
	ADD(o, "jain",
	    json_object_new_double(nf && sxx > 0 ? sx * sx / (nf * sxx) : 0));
	ADD(o, "connections", json_object_new_int(w->nconn));
	ADD(o, "verify_errors", json_object_new_uint64(st->verify_errors));
	ADD(o, "cqe_errors", json_object_new_uint64(st->cqe_errors));
	ADD(o, "first_error",
	    st->first_error[0] ? json_object_new_string(st->first_error)
			       : NULL);
	ADD(o, "sim_time_us", json_object_new_double(w->q.now / 1e6));
	ADD(o, "events", json_object_new_uint64(w->q.popped));
	/* Per CPU second of the event loop: what the machine's sharing
	 * does to wall time is not the simulator's speed. */
	ADD(o, "events_per_s",
	    json_object_new_double(w->cpu_s > 0 ? w->q.popped / w->cpu_s : 0));
	ADD(o, "cpu_s", json_object_new_double(w->cpu_s));
	ADD(o, "wall_s", json_object_new_double(wall_s));
	ADD(o, "setup_s", json_object_new_double(setup_s));
	ADD(o, "packets_allocated", json_object_new_uint64(w->pkts_alloc));
	a = json_object_new_array();
	for (i = 0; i < w->scn.planes; i++) {
		uint64_t b = 0;
		int j;

		for (j = 0; j < w->nport; j++)
			if (w->port[j]->kind == MRSIM_HOST_UP &&
			    w->port[j]->plane == i)
				b += w->port[j]->tx_bytes;
		json_object_array_add(a, json_object_new_uint64(b));
	}
	ADD(o, "plane_tx_bytes", a);
	ADD(o, "scenario", mrsim_scn_json(&w->scn));
	free(fct);
	snprintf(p, sizeof(p), "%s/summary.json", w->scn.out);
	if (json_object_to_file_ext(p, o,
				    JSON_C_TO_STRING_PRETTY |
					    JSON_C_TO_STRING_NOSLASHESCAPE)) {
		fprintf(stderr, "metaroce-sim: cannot write %s\n", p);
		json_object_put(o);
		return -1;
	}
	json_object_put(o);
	flows_csv(w);
	hosts_csv(w);
	fclose(w->ts);
	fclose(w->qcsv);
	w->ts = w->qcsv = NULL;
	plot(w);
	return 0;
}
