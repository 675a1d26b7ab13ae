// SPDX-License-Identifier: MIT
/*
 * Record handling and aggregation. Samples are resolved as they arrive, while the process is alive
 * and its code objects readable; everything is then keyed by ids that survive the process.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#include "array.h"
#include "gpurec.h"
#include "images.h"
#include "kstacks.h"
#include "log.h"
#include "procfs.h"
#include "pycode.h"
#include "python.h"
#include "recorder.h"
#include "sources.h"
#include "stacks.h"
#include "tracerec.h"

#define HEAL_EVERY_NS 10000000ULL /* an unwalked sample of a known interpreter sets its entry again */

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
	int state;    /* enum py_state when last synced */
	int64_t first_line_ns; /* its first sample with a Python line, or -1 */
	bool dirty;
};

struct rproc {
	int64_t id;
	pid_t pid, ppid, nspid;
	int64_t parent_id, spawn_stack, spawn_tid;
	int64_t parent_wait_ns;	  /* the parent's wait4/waitid time for this process */
	uint64_t last_reading_ns; /* last RSS reading kept from a sample */
	char *comm, *argv, *exe;
	char *cgroup;	   /* v2 path from /proc, when it was readable */
	int64_t cgroup_id; /* from the kernel's records; -1 unknown */
	int64_t start_ns, end_ns;
	int exit_code;
	bool exited, dirty;
	bool vanished; /* gone from /proc at the last reap; its exit record may be in flight */
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
	uint32_t gen;	  /* generation of its BPF entry, as the last fork/exec record said */
	uint64_t heal_ns; /* last time its BPF entry was set again after an unwalked sample */
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
};

struct ls_recorder {
	struct ls_store *store;
	const struct ls_recorder_ops *ops;
	void *ctx;
	uint64_t t0;

	struct rproc **procs; /* procs[i]->id == i + 1 */
	size_t nprocs, pcap;
	struct ls_hashmap by_pid; /* live pid -> index */

	struct ls_stacks stacks;
	struct ls_sources sources;

	struct func *funcs; /* [1, nfuncs) */
	size_t nfuncs, fcap, funcs_flushed;
	struct ls_hashmap func_index;

	struct agg *aggs;
	size_t naggs, acap;
	struct ls_hashmap agg_index;
	struct ls_kstacks kstacks; /* what the stacks the kernel adds up resolved to */

	struct thread_row *threads;
	size_t nthreads, tcap, threads_flushed;

	struct ls_store_rss *readings; /* RSS readings not yet flushed */
	size_t nreadings, rcap;

	struct ls_pylayout layouts[LS_MAX_LAYOUTS];
	unsigned nlayouts;
	unsigned max_layouts; /* LS_MAX_LAYOUTS; LINESCOPE_MAX_LAYOUTS lowers it (tests) */
	struct ls_images images;

	struct ls_recorder_stats st;
	struct ls_gpurec *gpu;     /* NULL without --gpu */
	struct ls_tracerec *trace; /* NULL without --trace */
	uint32_t frames[2 * LS_MAX_FRAMES];
};

static uint64_t now_mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static int64_t rel_ns(const struct ls_recorder *r, uint64_t ts)
{
	return ts > r->t0 ? (int64_t)(ts - r->t0) : 0;
}

int ls_recorder__new(struct ls_store *store, const struct ls_recorder_ops *ops, void *ctx,
		     uint64_t t0, struct ls_recorder **out)
{
	struct ls_recorder *r = calloc(1, sizeof(*r));

	if (!r)
		return -ENOMEM;
	r->store = store;
	r->ops = ops;
	r->ctx = ctx;
	r->t0 = t0;
	ls_hashmap_init(&r->by_pid);
	ls_hashmap_init(&r->func_index);
	ls_hashmap_init(&r->agg_index);
	ls_kstacks_init(&r->kstacks);
	ls_stacks_init(&r->stacks);
	ls_sources_init(&r->sources);
	ls_images_init(&r->images);
	r->nfuncs = r->funcs_flushed = 1;
	r->max_layouts = LS_MAX_LAYOUTS;
	if (getenv("LINESCOPE_MAX_LAYOUTS")) {
		unsigned long v = strtoul(getenv("LINESCOPE_MAX_LAYOUTS"), NULL, 10);

		if (v < r->max_layouts)
			r->max_layouts = v;
	}
	*out = r;
	return 0;
}

/* Forgets the code objects (their memory is gone); exec also forgets the interpreter. */
static void proc_drop_python(struct rproc *p, bool forget_interpreter)
{
	if (p->py_state == PY_READY && !p->codes_released) {
		ls_pycode_cache_release(&p->codes);
		p->codes_released = true;
	}
	if (forget_interpreter) {
		p->py_state = PY_UNKNOWN;
		p->codes_released = false;
	}
}

void ls_recorder__free(struct ls_recorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		proc_drop_python(p, false);
		ls_hashmap_release(&p->files);
		ls_hashmap_release(&p->threads);
		ls_hashmap_release(&p->cpu_base);
		for (size_t k = 0; k < p->nexecs; k++) {
			struct rexec *x = &p->execs[k];

			free(x->comm);
			free(x->argv);
			free(x->exe);
			free(x->python);
			free(x->python_build);
			free(x->note);
		}
		free(p->execs);
		free(p->cgroup);
		free(p->comm);
		free(p->argv);
		free(p->exe);
		free(p);
	}
	free(r->procs);
	for (size_t i = 1; i < r->nfuncs; i++)
		free(r->funcs[i].qualname);
	free(r->funcs);
	free(r->aggs);
	free(r->threads);
	free(r->readings);
	ls_gpurec__free(r->gpu);
	ls_tracerec__free(r->trace);
	ls_hashmap_release(&r->by_pid);
	ls_hashmap_release(&r->func_index);
	ls_hashmap_release(&r->agg_index);
	ls_kstacks_release(&r->kstacks);
	ls_stacks_release(&r->stacks);
	ls_sources_release(&r->sources);
	ls_images_release(&r->images);
	free(r);
}

static void replace_str(char **dst, const char *src)
{
	free(*dst);
	*dst = src ? strdup(src) : NULL;
}

