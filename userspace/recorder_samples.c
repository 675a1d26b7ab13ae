// SPDX-License-Identifier: MIT
/*
 * Samples in the recorder: frames resolved to (function, line) stacks, aggregated per thread,
 * stack, class and mode, whether they came whole or were added up in the kernel (what each
 * kernel stack hash resolved to is kept in kstacks.c); RSS readings; code records.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>
#include "array.h"
#include "gpurec.h"
#include "recorder_int.h"

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

int64_t lsr_func_intern(struct ls_recorder *r, int64_t file_id, const char *qualname,
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

int64_t lsr_file_of(struct ls_recorder *r, struct rproc *p, const char *path, uint64_t view)
{
	struct file_probe q = {&r->sources, path};
	uint64_t *slot =
		ls_hashmap__intern(&p->files, XXH3_64bits(path, strlen(path)), same_path, &q);
	int64_t fid;

	if (!slot)
		return -ENOMEM;
	if (*slot != LS_HASHMAP_EMPTY)
		return *slot;
	/* an IPython cell is a name, not a file: its text comes from the notebook's kernel */
	fid = ls_notebooks__cell(&r->notebooks, &r->sources, p->pid, p->id,
				 lsr_source_view(r, p, ls_mono_ns(), view), path);
	/* the lookup does not touch p->files: the slot is still valid */
	if (fid > 0)
		*slot = fid;
	return fid;
}

/* The function id of a code object, assigned on first sight in a record of view key view. */
static int64_t code_func(struct ls_recorder *r, struct rproc *p, struct ls_pycode *code,
			 uint64_t view)
{
	int64_t fid, id;

	if (code->func_id)
		return code->func_id;
	fid = lsr_file_of(r, p, code->filename, view);
	if (fid < 0)
		return fid;
	id = lsr_func_intern(r, fid, code->qualname, code->firstlineno);
	if (id > 0)
		code->func_id = id;
	return id;
}

