// SPDX-License-Identifier: MIT
/*
 * Attribution: a row of summed samples of one stack spread over the model's lines, functions and
 * caller edges (self, own = Time, total), and the slots those live in.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
#include "model_int.h"

struct slot_probe {
	const struct ls_model *m;
	int proc, file, line, callee;
};

static bool same_line(const void *ctx, uint64_t idx)
{
	const struct slot_probe *q = ctx;
	const struct ls_mline *l = &q->m->lines[idx];

	return l->proc == q->proc && l->file == q->file && l->line == q->line;
}

static uint64_t line_hash(int proc, int file, int line)
{
	return ls_hash64(((uint64_t)(uint32_t)proc << 32 | (uint32_t)file) ^
			 ls_hash64((uint32_t)line));
}

struct ls_mline *lsm_line_slot(struct loader *L, int proc, int file, int line)
{
	struct ls_model *m = L->m;
	struct slot_probe q = {m, proc, file, line, 0};
	uint64_t *slot =
		ls_hashmap__intern(&L->line_idx, line_hash(proc, file, line), same_line, &q);
	struct ls_mline *l;

	if (!slot)
		return NULL;
	if (*slot != LS_HASHMAP_EMPTY)
		return &m->lines[*slot];
	if (m->nlines == L->lcap) {
		struct ls_mline *v = ls_array_grow(m->lines, &L->lcap, m->nlines, sizeof(*v), 256);

		if (!v)
			return NULL;
		m->lines = v;
	}
	l = &m->lines[m->nlines];
	memset(l, 0, sizeof(*l));
	l->proc = proc;
	l->file = file;
	l->line = line;
	l->func = -1;
	l->peak_mem = -1;
	l->gpu_peak = -1;
	l->hits = -1;
	*slot = m->nlines++;
	m->files[file].used = true;
	return l;
}

struct ls_mfstat *lsm_fstat_slot(struct loader *L, int proc, int func)
{
	struct ls_model *m = L->m;
	uint64_t key = ((uint64_t)proc << 32) | (uint32_t)func, *slot;
	struct ls_mfstat *f;

	slot = ls_hashmap__slot(&L->fstat_idx, key, UINT64_MAX);
	if (!slot)
		return NULL;
	if (*slot != UINT64_MAX)
		return &m->fstats[*slot];
	if (m->nfstats == L->fcap) {
		struct ls_mfstat *v =
			ls_array_grow(m->fstats, &L->fcap, m->nfstats, sizeof(*v), 256);

		if (!v)
			return NULL;
		m->fstats = v;
	}
	f = &m->fstats[m->nfstats];
	memset(f, 0, sizeof(*f));
	f->proc = proc;
	f->func = func;
	f->calls = -1;
	*slot = m->nfstats++;
	return f;
}

static bool same_edge(const void *ctx, uint64_t idx)
{
	const struct slot_probe *q = ctx;
	const struct ls_medge *e = &q->m->edges[idx];

	return e->proc == q->proc && e->file == q->file && e->line == q->line &&
	       e->callee == q->callee;
}

static struct ls_medge *edge_slot(struct loader *L, int proc, int file, int line, int callee)
{
	struct ls_model *m = L->m;
	struct slot_probe q = {m, proc, file, line, callee};
	uint64_t key = line_hash(proc, file, line) ^ ls_hash64((uint32_t)callee + 1),
		 *slot = ls_hashmap__intern(&L->edge_idx, key, same_edge, &q);
	struct ls_medge *e;

	if (!slot)
		return NULL;
	if (*slot != LS_HASHMAP_EMPTY)
		return &m->edges[*slot];
	if (m->nedges == L->ecap) {
		struct ls_medge *v = ls_array_grow(m->edges, &L->ecap, m->nedges, sizeof(*v), 256);

		if (!v)
			return NULL;
		m->edges = v;
	}
	e = &m->edges[m->nedges];
	e->proc = proc;
	e->file = file;
	e->line = line;
	e->callee = callee;
	e->count = 0;
	*slot = m->nedges++;
	return e;
}

int lsm_func_at(struct loader *L, uint32_t id)
{
	uint64_t idx;

	return ls_hashmap__get(&L->func_idx, id, &idx) ? (int)idx : -1;
}

/* Index of the own frame: the innermost frame in project code, else the innermost frame. */
int lsm_own_frame(struct loader *L, const struct stack *s)
{
	for (int i = 0; i < s->depth; i++) {
		int f = lsm_func_at(L, s->frames[2 * i]);

		if (f >= 0 && ls_mfile__project(&L->m->files[L->m->funcs[f].file]))
			return i;
	}
	return 0;
}