/* (Re)reads identity from /proc; quietly keeps what it had when the process is gone. */
static void read_identity(struct rproc *p)
{
	struct ls_procstat st;
	char buf[4096];

	if (ls_procfs__stat(p->pid, &st) == 0) {
		if (!p->ppid)
			p->ppid = st.ppid;
		p->nspid = st.nspid;
		replace_str(&p->comm, st.comm);
	}
	if (ls_procfs__cmdline(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->argv, buf);
	if (ls_procfs__link(p->pid, "exe", buf, sizeof(buf)) > 0)
		replace_str(&p->exe, buf);
	if (ls_procfs__cgroup(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->cgroup, buf);
	p->dirty = true;
}

static struct rproc *proc_new(struct ls_recorder *r, pid_t pid, pid_t ppid, uint64_t ts)
{
	struct rproc *p, **v;
	uint64_t idx;

	v = ls_array_grow(r->procs, &r->pcap, r->nprocs, sizeof(*v), 32);
	if (!v)
		return NULL;
	r->procs = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = r->nprocs + 1;
	p->pid = pid;
	p->ppid = ppid;
	p->nspid = pid;
	p->parent_id = -1;
	p->spawn_stack = -1;
	p->spawn_tid = -1;
	p->end_ns = -1;
	p->exit_code = -1;
	p->cgroup_id = -1;
	p->start_ns = rel_ns(r, ts);
	ls_hashmap_init(&p->files);
	ls_hashmap_init(&p->threads);
	ls_hashmap_init(&p->cpu_base);
	if (ppid && ls_hashmap__get(&r->by_pid, ppid, &idx))
		p->parent_id = r->procs[idx]->id;
	r->procs[r->nprocs] = p;
	if (ls_hashmap__set(&r->by_pid, pid, r->nprocs)) {
		free(p);
		return NULL;
	}
	r->nprocs++;
	r->st.processes++;
	r->st.live++;
	return p;
}

static const char *py_note(const struct rproc *p);

static bool same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Sets *dst to a copy of src when it differs; true when it changed. */
static bool update_str(char **dst, const char *src)
{
	if (same_str(*dst, src))
		return false;
	replace_str(dst, src);
	return true;
}

/*
 * Copies the process's current interpreter state into its current image (as it changes, at the
 * image's end, and before each flush: only a change makes the row dirty).
 */
static void image_sync(struct rproc *p)
{
	struct rexec *x = p->nexecs ? &p->execs[p->nexecs - 1] : NULL;
	bool ready = p->py_state == PY_READY;
	bool changed;

	if (!x)
		return;
	changed = update_str(&x->python, ready ? p->py.version : NULL);
	changed |= update_str(&x->python_build, ready ? p->py.build : NULL);
	changed |= update_str(&x->note, py_note(p));
	changed |= x->state != (int)p->py_state;
	x->state = p->py_state;
	x->dirty |= changed;
}

/* Samples of an image that have no lines because its interpreter was not known (yet). */
static int64_t image_unresolved(const struct rexec *x)
{
	switch (x->state) {
	case PY_READY:
		return x->nopy;
	case PY_NONE:
	case PY_UNSUPPORTED:
		return 0; /* resolved: not a Python image, counted under its command */
	default:
		return x->samples;
	}
}

/* Ends the current image at ts (an exec), with the interpreter state it had. */
static void image_end(struct ls_recorder *r, struct rproc *p, uint64_t ts)
{
	struct rexec *x = p->nexecs ? &p->execs[p->nexecs - 1] : NULL;

	if (!x)
		return;
	image_sync(p);
	x->end_ns = rel_ns(r, ts);
	x->dirty = true;
}

/* Starts a new image named as the process is now (after image_end for an exec). */
static void image_begin(struct ls_recorder *r, struct rproc *p, const char *how, uint64_t ts)
{
	struct rexec *x = p->nexecs == 1 ? &p->execs[0] : NULL, *v;

	/* our own held fork of a launched command is not one of its images: its exec is the first */
	if (!x || strcmp(x->how, "launch")) {
		v = ls_array_grow(p->execs, &p->xcap, p->nexecs, sizeof(*v), 2);
		if (!v)
			return; /* out of memory: the previous image goes on counting */
		p->execs = v;
		x = &p->execs[p->nexecs++];
		memset(x, 0, sizeof(*x));
		x->start_ns = !strcmp(how, "exec") ? rel_ns(r, ts) : p->start_ns;
		x->first_line_ns = -1;
	}
	x->how = how;
	x->end_ns = -1;
	replace_str(&x->comm, p->comm);
	replace_str(&x->argv, p->argv);
	replace_str(&x->exe, p->exe);
	x->dirty = true;
}


static struct rproc *proc_get(struct ls_recorder *r, pid_t pid)
{
	uint64_t idx;

	return ls_hashmap__get(&r->by_pid, pid, &idx) ? r->procs[idx] : NULL;
}

/* The live process pid, else the last one that had that pid (records may outlive a process). */
static struct rproc *proc_any(struct ls_recorder *r, pid_t pid)
{
	struct rproc *p = proc_get(r, pid);

	for (size_t i = r->nprocs; !p && i-- > 0;)
		if (r->procs[i]->pid == pid)
			p = r->procs[i];
	return p;
}

/* The BPF slot of layout L, or -ENOSPC: never another interpreter's offsets (slot 0 was). */
static int layout_id(struct ls_recorder *r, const struct ls_pylayout *L)
{
	for (unsigned i = 0; i < r->nlayouts; i++)
		if (!memcmp(&r->layouts[i], L, sizeof(*L)))
			return i;
	if (r->nlayouts == r->max_layouts)
		return -ENOSPC;
	r->layouts[r->nlayouts] = *L;
	r->ops->set_layout(r->ctx, r->nlayouts, L);
	return r->nlayouts++;
}

static void push_proc(struct ls_recorder *r, struct rproc *p)
{
	struct ls_proc bp = {.flags = LS_PF_PENDING};

	if (p->py_state == PY_READY)
		bp = p->py.proc;
	if (p->exited)
		return;
	/* refused when the kernel's entry is of a newer exec than we know: its record follows */
	bp.gen = p->gen;
	r->ops->set_proc(r->ctx, p->pid, &bp);
}

/* Tells BPF about an interpreter executable once its thread-state lookup is settled. */
static void learn_image(struct ls_recorder *r, const struct ls_pyinfo *pi)
{
	struct ls_image_ent *e;
	struct ls_image img;

	if (!pi->in_exe || !r->ops->set_image)
		return;
	e = ls_images__learn(&r->images, pi);
	if (!e)
		return;
	ls_python__image(&e->pi, &img);
	r->ops->set_image(r->ctx, &e->pi.image, &img);
}

/* 0, or -ENOSPC with the process left without lines and a note saying why. */
static int python_ready(struct ls_recorder *r, struct rproc *p)
{
	int id = layout_id(r, &p->py.layout);

	if (id < 0) {
		snprintf(p->note, sizeof(p->note),
			 "CPython %s: %d distinct interpreter layouts already in this session; its "
			 "samples are counted without lines",
			 p->py.version, r->max_layouts);
		p->py_state = PY_UNSUPPORTED;
		p->dirty = true;
		return id;
	}
	p->py.proc.layout_id = id;
	ls_pycode_cache_init(&p->codes, p->pid, &p->py);
	p->py_state = PY_READY;
	p->note[0] = 0;
	p->dirty = true;
	image_sync(p);
	return 0;
}

/* Whether the kernel's entry is of a newer exec than the records handled so far. */
static bool exec_in_flight(struct ls_recorder *r, const struct rproc *p)
{
	uint32_t gen;

	return r->ops->proc_gen && r->ops->proc_gen(r->ctx, p->pid, &gen) == 0 && gen != p->gen;
}

/* Tries to find the interpreter; schedules a retry with backoff while it may still appear. */
static void discover(struct ls_recorder *r, struct rproc *p, uint64_t now)
{
	char why[256];
	int err;

	if (p->exited || p->py_state == PY_READY || p->py_state == PY_NONE ||
	    p->py_state == PY_UNSUPPORTED)
		return;
	p->tries++;
	err = ls_python__discover(p->pid, &p->py, why, sizeof(why));
	if (exec_in_flight(r, p)) {
		/* /proc showed the image after an exec whose record is still to come: what was found
		 * belongs to that image, not to this one (the exec record rediscovers at once) */
		if (err == 0)
			learn_image(r, &p->py);
		p->py_state = PY_PENDING;
		p->next_try_ns = now + 1000000ULL;
		return;
	}
	if (err == 0 && python_ready(r, p)) {
		ls_warn(0, "pid %d: %s", p->pid, p->note);
		return;
	}
	if (err == 0) {
		push_proc(r, p);
		learn_image(r, &p->py);
		ls_info("pid %d: CPython %s (%s) in %s", p->pid, p->py.version, p->py.build,
			p->py.path);
		return;
	}
	snprintf(p->note, sizeof(p->note), "%s", why);
	p->dirty = true;
	if (err == -EAGAIN || err == -ENOENT) {
		/* an exec'd process maps libpython within milliseconds; others may dlopen it */
		uint64_t delay = p->tries < 5	 ? 1000000ULL
				 : p->tries < 20 ? 5000000ULL
				 : p->tries < 40 ? 100000000ULL
						 : 1000000000ULL;

		p->py_state = PY_PENDING;
		p->next_try_ns = now + delay;
		if (err == -ENOENT && p->tries > 3)
			p->py_state = PY_NONE;
		return;
	}
	if (err == -ENOTSUP) {
		p->py_state = PY_UNSUPPORTED;
		ls_warn(0, "pid %d (%s): %s; its samples are counted without lines", p->pid,
			p->comm ? p->comm : "?", why);
		return;
	}
	if (err == -ESRCH)
		return;
	p->py_state = PY_PENDING;
	p->next_try_ns = now + 100000000ULL;
}

/* A forked child: its parent's image, name and interpreter until it execs. */
static void inherit(struct ls_recorder *r, struct rproc *p, const struct rproc *parent)
{
	replace_str(&p->comm, parent->comm);
	replace_str(&p->argv, parent->argv);
	replace_str(&p->exe, parent->exe);
	replace_str(&p->cgroup, parent->cgroup); /* fork keeps the cgroup */
	p->dirty = true;
	if (parent->py_state == PY_READY && !parent->codes_released && p->py_state != PY_READY) {
		p->py = parent->py;
		python_ready(r, p);
	}
}

static void snapshot_thread_cpu(void *ctx, pid_t tid)
{
	struct rproc *p = ctx;
	uint64_t ns;

	if (ls_procfs__thread_cpu(p->pid, tid, &ns) == 0)
		ls_hashmap__set(&p->cpu_base, tid, ns + 1);
}

int ls_recorder__add_target(struct ls_recorder *r, pid_t pid, pid_t parent)
{
	struct rproc *p = proc_get(r, pid);

	if (!p) {
		if (!ls_procfs__alive(pid))
			return -ESRCH;
		p = proc_new(r, pid, parent, now_mono());
		if (!p)
			return -ENOMEM;
		read_identity(p);
		image_begin(r, p, parent == getpid() ? "launch" : "attach", 0);
		/* BPF is attached already: a thread started from now on is seen from its start */
		p->cpu_tracked = ls_procfs__each_thread(pid, snapshot_thread_cpu, p) == 0;
	}
	/* register before discovery so that BPF samples it (and follows its forks) at once */
	push_proc(r, p);
	discover(r, p, now_mono());
	return 0;
}

struct func_probe {
	const struct ls_recorder *r;
	int64_t file_id;
	const char *qualname;
	int firstlineno;
};

static bool same_func(const void *ctx, uint64_t idx)
{
	const struct func_probe *q = ctx;
	const struct func *f = &q->r->funcs[idx];

	return f->file_id == q->file_id && f->firstlineno == q->firstlineno &&
	       !strcmp(f->qualname, q->qualname);
}

static int64_t func_intern(struct ls_recorder *r, int64_t file_id, const char *qualname,
			   int firstlineno)
{
	struct func_probe q = {r, file_id, qualname, firstlineno};
	uint64_t key = XXH3_64bits(qualname, strlen(qualname)) ^ ls_hash64(file_id) ^
		       ls_hash64((uint64_t)firstlineno << 32),
		 *slot = ls_hashmap__intern(&r->func_index, key, same_func, &q);
	struct func *f, *v;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY)
		return *slot;
	v = ls_array_grow(r->funcs, &r->fcap, r->nfuncs, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	r->funcs = v;
	f = &r->funcs[r->nfuncs];
	f->file_id = file_id;
	f->firstlineno = firstlineno;
	f->qualname = strdup(qualname);
	if (!f->qualname)
		return -ENOMEM;
	*slot = r->nfuncs;
	return r->nfuncs++;
}

struct file_probe {
	const struct ls_sources *s;
	const char *path;
};

static bool same_path(const void *ctx, uint64_t idx)
{
	const struct file_probe *q = ctx;

	return !strcmp(q->s->files[idx].path, q->path);
}

static int64_t file_of(struct ls_recorder *r, struct rproc *p, const char *path)
{
	struct file_probe q = {&r->sources, path};
	uint64_t *slot =
		ls_hashmap__intern(&p->files, XXH3_64bits(path, strlen(path)), same_path, &q);
	int64_t fid;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY)
		return *slot;
	fid = ls_sources__lookup(&r->sources, p->pid, path);
	/* the lookup does not touch p->files: the slot is still valid */
	if (fid > 0)
		*slot = fid;
	return fid;
}

/* The function id of a code object, assigned on first sight. */
static int64_t code_func(struct ls_recorder *r, struct rproc *p, struct ls_pycode *code)
{
	int64_t fid, id;

	if (code->func_id)
		return code->func_id;
	fid = file_of(r, p, code->filename);
	if (fid < 0)
		return fid;
	id = func_intern(r, fid, code->qualname, code->firstlineno);
	if (id > 0)
		code->func_id = id;
	return id;
}

/* A stand-in function for frames whose code object could not be read. */
static int64_t unknown_func(struct ls_recorder *r, struct rproc *p)
{
	int64_t fid = file_of(r, p, "<unknown>");

	return fid < 0 ? fid : func_intern(r, fid, "<unresolved code object>", 0);
}

static void note_thread(struct ls_recorder *r, struct rproc *p, int tid, const char *comm)
{
	struct thread_row *t, *v;
	uint64_t *seen = ls_hashmap__slot(&p->threads, tid, 0), base;

	if (!seen || *seen)
		return;
	v = ls_array_grow(r->threads, &r->tcap, r->nthreads, sizeof(*v), 64);
	if (!v)
		return;
	r->threads = v;
	t = &r->threads[r->nthreads++];
	*seen = r->nthreads;
	t->proc_id = p->id;
	t->tid = tid;
	t->cpu = p->cpu_tracked ? TCPU_OPEN : TCPU_UNKNOWN;
	t->base_ns = ls_hashmap__get(&p->cpu_base, tid, &base) ? base - 1 : 0;
	t->cpu_ns = 0;
	snprintf(t->name, sizeof(t->name), "%.*s", LS_COMM_LEN, comm);
	r->st.threads++;
}

struct agg_probe {
	const struct ls_recorder *r;
	const struct agg_key *k;
};

static bool same_agg(const void *ctx, uint64_t idx)
{
	const struct agg_probe *q = ctx;

	return !memcmp(&q->r->aggs[idx].k, q->k, sizeof(*q->k));
}

static struct agg *agg_slot(struct ls_recorder *r, const struct agg_key *k)
{
	struct agg_probe q = {r, k};
	uint64_t *slot =
		ls_hashmap__intern(&r->agg_index, XXH3_64bits(k, sizeof(*k)), same_agg, &q);
	struct agg *a, *v;

	if (!slot)
		return NULL;
	if (*slot != LS_HASHMAP_EMPTY)
		return &r->aggs[*slot];
	v = ls_array_grow(r->aggs, &r->acap, r->naggs, sizeof(*v), 1024);
	if (!v)
		return NULL;
	r->aggs = v;
	a = &r->aggs[r->naggs];
	memset(a, 0, sizeof(*a));
	a->k = *k;
	*slot = r->naggs++;
	return a;
}

static int cpu_mode(const struct rproc *p, const struct ls_sample *s)
{
	if (s->flags & LS_SF_KERNEL)
		return LS_MODE_KERNEL;
	if (p->py_state != PY_READY)
		return LS_MODE_NATIVE;
	if (s->user_ip >= p->py.text_start && s->user_ip < p->py.text_end)
		return LS_MODE_PYTHON;
	return LS_MODE_NATIVE;
}

#define READING_EVERY_NS 10000000ULL /* RSS readings kept from samples: one per 10 ms */

static void add_reading(struct ls_recorder *r, struct rproc *p, const struct ls_sample *s,
			int64_t stack)
{
	bool event = s->kind == LS_SAMPLE_RSS;
	struct ls_store_rss *x, *v;

	if (!event) {
		if (s->ts < p->last_reading_ns + READING_EVERY_NS)
			return;
		p->last_reading_ns = s->ts;
	}
	v = ls_array_grow(r->readings, &r->rcap, r->nreadings, sizeof(*v), 1024);
	if (!v)
		return;
	r->readings = v;
	x = &r->readings[r->nreadings++];
	x->proc_id = p->id;
	x->t_ns = rel_ns(r, s->ts);
	x->rss = s->aux;
	x->stack_id = stack;
	x->event = event;
}

/* A parent thread waited in wait4/waitid for child pid: that is the child's wait time. */
static void note_child_wait(struct ls_recorder *r, struct rproc *parent, pid_t pid, uint64_t ns)
{
	for (size_t i = r->nprocs; pid > 0 && i-- > 0;) {
		struct rproc *c = r->procs[i];

		if (c->pid == pid && c->ppid == parent->pid) {
			c->parent_wait_ns += ns;
			c->dirty = true;
			return;
		}
	}
}

/* Resolves a sample's frames to an interned stack id (0: no Python frame). */
static int64_t resolve_stack(struct ls_recorder *r, struct rproc *p, const struct ls_sample *s,
			     const struct ls_frame *frames, int n)
{
	int depth = 0;

	if (p->py_state != PY_READY || p->codes_released)
		return 0;
	for (int i = 0; i < n; i++) {
		struct ls_pycode *code;
		int64_t fid;
		int line = 0;

		if (ls_pycode_cache__get(&p->codes, frames[i].code, frames[i].fp, &code) == 0) {
			fid = code_func(r, p, code);
			line = ls_pycode__line(code, frames[i].instr);
		} else {
			r->st.unresolved++;
			fid = unknown_func(r, p);
		}
		if (fid <= 0)
			continue;
		r->frames[2 * depth] = fid;
		r->frames[2 * depth + 1] = line;
		depth++;
	}
	return ls_stacks__intern(&r->stacks, r->frames, depth, s->flags & LS_SF_TRUNCATED);
}

/* Samples BPF did not walk: discover the interpreter, or give BPF the entry it lacks. */
static void unwalked(struct ls_recorder *r, struct rproc *p)
{
	uint64_t now = now_mono();

	if (p->py_state == PY_UNKNOWN || p->py_state == PY_PENDING) {
		if (now >= p->next_try_ns)
			discover(r, p, now);
	} else if (p->py_state == PY_READY && !p->exited && now >= p->heal_ns + HEAL_EVERY_NS) {
		/* BPF has an older entry than we know (a fork copied its parent's while that was
		 * still pending): set it again, at most every 10 ms */
		p->heal_ns = now;
		r->st.healed++;
		push_proc(r, p);
	}
}

/* The profile's samples.gil: 0 unknown, 1 held, 2 not held. */
static uint8_t gil_of(uint8_t flags)
{
	return (flags & LS_SF_GIL_KNOWN) ? ((flags & LS_SF_GIL_HELD) ? 1 : 2) : 0;
}

/* Adds count samples of total weight to a (thread, stack, class, mode, GIL) aggregate. */
static void add_samples(struct ls_recorder *r, struct rproc *p, int tid, int64_t stack,
			uint8_t cls, uint8_t mode, uint8_t gil, int64_t count, int64_t weight_ns)
{
	struct agg_key k = {
		.proc_id = p->id,
		.stack_id = stack,
		.tid = tid,
		.kind = cls,
		.mode = mode,
		.gil = gil,
	};
	struct agg *a = agg_slot(r, &k);

	if (!a)
		return;
	a->count += count;
	a->weight_ns += weight_ns;
	a->dirty = true;
}

static void remember_stack(struct ls_recorder *r, struct rproc *p, const struct ls_sample *s,
			   int64_t stack, bool partial);

static void handle_sample(struct ls_recorder *r, const struct ls_sample *s, size_t len)
{
	const struct ls_frame *frames = (const void *)(s + 1);
	uint64_t unresolved;
	struct rproc *p;
	int64_t stack;
	uint8_t cls;

	if (len < sizeof(*s) + s->nframes * sizeof(struct ls_frame) || s->nframes > LS_MAX_FRAMES) {
		r->st.bad_records++;
		return;
	}
	p = proc_get(r, s->pid);
	if (!p && (p = proc_any(r, s->pid)) && p->exited) {
		/* taken while its last thread was exiting: still that process (a new one with the
		 * pid would have come with a fork or cgroup record first) */
		r->st.after_exit++;
	} else if (!p) {
		p = proc_new(r, s->pid, 0, s->ts);
		if (!p)
			return;
		read_identity(p);
		image_begin(r, p, "attach", 0);
		discover(r, p, now_mono());
	}
	if (s->kind == LS_SAMPLE_ONCPU)
		r->st.samples++;
	if (s->flags & LS_SF_TRUNCATED)
		r->st.truncated++;
	if (s->flags & LS_SF_READ_FAIL)
		r->st.read_fail++;
	note_thread(r, p, s->tid, s->comm);
	if (s->flags & LS_SF_NOT_PYTHON)
		unwalked(r, p);
	if (p->nexecs && s->kind == LS_SAMPLE_ONCPU) {
		struct rexec *x = &p->execs[p->nexecs - 1];

		x->samples++;
		x->cpu_ns += s->weight_ns;
		x->nopy += !!(s->flags & LS_SF_NOT_PYTHON);
		x->dirty = true;
	} else if (p->nexecs && s->kind == LS_SAMPLE_OFFCPU) {
		p->execs[p->nexecs - 1].wait_ns += s->weight_ns;
		p->execs[p->nexecs - 1].dirty = true;
	}
	unresolved = r->st.unresolved;
	stack = resolve_stack(r, p, s, frames, s->nframes);
	if (stack < 0)
		return;
	if (s->stack)
		remember_stack(r, p, s, stack, r->st.unresolved != unresolved);
	if (stack > 0 && p->nexecs && p->execs[p->nexecs - 1].first_line_ns < 0 &&
	    s->kind == LS_SAMPLE_ONCPU) {
		p->execs[p->nexecs - 1].first_line_ns = rel_ns(r, s->ts);
		p->execs[p->nexecs - 1].dirty = true;
	}

	if (s->kind == LS_SAMPLE_SPAWN) {
		/* the forking thread's stack: the line that started the child */
		struct rproc *child = proc_get(r, (pid_t)s->aux);

		if (!child && (child = proc_new(r, (pid_t)s->aux, s->pid, s->ts))) {
			child->cpu_tracked = true; /* seen from its birth */
			inherit(r, child, p);
		}
		if (child) {
			child->spawn_stack = stack;
			child->spawn_tid = s->tid;
			child->parent_id = p->id;
			child->ppid = s->pid;
			child->dirty = true;
		}
		return;
	}

	if (s->kind == LS_SAMPLE_GPULAUNCH) {
		/* its CPU time is in the on-CPU samples already; the GPU work joins later */
		if (r->gpu)
			ls_gpurec__launch(r->gpu, p->id, s->pid, s->tid, s->ts, s->aux,
					  s->weight_ns, stack);
		return;
	}
	if (s->kind == LS_SAMPLE_RSS || (s->xflags & LS_XF_RSS))
		add_reading(r, p, s, stack);
	if (s->kind == LS_SAMPLE_RSS)
		return;
	if (s->kind == LS_SAMPLE_OFFCPU && (s->xflags & LS_XF_WAITPID))
		note_child_wait(r, p, (pid_t)(int64_t)s->aux, s->weight_ns);

	if (s->kind == LS_SAMPLE_OFFCPU) {
		cls = (s->xflags & LS_XF_GIL_WAIT)    ? LS_CLASS_GIL_WAIT
		      : (s->xflags & LS_XF_VOLUNTARY) ? LS_CLASS_WAIT
						      : LS_CLASS_RUNQ;
		add_samples(r, p, s->tid, stack, cls, LS_MODE_UNKNOWN, 0, 1, s->weight_ns);
	} else {
		add_samples(r, p, s->tid, stack, LS_CLASS_CPU, cpu_mode(p, s), gil_of(s->flags), 1,
			    s->weight_ns);
	}
}

/*
 * The first sample of a thread with a stack the kernel will add up from now on: what it resolved
 * to, and the image it belongs to. A stack with frames not resolved yet (their code record was
 * lost) is described again by the next sample, and the better resolution replaces this one.
 */
static void remember_stack(struct ls_recorder *r, struct rproc *p, const struct ls_sample *s,
			   int64_t stack, bool partial)
{
	struct ls_kstack e = {
		.hash = s->stack,
		.pid = s->pid,
		.proc = (uint32_t)(p->id - 1),
		.stack = stack,
		.flags = s->flags,
		.image = p->nexecs ? (p->nexecs - 1 < 255 ? p->nexecs - 1 : 255) : 0,
	};

	if (ls_kstacks__set(&r->kstacks, &e))
		partial = true; /* out of memory: have it sent whole again */
	if (partial && r->ops->forget_stack) {
		struct ls_known_key k = {.stack = s->stack, .pid = s->pid, .tid = s->tid};

		r->ops->forget_stack(r->ctx, &k);
	}
}

void ls_recorder__add_agg(void *ctx, const struct ls_agg_key *k, const struct ls_agg_val *v)
{
	struct ls_recorder *r = ctx;
	const struct ls_kstack *e = ls_kstacks__get(&r->kstacks, k->stack, k->pid);
	struct rproc *p;
	struct rexec *x;

	if (k->cls > LS_CLASS_RUNQ || k->mode > LS_MODE_UNKNOWN || !v->count) {
		r->st.bad_records++;
		return;
	}
	if (!e || e->proc >= r->nprocs) {
		/* its description never arrived (cannot happen unless a record was refused) */
		r->st.agg_orphans += v->count;
		return;
	}
	p = r->procs[e->proc];
	x = e->image < p->nexecs ? &p->execs[e->image] : NULL;
	if (k->cls == LS_CLASS_CPU)
		r->st.samples += v->count;
	if (e->flags & LS_SF_TRUNCATED)
		r->st.truncated += v->count;
	if (x && k->cls == LS_CLASS_CPU) {
		x->samples += v->count;
		x->cpu_ns += v->weight_ns;
		x->nopy += e->flags & LS_SF_NOT_PYTHON ? v->count : 0;
		x->dirty = true;
	} else if (x) {
		x->wait_ns += v->weight_ns;
		x->dirty = true;
	}
	if (e->flags & LS_SF_NOT_PYTHON)
		unwalked(r, p);
	add_samples(r, p, k->tid, e->stack, k->cls, k->mode,
		    k->cls == LS_CLASS_CPU ? gil_of(e->flags) : 0, v->count, v->weight_ns);
}

static void proc_exited(struct ls_recorder *r, struct rproc *p, uint64_t ts, int exit_code)
{
	if (p->exited)
		return;
	p->exited = true;
	p->end_ns = rel_ns(r, ts);
	p->exit_code = exit_code;
	p->dirty = true;
	image_end(r, p, ts);
	r->st.live--;
	/* the memory is gone: nothing more can be read */
	proc_drop_python(p, false);
	if (r->gpu)
		ls_gpurec__exit(r->gpu, p->pid);
	ls_hashmap__del(&r->by_pid, p->pid);
}

/* A thread's CPU time as accounted at its end: what the recording saw is that less its baseline. */
static void thread_cpu_final(struct thread_row *t, uint64_t cpu_ns)
{
	if (t->cpu != TCPU_OPEN)
		return;
	if (cpu_ns < t->base_ns) {
		t->cpu = TCPU_UNKNOWN; /* a reused tid */
		return;
	}
	t->cpu_ns = cpu_ns - t->base_ns;
	t->cpu = TCPU_DIRTY;
}

static void thread_ended(struct ls_recorder *r, struct rproc *p, pid_t tid, uint64_t cpu_ns)
{
	uint64_t idx;

	/* a thread never sampled has no row: nothing to scale */
	if (ls_hashmap__get(&p->threads, tid, &idx) && idx && idx <= r->nthreads)
		thread_cpu_final(&r->threads[idx - 1], cpu_ns);
}

/* NUL-separated arguments as one line, as /proc/PID/cmdline is shown. */
static char *join_args(const char *a, size_t n)
{
	char *s;

	while (n > 0 && a[n - 1] == 0)
		n--;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n; i++)
		s[i] = a[i] ? a[i] : ' ';
	s[n] = 0;
	return s;
}

