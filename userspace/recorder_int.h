/* SPDX-License-Identifier: MIT */
/*
 * The recorder's insides, shared by recorder.c (dispatch, life), recorder_procs.c (processes),
 * recorder_samples.c (samples and aggregates) and recorder_flush.c (writing the store). Not an API.
 */
#ifndef LS_RECORDER_INT_H
#define LS_RECORDER_INT_H

#include <stdbool.h>
#include <stdint.h>
#include <time.h>
#include "monoclock.h"
#include "cgpaths.h"
#include "hashmap.h"
#include "images.h"
#include "jobenv.h"
#include "kstacks.h"
#include "notebooks.h"
#include "pycode.h"
#include "python.h"
#include "recorder.h"
#include "sources.h"
#include "stacks.h"
#include "store.h"

#define HEAL_EVERY_NS \
	10000000ULL /* an lsr_unwalked sample of a known interpreter sets its entry again */

enum py_state {
	PY_UNKNOWN,	/* not looked at yet */
	PY_PENDING,	/* may still load an interpreter; retry */
	PY_READY,	/* BPF walks its frames */
	PY_NONE,	/* not CPython */
	PY_UNSUPPORTED, /* CPython we cannot walk */
};

/* One image of a process (ls_store_exec): the one it was first seen with, then each exec. */
struct rexec {
	const char *how;
	int64_t start_ns, end_ns;
	char *comm, *argv, *exe;
	char *python, *python_build, *note; /* filled when the image ends (or at each flush) */
	int64_t samples, cpu_ns, wait_ns;
	int64_t nopy; /* on-CPU samples that BPF could not walk: no interpreter known yet */
	/* its interpreter was known before it started (a shared build's, found once ld.so mapped
	 * it): nopy are samples of its start, before any line, not lines missed */
	bool early;
	int state;	       /* enum py_state when last synced */
	int64_t first_line_ns; /* its first sample with a Python line, or -1 */
	bool dirty;
};

/* An image that ended before /proc could tell whether it ran Python: its file may still say. */
struct undecided {
	struct ls_image_key image;
	uint32_t proc, exec; /* indexes into procs and its execs */
};

/* Where a process sees files from: its mount namespace and root, as the kernel encodes them. */
struct lsr_where {
	uint64_t mntns, root_dev, root_ino;
};

struct rproc {
	int64_t id;
	pid_t pid, ppid, nspid;
	int64_t parent_id, spawn_stack, spawn_tid;
	int64_t parent_wait_ns; /* the parent's wait4/waitid time for this process */
	/*
	 * Started by a thread with no project frame (a library's helper thread): the parent's
	 * thread found blocked on a project line across its start, and that wait's stack; -1 until
	 * one is (recorder_samples.c, note_waiter())
	 */
	int64_t waiter_stack, waiter_tid;
	bool foreign_spawn; /* started by such a thread, not yet given a waiter */
	/* its mount namespace and root (recorder_view.c; 0 unknown), and when seen */
	uint64_t src_where, src_where_ns;
	struct lsr_where src_at;   /* what src_where hashes */
	struct ls_source_view src; /* lsr_source_view's last answer (src.id 0: none) */
	uint64_t src_key;	   /* ls_view_key() of the view src.id is of (0: none) */
	uint64_t src_view_ns;	   /* and when; once it ended, its view stays */
	uint64_t alive_in;	   /* r->records when it was last found not ended */
	struct ls_creds *src_gone; /* its rights at its exit, once it was found gone */
	uint64_t kstart_ns;	   /* its task start_time as the kernel gave it; 0 unknown */
	int foreign_children;	   /* of this process's children, those */
	uint64_t last_reading_ns;  /* last RSS reading kept from a sample */
	char *comm, *argv, *exe;
	char *cgroup;	      /* v2 path from /proc, when it was readable */
	int64_t cgroup_id;    /* from the kernel's records; -1 unknown */
	struct ls_jobenv job; /* its rank in a distributed job, from its environment */
	int64_t start_ns, end_ns;
	int exit_code;
	bool exited, dirty;
	bool vanished;	       /* gone from /proc at a reap; its exit record may be in flight */
	uint64_t vanished_pos; /* the ring's write position then: its exit record is before it */
	enum py_state py_state;
	bool codes_released; /* exited: the interpreter is known but its memory is gone */
	char note[256];
	struct ls_pyinfo py;
	struct ls_pycode_cache codes; /* valid while py_state == PY_READY */
	struct ls_hashmap files;      /* XXH64(path) -> file id, for this process's view */
	struct ls_hashmap threads;    /* tid -> index in recorder threads + 1 */
	/*
	 * CPU time of each thread that existed when the process became a target (tid -> ns + 1).
	 * Threads it starts later begin at zero. Only for processes watched from their start or
	 * from attach: a process that joins a cgroup later has no exact baseline.
	 */
	struct ls_hashmap cpu_base;
	bool cpu_tracked;
	uint64_t next_try_ns;
	int tries;
	int last_err;		   /* what the last discovery of this image found (0 before any) */
	struct ls_image_key image; /* the file of its image, as its exec record named it */
	bool has_image;		   /* image is set (an exec, or a fork of one) */
	uint32_t gen;	  /* generation of its BPF entry, as the last fork/exec record said */
	uint64_t heal_ns; /* last time its BPF entry was set again after an lsr_unwalked sample */
	struct rexec *execs;
	size_t nexecs, xcap;
};