/* A stand-in function for frames whose code object could not be read. */
static int64_t unknown_func(struct ls_recorder *r, struct rproc *p)
{
	int64_t fid = lsr_file_of(r, p, "<unknown>", 0);

	return fid < 0 ? fid : lsr_func_intern(r, fid, "<unresolved code object>", 0);
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
	memset(t, 0, sizeof(*t));
	t->proc_id = p->id;
	t->tid = tid;
	t->cpu = p->cpu_tracked ? TCPU_OPEN : TCPU_UNKNOWN;
	t->base_ns = ls_hashmap__get(&p->cpu_base, tid, &base) ? base - 1 : 0;
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
	if (s->xflags & LS_XF_REMOTE)
		return LS_MODE_UNKNOWN; /* read from another CPU: where it ran is not known */
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

/* Whether a stored stack has a frame in project code (a file that is not a library's). */
static bool project_stack(const struct ls_recorder *r, int64_t stack)
{
	const struct ls_stack *s = ls_stacks__get(&r->stacks, stack);

	for (int i = 0; s && i < s->depth; i++) {
		uint32_t fid = s->frames[2 * i];
		int64_t file = fid < r->nfuncs ? r->funcs[fid].file_id : -1;

		if (file > 0 && (size_t)file < r->sources.nfiles &&
		    !strcmp(r->sources.files[file].kind, "python"))
			return true;
	}
	return false;
}

/*
 * A child started by a thread with no project frame (jupyter_client's launcher thread under
 * nbclient, a pool's worker handler) is charged to the parent's thread that was blocked on a
 * project line across the child's start, when one was: that interval, [end - weight, end],
 * holds the start. Only intervals seen with their time count (a stack's first wait, which
 * goes whole, and ticks: every wait longer than LS_LONG_WAIT_NS, and all with --timeline); the
 * part of each that the child lived is its wait.
 */
static void note_waiter(struct ls_recorder *r, struct rproc *parent, int tid, int64_t stack,
			uint64_t ts, uint64_t weight)
{
	int64_t end = rel_ns(r, ts), start = end - (int64_t)weight;

	if (!parent->foreign_children || weight < 1 || !project_stack(r, stack))
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *c = r->procs[i];
		int64_t from, to;

		if (c->parent_id != parent->id || c->spawn_tid == tid || c->start_ns < start ||
		    c->start_ns > end)
			continue;
		if (c->foreign_spawn) {
			c->foreign_spawn = false;
			parent->foreign_children--;
			c->waiter_stack = stack;
			c->waiter_tid = tid;
		}
		if (c->waiter_stack != stack || c->waiter_tid != tid)
			continue;
		from = c->start_ns;
		to = c->exited && c->end_ns >= 0 && c->end_ns < end ? c->end_ns : end;
		c->parent_wait_ns += to > from ? to - from : 0;
		c->dirty = true;
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
			fid = code_func(r, p, code, s->view);
			line = ls_pycode__line(&p->codes, code, frames[i].instr);
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

int64_t lsr_gpu_stack(void *ctx, uint32_t pid, const struct ls_frame *frames, uint32_t n)
{
	struct ls_recorder *r = ctx;
	struct rproc *p = lsr_proc_get(r, (pid_t)pid);
	struct ls_sample s = {.type = LS_REC_SAMPLE, .pid = pid, .kind = LS_SAMPLE_GPULAUNCH};

	return p && n <= LS_MAX_FRAMES ? resolve_stack(r, p, &s, frames, (int)n) : 0;
}

/* The profile's samples.gil: 0 unknown, 1 held, 2 not held. */
static uint8_t gil_of(uint8_t flags)
{
	return (flags & LS_SF_GIL_KNOWN) ? ((flags & LS_SF_GIL_HELD) ? 1 : 2) : 0;
}

/* Adds count samples of total weight to a (thread, stack, class, mode, GIL) aggregate. */
static void add_samples(struct ls_recorder *r, struct rproc *p, int tid, int64_t stack, uint8_t cls,
			uint8_t mode, uint8_t gil, int64_t count, int64_t weight_ns)
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

/* p's current image as struct ls_kstack keeps it (the 256th and later share 255). */
static uint8_t image_index(const struct rproc *p)
{
	return p->nexecs ? (p->nexecs - 1 < 255 ? p->nexecs - 1 : 255) : 0;
}

/*
 * A thread's first sample of a stack that another thread of its process resolved whole already
 * (BPF's hash names the frames, the process and its image, not the thread): that stack, not
 * resolved again. A service's threads run the same few stacks: with 20 threads a process, 19
 * of 20 first samples. 0 when it must be resolved.
 */
static int64_t known_stack(struct ls_recorder *r, const struct rproc *p, const struct ls_sample *s)
{
	const struct ls_kstack *e = ls_kstacks__get(&r->kstacks, s->stack, s->pid);

	if (!e || e->partial || e->stack <= 0 || e->proc != (uint32_t)(p->id - 1) ||
	    e->image != image_index(p))
		return 0;
	r->st.stacks_reused++;
	return e->stack;
}

/* --timeline: a sample of weight ns that ended at ts (a short wait is not put on it). */
static void add_tick(struct ls_recorder *r, const struct rproc *p, int tid, int64_t stack,
		     uint8_t cls, uint8_t mode, uint64_t ts, uint64_t weight_ns)
{
	struct ls_store_tick *t;
	int64_t end;

	if (!r->timeline || (cls != LS_CLASS_CPU && weight_ns <= r->tl_min_wait_ns))
		return;
	end = rel_ns(r, ts);
	t = ls_array_grow(r->ticks, &r->tkcap, r->nticks, sizeof(*t), 1024);
	if (!t) {
		r->st.timeline_lost++;
		return;
	}
	r->ticks = t;
	r->ticks[r->nticks++] = (struct ls_store_tick){
		.proc_id = p->id,
		.tid = tid,
		.kind = cls,
		.mode = mode,
		.t_ns = end,
		/* a weight past the run's start (an interval open at the attach) is cut there */
		.dur_ns = weight_ns < (uint64_t)end ? (int64_t)weight_ns : end,
		.stack_id = stack,
	};
	r->st.ticks++;
}

/*
 * Our own fork of a launched command, before its exec (the exec itself, in the kernel): it runs
 * no interpreter to miss, so its samples are not Python's, not unresolved ones.
 */
static bool held_launch(const struct rproc *p)
{
	return p->nexecs == 1 && !strcmp(p->execs[0].how, "launch");
}

void lsr_handle_sample(struct ls_recorder *r, const struct ls_sample *s, size_t len)
{
	const struct ls_frame *frames = (const void *)(s + 1);
	bool nopy = (s->flags & LS_SF_NOT_PYTHON);
	uint64_t unresolved;
	struct rproc *p;
	int64_t stack;
	uint8_t cls;

	if (len < sizeof(*s) + s->nframes * sizeof(struct ls_frame) || s->nframes > LS_MAX_FRAMES) {
		r->st.bad_records++;
		return;
	}
	p = lsr_proc_get(r, s->pid);
	if (!p && (p = lsr_proc_any(r, s->pid)) && p->exited) {
		/* taken while its last thread was exiting: still that process (a new one with the
		 * pid would have come with a fork or cgroup record first) */
		r->st.after_exit++;
	} else if (!p) {
		p = lsr_proc_new(r, s->pid, 0, s->ts);
		if (!p)
			return;
		lsr_read_identity(p);
		lsr_image_begin(r, p, "attach", 0);
		lsr_discover(r, p, ls_mono_ns());
	}
	if (s->kind == LS_SAMPLE_ONCPU)
		r->st.samples++;
	if (s->flags & LS_SF_TRUNCATED)
		r->st.truncated++;
	if (s->flags & LS_SF_READ_FAIL)
		r->st.read_fail++;
	note_thread(r, p, s->tid, s->comm);
	if (nopy && held_launch(p))
		nopy = false;
	else if (nopy)
		lsr_unwalked(r, p);
	if (p->nexecs && s->kind == LS_SAMPLE_ONCPU) {
		struct rexec *x = &p->execs[p->nexecs - 1];

		x->samples++;
		x->cpu_ns += s->weight_ns;
		x->nopy += nopy;
		x->dirty = true;
	} else if (p->nexecs && s->kind == LS_SAMPLE_OFFCPU) {
		p->execs[p->nexecs - 1].wait_ns += s->weight_ns;
		p->execs[p->nexecs - 1].dirty = true;
	}
	stack = s->stack ? known_stack(r, p, s) : 0;
	if (!stack) {
		unresolved = r->st.unresolved;
		stack = resolve_stack(r, p, s, frames, s->nframes);
		if (stack < 0)
			return;
		if (s->stack)
			remember_stack(r, p, s, stack, r->st.unresolved != unresolved);
	}
	if (stack > 0 && p->nexecs && p->execs[p->nexecs - 1].first_line_ns < 0 &&
	    s->kind == LS_SAMPLE_ONCPU) {
		p->execs[p->nexecs - 1].first_line_ns = rel_ns(r, s->ts);
		p->execs[p->nexecs - 1].dirty = true;
	}

	if (s->kind == LS_SAMPLE_SPAWN) {
		/* the forking thread's stack: the line that started the child */
		struct rproc *child = lsr_proc_get(r, (pid_t)s->aux);

		if (!child && (child = lsr_proc_new(r, (pid_t)s->aux, s->pid, s->ts))) {
			child->cpu_tracked = true; /* seen from its birth */
			lsr_inherit(r, child, p);
		}
		if (child) {
			bool foreign = !project_stack(r, stack);

			if (foreign != child->foreign_spawn)
				p->foreign_children += foreign ? 1 : -1;
			child->foreign_spawn = foreign;
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
					  s->weight_ns, stack, s->xflags & LS_XF_FOR_WAITER);
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
		add_tick(r, p, s->tid, stack, cls, LS_MODE_UNKNOWN, s->ts, s->weight_ns);
		if (!(s->xflags & LS_XF_WAITPID)) /* a wait for a child is that child's already */
			note_waiter(r, p, s->tid, stack, s->ts, s->weight_ns);
	} else {
		int mode = cpu_mode(p, s);

		add_samples(r, p, s->tid, stack, LS_CLASS_CPU, mode, gil_of(s->flags), 1,
			    s->weight_ns);
		add_tick(r, p, s->tid, stack, LS_CLASS_CPU, mode, s->ts, s->weight_ns);
	}
}

void lsr_handle_tick(struct ls_recorder *r, const struct ls_tick *t)
{
	const struct ls_kstack *e = ls_kstacks__get(&r->kstacks, t->stack, t->pid);

	if (t->cls > LS_CLASS_RUNQ || t->mode > LS_MODE_UNKNOWN) {
		r->st.bad_records++;
		return;
	}
	if (!e || e->proc >= r->nprocs) {
		/* without --timeline, only long waits come (LS_LONG_WAIT_NS), for note_waiter() */
		r->st.timeline_lost += r->timeline;
		return;
	}
	add_tick(r, r->procs[e->proc], (int)t->tid, e->stack, t->cls, t->mode, t->ts, t->weight_ns);
	if (t->cls != LS_CLASS_CPU)
		note_waiter(r, r->procs[e->proc], (int)t->tid, e->stack, t->ts, t->weight_ns);
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
		/* the sums of the held fork's stack are of no interpreter either */
		.flags = held_launch(p) ? s->flags & ~LS_SF_NOT_PYTHON : s->flags,
		.image = image_index(p),
		.partial = partial,
	};

	if (ls_kstacks__set(&r->kstacks, &e))
		partial = true; /* out of memory: have it sent whole again */
	if (partial && r->ops->forget_stack) {
		struct ls_known_key k = {.stack = s->stack, .pid = s->pid, .tid = s->tid};

		r->ops->forget_stack(r->ctx, &k);
	}
}

struct parked_agg {
	struct ls_agg_key k;
	struct ls_agg_val v;
	uint64_t pos; /* the ring position of its map's swap */
};

static int park(struct ls_recorder *r, const struct ls_agg_key *k, const struct ls_agg_val *v)
{
	struct parked_agg *a = ls_array_grow(r->parked, &r->parkcap, r->nparked, sizeof(*a), 64);

	if (!a)
		return -ENOMEM;
	r->parked = a;
	a[r->nparked++] = (struct parked_agg){*k, *v, r->park_pos};
	r->st.agg_parked += v->count;
	return 0;
}

void ls_recorder__agg_park(struct ls_recorder *r, uint64_t pos)
{
	r->park_pos = pos;
}

void ls_recorder__agg_unpark(struct ls_recorder *r, uint64_t read)
{
	uint64_t on = r->park_pos;
	size_t i;

	r->park_pos = 0; /* unknown now: never described */
	for (i = 0; i < r->nparked && r->parked[i].pos <= read; i++)
		ls_recorder__add_agg(r, &r->parked[i].k, &r->parked[i].v);
	if (i) {
		memmove(r->parked, r->parked + i, (r->nparked - i) * sizeof(*r->parked));
		r->nparked -= i;
	}
	r->park_pos = on;
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
		/* described by a record the reader has not reached: added once it has */
		if (r->park_pos && !park(r, k, v))
			return;
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
		lsr_unwalked(r, p);
	add_samples(r, p, k->tid, e->stack, k->cls, k->mode,
		    k->cls == LS_CLASS_CPU ? gil_of(e->flags) : 0, v->count, v->weight_ns);
}

/* A code record is as long as what it holds: copied whole into a full one, bounds checked. */
void lsr_handle_code(struct ls_recorder *r, const void *data, size_t len)
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
	p = lsr_proc_get(r, c.pid);
	if (!p || p->py_state != PY_READY || p->codes_released)
		return;
	if (ls_pycode_cache__add(&p->codes, &c))
		r->st.bad_records++;
}

/* Names a traced code object through the same registry as sampled ones. */
int64_t lsr_trace_name(void *ctx, int64_t proc_id, const char *filename, const char *qualname,
		       int firstlineno)
{
	struct ls_recorder *r = ctx;
	struct rproc *p =
		proc_id >= 1 && (size_t)proc_id <= r->nprocs ? r->procs[proc_id - 1] : NULL;
	int64_t fid;

	if (!p)
		return -ENOENT;
	fid = lsr_file_of(r, p, filename, 0);
	return fid < 0 ? fid : lsr_func_intern(r, fid, qualname, firstlineno);
}
