/* SPDX-License-Identifier: MIT */
/*
 * A distributed job's identity of one process, from its environment (/proc/PID/environ, read
 * with the target's rights): RANK, LOCAL_RANK, WORLD_SIZE and MASTER_ADDR, as torchrun,
 * torch.distributed.launch, accelerate and most launchers set them for each worker.
 */
#ifndef LS_JOBENV_H
#define LS_JOBENV_H

#include <stddef.h>

#define LS_JOBENV_MAX_RANK (1 << 24) /* ranks and sizes above this are refused as damage */

struct ls_jobenv {
	int rank, local_rank, world_size; /* -1: not set, or not a number in range */
	char master_addr[256];		  /* "" when not set; bytes as the environment has them */
};

/*
 * Parses env (len bytes of NUL-separated NAME=VALUE strings, the last one possibly unended).
 * A value counts only as a plain decimal number in [0, LS_JOBENV_MAX_RANK) (WORLD_SIZE: from 1,
 * and above the rank); anything else leaves the field unknown. Returns 1 when any field is set.
 */
int ls_jobenv__parse(const char *env, size_t len, struct ls_jobenv *out);

#endif
