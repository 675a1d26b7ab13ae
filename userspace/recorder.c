// SPDX-License-Identifier: MIT
/*
 * The record consumer: records from the ring buffer dispatched to their handlers (processes in
 * recorder_procs.c, samples in recorder_samples.c), the recorder's life, and the GPU and trace
 * consumers it feeds. Samples are resolved as they arrive, while the process is alive and its
 * code objects readable; everything is then keyed by ids that survive the process, and written
 * by recorder_flush.c.
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
	ls_linetables_init(&r->linetabs);
	ls_sources_init(&r->sources);
	ls_notebooks_init(&r->notebooks);
	ls_images_init(&r->images);
	ls_cgpaths_init(&r->cgpaths);
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

void ls_recorder__free(struct ls_recorder *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nprocs; i++) {
		struct rproc *p = r->procs[i];

		lsr_proc_drop_python(p, false);
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
		lsr_view_forget(p);
		free(p);
	}
	free(r->procs);
	for (unsigned i = 0; i < r->nlibs; i++)
		free(r->libs[i]);
	for (size_t i = 1; i < r->nfuncs; i++)
		free(r->funcs[i].qualname);
	free(r->funcs);
	free(r->aggs);
	free(r->parked);
	free(r->threads);
	free(r->readings);
	free(r->ticks);
	ls_gpurec__free(r->gpu);
	ls_tracerec__free(r->trace);
	ls_sparkrec__free(r->spark);
	ls_hashmap_release(&r->by_pid);
	ls_hashmap_release(&r->func_index);
	ls_hashmap_release(&r->agg_index);
	ls_kstacks_release(&r->kstacks);
	ls_stacks_release(&r->stacks);
	ls_linetables_release(&r->linetabs); /* after the processes' code caches */
	ls_sources_release(&r->sources);
	ls_notebooks_release(&r->notebooks);
	ls_images_release(&r->images);
	ls_cgpaths_release(&r->cgpaths);
	free(r->undecided);
	free(r);
}

int ls_recorder__handle(void *ctx, void *data, size_t len)
{
	struct ls_recorder *r = ctx;
	const __u32 *type = data;

	r->st.ringbuf_bytes += len + 8; /* BPF_RINGBUF_HDR_SZ */
	r->records++;
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
		lsr_handle_sample(r, data, len);
		break;
	case LS_REC_CODE:
		lsr_handle_code(r, data, len);
		break;
	case LS_REC_TICK:
		if (len < sizeof(struct ls_tick)) {
			r->st.bad_records++;
			break;
		}
		lsr_handle_tick(r, data);
		break;
	case LS_REC_TRACE:
		if (r->trace && len >= 8) {
			const struct ls_sample *h = data; /* pid follows type in every record */
			struct rproc *p = lsr_proc_get(r, h->pid);

			const uint32_t *kind =
				(const void *)((const struct ls_trace_rec *)data + 1);

			if (p && len >= sizeof(struct ls_trace_rec) + 4 && *kind == LS_TM_CELL) {
				const struct ls_trace_rec *t = data;

				/* refused (malformed, out of order, over the bound) or no memory */
				if (t->size > len - sizeof(*t) ||
				    ls_notebooks__announced(&r->notebooks, p->id, t + 1, t->size))
					r->st.bad_records++;
			} else if (p) {
				ls_tracerec__record(r->trace, p->id, data, len);
				p->dirty = true; /* its tracing state may have changed */
			}
		}
		break;
	case LS_REC_GPU:
		if (r->gpu) {
			const struct ls_sample *h = data; /* pid follows type in every record */
			struct rproc *p = len >= 8 ? lsr_proc_get(r, h->pid) : NULL;

			ls_gpurec__record(r->gpu, p ? p->id : -1, data, len);
		}
		break;
	case LS_REC_EXEC:
		if (len < sizeof(struct ls_exec_event)) {
			r->st.bad_records++;
			break;
		}
		lsr_handle_exec(r, data);
		break;
	case LS_REC_PROC:
		if (len < sizeof(struct ls_proc_event)) {
			r->st.bad_records++;
			break;
		}
		lsr_handle_proc_event(r, data);
		break;
	default:
		r->st.bad_records++;
	}
	return 0;
}

void ls_recorder__stats(const struct ls_recorder *r, struct ls_recorder_stats *st)
{
	*st = r->st;
	if (r->gpu)
		st->timeline_lost += ls_gpurec__spans_lost(r->gpu);
}

void ls_recorder__interval_base(const struct ls_recorder *r, struct ls_recorder_stats *st)
{
	*st = r->st_base;
}

void ls_recorder__enable_timeline(struct ls_recorder *r, uint64_t min_wait_ns)
{
	r->timeline = true;
	r->tl_min_wait_ns = min_wait_ns;
	if (r->gpu)
		ls_gpurec__enable_timeline(r->gpu, r->t0);
}

int ls_recorder__enable_spark(struct ls_recorder *r, const char *const *paths, int n,
			      int64_t since_s, const struct ls_creds *creds)
{
	return r->spark ? 0 : ls_sparkrec__new(paths, n, since_s, creds, &r->spark);
}

int ls_recorder__enable_trace(struct ls_recorder *r)
{
	return r->trace ? 0 : ls_tracerec__new(lsr_trace_name, r, &r->trace);
}

const struct ls_pyinfo *ls_recorder__python(struct ls_recorder *r, pid_t pid)
{
	struct rproc *p = lsr_proc_get(r, pid);

	return p && p->py_state == PY_READY ? &p->py : NULL;
}

void ls_recorder__trace_note(struct ls_recorder *r, pid_t pid, const char *note)
{
	struct rproc *p = lsr_proc_get(r, pid);

	if (p && r->trace) {
		ls_tracerec__set_state(r->trace, p->id, note);
		p->dirty = true;
	}
}

void ls_recorder__native_count(void *ctx, const struct ls_native_key *k,
			       const struct ls_native_val *v, const char *file, const char *func)
{
	struct ls_recorder *r = ctx;
	struct rproc *p = lsr_proc_any(r, k->pid);
	int64_t fid, func_id;

	if (!p || !r->trace || !file[0])
		return;
	fid = lsr_file_of(r, p, file, 0);
	/* the probes name functions by co_name only: no qualified name, no first line */
	func_id = fid < 0 ? fid : lsr_func_intern(r, fid, func, 0);
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
	int err = r->gpu ? 0 : ls_gpurec__new(&r->gpu);

	if (!err)
		ls_gpurec__set_stacks(r->gpu, lsr_gpu_stack, r);
	return err;
}

void ls_recorder__finish(struct ls_recorder *r)
{
	/* threads still running: their CPU time so far */
	for (size_t k = 0; k < r->nthreads; k++) {
		uint64_t ns;

		if (lsr_thread_cpu_now(r, &r->threads[k], &ns))
			lsr_thread_cpu_final(&r->threads[k], ns);
	}
	if (r->gpu)
		ls_gpurec__finish(r->gpu);
	r->finished = true;
}