/*
 * A new image of pid: named from the kernel's record, and resolved from it alone when the image
 * is a known interpreter; /proc only adds (the executable's path as we see it).
 */
static void handle_exec(struct ls_recorder *r, const struct ls_exec_event *e)
{
	struct rproc *p = proc_get(r, e->pid);
	const struct ls_pyinfo *known;
	char buf[PATH_MAX];
	size_t n;

	r->st.proc_events++;
	if (!p) {
		p = proc_new(r, e->pid, e->ppid, e->ts);
		if (!p)
			return;
		if (e->start_ns)
			p->start_ns = rel_ns(r, e->start_ns);
	}
	image_end(r, p, e->ts);
	proc_drop_python(p, true);
	ls_hashmap_release(&p->files);
	ls_hashmap_init(&p->files);
	p->tries = 0;
	p->note[0] = 0;
	p->gen = e->gen;
	if (e->nspid)
		p->nspid = e->nspid;
	free(p->comm);
	p->comm = strndup(e->comm, LS_COMM_LEN);
	free(p->argv);
	n = e->args_len <= LS_EXEC_ARGS_MAX ? e->args_len : LS_EXEC_ARGS_MAX;
	p->argv = join_args(e->args, n);
	/* arguments cut at LS_EXEC_ARGS_MAX or unreadable in the kernel: /proc has them whole */
	if ((e->flags & (LS_EF_ARGS_CUT | LS_EF_ARGS_FAIL)) &&
	    ls_procfs__cmdline(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->argv, buf);
	n = e->path_len < LS_EXEC_PATH_MAX ? e->path_len : LS_EXEC_PATH_MAX - 1;
	free(p->exe);
	p->exe = strndup(e->path, n);
	if (ls_procfs__link(p->pid, "exe", buf, sizeof(buf)) > 0)
		replace_str(&p->exe, buf);
	p->cgroup_id = (int64_t)e->cgroup_id;
	if (ls_procfs__cgroup(p->pid, buf, sizeof(buf)) > 0)
		replace_str(&p->cgroup, buf);
	p->dirty = true;
	image_begin(r, p, "exec", e->ts);
	known = ls_images__find(&r->images, &e->image);
	if (known && !ls_python__same_build(p->pid, known)) {
		/* rewritten in place, inode and mtime kept: learn it anew, and not from BPF's guess */
		ls_warn(0, "pid %d: %s changed under the same inode and mtime; discovering it again",
			p->pid, known->path);
		if (r->ops->set_image)
			r->ops->set_image(r->ctx, &e->image, NULL);
		ls_images__forget(&r->images, &e->image);
		known = NULL;
		push_proc(r, p); /* pending until discovered */
	}
	if (known) {
		ls_python__rebase(known, e->start_code, &p->py);
		p->py.proc.pidns_level = e->pidns_level;
		if (python_ready(r, p))
			return; /* a known image's layout has its slot: cannot happen */
		r->st.images_known++;
		/* BPF set the entry itself unless the image was not yet published */
		if (!(e->flags & LS_EF_KNOWN_IMAGE))
			push_proc(r, p);
		return;
	}
	discover(r, p, now_mono());
}

static void handle_proc_event(struct ls_recorder *r, const struct ls_proc_event *e)
{
	struct rproc *p = proc_get(r, e->pid);
	uint64_t now = now_mono();

	r->st.proc_events++;
	switch (e->kind) {
	case LS_PE_FORK: {
		struct rproc *parent = proc_get(r, e->ppid);
		bool fresh = !p;

		if (!p) {
			p = proc_new(r, e->pid, e->ppid, e->ts);
			if (!p)
				return;
			p->cpu_tracked = true; /* seen from its birth */
		}
		p->gen = e->gen;
		p->nspid = e->nspid ? (pid_t)e->nspid : p->nspid;
		p->cgroup_id = (int64_t)e->cgroup_id; /* the parent's, in whose context it forked */
		if (parent) {
			p->parent_id = parent->id;
			if (fresh)
				inherit(r, p, parent);
		}
		if (!p->nexecs)
			image_begin(r, p, "fork", e->ts);
		/* its BPF entry is the parent's as of the fork: set it to what we know now */
		if (p->py_state == PY_READY)
			push_proc(r, p);
		break;
	}
	case LS_PE_SEEN:
		if (!p) {
			p = proc_new(r, e->pid, e->ppid, e->ts);
			if (!p)
				return;
			if (e->start_ns)
				p->start_ns = rel_ns(r, e->start_ns);
			if (e->nspid)
				p->nspid = e->nspid;
			p->cgroup_id = (int64_t)e->cgroup_id;
			read_identity(p);
			image_begin(r, p, "attach", e->ts);
		}
		discover(r, p, now);
		break;
	case LS_PE_EXIT:
		if (p)
			proc_exited(r, p, e->ts, e->exit_code);
		break;
	case LS_PE_THREAD_EXIT:
		if (p)
			thread_ended(r, p, e->tid, e->cpu_ns);
		break;
	default:
		r->st.bad_records++;
	}
}

/* A code record is as long as what it holds: copied whole into a full one, bounds checked. */
static void handle_code(struct ls_recorder *r, const void *data, size_t len)
{
	static struct ls_code_rec c;
	struct rproc *p;

	if (len < LS_CODE_REC_HDR || len > sizeof(c)) {
		r->st.bad_records++;
		return;
	}
	memcpy(&c, data, len);
	if (c.fname_len > LS_CODE_NAME_MAX || c.qname_len > LS_CODE_NAME_MAX ||
	    c.ltab_len > LS_CODE_LTAB_MAX || LS_CODE_REC_SIZE(&c) > len) {
		r->st.bad_records++;
		return;
	}
	p = proc_get(r, c.pid);
	if (!p || p->py_state != PY_READY || p->codes_released)
		return;
	if (ls_pycode_cache__add(&p->codes, &c))
		r->st.bad_records++;
}

int ls_recorder__handle(void *ctx, void *data, size_t len)
{
	struct ls_recorder *r = ctx;
	const __u32 *type = data;

	r->st.ringbuf_bytes += len + 8; /* BPF_RINGBUF_HDR_SZ */
	if (len < sizeof(*type)) {
		r->st.bad_records++;
		return 0;
	}
	switch (*type) {
	case LS_REC_SAMPLE:
	case LS_REC_OFFCPU:
		if (len < sizeof(struct ls_sample)) {
			r->st.bad_records++;
			break;
		}
		handle_sample(r, data, len);
		break;
	case LS_REC_CODE:
		handle_code(r, data, len);
		break;
	case LS_REC_TRACE:
		if (r->trace && len >= 8) {
			const struct ls_sample *h = data; /* pid follows type in every record */
			struct rproc *p = proc_get(r, h->pid);

			if (p) {
				ls_tracerec__record(r->trace, p->id, data, len);
				p->dirty = true; /* its tracing state may have changed */
			}
		}
		break;
	case LS_REC_GPU:
		if (r->gpu) {
			const struct ls_sample *h = data; /* pid follows type in every record */
			struct rproc *p = len >= 8 ? proc_get(r, h->pid) : NULL;

			ls_gpurec__record(r->gpu, p ? p->id : -1, data, len);
		}
		break;
	case LS_REC_EXEC:
		if (len < sizeof(struct ls_exec_event)) {
			r->st.bad_records++;
			break;
		}
		handle_exec(r, data);
		break;
	case LS_REC_PROC:
		if (len < sizeof(struct ls_proc_event)) {
			r->st.bad_records++;
			break;
		}
		handle_proc_event(r, data);
		break;
	default:
		r->st.bad_records++;
	}
	return 0;
}

void ls_recorder__tick(struct ls_recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited || p->py_state != PY_READY || p->py.tsd_verified)
			continue;
		if (ls_python__verify_tsd(p->pid, &p->py) > 0)
			push_proc(r, p);
		learn_image(r, &p->py);
	}
}

