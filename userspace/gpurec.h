/* SPDX-License-Identifier: MIT */
/*
 * GPU collection in the recorder (--gpu): feeds launch samples and GPU records to the join
 * (gpu_agg.h) and keeps, per (process, launching stack), device time, driver time, device
 * memory peak, kernel count and NCCL time; flushes them and the per-process GPU state (library
 * status, devices) to the store. Not thread-safe.
 */
#ifndef LS_GPUREC_H
#define LS_GPUREC_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include "store.h"

struct ls_gpurec;

int ls_gpurec__new(struct ls_gpurec **out);
void ls_gpurec__free(struct ls_gpurec *g);

struct ls_frame;
/*
 * The stack id (0: no Python frame) of frames[0..n) of a launch of host pid that the library
 * walked itself (launches it did not probe); without one, such launches get stack 0.
 */
typedef int64_t (*ls_gpurec_stack_fn)(void *ctx, uint32_t pid, const struct ls_frame *frames,
				      uint32_t n);
void ls_gpurec__set_stacks(struct ls_gpurec *g, ls_gpurec_stack_fn fn, void *ctx);

/*
 * --timeline: also keep each kernel, copy and set as it ran on its device (the profile's
 * gpu_timeline table); t0 is the run's start on the bpf_ktime_get_ns clock.
 */
void ls_gpurec__enable_timeline(struct ls_gpurec *g, uint64_t t0);
/* Spans not kept for want of memory. */
uint64_t ls_gpurec__spans_lost(const struct ls_gpurec *g);

/*
 * A launch sample of process row proc_id (host pid), resolved to stack_id (0: no Python frame);
 * for_waiter: launched by a native thread for the blocked thread whose stack it is
 * (LS_XF_FOR_WAITER), its device time also counted in that stack's native_ns.
 */
void ls_gpurec__launch(struct ls_gpurec *g, int64_t proc_id, uint32_t pid, uint32_t tid,
		       uint64_t ts, uint64_t aux, uint64_t api_ns, int64_t stack_id,
		       bool for_waiter);
/* An LS_REC_GPU record; proc_id: the process row of its pid (-1 if not a target). */
void ls_gpurec__record(struct ls_gpurec *g, int64_t proc_id, const void *data, size_t len);
/* The process exited: its held-back activity is attributed now. */
void ls_gpurec__exit(struct ls_gpurec *g, uint32_t pid);
/* The run ends. */
void ls_gpurec__finish(struct ls_gpurec *g);

/* Writes changed totals and the per-process state, inside the caller's transaction. */
int ls_gpurec__flush(struct ls_gpurec *g, struct ls_store *store);
/* The flush's transaction was rolled back: every row is written again by the next one. */
void ls_gpurec__unflush(struct ls_gpurec *g);
/* It was committed: the spans it wrote are forgotten. */
void ls_gpurec__committed(struct ls_gpurec *g);
/*
 * --rotate: the next profile begins, after the last flush of the one before: lines count from
 * zero, process counters from their values now, peaks from the levels held now.
 */
int ls_gpurec__rotate(struct ls_gpurec *g);

#endif
