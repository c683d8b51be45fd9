/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A JSON text buffer for the stats file (lib/dp writes numbers and fixed
 * ASCII names only, so it needs no escaping and no JSON library inside
 * every verbs program): printf-style appends into a fixed buffer, or into
 * a heap buffer that grows (the writer of the stats file, outside the
 * data path). The first failure sticks (over = 1) and later appends do
 * nothing, so a writer checks once at the end.
 */
#ifndef MRDP_JBUF_H
#define MRDP_JBUF_H

#include <stddef.h>

struct mrdp_jbuf {
	char *p;
	size_t cap, len;
	int grow; /* 1: p is malloc'ed and realloc'ed as needed */
	int over; /* out of room (fixed) or of memory (grow) */
};

void mrdp_jp(struct mrdp_jbuf *b, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#endif /* MRDP_JBUF_H */
