// SPDX-License-Identifier: BSD-2-Clause
/*
 * mri-forge: only the connected peer gets in (docs/spec/transport.md
 * MR-RSP-1), over the real datapath. Three hosts on one bridge:
 *
 *   mri-forge target -d DEV -o FILE          (host A, the responder)
 *   mri-forge peer -d DEV -w FILE HOST       (host B, its RC peer)
 *   mri-forge attack -f FILE IP              (host C, anyone else)
 *
 * The target registers a region of seeded bytes and an atomic word, and
 * connects one RC QP to the peer's (QPNs, GIDs, rkey and address over TCP
 * port 18700, as perftest exchanges them). The peer WRITEs 64 bytes to
 * prove the connection carries traffic, then waits for FILE.done (the
 * script makes it once the attack is over) and asks the target to check.
 * The target writes FILE: its QPN, the peer's QPN, the rkey, the region's
 * and the atomic's addresses: everything an attacker could learn or
 * guess. The attacker sends, from its own address, a WRITE, a READ and a
 * FETCH_AND_ADD with exactly those QPNs and that rkey, built with the
 * project's own wire encoder (lib/core mr_wire.h) in a UDP datagram to the
 * MetaRoCE port, each three times, and listens for any answer.
 * Pass: the target's memory is byte for byte what the peer's WRITE left,
 * the atomic word unchanged, the attacker heard nothing; the script then
 * reads the target's drop counters (drop_peer_addr).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "mr_wire.h"

#define TCP_PORT 18700
#define REGION 4096
#define LEGIT 64 /* bytes the peer writes at offset 0 */

static int fail(const char *what)
{
	printf("FAIL: %s%s%s\n", what, errno ? ": " : "",
	       errno ? strerror(errno) : "");
	exit(1);
}

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static struct ibv_cq *cq;
static struct ibv_qp *qp;
static union ibv_gid gid;

static void open_dev(const char *name)
{
	struct ibv_device **l = ibv_get_device_list(NULL);
	struct ibv_qp_init_attr a = { .qp_type = IBV_QPT_RC,
				      .cap = { .max_send_wr = 4,
					       .max_recv_wr = 4,
					       .max_send_sge = 1,
					       .max_recv_sge = 1 } };
	struct ibv_qp_attr m = { .qp_state = IBV_QPS_INIT,
				 .port_num = 1,
				 .qp_access_flags = IBV_ACCESS_LOCAL_WRITE |
						    IBV_ACCESS_REMOTE_WRITE |
						    IBV_ACCESS_REMOTE_READ |
						    IBV_ACCESS_REMOTE_ATOMIC };

	for (int i = 0; l && l[i] && !ctx; i++)
		if (!strcmp(ibv_get_device_name(l[i]), name))
			ctx = ibv_open_device(l[i]);
	if (!ctx)
		fail("open device");
	if (ibv_query_gid(ctx, 1, 0, &gid))
		fail("query gid");
	pd = ibv_alloc_pd(ctx);
	cq = ibv_create_cq(ctx, 8, NULL, NULL, 0);
	if (!pd || !cq)
		fail("pd/cq");
	a.send_cq = a.recv_cq = cq;
	qp = ibv_create_qp(pd, &a);
	if (!qp || ibv_modify_qp(qp, &m,
				 IBV_QP_STATE | IBV_QP_PKEY_INDEX |
					 IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		fail("qp");
}

static void connect_qp(uint32_t dqpn, const union ibv_gid *dgid)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RTR,
				 .path_mtu = IBV_MTU_1024,
				 .dest_qp_num = dqpn,
				 .max_dest_rd_atomic = 1,
				 .min_rnr_timer = 12 };

	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
				  IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER))
		fail("rtr");
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	if (ibv_modify_qp(qp, &a,
			  IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
				  IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC))
		fail("rts");
}

static void gid_str(const union ibv_gid *g, char *s)
{
	for (int i = 0; i < 16; i++)
		sprintf(s + 2 * i, "%02x", g->raw[i]);
}

static void str_gid(const char *s, union ibv_gid *g)
{
	for (int i = 0; i < 16; i++) {
		unsigned v;

		if (sscanf(s + 2 * i, "%2x", &v) != 1)
			fail("bad gid");
		g->raw[i] = (uint8_t)v;
	}
}

static FILE *tcp(const char *host)
{
	struct sockaddr_in sa = { .sin_family = AF_INET,
				  .sin_port = htons(TCP_PORT) };
	int s = socket(AF_INET, SOCK_STREAM, 0), one = 1, c;
	struct timeval tv = { .tv_sec = 60 };

	if (s < 0)
		fail("socket");
	if (host) {
		inet_pton(AF_INET, host, &sa.sin_addr);
		for (int i = 0; connect(s, (void *)&sa, sizeof(sa)); i++) {
			if (i > 100)
				fail("connect");
			usleep(100000);
		}
		c = s;
	} else {
		setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(s, (void *)&sa, sizeof(sa)) || listen(s, 1))
			fail("listen");
		c = accept(s, NULL, NULL);
		if (c < 0)
			fail("accept");
		close(s);
	}
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fdopen(c, "r+");
}

