// SPDX-License-Identifier: MIT
/* The model's collector-specific data: memory readings (--memory), GPU work (--gpu), exact line
 * counts (--trace). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"

static int rss_grow(struct ls_mrss *r, size_t cap)
{
	int64_t *t = realloc(r->t_ns, cap * sizeof(*t)), *v;
	int *f, *l;
	bool *e;

	if (!t)
		return -ENOMEM;
	r->t_ns = t;
	if (!(v = realloc(r->rss, cap * sizeof(*v))))
		return -ENOMEM;
	r->rss = v;
	if (!(f = realloc(r->file, cap * sizeof(*f))))
		return -ENOMEM;
	r->file = f;
	if (!(l = realloc(r->line, cap * sizeof(*l))))
		return -ENOMEM;
	r->line = l;
	if (!(e = realloc(r->event, cap * sizeof(*e))))
		return -ENOMEM;
	r->event = e;
	return 0;
}

struct rss_load {
	struct loader *L;
	struct ls_mrss *cur;
	int64_t cur_proc, last_event;
	size_t cap, rcap;
};

/* the process's readings to add to: a new one when the rows reach the next process */
static int rss_proc(struct rss_load *c, int64_t pid, uint64_t proc)
{
	struct ls_model *m = c->L->m;
	struct ls_mrss *v;

	if (pid == c->cur_proc)
		return 0;
	v = ls_array_grow(m->rss, &c->rcap, m->nrss, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	m->rss = v;
	c->cur = &m->rss[m->nrss++];
	memset(c->cur, 0, sizeof(*c->cur));
	c->cur->proc = proc;
	c->cur_proc = pid;
	c->cap = 0;
	c->last_event = -1;
	return 0;
}

static int rss_row(void *ctx, const struct ls_prow_rss *r)
{
	struct rss_load *c = ctx;
	struct loader *L = c->L;
	struct ls_model *m = L->m;
	const struct stack *s = NULL;
	struct ls_mline *l = NULL;
	struct ls_mrss *cur;
	uint64_t proc;
	size_t i;
	int err;

	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &proc))
		return 0;
	if ((err = rss_proc(c, r->proc_id, proc)))
		return err;
	cur = c->cur;
	if (cur->n == c->cap) {
		c->cap = c->cap ? c->cap * 2 : 256;
		if ((err = rss_grow(cur, c->cap)))
			return err;
	}
	i = cur->n++;
	cur->t_ns[i] = r->t_ns;
	cur->rss[i] = r->rss;
	cur->event[i] = r->event;
	cur->file[i] = -1;
	cur->line[i] = 0;
	if (r->rss > cur->peak)
		cur->peak = r->rss;
	if (r->stack_id > 0 && (size_t)r->stack_id < L->nstacks)
		s = &L->stacks[r->stack_id];
	if (s && s->depth) {
		int k = lsm_own_frame(L, s), f = lsm_func_at(L, s->frames[2 * k]);

		if (f >= 0) {
			cur->file[i] = m->funcs[f].file;
			cur->line[i] = (int)s->frames[2 * k + 1];
			l = lsm_line_slot(L, proc, cur->file[i], cur->line[i]);
			if (!l)
				return -ENOMEM;
			if (l->func < 0)
				l->func = f;
		}
	}
	if (l && r->rss > l->peak_mem)
		l->peak_mem = r->rss;
	if (r->event) {
		/* the first event is the baseline: nothing before it was attributed */
		if (l && c->last_event >= 0)
			l->mem_change += r->rss - c->last_event;
		c->last_event = r->rss;
	}
	return 0;
}

/*
 * --memory: each growth event's change since the process's previous event is the Mem Change of
 * the line active in the thread that caused it; every reading raises the Peak Mem of its line.
 */
int lsm_load_rss(struct loader *L)
{
	struct rss_load c = {.L = L, .cur_proc = -1, .last_event = -1};

	return ls_profile__rss(L->prof, rss_row, &c);
}

