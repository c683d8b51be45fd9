/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Steering: several processes share one device (one interface), and each
 * process's kernel socket takes only the frames addressed to its own QPs.
 *
 * Why: every process that opens an af_packet port has its own AF_PACKET
 * socket on the interface, and the kernel copies every frame of the
 * interface into every such socket's ring; each process then polls,
 * classifies and drops the frames of the others. Four ib_write_bw pairs on
 * one device per host together reached less than one pair alone (issue
 * 13). A classic BPF socket filter runs in the kernel before the copy into
 * the ring (tpacket_rcv -> run_filter), so a frame for another process
 * costs that process nothing but the filter's few instructions.
 *
 * How: the 24-bit QPN space is cut into MRDP_STEER_SLOTS slots of
 * 2^MRDP_STEER_SLOT_BITS QPNs. Each process that opens the device claims
 * one slot (an flock()ed file per slot in a directory of the device, so a
 * slot is freed when its process exits, however it exits), creates its QPs
 * in that slot only (mrdp_qpn_range), and filters its socket to: ARP
 * (every process resolves and answers for itself), IPv6 frames that are not
 * UDP (neighbour discovery), and UDP frames to the device's port whose
 * BTH dqpn lies in its slot (MR-HDR-6: dqpn is always the QP that receives
 * the packet, for requests, responses and ACKs alike). Everything else
 * (the host's TCP, other processes' packets) stays out of the ring.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <unistd.h>

#include "mrdp_int.h"
#include "mrdp_pkt.h"

/* Byte offsets in a frame (MR-ENC-*: Ethernet II, then IPv4 or IPv6, UDP,
 * BTH; dqpn is the BTH's second 32-bit word, low 24 bits). */
#define OFF_ETHERTYPE 12
#define OFF_IP4_VIHL 14
#define OFF_IP4_FRAG 20
#define OFF_IP4_PROTO 23
#define OFF_IP6_NEXT 20
#define OFF_IP6_DPORT (14 + 40 + 2)
#define OFF_IP6_DQPN (14 + 40 + 8 + 4)
/* From the IPv4 header's start (x = its length): UDP dport, BTH dqpn. */
#define OFF_X_DPORT (14 + 2)
#define OFF_X_DQPN (14 + 8 + 4)

#define STMT(c, k) ((struct sock_filter)BPF_STMT((c), (k)))
#define JUMP(c, k, t, f) ((struct sock_filter)BPF_JUMP((c), (k), (t), (f)))

unsigned mrdp_steer_program(struct sock_filter *f, uint16_t udp_port,
			    uint32_t lo, uint32_t hi)
{
	/* Instruction numbers of the jump targets (jumps are relative:
	 * target - this - 1). */
	enum { V4 = 3, V6 = 14, ACCEPT = 23, DROP = 24, LEN = 25 };
	unsigned n = 0;

	f[n++] = STMT(BPF_LD | BPF_H | BPF_ABS, OFF_ETHERTYPE); /* 0 */
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0806, ACCEPT - 2, 0);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x0800, 0, V6 - 3);
	/* V4 = 3 */
	f[n++] = STMT(BPF_LD | BPF_B | BPF_ABS, OFF_IP4_PROTO);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, DROP - 5);
	f[n++] = STMT(BPF_LD | BPF_H | BPF_ABS, OFF_IP4_FRAG);
	f[n++] = JUMP(BPF_JMP | BPF_JSET | BPF_K, 0x1fff, DROP - 7, 0);
	f[n++] = STMT(BPF_LDX | BPF_B | BPF_MSH, OFF_IP4_VIHL);
	f[n++] = STMT(BPF_LD | BPF_H | BPF_IND, OFF_X_DPORT);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, udp_port, 0, DROP - 10);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_IND, OFF_X_DQPN);
	f[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, MR_QPN_MASK);
	f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, DROP - 13);
	f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, hi, DROP - 14, ACCEPT - 14);
	/* V6 = 14 */
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 0x86dd, 0, DROP - 15);
	f[n++] = STMT(BPF_LD | BPF_B | BPF_ABS, OFF_IP6_NEXT);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, 17, 0, ACCEPT - 17);
	f[n++] = STMT(BPF_LD | BPF_H | BPF_ABS, OFF_IP6_DPORT);
	f[n++] = JUMP(BPF_JMP | BPF_JEQ | BPF_K, udp_port, 0, DROP - 19);
	f[n++] = STMT(BPF_LD | BPF_W | BPF_ABS, OFF_IP6_DQPN);
	f[n++] = STMT(BPF_ALU | BPF_AND | BPF_K, MR_QPN_MASK);
	f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, lo, 0, DROP - 22);
	f[n++] = JUMP(BPF_JMP | BPF_JGE | BPF_K, hi, DROP - 23, ACCEPT - 23);
	/* ACCEPT = 23: the whole frame. */
	f[n++] = STMT(BPF_RET | BPF_K, 0xffffffffu);
	/* DROP = 24 */
	f[n++] = STMT(BPF_RET | BPF_K, 0);
	(void)V4;
	_Static_assert(LEN <= MRDP_STEER_PROG_MAX, "program fits");
	return n;
}

