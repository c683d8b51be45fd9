// SPDX-License-Identifier: BSD-2-Clause
/*
 * Protection domains and memory regions. A region is an entry of the
 * context's MR table (mr_table.h), which is what remote operations are
 * checked against. With no kernel there is nothing to pin: the memory
 * must stay mapped while registered, which the verbs contract asks of
 * the application anyway.
 */
#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "metaroce.h"
#if METAROCE_HAVE_ENGINE
#include "engine.h"
#endif

struct ibv_pd *metaroce_alloc_pd(struct ibv_context *context)
{
	struct metaroce_context *mctx = to_mctx(context);
	struct metaroce_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pthread_mutex_lock(&mctx->lock);
	if (mctx->npd >= METAROCE_MAX_PD) {
		pthread_mutex_unlock(&mctx->lock);
		free(pd);
		errno = ENOMEM;
		return NULL;
	}
	mctx->npd++;
	pthread_mutex_unlock(&mctx->lock);
	/* PD numbers only need to differ among live PDs of the device; they
	 * wrap after 2^32 allocations, skipping 0. */
	do
		pd->pdn = mctx->dev->next_pdn++;
	while (!pd->pdn);
	pd->ibv_pd.context = context;
	return &pd->ibv_pd;
}

int metaroce_dealloc_pd(struct ibv_pd *ibpd)
{
	struct metaroce_context *mctx = to_mctx(ibpd->context);
	struct metaroce_pd *pd = to_mpd(ibpd);

	if (pd->users)
		return EBUSY;
	pthread_mutex_lock(&mctx->lock);
	mctx->npd--;
	pthread_mutex_unlock(&mctx->lock);
	free(pd);
	return 0;
}

/* Is all of [addr, addr + len) mapped? A kernel would fail to pin it
 * (EFAULT); mincore() answers ENOMEM for an unmapped page and changes
 * nothing. */
static int range_mapped(const void *addr, size_t len)
{
	const uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
	uintptr_t p = (uintptr_t)addr & ~(page - 1);
	uintptr_t end = (uintptr_t)addr + len;
	unsigned char vec[4096];

	while (p < end) {
		uintptr_t chunk = end - p;

		if (chunk > sizeof(vec) * page)
			chunk = sizeof(vec) * page;
		if (mincore((void *)p, chunk, vec))
			return errno == ENOMEM ? EFAULT : errno;
		p += chunk;
	}
	return 0;
}

/* Access bits we implement, hints we accept and ignore, and features we
 * do not have. The optional range (relaxed ordering and its kin) may be
 * ignored by definition; core_support tells libibverbs we do so. */
#define MR_ACCESS_RIGHTS                                    \
	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
	 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
	 IBV_ACCESS_MW_BIND)
#define MR_ACCESS_HINTS (IBV_ACCESS_HUGETLB | IBV_ACCESS_OPTIONAL_RANGE)
#define MR_ACCESS_UNSUPPORTED (IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND)

static int check_mr_args(void *addr, size_t length, uint64_t iova, int access)
{
	unsigned a = (unsigned)access;

	if (a & MR_ACCESS_UNSUPPORTED)
		return EOPNOTSUPP;
	if (a & ~(MR_ACCESS_RIGHTS | MR_ACCESS_HINTS))
		return EINVAL;
	/* IB spec (o10-..): remote write or atomic needs local write. */
	if ((a & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) &&
	    !(a & IBV_ACCESS_LOCAL_WRITE))
		return EINVAL;
	if (length == 0 || (uintptr_t)addr + length < (uintptr_t)addr ||
	    iova + length < iova)
		return EINVAL;
	return range_mapped(addr, length);
}

struct ibv_mr *metaroce_reg_mr(struct ibv_pd *ibpd, void *addr, size_t length,
			       uint64_t hca_va, int access)
{
	struct metaroce_context *mctx = to_mctx(ibpd->context);
	struct metaroce_pd *pd = to_mpd(ibpd);
	struct metaroce_mrt_ent e = { 0 };
	struct metaroce_mr *mr;
	uint32_t key;
	int ret;

	ret = check_mr_args(addr, length, hca_va, access);
	if (ret)
		goto err;
	mr = calloc(1, sizeof(*mr));
	if (!mr) {
		ret = ENOMEM;
		goto err;
	}
	e.owner = mr;
	e.iova = hca_va;
	e.host = addr;
	e.length = length;
	e.access = (unsigned)access & MR_ACCESS_RIGHTS;
	e.pd = pd->pdn;
	ret = metaroce_mrt_add(&mctx->dev->mrt, &e, &key);
	if (ret)
		goto err_free;
	pd->users++;
	mr->iova = hca_va;
	mr->vmr.mr_type = MR_PABI_MR_TYPE_MR;
	mr->vmr.access = access;
	mr->vmr.ibv_mr.context = ibpd->context;
	mr->vmr.ibv_mr.pd = ibpd;
	mr->vmr.ibv_mr.addr = addr;
	mr->vmr.ibv_mr.length = length;
	mr->vmr.ibv_mr.handle = key;
	mr->vmr.ibv_mr.lkey = key;
	mr->vmr.ibv_mr.rkey = key;
	metaroce_dbg("reg_mr %p+%zu iova 0x%llx access 0x%x -> key 0x%x", addr,
		     length, (unsigned long long)hca_va, access, key);
	return &mr->vmr.ibv_mr;

err_free:
	free(mr);
err:
	errno = ret;
	return NULL;
}

