/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * LD_PRELOADed by metaroce-run. libibverbs first asks the kernel for RDMA
 * devices over a NETLINK_RDMA socket; on a kernel with ib_core that works,
 * returns only kernel devices and the sysfs view (SYSFS_PATH) is never read.
 * Failing exactly that socket the way a kernel without RDMA does
 * (EPROTONOSUPPORT) makes libibverbs fall back to sysfs, i.e. to our view.
 * libnl calls socket() through the global symbol scope, so this also works
 * for programs that dlopen libibverbs. Every other socket is untouched.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/netlink.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MR_EXPORT __attribute__((visibility("default")))

typedef int (*mr_socket_fn)(int, int, int);

MR_EXPORT int socket(int domain, int type, int protocol);

int socket(int domain, int type, int protocol)
{
	static mr_socket_fn next;

	if (domain == AF_NETLINK && protocol == NETLINK_RDMA) {
		errno = EPROTONOSUPPORT;
		return -1;
	}
	if (!next)
		next = (mr_socket_fn)dlsym(RTLD_NEXT, "socket");
	if (next)
		return next(domain, type, protocol);
	/* No later definition (cannot happen with glibc): ask the kernel. */
	return (int)syscall(SYS_socket, domain, type, protocol);
}