uint64_t ls_recorder__retry(struct ls_recorder *r, uint64_t now_ns)
{
	uint64_t next = UINT64_MAX;

	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited || p->py_state != PY_PENDING)
			continue;
		if (now_ns >= p->next_try_ns)
			discover(r, p, now_ns);
		if (p->py_state == PY_PENDING && p->next_try_ns < next)
			next = p->next_try_ns;
	}
	return next;
}

void ls_recorder__reap(struct ls_recorder *r, uint64_t now_ns)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		if (p->exited)
			continue;
		if (ls_procfs__alive(p->pid)) {
			p->vanished = false;
		} else if (!p->vanished) {
			/* records still in the ring buffer may hold its exit: decide next time */
			p->vanished = true;
		} else {
			proc_exited(r, p, now_ns, -1);
			r->ops->set_proc(r->ctx, p->pid, NULL);
		}
	}
}

static const char *py_note(const struct rproc *p)
{
	switch (p->py_state) {
	case PY_READY:
		return NULL;
	case PY_NONE:
	case PY_UNSUPPORTED:
		return p->note[0] ? p->note : "not a CPython process";
	default:
		return p->note[0] ? p->note : "no Python interpreter found while it was profiled";
	}
}

static int flush_execs(struct ls_recorder *r, struct rproc *p)
{
	if (!p->exited)
		image_sync(p);
	for (size_t k = 0; k < p->nexecs; k++) {
		struct rexec *x = &p->execs[k];
		struct ls_store_exec row = {
			.proc_id = p->id,
			.seq = (int)k,
			.how = x->how,
			.start_ns = x->start_ns,
			.end_ns = x->end_ns,
			.comm = x->comm,
			.argv = x->argv,
			.exe = x->exe,
			.python = x->python,
			.python_build = x->python_build,
			.note = x->note,
			.samples = x->samples,
			.cpu_ns = x->cpu_ns,
			.wait_ns = x->wait_ns,
			.unresolved = image_unresolved(x),
			.first_line_ns = x->first_line_ns,
		};
		int err;

		if (!x->dirty)
			continue;
		err = ls_store__put_exec(r->store, &row);
		if (err)
			return err;
		x->dirty = false;
	}
	return 0;
}

