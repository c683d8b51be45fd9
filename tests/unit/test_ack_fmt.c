// SPDX-License-Identifier: BSD-2-Clause
/*
 * The ACKs the responder builds (lib/core/mr_resp.c, docs/spec/wire.md
 * MR-ACK-9, MR-ACK-12, MR-ACK-13, reliability.md MR-SACK-7, MR-SACK-8): every ACK of a
 * 4-path WRITE, parsed off the link by a tap, carries a block for every
 * path that received, each block its bitmap up to the last non-zero byte
 * only; a lost ACK costs nothing (the next one is a whole snapshot).
 */
#include "engine_world.h"
#include "mr_test.h"

#define LEN (256 * 1024)

struct acks {
	int n, bad, blocks, holes;
	int nblocks_hist[MR_MAX_PATHS + 1];
	size_t bytes;
};

/* Every ACK node 1 sends: its length is the headers plus 8 bytes and the
 * trimmed bitmap per block, and no block names a path twice. */
static void tap(struct link *l, const uint8_t *buf, size_t len)
{
	struct acks *a = l->tap_user;
	struct mr_pkt p;
	size_t want = MR_BTH_LEN + MR_PTH_LEN + MR_AETH_LEN + MR_ICRC_LEN;
	unsigned i, k;

	if (mr_wire_parse(buf, len, &p) != MR_PARSE_OK) {
		a->bad++;
		return;
	}
	if (p.bth.opcode != MR_OP_ACK)
		return;
	a->n++;
	a->bytes += len;
	a->nblocks_hist[p.aeth.nblocks]++;
	for (i = 0; i < p.aeth.nblocks; i++) {
		const struct mr_sack_block *b = &p.aeth.blocks[i];
		unsigned n = 0;

		for (k = 0; k < MR_SACK_BYTES; k++)
			if (b->bitmap[k])
				n = k + 1;
		/* MR-ACK-13: head, cum_ppsn (4 bytes first, then the
		 * LEB128 zigzag step), ce_cum if not 0, bm_len + bitmap */
		want += 1 + (n ? 1 + n : 0) + (b->ce_cum ? 2 : 0);
		if (i) {
			uint32_t d = b->cum_ppsn - p.aeth.blocks[i - 1].cum_ppsn;
			uint32_t z = d << 1 ^ (d >> 31 ? 0xffffffffu : 0);

			for (want++; z >= 0x80; z >>= 7)
				want++;
		} else {
			want += 4;
		}
		a->holes += n > 0;
		a->blocks++;
	}
	/* MR-MP-7: the ACK travels on the path of its first block */
	if (p.aeth.nblocks && p.aeth.blocks[0].path_id != p.pth.path_id)
		a->bad++;
	if (want != len)
		a->bad++;
}

static uint8_t src[LEN], dst[LEN];

/* One WRITE of LEN bytes from node 0 to node 1 over 4 paths; node 1's
 * ACKs counted in *a. */
static void write_once(struct world *w, struct pair *p, struct acks *a)
{
	memset(a, 0, sizeof(*a));
	w->l[1].tap = tap;
	w->l[1].tap_user = a;
	fill(src, sizeof(src), 5);
	memset(dst, 0, sizeof(dst));
	reg(&w->n[0], 5, src, sizeof(src), MR_ACCESS_LOCAL_WRITE);
	reg(&w->n[1], 6, dst, sizeof(dst), RW);
	MR_CHECK_EQ(post_send(p->a, MR_WR_RDMA_WRITE, 1, src, LEN, 5, dst, 6, 0,
			      w->now),
		    0);
	want_a = 1;
	want_b = 0;
	MR_CHECK(run_until(w, cqe_done, w->now + 1000000000ull));
	MR_CHECK_EQ(w->n[0].cqe[0].status, MR_WC_SUCCESS);
	MR_CHECK_MEM(dst, src, LEN);
	MR_CHECK_EQ(a->bad, 0);
}

/* MR-ACK-12, MR-ACK-13: a lossless, in-order link: the first block 5
 * bytes, the others 2 (the paths' cum_ppsn within a step of each other),
 * every ACK from the first on each path a snapshot of all 4 (MR-SACK-7). */
static void test_lossless_blocks(void)
{
	static struct world w;
	struct pair p;
	struct acks a;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	write_once(&w, &p, &a);
	MR_CHECK(a.n > 4);
	MR_CHECK_EQ(a.holes, 0);
	/* the ACKs before every path had a packet carry fewer blocks */
	MR_CHECK(a.nblocks_hist[4] >= a.n - 3);
	MR_CHECK_EQ(a.nblocks_hist[0], 0);
	MR_CHECK_EQ(a.bytes, (size_t)a.n * (MR_BTH_LEN + MR_PTH_LEN +
					    MR_AETH_LEN + MR_ICRC_LEN +
					    MR_SACK_FIRST_MIN_LEN) +
				     (size_t)(a.blocks - a.n) * MR_SACK_MIN_LEN);
	MR_CHECK_EQ(mr_qp_counters(p.a)->retx_pkts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

/* A dropped data packet opens a hole on its path: that path's blocks
 * carry a bitmap (up to its last bit set) until the hole is abandoned;
 * the others stay 2 bytes (checked byte for byte by the tap). */
static void test_hole_blocks(void)
{
	static const uint64_t drop[] = { 9 };
	static struct world w;
	struct pair p;
	struct acks a;

	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	w.l[0].drop_idx = drop;
	w.l[0].ndrop = 1;
	write_once(&w, &p, &a);
	MR_CHECK(a.holes > 0);
	MR_CHECK(a.holes < a.blocks / 2);
	MR_CHECK_EQ(mr_qp_counters(p.a)->retx_pkts, 1);
	destroy_pair(&p);
	world_fini(&w);
}

/* MR-SACK-8: every ACK is a snapshot of every path, so losing ACKs (here
 * every other one of the first 40) costs no retransmission and no
 * timeout: the next ACK reports what the lost one did. */
static void test_lost_acks_lose_nothing(void)
{
	static uint64_t drop[20];
	static struct world w;
	struct pair p;
	struct acks a;
	int i;

	for (i = 0; i < 20; i++)
		drop[i] = 2 * (uint64_t)i + 1;
	MR_CHECK_EQ(world_init(&w, &base_cfg), 0);
	connect_qps(&w, &p, MR_MODE_METAROCE, 16, NULL);
	w.l[1].drop_idx = drop;
	w.l[1].ndrop = 20;
	write_once(&w, &p, &a);
	MR_CHECK(a.n > 40);
	MR_CHECK_EQ(mr_qp_counters(p.a)->retx_pkts, 0);
	MR_CHECK_EQ(mr_qp_counters(p.a)->timeouts, 0);
	destroy_pair(&p);
	world_fini(&w);
}

MR_TEST_MAIN(MR_TEST(test_lossless_blocks), MR_TEST(test_hole_blocks),
	     MR_TEST(test_lost_acks_lose_nothing))
