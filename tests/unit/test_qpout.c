// SPDX-License-Identifier: BSD-2-Clause
/*
 * What QP parts return to the QP floor (lib/core/mr_qpout.h): events come
 * out in the order they went in, a queued completion holds its queue's
 * room until it is taken (MR-QP-6), the worst failure is kept, and a
 * completion that finds no room fails the QP instead of vanishing.
 */
#include <stdlib.h>

#include "mr_err.h"
#include "mr_qpout.h"
#include "mr_test.h"
#include "mr_test_mem.h"

static struct mr_cqe cqe(uint64_t wr_id, int is_recv)
{
	struct mr_cqe c;

	memset(&c, 0, sizeof(c));
	c.wr_id = wr_id;
	c.is_recv = is_recv;
	c.status = MR_WC_SUCCESS;
	return c;
}

static void test_order_and_room(void)
{
	struct mr_qpout o;
	struct mr_qpout_ev e;
	struct mr_cqe c;
	uint64_t i;

	MR_CHECK_EQ(mr_qpout_alloc(&o, &mr_test_heap, 5), 0);
	MR_CHECK_EQ(o.mask, 7); /* rounded up to a power of two */
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 0);
	for (i = 0; i < 3; i++) {
		c = cqe(10 + i, 0);
		mr_qpout_cqe(&o, &c);
	}
	c = cqe(20, 1);
	mr_qpout_cqe(&o, &c);
	mr_qpout_sq_drained(&o);
	MR_CHECK_EQ(o.sends, 3);
	MR_CHECK_EQ(o.recvs, 1);
	for (i = 0; i < 3; i++) {
		MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
		MR_CHECK_EQ(e.kind, MR_QPOUT_CQE);
		MR_CHECK_EQ(e.cqe.wr_id, 10 + i);
		/* taken: its room is free, the ones behind it hold theirs */
		MR_CHECK_EQ(o.sends, 2 - i);
	}
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
	MR_CHECK_EQ(e.cqe.wr_id, 20);
	MR_CHECK_EQ(o.recvs, 0);
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
	MR_CHECK_EQ(e.kind, MR_QPOUT_SQ_DRAINED);
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 0);
	/* the counters wrap with the ring (mr_ring.h) */
	o.head = o.tail = 0xfffffffeu;
	for (i = 0; i < 8; i++) {
		c = cqe(i, 0);
		mr_qpout_cqe(&o, &c);
	}
	for (i = 0; i < 8; i++) {
		MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
		MR_CHECK_EQ(e.cqe.wr_id, i);
	}
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL_NONE);
	mr_qpout_free(&o, &mr_test_heap);
}

static void test_fail(void)
{
	struct mr_qpout o;

	MR_CHECK_EQ(mr_qpout_alloc(&o, &mr_test_heap, 1), 0);
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL_NONE);
	/* MR-ERR-1 then MR-ERR-6 in one call: the async event is kept */
	mr_qpout_fail(&o, 0);
	mr_qpout_fail(&o, 1);
	mr_qpout_fail(&o, 0);
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL_NOTIFY);
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL_NONE);
	mr_qpout_fail(&o, 0);
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL);
	mr_qpout_free(&o, &mr_test_heap);
}

static void test_overflow_fails(void)
{
	struct mr_qpout o;
	struct mr_qpout_ev e;
	struct mr_cqe c = cqe(1, 0);

	MR_CHECK_EQ(mr_qpout_alloc(&o, &mr_test_heap, 2), 0);
	mr_qpout_cqe(&o, &c);
	c.wr_id = 2;
	mr_qpout_cqe(&o, &c);
	c.wr_id = 3;
	mr_qpout_cqe(&o, &c); /* no room: reported, not overwritten */
	MR_CHECK_EQ(o.sends, 2);
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
	MR_CHECK_EQ(e.cqe.wr_id, 1);
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 1);
	MR_CHECK_EQ(e.cqe.wr_id, 2);
	MR_CHECK_EQ(mr_qpout_next(&o, &e), 0);
	MR_CHECK_EQ(mr_qpout_take_fail(&o), MR_QPOUT_FAIL_NOTIFY);
	MR_CHECK_EQ(o.overflow, 0);
	mr_qpout_free(&o, &mr_test_heap);
}

MR_TEST_MAIN(MR_TEST(test_order_and_room), MR_TEST(test_fail),
	     MR_TEST(test_overflow_fails))
