// SPDX-License-Identifier: MIT
/*
 * The GPU timeline (gpu_idle.h). Per device: its spans in start order, merged into busy
 * stretches; the gaps between them are its idle time inside its active window. Each launching
 * thread's ticks are then walked once against the gaps (both in time order); what they cover,
 * each tick in full, goes to their lines, and the union of what they cover over all threads is
 * the idle time explained (never more than the idle time).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "gpu_idle.h"
#include "hashmap.h"
#include "linescope.h"
#include "model.h"

/* enum ls_gpu_act_kind (gpu/gpu_records.h), as the model keeps it */
enum { KIND_KERNEL = 1, KIND_COPY = 2, KIND_SET = 3 };

#define KEY_BITS 21 /* of a file index and of a line number in a line's key */
#define KEY_MAX	 ((1 << KEY_BITS) - 1)

struct span_ref {
	int64_t a, b; /* [start, end) on the run's clock */
	int kind, proc, stream, tid;
	bool nccl;
};

struct iv {
	int64_t a, b;
};

/* What one device's analysis works on; freed after it. */
struct dev_work {
	const struct ls_model *m;
	struct ls_gpu_util *u;
	struct span_ref *s;
	size_t n;
	struct iv *gaps, *covered;
	size_t ngaps, ncovered, ccap, lcap;
	struct ls_hashmap line_idx; /* (proc, file, line) -> index into u->lines */
};

static int by_start(const void *x, const void *y)
{
	const struct span_ref *a = x, *b = y;

	return (a->a > b->a) - (a->a < b->a);
}

static int by_stream(const void *x, const void *y)
{
	const struct span_ref *a = x, *b = y;

	if (a->proc != b->proc)
		return a->proc < b->proc ? -1 : 1;
	if (a->stream != b->stream)
		return a->stream < b->stream ? -1 : 1;
	return by_start(x, y);
}

static int iv_by_start(const void *x, const void *y)
{
	const struct iv *a = x, *b = y;

	return (a->a > b->a) - (a->a < b->a);
}

static bool keep(const struct span_ref *s, int kind, bool nccl)
{
	return (!kind || s->kind == kind) && (!nccl || s->nccl);
}

/* The time the spans of kind (0: any; nccl: NCCL kernels only) cover; s in start order. */
static int64_t union_of(const struct span_ref *s, size_t n, int kind, bool nccl)
{
	int64_t sum = 0, a = 0, b = INT64_MIN;

	for (size_t i = 0; i < n; i++) {
		if (!keep(&s[i], kind, nccl))
			continue;
		if (s[i].a > b) {
			if (b != INT64_MIN)
				sum += b - a;
			a = s[i].a;
			b = s[i].b;
		} else if (s[i].b > b) {
			b = s[i].b;
		}
	}
	return b == INT64_MIN ? sum : sum + b - a;
}

/* Adds [a, b) of busy time to the buckets of u's window. */
static void add_busy(int64_t *acc, const struct ls_gpu_util *u, int64_t w, int64_t a, int64_t b)
{
	for (int64_t j = (a - u->t0_ns) / w; j < LS_GPU_UTIL_BUCKETS && a < b; j++) {
		int64_t end = u->t0_ns + (j + 1) * w, hi = b < end ? b : end;

		acc[j] += hi - a;
		a = hi;
	}
}

/* Busy stretches, gaps between them, the busy series; s in start order. */
static int busy_and_gaps(struct dev_work *W)
{
	struct ls_gpu_util *u = W->u;
	int64_t acc[LS_GPU_UTIL_BUCKETS] = {0}, a = W->s[0].a, b = W->s[0].b;
	int64_t w = (u->t1_ns - u->t0_ns + LS_GPU_UTIL_BUCKETS - 1) / LS_GPU_UTIL_BUCKETS;
	size_t cap = 0;

	for (size_t i = 1; i <= W->n; i++) {
		struct iv *g;

		if (i < W->n && W->s[i].a <= b) {
			if (W->s[i].b > b)
				b = W->s[i].b;
			continue;
		}
		add_busy(acc, u, w, a, b);
		u->busy_ns += b - a;
		if (i == W->n)
			break;
		g = ls_array_grow(W->gaps, &cap, W->ngaps, sizeof(*g), 256);
		if (!g)
			return -ENOMEM;
		W->gaps = g;
		W->gaps[W->ngaps++] = (struct iv){b, W->s[i].a};
		if (W->s[i].a - b > u->longest_gap_ns)
			u->longest_gap_ns = W->s[i].a - b;
		a = W->s[i].a;
		b = W->s[i].b;
	}
	u->gaps = (int64_t)W->ngaps;
	for (int j = 0; j < LS_GPU_UTIL_BUCKETS; j++) {
		int64_t lo = u->t0_ns + j * w, hi = lo + w < u->t1_ns ? lo + w : u->t1_ns;

		u->busy[j] = hi > lo ? (float)acc[j] / (float)(hi - lo) : 0;
	}
	return 0;
}

