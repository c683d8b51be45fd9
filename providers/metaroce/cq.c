// SPDX-License-Identifier: BSD-2-Clause
/*
 * Completion queues: a ring of ibv_wc filled by the engine's complete
 * callback (metaroce_cq_push, on the progress thread or inline progress,
 * always under the datapath lock: one producer) and drained by poll_cq
 * without that lock (metaroce.h: the ring's memory order).
 *
 * Completion channels: libibverbs creates them with a kernel command, so
 * they exist only when a preload shim supplies one whose fd is a pipe (see
 * metaroce.h). On an armed CQ's next completion we write the 8-byte
 * ib_uverbs_comp_event_desc that ibv_get_cq_event() reads: the cq_handle
 * is the ibv_cq pointer. Our write end is a second open of that pipe
 * (/proc/self/fd/N), so the provider needs nothing from the shim.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "metaroce.h"

static uint32_t pow2_at_least(uint32_t n)
{
	uint32_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

uint64_t metaroce_hca_clock(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* A write end for the channel's pipe; -1 and errno if it is no pipe. */
static int open_channel_writer(int fd)
{
	char path[64];
	struct stat st;

	if (fstat(fd, &st) || !S_ISFIFO(st.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, O_WRONLY | O_NONBLOCK | O_CLOEXEC);
}

struct metaroce_cq *metaroce_cq_alloc(struct ibv_context *context, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector, bool stamps)
{
	struct metaroce_cq *cq;
	int ret;

	if (cqe < 1 || (uint32_t)cqe > METAROCE_MAX_CQE || comp_vector < 0 ||
	    comp_vector >= context->num_comp_vectors) {
		errno = EINVAL;
		return NULL;
	}
	cq = calloc(1, sizeof(*cq));
	if (!cq) {
		errno = ENOMEM;
		return NULL;
	}
	cq->size = pow2_at_least((uint32_t)cqe);
	cq->ring = calloc(cq->size, sizeof(*cq->ring));
	if (stamps)
		cq->ts = calloc(cq->size, sizeof(*cq->ts));
	if (!cq->ring || (stamps && !cq->ts)) {
		ret = ENOMEM;
		goto err_ring;
	}
	cq->chan_wfd = -1;
	if (channel) {
		cq->chan_wfd = open_channel_writer(channel->fd);
		if (cq->chan_wfd < 0) {
			ret = errno;
			goto err_ring;
		}
	}
	ret = pthread_mutex_init(&cq->lock, NULL);
	if (ret)
		goto err_chan;
	cq->mctx = to_mctx(context);
	/* libibverbs fills context, channel, cq_context and the sync
	 * objects (verbs_init_cq) after we return; cqe is ours. */
	cq->vcq.cq.cqe = (int)cq->size;
	return cq;

err_chan:
	if (cq->chan_wfd >= 0)
		close(cq->chan_wfd);
err_ring:
	free(cq->ring);
	free(cq->ts);
	free(cq);
	errno = ret;
	return NULL;
}

struct ibv_cq *metaroce_create_cq(struct ibv_context *context, int cqe,
				  struct ibv_comp_channel *channel,
				  int comp_vector)
{
	struct metaroce_cq *cq =
		metaroce_cq_alloc(context, cqe, channel, comp_vector, false);

	return cq ? &cq->vcq.cq : NULL;
}

int metaroce_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	struct metaroce_engine *eng;
	struct ibv_wc *ring;
	uint64_t *ts = NULL;
	uint32_t size, n, i, head;
	int ret = 0;

	if (cqe < 1 || (uint32_t)cqe > METAROCE_MAX_CQE)
		return EINVAL;
	size = pow2_at_least((uint32_t)cqe);
	ring = calloc(size, sizeof(*ring));
	if (cq->ts)
		ts = calloc(size, sizeof(*ts));
	if (!ring || (cq->ts && !ts)) {
		free(ring);
		free(ts);
		return ENOMEM;
	}
	/* The producer runs under the datapath lock, the consumers under
	 * the CQ lock: moving the ring excludes both (that order). */
	eng = metaroce_engine_hold(cq->mctx);
	pthread_mutex_lock(&cq->lock);
	head = atomic_load_explicit(&cq->head, memory_order_relaxed);
	n = atomic_load_explicit(&cq->tail, memory_order_relaxed) - head;
	if (n > size) {
		/* Smaller than what it holds: refused, nothing lost. */
		ret = EINVAL;
		goto out;
	}
	for (i = 0; i < n; i++) {
		uint32_t from = (head + i) & (cq->size - 1);

		ring[i] = cq->ring[from];
		if (ts)
			ts[i] = cq->ts[from];
	}
	free(cq->ring);
	free(cq->ts);
	cq->ring = ring;
	cq->ts = ts;
	ring = NULL;
	ts = NULL;
	cq->size = size;
	atomic_store_explicit(&cq->head, 0, memory_order_relaxed);
	atomic_store_explicit(&cq->tail, n, memory_order_relaxed);
	cq->vcq.cq.cqe = (int)size;
out:
	pthread_mutex_unlock(&cq->lock);
	if (eng)
		metaroce_engine_unlock(eng);
	free(ring);
	free(ts);
	return ret;
}

