/* SPDX-License-Identifier: MIT */
/* Which off-CPU report paths the running kernel offers wall mode (taskwork_probe.c). */
#ifndef LS_TASKWORK_PROBE_H
#define LS_TASKWORK_PROBE_H

#include <stdbool.h>
#include <stddef.h>

/*
 * rseq: the kernel has the rseq_update tracepoint. task_work: it accepts a task work scheduled
 * from a tracepoint program; when it refuses one, why names the verifier's reason. 0, or a
 * negative errno when the kernel's BTF could not be read (both false then).
 */
int ls_taskwork_probe(bool *rseq, bool *task_work, char *why, size_t why_size);

#endif
