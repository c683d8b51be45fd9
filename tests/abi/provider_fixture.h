/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * A MetaRoCE device for tests that open the provider through the real
 * libibverbs: a private network namespace with a veth pair, a device made
 * by metaroce-ctl on one end (the same view and /dev node users get), and
 * two devices that must not be listed (a malformed record, no record).
 *
 * Needs root (unshare, veth, mknod): without it mrt_fixture_setup()
 * returns 77 and the test skips. Environment from meson:
 * METAROCE_TEST_PROVIDER (RDMAV_DRIVERS stem of the built plugin) and
 * METAROCE_TEST_CTL (the built metaroce-ctl).
 */
#ifndef MRT_PROVIDER_FIXTURE_H
#define MRT_PROVIDER_FIXTURE_H

#include <stdint.h>

#include <infiniband/verbs.h>

#define MRT_DEV "mrt0"
#define MRT_MAC "02:00:c0:00:02:01"
#define MRT_GUID_BE 0x0000c0fffe000201ULL /* EUI-64 of MRT_MAC */
#define MRT_IP "192.0.2.1"
#define MRT_MTU 1024

/* 0: ready (SYSFS_PATH and RDMAV_DRIVERS set); 77: skip (not root);
 * 1: failed (reason on stderr). Removes everything at exit. */
int mrt_fixture_setup(void);

/* What a test of the provider's objects starts from: MRT_DEV opened
 * through libibverbs, a PD, a CQ of cqe entries and the port's GID 0 (our
 * own IPv4-mapped GID: a QP addressed with it loops back). */
struct mrt_dev {
	struct ibv_device **list;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid0;
};

/* mrt_fixture_setup(), then the above. Exits 77 when the fixture skips;
 * returns 0, or 1 with the reason on stderr. */
int mrt_fixture_open(struct mrt_dev *d, int cqe);
/* Destroys the CQ and PD, closes the device, frees the list: 0 or the
 * first failure's errno. */
int mrt_fixture_close(struct mrt_dev *d);

/* What the RC QPs of these tests allow a peer: everything but windows. */
#define MRT_ACC_ALL                                         \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

/* RESET -> INIT of a connected (RC or UC) QP on port 1, MRT_ACC_ALL:
 * 0 or ibv_modify_qp's errno. */
int mrt_conn_init(struct ibv_qp *q);
/* An RC QP INIT -> RTR -> RTS towards QP peer at gid (port 1, GID index
 * 0, MTU 1024, 4 reads/atomics each way, retries 7, as perftest and the
 * pingpongs do), receiving from rq_psn and sending from sq_psn: 0 or the
 * failing ibv_modify_qp's errno. */
int mrt_rc_up(struct ibv_qp *q, const union ibv_gid *gid, uint32_t peer,
	      uint32_t rq_psn, uint32_t sq_psn);

/* Two RC QPs on d's CQ and PD with the given capabilities and extended
 * send operations, each connected to the other by mrt_rc_up() at d's
 * GID 0 (PSN 0 both ways): 0, or -1 with whatever was created in *a and
 * *b (NULL otherwise) for the caller to destroy. */
int mrt_rc_pair(struct mrt_dev *d, const struct ibv_qp_cap *cap,
		uint64_t send_ops, struct ibv_qp **a, struct ibv_qp **b);

/* Up to n completions of c within 10 s; returns how many arrived. */
int mrt_wait_wc(struct ibv_cq *c, int n, struct ibv_wc *wc);

#endif /* MRT_PROVIDER_FIXTURE_H */