/* Each (process, stream)'s busy time; sorts s by stream. */
static int streams_of(struct dev_work *W)
{
	struct ls_gpu_util *u = W->u;
	size_t cap = 0;

	qsort(W->s, W->n, sizeof(*W->s), by_stream);
	for (size_t i = 0, j; i < W->n; i = j) {
		struct ls_gpu_stream_busy *x;

		for (j = i;
		     j < W->n && W->s[j].proc == W->s[i].proc && W->s[j].stream == W->s[i].stream;
		     j++)
			;
		x = ls_array_grow(u->streams, &cap, u->nstreams, sizeof(*x), 8);
		if (!x)
			return -ENOMEM;
		u->streams = x;
		u->streams[u->nstreams++] = (struct ls_gpu_stream_busy){
			.proc = W->s[i].proc,
			.stream = W->s[i].stream,
			.busy_ns = union_of(&W->s[i], j - i, 0, false),
			.spans = (int64_t)(j - i),
		};
	}
	return 0;
}

/* The line a tick's time goes to: its innermost project frame, else its innermost one. */
static bool tick_line(const struct ls_model *m, const struct ls_mstack *st, int *file, int *line)
{
	if (ls_model__own_line(m, st, file, line))
		return true;
	if (st->depth <= 0)
		return false;
	*file = m->funcs[st->frames[0].func].file;
	*line = st->frames[0].line;
	return true;
}

/* Charges [a, b) of idle time to the line of tick t of process proc. */
static int charge(struct dev_work *W, int proc, const struct ls_mtick *t, int file, int line,
		  int64_t a, int64_t b)
{
	struct ls_gpu_util *u = W->u;
	uint64_t *slot, key;
	struct ls_gpu_idle_line *l;
	struct iv *c;

	c = ls_array_grow(W->covered, &W->ccap, W->ncovered, sizeof(*c), 1024);
	if (!c)
		return -ENOMEM;
	W->covered = c;
	W->covered[W->ncovered++] = (struct iv){a, b};
	key = (uint64_t)proc << (2 * KEY_BITS) | (uint64_t)file << KEY_BITS | (uint64_t)line;
	slot = ls_hashmap__slot(&W->line_idx, key, UINT64_MAX);
	if (!slot)
		return -ENOMEM;
	if (*slot == UINT64_MAX) {
		l = ls_array_grow(u->lines, &W->lcap, u->nlines, sizeof(*l), 64);
		if (!l)
			return -ENOMEM;
		u->lines = l;
		u->lines[u->nlines] =
			(struct ls_gpu_idle_line){.proc = proc, .file = file, .line = line};
		*slot = u->nlines++;
	}
	l = &u->lines[*slot];
	l->idle_ns += b - a;
	if (t->kind == LS_CLASS_CPU)
		l->cpu_ns += b - a;
	else if (t->kind == LS_CLASS_WAIT || t->kind == LS_CLASS_GIL_WAIT)
		l->blocked_ns += b - a;
	return 0;
}

/*
 * One launching thread's ticks [lo, hi) against the device's gaps, both in time order (ticks by
 * their end). A tick counts in full, as in Time: an on-CPU tick stands for one jittered period
 * ending at its sample, so neighbours overlap about as much as they leave apart, and cutting the
 * overlaps would lose about 5 % of on-CPU time (the union is what explained_ns counts).
 */
static int walk_thread(struct dev_work *W, int proc, size_t lo, size_t hi)
{
	const struct ls_mstacks *S = W->m->stacks;
	size_t g = 0;

	for (size_t i = lo; i < hi && g < W->ngaps; i++) {
		const struct ls_mtick *t = &S->ticks[i];
		int64_t a = t->t_ns - t->dur_ns, b = t->t_ns;
		size_t k = g;
		int file, line;

		while (g < W->ngaps && W->gaps[g].b <= a)
			g++;
		/* a tick may begin before the one before it ended: look back a gap or two */
		for (k = g; k > 0 && W->gaps[k - 1].b > a; k--)
			;
		if (k == W->ngaps || W->gaps[k].a >= b ||
		    !tick_line(W->m, &S->stacks[t->stack], &file, &line) || file > KEY_MAX ||
		    line < 0 || line > KEY_MAX)
			continue;
		for (; k < W->ngaps && W->gaps[k].a < b; k++) {
			int64_t x = a > W->gaps[k].a ? a : W->gaps[k].a;
			int64_t y = b < W->gaps[k].b ? b : W->gaps[k].b;
			int err = y > x ? charge(W, proc, t, file, line, x, y) : 0;

			if (err)
				return err;
		}
	}
	return 0;
}