/* On-CPU samples without lines for want of a known interpreter, over every image so far. */
static uint64_t unresolved_samples(const struct ls_recorder *r)
{
	uint64_t n = 0;

	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t k = 0; k < r->procs[i]->nexecs; k++)
			n += image_unresolved(&r->procs[i]->execs[k]);
	return n;
}

/* The latest of p's images that ran Python, when its current one does not. */
static const struct rexec *python_image(const struct rproc *p)
{
	if (p->py_state == PY_READY)
		return NULL;
	for (size_t k = p->nexecs; k-- > 0;)
		if (p->execs[k].python)
			return &p->execs[k];
	return NULL;
}

static int flush_procs(struct ls_recorder *r)
{
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];
		const struct rexec *was_py = python_image(p);
		struct ls_store_proc row = {
			.id = p->id,
			.pid = p->pid,
			.ppid = p->ppid,
			.nspid = p->nspid,
			.parent_id = p->parent_id,
			.spawn_stack = p->spawn_stack,
			.spawn_tid = p->spawn_tid,
			.comm = p->comm,
			.argv = p->argv,
			.exe = p->exe,
			.start_ns = p->start_ns,
			.end_ns = p->end_ns,
			.exit_code = p->exit_code,
			.python = p->py_state == PY_READY ? p->py.version : NULL,
			.python_build = p->py_state == PY_READY ? p->py.build : NULL,
			.note = py_note(p),
			.parent_wait_ns = p->parent_wait_ns,
			.trace = r->trace ? ls_tracerec__state(r->trace, p->id) : NULL,
			.cgroup = p->cgroup,
			.cgroup_id = p->cgroup_id,
		};
		int err;

		if (was_py) {
			/* Python, then exec'd into something else: the row says what it ran, its
			 * images say which part was which */
			row.python = was_py->python;
			row.python_build = was_py->python_build;
			row.note = "then exec'd a program that is not CPython (see its images)";
		}
		err = flush_execs(r, p);
		if (err)
			return err;
		if (!p->dirty)
			continue;
		err = ls_store__put_process(r->store, &row);
		if (err)
			return err;
		p->dirty = false;
	}
	return 0;
}

