// SPDX-License-Identifier: BSD-2-Clause
/* Memory-window rules (see mr_mw.h; docs/spec/windows.md MR-MW-*). */
#include "mr_mw.h"

#define MW_REMOTE_RIGHTS                                  \
	(MR_ACCESS_REMOTE_READ | MR_ACCESS_REMOTE_WRITE | \
	 MR_ACCESS_REMOTE_ATOMIC)

uint32_t mr_mw_next_rkey(uint32_t rkey)
{
	return (rkey & ~0xffu) | ((rkey + 1) & 0xffu);
}

/* [addr, addr + len) inside [base, base + size), without overflow. */
static int inside(uint64_t addr, uint64_t len, uint64_t base, uint64_t size)
{
	return addr >= base && addr - base <= size &&
	       len <= size - (addr - base);
}

int mr_mw_bind_check(const struct mr_mw *mw, const struct mr_mw_region *mr,
		     uint32_t qp_pd, const struct mr_mw_bind *b)
{
	/* MR-MW-2 a: remote rights only; zero-based windows are not
	 * offered (the device does not advertise them). */
	if (b->access & ~(unsigned)MW_REMOTE_RIGHTS)
		return -MR_EINVAL;
	/* MR-MW-7: the consumer picks the key byte, never the index. */
	if ((b->new_rkey ^ mw->rkey) & ~0xffu)
		return -MR_EINVAL;
	/* MR-MW-2 b: the window, its QP and its region share one PD. */
	if (mw->pd != qp_pd)
		return -MR_EINVAL;
	if (mw->type == MR_MW_TYPE_2) {
		/* MR-MW-2 c: a type 2 window is bound only while free, and
		 * is freed by invalidation, not by a zero-length bind. */
		if (mw->bound || !b->length)
			return -MR_EINVAL;
	} else if (!b->length) {
		return 0; /* MR-MW-2 d: type 1 unbind */
	}
	if (!mr || mr->pd != mw->pd)
		return -MR_EINVAL;
	/* MR-MW-2 e: the region allows windows (IBV_ACCESS_MW_BIND). */
	if (!(mr->access & MR_ACCESS_MW_BIND) ||
	    (mr->access & MR_ACCESS_ZERO_BASED))
		return -MR_EINVAL;
	/* MR-MW-2 f: a window that lets peers write needs a region the
	 * device may write (IB C10-74). */
	if ((b->access & (MR_ACCESS_REMOTE_WRITE | MR_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & MR_ACCESS_LOCAL_WRITE))
		return -MR_EINVAL;
	/* MR-MW-2 g: the window lies inside the region. */
	if (!inside(b->addr, b->length, mr->iova, mr->length))
		return -MR_EINVAL;
	return 0;
}

void mr_mw_bind_apply(struct mr_mw *mw, uint32_t qpn,
		      const struct mr_mw_bind *b)
{
	mw->rkey = b->new_rkey;
	if (!b->length) {
		mw->bound = 0;
		mw->mr_key = 0;
		mw->addr = mw->length = 0;
		mw->access = 0;
		mw->qpn = 0;
		return;
	}
	mw->bound = 1;
	mw->mr_key = b->mr_lkey;
	mw->addr = b->addr;
	mw->length = b->length;
	mw->access = b->access;
	mw->qpn = mw->type == MR_MW_TYPE_2 ? qpn : 0;
}

int mr_mw_inv_check(const struct mr_mw *mw, uint32_t pd, uint32_t qpn,
		    int remote)
{
	/* MR-MW-4: only a bound type 2 window of the QP's PD; a peer only
	 * through the QP the window was bound through. */
	if (mw->type != MR_MW_TYPE_2 || !mw->bound || mw->pd != pd)
		return -MR_EINVAL;
	if (remote && mw->qpn != qpn)
		return -MR_EINVAL;
	return 0;
}

void mr_mw_inv_apply(struct mr_mw *mw)
{
	mw->bound = 0;
	mw->qpn = 0;
	mw->mr_key = 0;
	mw->addr = mw->length = 0;
	mw->access = 0;
}

int mr_mw_access_check(const struct mr_mw *mw, uint32_t pd, uint32_t qpn,
		       uint64_t addr, uint64_t len, unsigned need)
{
	if (!mw->bound || mw->pd != pd)
		return -MR_EACCESS;
	if (mw->type == MR_MW_TYPE_2 && mw->qpn != qpn)
		return -MR_EACCESS;
	if ((mw->access & need) != need)
		return -MR_EACCESS;
	if (!inside(addr, len, mw->addr, mw->length))
		return -MR_EACCESS;
	return 0;
}
