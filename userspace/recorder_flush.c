// SPDX-License-Identifier: MIT
/*
 * Flushing the recorder: everything new or changed since the last flush written in one
 * transaction; a failed one is undone in memory so the next flush writes it all again.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "gpurec.h"
#include "log.h"
#include "recorder_int.h"
#include "sparkrec.h"
#include "tracerec.h"

const char *lsr_py_note(const struct rproc *p)
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
		lsr_image_sync(p);
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
			.unresolved = lsr_image_unresolved(x),
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

/*
 * On-CPU samples without lines for want of a known interpreter, over every image so far; and
 * those of images whose interpreter was known before it started (*early: no line to miss).
 */
static uint64_t unresolved_samples(const struct ls_recorder *r, uint64_t *early)
{
	uint64_t n = 0;

	*early = 0;
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t k = 0; k < r->procs[i]->nexecs; k++) {
			const struct rexec *x = &r->procs[i]->execs[k];

			n += lsr_image_unresolved(x);
			*early += lsr_image_before_start(x);
		}
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
			.note = lsr_py_note(p),
			.parent_wait_ns = p->parent_wait_ns,
			.waiter_stack = p->waiter_stack,
			.waiter_tid = p->waiter_tid,
			.trace = r->trace ? ls_tracerec__state(r->trace, p->id) : NULL,
			.cgroup = p->cgroup,
			.cgroup_id = p->cgroup_id,
			.job = &p->job,
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
		{"before_start", r->st.before_start},
		{"received_samples", r->st.samples},
		{"images_known", r->st.images_known},
		{"images_none", r->st.images_none},
		{"images_checked", r->st.images_checked},
		{"exec_views", r->st.exec_views},
		{"views_by_key", r->st.views_by_key},
		{"views_changed", r->st.views_changed},
		{"entries_healed", r->st.healed},
		{"after_exit", r->st.after_exit},
		{"ringbuf_bytes", r->st.ringbuf_bytes},
		{"stacks_reused", r->st.stacks_reused},
	};
	const struct ls_recorder_stats *b = &r->st_base;
	/* counted since the interval began: the whole run unless --rotate cut it */
	const uint64_t since[] = {
		b->unresolved,
		b->bad_records,
		0, /* unresolved_samples: of the images' counts */
		0, /* before_start: the same */
		b->samples,
		b->images_known,
		b->images_none,
		b->images_checked,
		b->exec_views,
		b->views_by_key,
		b->views_changed,
		b->healed,
		b->after_exit,
		b->ringbuf_bytes,
		b->stacks_reused,
	};
	int err = 0;

	for (size_t i = 0; !err && i < sizeof(stats) / sizeof(stats[0]); i++)
		err = ls_store__put_stat(r->store, stats[i].key,
					 (int64_t)(stats[i].value - since[i]));
	if (!err && r->trace) {
		struct ls_tracerec_stats ts;

		/* python-usdt batches: a gap in a thread's sequence numbers is a batch lost */
		ls_tracerec__stats(r->trace, &ts);
		err = ls_store__put_stat(r->store, "trace_batches", (int64_t)ts.batches);
		if (!err)
			err = ls_store__put_stat(r->store, "trace_lost_batches",
						 (int64_t)ts.lost_batches);
	}
	if (!err && r->spark) {
		struct ls_sparkrec_stats ss;

		ls_sparkrec__stats(r->spark, &ss);
		err = ls_store__put_stat(r->store, "spark_bytes", (int64_t)ss.bytes);
		if (!err)
			err = ls_store__put_stat(r->store, "spark_events", (int64_t)ss.events);
		if (!err)
			err = ls_store__put_stat(r->store, "spark_skipped", (int64_t)ss.skipped);
		if (!err)
			err = ls_store__put_stat(r->store, "spark_dropped", (int64_t)ss.dropped);
	}
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
	ls_notebooks__unflush(&r->notebooks);
	for (size_t i = 0; i < r->notebooks.ncells; i++) {
		int64_t fid = r->notebooks.cells[i].file_id;

		if ((size_t)fid < r->sources.files_flushed)
			r->sources.files[fid].dirty = true;
	}
	r->stacks.flushed = marks[4];
	for (size_t i = 0; i < r->nprocs; i++) {
		r->procs[i]->dirty = true;
		for (size_t k = 0; k < r->procs[i]->nexecs; k++)
			r->procs[i]->execs[k].dirty = true;
	}
	for (size_t i = 0; i < r->nthreads; i++) {
		if (r->threads[i].cpu == TCPU_STORED)
			r->threads[i].cpu = TCPU_DIRTY;
		r->threads[i].renamed = i < r->threads_flushed; /* a rename may have been undone */
	}
	for (size_t i = 0; i < r->naggs; i++)
		r->aggs[i].dirty = true;
	if (r->gpu)
		ls_gpurec__unflush(r->gpu);
	if (r->trace)
		ls_tracerec__unflush(r->trace);
}

