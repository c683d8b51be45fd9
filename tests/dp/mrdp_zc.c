/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Zero-copy transmit through two devices (dp_zc.sh): a client WRITEs a
 * seeded script of messages of random data, from scatter/gather lists
 * over four MRs that touch (lists cross their boundaries), into a server;
 * the server compares every byte of its memory with the image the same
 * script yields, then the client READs the whole image back (the server's
 * READ responses are zero-copy too) and compares every byte again.
 *
 *   mrdp-zc server|client RECORD PEER_IP
 *
 * With METAROCE_DP_ZEROCOPY unset the datapath must have sent zero-copy
 * frames on both sides (tx_zc_pkts > 0) and none may have outlived its
 * transmit (zc_outlived 0); with METAROCE_DP_ZEROCOPY=0 it must have sent
 * none; with MRDP_ZC_NO_RESOLVE=1 (client) the first WRITEs wait for ARP
 * and must have been linearized. Exit 0 when all holds.
 *
 * Memory, addressed by offset (iova 0 at the start of each side's area):
 *   client: keys 1..4 = [k-1, k) MiB, the sources (seeded random bytes);
 *           key 5 = [4, 12) MiB, the READ destination; [12M, +64K) control
 *   server: key 1 = [0, 8) MiB, the WRITE target; [8M, +64K) control
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mrdp.h"

#define MIB (1u << 20)
#define AREA (12 * MIB + 65536)
#define TARGET (8 * MIB)
#define CTRL_C (12 * MIB)
#define CTRL_S (8 * MIB)
#define NMSG 160
#define MAXSGE 4
#define SQ 32
#define SEED 0x5eed2c0full

static uint8_t *mem, *image;
static int server, qp_failed;
static struct mrdp_dev *dev;
static struct mr_qp *qp;
static struct mr_cqe cq[256];
static unsigned cq_head, cq_tail;
static unsigned recv_early; /* receives seen while waiting for a send */

static uint64_t xs(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static int lookup(void *user, uint32_t pd, uint32_t key, int remote,
		  uint64_t addr, uint64_t len, unsigned need, uint8_t **host)
{
	uint64_t lo, hi;

	(void)user;
	(void)remote;
	(void)need;
	*host = NULL;
	if (!len)
		return 0;
	if (pd != 1)
		return -MR_EACCESS;
	if (server) {
		if (key != 1 && key != 2)
			return -MR_EACCESS;
		lo = key == 1 ? 0 : CTRL_S;
		hi = key == 1 ? TARGET : CTRL_S + 65536;
	} else if (key >= 1 && key <= 4) {
		lo = (uint64_t)(key - 1) * MIB;
		hi = lo + MIB;
	} else if (key == 5) {
		lo = 4 * MIB;
		hi = 12 * MIB;
	} else if (key == 6) {
		lo = CTRL_C;
		hi = CTRL_C + 65536;
	} else {
		return -MR_EACCESS;
	}
	if (addr < lo || addr > hi || len > hi - addr)
		return -MR_EACCESS;
	*host = mem + addr;
	return 0;
}

static void place(void *user, uint8_t *dst, const uint8_t *src, uint32_t len)
{
	(void)user;
	memcpy(dst, src, len);
}

static void complete(void *user, const struct mr_cqe *c)
{
	(void)user;
	if (cq_tail - cq_head < 256)
		cq[cq_tail++ % 256] = *c;
	else
		qp_failed = 1;
}

static void qp_error(void *user, void *qpu)
{
	(void)user;
	(void)qpu;
	qp_failed = 1;
}

static void *m_calloc(void *u, size_t n, size_t s)
{
	(void)u;
	return calloc(n, s);
}

static void m_free(void *u, void *p)
{
	(void)u;
	free(p);
}

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t m_rand(void *u)
{
	(void)u;
	return xs(&rng);
}

/* The script, the same on both sides. */
struct msg {
	struct mr_sge sge[MAXSGE];
	unsigned nsge;
	uint32_t len;
	uint64_t dst; /* offset in the server's target */
};
static struct msg script[NMSG];
static uint64_t used;

static int make_script(void)
{
	/* The first is large: with MRDP_ZC_NO_RESOLVE the very first
	 * packet is a zero-copy one that must wait for ARP. */
	static const uint32_t fixed[] = { 65536, 1,    1023, 1024,
					  4095,	 4096, 4097, 262144 };
	uint64_t s = SEED;
	unsigned i, j, k, n;

	for (i = 0; i < 4 * MIB; i++)
		image[i] = (uint8_t)(xs(&s) >> 24); /* the client's sources */
	used = 0;
	for (i = 0; i < NMSG; i++) {
		struct msg *m = &script[i];
		uint32_t len = i < sizeof(fixed) / sizeof(fixed[0])
				       ? fixed[i]
				       : 1 + (uint32_t)(xs(&s) % 81920);
		uint32_t left = len;

		/* 1..3 pieces; every third message's first piece straddles
		 * the end of an MR (two SGEs of two keys, adjacent iova). */
		n = 1 + (unsigned)(xs(&s) % (MAXSGE - 1));
		if (n > len)
			n = len;
		for (j = 0, k = 0; j < n; j++) {
			uint32_t piece = j + 1 == n ? left : len / n;
			uint32_t key = 1 + (uint32_t)(xs(&s) % 3);

			left -= piece;
			if (j == 0 && i % 3 == 0 && piece >= 2) {
				uint32_t in =
					1 + (uint32_t)(xs(&s) % (piece - 1));

				m->sge[k].addr = (uint64_t)key * MIB - in;
				m->sge[k].length = in;
				m->sge[k++].lkey = key;
				m->sge[k].addr = (uint64_t)key * MIB;
				m->sge[k].length = piece - in;
				m->sge[k++].lkey = key + 1;
				continue;
			}
			key = 1 + (uint32_t)(xs(&s) % 4);
			m->sge[k].addr = (uint64_t)(key - 1) * MIB +
					 xs(&s) % (MIB - piece + 1);
			m->sge[k].length = piece;
			m->sge[k++].lkey = key;
		}
		m->nsge = k;
		m->len = len;
		m->dst = used;
		used += (len + 63) / 64 * 64;
	}
	return used <= TARGET ? 0 : -1;
}

/* What the server's target must hold after the script. */
static void make_image(uint8_t *out)
{
	unsigned i, k;

	memset(out, 0, TARGET);
	for (i = 0; i < NMSG; i++) {
		uint64_t o = script[i].dst;

		for (k = 0; k < script[i].nsge; k++) {
			memcpy(out + o, image + script[i].sge[k].addr,
			       script[i].sge[k].length);
			o += script[i].sge[k].length;
		}
	}
}

static int post(const struct mr_send_wr *wr)
{
	int ret;

	for (;;) {
		mrdp_lock(dev);
		ret = mr_qp_post_send(qp, wr, mrdp_now());
		mrdp_unlock(dev);
		if (ret != -MR_EAGAIN)
			break;
		if (!mrdp_progress(dev))
			usleep(20);
	}
	mrdp_progress(dev);
	return ret;
}

static int poll_one(struct mr_cqe *c)
{
	uint64_t end = mrdp_now() + 20000000000ull;

	while (mrdp_now() < end && !qp_failed) {
		int got = 0;

		mrdp_lock(dev);
		if (cq_head != cq_tail) {
			*c = cq[cq_head++ % 256];
			got = 1;
		}
		mrdp_unlock(dev);
		if (got) {
			if (c->status != MR_WC_SUCCESS) {
				fprintf(stderr, "wr %llu: status %d\n",
					(unsigned long long)c->wr_id,
					c->status);
				return -1;
			}
			return 0;
		}
		if (!mrdp_progress(dev))
			usleep(20);
	}
	fprintf(stderr, "no completion within 20 s (or QP failed)\n");
	return -1;
}

/* Control: 4-byte tags by SEND from the control area. */
static int send_tag(uint32_t tag)
{
	uint64_t ctrl = server ? CTRL_S : CTRL_C;
	struct mr_sge sge = { ctrl, 4, server ? 2 : 6 };
	struct mr_send_wr wr = { .wr_id = 1000000 + tag,
				 .opcode = MR_WR_SEND,
				 .flags = MR_SEND_SIGNALED,
				 .sg_list = &sge,
				 .num_sge = 1 };
	struct mr_cqe c;

	memcpy(mem + ctrl, &tag, 4);
	if (post(&wr))
		return -1;
	for (;;) {
		if (poll_one(&c))
			return -1;
		if (c.is_recv)
			recv_early++;
		else if (c.wr_id == wr.wr_id)
			return 0;
	}
}

static int recv_tag(uint32_t *tag)
{
	uint64_t ctrl = (server ? CTRL_S : CTRL_C) + 4096;
	struct mr_sge sge = { ctrl, 64, server ? 2 : 6 };
	struct mr_recv_wr rw = { 7, &sge, 1 };
	struct mr_cqe c;
	int ret;

	if (recv_early) {
		recv_early--;
	} else {
		do {
			if (poll_one(&c))
				return -1;
		} while (!c.is_recv);
	}
	memcpy(tag, mem + ctrl, 4);
	mrdp_lock(dev);
	ret = mr_qp_post_recv(qp, &rw);
	mrdp_unlock(dev);
	return ret;
}

static int setup(const char *record, uint32_t peer, struct mr_ep **epp)
{
	struct mr_devconf c;
	struct mr_ep_config ec = { 0 };
	struct mr_mem mm = { m_calloc, m_free, NULL };
	struct mr_rand rnd = { m_rand, NULL };
	struct mr_memreg reg = { .lookup = lookup };
	struct mr_callbacks cb = { .place = place,
				   .complete = complete,
				   .qp_error = qp_error };
	struct mr_qp_config qc = { 0 };
	struct mr_qp_attr at = { 0 };
	struct mrdp_config dc = { 0 };
	struct mr_sge sge;
	struct mr_recv_wr rw = { 7, &sge, 1 };
	char err[256];
	unsigned i;
	int ret;

	if (mr_devconf_read(record, &c, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	ec.mtu = c.mtu;
	ec.num_paths = 4;
	ec.max_qp = 2;
	ec.num_planes = (uint8_t)c.nports;
	rng ^= (uint64_t)server << 32;
	ret = mr_ep_create(&ec, &mm, &rnd, &reg, &cb, epp);
	if (ret) {
		fprintf(stderr, "mr_ep_create: %d\n", ret);
		return -1;
	}
	dc.conf = &c;
	dc.ops = mrdp_ep_ops(*epp);
	ret = mrdp_open(&dc, &dev, err, sizeof(err));
	if (ret) {
		fprintf(stderr, "mrdp_open: %s\n", err);
		return -1;
	}
	qc.type = MR_QPT_RC;
	qc.qpn = server ? 0x22 : 0x11;
	qc.pd = 1;
	qc.max_send_wr = SQ;
	qc.max_recv_wr = 8;
	qc.max_send_sge = MAXSGE;
	qc.max_recv_sge = 1;
	mrdp_lock(dev);
	ret = mr_qp_create(*epp, &qc, &qp);
	at.state = MR_QPS_INIT;
	at.access = MR_ACCESS_LOCAL_WRITE | MR_ACCESS_REMOTE_WRITE |
		    MR_ACCESS_REMOTE_READ;
	if (!ret)
		ret = mr_qp_modify(qp, &at, MR_QP_STATE | MR_QP_ACCESS_FLAGS);
	at.state = MR_QPS_RTR;
	at.dest_qpn = server ? 0x11 : 0x22;
	at.rq_psn = server ? 1000 : 2000;
	at.path_mtu_bytes = c.mtu;
	at.dest = peer;
	at.max_dest_rd_atomic = 16;
	at.min_rnr_timer = 1;
	if (!ret)
		ret = mr_qp_modify(qp, &at,
				   MR_QP_STATE | MR_QP_DEST | MR_QP_PATH_MTU |
					   MR_QP_DEST_QPN | MR_QP_RQ_PSN |
					   MR_QP_MAX_DEST_RD_ATOMIC |
					   MR_QP_MIN_RNR_TIMER);
	at.state = MR_QPS_RTS;
	at.sq_psn = server ? 2000 : 1000;
	at.timeout = 14;
	at.retry_cnt = 7;
	at.rnr_retry = 7;
	at.max_rd_atomic = 16;
	if (!ret)
		ret = mr_qp_modify(qp, &at,
				   MR_QP_STATE | MR_QP_SQ_PSN | MR_QP_TIMEOUT |
					   MR_QP_RETRY_CNT | MR_QP_RNR_RETRY |
					   MR_QP_MAX_QP_RD_ATOMIC);
	sge.addr = (server ? CTRL_S : CTRL_C) + 4096;
	sge.length = 64;
	sge.lkey = server ? 2 : 6;
	for (i = 0; !ret && i < 4; i++)
		ret = mr_qp_post_recv(qp, &rw);
	mrdp_unlock(dev);
	if (ret) {
		fprintf(stderr, "QP setup: %d\n", ret);
		return -1;
	}
	/* MRDP_ZC_NO_RESOLVE=1: the first WRITEs find the server's address
	 * unresolved and wait for ARP, which must linearize them. */
	if (getenv("MRDP_ZC_NO_RESOLVE"))
		return 0;
	for (i = 0; !server && i < 5000 && mrdp_resolve(dev, peer, NULL) != 1;
	     i++)
		usleep(1000);
	return 0;
}

#define TAG(a, b, c, d)                                             \
	((uint32_t)(a) | (uint32_t)(b) << 8 | (uint32_t)(c) << 16 | \
	 (uint32_t)(d) << 24)

static int run_client(void)
{
	uint64_t t0 = mrdp_now();
	unsigned i, posted = 0, done = 0;
	uint32_t tag;
	uint64_t off;

	memcpy(mem, image, 4 * MIB);
	/* Up to SQ WRITEs in flight; completions come in order. */
	while (done < NMSG) {
		struct mr_cqe c;

		while (posted < NMSG && posted - done < SQ) {
			struct msg *m = &script[posted];
			struct mr_send_wr wr = {
				.wr_id = posted,
				.opcode = MR_WR_RDMA_WRITE,
				.flags = MR_SEND_SIGNALED,
				.sg_list = m->sge,
				.num_sge = m->nsge,
				.remote_addr = m->dst,
				.rkey = 1,
			};

			if (post(&wr))
				return 1;
			posted++;
		}
		if (poll_one(&c))
			return 1;
		if (c.is_recv || c.wr_id != done) {
			fprintf(stderr, "completion %llu, wanted %u\n",
				(unsigned long long)c.wr_id, done);
			return 1;
		}
		done++;
	}
	printf("client: %u WRITEs, %llu bytes, in %.1f ms\n", NMSG,
	       (unsigned long long)used, (double)(mrdp_now() - t0) / 1e6);
	if (send_tag(TAG('C', 'H', 'K', '1')) || recv_tag(&tag) ||
	    tag != TAG('G', 'O', 'O', 'D')) {
		fprintf(stderr, "client: the server's memory differs\n");
		return 1;
	}
	/* READ the image back in 1 MiB pieces. */
	for (off = 0; off < used; off += MIB) {
		uint32_t n = used - off < MIB ? (uint32_t)(used - off) : MIB;
		struct mr_sge sge = { 4 * MIB + off, n, 5 };
		struct mr_send_wr wr = { .wr_id = 5000 + off / MIB,
					 .opcode = MR_WR_RDMA_READ,
					 .flags = MR_SEND_SIGNALED,
					 .sg_list = &sge,
					 .num_sge = 1,
					 .remote_addr = off,
					 .rkey = 1 };
		struct mr_cqe c;

		if (post(&wr) || poll_one(&c) || c.wr_id != wr.wr_id)
			return 1;
	}
	make_image(image + 4 * MIB);
	for (i = 0; i < used; i++)
		if (mem[4 * MIB + i] != image[4 * MIB + i]) {
			fprintf(stderr, "READ back: byte %u differs\n", i);
			return 1;
		}
	printf("client: READ back %llu bytes, byte-exact\n",
	       (unsigned long long)used);
	return send_tag(TAG('B', 'Y', 'E', '!')) ? 1 : 0;
}

static int run_server(void)
{
	uint32_t tag;
	uint64_t i;
	int ok;

	if (recv_tag(&tag) || tag != TAG('C', 'H', 'K', '1'))
		return 1;
	make_image(image + 4 * MIB);
	ok = !memcmp(mem, image + 4 * MIB, TARGET);
	for (i = 0; !ok && i < TARGET; i++)
		if (mem[i] != image[4 * MIB + i]) {
			fprintf(stderr, "server: byte %llu differs\n",
				(unsigned long long)i);
			break;
		}
	printf("server: %llu bytes WRITTEN %s\n", (unsigned long long)used,
	       ok ? "byte-exact" : "DIFFER");
	if (send_tag(ok ? TAG('G', 'O', 'O', 'D') : TAG('B', 'A', 'D', '!')) ||
	    !ok)
		return 1;
	/* Serve the READs until BYE!. */
	if (recv_tag(&tag) || tag != TAG('B', 'Y', 'E', '!'))
		return 1;
	usleep(200000); /* the ACK of BYE! */
	return 0;
}

/* The zero-copy counters must say what the environment asked for. */
static int check_counters(const char *who)
{
	const char *env = getenv("METAROCE_DP_ZEROCOPY");
	int want = !(env && !strcmp(env, "0"));
	struct mrdp_counters k;
	static char json[16384];
	uint64_t zc = 0, lin = 0;
	unsigned i;
	int on = 0;

	mrdp_get_counters(dev, &k);
	mrdp_counters_json(&k, who, json, sizeof(json));
	printf("%s: datapath %s", who, json);
	for (i = 0; i < k.nplanes; i++) {
		zc += k.plane[i].tx_zc_pkts;
		lin += k.plane[i].tx_zc_linearized;
		on |= k.plane[i].zerocopy;
	}
	printf("%s: zero-copy %s, %llu frames, %llu linearized, outlived "
	       "%llu\n",
	       who, on ? "on" : "off", (unsigned long long)zc,
	       (unsigned long long)lin, (unsigned long long)k.zc_outlived);
	if (k.zc_outlived)
		return 1;
	if (want && (!on || !zc)) {
		fprintf(stderr, "%s: zero-copy expected, none sent\n", who);
		return 1;
	}
	if (!want && (on || zc || lin)) {
		fprintf(stderr, "%s: zero-copy off, yet used\n", who);
		return 1;
	}
	if (want && !server && getenv("MRDP_ZC_NO_RESOLVE") && !lin) {
		fprintf(stderr, "%s: nothing waited for ARP linearized\n", who);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct in_addr a;
	struct mr_ep *ep;
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 4 || inet_pton(AF_INET, argv[3], &a) != 1 ||
	    (strcmp(argv[1], "server") && strcmp(argv[1], "client"))) {
		fprintf(stderr, "usage: %s server|client RECORD PEER_IP\n",
			argv[0]);
		return 2;
	}
	server = !strcmp(argv[1], "server");
	mem = aligned_alloc(4096, AREA);
	image = malloc(12 * MIB);
	if (!mem || !image)
		return 1;
	memset(mem, 0, AREA);
	if (make_script()) {
		fprintf(stderr, "the script does not fit the target\n");
		return 1;
	}
	if (setup(argv[2], ntohl(a.s_addr), &ep))
		return 1;
	printf("%s: up\n", argv[1]);
	ret = server ? run_server() : run_client();
	if (qp_failed) {
		fprintf(stderr, "%s: QP failed\n", argv[1]);
		ret = 1;
	}
	if (check_counters(argv[1]))
		ret = 1;
	mrdp_close(dev);
	mr_qp_destroy(qp);
	mr_ep_destroy(ep);
	printf("%s: %s\n", argv[1], ret ? "FAILED" : "ok");
	return ret;
}