static int put_stats(struct ls_recorder *r)
{
	const struct {
		const char *key;
		uint64_t value;
	} stats[] = {
		{"unresolved_frames", r->st.unresolved},
		{"bad_records", r->st.bad_records},
		{"unresolved_samples", r->st.unresolved_samples},
		{"received_samples", r->st.samples},
		{"images_known", r->st.images_known},
		{"entries_healed", r->st.healed},
		{"after_exit", r->st.after_exit},
		{"ringbuf_bytes", r->st.ringbuf_bytes},
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(stats) / sizeof(stats[0]); i++)
		err = ls_store__put_stat(r->store, stats[i].key, (int64_t)stats[i].value);
	return err;
}

/*
 * The transaction of a flush failed and was rolled back: what it wrote is not in the file, so
 * every row it may have written is written again by the next flush. All rows are idempotent
 * (INSERT OR REPLACE of current totals), so marking too many costs time, never correctness.
 */
static void unflush(struct ls_recorder *r, const size_t *marks)
{
	r->threads_flushed = marks[0];
	r->sources.srcs_flushed = marks[1];
	r->sources.files_flushed = marks[2];
	r->funcs_flushed = marks[3];
	r->stacks.flushed = marks[4];
	for (size_t i = 0; i < r->nprocs; i++) {
		r->procs[i]->dirty = true;
		for (size_t k = 0; k < r->procs[i]->nexecs; k++)
			r->procs[i]->execs[k].dirty = true;
	}
	for (size_t i = 0; i < r->nthreads; i++)
		if (r->threads[i].cpu == TCPU_STORED)
			r->threads[i].cpu = TCPU_DIRTY;
	for (size_t i = 0; i < r->naggs; i++)
		r->aggs[i].dirty = true;
	if (r->gpu)
		ls_gpurec__unflush(r->gpu);
	if (r->trace)
		ls_tracerec__unflush(r->trace);
}