int metaroce_destroy_cq(struct ibv_cq *ibcq)
{
	struct metaroce_cq *cq = to_mcq(ibcq);

	if (cq->users)
		return EBUSY;
	if (cq->chan_wfd >= 0)
		close(cq->chan_wfd);
	pthread_mutex_destroy(&cq->lock);
	free(cq->ring);
	free(cq->ts);
	cq->ring = NULL;
	cq->ts = NULL;
	metaroce_free_obj(cq->mctx, cq, &ibcq->mutex,
			  &ibcq->async_events_completed, cq->async_events);
	return 0;
}

/* Tell the channel. The producer's side of arming: an armed CQ fires
 * once and is disarmed by that firing; the exchange makes the firing and
 * a concurrent re-arm by req_notify_cq (which only ever arms) agree. */
static void cq_notify(struct metaroce_cq *cq, bool solicited)
{
	struct ib_uverbs_comp_event_desc d = {
		.cq_handle = (uintptr_t)&cq->vcq.cq,
	};
	int a = atomic_load(&cq->armed);

	for (;;) {
		if (a == METAROCE_CQ_DISARMED ||
		    (a == METAROCE_CQ_ARMED_SOLICITED && !solicited))
			return;
		if (atomic_compare_exchange_weak(&cq->armed, &a,
						 METAROCE_CQ_DISARMED))
			break;
	}
	if (cq->chan_wfd < 0)
		return;
	/* A full pipe already holds events the application has not read:
	 * one more would tell it nothing new. */
	if (write(cq->chan_wfd, &d, sizeof(d)) != (ssize_t)sizeof(d))
		cq->notify_lost++;
}

int metaroce_cq_push(struct metaroce_cq *cq, const struct ibv_wc *wc,
		     bool solicited)
{
	/* The only producer (datapath lock held): tail is ours. */
	uint32_t tail = atomic_load_explicit(&cq->tail, memory_order_relaxed);

	if (tail - atomic_load_explicit(&cq->head, memory_order_acquire) ==
	    cq->size) {
		/* Overrun: the verbs contract makes this the application's
		 * error; the completion is lost and an async CQ error is
		 * raised, once. */
		if (!cq->overrun) {
			cq->overrun = true;
			cq->async_events++;
			metaroce_async_event(cq->mctx, (uintptr_t)&cq->vcq.cq,
					     IBV_EVENT_CQ_ERR);
		}
		return ENOSPC;
	}
	if ((wc->opcode & IBV_WC_RECV) &&
	    !atomic_load_explicit(&cq->recvs, memory_order_relaxed)) {
		atomic_store_explicit(&cq->recvs, true, memory_order_relaxed);
		atomic_store_explicit(&cq->mctx->recvs, true,
				      memory_order_relaxed);
	}
	cq->ring[tail & (cq->size - 1)] = *wc;
	if (cq->ts)
		cq->ts[tail & (cq->size - 1)] = metaroce_hca_clock();
	/* seq_cst: the entry is visible before the arm state is read, so a
	 * consumer that armed and then found the ring empty gets its event. */
	atomic_store(&cq->tail, tail + 1);
	cq_notify(cq, solicited || wc->status != IBV_WC_SUCCESS);
	return 0;
}