static uint8_t expect_byte(size_t i)
{
	return (uint8_t)(i * 29 + 7);
}

static int run_target(const char *file)
{
	uint8_t *buf = aligned_alloc(4096, REGION);
	uint64_t *atom = aligned_alloc(64, 64);
	struct ibv_mr *mr, *ma;
	char line[256], g[40];
	union ibv_gid pg;
	unsigned pqpn;
	FILE *f, *o;

	open_dev(getenv("MRI_DEV") ? getenv("MRI_DEV") : "");
	for (size_t i = 0; i < REGION; i++)
		buf[i] = expect_byte(i);
	*atom = 0x1122334455667788ull;
	mr = ibv_reg_mr(pd, buf, REGION,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ);
	ma = ibv_reg_mr(pd, atom, 64,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
	if (!mr || !ma)
		fail("reg_mr");
	f = tcp(NULL);
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "peer %x %39s", &pqpn, g) != 2)
		fail("peer hello");
	str_gid(g, &pg);
	gid_str(&gid, g);
	fprintf(f, "target %x %s %x %" PRIx64 "\n", qp->qp_num, g, mr->rkey,
		(uint64_t)(uintptr_t)buf);
	fflush(f);
	connect_qp(pqpn, &pg);
	o = fopen(file, "w");
	if (!o)
		fail("output file");
	/* what anyone could learn: QPNs, keys, addresses */
	fprintf(o, "%x %x %x %" PRIx64 " %x %" PRIx64 "\n", qp->qp_num, pqpn,
		mr->rkey, (uint64_t)(uintptr_t)buf, ma->rkey,
		(uint64_t)(uintptr_t)atom);
	fclose(o);
	printf("target: qpn 0x%x, peer qpn 0x%x, rkey 0x%x\n", qp->qp_num, pqpn,
	       mr->rkey);
	fflush(stdout);
	if (!fgets(line, sizeof(line), f) || strncmp(line, "verify", 6))
		fail("peer's verify");
	/* The peer's WRITE landed; nothing else changed. */
	for (size_t i = 0; i < REGION; i++) {
		uint8_t want = i < LEGIT ? (uint8_t)(0xa0 + i) : expect_byte(i);

		if (buf[i] != want) {
			printf("FAIL: byte %zu is 0x%02x, not 0x%02x\n", i,
			       buf[i], want);
			fprintf(f, "fail\n");
			return 1;
		}
	}
	if (*atom != 0x1122334455667788ull) {
		printf("FAIL: the atomic word changed: 0x%" PRIx64 "\n", *atom);
		fprintf(f, "fail\n");
		return 1;
	}
	printf("target: %d bytes as the peer wrote them, %d untouched, the "
	       "atomic word unchanged\n",
	       LEGIT, REGION - LEGIT);
	fprintf(f, "ok\n");
	fflush(f);
	return 0;
}

static int run_peer(const char *wait_file, const char *host)
{
	uint8_t src[LEGIT];
	struct ibv_mr *ms;
	char line[256], g[40];
	union ibv_gid tg;
	unsigned tqpn, rkey;
	uint64_t addr;
	struct ibv_sge sg;
	struct ibv_send_wr w = { .opcode = IBV_WR_RDMA_WRITE,
				 .send_flags = IBV_SEND_SIGNALED,
				 .sg_list = &sg,
				 .num_sge = 1 },
			   *bad;
	struct ibv_wc wc;
	char done[512];
	FILE *f;
	int n = 0;

	open_dev(getenv("MRI_DEV") ? getenv("MRI_DEV") : "");
	for (int i = 0; i < LEGIT; i++)
		src[i] = (uint8_t)(0xa0 + i);
	ms = ibv_reg_mr(pd, src, LEGIT, IBV_ACCESS_LOCAL_WRITE);
	if (!ms)
		fail("reg_mr");
	f = tcp(host);
	gid_str(&gid, g);
	fprintf(f, "peer %x %s\n", qp->qp_num, g);
	fflush(f);
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "target %x %39s %x %" SCNx64, &tqpn, g, &rkey,
		   &addr) != 4)
		fail("target hello");
	str_gid(g, &tg);
	connect_qp(tqpn, &tg);
	sg.addr = (uintptr_t)src;
	sg.length = LEGIT;
	sg.lkey = ms->lkey;
	w.wr.rdma.remote_addr = addr;
	w.wr.rdma.rkey = rkey;
	if (ibv_post_send(qp, &w, &bad))
		fail("post WRITE");
	for (int i = 0; i < 20000 && !n; i++) {
		n = ibv_poll_cq(cq, 1, &wc);
		if (!n)
			usleep(500);
	}
	if (n != 1 || wc.status != IBV_WC_SUCCESS)
		fail("the peer's WRITE did not complete");
	printf("peer: its WRITE of %d bytes completed\n", LEGIT);
	fflush(stdout);
	snprintf(done, sizeof(done), "%s.done", wait_file);
	for (int i = 0; access(done, F_OK); i++) {
		if (i > 600)
			fail("no end of the attack");
		usleep(100000);
	}
	fprintf(f, "verify\n");
	fflush(f);
	if (!fgets(line, sizeof(line), f) || strncmp(line, "ok", 2))
		fail("the target found its memory changed");
	printf("peer: the target's memory is as it should be\n");
	return 0;
}

