// SPDX-License-Identifier: BSD-2-Clause
/*
 * mri-verbs case mw: memory windows between two hosts over the real
 * datapath (docs/spec/windows.md MR-MW-*). The server (host A) owns a
 * region registered with MW_BIND and no remote rights of its own, so the
 * client (host B) reaches it only through windows. Three cases, each on
 * a fresh QP pair:
 *
 *   0  type 2 window bound by IBV_WR_BIND_MW, invalidated by the server's
 *      IBV_WR_LOCAL_INV (MR-MW-4 local);
 *   1  type 2 window, invalidated by the client's IBV_WR_SEND_WITH_INV
 *      (MR-MW-4 remote: the server's receive says IBV_WC_WITH_INV and the
 *      rkey);
 *   2  type 1 window bound by ibv_bind_mw, unbound by a zero-length
 *      ibv_bind_mw (IB's way to invalidate a type 1 window).
 *
 * In each the client WRITEs seeded bytes through the window's rkey and
 * READs the whole window back (every byte compared with the model both
 * sides keep), the server compares its whole region; then after the
 * invalidation the client uses the old rkey again (WRITE in 0 and 1, READ
 * in 2): IBV_WC_REM_ACCESS_ERR, and the server's region, every byte, and
 * the client's READ target are unchanged.
 *
 * Commands over mri-verbs' TCP channel (client -> server): "W B i" bind
 * (answer "WK rkey addr"), "W C i" compare the region, "W I i" invalidate
 * locally, "W R i" the remote invalidation's receive completion.
 */
#include "mri_verbs.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WIN_BUF (64u << 10)
#define WLEN 12288u
#define WOFF(i) (4096u + (uint32_t)(i)*20480u)
#define WR_OFF 1000u /* the client's WRITE, inside the window */
#define WR_LEN (WLEN / 2)
#define ACC_WIN (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)
#define RECV_OFF (OFF_SCR + 8192u) /* server: the SEND_WITH_INV's receive */
#define INV_LEN 16u

static uint8_t *win, *model;
static struct ibv_mr *win_mr;
static struct ibv_mw *mws[MRI_MW_CASES];
static uint32_t bound[MRI_MW_CASES]; /* the rkey each bind gave */

static const char *const what[MRI_MW_CASES] = {
	"type 2, local invalidate",
	"type 2, remote invalidate",
	"type 1, unbind",
};

/* The region's first bytes, and what case i's WRITE puts in its window:
 * both sides compute them from the seed. */
static void model_init(void)
{
	if (model)
		return;
	model = malloc(WIN_BUF);
	if (!model)
		mri_fail("out of memory");
	mri_fill(model, WIN_BUF, mri_seed ^ 0x77696eull);
}

static void write_bytes(int i, uint8_t *p, int bad)
{
	mri_fill(p, WR_LEN,
		 mri_seed ^ (0x1000ull * (i + 1)) ^ (bad ? 0xbad : 0));
}

static void model_write(int i)
{
	write_bytes(i, model + WOFF(i) + WR_OFF, 0);
}

static void wait_wc(struct ibv_cq *cq, const char *who, uint64_t id,
		    enum ibv_wc_status st, enum ibv_wc_opcode opc,
		    struct ibv_wc *wc)
{
	mri_poll_one(cq, wc, who, WAIT_S);
	if (wc->wr_id != id || wc->status != st ||
	    (st == IBV_WC_SUCCESS && wc->opcode != opc))
		mri_fail("%s: wr_id %#" PRIx64 " status %s opcode %d; expected "
			 "wr_id %#" PRIx64 " status %s opcode %d",
			 who, wc->wr_id, ibv_wc_status_str(wc->status),
			 wc->opcode, id, ibv_wc_status_str(st), opc);
}

/* ---- server ---- */

