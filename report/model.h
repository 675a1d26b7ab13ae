/* SPDX-License-Identifier: MIT */
/*
 * The report model: a stored profile loaded and aggregated per line, function and process,
 * the common input of the HTML, JSON and text writers. Built once, read-only afterwards.
 *
 * Attribution: a sample's *self* line is its innermost Python frame; its *own* line (the report's
 * Time) is the innermost frame in project code, so that time spent in the standard library, an
 * installed package or native code called from a line counts for that line; *total* counts every
 * distinct line on the stack.
 */
#ifndef LS_MODEL_H
#define LS_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ls_mexec {
	char *how, *comm, *argv, *exe, *python, *python_build, *note;
	int64_t start_ns, end_ns; /* end -1: current when the profile was written */
	int64_t samples, cpu_ns, wait_ns, unresolved;
	int64_t first_line_ns; /* -1: none */
};

struct ls_mproc {
	int64_t id;
	int pid, ppid, nspid;
	int parent; /* index of the parent process in the model, or -1 */
	int64_t spawn_stack;
	int64_t waiter_stack; /* the parent's thread that waited for it (ls_store_proc), or -1 */
	char *comm, *argv, *exe, *python, *python_build, *note;
	char *cgroup;			  /* cgroup v2 path, or NULL */
	int64_t cgroup_id;		  /* the kernel's cgroup id, -1 unknown */
	int rank, local_rank, world_size; /* its distributed job's (RANK...), -1 unknown */
	char *master_addr;		  /* MASTER_ADDR, or NULL */
	char *host; /* the host it ran on, in a merged profile; NULL: the profile's (meta host) */
	int64_t start_ns, end_ns; /* end -1: still running when the profile was written */
	int exit_code;		  /* wait(2) status, -1 unknown */
	int threads;
	int64_t samples;	/* on-CPU samples */
	int64_t native_samples; /* on-CPU samples with no Python frame */
	int64_t weight_ns;
	int64_t wait_ns, gil_ns, runq_ns; /* off-CPU time of all its threads */
	int64_t idle_wait_ns;		  /* off-CPU time of threads with no Python frame */
	int64_t parent_wait_ns;		  /* its parent's wait4/waitid time for it */
	char *trace; /* --trace: "on", or why exact line tracing was unavailable */
	/* --gpu: the library's state; GPU work per process */
	bool gpu_hello; /* the injection library reported in */
	int gpu_status; /* enum ls_gpu_status_code */
	char *gpu_message, *gpu_nvml_note;
	int64_t gpu_ns, driver_ns, gpu_peak, gpu_launches, gpu_dropped, gpu_lost;
	int64_t gpu_nopy_ns;   /* launched by threads with no Python frame */
	int64_t gpu_unseen_ns; /* whose launch was never seen */
	/*
	 * the line that started this process, when its parent was profiled; by_waiter: the line of
	 * the parent's thread that waited for it, the starting thread having no project frame
	 */
	int spawn_file, spawn_line;
	bool by_waiter;
	struct ls_mexec *execs; /* its images in order (ls_store_exec) */
	size_t nexecs;
};

/* A notebook cell inside its notebook's text (docs/report-data.md, "Notebook cells"). */
struct ls_mcell {
	char label[64];
	char revision[40]; /* "revision 1 of 2" when the cell ran with another text too, or "" */
	int rev, nrevs;	   /* 1 of 2; 0 of 0 when it has no other revision */
	int first, nlines; /* 1-based first line in the notebook's text; its line count */
	int number;	   /* execution count or code-cell index; 0 unknown */
	const char *how;   /* "history" | "notebook" | NULL: not verified (no text) */
	char *unavailable; /* why it has no text, or NULL */
	int file;	   /* the cell's own file (kind "cell") */
};

struct ls_mfile {
	int64_t id;
	char *path;
	const char *name; /* points into path */
	/*
	 * "python" | "library" | "notebook" (cells concatenated) | "cell" (a notebook cell's own
	 * file, folded into its notebook: no line refers to it)
	 */
	const char *kind;
	char *unavailable;
	char *text;  /* NULL when unavailable */
	char *stale; /* the text is not what ran (a function is not where its code says): why */
	size_t len;
	int nlines;
	bool used; /* some line of it was sampled */
	/* a notebook's cells, in capture order */
	struct ls_mcell *cells;
	size_t ncells;
};