void ls_recorder__cut(struct ls_recorder *r)
{
	for (size_t k = 0; k < r->nthreads; k++) {
		struct thread_row *t = &r->threads[k];
		uint64_t ns;

		t->reopen = false;
		if (!lsr_thread_cpu_now(r, t, &ns))
			continue;
		t->cut_from = t->base_ns;
		lsr_thread_cpu_final(t, ns);
		t->reopen = t->cpu == TCPU_DIRTY;
		t->base_ns = ns; /* of the next interval, once this one's is stored */
	}
}

void ls_recorder__uncut(struct ls_recorder *r)
{
	for (size_t k = 0; k < r->nthreads; k++) {
		struct thread_row *t = &r->threads[k];

		if (!t->reopen)
			continue;
		t->reopen = false;
		t->cpu = TCPU_OPEN;
		t->base_ns = t->cut_from;
		t->cpu_ns = 0;
	}
}

void ls_recorder__rotate(struct ls_recorder *r, struct ls_store *store)
{
	static const size_t first[] = {0, 1, 1, 1, 1}; /* what ls_recorder__new() starts from */

	r->store = store;
	/* the new profile holds what happens from now: counts start again at zero */
	for (size_t i = 0; i < r->naggs; i++) {
		r->aggs[i].count = r->aggs[i].weight_ns = 0;
		r->aggs[i].dirty = false;
	}
	for (size_t i = 0; i < r->nprocs; i++)
		for (size_t k = 0; k < r->procs[i]->nexecs; k++) {
			struct rexec *x = &r->procs[i]->execs[k];

			x->samples = x->cpu_ns = x->wait_ns = x->nopy = 0;
		}
	for (size_t k = 0; k < r->nthreads; k++) {
		struct thread_row *t = &r->threads[k];

		if (t->reopen)
			t->cpu = TCPU_OPEN;
		else if (t->cpu == TCPU_STORED || t->cpu == TCPU_DIRTY)
			t->cpu = TCPU_DIRTY; /* ended before: no CPU in this interval */
		t->reopen = false;
		t->cpu_ns = 0;
	}
	ls_recorder__stats(r, &r->st_base);
	/* and every row it refers to is written into it again (unflush() marks them all) */
	unflush(r, first);
	for (size_t i = 0; i < r->naggs; i++)
		r->aggs[i].dirty = false;
	if (r->trace)
		ls_tracerec__rotate(r->trace);
	if (r->gpu && ls_gpurec__rotate(r->gpu))
		ls_warn(0,
			"--rotate: out of memory: the GPU counters of the next profile count from "
			"the run's start");
}

