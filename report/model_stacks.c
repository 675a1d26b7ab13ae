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

struct builder {
	struct loader *L;
	struct ls_mstacks *s;
	size_t tcap, scap, ncap;
	struct ls_hashmap stack_idx; /* stored stack id -> index in s->stacks */
};

/* Index of the thread (proc, tid), added when it is not the last one: rows come by thread. */
static int thread_at(struct builder *b, int proc, int tid, const char *name)
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
	t->name = lsm_dup(name);
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

struct ticks_load {
	struct loader *L;
	struct builder *b;
	struct ls_hashmap thread_idx; /* (proc, tid) -> index in s->threads */
	size_t cap;
};

static int tick_row(void *ctx, const struct ls_prow_tick *r)
{
	struct ticks_load *c = ctx;
	struct ls_mstacks *s = c->b->s;
	struct ls_mtick *x;
	uint64_t proc, thread;
	int stack;

	if (!ls_hashmap__get(&c->L->proc_idx, r->proc_id, &proc) || r->tid < 0 ||
	    r->tid > INT32_MAX || r->kind < LS_CLASS_CPU || r->kind > LS_CLASS_RUNQ ||
	    r->t_ns < 0 || r->dur_ns < 0 || r->dur_ns > r->t_ns ||
	    !ls_hashmap__get(&c->thread_idx, proc << 32 | (uint32_t)r->tid, &thread)) {
		s->ticks_bad++;
		return 0;
	}
	stack = stack_at(c->L, c->b, r->stack_id);
	if (stack < 0)
		return stack;
	x = ls_array_grow(s->ticks, &c->cap, s->nticks, sizeof(*x), 1024);
	if (!x)
		return -ENOMEM;
	s->ticks = x;
	s->ticks[s->nticks++] = (struct ls_mtick){
		.thread = (int)thread,
		.stack = stack,
		.kind = (int)r->kind,
		.t_ns = r->t_ns,
		.dur_ns = r->dur_ns,
	};
	return 0;
}

/*
 * The timeline (schema 5, --timeline), by thread and time. Its ticks are in the samples too, so a
 * tick of a thread or stack they do not hold is damage: counted, left out.
 */
static int load_timeline(struct loader *L, struct builder *b)
{
	struct ls_mstacks *s = b->s;
	struct ticks_load c = {.L = L, .b = b};
	int err = 0;

	s->timeline = !strcmp(ls_model__meta(L->m, "timeline") ?: "0", "1");
	ls_hashmap_init(&c.thread_idx);
	for (size_t i = 0; !err && i < s->nthreads; i++) {
		uint64_t *slot = ls_hashmap__slot(&c.thread_idx,
						  (uint64_t)s->threads[i].proc << 32 |
							  (uint32_t)s->threads[i].tid,
						  UINT64_MAX);

		if (!slot)
			err = -ENOMEM;
		else if (*slot == UINT64_MAX)
			*slot = i;
	}
	if (!err)
		err = ls_profile__ticks(L->prof, tick_row, &c);
	ls_hashmap_release(&c.thread_idx);
	return err;
}

struct spans_load {
	struct loader *L;
	struct builder *b;
	size_t cap;
};

static int span_row(void *ctx, const struct ls_prow_gpu_span *r)
{
	struct spans_load *c = ctx;
	struct ls_mstacks *s = c->b->s;
	bool unseen = r->stack_id == LS_GPU_STACK_UNSEEN;
	struct ls_mgpu_span *x;
	uint64_t proc;
	int stack;

	if (!ls_hashmap__get(&c->L->proc_idx, r->proc_id, &proc) || r->device < 0 ||
	    r->device > INT32_MAX || r->stream < 0 || r->stream > INT32_MAX || r->t_ns < 0 ||
	    r->dur_ns <= 0 || r->dur_ns > INT64_MAX - r->t_ns || r->kind < 1 || r->kind > 3 ||
	    r->count < 1 || r->bytes < 0) {
		s->gpu_spans_bad++;
		return 0;
	}
	stack = unseen ? 0 : stack_at(c->L, c->b, r->stack_id);
	if (stack < 0)
		return stack;
	x = ls_array_grow(s->gpu_spans, &c->cap, s->ngpu_spans, sizeof(*x), 256);
	if (!x)
		return -ENOMEM;
	s->gpu_spans = x;
	s->gpu_spans[s->ngpu_spans++] = (struct ls_mgpu_span){
		.proc = (int)proc,
		.stack = stack,
		.device = (int)r->device,
		.stream = (int)r->stream,
		.kind = (int)r->kind,
		.t_ns = r->t_ns,
		.dur_ns = r->dur_ns,
		.count = r->count,
		.bytes = r->bytes,
		.name = lsm_dup(r->name),
		.unseen = unseen,
		.tid = r->tid > 0 ? (int)r->tid : 0,
	};
	return 0;
}

/* The device work on the timeline (schema 5, --timeline --gpu), by process, device, stream, time.
 */
static int load_gpu_timeline(struct loader *L, struct builder *b)
{
	struct spans_load c = {L, b, 0};

	return ls_profile__gpu_spans(L->prof, span_row, &c);
}

static int thread_sample_row(void *ctx, const struct ls_prow_thread_sample *r)
{
	struct builder *b = ctx;
	int thread, stack;
	uint64_t proc;

	/* the reader refused the rows it counted as damaged for the lines already */
	if (!ls_hashmap__get(&b->L->proc_idx, r->proc_id, &proc))
		return 0;
	thread = thread_at(b, (int)proc, r->tid, r->thread_name);
	stack = thread < 0 ? thread : stack_at(b->L, b, r->stack_id);
	return stack < 0 ? stack : add_sample(b, thread, stack, r->kind, r->count, r->weight_ns);
}

int lsm_load_stacks(struct loader *L, bool timeline)
{
	struct builder b = {.L = L};
	int err;

	b.s = calloc(1, sizeof(*b.s));
	if (!b.s)
		return -ENOMEM;
	L->m->stacks = b.s;
	ls_hashmap_init(&b.stack_idx);
	/* stacks[0]: the empty stack */
	b.s->stacks = calloc(1, sizeof(*b.s->stacks));
	if (!b.s->stacks) {
		ls_hashmap_release(&b.stack_idx);
		return -ENOMEM;
	}
	b.scap = b.s->nstacks = 1;
	err = ls_profile__samples_by_thread(L->prof, thread_sample_row, &b);
	if (!err && timeline)
		err = load_timeline(L, &b);
	if (!err && timeline)
		err = load_gpu_timeline(L, &b);
	ls_hashmap_release(&b.stack_idx);
	return err;
}

/* The innermost frame of a stack in project code: the line Time goes to. */
bool ls_model__own_line(const struct ls_model *m, const struct ls_mstack *st, int *file, int *line)
{
	for (int i = 0; i < st->depth; i++) {
		const struct ls_mframe *fr = &st->frames[i];
		int f = m->funcs[fr->func].file;

		if (ls_mfile__project(&m->files[f])) {
			*file = f;
			*line = fr->line;
			return true;
		}
	}
	return false;
}

/* The ticks come in thread, then end-time order. */
int ls_mstacks__runs(const struct ls_mstacks *S, struct ls_mruns *r)
{
	r->n = 0;
	r->begin = malloc((S->nticks + 1) * sizeof(*r->begin));
	if (!r->begin)
		return -ENOMEM;
	for (size_t i = 0; i < S->nticks; i++)
		if (!i || S->ticks[i].thread != S->ticks[i - 1].thread)
			r->begin[r->n++] = i;
	r->begin[r->n] = S->nticks;
	return 0;
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