/* Project code: what Time is attributed to (python files and notebooks). */
static inline bool ls_mfile__project(const struct ls_mfile *f)
{
	return f->kind[0] == 'p' || f->kind[0] == 'n';
}

/* The cell of a notebook holding line (1-based) of its text, or NULL. */
const struct ls_mcell *ls_mfile__cell_at(const struct ls_mfile *f, int line);

struct ls_mfunc {
	int64_t id;
	int file; /* index into files */
	char *qualname;
	int firstlineno;
	int def_line; /* the def/class line (after decorators); firstlineno if not indexed */
	int end_line; /* last line of its body; 0 when the source could not be indexed */
};

struct ls_mline {
	int proc, file, line;
	int func;			  /* the function most samples of this line ran in */
	int64_t self_count, self_ns;	  /* innermost Python frame */
	int64_t own_count, own_ns;	  /* innermost project frame (Time) */
	int64_t total_count, total_ns;	  /* anywhere on the stack */
	int64_t mode_ns[3];		  /* own time by CPU mode: python, native, kernel */
	int64_t wait_ns, gil_ns, runq_ns; /* own off-CPU time: blocked; for the GIL; for a CPU */
	int64_t mem_change;	   /* --memory: RSS change while this line was active (bytes) */
	int64_t gpu_ns, driver_ns; /* --gpu: device time and CUDA API time of work it launched */
	/* parts of gpu_ns: NCCL kernels; launched by a native thread while this line waited */
	int64_t gpu_nccl_ns, gpu_native_ns;
	int64_t gpu_peak; /* highest device memory while it launched work; -1: none */
	int64_t hits;	  /* --trace: executions; -1 when not traced */
	int64_t trace_own_ns, trace_total_ns; /* the tracer's own and inclusive wall time */
	int64_t peak_mem; /* highest RSS read while it was active; -1: never read */
	int64_t best_func_ns;
};

/* On-CPU part of a line's own time. */
#define LS_LINE_CPU_NS(l) ((l)->own_ns - (l)->wait_ns - (l)->gil_ns - (l)->runq_ns)

struct ls_mfstat {
	int proc, func;
	int64_t own_count, own_ns, total_count, total_ns;
	int64_t cpu_ns, wait_ns, gil_ns, runq_ns; /* split of own_ns */
	int64_t calls; /* --trace: starts of the function; -1 when not traced */
	int64_t trace_own_ns, trace_total_ns;
};

struct ls_medge {
	int proc, file, line; /* caller line */
	int callee;	      /* function called from it */
	int64_t count;
};

/* RSS readings of one process, in time order; the line active at each (file -1: none). */
struct ls_mrss {
	int proc;
	size_t n;
	int64_t *t_ns, *rss;
	int *file, *line;
	bool *event;
	int64_t peak;
};

/* A notebook that a line of another ran inline (%run child.ipynb): both are files of the model. */
struct ls_mnbrun {
	int proc;      /* the kernel */
	int src, line; /* the parent notebook and its %run line */
	int child;     /* the child notebook */
};

struct ls_mgpu_dev {
	int proc;
	int64_t ordinal, mem_total, cuda_driver, cc;
	char *name, *driver, *uuid;
};

/* A thread that has samples (LS_MODEL_STACKS). */
struct ls_mthread {
	int proc; /* index into procs */
	int tid;
	char *name; /* its name at first sight; NULL when the profile has none */
};

struct ls_mframe {
	int func; /* index into funcs */
	int line;
};

/*
 * The Python frames of a stored stack, innermost first, without those of functions the profile
 * does not hold (as the lines leave them out). depth 0: no Python frame (native code, no thread
 * state, an interpreter not known yet) or a stack the profile does not hold intact.
 */
struct ls_mstack {
	struct ls_mframe *frames;
	int depth;
};

/* Totals of one (thread, stack, kind), weighted as the lines are: on-CPU scaled per thread. */
struct ls_msample {
	int thread;	   /* index into ls_mstacks.threads */
	int stack;	   /* index into ls_mstacks.stacks */
	int kind;	   /* enum ls_sample_class (store.h) */
	int64_t count;	   /* on-CPU samples; 0 for off-CPU time */
	int64_t weight_ns; /* the time they stand for */
};

