/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * pcapng writer (the blocks of draft-ietf-opsawg-pcapng: section header,
 * interface description, enhanced packet). Hand-written because libpcap's
 * pcap_dump writes classic pcap only (no interface per plane, no
 * direction) and linking libpcap into every verbs program for a debugging
 * switch is not worth it.
 */
#include "mrdp_pcap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <rte_mbuf.h>

#define BT_SHB 0x0a0d0d0aU
#define BT_IDB 0x00000001U
#define BT_EPB 0x00000006U
#define BYTE_ORDER_MAGIC 0x1a2b3c4dU
#define LINKTYPE_ETHERNET 1
#define OPT_END 0
#define OPT_IF_NAME 2
#define OPT_IF_TSRESOL 9
#define OPT_EPB_FLAGS 2

struct mrdp_pcap {
	FILE *f;
	uint64_t bytes, max;
	uint64_t written, skipped;
	int failed; /* a write failed: stop, keep what is whole */
};

static size_t pad4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

static void put(struct mrdp_pcap *pc, const void *p, size_t n)
{
	if (!pc->failed && fwrite(p, 1, n, pc->f) != n)
		pc->failed = 1;
	pc->bytes += n;
}

static void put32(struct mrdp_pcap *pc, uint32_t v)
{
	put(pc, &v, 4);
}

static void put_pad(struct mrdp_pcap *pc, size_t n)
{
	static const uint8_t zero[4];

	put(pc, zero, pad4(n) - n);
}

/* An option: code, length, value padded to 4. */
static void put_opt(struct mrdp_pcap *pc, uint16_t code, const void *v,
		    uint16_t len)
{
	uint16_t h[2] = { code, len };

	put(pc, h, 4);
	put(pc, v, len);
	put_pad(pc, len);
}

static void write_shb(struct mrdp_pcap *pc)
{
	const uint32_t len = 28;

	put32(pc, BT_SHB);
	put32(pc, len);
	put32(pc, BYTE_ORDER_MAGIC);
	put32(pc, 1);		/* major 1, minor 0 */
	put32(pc, 0xffffffffU); /* section length unknown */
	put32(pc, 0xffffffffU);
	put32(pc, len);
}

static void write_idb(struct mrdp_pcap *pc, unsigned plane, const char *port)
{
	char name[300];
	const uint8_t tsresol = 9; /* nanoseconds */
	uint16_t nlen;
	uint32_t len;

	snprintf(name, sizeof(name), "plane%u %s", plane, port);
	nlen = (uint16_t)strlen(name);
	len = 20 + 4 + (uint32_t)pad4(nlen) + 4 + 4 + 4;
	put32(pc, BT_IDB);
	put32(pc, len);
	put32(pc, LINKTYPE_ETHERNET); /* and 16 reserved bits */
	put32(pc, 0);		      /* snaplen: no limit */
	put_opt(pc, OPT_IF_NAME, name, nlen);
	put_opt(pc, OPT_IF_TSRESOL, &tsresol, 1);
	put32(pc, OPT_END);
	put32(pc, len);
}

struct mrdp_pcap *mrdp_pcap_open(const char *path, uint64_t max_bytes,
				 unsigned nplanes, const char *const *ports)
{
	struct mrdp_pcap *pc = calloc(1, sizeof(*pc));
	int fd;

	if (!pc)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		  0644);
	if (fd < 0 || !(pc->f = fdopen(fd, "w"))) {
		int e = errno;

		if (fd >= 0)
			close(fd);
		free(pc);
		errno = e;
		return NULL;
	}
	pc->max = max_bytes;
	write_shb(pc);
	for (unsigned i = 0; i < nplanes; i++)
		write_idb(pc, i, ports[i]);
	return pc;
}

void mrdp_pcap_frame(struct mrdp_pcap *pc, unsigned plane, int dir,
		     const struct rte_mbuf *m)
{
	uint32_t caplen = rte_pktmbuf_pkt_len(m), flags = (uint32_t)dir;
	uint32_t len = 28 + (uint32_t)pad4(caplen) + 8 + 4 + 4;
	struct timespec ts;
	uint64_t t;

	if (pc->failed || pc->bytes + len > pc->max) {
		pc->skipped++;
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	t = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	put32(pc, BT_EPB);
	put32(pc, len);
	put32(pc, plane);
	put32(pc, (uint32_t)(t >> 32));
	put32(pc, (uint32_t)t);
	put32(pc, caplen);
	put32(pc, caplen);
	for (; m; m = m->next)
		put(pc, rte_pktmbuf_mtod(m, const void *), m->data_len);
	put_pad(pc, caplen);
	put_opt(pc, OPT_EPB_FLAGS, &flags, 4);
	put32(pc, OPT_END);
	put32(pc, len);
	pc->written++;
}

void mrdp_pcap_flush(struct mrdp_pcap *pc)
{
	if (pc && fflush(pc->f))
		pc->failed = 1;
}

void mrdp_pcap_close(struct mrdp_pcap *pc, uint64_t *written, uint64_t *skipped)
{
	*written = pc->written;
	*skipped = pc->skipped;
	fclose(pc->f);
	free(pc);
}