struct func {
	int64_t file_id;
	char *qualname;
	int firstlineno;
};

struct agg_key {
	int64_t proc_id;
	int64_t stack_id;
	int32_t tid;
	uint8_t kind, mode, gil, pad;
};

struct agg {
	struct agg_key k;
	int64_t count, weight_ns;
	bool dirty;
};

/*
 * CPU accounting per thread: its samples are scaled to what the scheduler accounted for it over
 * the recording (exit record or schedstat at the end, less its use before the recording).
 */
enum thread_cpu {
	TCPU_UNKNOWN, /* no exact baseline: the process joined a cgroup mid-run */
	TCPU_OPEN,    /* baseline known; waiting for the thread's end */
	TCPU_DIRTY,   /* cpu_ns known, not yet stored */
	TCPU_STORED,
};

struct thread_row {
	int64_t proc_id;
	int tid;
	enum thread_cpu cpu;
	uint64_t base_ns; /* its CPU time when the recording started watching it */
	uint64_t cpu_ns;
	char name[LS_COMM_LEN + 1];
	bool renamed;	   /* its name changed after it was stored */
	bool reopen;	   /* --rotate: running at the cut, counted again from base_ns after it */
	uint64_t cut_from; /* base_ns before the cut, should the interval go on (uncut) */
};

struct ls_recorder {
	struct ls_store *store;
	const struct ls_recorder_ops *ops;
	void *ctx;
	uint64_t t0;
	uint64_t records; /* read so far: which record a lookup is made for (lsr_source_view) */

	struct rproc **procs; /* procs[i]->id == i + 1 */
	size_t nprocs, pcap;
	struct ls_hashmap by_pid; /* live pid -> index */

	struct ls_stacks stacks;
	struct ls_linetables linetabs; /* decoded line tables, shared by the processes' codes */
	struct ls_sources sources;
	struct ls_notebooks notebooks; /* IPython kernels' cells among the sources */

	struct func *funcs; /* [1, nfuncs) */
	size_t nfuncs, fcap, funcs_flushed;
	struct ls_hashmap func_index;

	struct agg *aggs;
	size_t naggs, acap;
	struct ls_hashmap agg_index;
	struct ls_kstacks kstacks; /* what the stacks the kernel adds up resolved to */
	/* kernel aggregates under a stack the reader had not reached the description of */
	struct parked_agg *parked; /* oldest first: their pos only grows */
	size_t nparked, parkcap;
	uint64_t park_pos; /* ls_recorder__agg_park() */

	struct thread_row *threads;
	size_t nthreads, tcap, threads_flushed;

	struct ls_store_rss *readings; /* RSS readings not yet flushed */
	size_t nreadings, rcap;

	bool timeline;		     /* --timeline: each sample's time, too */
	uint64_t tl_min_wait_ns;     /* off-CPU intervals up to this long are not on it */
	struct ls_store_tick *ticks; /* not yet flushed */
	size_t nticks, tkcap;

	struct ls_pylayout layouts[LS_MAX_LAYOUTS];
	unsigned nlayouts;
	unsigned max_layouts; /* LS_MAX_LAYOUTS; LINESCOPE_MAX_LAYOUTS lowers it (tests) */
	struct ls_images images;
	struct ls_cgpaths cgpaths; /* cgroup v2 paths by id, for exec records */
	/* shared builds whose starts are probed (ls_lib_image), by slot: as found in a process */
	struct ls_pyinfo *libs[LS_LIB_IMAGES];
	unsigned nlibs;
	struct undecided *undecided; /* images waiting on their file's verdict (see images.h) */
	size_t nundecided, undecidedcap;

	struct ls_recorder_stats st;
	struct ls_recorder_stats st_base; /* st when the interval began (--rotate), else zero */
	struct ls_gpurec *gpu;		  /* NULL without --gpu */
	struct ls_tracerec *trace;	  /* NULL without --trace */
	struct ls_sparkrec *spark;	  /* NULL without --spark-events */
	bool finished;			  /* ls_recorder__finish(): the next flush is the last */
	uint64_t our_where;		  /* our mount namespace and root (recorder_view.c) */
	uint32_t frames[2 * LS_MAX_FRAMES];
};