/*
 * --timeline (LS_MODEL_TIMELINE): one sample or off-CPU interval of a thread, as it happened (not
 * scaled: an on-CPU tick lasts one sampling period).
 */
struct ls_mtick {
	int thread;	/* index into ls_mstacks.threads */
	int stack;	/* index into ls_mstacks.stacks */
	int kind;	/* enum ls_sample_class */
	int64_t t_ns;	/* its end, in ns from the run's start */
	int64_t dur_ns; /* its length: t_ns - dur_ns >= 0 */
};

/* --timeline --gpu (LS_MODEL_TIMELINE): a kernel, copy or set as it ran on a device's stream. */
struct ls_mgpu_span {
	int proc;    /* index into procs */
	int stack;   /* the launching stack: index into ls_mstacks.stacks (0: no Python frame) */
	bool unseen; /* its launch was not seen (stack 0) */
	int device, stream;
	int kind;	/* enum ls_gpu_act_kind (gpu/gpu_records.h): 1 kernel, 2 copy, 3 set */
	int64_t t_ns;	/* device start, in ns from the run's start */
	int64_t dur_ns; /* device time */
	int64_t count;	/* records summed into it (a graph launch's work) */
	int64_t bytes;
	char *name; /* the kernel's; NULL for copies and sets, or when not known */
	int tid;    /* the launching thread (the waiting thread, for it); 0 unknown */
};

/* The samples by stack and thread that the per-line aggregates are made of, for the exporters. */
struct ls_mstacks {
	struct ls_mthread *threads;
	size_t nthreads;
	struct ls_mstack *stacks; /* stacks[0] is the empty stack */
	size_t nstacks;
	struct ls_msample *samples; /* ordered by process, thread, stored stack id, kind */
	size_t nsamples;
	struct ls_mtick *ticks; /* LS_MODEL_TIMELINE: ordered by thread, then time */
	size_t nticks;
	struct ls_mgpu_span *gpu_spans; /* LS_MODEL_TIMELINE: by process, device, stream, time */
	size_t ngpu_spans;
	bool timeline;	       /* the run was recorded with --timeline */
	int64_t ticks_bad;     /* timeline rows refused (damaged, or of a thread without samples) */
	int64_t gpu_spans_bad; /* gpu_timeline rows refused (damaged) */
};

/* Where each thread's ticks begin (LS_MODEL_TIMELINE): run k is ticks [begin[k], begin[k + 1]). */
struct ls_mruns {
	size_t *begin; /* n + 1 entries */
	size_t n;
};
/* The runs of s's ticks; -ENOMEM. Free r->begin. */
int ls_mstacks__runs(const struct ls_mstacks *s, struct ls_mruns *r);

/* Our own cost in the recording: one BPF program's runs and the kernel-measured time in them. */
struct ls_mcost_prog {
	char *name;
	int64_t runs, ns;
};

struct ls_pyindex;

