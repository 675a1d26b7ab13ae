/* SPDX-License-Identifier: MIT */
/*
 * The profile (.lsprof) as its readers see it: the one contract between collecting and
 * reporting. The schema is written down in docs/profile-schema.md and created by store.c (the
 * writer); this header is how everything else reads it: the report (report/model*.c) never sees
 * SQL or a database handle.
 *
 * A profile is untrusted input. Each reader walks one table (or one fixed aggregate of it) and
 * calls fn once per row, in the order it states, until fn returns non-zero (returned); a row
 * the reader refuses (a value out of its documented range) is skipped and counted in
 * ls_profile__damaged(). Strings and blobs in a row live until fn returns; NULL stands for a
 * NULL column, -1 for a NULL id or time. A damaged database page is -EIO with one logged line,
 * never a silently short table.
 */
#ifndef LS_PROFILE_H
#define LS_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "linescope.h" /* the stored classes of time and CPU modes (samples.kind, .mode) */

#define LS_SCHEMA_VERSION 10
/*
 * the oldest schema the reader still reads: 4 only added the notebooks and cells tables, 5 the
 * timeline tables and ranks, 6 the hosts of a merged profile, 7 the Spark event logs, 8 the
  * waiting thread of a child started by a library thread, 9 the GPU time native threads launched
 * for a waiting thread (gpu.native_ns) and the notebook cell a cell's text is of (cells.cell_key), 10 the launching thread of the device
 * work on the timeline (gpu_timeline.tid)
 */
#define LS_SCHEMA_OLDEST 3

/*
 * A meta value read back as a number: dflt when v is NULL, not a plain decimal, or outside
 * [0, max]. Wall-clock times are kept below LS_META_WALL_MAX (2^62 ns, year 2116), clocks and
 * durations below LS_META_SPAN_MAX (2^60 ns, 36 years), so that sums and differences of a few
 * of them stay within int64_t.
 */
#define LS_META_WALL_MAX (1LL << 62)
#define LS_META_SPAN_MAX (1LL << 60)
int64_t ls_profile__meta_num(const char *v, int64_t dflt, int64_t max);

#define LS_GPU_STACK_UNSEEN   0xffffffff /* stack_id of work whose launch was never seen */
#define LS_PROFILE_MAX_DEPTH  65536	 /* deeper than any stack the recorder stores */
#define LS_PROFILE_MAX_STACKS (1 << 28)

struct ls_profile;

/*
 * Opens a profile for reading (never through a symlink). A file that is not a profile, or one of
 * a schema this build does not read (older than LS_SCHEMA_OLDEST or newer than
 * LS_SCHEMA_VERSION), is refused with one logged line.
 */
int ls_profile__open(const char *path, struct ls_profile **out);
void ls_profile__close(struct ls_profile *p);
int ls_profile__schema(const struct ls_profile *p);
/* Rows the readers refused so far. */
int64_t ls_profile__damaged(const struct ls_profile *p);

/* meta(key, value) */
struct ls_prow_meta {
	const char *key, *value;
};
int ls_profile__meta(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_meta *r),
		     void *ctx);
/* A stats value, or absent when the profile does not record it. */
int64_t ls_profile__stat(struct ls_profile *p, const char *key, int64_t absent);

/* processes, by id; rank fields are -1 unless within [0, LS_JOBENV_MAX_RANK) */
struct ls_prow_proc {
	int64_t id, parent_id, spawn_stack, start_ns, end_ns, parent_wait_ns, cgroup_id;
	int64_t waiter_stack; /* schema 8 on; else -1 */
	int pid, ppid, nspid, exit_code, threads, rank, local_rank, world_size;
	const char *comm, *argv, *exe, *python, *python_build, *note, *trace, *cgroup;
	const char *master_addr, *host;
};
int ls_profile__procs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_proc *r),
		      void *ctx);

/* files with their source text (text NULL: not captured), by id */
struct ls_prow_file {
	int64_t id;
	const char *path, *kind, *unavailable;
	const char *text;
	size_t len;
};
int ls_profile__files(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_file *r),
		      void *ctx);

/* functions, by id */
struct ls_prow_func {
	int64_t id, file_id;
	const char *qualname;
	int firstlineno;
};
int ls_profile__funcs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_func *r),
		      void *ctx);

/*
 * The largest stack id, checked to lie in [0, LS_PROFILE_MAX_STACKS]; then the stacks, each
 * with depth (function id, line) pairs, innermost first. A stack whose id is outside
 * (0, max], whose depth is outside (0, LS_PROFILE_MAX_DEPTH] or disagrees with its blob, or that
 * has a line above INT32_MAX, is refused.
 */
int ls_profile__max_stack_id(struct ls_profile *p, int64_t *max);
struct ls_prow_stack {
	int64_t id;
	int depth;
	const uint32_t *frames;
};
int ls_profile__stacks(struct ls_profile *p, int64_t max,
		       int (*fn)(void *ctx, const struct ls_prow_stack *r), void *ctx);

