// SPDX-License-Identifier: MIT
/*
 * GPU attribution in the collector. The join hands back contributions tagged with the cookie
 * given at launch: (process row << 32) | stack id, so device time lands on the stack that
 * launched the work, in the process that launched it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "gpu_agg.h"
#include "gpurec.h"
#include "hashmap.h"
#include "log.h"

/* in a launch's cookie: bit 31 of the stack id, which stays below LS_PROFILE_MAX_STACKS */
#define LS_GPUREC_FOR_WAITER (1ull << 31)

struct gpu_line {
	int64_t proc_id, stack_id;
	struct ls_store_gpu v;
	bool dirty;
};

/* --rotate: a process's counters when the interval began */
struct proc_base {
	int64_t dropped, lost, launches, gpu_ns, api_ns;
};

struct ls_gpurec {
	struct ls_gpu_agg *agg;
	struct proc_base *base; /* by the join's process index; nbase of them */
	uint32_t nbase;
	struct gpu_line *lines;
	size_t n, cap;
	struct ls_hashmap index;    /* cookie -> index */
	struct ls_hashmap pid_proc; /* host pid -> process row */
	/* --timeline: device work as it ran, not yet flushed (names owned) */
	bool timeline;
	uint64_t t0; /* the run's start, on the clock of start_mono */
	struct ls_store_gpu_span *spans;
	size_t nspans, scap;
	uint64_t spans_lost; /* no memory */
	ls_gpurec_stack_fn stack_fn;
	void *stack_ctx;
};

/* --timeline: the span of one contribution of device work (not the API's, nor a timeless one) */
static void add_span(struct ls_gpurec *g, const struct ls_gpu_attr *a, uint64_t cookie)
{
	struct ls_store_gpu_span *v;
	const char *name;

	if (!g->timeline || (a->flags & (LS_GPU_ATTR_API | LS_GPU_ATTR_NO_TIMING)) ||
	    !a->start_mono || !a->gpu_ns)
		return;
	name = a->name_id ? ls_gpu_agg__name(g->agg, a->pid, a->name_id) : NULL;
	v = ls_array_grow(g->spans, &g->scap, g->nspans, sizeof(*v), 256);
	if (!v || (name && !(name = strdup(name)))) {
		g->spans_lost++;
		return;
	}
	g->spans = v;
	g->spans[g->nspans++] = (struct ls_store_gpu_span){
		.proc_id = (int64_t)(cookie >> 32),
		.stack_id = (int64_t)(cookie & 0xffffffff),
		.device = (int)a->device,
		.stream = (int)a->stream,
		.kind = a->kind,
		.t_ns = a->start_mono > g->t0 ? (int64_t)(a->start_mono - g->t0) : 0,
		/* a sampled launch stands for weight of them: the span is the one that ran */
		.dur_ns = (int64_t)(a->gpu_ns / (a->weight ?: 1)),
		.count = a->count / (a->weight ?: 1) ?: 1,
		.bytes = (int64_t)(a->bytes / (a->weight ?: 1)),
		.name = name,
		.tid = a->tid,
	};
}

static struct gpu_line *line_of(struct ls_gpurec *g, uint64_t cookie)
{
	uint64_t *slot = ls_hashmap__slot(&g->index, cookie, UINT64_MAX);
	struct gpu_line *l, *v;

	if (!slot)
		return NULL;
	if (*slot != UINT64_MAX)
		return &g->lines[*slot];
	v = ls_array_grow(g->lines, &g->cap, g->n, sizeof(*v), 256);
	if (!v)
		return NULL;
	g->lines = v;
	l = &g->lines[g->n];
	memset(l, 0, sizeof(*l));
	l->proc_id = (int64_t)(cookie >> 32);
	l->stack_id = (int64_t)(cookie & 0xffffffff);
	*slot = g->n++;
	return l;
}

