/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A simulation scenario: every knob is one row of one table (name, type,
 * default, range, help), read from a JSON scenario file (json-c), then
 * from the command line (--name-with-dashes VALUE, which wins), then
 * checked as a whole before anything is built. A bad value is one line
 * naming the field.
 */
#ifndef MRSIM_CFG_H
#define MRSIM_CFG_H

#include <stdint.h>
#include <stdio.h>

#define MRSIM_MAX_FAIL 16
#define MRSIM_STR 64

/* A plane (or one leaf-spine link of it) down during [at, until). */
struct mrsim_fail {
	int plane;
	int leaf, spine;	  /* -1: every link of the plane */
	uint64_t at_ps, until_ps; /* until UINT64_MAX: never recovers */
};

struct mrsim_scn {
	int hosts, planes, spines, hosts_per_leaf;
	double oversub;
	double link_gbps;
	double delay_ns;
	int buffer_kb, ecn_kb, ecn_max_kb;
	double ecn_pmax;
	double loss, corrupt;
	char workload[MRSIM_STR];
	uint64_t size;
	uint64_t msg_size;
	int window;
	int qps_per_pair;
	char transport[MRSIM_STR];
	int paths;
	int mtu;
	int nic_ring;	     /* NIC transmit ring per port, packets */
	int steer; /* packets queued at which a port is backlogged, MR-MP-12 */
	uint64_t pace_burst; /* NIC pacer's credit, bytes (MR-CC-4) */
	int first_pkt;	     /* first packets' payload, MR-CC-16 (0: off) */
	int first_pkt_starts; /* MR-CC-16 (0: every connection) */
	int cc_start;	     /* enum mr_cc_start, MR-CC-17 (0: default) */
	int ib_timeout, ib_retry;
	uint64_t seed;
	double stop_ms;
	double sample_us;
	char out[256];
	struct mrsim_fail fail[MRSIM_MAX_FAIL];
	int nfail;
};

/* Defaults of every key. */
void mrsim_scn_defaults(struct mrsim_scn *s);
/* Read a JSON scenario file over s. 0, or -1 with one line in err. */
int mrsim_scn_load(struct mrsim_scn *s, const char *path, char *err,
		   size_t errlen);
/* Set one key from text (the command line, a sweep value). */
int mrsim_scn_set(struct mrsim_scn *s, const char *key, const char *val,
		  char *err, size_t errlen);
/* Check the whole scenario (ranges, topology, failures). */
int mrsim_scn_check(const struct mrsim_scn *s, char *err, size_t errlen);
/* The resolved scenario as a JSON object (json-c), caller puts it. */
struct json_object *mrsim_scn_json(const struct mrsim_scn *s);
/* Print the key table (help). */
void mrsim_scn_usage(FILE *f);
/* Is key a scenario key (underscored form)? */
int mrsim_scn_is_key(const char *key);
/* Number of keys and the i-th key's name, for getopt tables. */
int mrsim_scn_nkeys(void);
const char *mrsim_scn_key(int i);

/* Derived: is the baseline (go-back-N RoCE) selected? */
static inline int mrsim_scn_roce(const struct mrsim_scn *s)
{
	return s->transport[0] == 'r';
}

#endif /* MRSIM_CFG_H */