/* Claim slot s: 0 if this process now holds it, -EBUSY if another does,
 * another negative errno if the file cannot be made. */
static int claim(const char *dir, unsigned s, int *fd_out)
{
	char path[PATH_MAX];
	int fd;

	if (snprintf(path, sizeof(path), "%s/qpn-slot.%u", dir, s) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	/* The directory may be world-writable and sticky (the stats
	 * directory): open an existing file without O_CREAT (another user's
	 * file, fs.protected_regular), create a missing one exclusively,
	 * never follow a symlink. Read-only is enough for flock(). */
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT)
		fd = open(path, O_RDONLY | O_CREAT | O_EXCL | O_NOFOLLOW |
					O_CLOEXEC,
			  0444);
	if (fd < 0 && errno == EEXIST)
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		int e = errno;

		close(fd);
		return e == EWOULDBLOCK ? -EBUSY : -e;
	}
	*fd_out = fd;
	return 0;
}

int mrdp_steer_open(struct mrdp_dev *d, const char *dir, unsigned want,
		    char *err, size_t errlen)
{
	struct sock_filter prog[MRDP_STEER_PROG_MAX];
	struct sock_fprog fp;
	unsigned s, i, n;
	int ret = -EBUSY;

	d->steer_fd = -1;
	if (want >= MRDP_STEER_SLOTS) {
		snprintf(err, errlen, "%s: QPN slot %u is not 1..%u",
			 d->conf.name, want, MRDP_STEER_SLOTS - 1);
		return -EINVAL;
	}
	/* Slot 0 holds QPNs 0 and 1, special in IB: slots start at 1. */
	for (s = want ? want : 1; s < MRDP_STEER_SLOTS; s++) {
		ret = claim(dir, s, &d->steer_fd);
		if (ret != -EBUSY || want)
			break;
	}
	if (ret) {
		snprintf(err, errlen, "%s: no QPN slot in %s: %s", d->conf.name,
			 dir,
			 ret == -EBUSY ? (want ? "slot in use by another process"
					       : "all in use")
				       : strerror(-ret));
		return ret;
	}
	d->steer_slot = s;
	d->qpn_base = s << MRDP_STEER_SLOT_BITS;
	d->qpn_count = 1u << MRDP_STEER_SLOT_BITS;
	n = mrdp_steer_program(prog, d->conf.udp_port, d->qpn_base,
			       d->qpn_base + d->qpn_count);
	fp.len = (unsigned short)n;
	fp.filter = prog;
	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];

		/* Only af_packet sockets are known (mrdp_wait.c); a port
		 * without one receives everything, as before. */
		/* A net_mrpkt plane's wait_fd may be its receive hold's
		 * epoll set (mrdp_pkt_hold.c): the filter goes on the
		 * socket. */
		int fd = p->pkt ? mrdp_pkt_fd(p->pkt) : p->wait_fd;

		if (fd < 0 || p->wait_xsk)
			continue;
		if (setsockopt(fd, SOL_SOCKET, SO_ATTACH_FILTER, &fp,
			       sizeof(fp)) != 0) {
			MRDP_LOG("%s: plane %u: SO_ATTACH_FILTER: %s\n",
				 d->conf.name, i, strerror(errno));
			continue;
		}
		p->c.steered = 1;
	}

	MRDP_LOG("%s: QPN slot %u (QPNs 0x%06x..0x%06x)\n", d->conf.name, s,
		 d->qpn_base, d->qpn_base + d->qpn_count - 1);
	return 0;
}

void mrdp_steer_close(struct mrdp_dev *d)
{
	if (d->steer_fd >= 0)
		close(d->steer_fd); /* drops the flock */
	d->steer_fd = -1;
}

int mrdp_qpn_range(const struct mrdp_dev *d, uint32_t *base, uint32_t *count)
{
	if (!d->qpn_count)
		return -ENOENT;
	*base = d->qpn_base;
	*count = d->qpn_count;
	return 0;
}
