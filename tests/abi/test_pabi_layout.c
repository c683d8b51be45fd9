// SPDX-License-Identifier: BSD-2-Clause
/*
 * Every offset and size of the layout table of the rdma-core version we
 * build against, checked against kernel-abi/mr_pabi.h and the real
 * <infiniband/verbs.h>. A mismatch means the provider would read or write
 * libibverbs' private structs at the wrong place.
 */
#include <stdio.h>

#include "layout_check.h"

int main(void)
{
	size_t i, bad = 0;

	for (i = 0; i < mr_layout_nrows; i++) {
		const struct mr_layout_row *r = &mr_layout_rows[i];

		if (r->off == r->want_off && r->size == r->want_size)
			continue;
		fprintf(stderr,
			"MISMATCH %s: offset %zu size %zu, table says "
			"offset %zu size %zu\n",
			r->name, r->off, r->size, r->want_off, r->want_size);
		bad++;
	}
	printf("%s: %zu rows checked, %zu mismatches\n", mr_layout_table,
	       mr_layout_nrows, bad);
	return bad ? 1 : 0;
}
