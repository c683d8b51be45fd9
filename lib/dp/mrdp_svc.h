/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * The datapath service's wire between metaroced and an application
 * (docs/architecture.md, "Several processes on one device"): what both
 * sides include. No DPDK type: the daemon's switch and the tests use it
 * without EAL.
 *
 * Why a service: a PCI port driven by DPDK is owned by one process, and
 * AI hosts run one process per GPU on the same NICs. The daemon owns the
 * ports and switches frames only: each application keeps its own engine
 * (lib/core) and its own lib/dp, whose "port" is a pair of rings in
 * shared memory instead of an ethdev queue.
 *
 * Control: a SOCK_SEQPACKET Unix socket. The application sends one
 * struct mrsvc_hello; the daemon answers one struct mrsvc_welcome and,
 * when it accepts, passes with SCM_RIGHTS a memfd (the rings and their
 * buffers, struct mrsvc_layout) and two eventfds per plane: [memfd,
 * rx_efd(0), tx_efd(0), rx_efd(1), ...]. Nothing else crosses the socket
 * but a final MRSVC_BYE on a clean close; the socket's end is how each
 * side learns that the other is gone (an application that dies frees its
 * slot and rings; a daemon that dies is seen by every application).
 *
 * Rings: per plane two single-producer single-consumer rings, rx (daemon
 * to application) and tx (application to daemon), of MRSVC_RING_SLOTS
 * descriptors. Descriptor i owns buffer i of its ring (the rings' buffer
 * pool is cut into one buffer per descriptor, so a consumer never hands a
 * buffer back out of order and no free list is shared between two
 * processes). The producer copies a frame into the buffer at head, writes
 * its length and publishes head (release); the consumer reads up to head
 * (acquire) and publishes tail. The application's registered memory is
 * never in the shared region.
 *
 * Wake-ups: a consumer about to sleep sets `sleeping` (seq_cst) and looks
 * at the ring once more; a producer that published a frame looks at
 * `sleeping` (seq_cst) and, if set, clears it and writes the ring's
 * eventfd. So a frame that finds its consumer awake costs no system call
 * and a sleeping consumer is never missed (each side stores before it
 * loads the other's variable).
 *
 * Trust: the daemon treats every index and length in an application's
 * region as hostile (bounded before use); an application trusts its
 * daemon.
 */
#ifndef MRDP_SVC_H
#define MRDP_SVC_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define MRSVC_MAGIC 0x4d525356u /* "MRSV" */
#define MRSVC_VERSION 1u
/* Descriptors per ring: 1,024 frames at RoCE MTU 4096 are 4.3 MiB, as
 * deep as an af_packet ring's 2,048 (mrdp_port.c) halved, twice per
 * plane; a consumer off the CPU for one scheduler tick (4 ms) at
 * 10 Gb/s needs about 1,200. Power of two. */
#define MRSVC_RING_SLOTS 1024u
#define MRSVC_MAX_PLANES 8u /* MR_DEVCONF_MAX_PORTS */
#define MRSVC_MAX_FDS (1u + 2u * MRSVC_MAX_PLANES)
/* QPN slots of 2^16 QPNs, slot 0 (QPNs 0, 1) never given: as
 * mrdp_steer.c's. */
#define MRSVC_SLOT_BITS 16u
#define MRSVC_SLOTS (1u << (24u - MRSVC_SLOT_BITS))
/* The port kind in a device record: port=service:<socket path>. */
#define MRSVC_PORT_PREFIX "service:"
#define MRSVC_PORT_PREFIX_LEN 8u
#define MRSVC_BYE 0x42594521u /* "BYE!" */

struct mrsvc_hello {
	uint32_t magic, version;
	char name[64];	  /* the application's record name (for logs) */
	uint32_t nplanes; /* its ports: all service ports of one daemon */
	uint32_t mtu;
	uint32_t ip; /* host byte order */
	uint16_t udp_port;
	uint8_t mac[6];
	uint32_t want_slot; /* 1..255, or 0: the first free one */
	uint32_t max_frame; /* its largest frame (MRDP_HDR_MAX + packet) */
};

struct mrsvc_welcome {
	uint32_t magic, version;
	int32_t status; /* 0, or a positive errno with msg saying why */
	char msg[200];
	uint32_t slot;
	uint32_t nplanes;
	uint32_t buf_size; /* bytes per buffer */
	uint32_t pad;
	uint64_t shm_len;
};

/* One ring. The three indices on their own cache lines: head is written
 * by the producer only, tail by the consumer only. */
struct mrsvc_ring {
	_Alignas(64) _Atomic uint32_t head;
	_Alignas(64) _Atomic uint32_t tail;
	_Alignas(64) _Atomic uint32_t sleeping;
	_Alignas(64) uint32_t len[MRSVC_RING_SLOTS];
};

struct mrsvc_layout {
	size_t rings_off; /* 2 * nplanes rings: rx(0), tx(0), rx(1), ... */
	size_t bufs_off;  /* then the buffers, ring by ring */
	size_t buf_size;
	size_t len;
	unsigned nplanes;
};

static inline int mrsvc_layout_of(struct mrsvc_layout *l, unsigned nplanes,
				  size_t max_frame)
{
	size_t ring = sizeof(struct mrsvc_ring);

	if (nplanes == 0 || nplanes > MRSVC_MAX_PLANES || max_frame < 64 ||
	    max_frame > 65536)
		return -1;
	l->nplanes = nplanes;
	l->buf_size = (max_frame + 63) / 64 * 64;
	l->rings_off = 4096;
	l->bufs_off = (l->rings_off + 2 * nplanes * ring + 4095) / 4096 * 4096;
	l->len = l->bufs_off +
		 2 * (size_t)nplanes * MRSVC_RING_SLOTS * l->buf_size;
	return 0;
}

/* Ring k (2 * plane + 0: rx, + 1: tx) of a mapped region, its buffer i. */
static inline struct mrsvc_ring *
mrsvc_ring_at(void *base, const struct mrsvc_layout *l, unsigned k)
{
	return (struct mrsvc_ring *)((uint8_t *)base + l->rings_off +
				     k * sizeof(struct mrsvc_ring));
}

static inline uint8_t *mrsvc_buf_at(void *base, const struct mrsvc_layout *l,
				    unsigned k, uint32_t i)
{
	return (uint8_t *)base + l->bufs_off +
	       ((size_t)k * MRSVC_RING_SLOTS + (i & (MRSVC_RING_SLOTS - 1))) *
		       l->buf_size;
}

/* Producer: free descriptors (0 when the indices are corrupt). */
static inline uint32_t mrsvc_ring_room(struct mrsvc_ring *r, uint32_t *head)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	uint32_t used = h - t;

	*head = h;
	return used > MRSVC_RING_SLOTS ? 0 : MRSVC_RING_SLOTS - used;
}

