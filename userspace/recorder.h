/* SPDX-License-Identifier: MIT */
/*
 * The recorder turns ring-buffer records into the profile: it keeps one entry per target process
 * (identity, interpreter, code-object cache, lifetime), resolves sampled frames to (function,
 * line), interns stacks, aggregates samples, and flushes everything new to the store. It tells BPF
 * about interpreters through the ops callbacks. Single-threaded: call it from the ring-buffer
 * consumer.
 */
#ifndef LS_RECORDER_H
#define LS_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "linescope.h"
#include "store.h"

struct ls_pyinfo;

struct ls_recorder;

struct ls_recorder_ops {
	/* Set (p != NULL) or delete the BPF `procs` entry of pid. */
	int (*set_proc)(void *ctx, pid_t pid, const struct ls_proc *p);
	/* Install layout id in the BPF `pylayouts` array. */
	int (*set_layout)(void *ctx, uint32_t id, const struct ls_pylayout *L);
	/* Install (img != NULL) or forget a known interpreter executable in BPF `images` (the op
	 * itself is optional: NULL skips). */
	int (*set_image)(void *ctx, const struct ls_image_key *k, const struct ls_image *img);
	/* ls_loader__set_pending(). Optional: set_proc with a pending entry instead. */
	int (*set_pending)(void *ctx, pid_t pid, uint32_t gen);
	/* The generation of pid's BPF entry (bumped by each exec); 0 or -ENOENT. Optional. */
	int (*proc_gen)(void *ctx, pid_t pid, uint32_t *gen);
	/* Probes the start of the shared build at path (ls_loader__set_lib). Optional. */
	int (*set_lib)(void *ctx, uint32_t slot, const char *path, uint64_t offset,
		       const struct ls_lib_image *lib);
	/* How pid saw files at its exit (BPF `exit_views`); 0 or -ENOENT. Optional. */
	int (*exit_view)(void *ctx, pid_t pid, struct ls_task_view *v);
	/* Makes BPF describe this (process, thread, stack) whole again next time. Optional. */
	void (*forget_stack)(void *ctx, const struct ls_known_key *k);
};

struct ls_recorder_stats {
	uint64_t samples; /* on-CPU samples received */
	uint64_t proc_events;
	uint64_t unresolved;	     /* frames whose code object could not be read */
	uint64_t truncated;	     /* samples with a cut stack */
	uint64_t read_fail;	     /* samples whose walk hit an unreadable address */
	uint64_t bad_records;	     /* malformed ring-buffer records */
	uint64_t unresolved_samples; /* on-CPU samples without lines: interpreter not known yet */
	uint64_t before_start;	 /* ... of interpreters known before they started: none missed */
	uint64_t images_known;	 /* execs resolved from a known image, without /proc */
	uint64_t images_none;	 /* execs of a file known not to be Python, without /proc */
	uint64_t images_checked; /* execs of a known image whose file changed: build id read */
	uint64_t exec_views;	 /* execs whose view came with their record, for its first second */
	uint64_t views_by_key;	 /* file lookups whose view a record's key named: no /proc read */
	uint64_t views_changed;	 /* ... whose key was not the view known: /proc read again */
	uint64_t healed;	 /* BPF entries set again after an unwalked sample */
	uint64_t after_exit;	 /* records that arrived after their process's exit */
	uint64_t agg_orphans;	 /* samples added up in the kernel under a stack never described */
	uint64_t agg_parked;	 /* ... under one the reader had not reached the description of */
	uint64_t ticks;		 /* --timeline: samples and intervals put on it */
	uint64_t timeline_lost;	 /* ticks not put on it: stack never described, or no memory */
	uint64_t ringbuf_bytes;	 /* records received, with their ring-buffer headers */
	uint64_t stacks_reused;	 /* whole records whose stack another thread resolved already */
	unsigned processes;	 /* processes seen */
	unsigned live;		 /* targets not yet exited */
	unsigned threads;
};

/* t0: CLOCK_MONOTONIC ns of the run start (the clock of bpf_ktime_get_ns). */
int ls_recorder__new(struct ls_store *store, const struct ls_recorder_ops *ops, void *ctx,
		     uint64_t t0, struct ls_recorder **out);
void ls_recorder__free(struct ls_recorder *r);

/*
 * Adds a process that is a target from the start (or was launched by us), discovering its
 * interpreter and registering it with BPF. -ESRCH when it does not exist.
 */
int ls_recorder__add_target(struct ls_recorder *r, pid_t pid, pid_t parent);