static void on_attr(void *ctx, const struct ls_gpu_attr *a)
{
	struct ls_gpurec *g = ctx;
	uint64_t cookie = a->cookie, proc;
	struct gpu_line *l;

	/* launched by a native thread for the waiting thread whose stack this is */
	bool for_waiter =
		(uint32_t)cookie != LS_GPU_STACK_UNSEEN && (cookie & LS_GPUREC_FOR_WAITER);

	cookie &= ~LS_GPUREC_FOR_WAITER;
	if (a->flags & LS_GPU_ATTR_NO_LAUNCH) {
		/* the launch was never seen (attached later, sample lost): the process's own entry
		 */
		if (!ls_hashmap__get(&g->pid_proc, a->pid, &proc))
			return;
		cookie = (proc << 32) | LS_GPU_STACK_UNSEEN;
	}
	add_span(g, a, cookie);
	l = line_of(g, cookie);
	if (!l)
		return;
	l->v.gpu_ns += a->gpu_ns;
	l->v.api_ns += a->api_ns;
	if (a->mem_peak > (uint64_t)l->v.mem_peak)
		l->v.mem_peak = a->mem_peak;
	if (!(a->flags & LS_GPU_ATTR_API)) {
		if (a->kind == LS_GPU_ACT_KERNEL)
			l->v.kernels += a->count;
		if (a->flags & LS_GPU_ATTR_NCCL)
			l->v.nccl_ns += a->gpu_ns;
	}
	if (for_waiter)
		l->v.native_ns += a->gpu_ns;
	if (a->flags & LS_GPU_ATTR_SAMPLED)
		l->v.sampled = true;
	l->dirty = true;
}

/* The join's cookie of frames the library walked: the process row and the caller's stack id. */
static __u64 walked_cookie(void *ctx, __u32 pid, __u32 tid, const struct ls_frame *frames, __u32 n)
{
	struct ls_gpurec *g = ctx;
	uint64_t proc;
	int64_t stack;

	(void)tid;
	if (!ls_hashmap__get(&g->pid_proc, pid, &proc))
		return 0;
	stack = g->stack_fn ? g->stack_fn(g->stack_ctx, pid, frames, n) : 0;
	return (proc << 32) | (uint32_t)(stack > 0 ? stack : 0);
}

void ls_gpurec__set_stacks(struct ls_gpurec *g, ls_gpurec_stack_fn fn, void *ctx)
{
	g->stack_fn = fn;
	g->stack_ctx = ctx;
}

int ls_gpurec__new(struct ls_gpurec **out)
{
	struct ls_gpu_agg_opts opts = {.sz = sizeof(opts), .stack = walked_cookie};
	struct ls_gpurec *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	opts.stack_ctx = g;
	ls_hashmap_init(&g->index);
	ls_hashmap_init(&g->pid_proc);
	err = ls_gpu_agg__new(&opts, on_attr, g, &g->agg);
	if (err) {
		free(g);
		return err;
	}
	*out = g;
	return 0;
}

void ls_gpurec__free(struct ls_gpurec *g)
{
	if (!g)
		return;
	ls_gpu_agg__free(g->agg);
	free(g->base);
	free(g->lines);
	ls_gpurec__committed(g); /* frees the spans' names */
	free(g->spans);
	ls_hashmap_release(&g->index);
	ls_hashmap_release(&g->pid_proc);
	free(g);
}

void ls_gpurec__enable_timeline(struct ls_gpurec *g, uint64_t t0)
{
	g->timeline = true;
	g->t0 = t0;
}

uint64_t ls_gpurec__spans_lost(const struct ls_gpurec *g)
{
	return g->spans_lost;
}

void ls_gpurec__launch(struct ls_gpurec *g, int64_t proc_id, uint32_t pid, uint32_t tid,
		       uint64_t ts, uint64_t aux, uint64_t api_ns, int64_t stack_id,
		       bool for_waiter)
{
	ls_hashmap__set(&g->pid_proc, pid, proc_id);
	ls_gpu_agg__launch(g->agg, pid, tid, ts, aux, api_ns,
			   ((uint64_t)proc_id << 32) | (uint32_t)stack_id |
				   (for_waiter ? LS_GPUREC_FOR_WAITER : 0));
}

void ls_gpurec__record(struct ls_gpurec *g, int64_t proc_id, const void *data, size_t len)
{
	const struct ls_gpu_hdr *h = data;

	if (len >= sizeof(*h) && proc_id > 0)
		ls_hashmap__set(&g->pid_proc, h->pid, proc_id);
	ls_gpu_agg__record(g->agg, data, len);
}

void ls_gpurec__exit(struct ls_gpurec *g, uint32_t pid)
{
	ls_gpu_agg__finish_pid(g->agg, pid);
}

void ls_gpurec__finish(struct ls_gpurec *g)
{
	ls_gpu_agg__finish(g->agg);
}