/* Producer: publish n more frames; 1 if the consumer sleeps and its
 * eventfd must be written (the caller writes it). */
static inline int mrsvc_ring_publish(struct mrsvc_ring *r, uint32_t head,
				     uint32_t n)
{
	atomic_store_explicit(&r->head, head + n, memory_order_seq_cst);
	if (!atomic_load_explicit(&r->sleeping, memory_order_seq_cst))
		return 0;
	return atomic_exchange_explicit(&r->sleeping, 0,
					memory_order_seq_cst) != 0;
}

/* Consumer: frames waiting (0 when the indices are corrupt, and then
 * *tail is resynchronised so the ring recovers). */
static inline uint32_t mrsvc_ring_ready(struct mrsvc_ring *r, uint32_t *tail)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);

	*tail = t;
	if (h - t > MRSVC_RING_SLOTS) {
		atomic_store_explicit(&r->tail, h, memory_order_release);
		*tail = h;
		return 0;
	}
	return h - t;
}

static inline void mrsvc_ring_consume(struct mrsvc_ring *r, uint32_t tail,
				      uint32_t n)
{
	atomic_store_explicit(&r->tail, tail + n, memory_order_release);
}

/* Consumer about to sleep: 1 if it may (nothing arrived meanwhile). */
static inline int mrsvc_ring_arm(struct mrsvc_ring *r)
{
	atomic_store_explicit(&r->sleeping, 1, memory_order_seq_cst);
	return atomic_load_explicit(&r->head, memory_order_seq_cst) ==
	       atomic_load_explicit(&r->tail, memory_order_relaxed);
}

/* Is port argument args a service port? Its socket path in path. */
static inline int mrsvc_port_path(const char *args, char *path, size_t cap)
{
	const char *p = args + MRSVC_PORT_PREFIX_LEN;
	size_t n;

	if (strncmp(args, MRSVC_PORT_PREFIX, MRSVC_PORT_PREFIX_LEN) != 0)
		return 0;
	n = strcspn(p, ",");
	if (!path)
		return 1;
	if (n == 0 || n >= cap)
		return -1;
	memcpy(path, p, n);
	path[n] = 0;
	return 1;
}

#endif /* MRDP_SVC_H */
