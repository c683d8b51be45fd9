// SPDX-License-Identifier: BSD-2-Clause
/* A QP's send queue: see mr_sq.h. */
#include "mr_err.h"
#include "mr_sq.h"

int mr_sq_alloc(struct mr_sq *sq, const struct mr_mem *mem, uint32_t max_wr,
		uint32_t max_sge, uint32_t max_inline)
{
	uint32_t i, nsge = max_sge ? max_sge : 1;
	uint32_t slots = mr_ring_slots(max_wr);
	size_t inl = (size_t)slots * max_inline;

	sq->mask = slots - 1;
	sq->wqe = mem->calloc(mem->user, slots, sizeof(*sq->wqe));
	sq->sge =
		mem->calloc(mem->user, (size_t)slots * nsge, sizeof(*sq->sge));
	sq->inl = mem->calloc(mem->user, inl ? inl : 1, 1);
	if (!sq->wqe || !sq->sge || !sq->inl)
		return -MR_ENOMEM;
	for (i = 0; i < slots; i++) {
		sq->wqe[i].sge = sq->sge + (size_t)i * nsge;
		sq->wqe[i].inl = sq->inl + (size_t)i * max_inline;
	}
	return 0;
}

void mr_sq_free(struct mr_sq *sq, const struct mr_mem *mem)
{
	if (sq->wqe)
		mem->free(mem->user, sq->wqe);
	if (sq->sge)
		mem->free(mem->user, sq->sge);
	if (sq->inl)
		mem->free(mem->user, sq->inl);
	sq->wqe = NULL;
	sq->sge = NULL;
	sq->inl = NULL;
}
