/* SPDX-License-Identifier: MIT */
/*
 * The profile file (.lsprof): a SQLite database, schema in docs/profile-schema.md. The recorder
 * writes rows inside ls_store__begin/__commit (one transaction per flush, so a killed profiler
 * leaves everything up to the last flush readable). The report reads it through profile.h; merge.c
 * copies tables with SQL, through ls_store__db(). Not thread-safe.
 */
#ifndef LS_STORE_H
#define LS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sqlite3.h>
#include "linescope.h"
#include "jobenv.h"
#include "profile.h"

struct ls_store;

/*
 * Creates a new profile for path, under a temporary name beside it: whatever is at path stays
 * until ls_store__publish(), and a store freed before that leaves nothing behind. Its files are
 * owned by owner_uid/gid unless -1.
 */
int ls_store__create(const char *path, int owner_uid, int owner_gid, struct ls_store **out);
/* Puts the profile at its path, replacing what was there, and turns on WAL journaling. */
int ls_store__publish(struct ls_store *s);
/* Opens an existing profile (never through a symlink); a one-line error when it is not one. */
int ls_store__open(const char *path, struct ls_store **out);
void ls_store__free(struct ls_store *s);

sqlite3 *ls_store__db(struct ls_store *s);
/* The schema version of a profile opened for reading. */
int ls_store__version(const struct ls_store *s);

int ls_store__begin(struct ls_store *s);
/*
 * Commits, unless a write since ls_store__begin() failed: then (or when COMMIT fails) the
 * transaction is rolled back and the first error returned. Writes after a failed one do nothing
 * and return its error, so a caller may check only the commit.
 */
int ls_store__commit(struct ls_store *s);
/* Drops the open transaction's writes. */
void ls_store__rollback(struct ls_store *s);

int ls_store__put_meta(struct ls_store *s, const char *key, const char *value);
int ls_store__put_meta_int(struct ls_store *s, const char *key, int64_t value);
int ls_store__put_stat(struct ls_store *s, const char *key, int64_t value);

struct ls_store_proc {
	int64_t id;
	int pid, ppid, nspid;
	int64_t parent_id;   /* process row of the parent, or -1 */
	int64_t spawn_stack; /* stack of the parent thread when it started this one, or -1 */
	int64_t spawn_tid;
	const char *comm, *argv, *exe;
	int64_t start_ns, end_ns; /* relative to the run start; end -1 while running */
	int exit_code;		  /* wait(2) status; -1 unknown */
	const char *python, *python_build, *note; /* NULL when not applicable */
	const char *cgroup;	/* cgroup v2 path, as /proc showed it; NULL when not read */
	int64_t cgroup_id;	/* the kernel's cgroup id (inode of the v2 directory); -1 unknown */
	int64_t parent_wait_ns; /* time the parent spent in wait4/waitid for this process */
	const char *trace;	/* --trace: "on", or why exact tracing was unavailable; NULL */
	const struct ls_jobenv *job; /* its rank in a distributed job; NULL: none known */
	/*
	 * started by a thread with no project frame: the stack of the parent's thread that waited
	 * on a project line while it started (docs/profile-schema.md, "processes"), or -1
	 */
	int64_t waiter_stack, waiter_tid;
};
int ls_store__put_process(struct ls_store *s, const struct ls_store_proc *p);

/* One image of a process, in order: the one it had when first seen, then each exec. */
struct ls_store_exec {
	int64_t proc_id;
	int seq;	 /* 0, 1, ... */
	const char *how; /* "exec", "fork" (its parent's image), "attach" (running at start) */
	int64_t start_ns, end_ns; /* relative to the run start; end -1 while current */
	const char *comm, *argv, *exe;
	const char *python, *python_build, *note; /* python NULL: not a CPython image */
	int64_t samples;			  /* on-CPU samples while this image ran */
	int64_t cpu_ns;				  /* their time */
	int64_t wait_ns;			  /* off-CPU time of its threads */
	int64_t unresolved;    /* on-CPU samples without lines: the interpreter was not known yet */
	int64_t first_line_ns; /* its first sample with a Python line, or -1 */
};
int ls_store__put_exec(struct ls_store *s, const struct ls_store_exec *x);

/*
 * A thread's row; cpu_ns: its CPU time when it is known already (a thread that ended before its
 * row was written: one statement instead of two), else -1
 */
int ls_store__put_thread(struct ls_store *s, int64_t proc_id, int tid, const char *name,
			 int64_t cpu_ns);
/* The thread's CPU time during the recording as the kernel accounted it (after put_thread). */
int ls_store__put_thread_cpu(struct ls_store *s, int64_t proc_id, int tid, int64_t cpu_ns);
int ls_store__put_source(struct ls_store *s, int64_t id, const char *hash, const void *text,
			 size_t len);
int ls_store__put_file(struct ls_store *s, int64_t id, const char *path, int64_t source_id,
		       const char *kind, const char *unavailable);
/* A notebook: an IPython kernel's cells (docs/profile-schema.md, notebooks and cells). */
struct ls_store_notebook {
	int64_t id, proc_id;
	int pid;
	const char *path, *history, *note; /* each NULL when unknown */
	int64_t parent_id, parent_file_id; /* a %run child: its parent and the file of that line */
	int parent_line;		   /* parent_id -1: not a child */
};
struct ls_store_cell {
	int64_t file_id, notebook_id;
	int seq, number; /* number 0: unknown */
	const char *how; /* "python-usdt", "history", "notebook", NULL: not verified */
	uint32_t hash;
	const char *key; /* the notebook cell it is a text of: "index:N", "id:ID"; NULL unknown */
};
/* --spark-events: a Spark application's log, and its events (one JSON line each, in order). */
int ls_store__put_spark_log(struct ls_store *s, int64_t id, const char *path, const char *codec,
			    const char *note);
