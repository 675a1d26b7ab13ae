/* SPDX-License-Identifier: MIT */
/*
 * Exact line tracing in the recorder (--trace): python-usdt's messages (LS_REC_TRACE) per
 * process — state, code ids, per-thread batches of counts — summed into hits, own and total time
 * per (process, thread, function, line) and calls per function, and flushed to the store.
 * Not thread-safe.
 */
#ifndef LS_TRACEREC_H
#define LS_TRACEREC_H

#include <stddef.h>
#include <stdint.h>
#include "store.h"

struct ls_tracerec;

/* Names a traced code object: returns the profile's function id (> 0) or a negative errno. */
typedef int64_t (*ls_tracerec_name_fn)(void *ctx, int64_t proc_id, const char *filename,
				       const char *qualname, int firstlineno);

int ls_tracerec__new(ls_tracerec_name_fn name, void *ctx, struct ls_tracerec **out);
void ls_tracerec__free(struct ls_tracerec *t);

/* One LS_REC_TRACE record of process row proc_id. Malformed ones are counted, not applied. */
void ls_tracerec__record(struct ls_tracerec *t, int64_t proc_id, const void *data, size_t len);

/*
 * A cumulative count from CPython's own probes (the native fallback): sets, not adds, the totals
 * of (process, thread, function, line); line LS_TRACE_CALLS for calls. function__entry fires at
 * starts and at generator resumptions (with the resume line): the calls are the counts of the
 * entry at the smallest line, entry_line.
 */
void ls_tracerec__native(struct ls_tracerec *t, int64_t proc_id, int tid, int64_t func_id, int line,
			 uint64_t hits, uint64_t own_ns, int entry_line);

/* Marks a process row's tracing state (e.g. why a running process could not be traced). */
void ls_tracerec__set_state(struct ls_tracerec *t, int64_t proc_id, const char *state);

/* Tracing state of a process row for the report: "on", or why it is unavailable; NULL if none. */
const char *ls_tracerec__state(const struct ls_tracerec *t, int64_t proc_id);

struct ls_tracerec_stats {
	uint64_t batches, lost_batches, bad;
};
/* Counted since the interval began (the run's start unless --rotate cut it). */
void ls_tracerec__stats(const struct ls_tracerec *t, struct ls_tracerec_stats *st);
/* --rotate: the next profile begins; it gets what rows gain from now on. */
void ls_tracerec__rotate(struct ls_tracerec *t);

/* Writes changed totals inside the caller's transaction. */
int ls_tracerec__flush(struct ls_tracerec *t, struct ls_store *store);
/* The flush's transaction was rolled back: every row is written again by the next one. */
void ls_tracerec__unflush(struct ls_tracerec *t);

#endif