int metaroce_poll_cq(struct ibv_cq *ibcq, int num_entries, struct ibv_wc *wc)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	uint32_t head, tail;
	int n = 0;
	bool armed;

	if (num_entries < 0)
		return -EINVAL; /* poll_cq's convention: negative on error */
	armed = metaroce_cq_armed(cq);
	metaroce_progress_cq(cq->mctx, armed);
	/* Nothing there: no lock, no store (a poll_cq loop spins here). */
	if (atomic_load_explicit(&cq->tail, memory_order_acquire) ==
	    atomic_load_explicit(&cq->head, memory_order_relaxed)) {
		/* No lease for an armed CQ: its application blocks on the
		 * channel next, and the thread must take the frame. */
		int w = armed ? 0 : metaroce_cq_waits(cq);

		if (w)
			metaroce_polled(cq->mctx, w);
		return 0;
	}
	pthread_mutex_lock(&cq->lock);
	head = atomic_load_explicit(&cq->head, memory_order_relaxed);
	tail = atomic_load_explicit(&cq->tail, memory_order_acquire);
	while (n < num_entries && head != tail) {
		wc[n++] = cq->ring[head & (cq->size - 1)];
		head++;
	}
	/* release: the entries are read before the producer may reuse them */
	atomic_store_explicit(&cq->head, head, memory_order_release);
	pthread_mutex_unlock(&cq->lock);
	{
		int i, sends = 0, reads = 0;

		for (i = 0; i < n; i++) {
			sends += !(wc[i].opcode & IBV_WC_RECV);
			reads += metaroce_wc_is_read(wc[i].opcode);
		}
		metaroce_cq_sends_done(cq, sends);
		metaroce_cq_reads_done(cq, reads);
	}
	metaroce_polled(cq->mctx, n);
	return n;
}

int metaroce_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	struct metaroce_cq *cq = to_mcq(ibcq);
	int a = METAROCE_CQ_DISARMED;

	/* "Any" wins over "solicited" until the next event, as on hardware.
	 * Arming only ever raises the state; the producer's firing lowers it
	 * (cq_notify). */
	if (!solicited_only)
		atomic_store(&cq->armed, METAROCE_CQ_ARMED_ANY);
	else
		atomic_compare_exchange_strong(&cq->armed, &a,
					       METAROCE_CQ_ARMED_SOLICITED);
	/* The caller is going to wait for the event instead of polling:
	 * the progress thread must not finish its nap first. */
	metaroce_progress_handoff(cq->mctx);
	return 0;
}

void metaroce_cq_event(struct ibv_cq *ibcq)
{
	/* Nothing to acknowledge to a device: ibv_get_cq_event() has
	 * already counted the event. */
}

bool metaroce_cq_armed(struct metaroce_cq *cq)
{
	return cq->chan_wfd >= 0 &&
	       atomic_load_explicit(&cq->armed, memory_order_relaxed) !=
		       METAROCE_CQ_DISARMED;
}

uint32_t metaroce_cq_count(struct metaroce_cq *cq)
{
	return atomic_load_explicit(&cq->tail, memory_order_acquire) -
	       atomic_load_explicit(&cq->head, memory_order_acquire);
}
