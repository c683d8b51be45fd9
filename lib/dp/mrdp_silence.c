/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Silencing the interface's own kernel stack for the device's frames.
 *
 * Why: an af_packet port shares its interface with the kernel. Every frame
 * addressed to the interface's MAC goes to our socket's ring and also up
 * the kernel's IP stack, which has no socket on the RoCE port: over IPv4
 * (the device's address is not the interface's) it looks up a route for
 * each frame and drops it; over link-local IPv6 (the device shares the
 * interface's link-local address, MR-ADDR-1) it answers with ICMPv6 port
 * unreachable, a frame back to the sender for every data packet the rate
 * limit lets through (bench/wire FINDINGS 11).
 *
 * How: a tcx ingress program (Linux 6.6+, BPF_LINK_CREATE with
 * BPF_TCX_INGRESS) on every af_packet plane's interface drops UDP to the
 * device's port (TC_ACT_SHOT) and leaves every other frame to the next
 * program (TCX_NEXT). The kernel delivers a frame to ETH_P_ALL taps (our
 * af_packet socket: ptype_all) before tc ingress in
 * __netif_receive_skb_core, so our ring still gets it; the IP stack does
 * not. The program is attached through a BPF link owned by this process's
 * file descriptor: it goes when the device closes, and with the process
 * however it ends (nothing is left on the interface); several processes
 * on one interface each attach their own. It is written as eBPF
 * instructions here (legacy packet loads: no helper, no map, no BTF), so
 * no compiler or loader library is needed. Needs CAP_BPF and
 * CAP_NET_ADMIN (or root) and Linux 6.6; without them the kernel keeps
 * processing the frames as before (one line in the debug log). The cost:
 * the interface's kernel never sees UDP to the device's port (a kernel
 * RoCE such as rxe on the same interface and port would not work); knob
 * dp_silence=no turns it off. AF_XDP planes need none: XDP takes their
 * frames before the stack.
 */
#include <errno.h>
#include <linux/bpf.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "mrdp_int.h"

/* Newer than the uapi headers of older distributions (Linux 6.6). */
#define MRDP_BPF_TCX_INGRESS 46
#define MRDP_TC_ACT_SHOT 2
#define MRDP_TCX_NEXT (-1)

/* eBPF instruction classes and fields used below (linux/bpf_common.h). */
#define INSN(c, d, s, o, i)                                              \
	((struct bpf_insn){ .code = (c), .dst_reg = (d), .src_reg = (s), \
			    .off = (o), .imm = (i) })
#define LDABS_H(k) INSN(BPF_LD | BPF_ABS | BPF_H, 0, 0, 0, (k))
#define LDABS_B(k) INSN(BPF_LD | BPF_ABS | BPF_B, 0, 0, 0, (k))
#define LDIND_H(r, k) INSN(BPF_LD | BPF_IND | BPF_H, 0, (r), 0, (k))
#define JEQ(k, o) INSN(BPF_JMP | BPF_JEQ | BPF_K, 0, 0, (o), (k))
#define JNE(k, o) INSN(BPF_JMP | BPF_JNE | BPF_K, 0, 0, (o), (k))
#define JSET(k, o) INSN(BPF_JMP | BPF_JSET | BPF_K, 0, 0, (o), (k))
#define JA(o) INSN(BPF_JMP | BPF_JA, 0, 0, (o), 0)
#define MOV_R(d, s) INSN(BPF_ALU64 | BPF_MOV | BPF_X, (d), (s), 0, 0)
#define MOV_K(d, k) INSN(BPF_ALU64 | BPF_MOV | BPF_K, (d), 0, 0, (k))
#define AND_K(d, k) INSN(BPF_ALU64 | BPF_AND | BPF_K, (d), 0, 0, (k))
#define LSH_K(d, k) INSN(BPF_ALU64 | BPF_LSH | BPF_K, (d), 0, 0, (k))
#define EXIT() INSN(BPF_JMP | BPF_EXIT, 0, 0, 0, 0)

unsigned mrdp_silence_program(struct bpf_insn *f, uint16_t udp_port)
{
	/* Jumps are relative (target - this - 1). Legacy loads take r6 as
	 * the skb and read from the Ethernet header (tcx pushes it back at
	 * ingress); a load past the frame's end ends the program with 0
	 * (TCX_PASS): such a frame is none of ours. */
	enum { V4 = 5, V6 = 16, DROP = 20, PASS = 22, LEN = 24 };
	unsigned n = 0;

	f[n++] = MOV_R(6, 1);
	f[n++] = LDABS_H(12); /* ethertype */
	f[n] = JEQ(0x0800, V4 - n - 1), n++;
	f[n] = JEQ(0x86dd, V6 - n - 1), n++;
	f[n] = JA(PASS - n - 1), n++;
	/* V4: UDP, first fragment, destination port */
	f[n++] = LDABS_B(14 + 9);
	f[n] = JNE(17, PASS - n - 1), n++;
	f[n++] = LDABS_H(14 + 6);
	f[n] = JSET(0x1fff, PASS - n - 1), n++;
	f[n++] = LDABS_B(14);
	f[n++] = AND_K(0, 0xf);
	f[n++] = LSH_K(0, 2);
	f[n++] = MOV_R(7, 0);
	f[n++] = LDIND_H(7, 14 + 2);
	f[n] = JNE(udp_port, PASS - n - 1), n++;
	f[n] = JA(DROP - n - 1), n++;
	/* V6: next header UDP (MR-ENC-6: no extension headers), port */
	f[n++] = LDABS_B(14 + 6);
	f[n] = JNE(17, PASS - n - 1), n++;
	f[n++] = LDABS_H(14 + 40 + 2);
	f[n] = JNE(udp_port, PASS - n - 1), n++;
	/* DROP */
	f[n++] = MOV_K(0, MRDP_TC_ACT_SHOT);
	f[n++] = EXIT();
	/* PASS: the next program on the interface decides. */
	f[n++] = MOV_K(0, MRDP_TCX_NEXT);
	f[n++] = EXIT();
	_Static_assert(LEN <= MRDP_SILENCE_PROG_MAX, "program too long");
	return n;
}

static int sys_bpf(int cmd, union bpf_attr *a)
{
	return (int)syscall(SYS_bpf, cmd, a, sizeof(*a));
}

/* The program, loaded: its fd, or -errno. */
static int silence_load(uint16_t udp_port)
{
	struct bpf_insn prog[MRDP_SILENCE_PROG_MAX];
	union bpf_attr a;
	unsigned n = mrdp_silence_program(prog, udp_port);
	int fd;

	memset(&a, 0, sizeof(a));
	a.prog_type = BPF_PROG_TYPE_SCHED_CLS;
	a.insns = (uint64_t)(uintptr_t)prog;
	a.insn_cnt = n;
	a.license = (uint64_t)(uintptr_t) "BSD";
	fd = sys_bpf(BPF_PROG_LOAD, &a);
	return fd < 0 ? -errno : fd;
}

/* Attach prog_fd at ifindex's tcx ingress: the link's fd, or -errno. */
static int silence_attach(int prog_fd, int ifindex)
{
	union bpf_attr a;
	int fd;

	memset(&a, 0, sizeof(a));
	a.link_create.prog_fd = (uint32_t)prog_fd;
	a.link_create.target_ifindex = (uint32_t)ifindex;
	a.link_create.attach_type = MRDP_BPF_TCX_INGRESS;
	fd = sys_bpf(BPF_LINK_CREATE, &a);
	return fd < 0 ? -errno : fd;
}

static int plane_is_af_packet(const struct mrdp_dev *d, unsigned i)
{
	return !strncmp(d->conf.ports[i], "net_af_packet",
			strlen("net_af_packet")) ||
	       !strncmp(d->conf.ports[i], "net_mrpkt", strlen("net_mrpkt"));
}

int mrdp_silence_open(struct mrdp_dev *d)
{
	int prog = -1, done = 0;
	unsigned i, k;

	for (i = 0; i < d->nplanes; i++) {
		struct mrdp_plane *p = &d->plane[i];
		int fd;

		p->silence_fd = -1;
		if (!plane_is_af_packet(d, i) || p->ifindex <= 0)
			continue;
		/* Two planes on one interface: one program is enough. */
		for (k = 0; k < i; k++)
			if (d->plane[k].ifindex == p->ifindex &&
			    d->plane[k].silence_fd >= 0)
				break;
		if (k < i)
			continue;
		if (prog < 0) {
			prog = silence_load(d->conf.udp_port);
			if (prog < 0) {
				MRDP_LOG("%s: kernel stack not silenced: "
					 "BPF load: %s\n",
					 d->conf.name, strerror(-prog));
				return prog;
			}
		}
		fd = silence_attach(prog, p->ifindex);
		if (fd < 0) {
			MRDP_LOG("%s: plane %u: kernel stack not silenced: "
				 "tcx attach: %s\n",
				 d->conf.name, i, strerror(-fd));
			continue;
		}
		p->silence_fd = fd;
		done++;
		MRDP_LOG("%s: plane %u: the kernel drops UDP to port %u after "
			 "our socket (tcx ingress)\n",
			 d->conf.name, i, d->conf.udp_port);
	}
	/* The links hold the program. */
	if (prog >= 0)
		close(prog);
	return done;
}

void mrdp_silence_close(struct mrdp_dev *d)
{
	unsigned i;

	for (i = 0; i < d->nplanes; i++) {
		if (d->plane[i].silence_fd >= 0)
			close(d->plane[i].silence_fd);
		d->plane[i].silence_fd = -1;
	}
}