int metaroce_dereg_mr(struct verbs_mr *vmr)
{
	struct metaroce_context *mctx = to_mctx(vmr->ibv_mr.context);
	struct metaroce_mr *mr = to_mmr(vmr);
#if METAROCE_HAVE_ENGINE
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;
#endif
	int ret;

	/* The engine looks keys up and copies (or hands the port, zero
	 * copy) registered memory with the device lock held: once the key
	 * is gone under that lock, no round still uses the memory, and the
	 * application may free it when we return. Lock order: device lock,
	 * then the table's own (as in the engine's lookups). */
#if METAROCE_HAVE_ENGINE
	if (eng)
		metaroce_engine_lock(eng);
#endif
	ret = metaroce_mrt_del(&mctx->dev->mrt, vmr->ibv_mr.lkey, mr);
#if METAROCE_HAVE_ENGINE
	if (eng)
		metaroce_engine_unlock(eng);
#endif
	if (ret)
		return ret;
	to_mpd(vmr->ibv_mr.pd)->users--;
	free(mr);
	return 0;
}

int metaroce_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *ibpd,
		      void *addr, size_t length, int access)
{
	const int known = IBV_REREG_MR_CHANGE_TRANSLATION |
			  IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS;
	struct metaroce_context *mctx = to_mctx(vmr->ibv_mr.context);
	struct metaroce_mr *mr = to_mmr(vmr);
	struct metaroce_pd *old = to_mpd(vmr->ibv_mr.pd), *pd = old;
#if METAROCE_HAVE_ENGINE
	struct metaroce_engine *eng = mctx->uses_engine ? mctx->dev->eng : NULL;
#endif
	struct metaroce_mrt_ent e = { 0 };
	int ret;

	if (!flags || (flags & ~known))
		return EINVAL;
	if (flags & IBV_REREG_MR_CHANGE_PD) {
		if (!ibpd || ibpd->context != vmr->ibv_mr.context)
			return EINVAL;
		pd = to_mpd(ibpd);
	}
	e.owner = mr;
	e.host = vmr->ibv_mr.addr;
	e.iova = mr->iova;
	e.length = vmr->ibv_mr.length;
	if (flags & IBV_REREG_MR_CHANGE_TRANSLATION) {
		e.host = addr;
		e.iova = (uintptr_t)addr; /* ibv_rereg_mr has no iova */
		e.length = length;
	}
	if (!(flags & IBV_REREG_MR_CHANGE_ACCESS))
		access = vmr->access;
	/* The same checks as reg_mr: nothing changes if any fails. */
	ret = check_mr_args(e.host, e.length, e.iova, access);
	if (ret)
		return ret;
	e.access = (unsigned)access & MR_ACCESS_RIGHTS;
	e.pd = pd->pdn;
	/* Under the device lock, as dereg: no round still uses the old
	 * translation when we return. */
#if METAROCE_HAVE_ENGINE
	if (eng)
		metaroce_engine_lock(eng);
#endif
	ret = metaroce_mrt_update(&mctx->dev->mrt, vmr->ibv_mr.lkey, &e);
#if METAROCE_HAVE_ENGINE
	if (eng)
		metaroce_engine_unlock(eng);
#endif
	if (ret)
		return ret;
	if (pd != old) {
		old->users--;
		pd->users++;
		vmr->ibv_mr.pd = ibpd;
	}
	mr->iova = e.iova;
	vmr->access = access;
	vmr->ibv_mr.addr = e.host;
	vmr->ibv_mr.length = e.length;
	return 0;
}

struct ibv_mr *metaroce_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				      size_t length, uint64_t iova, int fd,
				      int access)
{
	/* No device memory to import into: applications (NCCL) fall back to
	 * ordinary registration on EOPNOTSUPP. */
	errno = EOPNOTSUPP;
	return NULL;
}