/* One forged request, with everything right but the source address. */
static size_t forge(uint8_t *buf, size_t cap, uint8_t op, uint32_t dqpn,
		    uint32_t sqpn, uint32_t ssn, uint32_t rkey, uint64_t va,
		    const uint8_t *payload, uint32_t plen)
{
	struct mr_pkt p;

	memset(&p, 0, sizeof(p));
	p.bth.version = MR_WIRE_VERSION;
	p.bth.opcode = op;
	p.bth.flags = MR_BTH_F_ACK_REQ;
	p.bth.dqpn = dqpn;
	p.bth.sqpn = sqpn;
	p.bth.ssn = ssn;
	p.bth.msn = 1; /* the peer's WRITE was message 0 */
	if (op == MR_OP_ATOMIC_FA) {
		p.bth.msg_len = MR_WIRE_ATOMIC_LEN;
		p.atom.vaddr = va;
		p.atom.rkey = rkey;
		p.atom.swap_add = 1;
	} else {
		p.bth.msg_len = op == MR_OP_READ_REQ ? 64 : plen;
		p.reth.vaddr = va;
		p.reth.rkey = rkey;
		p.reth.dma_len = p.bth.msg_len;
		p.payload = payload;
		p.payload_len = plen;
	}
	return mr_wire_encode(&p, buf, cap);
}

static int run_attack(const char *file, const char *ip)
{
	unsigned dqpn, sqpn, rkey, akey;
	uint64_t va, aa;
	uint8_t pkt[2048], junk[64], in[2048];
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(MR_UDP_PORT_DEFAULT) };
	struct pollfd pf;
	int s, sent = 0, heard = 0;
	FILE *f = fopen(file, "r");

	if (!f || fscanf(f, "%x %x %x %" SCNx64 " %x %" SCNx64, &dqpn, &sqpn,
			 &rkey, &va, &akey, &aa) != 6)
		fail("read the target's file");
	fclose(f);
	memset(junk, 0xee, sizeof(junk));
	inet_pton(AF_INET, ip, &to.sin_addr);
	s = socket(AF_INET, SOCK_DGRAM, 0);
	if (s < 0)
		fail("udp socket");
	/* MR-ENC-4: checksum 0, as MetaRoCE senders do. (A kernel checksum
	 * over veth is left to the offload the receiving af_packet port
	 * never gets: the datapath counts it as udp_checksum.) */
	if (setsockopt(s, SOL_SOCKET, SO_NO_CHECK, &(int){ 1 }, sizeof(int)))
		fail("SO_NO_CHECK");
	for (int round = 0; round < 3; round++) {
		/* ssns around where the peer's stream is: the window holds */
		uint32_t ssn = (uint32_t)round;
		size_t n[3];
		uint8_t b[3][256];

		n[0] = forge(b[0], sizeof(b[0]), MR_OP_WRITE, dqpn, sqpn, ssn,
			     rkey, va + 1024, junk, sizeof(junk));
		n[1] = forge(b[1], sizeof(b[1]), MR_OP_READ_REQ, dqpn, sqpn,
			     ssn + 1, rkey, va, NULL, 0);
		n[2] = forge(b[2], sizeof(b[2]), MR_OP_ATOMIC_FA, dqpn, sqpn,
			     ssn + 2, akey, aa, NULL, 0);
		for (int k = 0; k < 3; k++) {
			if (!n[k])
				fail("encode");
			memcpy(pkt, b[k], n[k]);
			if (sendto(s, pkt, n[k], 0, (void *)&to, sizeof(to)) !=
			    (ssize_t)n[k])
				fail("sendto");
			sent++;
		}
	}
	/* Anything the target sends back comes to this socket. */
	pf.fd = s;
	pf.events = POLLIN;
	while (poll(&pf, 1, 1500) > 0)
		if (recv(s, in, sizeof(in), 0) > 0)
			heard++;
	printf("attacker: %d forged requests (WRITE, READ, FETCH_AND_ADD) "
	       "sent from another address, %d answers\n",
	       sent, heard);
	return heard ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *file = NULL;
	int c;

	if (argc < 2) {
		fprintf(stderr, "usage: mri-forge target|peer|attack ...\n");
		return 2;
	}
	optind = 2;
	while ((c = getopt(argc, argv, "d:o:w:f:")) != -1) {
		switch (c) {
		case 'd':
			setenv("MRI_DEV", optarg, 1);
			break;
		case 'o':
		case 'w':
		case 'f':
			file = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!file)
		return 2;
	if (!strcmp(argv[1], "target"))
		return run_target(file);
	if (!strcmp(argv[1], "peer") && optind < argc)
		return run_peer(file, argv[optind]);
	if (!strcmp(argv[1], "attack") && optind < argc)
		return run_attack(file, argv[optind]);
	return 2;
}
