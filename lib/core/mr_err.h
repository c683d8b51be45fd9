/* SPDX-License-Identifier: BSD-2-Clause */
/* Error codes of lib/core: functions return 0 or one of these, negated. */
#ifndef MR_ERR_H
#define MR_ERR_H

enum mr_err {
	MR_EINVAL = 1,  /* bad argument or attribute */
	MR_ENOMEM = 2,  /* injected allocator failed */
	MR_EAGAIN = 3,  /* queue full / nothing to do now */
	MR_EACCESS = 4, /* memory key, bounds or rights check failed */
	MR_ESTATE = 5,  /* operation not allowed in the QP's state */
	MR_ENOENT = 6,  /* no such QP / SRQ */
	MR_EMSGSIZE = 7, /* message or inline data too large */
	MR_EPROTO = 8,  /* malformed or unexpected packet */
	MR_EBUSY = 9,   /* object still in use */
};

/* A static string naming the error (for logs and tests). */
const char *mr_strerror(int err);

#endif /* MR_ERR_H */
