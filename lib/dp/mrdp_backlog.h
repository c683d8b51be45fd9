/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * MR-MP-12 on real packets: which planes' ports refused frames at their
 * last transmit call, told to the engine once per progress round before it
 * is asked for packets (mrdp_io_round). Device lock held.
 */
#ifndef MRDP_BACKLOG_H
#define MRDP_BACKLOG_H

#include <stdint.h>

struct mrdp_dev;

/* Bit k: plane k's port holds frames it refused (its backlog). */
uint32_t mrdp_backlog_planes(const struct mrdp_dev *d);

/* Tell the engine mrdp_backlog_planes(d) (ops.planes_backlogged; nothing
 * if the engine has no such op). */
void mrdp_backlog_report(struct mrdp_dev *d);

#endif /* MRDP_BACKLOG_H */
