// SPDX-License-Identifier: MIT
/* A job's rank from a process's environment (userspace/jobenv.c): input is /proc/PID/environ */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "jobenv.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* a copy of exactly size bytes, so that a read past the end is caught */
	char *env = malloc(size ? size : 1);
	struct ls_jobenv j;

	if (!env)
		return 0;
	memcpy(env, data, size);
	if (ls_jobenv__parse(env, size, &j) && (j.rank >= LS_JOBENV_MAX_RANK || j.world_size == 0 ||
						(j.world_size > 0 && j.rank >= j.world_size) ||
						strlen(j.master_addr) >= sizeof(j.master_addr)))
		abort(); /* what the parser promises */
	free(env);
	return 0;
}