static int by_idle(const void *x, const void *y)
{
	const struct ls_gpu_idle_line *a = x, *b = y;

	return (a->idle_ns < b->idle_ns) - (a->idle_ns > b->idle_ns);
}

/*
 * The idle time of the device's launching threads' lines. run_of: by thread index, the run of
 * its ticks (-1: none); thread_idx: (proc, tid) -> thread index.
 */
static int idle_lines(struct dev_work *W, const struct ls_mruns *runs, const long *run_of,
		      const struct ls_hashmap *thread_idx)
{
	struct ls_hashmap seen;
	int err = 0;

	ls_hashmap_init(&seen);
	for (size_t i = 0; !err && i < W->n; i++) {
		uint64_t key = (uint64_t)W->s[i].proc << 32 | (uint32_t)W->s[i].tid, th;
		uint64_t *slot;

		if (!W->s[i].tid || !ls_hashmap__get(thread_idx, key, &th) || run_of[th] < 0)
			continue;
		slot = ls_hashmap__slot(&seen, key, 0);
		if (!slot) {
			err = -ENOMEM;
		} else if (!*slot) {
			*slot = 1;
			W->u->threads++;
			err = walk_thread(W, W->s[i].proc, runs->begin[run_of[th]],
					  runs->begin[run_of[th] + 1]);
		}
	}
	ls_hashmap_release(&seen);
	if (err)
		return err;
	qsort(W->u->lines, W->u->nlines, sizeof(*W->u->lines), by_idle);
	qsort(W->covered, W->ncovered, sizeof(*W->covered), iv_by_start);
	for (size_t i = 0, j; i < W->ncovered; i = j) {
		int64_t b = W->covered[i].b;

		for (j = i + 1; j < W->ncovered && W->covered[j].a <= b; j++)
			if (W->covered[j].b > b)
				b = W->covered[j].b;
		W->u->explained_ns += b - W->covered[i].a;
	}
	return 0;
}

/* The analysis of one device, whose n spans are s (taken). */
static int analyse(const struct ls_model *m, struct ls_gpu_util *u, struct span_ref *s, size_t n,
		   const struct ls_mruns *runs, const long *run_of,
		   const struct ls_hashmap *thread_idx)
{
	struct dev_work W = {.m = m, .u = u, .s = s, .n = n};
	int err;

	qsort(s, n, sizeof(*s), by_start);
	u->spans = (int64_t)n;
	u->t0_ns = s[0].a;
	for (size_t i = 0; i < n; i++)
		if (s[i].b > u->t1_ns)
			u->t1_ns = s[i].b;
	u->kernel_ns = union_of(s, n, KIND_KERNEL, false);
	u->copy_ns = union_of(s, n, KIND_COPY, false);
	u->set_ns = union_of(s, n, KIND_SET, false);
	u->nccl_ns = union_of(s, n, KIND_KERNEL, true);
	ls_hashmap_init(&W.line_idx);
	err = busy_and_gaps(&W);
	if (!err)
		err = idle_lines(&W, runs, run_of, thread_idx);
	if (!err)
		err = streams_of(&W); /* last: it reorders s */
	ls_hashmap_release(&W.line_idx);
	free(W.gaps);
	free(W.covered);
	free(s);
	return err;
}

/* The device a span ran on: its process's card names the physical device (UUID), if it has one. */
static const char *uuid_of(const struct ls_model *m, int proc, int ordinal)
{
	for (size_t i = 0; i < m->ngpu_devs; i++)
		if (m->gpu_devs[i].proc == proc && m->gpu_devs[i].ordinal == ordinal &&
		    m->gpu_devs[i].uuid && *m->gpu_devs[i].uuid)
			return m->gpu_devs[i].uuid;
	return NULL;
}

/* A device is known by its UUID, else by its ordinal on its host (a merged profile's hosts). */
static size_t device_of(const struct ls_model *m, struct ls_gpu_util *u, size_t n, const char *uuid,
			int proc, int ordinal)
{
	for (size_t i = 0; i < n; i++) {
		const char *h = ls_model__host(m, proc), *hi = ls_model__host(m, u[i].proc);

		if (uuid && u[i].uuid ? !strcmp(uuid, u[i].uuid)
				      : u[i].ordinal == ordinal && !strcmp(h ?: "", hi ?: ""))
			return i;
	}
	return n;
}