static void proc_counts(const struct ls_gpu_proc_info *pi, int64_t *dropped, int64_t *lost,
			int64_t *launches, int64_t *gpu_ns, int64_t *api_ns)
{
	*dropped = pi->status ? (int64_t)pi->status->dropped : 0;
	*lost = (int64_t)pi->lost_records;
	*launches = (int64_t)pi->launches;
	*gpu_ns = (int64_t)pi->gpu_ns;
	*api_ns = (int64_t)pi->api_ns;
}

static int flush_procs(struct ls_gpurec *g, struct ls_store *store)
{
	uint32_t n = ls_gpu_agg__proc_count(g->agg);

	for (uint32_t i = 0; i < n; i++) {
		struct ls_gpu_proc_info pi;
		struct ls_store_gpu_proc row = {};
		uint64_t proc;
		int err;

		if (ls_gpu_agg__proc_info(g->agg, i, &pi) ||
		    !ls_hashmap__get(&g->pid_proc, pi.pid, &proc))
			continue;
		row.proc_id = proc;
		row.hello = pi.hello != NULL;
		row.status = pi.hello ? pi.hello->status : 0;
		row.message = pi.hello ? pi.hello->message : NULL;
		row.cupti_version = pi.hello ? pi.hello->cupti_version : 0;
		row.nvml_note = pi.status ? pi.status->nvml_note : NULL;
		row.peak_alloc = pi.peak_alloc;
		row.peak_nvml = pi.peak_nvml;
		proc_counts(&pi, &row.dropped, &row.lost, &row.launches, &row.gpu_ns, &row.api_ns);
		if (i < g->nbase) {
			const struct proc_base *b = &g->base[i];

			row.dropped -= b->dropped;
			row.lost -= b->lost;
			row.launches -= b->launches;
			row.gpu_ns -= b->gpu_ns;
			row.api_ns -= b->api_ns;
		}
		err = ls_store__put_gpu_proc(store, &row);
		for (uint32_t d = 0; !err && d < pi.ndevices; d++) {
			const struct ls_gpu_device *dev = &pi.devices[d];
			struct ls_store_gpu_device drow = {
				.proc_id = proc,
				.ordinal = dev->ordinal,
				.name = dev->name,
				.mem_total = dev->mem_total,
				.driver = dev->driver,
				.cuda_driver = dev->cuda_driver,
				.cc = dev->cc,
				.uuid = dev->uuid,
			};

			err = ls_store__put_gpu_device(store, &drow);
		}
		if (err)
			return err;
	}
	return 0;
}

void ls_gpurec__unflush(struct ls_gpurec *g)
{
	for (size_t i = 0; i < g->n; i++)
		g->lines[i].dirty = true;
}

int ls_gpurec__flush(struct ls_gpurec *g, struct ls_store *store)
{
	for (size_t i = 0; i < g->n; i++) {
		struct gpu_line *l = &g->lines[i];
		int err;

		if (!l->dirty)
			continue;
		l->v.proc_id = l->proc_id;
		l->v.stack_id = l->stack_id;
		err = ls_store__put_gpu(store, &l->v);
		if (err)
			return err;
		l->dirty = false;
	}
	for (size_t i = 0; i < g->nspans; i++) {
		int err = ls_store__put_gpu_span(store, &g->spans[i]);

		if (err)
			return err;
	}
	return flush_procs(g, store);
}

int ls_gpurec__rotate(struct ls_gpurec *g)
{
	uint32_t n = ls_gpu_agg__proc_count(g->agg);
	struct proc_base *b = n ? calloc(n, sizeof(*b)) : NULL;

	if (n && !b)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		struct ls_gpu_proc_info pi;

		if (!ls_gpu_agg__proc_info(g->agg, i, &pi))
			proc_counts(&pi, &b[i].dropped, &b[i].lost, &b[i].launches, &b[i].gpu_ns,
				    &b[i].api_ns);
	}
	free(g->base);
	g->base = b;
	g->nbase = n;
	for (size_t i = 0; i < g->n; i++) {
		struct gpu_line *l = &g->lines[i];

		memset(&l->v, 0, sizeof(l->v));
		l->dirty = false;
	}
	ls_gpu_agg__new_interval(g->agg);
	return 0;
}

void ls_gpurec__committed(struct ls_gpurec *g)
{
	for (size_t i = 0; i < g->nspans; i++)
		free((char *)g->spans[i].name);
	g->nspans = 0;
}
