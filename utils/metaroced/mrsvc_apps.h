/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * metaroced's applications (mrsvc_apps.c): one per connection on the
 * service socket, each with its QPN slot, its shared region (mrdp_svc.h)
 * and its counters. No DPDK type.
 */
#ifndef MRSVC_APPS_H
#define MRSVC_APPS_H

#include <stdint.h>
#include <sys/types.h>

#include "mr_devconf.h"
#include "mrdp_svc.h"

/* Connections at once (each holds a slot, 2 rings per plane and about
 * 8.6 MiB of region per plane at RoCE MTU 4096). */
#define MRSVC_MAX_APPS 64

/* Per application, X(name, help): the daemon's view of its frames. */
#define MRSVC_APP_COUNTERS(X)                                           \
	X(rx_frames, "frames switched to it (its slot, ARP, ND)")       \
	X(rx_bytes, "their bytes")                                      \
	X(rx_ring_full, "frames for it dropped: its receive ring full") \
	X(tx_frames, "frames it sent that a port took")                 \
	X(tx_bytes, "their bytes")                                      \
	X(tx_bad, "frames it sent that were refused: length or source " \
		  "MAC not the device's")

/* The daemon's own, X(name, help). */
#define MRSVC_COUNTERS(X)                                                 \
	X(rx_frames, "frames received from the ports")                    \
	X(no_app, "MetaRoCE frames whose dqpn slot has no application "   \
		  "(dropped)")                                            \
	X(not_ours, "host traffic, other addresses or UDP ports (left "   \
		    "to the kernel)")                                     \
	X(malformed, "frames shorter than their headers, IP fragments")   \
	X(arp_answered, "ARP requests for the device's address answered") \
	X(to_all, "ARP replies and IPv6 ND frames given to every "        \
		  "application")                                          \
	X(tx_port_busy, "rounds a port refused an application's frames "  \
			"(they wait in its ring)")                        \
	X(ring_full, "frames dropped: their application's receive ring "  \
		     "full (every application, also those gone)")         \
	X(tx_bad, "frames refused from applications (length, source "     \
		  "MAC), every application")                              \
	X(apps_accepted, "applications connected")                        \
	X(apps_refused, "hellos refused (record mismatch, no slot)")      \
	X(apps_closed, "applications that closed their device")           \
	X(apps_died, "applications whose connection ended without a "     \
		     "close (their slot and rings freed)")

#define MRSVC_DECL(name, help) uint64_t name;
struct mrsvc_app_counters {
	MRSVC_APP_COUNTERS(MRSVC_DECL)
};
struct mrsvc_counters {
	MRSVC_COUNTERS(MRSVC_DECL)
};
#undef MRSVC_DECL

struct mrsvc_app {
	int used;
	int sock;
	int hello_done;
	pid_t pid;
	unsigned slot;
	char name[64];
	void *shm;
	struct mrsvc_layout lay;
	int rx_efd[MRSVC_MAX_PLANES], tx_efd[MRSVC_MAX_PLANES];
	struct mrsvc_app_counters c;
};

struct mrsvc_apps {
	const struct mr_devconf *conf; /* the daemon's record */
	size_t max_frame;
	struct mrsvc_app app[MRSVC_MAX_APPS];
	struct mrsvc_app *by_slot[MRSVC_SLOTS];
	unsigned napps;
	struct mrsvc_counters c;
	int changed; /* an application came or went: write the counters */
};

void mrsvc_apps_init(struct mrsvc_apps *t, const struct mr_devconf *conf,
		     size_t max_frame);
/* A new connection (the accepted socket): its entry, or NULL (closed). */
struct mrsvc_app *mrsvc_app_add(struct mrsvc_apps *t, int sock);
/* The connection is readable (or hung up): its hello, its bye or its
 * end. 0; 1: it said bye (the caller flushes its transmit rings, then
 * frees it with died 0); -1 when the application is gone (entry freed). */
int mrsvc_app_event(struct mrsvc_apps *t, struct mrsvc_app *a);
void mrsvc_app_free(struct mrsvc_apps *t, struct mrsvc_app *a, int died);
/* The counters as one JSON object (the stats file). */
int mrsvc_apps_json(const struct mrsvc_apps *t, char *buf, size_t cap);

#endif /* MRSVC_APPS_H */