/*
 * Reads the executable at path before any process runs it (a launched command's): an interpreter
 * is published to BPF, so that its exec is walked from the first sample; a file that is not
 * Python (-ENOENT) settles its exec's record without /proc. 0 or -errno (ls_python__probe_exe).
 */
int ls_recorder__learn_exe(struct ls_recorder *r, const char *path);

/*
 * --timeline: keep when each sample and each off-CPU interval longer than min_wait_ns happened
 * (the profile's timeline table), from whole records and from LS_REC_TICK records.
 */
/*
 * --rotate: ls_recorder__cut() ends the interval for each thread still running (its CPU time so
 * far), before the last flush into the interval's profile; ls_recorder__rotate() then makes store
 * the profile of the next one: counts start again at zero, and every process, thread, source,
 * file, function and stack is written into it again.
 */
void ls_recorder__cut(struct ls_recorder *r);
/* The cut's flush failed: the interval goes on, its threads counted as before the cut. */
void ls_recorder__uncut(struct ls_recorder *r);
/* The counters as they were when the interval began (all zero without --rotate). */
void ls_recorder__interval_base(const struct ls_recorder *r, struct ls_recorder_stats *st);
void ls_recorder__rotate(struct ls_recorder *r, struct ls_store *store);

struct ls_creds;
/* --spark-events: follows the logs at paths (sparkrec.h), stored at each flush. */
int ls_recorder__enable_spark(struct ls_recorder *r, const char *const *paths, int n,
			      int64_t since_s, const struct ls_creds *creds);
void ls_recorder__enable_timeline(struct ls_recorder *r, uint64_t min_wait_ns);

/* ring_buffer__new() callback shape; ctx is the recorder. */
int ls_recorder__handle(void *ctx, void *data, size_t len);

/*
 * Adds samples the kernel added up (agg.bpf.h) under key k: the stack is the one its first
 * sample, a record, resolved to. Call after consuming every record emitted before the map was
 * retired, or with parking on (below). ctx is the recorder.
 */
void ls_recorder__add_agg(void *ctx, const struct ls_agg_key *k, const struct ls_agg_val *v);
/*
 * A map retired at ring position pos that the reader has not reached yet may hold stacks whose
 * descriptions are still to be read: while park(r, pos) is on (0: off), add_agg keeps such keys
 * instead of counting them orphaned, and unpark(r, read) adds those kept at positions up to
 * read, the reader's (a stack still unknown then never was described: orphaned).
 */
void ls_recorder__agg_park(struct ls_recorder *r, uint64_t pos);
void ls_recorder__agg_unpark(struct ls_recorder *r, uint64_t read);

/* Every 20 ms: re-checks how BPF finds known interpreters' thread states; looks for new cells. */
void ls_recorder__tick(struct ls_recorder *r);

/*
 * Retries discovery of pending processes whose time has come (only that: cheap enough to call
 * every loop). Returns the earliest next retry time, or UINT64_MAX when nothing is pending: the
 * consumer must not sleep past it, or a fresh interpreter's first frames go unwalked.
 */
uint64_t ls_recorder__retry(struct ls_recorder *r, uint64_t now_ns);

/* Writes everything new or changed since the last flush in one transaction. */
int ls_recorder__flush(struct ls_recorder *r);

/*
 * Marks processes that vanished without an exit record (e.g. before BPF was attached): written
 * and read are the ring buffer's positions (ls_loader__ring_written, ls_loader__ring_read). One
 * gone from /proc is decided on once the reader has passed where the ring was written then.
 */
void ls_recorder__reap(struct ls_recorder *r, uint64_t now_ns, uint64_t written, uint64_t read);

void ls_recorder__stats(const struct ls_recorder *r, struct ls_recorder_stats *st);

/* Collects GPU work (--gpu): launch samples and GPU records are joined and attributed. */
int ls_recorder__enable_gpu(struct ls_recorder *r);

/* Collects python-usdt's exact line counts (--trace). */
int ls_recorder__enable_trace(struct ls_recorder *r);

/* The interpreter found in pid, or NULL (not Python, not yet known). Valid until the next call. */
const struct ls_pyinfo *ls_recorder__python(struct ls_recorder *r, pid_t pid);

/* Why a running process cannot be traced exactly (shown in the report). */
void ls_recorder__trace_note(struct ls_recorder *r, pid_t pid, const char *note);

/* Takes the native-probe totals of pid (see ls_loader__native_drain()). */
struct ls_native_key;
struct ls_native_val;
void ls_recorder__native_count(void *ctx, const struct ls_native_key *k,
			       const struct ls_native_val *v, const char *file, const char *func);

/* The run is over: attribute whatever is still held back (GPU activity without an exit). */
void ls_recorder__finish(struct ls_recorder *r);

#endif
