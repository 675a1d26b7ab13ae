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

/*
 * --memory: each growth event's change since the process's previous event is the Mem Change of
 * the line active in the thread that caused it; every reading raises the Peak Mem of its line.
 */
int lsm_load_rss(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	struct ls_mrss *cur = NULL;
	int64_t cur_proc = -1, last_event = -1;
	size_t cap = 0, rcap = 0;
	sqlite3_stmt *st;
	int err = lsm_prepare(L,
			      "SELECT process_id, t_ns, rss, stack_id, event FROM rss"
			      " ORDER BY process_id, t_ns",
			      &st);

	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t pid = sqlite3_column_int64(st, 0), rss = sqlite3_column_int64(st, 2);
		int64_t stack_id = sqlite3_column_int64(st, 3);
		bool event = sqlite3_column_int(st, 4);
		const struct stack *s = NULL;
		struct ls_mline *l = NULL;
		uint64_t proc;
		size_t i;

		if (!ls_hashmap__get(&L->proc_idx, pid, &proc))
			continue;
		if (pid != cur_proc) {
			struct ls_mrss *v = ls_array_grow(m->rss, &rcap, m->nrss, sizeof(*v), 256);

			if (!v) {
				err = -ENOMEM;
				break;
			}
			m->rss = v;
			cur = &m->rss[m->nrss++];
			memset(cur, 0, sizeof(*cur));
			cur->proc = proc;
			cur_proc = pid;
			cap = 0;
			last_event = -1;
		}
		if (cur->n == cap) {
			cap = cap ? cap * 2 : 256;
			if ((err = rss_grow(cur, cap)))
				break;
		}
		i = cur->n++;
		cur->t_ns[i] = sqlite3_column_int64(st, 1);
		cur->rss[i] = rss;
		cur->event[i] = event;
		cur->file[i] = -1;
		cur->line[i] = 0;
		if (rss > cur->peak)
			cur->peak = rss;
		if (stack_id > 0 && (size_t)stack_id < L->nstacks)
			s = &L->stacks[stack_id];
		if (s && s->depth) {
			int k = lsm_own_frame(L, s), f = lsm_func_at(L, s->frames[2 * k]);

			if (f >= 0) {
				cur->file[i] = m->funcs[f].file;
				cur->line[i] = (int)s->frames[2 * k + 1];
				l = lsm_line_slot(L, proc, cur->file[i], cur->line[i]);
				if (!l) {
					err = -ENOMEM;
					break;
				}
				if (l->func < 0)
					l->func = f;
			}
		}
		if (l && rss > l->peak_mem)
			l->peak_mem = rss;
		if (event) {
			/* the first event is the baseline: nothing before it was attributed */
			if (l && last_event >= 0)
				l->mem_change += rss - last_event;
			last_event = rss;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

int lsm_load_gpu(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	int err = lsm_prepare(L,
			      "SELECT process_id, stack_id, gpu_ns, api_ns, mem_peak FROM gpu"
			      " ORDER BY process_id, stack_id",
			      &st);

	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int64_t stack_id = sqlite3_column_int64(st, 1), gpu = sqlite3_column_int64(st, 2);
		int64_t api = sqlite3_column_int64(st, 3), peak = sqlite3_column_int64(st, 4);
		const struct stack *s = NULL;
		struct ls_mproc *p;
		uint64_t proc;

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc))
			continue;
		p = &m->procs[proc];
		m->gpu = true;
		p->gpu_ns += gpu;
		p->driver_ns += api;
		if (peak > p->gpu_peak)
			p->gpu_peak = peak;
		if (stack_id == 0xffffffff) {
			p->gpu_unseen_ns += gpu;
			continue;
		}
		if (stack_id > 0 && (size_t)stack_id < L->nstacks)
			s = &L->stacks[stack_id];
		if (!s || !s->depth) {
			p->gpu_nopy_ns += gpu;
			continue;
		}
		{
			int k = lsm_own_frame(L, s), f = lsm_func_at(L, s->frames[2 * k]);
			struct ls_mline *l;

			if (f < 0)
				continue;
			l = lsm_line_slot(L, proc, m->funcs[f].file, (int)s->frames[2 * k + 1]);
			if (!l) {
				err = -ENOMEM;
				break;
			}
			if (l->func < 0)
				l->func = f;
			l->gpu_ns += gpu;
			l->driver_ns += api;
			if (peak > l->gpu_peak)
				l->gpu_peak = peak;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	if (err)
		return err;
	err = lsm_prepare(
		L,
		"SELECT process_id, hello, status, message, nvml_note, launches, dropped, lost"
		" FROM gpu_processes",
		&st);
	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		struct ls_mproc *p;
		uint64_t proc;

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc))
			continue;
		p = &m->procs[proc];
		p->gpu_hello = sqlite3_column_int(st, 1);
		p->gpu_status = sqlite3_column_int(st, 2);
		p->gpu_message = lsm_col_dup(st, 3);
		p->gpu_nvml_note = lsm_col_dup(st, 4);
		p->gpu_launches = sqlite3_column_int64(st, 5);
		p->gpu_dropped = sqlite3_column_int64(st, 6);
		p->gpu_lost = sqlite3_column_int64(st, 7);
		if (p->gpu_hello)
			m->gpu = true;
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	err = lsm_prepare(
		L,
		"SELECT process_id, ordinal, name, mem_total, driver, cuda_driver, cc, uuid"
		" FROM gpu_devices ORDER BY process_id, ordinal",
		&st);
	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		struct ls_mgpu_dev *d,
			*v = ls_array_grow(m->gpu_devs, &cap, m->ngpu_devs, sizeof(*v), 256);
		uint64_t proc;

		if (!v)
			break;
		m->gpu_devs = v;
		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc))
			continue;
		d = &m->gpu_devs[m->ngpu_devs++];
		d->proc = proc;
		d->ordinal = sqlite3_column_int64(st, 1);
		d->name = lsm_col_dup(st, 2);
		d->mem_total = sqlite3_column_int64(st, 3);
		d->driver = lsm_col_dup(st, 4);
		d->cuda_driver = sqlite3_column_int64(st, 5);
		d->cc = sqlite3_column_int64(st, 6);
		d->uuid = lsm_col_dup(st, 7);
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return 0;
}

