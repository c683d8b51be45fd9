// SPDX-License-Identifier: BSD-2-Clause
/*
 * The largest message the wire allows (MR-HDR-12: 2 GiB): one RDMA WRITE
 * and one SEND of exactly 2^31 bytes cut into 4096-byte packets, with
 * loss, every byte compared; one byte more is refused at post time.
 * The buffers are anonymous mappings (4 GiB in all) touched only by the
 * test, so the machine needs the memory but no more.
 */
#include <sys/mman.h>

#include "engine_world.h"
#include "mr_wire.h"

#define BIG ((uint64_t)MR_WIRE_MAX_MSG_LEN)

static struct world w;
static uint8_t *src, *dst;

static uint8_t *big_map(void)
{
	void *p = mmap(NULL, BIG, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

static void run_big(enum mr_wr_opcode op)
{
	struct mr_ep_config cfg = base_cfg;
	struct pair p = { 0 };
	uint64_t i;

	if (!src) {
		src = big_map();
		dst = big_map();
		if (!src || !dst) {
			fprintf(stderr, "skip: cannot map 2 x 2 GiB\n");
			exit(77);
		}
		/* A pattern that differs in every word and every packet. */
		for (i = 0; i < BIG; i += 8) {
			uint64_t v = i * 0x9e3779b97f4a7c15ull;

			memcpy(src + i, &v, 8);
		}
	}
	/* dst back to zero pages: each test must place every byte. */
	MR_CHECK_EQ(madvise(dst, BIG, MADV_DONTNEED), 0);
	cfg.mtu = 4096;
	world_path_mtu = 4096;
	MR_CHECK_EQ(world_init(&w, &cfg), 0);
	w.l[0].loss_ppm = w.l[1].loss_ppm = 1000; /* 0.1% each way */
	reg(&w.n[0], 0x100, src, BIG, RW);
	reg(&w.n[1], 0x200, dst, BIG, RW);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	if (op == MR_WR_SEND)
		MR_CHECK_EQ(post_recv(p.b, 9, dst, (uint32_t)BIG, 0x200), 0);
	MR_CHECK_EQ(post_send(p.a, op, 1, src, (uint32_t)BIG, 0x100, dst, 0x200,
			      0, w.now),
		    0);
	want_a = 1;
	want_b = op == MR_WR_SEND;
	MR_CHECK(run_until(&w, cqe_done, w.now + 600000000000ull));
	MR_CHECK_EQ(w.n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_EQ(w.n[0].cqe[0].byte_len, (uint32_t)BIG);
	if (op == MR_WR_SEND) {
		MR_CHECK_EQ(w.n[1].cqe[0].status, MR_WC_SUCCESS);
		MR_CHECK_EQ(w.n[1].cqe[0].byte_len, (uint32_t)BIG);
		MR_CHECK_EQ(w.n[1].cqe[0].wr_id, 9);
	}
	MR_CHECK(memcmp(src, dst, BIG) == 0);
	/* One byte more than the wire can say: refused, nothing sent. */
	{
		struct mr_sge sg[2] = { { (uintptr_t)src, (uint32_t)BIG,
					  0x100 },
					{ (uintptr_t)src, 1, 0x100 } };
		struct mr_send_wr wr = {
			.wr_id = 2,
			.opcode = op,
			.flags = MR_SEND_SIGNALED,
			.sg_list = sg,
			.num_sge = 2,
			.remote_addr = (uintptr_t)dst,
			.rkey = 0x200,
		};

		MR_CHECK_EQ(mr_qp_post_send(p.a, &wr, w.now), -MR_EMSGSIZE);
	}
	destroy_pair(&p);
	world_fini(&w);
	world_path_mtu = 1024;
}

static void test_write_2gib(void)
{
	run_big(MR_WR_RDMA_WRITE);
}

static void test_send_2gib(void)
{
	run_big(MR_WR_SEND);
}

MR_TEST_MAIN(MR_TEST(test_write_2gib), MR_TEST(test_send_2gib))