/* Each span's device (dev[i]), the devices in *u (*n of them). -ENOMEM. */
static int devices(const struct ls_model *m, struct ls_gpu_util **u, size_t *n, size_t *dev)
{
	const struct ls_mstacks *S = m->stacks;
	size_t cap = 0;

	for (size_t i = 0; i < S->ngpu_spans; i++) {
		const struct ls_mgpu_span *g = &S->gpu_spans[i];
		const char *uuid;

		if (i && g->proc == S->gpu_spans[i - 1].proc &&
		    g->device == S->gpu_spans[i - 1].device) {
			dev[i] = dev[i - 1];
			continue;
		}
		uuid = uuid_of(m, g->proc, g->device);
		dev[i] = device_of(m, *u, *n, uuid, g->proc, g->device);
		if (dev[i] == *n) {
			struct ls_gpu_util *x = ls_array_grow(*u, &cap, *n, sizeof(*x), 4);

			if (!x)
				return -ENOMEM;
			*u = x;
			x[(*n)++] = (struct ls_gpu_util){
				.ordinal = g->device, .proc = g->proc, .uuid = uuid};
		}
	}
	return 0;
}

static struct span_ref *spans_on(const struct ls_mstacks *S, const size_t *dev, size_t d, size_t *n)
{
	struct span_ref *s;
	size_t k = 0;

	for (size_t i = 0; i < S->ngpu_spans; i++)
		k += dev[i] == d;
	s = malloc(k * sizeof(*s));
	if (!s)
		return NULL;
	*n = k;
	k = 0;
	for (size_t i = 0; i < S->ngpu_spans; i++) {
		const struct ls_mgpu_span *g = &S->gpu_spans[i];

		if (dev[i] != d)
			continue;
		s[k++] = (struct span_ref){
			.a = g->t_ns,
			.b = g->t_ns + g->dur_ns,
			.kind = g->kind,
			.proc = g->proc,
			.stream = g->stream,
			.tid = g->stack ? g->tid
					: 0, /* a thread with no Python frame has no line */
			.nccl = g->kind == KIND_KERNEL && g->name && !strncmp(g->name, "nccl", 4),
		};
	}
	return s;
}

/* Thread index by (proc, tid), and the run of each thread's ticks. */
static int thread_maps(const struct ls_mstacks *S, const struct ls_mruns *runs,
		       struct ls_hashmap *idx, long *run_of)
{
	for (size_t i = 0; i < S->nthreads; i++) {
		if (ls_hashmap__set(
			    idx, (uint64_t)S->threads[i].proc << 32 | (uint32_t)S->threads[i].tid,
			    i))
			return -ENOMEM;
		run_of[i] = -1;
	}
	for (size_t k = 0; k < runs->n; k++)
		run_of[S->ticks[runs->begin[k]].thread] = (long)k;
	return 0;
}

int ls_gpu_util__build(const struct ls_model *m, struct ls_gpu_util **out, size_t *n)
{
	const struct ls_mstacks *S = m->stacks;
	struct ls_mruns runs = {0};
	struct ls_hashmap thread_idx;
	struct ls_gpu_util *u = NULL;
	size_t *dev = NULL, nd = 0;
	long *run_of = NULL;
	int err = 0;

	*out = NULL;
	*n = 0;
	if (!S || !S->ngpu_spans)
		return 0;
	ls_hashmap_init(&thread_idx);
	dev = malloc(S->ngpu_spans * sizeof(*dev));
	run_of = malloc((S->nthreads + 1) * sizeof(*run_of));
	if (!dev || !run_of || ls_mstacks__runs(S, &runs) ||
	    thread_maps(S, &runs, &thread_idx, run_of) || devices(m, &u, &nd, dev)) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t d = 0; !err && d < nd; d++) {
		size_t k = 0;
		struct span_ref *s = spans_on(S, dev, d, &k);

		err = s ? analyse(m, &u[d], s, k, &runs, run_of, &thread_idx) : -ENOMEM;
	}
out:
	ls_hashmap_release(&thread_idx);
	free(runs.begin);
	free(run_of);
	free(dev);
	if (err) {
		ls_gpu_util__free(u, nd);
		return err;
	}
	*out = u;
	*n = nd;
	return 0;
}

void ls_gpu_util__free(struct ls_gpu_util *u, size_t n)
{
	if (!u)
		return;
	for (size_t i = 0; i < n; i++) {
		free(u[i].streams);
		free(u[i].lines);
	}
	free(u);
}