int ls_recorder__flush(struct ls_recorder *r)
{
	struct ls_sources *s = &r->sources;
	const size_t marks[] = {r->threads_flushed, s->srcs_flushed, s->files_flushed,
				r->funcs_flushed, r->stacks.flushed};
	int err;

	err = ls_store__begin(r->store);
	if (err)
		return err;
	err = flush_procs(r);
	for (; !err && r->threads_flushed < r->nthreads; r->threads_flushed++) {
		const struct thread_row *t = &r->threads[r->threads_flushed];

		err = ls_store__put_thread(r->store, t->proc_id, t->tid, t->name);
	}
	for (size_t i = 0; !err && i < r->threads_flushed; i++) {
		struct thread_row *t = &r->threads[i];

		if (t->cpu != TCPU_DIRTY)
			continue;
		err = ls_store__put_thread_cpu(r->store, t->proc_id, t->tid, (int64_t)t->cpu_ns);
		if (!err)
			t->cpu = TCPU_STORED;
	}
	for (; !err && s->srcs_flushed < s->nsrcs; s->srcs_flushed++) {
		const struct ls_source *src = &s->srcs[s->srcs_flushed];

		err = ls_store__put_source(r->store, s->srcs_flushed, src->hash, src->text,
					   src->len);
	}
	for (; !err && s->files_flushed < s->nfiles; s->files_flushed++) {
		const struct ls_file *f = &s->files[s->files_flushed];

		err = ls_store__put_file(r->store, s->files_flushed, f->path, f->source_id, f->kind,
					 f->unavailable);
	}
	for (; !err && r->funcs_flushed < r->nfuncs; r->funcs_flushed++) {
		const struct func *f = &r->funcs[r->funcs_flushed];

		err = ls_store__put_function(r->store, r->funcs_flushed, f->file_id, f->qualname,
					     f->firstlineno);
	}
	for (; !err && r->stacks.flushed < r->stacks.n; r->stacks.flushed++) {
		const struct ls_stack *st = &r->stacks.v[r->stacks.flushed];

		err = ls_store__put_stack(r->store, r->stacks.flushed, st->frames, st->depth,
					  st->truncated);
	}
	for (size_t i = 0; !err && i < r->naggs; i++) {
		struct agg *a = &r->aggs[i];
		struct ls_store_sample x = {
			.proc_id = a->k.proc_id,
			.tid = a->k.tid,
			.stack_id = a->k.stack_id,
			.kind = a->k.kind,
			.mode = a->k.mode,
			.gil = a->k.gil,
			.count = a->count,
			.weight_ns = a->weight_ns,
		};

		if (!a->dirty)
			continue;
		err = ls_store__put_sample(r->store, &x);
		a->dirty = false;
	}
	if (!err && r->gpu)
		err = ls_gpurec__flush(r->gpu, r->store);
	if (!err && r->trace)
		err = ls_tracerec__flush(r->trace, r->store);
	for (size_t i = 0; !err && i < r->nreadings; i++)
		err = ls_store__put_rss(r->store, &r->readings[i]);
	if (!err)
		r->nreadings = 0;
	if (!err) {
		r->st.unresolved_samples = unresolved_samples(r);
		err = put_stats(r);
	}
	if (!err)
		err = ls_store__commit(r->store);
	if (err) {
		/* keep the partial work out of the file, and all of it for the next flush */
		ls_store__rollback(r->store);
		unflush(r, marks);
	}
	return err;
}

