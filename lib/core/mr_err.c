/* SPDX-License-Identifier: BSD-2-Clause */
#include "mr_err.h"

const char *mr_strerror(int err)
{
	/* Callers pass either the negative return value or the positive
	 * code; both name the same error. */
	if (err < 0)
		err = -err;
	switch (err) {
	case 0:
		return "success";
	case MR_EINVAL:
		return "invalid argument";
	case MR_ENOMEM:
		return "out of memory";
	case MR_EAGAIN:
		return "resource temporarily unavailable";
	case MR_EACCESS:
		return "memory key, bounds or access rights check failed";
	case MR_ESTATE:
		return "operation not allowed in this state";
	case MR_ENOENT:
		return "no such object";
	case MR_EMSGSIZE:
		return "message too large";
	case MR_EPROTO:
		return "protocol error";
	case MR_EBUSY:
		return "object still in use";
	}
	return "unknown error";
}