static inline int64_t rel_ns(const struct ls_recorder *r, uint64_t ts)
{
	return ts > r->t0 ? (int64_t)(ts - r->t0) : 0;
}

/* recorder_procs.c */
void lsr_proc_drop_python(struct rproc *p, bool forget_interpreter);
void lsr_read_identity(struct rproc *p);
struct rproc *lsr_proc_new(struct ls_recorder *r, pid_t pid, pid_t ppid, uint64_t ts);
void lsr_image_sync(struct rproc *p);
int64_t lsr_image_unresolved(const struct rexec *x);
/* Its samples BPF could not walk because they came before its interpreter started (x->early) */
int64_t lsr_image_before_start(const struct rexec *x);
void lsr_image_begin(struct ls_recorder *r, struct rproc *p, const char *how, uint64_t ts);
struct rproc *lsr_proc_get(struct ls_recorder *r, pid_t pid);
/* The stack id of frames the GPU library walked in process pid (ls_gpurec_stack_fn). */
int64_t lsr_gpu_stack(void *ctx, uint32_t pid, const struct ls_frame *frames, uint32_t n);
struct rproc *lsr_proc_any(struct ls_recorder *r, pid_t pid);
void lsr_inherit(struct ls_recorder *r, struct rproc *p, const struct rproc *parent);
void lsr_unwalked(struct ls_recorder *r, struct rproc *p);
void lsr_thread_cpu_final(struct thread_row *t, uint64_t cpu_ns);
/* A thread still counting (open, of a live process): its CPU time now into *ns. */
bool lsr_thread_cpu_now(const struct ls_recorder *r, const struct thread_row *t, uint64_t *ns);
void lsr_handle_exec(struct ls_recorder *r, const struct ls_exec_event *e);
void lsr_handle_proc_event(struct ls_recorder *r, const struct ls_proc_event *e);

/* recorder_discover.c */
/* Looks for p's interpreter (now or at a retry); sets its BPF entry once found. */
void lsr_discover(struct ls_recorder *r, struct rproc *p, uint64_t now);
/* Sets p's BPF entry to what is known of it (pending until its interpreter is). */
void lsr_push_proc(struct ls_recorder *r, struct rproc *p);
/* p->py found: its layout's slot, its code cache; 0, or -ENOSPC (no lines, noted). */
int lsr_python_ready(struct ls_recorder *r, struct rproc *p);
/* p's current image is not Python, nor is any other process of its file. */
void lsr_not_python(struct ls_recorder *r, struct rproc *p);
/* p's current image ends before it could be looked at: its file may tell later. */
void lsr_undecided(struct ls_recorder *r, struct rproc *p);
/* p started the shared build probed in slot, loaded at bias (an LS_PE_LIB record). */
void lsr_lib_started(struct ls_recorder *r, struct rproc *p, uint32_t slot, uint64_t bias,
		     uint32_t gen);

/* recorder_samples.c */
int64_t lsr_func_intern(struct ls_recorder *r, int64_t file_id, const char *qualname,
			int firstlineno);
/* The file id of path as p names it; view: the naming record's view key (0: none came). */
int64_t lsr_file_of(struct ls_recorder *r, struct rproc *p, const char *path, uint64_t view);
void lsr_handle_sample(struct ls_recorder *r, const struct ls_sample *s, size_t len);
void lsr_handle_code(struct ls_recorder *r, const void *data, size_t len);
void lsr_handle_tick(struct ls_recorder *r, const struct ls_tick *t);
int64_t lsr_trace_name(void *ctx, int64_t proc_id, const char *filename, const char *qualname,
		       int firstlineno);

/* recorder_view.c */
/*
 * How p reads its files now (its view), or NULL when that cannot be told: it reads them itself.
 * key: ls_view_key() of its view when the record naming the file was taken (0: not known). The
 * view known under that key serves with no /proc read; another key reads /proc again at once.
 */
const struct ls_source_view *lsr_source_view(struct ls_recorder *r, struct rproc *p, uint64_t now,
					     uint64_t key);
/* Its view is looked at again, and what it held is freed. */
void lsr_view_forget(struct rproc *p);
/*
 * Its exec (handled at now): the view the kernel took then serves as if read from /proc then (the
 * credential cache's and the view's 1 s), and for as long as its records bring its key.
 */
void lsr_view_exec(struct ls_recorder *r, struct rproc *p, const struct ls_exec_event *e,
		   uint64_t now);

/* recorder_flush.c */
const char *lsr_py_note(const struct rproc *p);

#endif