/* Attributes one aggregated sample row (count samples, weight ns) of process proc. */
int lsm_add_row(struct loader *L, int proc, int64_t stack_id, int kind, int mode, int64_t count,
		int64_t weight)
{
	struct ls_model *m = L->m;
	struct ls_mproc *p = &m->procs[proc];
	const struct stack *s;
	struct ls_mline *l;
	int own = -1;

	bool cpu = kind == LS_CLASS_CPU;

	if (cpu) {
		p->samples += count;
		m->samples += count;
		m->cpu_split |= mode >= 0 && mode < 3;
	} else {
		m->wall = true;
		if (kind == LS_CLASS_GIL_WAIT)
			p->gil_ns += weight;
		else if (kind == LS_CLASS_RUNQ)
			p->runq_ns += weight;
		else
			p->wait_ns += weight;
		count = 0; /* off-CPU intervals are time, not samples */
	}
	p->weight_ns += weight;
	s = stack_id > 0 && (size_t)stack_id < L->nstacks ? &L->stacks[stack_id] : NULL;
	if (!s || !s->depth) {
		/* no Python frame: kept per process, not spread on lines */
		if (cpu)
			p->native_samples += count;
		else
			p->idle_wait_ns += weight;
		return 0;
	}
	own = lsm_own_frame(L, s);

	for (int i = 0; i < s->depth; i++) {
		int f = lsm_func_at(L, s->frames[2 * i]), line = (int)s->frames[2 * i + 1];
		bool seen_line = false, seen_func = false;

		if (f < 0)
			continue;
		/* recursion: count each line and function once per sample for total */
		for (int j = 0; j < i; j++) {
			int g = lsm_func_at(L, s->frames[2 * j]);

			if (g < 0)
				continue;
			if (m->funcs[g].file == m->funcs[f].file &&
			    (int)s->frames[2 * j + 1] == line)
				seen_line = true;
			if (g == f)
				seen_func = true;
		}
		l = lsm_line_slot(L, proc, m->funcs[f].file, line);
		if (!l)
			return -ENOMEM;
		if (i == 0) {
			l->self_count += count;
			l->self_ns += weight;
		}
		if (i == own) {
			struct ls_mfstat *fs = lsm_fstat_slot(L, proc, f);

			if (!fs)
				return -ENOMEM;
			l->own_count += count;
			l->own_ns += weight;
			fs->own_count += count;
			fs->own_ns += weight;
			if (!cpu) {
				int64_t *lw = kind == LS_CLASS_GIL_WAIT ? &l->gil_ns
					      : kind == LS_CLASS_RUNQ	? &l->runq_ns
									: &l->wait_ns;
				int64_t *fw = kind == LS_CLASS_GIL_WAIT ? &fs->gil_ns
					      : kind == LS_CLASS_RUNQ	? &fs->runq_ns
									: &fs->wait_ns;

				*lw += weight;
				*fw += weight;
			} else {
				fs->cpu_ns += weight;
				if (mode >= 0 && mode < 3)
					l->mode_ns[mode] += weight;
			}
		}
		if (!seen_line) {
			l->total_count += count;
			l->total_ns += weight;
		}
		if (!seen_func) {
			struct ls_mfstat *fs = lsm_fstat_slot(L, proc, f);

			if (!fs)
				return -ENOMEM;
			fs->total_count += count;
			fs->total_ns += weight;
		}
		/* which function a line belongs to: the one it ran in most */
		if (l->func != f && weight > l->best_func_ns) {
			l->func = f;
			l->best_func_ns = weight;
		} else if (l->func == f) {
			l->best_func_ns += weight;
		}
		if (i + 1 < s->depth) {
			int caller = lsm_func_at(L, s->frames[2 * (i + 1)]);
			struct ls_medge *e;

			if (caller < 0)
				continue;
			e = edge_slot(L, proc, m->funcs[caller].file,
				      (int)s->frames[2 * (i + 1) + 1], f);
			if (!e)
				return -ENOMEM;
			e->count += count;
		}
	}
	return 0;
}