struct ls_model {
	char **meta_keys, **meta_vals;
	size_t nmeta;
	struct ls_mproc *procs;
	size_t nprocs;
	struct ls_mfile *files;
	size_t nfiles;
	struct ls_mfunc *funcs;
	size_t nfuncs;
	struct ls_mline *lines;
	size_t nlines;
	struct ls_mfstat *fstats;
	size_t nfstats;
	struct ls_medge *edges;
	size_t nedges;
	struct ls_mrss *rss; /* per process with readings */
	size_t nrss;
	struct ls_pyindex *index; /* symbols of the project sources (file index = src id) */
	struct ls_mnbrun *nbruns; /* notebooks run by notebooks */
	size_t nnbruns;
	struct ls_mgpu_dev *gpu_devs;
	size_t ngpu_devs;
	/* --timeline --gpu: each device's busy and idle time, and its idle time's lines */
	struct ls_gpu_util *gpu_util;
	size_t ngpu_util;
	int64_t gpu_util_skipped; /* spans of devices past LS_GPU_UTIL_MAX_DEVICES (damage) */
	bool gpu_requested;	  /* --gpu */
	bool traced;		  /* --trace: hits and calls exist */
	bool sampled;		  /* on-CPU sampling ran (not --trace alone) */
	bool gpu;		  /* some GPU work was recorded */
	int64_t samples, threads;
	int64_t lost_ringbuf, lost_read, lost_truncated, lost_unresolved;
	int64_t taken;		    /* on-CPU samples the kernel took (-1: not recorded): */
				    /* ls_model__kept() + ls_model__lost() */
	int64_t unresolved_frames;  /* frames whose code object could not be read */
	int64_t lost_records;	    /* other ring-buffer records dropped (process, off-CPU, code) */
	int64_t lost_trace_batches; /* --trace: python-usdt batches lost (sequence gaps) */
	int64_t damaged_rows;	    /* profile rows skipped: values out of range (a damaged file) */
	double elapsed_s;
	uint64_t period_ns;
	struct ls_mcost_prog *cost_progs; /* none when the kernel did not count */
	size_t ncost_progs;
	int64_t collector_cpu_ns; /* the recorder's own CPU time while recording; -1: not recorded */
	int64_t collector_setup_cpu_ns; /* before it: loading BPF; -1: not recorded */
	bool wall;			/* off-CPU time was recorded */
	bool cpu_split; /* some on-CPU time has a mode (not --sampler remote alone) */
	bool memory;	/* RSS readings were recorded */
	/* LS_MODEL_STACKS only, else NULL */
	struct ls_mstacks *stacks;
	/* Spark applications of the profile or the report's --spark-events (spark.h); NULL none */
	struct ls_spark *spark;
};

enum ls_model_flags {
	LS_MODEL_STACKS = 1 << 0,   /* also keep the samples by thread and stack (ls_mstacks) */
	LS_MODEL_TIMELINE = 1 << 1, /* and, with it, the timeline (ls_mstacks.ticks) */
};

/* What else to read with a profile: Spark event logs (`report --spark-events PATH`). */
struct ls_model_opts {
	unsigned flags; /* enum ls_model_flags */
	const char *const *spark_paths;
	size_t nspark_paths;
};

/* A model stack's innermost frame in project code, the line Time goes to: false when none. */
bool ls_model__own_line(const struct ls_model *m, const struct ls_mstack *st, int *file, int *line);

/* Loads the profile at path. One-line errors logged (missing, corrupt, wrong schema). */
int ls_model__load(const char *path, struct ls_model **out);
/* The same, with what else to keep (enum ls_model_flags). */
int ls_model__load_flags(const char *path, unsigned flags, struct ls_model **out);
/* The same with opts: Spark applications (the profile's, and those of the paths) load with the
 * timeline their actions are matched on. */
int ls_model__load_opts(const char *path, const struct ls_model_opts *o, struct ls_model **out);
void ls_model__free(struct ls_model *m);

/* Metadata value, or NULL. Valid until ls_model__free(). */
const char *ls_model__meta(const struct ls_model *m, const char *key);
/* The host process proc (an index) ran on. */
const char *ls_model__host(const struct ls_model *m, int proc);
/*
 * The run's status: the recorded one ("Success", "Failed"); "Running" while the recorder that
 * writes the profile is still alive (same pid and start time); NULL when it stopped without
 * finishing (killed, or the machine went down).
 */
const char *ls_model__status(const struct ls_model *m);

/* Text of one line (1-based) of a file, without its newline, and its length; NULL if none. */
const char *ls_mfile__line(const struct ls_mfile *f, int line, size_t *len);

/* Samples that carry no line: refused by the ring buffer, or of an interpreter not known. */
static inline int64_t ls_model__lost(const struct ls_model *m)
{
	return m->lost_ringbuf + m->lost_unresolved;
}

/* Time in our BPF programs, and their runs, over the recording (0 when not counted). */
static inline int64_t ls_model__bpf_ns(const struct ls_model *m, int64_t *runs)
{
	int64_t ns = 0, n = 0;

	for (size_t i = 0; i < m->ncost_progs; i++) {
		ns += m->cost_progs[i].ns;
		n += m->cost_progs[i].runs;
	}
	if (runs)
		*runs = n;
	return ns;
}

/* On-CPU samples kept with their process's interpreter known (or known not to be Python). */
static inline int64_t ls_model__kept(const struct ls_model *m)
{
	return m->samples - m->lost_unresolved;
}

#endif
