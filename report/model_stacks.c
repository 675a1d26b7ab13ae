// SPDX-License-Identifier: MIT
/*
 * The model's samples by (thread, stack, kind), kept when the model is loaded with
 * LS_MODEL_STACKS: what the exporters (pprof, folded stacks, speedscope) need, since the per-line
 * aggregates drop the stacks. Read with the same validation and the same per-thread CPU scaling
 * as the lines, so that every exported total is one the report shows.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"
#include "store.h"

struct builder {
	struct ls_mstacks *s;
	size_t tcap, scap, ncap;
	struct ls_hashmap stack_idx; /* stored stack id -> index in s->stacks */
};

/* Index of the thread (proc, tid), added when it is not the last one: rows come by thread. */
static int thread_at(struct builder *b, int proc, int tid, sqlite3_stmt *st, int name_col)
{
	struct ls_mstacks *s = b->s;
	struct ls_mthread *t;

	if (s->nthreads && s->threads[s->nthreads - 1].proc == proc &&
	    s->threads[s->nthreads - 1].tid == tid)
		return s->nthreads - 1;
	t = ls_array_grow(s->threads, &b->tcap, s->nthreads, sizeof(*t), 64);
	if (!t)
		return -ENOMEM;
	s->threads = t;
	t = &s->threads[s->nthreads];
	t->proc = proc;
	t->tid = tid;
	t->name = lsm_col_dup(st, name_col);
	return s->nthreads++;
}

/*
 * Index of the stored stack in s->stacks, converted on first use. Stacks the loader refused
 * (damaged rows, an id out of range) and those with no frame of a known function are the empty
 * stack 0, as add_row() counts them: samples without a line.
 */
static int stack_at(struct loader *L, struct builder *b, int64_t id)
{
	struct ls_mstacks *s = b->s;
	const struct stack *raw;
	struct ls_mstack *v;
	struct ls_mframe *f;
	uint64_t *slot;
	int n = 0;

	if (id <= 0 || (size_t)id >= L->nstacks || !L->stacks[id].depth)
		return 0;
	slot = ls_hashmap__slot(&b->stack_idx, id, UINT64_MAX);
	if (!slot)
		return -ENOMEM;
	if (*slot != UINT64_MAX)
		return (int)*slot;
	raw = &L->stacks[id];
	f = malloc(raw->depth * sizeof(*f));
	if (!f)
		return -ENOMEM;
	for (int i = 0; i < raw->depth; i++) {
		int fn = lsm_func_at(L, raw->frames[2 * i]);

		if (fn < 0)
			continue;
		f[n].func = fn;
		f[n].line = (int)raw->frames[2 * i + 1];
		n++;
	}
	if (!n) {
		free(f);
		*slot = 0;
		return 0;
	}
	v = ls_array_grow(s->stacks, &b->scap, s->nstacks, sizeof(*v), 256);
	if (!v) {
		free(f);
		return -ENOMEM;
	}
	s->stacks = v;
	s->stacks[s->nstacks].frames = f;
	s->stacks[s->nstacks].depth = n;
	*slot = s->nstacks;
	return s->nstacks++;
}

static int add_sample(struct builder *b, int thread, int stack, int kind, int64_t count,
		      int64_t weight)
{
	struct ls_mstacks *s = b->s;
	struct ls_msample *x = ls_array_grow(s->samples, &b->ncap, s->nsamples, sizeof(*x), 256);

	if (!x)
		return -ENOMEM;
	s->samples = x;
	x = &s->samples[s->nsamples++];
	x->thread = thread;
	x->stack = stack;
	x->kind = kind;
	x->count = kind == LS_CLASS_CPU ? count : 0; /* off-CPU intervals are time, not samples */
	x->weight_ns = weight;
	return 0;
}

/*
 * The timeline (schema 5, --timeline), by thread and time. Its ticks are in the samples too, so a
 * tick of a thread or stack they do not hold is damage: counted, left out.
 */
static int load_timeline(struct loader *L, struct builder *b)
{
	struct ls_mstacks *s = b->s;
	struct ls_hashmap thread_idx;
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc = 0, err;

	s->timeline = !strcmp(ls_model__meta(L->m, "timeline") ?: "0", "1");
	if (L->schema < 5)
		return 0;
	ls_hashmap_init(&thread_idx);
	err = 0;
	for (size_t i = 0; !err && i < s->nthreads; i++) {
		uint64_t *slot = ls_hashmap__slot(&thread_idx,
						  (uint64_t)s->threads[i].proc << 32 |
							  (uint32_t)s->threads[i].tid,
						  UINT64_MAX);

		if (!slot)
			err = -ENOMEM;
		else if (*slot == UINT64_MAX)
			*slot = i;
	}
	if (!err)
		err = lsm_prepare(
			L,
			"SELECT process_id, tid, t_ns, dur_ns, stack_id, kind FROM timeline"
			" ORDER BY process_id, tid, t_ns",
			&st);
	if (err)
		goto out;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t tid = sqlite3_column_int64(st, 1), t = sqlite3_column_int64(st, 2);
		int64_t dur = sqlite3_column_int64(st, 3), kind = sqlite3_column_int64(st, 5);
		struct ls_mtick *x;
		uint64_t proc, thread;
		int stack;

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc) || tid < 0 ||
		    tid > INT32_MAX || kind < LS_CLASS_CPU || kind > LS_CLASS_RUNQ || t < 0 ||
		    dur < 0 || dur > t ||
		    !ls_hashmap__get(&thread_idx, proc << 32 | (uint32_t)tid, &thread)) {
			s->ticks_bad++;
			continue;
		}
		stack = stack_at(L, b, sqlite3_column_int64(st, 4));
		x = stack < 0 ? NULL : ls_array_grow(s->ticks, &cap, s->nticks, sizeof(*x), 1024);
		if (!x) {
			err = stack < 0 ? stack : -ENOMEM;
			break;
		}
		s->ticks = x;
		s->ticks[s->nticks++] = (struct ls_mtick){
			.thread = (int)thread,
			.stack = stack,
			.kind = (int)kind,
			.t_ns = t,
			.dur_ns = dur,
		};
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
out:
	ls_hashmap_release(&thread_idx);
	return err;
}