void ls_recorder__stats(const struct ls_recorder *r, struct ls_recorder_stats *st)
{
	*st = r->st;
}

/* Names a traced code object through the same registry as sampled ones. */
static int64_t trace_name(void *ctx, int64_t proc_id, const char *filename, const char *qualname,
			  int firstlineno)
{
	struct ls_recorder *r = ctx;
	struct rproc *p = proc_id >= 1 && (size_t)proc_id <= r->nprocs ? r->procs[proc_id - 1] : NULL;
	int64_t fid;

	if (!p)
		return -ENOENT;
	fid = file_of(r, p, filename);
	return fid < 0 ? fid : func_intern(r, fid, qualname, firstlineno);
}

int ls_recorder__enable_trace(struct ls_recorder *r)
{
	return r->trace ? 0 : ls_tracerec__new(trace_name, r, &r->trace);
}

const struct ls_pyinfo *ls_recorder__python(struct ls_recorder *r, pid_t pid)
{
	struct rproc *p = proc_get(r, pid);

	return p && p->py_state == PY_READY ? &p->py : NULL;
}

void ls_recorder__trace_note(struct ls_recorder *r, pid_t pid, const char *note)
{
	struct rproc *p = proc_get(r, pid);

	if (p && r->trace) {
		ls_tracerec__set_state(r->trace, p->id, note);
		p->dirty = true;
	}
}

void ls_recorder__native_count(void *ctx, const struct ls_native_key *k,
			       const struct ls_native_val *v, const char *file, const char *func)
{
	struct ls_recorder *r = ctx;
	struct rproc *p = proc_any(r, k->pid);
	int64_t fid, func_id;

	if (!p || !r->trace || !file[0])
		return;
	fid = file_of(r, p, file);
	/* the probes name functions by co_name only: no qualified name, no first line */
	func_id = fid < 0 ? fid : func_intern(r, fid, func, 0);
	if (func_id <= 0)
		return;
	ls_tracerec__native(r->trace, p->id, k->tid, func_id,
			    k->kind == LS_NK_CALL ? LS_TRACE_CALLS : k->line, v->hits, v->own_ns,
			    k->line);
	if (!ls_tracerec__state(r->trace, p->id))
		ls_tracerec__set_state(r->trace, p->id, "on (CPython's own probes)");
}

int ls_recorder__enable_gpu(struct ls_recorder *r)
{
	return r->gpu ? 0 : ls_gpurec__new(&r->gpu);
}

void ls_recorder__finish(struct ls_recorder *r)
{
	/* threads still running: their CPU time so far (process ids are their index + 1) */
	for (size_t k = 0; k < r->nthreads; k++) {
		struct thread_row *t = &r->threads[k];
		const struct rproc *p = r->procs[t->proc_id - 1];
		uint64_t ns;

		if (t->cpu == TCPU_OPEN && !p->exited &&
		    ls_procfs__thread_cpu(p->pid, t->tid, &ns) == 0)
			thread_cpu_final(t, ns);
	}
	if (r->gpu)
		ls_gpurec__finish(r->gpu);
}

int ls_recorder__exit_code(const struct ls_recorder *r, pid_t pid)
{
	for (size_t i = r->nprocs; i-- > 0;)
		if (r->procs[i]->pid == pid)
			return r->procs[i]->exited ? r->procs[i]->exit_code : -1;
	return -1;
}