static int gpu_row(void *ctx, const struct ls_prow_gpu *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	const struct stack *s = NULL;
	struct ls_mproc *p;
	struct ls_mline *l;
	uint64_t proc;
	int k, f;

	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &proc))
		return 0;
	p = &m->procs[proc];
	m->gpu = true;
	p->gpu_ns += r->gpu_ns;
	p->driver_ns += r->api_ns;
	if (r->mem_peak > p->gpu_peak)
		p->gpu_peak = r->mem_peak;
	if (r->stack_id == LS_GPU_STACK_UNSEEN) {
		p->gpu_unseen_ns += r->gpu_ns;
		return 0;
	}
	if (r->stack_id > 0 && (size_t)r->stack_id < L->nstacks)
		s = &L->stacks[r->stack_id];
	if (!s || !s->depth) {
		p->gpu_nopy_ns += r->gpu_ns;
		return 0;
	}
	k = lsm_own_frame(L, s);
	f = lsm_func_at(L, s->frames[2 * k]);
	if (f < 0)
		return 0;
	l = lsm_line_slot(L, proc, m->funcs[f].file, (int)s->frames[2 * k + 1]);
	if (!l)
		return -ENOMEM;
	if (l->func < 0)
		l->func = f;
	l->gpu_ns += r->gpu_ns;
	l->driver_ns += r->api_ns;
	l->gpu_nccl_ns += r->nccl_ns;
	l->gpu_native_ns += r->native_ns;
	if (r->mem_peak > l->gpu_peak)
		l->gpu_peak = r->mem_peak;
	return 0;
}

static int gpu_proc_row(void *ctx, const struct ls_prow_gpu_proc *r)
{
	struct loader *L = ctx;
	struct ls_mproc *p;
	uint64_t proc;

	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &proc))
		return 0;
	p = &L->m->procs[proc];
	p->gpu_hello = r->hello;
	p->gpu_status = r->status;
	p->gpu_message = lsm_dup(r->message);
	p->gpu_nvml_note = lsm_dup(r->nvml_note);
	p->gpu_launches = r->launches;
	p->gpu_dropped = r->dropped;
	p->gpu_lost = r->lost;
	if (p->gpu_hello)
		L->m->gpu = true;
	return 0;
}

static int gpu_dev_row(void *ctx, const struct ls_prow_gpu_dev *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	struct ls_mgpu_dev *d,
		*v = ls_array_grow(m->gpu_devs, &L->cap, m->ngpu_devs, sizeof(*v), 256);
	uint64_t proc;

	if (!v)
		return 1; /* what was read so far */
	m->gpu_devs = v;
	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &proc))
		return 0;
	d = &m->gpu_devs[m->ngpu_devs++];
	d->proc = proc;
	d->ordinal = r->ordinal;
	d->name = lsm_dup(r->name);
	d->mem_total = r->mem_total;
	d->driver = lsm_dup(r->driver);
	d->cuda_driver = r->cuda_driver;
	d->cc = r->cc;
	d->uuid = lsm_dup(r->uuid);
	return 0;
}

/*
 * --gpu: device time and driver time per launching line. What the processes' libraries said and
 * the devices they saw are descriptive: a damaged row there leaves them short, not the report.
 */
int lsm_load_gpu(struct loader *L)
{
	int err = ls_profile__gpu(L->prof, gpu_row, L);

	if (err)
		return err;
	ls_profile__gpu_procs(L->prof, gpu_proc_row, L);
	L->cap = 0;
	ls_profile__gpu_devs(L->prof, gpu_dev_row, L);
	return 0;
}

static int trace_row(void *ctx, const struct ls_prow_trace *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	int f = lsm_func_at(L, r->func_id);
	struct ls_mfstat *fs;
	struct ls_mline *l;
	uint64_t proc;

	if (f < 0 || !ls_hashmap__get(&L->proc_idx, r->proc_id, &proc))
		return 0;
	m->traced = true;
	fs = lsm_fstat_slot(L, proc, f);
	if (!fs)
		return -ENOMEM;
	if (r->line == -1) { /* LS_TRACE_CALLS */
		fs->calls = (fs->calls < 0 ? 0 : fs->calls) + r->hits;
		fs->trace_total_ns += r->total_ns;
		return 0;
	}
	l = lsm_line_slot(L, proc, m->funcs[f].file, lsm_line_of(L, f, r->line));
	if (!l)
		return -ENOMEM;
	if (l->func < 0)
		l->func = f;
	l->hits = (l->hits < 0 ? 0 : l->hits) + r->hits;
	l->trace_own_ns += r->own_ns;
	l->trace_total_ns += r->total_ns;
	fs->trace_own_ns += r->own_ns;
	if (fs->calls < 0)
		fs->calls = 0;
	return 0;
}

