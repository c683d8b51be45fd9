/* SPDX-License-Identifier: BSD-2-Clause */
#include "mrdp_jbuf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void mrdp_jp(struct mrdp_jbuf *b, const char *fmt, ...)
{
	va_list ap;
	size_t cap;
	char *p;
	int w;

	if (b->over)
		return;
	for (;;) {
		va_start(ap, fmt);
		w = vsnprintf(b->p ? b->p + b->len : NULL,
			      b->p ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (w < 0) {
			b->over = 1;
			return;
		}
		if (b->p && (size_t)w < b->cap - b->len) {
			b->len += (size_t)w;
			return;
		}
		if (!b->grow) {
			b->over = 1;
			return;
		}
		/* Room for this append and as much again. */
		cap = 2 * (b->len + (size_t)w + 1);
		p = realloc(b->p, cap);
		if (!p) {
			b->over = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
}