int ls_store__put_spark_event(struct ls_store *s, int64_t log_id, int64_t seq, const char *line,
			      size_t len);
int ls_store__put_notebook(struct ls_store *s, const struct ls_store_notebook *nb);
int ls_store__put_cell(struct ls_store *s, const struct ls_store_cell *c);
int ls_store__put_function(struct ls_store *s, int64_t id, int64_t file_id, const char *qualname,
			   int firstlineno);
/* frames: n pairs (function id, line), innermost first */
int ls_store__put_stack(struct ls_store *s, int64_t id, const uint32_t *frames, int n,
			bool truncated);

struct ls_store_sample {
	int64_t proc_id;
	int tid;
	int64_t stack_id;
	int kind; /* enum ls_sample_kind */
	int mode; /* enum ls_cpu_mode */
	int gil;  /* 0 unknown, 1 held, 2 not held */
	int64_t count;
	int64_t weight_ns;
};
/* Sets (not adds) the totals of one aggregation key. */
int ls_store__put_sample(struct ls_store *s, const struct ls_store_sample *x);

/* A resident-memory reading: from a growth event (event) or an on-CPU sample. */
struct ls_store_rss {
	int64_t proc_id;
	int64_t t_ns;
	int64_t rss;
	int64_t stack_id;
	bool event;
};
int ls_store__put_rss(struct ls_store *s, const struct ls_store_rss *x);

/* --timeline: one sample or off-CPU interval of a thread, [t_ns - dur_ns, t_ns] of the run. */
struct ls_store_tick {
	int64_t proc_id;
	int tid;
	int kind; /* enum ls_sample_class */
	int mode; /* enum ls_cpu_mode */
	int64_t t_ns;
	int64_t dur_ns;
	int64_t stack_id;
};
int ls_store__put_tick(struct ls_store *s, const struct ls_store_tick *x);

/* --timeline --gpu: one kernel, copy or set on a device's stream, [t_ns, t_ns + dur_ns]. */
struct ls_store_gpu_span {
	int64_t proc_id;
	int64_t stack_id; /* the launching stack; LS_GPU_STACK_UNSEEN: its launch was not seen */
	int device, stream;
	int kind;	/* enum ls_gpu_act_kind */
	int64_t t_ns;	/* device start, on the run's clock */
	int64_t dur_ns; /* device time */
	int64_t count;	/* records in it: more than 1 for a graph launch's work, summed */
	int64_t bytes;
	const char *name; /* the kernel's, or NULL */
	uint32_t tid;	  /* the launching thread (a waiting thread's, for it); 0 unknown */
};
int ls_store__put_gpu_span(struct ls_store *s, const struct ls_store_gpu_span *x);

/* GPU work launched from one stack of one process (totals; writing again replaces). */
struct ls_store_gpu {
	int64_t proc_id, stack_id; /* stack 0: launched by a thread with no Python frame */
	int64_t gpu_ns;		   /* device time of its kernels, copies and sets */
	int64_t api_ns;		   /* CPU time inside the CUDA API calls (driver time) */
	int64_t mem_peak;	   /* highest device memory of the process while it ran */
	int64_t kernels;
	int64_t nccl_ns;   /* part of gpu_ns in NCCL (communication) kernels */
	int64_t native_ns; /* part of gpu_ns launched by a native thread for this stack's wait */
	bool sampled;	   /* launches were sampled: estimates */
};
int ls_store__put_gpu(struct ls_store *s, const struct ls_store_gpu *x);

/* The GPU library's state in one process. */
struct ls_store_gpu_proc {
	int64_t proc_id;
	bool hello;	     /* the library reported in */
	int status;	     /* enum ls_gpu_status_code */
	const char *message; /* why collection is partial, or "" */
	int cupti_version;
	const char *nvml_note; /* why NVML gave no device memory, or "" */
	int64_t dropped, lost, peak_alloc, peak_nvml, launches, gpu_ns, api_ns;
};
int ls_store__put_gpu_proc(struct ls_store *s, const struct ls_store_gpu_proc *x);

struct ls_store_gpu_device {
	int64_t proc_id;
	int64_t ordinal;
	const char *name;
	int64_t mem_total;
	const char *driver;
	int64_t cuda_driver, cc;
	const char *uuid;
};
int ls_store__put_gpu_device(struct ls_store *s, const struct ls_store_gpu_device *x);

/* Exact line tracing totals of one (process, thread, function, line); line -1: the calls. */
struct ls_store_trace {
	int64_t proc_id;
	int tid;
	int64_t func_id;
	int line; /* LS_TRACE_CALLS (-1): hits are calls, total_ns the time inside it */
	int64_t hits;
	int64_t own_ns;	  /* the line's own wall time (callees in other project code excluded) */
	int64_t total_ns; /* including everything it called */
};
int ls_store__put_trace(struct ls_store *s, const struct ls_store_trace *x);

/* samples.kind is an enum ls_sample_class, samples.mode an enum ls_cpu_mode (linescope.h) */

#endif