/*
 * --trace: hits and the tracer's own/inclusive time per line, calls per function. With tracing
 * alone the traced times are the report's Time and Total; with sampling too (mixed collection)
 * the sampled times stay, and hits complete them.
 */
int lsm_load_trace(struct loader *L)
{
	struct ls_model *m = L->m;
	int err = ls_profile__trace(L->prof, trace_row, L);

	if (err || m->sampled)
		return err;
	for (size_t i = 0; i < m->nlines; i++) {
		m->lines[i].own_ns = m->lines[i].trace_own_ns;
		m->lines[i].total_ns = m->lines[i].trace_total_ns;
	}
	for (size_t i = 0; i < m->nfstats; i++) {
		m->fstats[i].own_ns = m->fstats[i].trace_own_ns;
		m->fstats[i].total_ns = m->fstats[i].trace_total_ns;
	}
	return 0;
}

static int exec_row(void *ctx, const struct ls_prow_exec *r)
{
	struct loader *L = ctx;
	struct ls_mproc *p;
	struct ls_mexec *v;
	uint64_t idx;

	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &idx) || idx >= L->m->nprocs)
		return 0;
	p = &L->m->procs[idx];
	/* grown one at a time: a process has a handful */
	v = realloc(p->execs, (p->nexecs + 1) * sizeof(*v));
	if (!v)
		return -ENOMEM;
	p->execs = v;
	p->execs[p->nexecs++] = (struct ls_mexec){
		.how = lsm_dup(r->how),
		.start_ns = r->start_ns,
		.end_ns = r->end_ns,
		.comm = lsm_dup(r->comm),
		.argv = lsm_dup(r->argv),
		.exe = lsm_dup(r->exe),
		.python = lsm_dup(r->python),
		.python_build = lsm_dup(r->python_build),
		.note = lsm_dup(r->note),
		.samples = r->samples,
		.cpu_ns = r->cpu_ns,
		.wait_ns = r->wait_ns,
		.unresolved = r->unresolved,
		.first_line_ns = r->first_line_ns,
	};
	return 0;
}

/* Each process's images in order (the execs table); a row of an unknown process is skipped. */
int lsm_load_execs(struct loader *L)
{
	return ls_profile__execs(L->prof, exec_row, L);
}

void lsm_free_execs(struct ls_mproc *p)
{
	for (size_t k = 0; k < p->nexecs; k++) {
		struct ls_mexec *x = &p->execs[k];

		free(x->how);
		free(x->comm);
		free(x->argv);
		free(x->exe);
		free(x->python);
		free(x->python_build);
		free(x->note);
	}
	free(p->execs);
	p->execs = NULL;
	p->nexecs = 0;
}

static int cost_row(void *ctx, const struct ls_prow_bpf_cost *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	struct ls_mcost_prog *v =
		ls_array_grow(m->cost_progs, &L->cap, m->ncost_progs, sizeof(*v), 16);

	if (!v)
		return -ENOMEM;
	m->cost_progs = v;
	if (!(v[m->ncost_progs].name = strdup(r->prog)))
		return -ENOMEM;
	v[m->ncost_progs].runs = r->runs;
	v[m->ncost_progs].ns = r->ns;
	m->ncost_progs++;
	return 0;
}

/*
 * The recording's own cost (stats bpf_runs:PROG, bpf_run_ns:PROG, collector_cpu_ns). Names are
 * program names: the reader keeps only those that look like one, and range-checks the values.
 */
int lsm_load_cost(struct loader *L)
{
	L->cap = 0;
	return ls_profile__bpf_cost(L->prof, cost_row, L);
}