/* The device work on the timeline (schema 5, --timeline --gpu), by process, device, stream, time.
 */
static int load_gpu_timeline(struct loader *L, struct builder *b)
{
	struct ls_mstacks *s = b->s;
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc = 0, err;

	err = lsm_prepare(
		L,
		"SELECT process_id, device, stream, t_ns, dur_ns, kind, name, stack_id,"
		" count, bytes FROM gpu_timeline ORDER BY process_id, device, stream, t_ns",
		&st);
	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t dev = sqlite3_column_int64(st, 1), stream = sqlite3_column_int64(st, 2);
		int64_t t = sqlite3_column_int64(st, 3), dur = sqlite3_column_int64(st, 4);
		int64_t kind = sqlite3_column_int64(st, 5), count = sqlite3_column_int64(st, 8);
		int64_t bytes = sqlite3_column_int64(st, 9), sid = sqlite3_column_int64(st, 7);
		struct ls_mgpu_span *x;
		uint64_t proc;
		int stack;

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc) || dev < 0 ||
		    dev > INT32_MAX || stream < 0 || stream > INT32_MAX || t < 0 || dur <= 0 ||
		    dur > INT64_MAX - t || kind < 1 || kind > 3 || count < 1 || bytes < 0) {
			s->gpu_spans_bad++;
			continue;
		}
		stack = sid == LS_GPU_STACK_UNSEEN ? 0 : stack_at(L, b, sid);
		x = stack < 0 ? NULL
			      : ls_array_grow(s->gpu_spans, &cap, s->ngpu_spans, sizeof(*x), 256);
		if (!x) {
			err = stack < 0 ? stack : -ENOMEM;
			break;
		}
		s->gpu_spans = x;
		x = &s->gpu_spans[s->ngpu_spans++];
		*x = (struct ls_mgpu_span){
			.proc = (int)proc,
			.stack = stack,
			.device = (int)dev,
			.stream = (int)stream,
			.kind = (int)kind,
			.t_ns = t,
			.dur_ns = dur,
			.count = count,
			.bytes = bytes,
			.name = lsm_col_dup(st, 6),
			.unseen = sid == LS_GPU_STACK_UNSEEN,
		};
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

int lsm_load_stacks(struct loader *L, bool timeline)
{
	struct builder b = {};
	sqlite3_stmt *st;
	int rc = 0, err;

	b.s = calloc(1, sizeof(*b.s));
	if (!b.s)
		return -ENOMEM;
	L->m->stacks = b.s;
	ls_hashmap_init(&b.stack_idx);
	/* stacks[0]: the empty stack */
	b.s->stacks = calloc(1, sizeof(*b.s->stacks));
	if (!b.s->stacks)
		return -ENOMEM;
	b.scap = b.s->nstacks = 1;
	err = lsm_prepare(L,
			  "SELECT s.process_id, s.tid, s.stack_id, s.kind, sum(s.count),"
			  " sum(" LSM_SCALED_WEIGHT "),"
			  " (SELECT name FROM threads t WHERE t.process_id = s.process_id"
			  " AND t.tid = s.tid)"
			  " FROM samples s LEFT JOIN (" LSM_CPU_SCALE_SQL ") c"
			  " ON c.c_proc = s.process_id AND c.c_tid = s.tid"
			  " GROUP BY s.process_id, s.tid, s.stack_id, s.kind"
			  " ORDER BY s.process_id, s.tid, s.stack_id, s.kind",
			  &st);
	if (err)
		goto cleanup;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t kind = sqlite3_column_int64(st, 3), count = sqlite3_column_int64(st, 4);
		int64_t weight = sqlite3_column_int64(st, 5), tid = sqlite3_column_int64(st, 1);
		int thread, stack;
		uint64_t proc;

		/* the checks of load_samples(), which has counted these rows as damaged already */
		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc) ||
		    kind < LS_CLASS_CPU || kind > LS_CLASS_RUNQ || count < 0 || weight < 0 ||
		    tid < 0 || tid > INT32_MAX)
			continue;
		thread = thread_at(&b, (int)proc, (int)tid, st, 6);
		stack = thread < 0 ? thread : stack_at(L, &b, sqlite3_column_int64(st, 2));
		err = stack < 0 ? stack : add_sample(&b, thread, stack, (int)kind, count, weight);
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	if (!err && timeline)
		err = load_timeline(L, &b);
	if (!err && timeline && L->schema >= 5)
		err = load_gpu_timeline(L, &b);
cleanup:
	ls_hashmap_release(&b.stack_idx);
	return err;
}

void lsm_free_stacks(struct ls_mstacks *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nthreads; i++)
		free(s->threads[i].name);
	free(s->threads);
	for (size_t i = 0; i < s->nstacks; i++)
		free(s->stacks[i].frames);
	free(s->stacks);
	free(s->samples);
	free(s->ticks);
	for (size_t i = 0; i < s->ngpu_spans; i++)
		free(s->gpu_spans[i].name);
	free(s->gpu_spans);
	free(s);
}
