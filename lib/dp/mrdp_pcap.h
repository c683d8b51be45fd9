/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The capture switch: every frame a device's ports receive, and every
 * frame it hands them, written to one pcapng file (one interface per
 * plane, the direction in each packet's flags, nanosecond wall-clock
 * times), until the file reaches its bound (knob dp_pcap_mb); later frames
 * are counted, not written. The provider names the file (mrdp_config's
 * pcap_path: next to the device's stats files).
 *
 * Who calls: the thread holding the device lock (frames), open and close.
 * The file is buffered and flushed when the counters are written (once a
 * second) and at close, so a reader sees whole packets only.
 */
#ifndef MRDP_PCAP_H
#define MRDP_PCAP_H

#include <stddef.h>
#include <stdint.h>

struct rte_mbuf;
struct mrdp_pcap;

enum { MRDP_PCAP_IN = 1, MRDP_PCAP_OUT = 2 };

/* Create path (O_EXCL, never through a symlink: the stats directory is
 * world-writable) with one interface per plane, named after its devargs.
 * NULL with errno set. */
struct mrdp_pcap *mrdp_pcap_open(const char *path, uint64_t max_bytes,
				 unsigned nplanes, const char *const *ports);
/* One frame (an mbuf chain), dir MRDP_PCAP_IN or _OUT, of plane. */
void mrdp_pcap_frame(struct mrdp_pcap *pc, unsigned plane, int dir,
		     const struct rte_mbuf *m);
void mrdp_pcap_flush(struct mrdp_pcap *pc);
/* Flush, close, free; returns the frames written and not written. */
void mrdp_pcap_close(struct mrdp_pcap *pc, uint64_t *written,
		     uint64_t *skipped);

#endif /* MRDP_PCAP_H */