/*
 * Samples summed by (process, stack, kind, mode), ordered by kind, process, stack, mode; with
 * samples_by_thread, by (process, thread, stack, kind) in that order, with the thread's name.
 * On-CPU weights are scaled to the CPU time the scheduler accounted for their thread when the
 * profile has it (docs/profile-schema.md, "threads"). A kind outside enum ls_sample_class or a
 * negative sum is refused (counted by ls_profile__sample_sums only: the same rows).
 */
struct ls_prow_sample_sum {
	int64_t proc_id, stack_id, count, weight_ns;
	int kind, mode;
};
int ls_profile__sample_sums(struct ls_profile *p,
			    int (*fn)(void *ctx, const struct ls_prow_sample_sum *r), void *ctx);
struct ls_prow_thread_sample {
	int64_t proc_id, stack_id, count, weight_ns;
	int tid, kind;
	const char *thread_name;
};
int ls_profile__samples_by_thread(struct ls_profile *p,
				  int (*fn)(void *ctx, const struct ls_prow_thread_sample *r),
				  void *ctx);

/* rss readings (--memory), by process and time */
struct ls_prow_rss {
	int64_t proc_id, t_ns, rss, stack_id;
	bool event;
};
int ls_profile__rss(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_rss *r),
		    void *ctx);

/* gpu (--gpu): device time per launching stack, by process and stack */
struct ls_prow_gpu {
	int64_t proc_id, stack_id, gpu_ns, api_ns, mem_peak;
	int64_t nccl_ns,
		native_ns; /* parts of gpu_ns: NCCL kernels, launched for a waiting thread */
};
int ls_profile__gpu(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_gpu *r),
		    void *ctx);
/* gpu_processes: what each process's injection library said */
struct ls_prow_gpu_proc {
	int64_t proc_id, launches, dropped, lost;
	int hello, status;
	const char *message, *nvml_note;
};
int ls_profile__gpu_procs(struct ls_profile *p,
			  int (*fn)(void *ctx, const struct ls_prow_gpu_proc *r), void *ctx);
/* gpu_devices, by process and ordinal */
struct ls_prow_gpu_dev {
	int64_t proc_id, ordinal, mem_total, cuda_driver, cc;
	const char *name, *driver, *uuid;
};
int ls_profile__gpu_devs(struct ls_profile *p,
			 int (*fn)(void *ctx, const struct ls_prow_gpu_dev *r), void *ctx);

/* trace (--trace) summed by (process, function, line); line -1 (LS_TRACE_CALLS): calls */
struct ls_prow_trace {
	int64_t proc_id, func_id, hits, own_ns, total_ns;
	int line;
};
int ls_profile__trace(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_trace *r),
		      void *ctx);

/* execs: each process's images, by process and order */
struct ls_prow_exec {
	int64_t proc_id, start_ns, end_ns, samples, cpu_ns, wait_ns, unresolved, first_line_ns;
	const char *how, *comm, *argv, *exe, *python, *python_build, *note;
};
int ls_profile__execs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_exec *r),
		      void *ctx);

/* The BPF programs' own cost (stats bpf_runs:PROG and bpf_run_ns:PROG), costliest first. */
struct ls_prow_bpf_cost {
	const char *prog;
	int64_t runs, ns;
};
int ls_profile__bpf_cost(struct ls_profile *p,
			 int (*fn)(void *ctx, const struct ls_prow_bpf_cost *r), void *ctx);

/*
 * cells with their notebook's name (its path, else "kernel PID"), by notebook and capture order
 * (schema 4 on: none before)
 */
struct ls_prow_cell {
	int64_t notebook_id, file_id;
	int number;
	const char *how, *notebook;
	const char *key; /* the notebook cell it is a text of ("index:N", "id:ID"), or NULL */
};
int ls_profile__cells(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_cell *r),
		      void *ctx);
/* notebooks run by a line of another (%run), by id */
struct ls_prow_nbrun {
	int64_t id, proc_id, parent_id, parent_file_id;
	int parent_line;
};
int ls_profile__nbruns(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_nbrun *r),
		       void *ctx);

/*
 * Spark event logs (schema 7 on): each log's events in order, a log without any as one row with
 * event NULL.
 */
bool ls_profile__has_spark(struct ls_profile *p);
struct ls_prow_spark {
	int64_t log_id;
	const char *path, *codec, *note, *event;
	size_t len;
};
int ls_profile__spark(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_spark *r),
		      void *ctx);

/* timeline (--timeline, schema 5 on), by process, thread and time */
struct ls_prow_tick {
	int64_t proc_id, tid, t_ns, dur_ns, stack_id, kind;
};
int ls_profile__ticks(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_tick *r),
		      void *ctx);
/* gpu_timeline (--timeline --gpu, schema 5 on), by process, device, stream and time */
struct ls_prow_gpu_span {
	int64_t proc_id, device, stream, t_ns, dur_ns, kind, stack_id, count, bytes;
	int64_t tid; /* schema 10 on: the launching thread; -1 unknown (older, or 0 stored) */
	const char *name;
};
int ls_profile__gpu_spans(struct ls_profile *p,
			  int (*fn)(void *ctx, const struct ls_prow_gpu_span *r), void *ctx);

#endif