/* Notebooks and cells that changed; after the files they name */
static int flush_notebooks(struct ls_recorder *r)
{
	struct ls_notebooks *n = &r->notebooks;
	int err = 0;

	for (size_t i = 0; !err && i < n->n; i++) {
		struct ls_notebook *nb = &n->nbs[i];
		struct ls_store_notebook row = {
			.id = (int64_t)i + 1,
			.proc_id = nb->proc_id,
			.pid = nb->pid,
			.path = nb->path,
			.history = nb->history,
			.note = nb->note,
			.parent_id = nb->parent ? (int64_t)nb->parent : -1,
			.parent_file_id = nb->parent_file,
			.parent_line = nb->parent_line,
		};

		if (nb->dirty && !(err = ls_store__put_notebook(r->store, &row)))
			nb->dirty = false;
	}
	for (size_t i = 0; !err && i < n->ncells; i++) {
		struct ls_nbcell *c = &n->cells[i];
		struct ls_store_cell row = {
			.file_id = c->file_id,
			.notebook_id = (int64_t)c->notebook + 1,
			.seq = c->seq,
			.number = c->number,
			.how = c->how,
			.hash = c->hash,
			.key = c->key,
		};

		if (c->dirty && !(err = ls_store__put_cell(r->store, &row)))
			c->dirty = false;
	}
	return err;
}

int ls_recorder__flush(struct ls_recorder *r)
{
	struct ls_sources *s = &r->sources;
	const size_t marks[] = {r->threads_flushed, s->srcs_flushed, s->files_flushed,
				r->funcs_flushed, r->stacks.flushed};
	int err;

	/* cells not found yet may be in the history database by now */
	err = ls_notebooks__retry(&r->notebooks, s);
	if (!err && r->spark)
		err = ls_sparkrec__poll(r->spark, r->finished);
	if (err)
		return err;
	err = ls_store__begin(r->store);
	if (err)
		return err;
	err = flush_procs(r);
	for (; !err && r->threads_flushed < r->nthreads; r->threads_flushed++) {
		struct thread_row *t = &r->threads[r->threads_flushed];
		bool ended = t->cpu == TCPU_DIRTY; /* most, in a job of short-lived threads */

		err = ls_store__put_thread(r->store, t->proc_id, t->tid, t->name,
					   ended ? (int64_t)t->cpu_ns : -1);
		if (!err && ended)
			t->cpu = TCPU_STORED;
	}
	for (size_t i = 0; !err && i < marks[0]; i++) {
		struct thread_row *t = &r->threads[i];

		if (t->renamed &&
		    !(err = ls_store__put_thread(r->store, t->proc_id, t->tid, t->name, -1)))
			t->renamed = false;
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
	for (size_t i = 1; !err && i < s->files_flushed; i++) {
		struct ls_file *f = &s->files[i];

		/* a notebook cell whose text was found after it was written */
		if (f->dirty && !(err = ls_store__put_file(r->store, i, f->path, f->source_id,
							   f->kind, f->unavailable)))
			f->dirty = false;
	}
	for (; !err && s->files_flushed < s->nfiles; s->files_flushed++) {
		const struct ls_file *f = &s->files[s->files_flushed];

		err = ls_store__put_file(r->store, s->files_flushed, f->path, f->source_id, f->kind,
					 f->unavailable);
	}
	if (!err)
		err = flush_notebooks(r);
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
	if (!err && r->spark)
		err = ls_sparkrec__flush(r->spark, r->store);
	for (size_t i = 0; !err && i < r->nreadings; i++)
		err = ls_store__put_rss(r->store, &r->readings[i]);
	for (size_t i = 0; !err && i < r->nticks; i++)
		err = ls_store__put_tick(r->store, &r->ticks[i]);
	if (!err) {
		r->st.unresolved_samples = unresolved_samples(r, &r->st.before_start);
		err = put_stats(r);
	}
	if (!err)
		err = ls_store__commit(r->store);
	if (!err) {
		/* appended rows: forgotten once they are in the file, kept for the next try if not
		 */
		r->nreadings = 0;
		r->nticks = 0;
		if (r->gpu)
			ls_gpurec__committed(r->gpu);
		if (r->spark)
			ls_sparkrec__committed(r->spark, true);
	} else {
		/* keep the partial work out of the file, and all of it for the next flush */
		ls_store__rollback(r->store);
		unflush(r, marks);
	}
	return err;
}