/*
 * --trace: hits and the tracer's own/inclusive time per line, calls per function. With tracing
 * alone the traced times are the report's Time and Total; with sampling too (mixed collection)
 * the sampled times stay, and hits complete them.
 */
int lsm_load_trace(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	int err = lsm_prepare(L,
			      "SELECT process_id, function_id, line, sum(hits), sum(own_ns),"
			      " sum(total_ns) FROM trace GROUP BY process_id, function_id, line",
			      &st);

	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		int f = lsm_func_at(L, sqlite3_column_int64(st, 1)),
		    line = sqlite3_column_int(st, 2);
		int64_t hits = sqlite3_column_int64(st, 3), own = sqlite3_column_int64(st, 4);
		int64_t total = sqlite3_column_int64(st, 5);
		struct ls_mfstat *fs;
		struct ls_mline *l;
		uint64_t proc;

		if (f < 0 || !ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc))
			continue;
		m->traced = true;
		fs = lsm_fstat_slot(L, proc, f);
		if (!fs) {
			err = -ENOMEM;
			break;
		}
		if (line == -1) { /* LS_TRACE_CALLS */
			fs->calls = (fs->calls < 0 ? 0 : fs->calls) + hits;
			fs->trace_total_ns += total;
			continue;
		}
		l = lsm_line_slot(L, proc, m->funcs[f].file, lsm_line_of(L, f, line));
		if (!l) {
			err = -ENOMEM;
			break;
		}
		if (l->func < 0)
			l->func = f;
		l->hits = (l->hits < 0 ? 0 : l->hits) + hits;
		l->trace_own_ns += own;
		l->trace_total_ns += total;
		fs->trace_own_ns += own;
		if (fs->calls < 0)
			fs->calls = 0;
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
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

/* Each process's images in order (the execs table); a row of an unknown process is skipped. */
int lsm_load_execs(struct loader *L)
{
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	int rc, err = lsm_prepare(L,
				  "SELECT process_id, how, start_ns, end_ns, comm, argv, exe, python,"
				  " python_build, note, samples, cpu_ns, wait_ns, unresolved,"
				  " first_line_ns FROM execs ORDER BY process_id, seq",
				  &st);

	if (err)
		return err;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		uint64_t idx;
		struct ls_mproc *p;
		struct ls_mexec *v, *x;

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &idx) ||
		    idx >= m->nprocs)
			continue;
		p = &m->procs[idx];
		/* grown one at a time: a process has a handful */
		v = realloc(p->execs, (p->nexecs + 1) * sizeof(*v));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		p->execs = v;
		x = &p->execs[p->nexecs++];
		x->how = lsm_col_dup(st, 1);
		x->start_ns = sqlite3_column_int64(st, 2);
		x->end_ns = lsm_col_id(st, 3);
		x->comm = lsm_col_dup(st, 4);
		x->argv = lsm_col_dup(st, 5);
		x->exe = lsm_col_dup(st, 6);
		x->python = lsm_col_dup(st, 7);
		x->python_build = lsm_col_dup(st, 8);
		x->note = lsm_col_dup(st, 9);
		x->samples = sqlite3_column_int64(st, 10);
		x->cpu_ns = sqlite3_column_int64(st, 11);
		x->wait_ns = sqlite3_column_int64(st, 12);
		x->unresolved = sqlite3_column_int64(st, 13);
		x->first_line_ns = lsm_col_id(st, 14);
	}
	if (!err && rc != SQLITE_DONE)
		err = -EIO;
	sqlite3_finalize(st);
	return err;
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

/*
 * The recording's own cost (stats bpf_runs:PROG, bpf_run_ns:PROG, collector_cpu_ns). Names are
 * program names: kept only when they look like one; values range-checked.
 */
int lsm_load_cost(struct loader *L)
{
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	int rc, err = lsm_prepare(L,
				  "SELECT substr(r.key, 10), r.value, n.value FROM stats r"
				  " JOIN stats n ON n.key = 'bpf_run_ns:' || substr(r.key, 10)"
				  " WHERE r.key LIKE 'bpf_runs:%' ORDER BY n.value DESC",
				  &st);

	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		const char *name = (const char *)sqlite3_column_text(st, 0);
		int64_t runs = sqlite3_column_int64(st, 1), ns = sqlite3_column_int64(st, 2);
		struct ls_mcost_prog *v;
		bool ok = name && *name && strlen(name) < 64;

		for (const char *c = name; ok && *c; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
		if (!ok || runs < 0 || ns < 0) {
			m->damaged_rows++;
			continue;
		}
		v = ls_array_grow(m->cost_progs, &cap, m->ncost_progs, sizeof(*v), 16);
		if (!v || !(v[m->ncost_progs].name = strdup(name))) {
			err = -ENOMEM;
			break;
		}
		m->cost_progs = v;
		v[m->ncost_progs].runs = runs;
		v[m->ncost_progs].ns = ns;
		m->ncost_progs++;
	}
	sqlite3_finalize(st);
	return err ? err : rc;
}
