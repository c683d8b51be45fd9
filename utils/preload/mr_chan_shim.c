/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Completion channels for MetaRoCE devices, part of metaroce-run's preload
 * shim. libibverbs creates a channel with a kernel command written to the
 * context's cmd_fd; our /dev/infiniband node is a /dev/full look-alike, so
 * that write fails and ibv_rc_pingpong -e, perftest -e, UCX and qperf
 * could not start. For a context of a MetaRoCE device (its ibdev_path
 * holds metaroce.conf) the channel made here has a pipe's read end as fd:
 * the provider opens /proc/self/fd/<fd> for writing and writes the 8-byte
 * event record (the ibv_cq pointer) that ibv_get_cq_event() reads.
 * Channels of any other device go to libibverbs unchanged.
 *
 * The shim keeps a write end of its own open for the channel's life, so a
 * reader blocks (or gets EAGAIN) while no CQ is attached instead of seeing
 * end-of-file, as with a kernel channel.
 *
 * Binding: libibverbs exports both functions as @@IBVERBS_1.0. An
 * unversioned definition in an LD_PRELOADed object satisfies a versioned
 * reference, so programs linked against libibverbs (perftest, rdma-core's
 * examples, UCX, qperf) and lookups with dlsym(RTLD_DEFAULT, ...) reach
 * these. A program that dlopen()s libibverbs and resolves the symbol with
 * dlsym/dlvsym on that handle gets libibverbs's own and its channel fails
 * (NCCL does not use completion channels).
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <infiniband/verbs.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define MR_EXPORT __attribute__((visibility("default")))

struct mr_chan {
	struct ibv_comp_channel ch; /* first: what the application holds */
	int wfd;		    /* keeps the pipe from reading EOF */
	struct mr_chan *next;
};

static pthread_mutex_t chans_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mr_chan *chans; /* every channel made here */

MR_EXPORT struct ibv_comp_channel *
ibv_create_comp_channel(struct ibv_context *context);
MR_EXPORT int ibv_destroy_comp_channel(struct ibv_comp_channel *channel);

static void *next_symbol(const char *name)
{
	/* The default version of the symbol after this object. */
	return dlsym(RTLD_NEXT, name);
}

/* Is this a context of a MetaRoCE device? Its sysfs directory in the
 * view (the ibdev_path libibverbs got) holds the device record. */
static int is_metaroce(const struct ibv_context *context)
{
	char path[IBV_SYSFS_PATH_MAX + 32];
	struct stat st;
	int n;

	if (!context || !context->device)
		return 0;
	n = snprintf(path, sizeof(path), "%s/metaroce.conf",
		     context->device->ibdev_path);
	if (n < 0 || (size_t)n >= sizeof(path))
		return 0;
	return !stat(path, &st) && S_ISREG(st.st_mode);
}

struct ibv_comp_channel *ibv_create_comp_channel(struct ibv_context *context)
{
	static struct ibv_comp_channel *(*next)(struct ibv_context *);
	struct mr_chan *c;
	int fds[2];

	if (!is_metaroce(context)) {
		if (!next)
			next = (struct ibv_comp_channel *
				(*)(struct ibv_context *))
				next_symbol("ibv_create_comp_channel");
		if (!next) {
			errno = ENOSYS;
			return NULL;
		}
		return next(context);
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (pipe2(fds, O_CLOEXEC)) {
		free(c);
		return NULL;
	}
	c->ch.context = context;
	c->ch.fd = fds[0];
	c->ch.refcnt = 0;
	c->wfd = fds[1];
	pthread_mutex_lock(&chans_lock);
	c->next = chans;
	chans = c;
	pthread_mutex_unlock(&chans_lock);
	return &c->ch;
}

/* Unlink channel from our list if it is one of ours: 1 ours, 0 not. */
static int take_ours(struct ibv_comp_channel *channel, struct mr_chan **out)
{
	struct mr_chan **pp;

	pthread_mutex_lock(&chans_lock);
	for (pp = &chans; *pp; pp = &(*pp)->next) {
		if (&(*pp)->ch == channel) {
			*out = *pp;
			*pp = (*pp)->next;
			pthread_mutex_unlock(&chans_lock);
			return 1;
		}
	}
	pthread_mutex_unlock(&chans_lock);
	return 0;
}

int ibv_destroy_comp_channel(struct ibv_comp_channel *channel)
{
	static int (*next)(struct ibv_comp_channel *);
	struct ibv_context *context;
	struct mr_chan *c;

	if (!channel)
		return EINVAL;
	if (!take_ours(channel, &c)) {
		if (!next)
			next = (int (*)(struct ibv_comp_channel *))next_symbol(
				"ibv_destroy_comp_channel");
		return next ? next(channel) : ENOSYS;
	}
	/* libibverbs counts the CQs of a channel under the context's mutex
	 * (ibv_create_cq/ibv_destroy_cq); a channel in use stays. */
	context = channel->context;
	pthread_mutex_lock(&context->mutex);
	if (channel->refcnt) {
		pthread_mutex_unlock(&context->mutex);
		pthread_mutex_lock(&chans_lock);
		c->next = chans;
		chans = c;
		pthread_mutex_unlock(&chans_lock);
		return EBUSY;
	}
	pthread_mutex_unlock(&context->mutex);
	close(c->ch.fd);
	close(c->wfd);
	free(c);
	return 0;
}