static void server_region(struct side *s)
{
	if (win)
		return;
	if (posix_memalign((void **)&win, 4096, WIN_BUF))
		mri_fail("out of memory");
	model_init();
	memcpy(win, model, WIN_BUF);
	/* MW_BIND and no remote right: only a window reaches it */
	win_mr = ibv_reg_mr(s->pd, win, WIN_BUF,
			    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	if (!win_mr)
		mri_fail("ibv_reg_mr MW_BIND: %m");
}

static void server_bind(struct side *s, int i)
{
	struct ibv_mw_bind_info bi;
	struct ibv_wc wc;
	uint32_t rkey;

	server_region(s);
	bi = (struct ibv_mw_bind_info){ .mr = win_mr,
					.addr = (uintptr_t)win + WOFF(i),
					.length = WLEN,
					.mw_access_flags = ACC_WIN };
	mws[i] = ibv_alloc_mw(s->pd, i < 2 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1);
	if (!mws[i])
		mri_fail("ibv_alloc_mw: %m");
	if (i == 1) {
		/* the receive the client's SEND_WITH_INV lands in */
		struct ibv_sge sg = { (uintptr_t)s->buf + RECV_OFF, INV_LEN,
				      s->mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 0x3e1,
					  .sg_list = &sg,
					  .num_sge = 1 },
				   *bad;

		if (ibv_post_recv(s->qp, &rw, &bad))
			mri_fail("ibv_post_recv");
	}
	if (i < 2) {
		struct ibv_send_wr w = { .wr_id = 0xb2,
					 .opcode = IBV_WR_BIND_MW,
					 .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		rkey = ibv_inc_rkey(mws[i]->rkey);
		w.bind_mw.mw = mws[i];
		w.bind_mw.rkey = rkey;
		w.bind_mw.bind_info = bi;
		if (ibv_post_send(s->qp, &w, &bad))
			mri_fail("IBV_WR_BIND_MW: %m");
		wait_wc(s->scq, "bind type 2", 0xb2, IBV_WC_SUCCESS,
			IBV_WC_BIND_MW, &wc);
	} else {
		struct ibv_mw_bind b = { .wr_id = 0xb1,
					 .send_flags = IBV_SEND_SIGNALED,
					 .bind_info = bi };

		if (ibv_bind_mw(s->qp, mws[i], &b))
			mri_fail("ibv_bind_mw: %m");
		wait_wc(s->scq, "bind type 1", 0xb1, IBV_WC_SUCCESS,
			IBV_WC_BIND_MW, &wc);
		rkey = mws[i]->rkey;
	}
	bound[i] = rkey;
	printf("server: window %d (%s) bound: rkey %#x, %u bytes at +%u\n", i,
	       what[i], rkey, WLEN, WOFF(i));
	mri_tcp_send("WK %x %" PRIx64, rkey,
		     (uint64_t)(uintptr_t)win + WOFF(i));
}

static void server_invalidate(struct side *s, int i)
{
	struct ibv_wc wc;

	if (i == 0) {
		struct ibv_send_wr w = { .wr_id = 0x11,
					 .opcode = IBV_WR_LOCAL_INV,
					 .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		w.invalidate_rkey = bound[0];
		if (ibv_post_send(s->qp, &w, &bad))
			mri_fail("IBV_WR_LOCAL_INV: %m");
		wait_wc(s->scq, "local invalidate", 0x11, IBV_WC_SUCCESS,
			IBV_WC_LOCAL_INV, &wc);
	} else {
		struct ibv_mw_bind b = { .wr_id = 0xb0,
					 .send_flags = IBV_SEND_SIGNALED };

		/* length 0, no region: the type 1 window is unbound */
		if (ibv_bind_mw(s->qp, mws[2], &b))
			mri_fail("ibv_bind_mw (unbind): %m");
		wait_wc(s->scq, "unbind type 1", 0xb0, IBV_WC_SUCCESS,
			IBV_WC_BIND_MW, &wc);
	}
	printf("server: window %d (%s) invalidated\n", i, what[i]);
	mri_tcp_send("OK");
}

void mri_mw_server(struct side *s, const char *line)
{
	struct ibv_wc wc;
	char c;
	int i;

	if (sscanf(line, "W %c %d", &c, &i) != 2 || i < 0 ||
	    i >= MRI_MW_CASES || (c != 'B' && !mws[i]))
		mri_fail("server: bad window request '%s'", line);
	switch (c) {
	case 'B':
		server_bind(s, i);
		return;
	case 'C':
		/* the client's WRITE of this case, and nothing else, ever */
		model_write(i);
		if (memcmp(win, model, WIN_BUF)) {
			uint32_t k = 0;

			while (win[k] == model[k])
				k++;
			mri_fail("server: window %d: region byte %u is %#x, "
				 "expected %#x",
				 i, k, win[k], model[k]);
		}
		printf("server: window %d: region ok, %u bytes\n", i, WIN_BUF);
		mri_tcp_send("OK");
		return;
	case 'I':
		if (i == 1)
			break;
		server_invalidate(s, i);
		return;
	case 'R':
		if (i != 1)
			break;
		wait_wc(s->rcq, "SEND_WITH_INV receive", 0x3e1, IBV_WC_SUCCESS,
			IBV_WC_RECV, &wc);
		if (!(wc.wc_flags & IBV_WC_WITH_INV) || wc.byte_len != INV_LEN)
			mri_fail("server: SEND_WITH_INV receive: wc_flags %#x "
				 "byte_len %u",
				 wc.wc_flags, wc.byte_len);
		printf("server: window 1 invalidated by the peer: receive with "
		       "IBV_WC_WITH_INV, invalidated_rkey %#x\n",
		       wc.invalidated_rkey);
		mri_tcp_send("OK %x", wc.invalidated_rkey);
		return;
	}
	mri_fail("server: bad window request '%s'", line);
}

void mri_mw_free(void)
{
	int i;

	for (i = 0; i < MRI_MW_CASES; i++)
		if (mws[i] && ibv_dealloc_mw(mws[i]))
			mri_fail("ibv_dealloc_mw");
	if (win_mr && ibv_dereg_mr(win_mr))
		mri_fail("ibv_dereg_mr of the window region");
	free(win);
	free(model);
}

/* ---- client ---- */

static int rdma(struct side *s, enum ibv_wr_opcode op, uint64_t id,
		uint32_t loff, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { (uintptr_t)s->buf + loff, len, s->mr->lkey };
	struct ibv_send_wr w = { .wr_id = id,
				 .sg_list = &sg,
				 .num_sge = 1,
				 .opcode = op,
				 .send_flags = IBV_SEND_SIGNALED },
			   *bad;

	w.wr.rdma.remote_addr = raddr;
	w.wr.rdma.rkey = rkey;
	return ibv_post_send(s->qp, &w, &bad);
}

static void server_says_ok(void)
{
	char line[128];

	mri_tcp_expect(line, sizeof(line));
	if (strncmp(line, "OK", 2))
		mri_fail("server: %s", line);
}

void mri_mw_client(struct side *s, int i)
{
	/* client scratch: the WRITE source, then the READ target */
	const uint32_t src = OFF_SCR, rd = OFF_SCR + 16384;
	struct ibv_wc wc;
	char line[128];
	uint64_t addr;
	uint32_t rkey, inv;

	model_init();
	mri_tcp_send("W B %d", i);
	mri_tcp_expect(line, sizeof(line));
	if (sscanf(line, "WK %x %" SCNx64, &rkey, &addr) != 2)
		mri_fail("bad window line from the server: %s", line);
	/* through the window: WRITE, then READ all of it back */
	write_bytes(i, s->buf + src, 0);
	if (rdma(s, IBV_WR_RDMA_WRITE, 0x101, src, WR_LEN, addr + WR_OFF, rkey))
		mri_fail("post WRITE");
	wait_wc(s->scq, "WRITE through the window", 0x101, IBV_WC_SUCCESS,
		IBV_WC_RDMA_WRITE, &wc);
	memset(s->buf + rd, 0xcc, WLEN);
	if (rdma(s, IBV_WR_RDMA_READ, 0x102, rd, WLEN, addr, rkey))
		mri_fail("post READ");
	wait_wc(s->scq, "READ through the window", 0x102, IBV_WC_SUCCESS,
		IBV_WC_RDMA_READ, &wc);
	model_write(i);
	if (memcmp(s->buf + rd, model + WOFF(i), WLEN))
		mri_fail("window %d: the READ back differs from the model", i);
	printf("client: window %d (%s): WRITE %u + READ %u bytes through rkey "
	       "%#x, every byte as expected\n",
	       i, what[i], WR_LEN, WLEN, rkey);
	mri_tcp_send("W C %d", i);
	server_says_ok();

	/* invalidate */
	if (i == 1) {
		struct ibv_sge sg = { (uintptr_t)s->buf + src, INV_LEN,
				      s->mr->lkey };
		struct ibv_send_wr w = { .wr_id = 0x1e,
					 .sg_list = &sg,
					 .num_sge = 1,
					 .opcode = IBV_WR_SEND_WITH_INV,
					 .send_flags = IBV_SEND_SIGNALED },
				   *bad;

		w.invalidate_rkey = rkey;
		if (ibv_post_send(s->qp, &w, &bad))
			mri_fail("post SEND_WITH_INV: %m");
		wait_wc(s->scq, "SEND_WITH_INV", 0x1e, IBV_WC_SUCCESS,
			IBV_WC_SEND, &wc);
		mri_tcp_send("W R 1");
		mri_tcp_expect(line, sizeof(line));
		if (sscanf(line, "OK %x", &inv) != 1 || inv != rkey)
			mri_fail("server's invalidated_rkey: '%s', expected "
				 "%#x",
				 line, rkey);
	} else {
		mri_tcp_send("W I %d", i);
		server_says_ok();
	}

	/* the old rkey again: refused, nothing moves either way */
	write_bytes(i, s->buf + src, 1);
	memset(s->buf + rd, 0xcc, WLEN);
	if (i < 2) {
		if (rdma(s, IBV_WR_RDMA_WRITE, 0x103, src, WR_LEN,
			 addr + WR_OFF, rkey))
			mri_fail("post WRITE");
	} else if (rdma(s, IBV_WR_RDMA_READ, 0x103, rd, WLEN, addr, rkey)) {
		mri_fail("post READ");
	}
	wait_wc(s->scq, "access through the invalidated rkey", 0x103,
		IBV_WC_REM_ACCESS_ERR, 0, &wc);
	for (uint32_t k = 0; k < WLEN; k++)
		if (s->buf[rd + k] != 0xcc)
			mri_fail("window %d: the refused READ wrote byte %u", i,
				 k);
	printf("client: window %d: %s through the invalidated rkey %#x: %s\n",
	       i, i < 2 ? "WRITE" : "READ", rkey, ibv_wc_status_str(wc.status));
	mri_tcp_send("W C %d", i);
	server_says_ok();
	printf("client: window %d: the server's region is unchanged\n", i);
}
