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

#define GAP_SCRATCH 16 /* lines followed in each of the longest gaps */

/* The lines of one of the longest gaps, as they come. */
struct gap_lines {
	struct ls_gpu_idle_line l[GAP_SCRATCH];
	size_t n;
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
	signed char *top;	    /* per gap: its index in u->top_gaps, or -1 */
	struct gap_lines top_lines[LS_GPU_TOP_GAPS];
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

/* Which spans a union is of */
enum span_filter { F_ANY, F_KERNEL, F_COPY, F_SET, F_COPY_SET, F_NCCL };

static bool keep(const struct span_ref *s, enum span_filter f)
{
	switch (f) {
	case F_KERNEL:
		return s->kind == KIND_KERNEL;
	case F_COPY:
		return s->kind == KIND_COPY;
	case F_SET:
		return s->kind == KIND_SET;
	case F_COPY_SET:
		return s->kind == KIND_COPY || s->kind == KIND_SET;
	case F_NCCL:
		return s->nccl;
	default:
		return true;
	}
}

/* The length of each part of u's window (the last may be shorter). */
static int64_t part_ns(const struct ls_gpu_util *u)
{
	return (u->t1_ns - u->t0_ns + LS_GPU_UTIL_BUCKETS - 1) / LS_GPU_UTIL_BUCKETS;
}

/* Adds [a, b) of busy time to the buckets of u's window (parts of w). */
static void add_busy(int64_t *acc, const struct ls_gpu_util *u, int64_t w, int64_t a, int64_t b)
{
	for (int64_t j = (a - u->t0_ns) / w; j < LS_GPU_UTIL_BUCKETS && a < b; j++) {
		int64_t end = u->t0_ns + (j + 1) * w, hi = b < end ? b : end;

		acc[j] += hi - a;
		a = hi;
	}
}

/* Each bucket's busy time as a share of its part of u's window. */
static void to_shares(const int64_t *acc, const struct ls_gpu_util *u, int64_t w, float *out)
{
	for (int j = 0; j < LS_GPU_UTIL_BUCKETS; j++) {
		int64_t lo = u->t0_ns + j * w, hi = lo + w < u->t1_ns ? lo + w : u->t1_ns;

		out[j] = hi > lo ? (float)acc[j] / (float)(hi - lo) : 0;
	}
}

/*
 * The time the spans f keeps cover (s in start order), and, into out unless NULL, that union's
 * busy share of each part of u's window.
 */
static int64_t union_of(const struct span_ref *s, size_t n, const struct ls_gpu_util *u,
			enum span_filter f, float *out)
{
	int64_t acc[LS_GPU_UTIL_BUCKETS] = {0}, sum = 0, a = 0, b = INT64_MIN, w = part_ns(u);

	for (size_t i = 0; i <= n; i++) {
		if (i < n && !keep(&s[i], f))
			continue;
		if (i < n && s[i].a <= b) {
			if (s[i].b > b)
				b = s[i].b;
			continue;
		}
		if (b != INT64_MIN) {
			sum += b - a;
			if (out)
				add_busy(acc, u, w, a, b);
		}
		if (i < n) {
			a = s[i].a;
			b = s[i].b;
		}
	}
	if (out)
		to_shares(acc, u, w, out);
	return sum;
}

/* Busy stretches, gaps between them, the busy series; s in start order. */
static int busy_and_gaps(struct dev_work *W)
{
	struct ls_gpu_util *u = W->u;
	int64_t acc[LS_GPU_UTIL_BUCKETS] = {0}, a = W->s[0].a, b = W->s[0].b, w = part_ns(u);
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
	to_shares(acc, u, w, u->busy);
	return 0;
}

/* Each (process, stream)'s busy time, and the busiest ones' over time; sorts s by stream. */
static int streams_of(struct dev_work *W)
{
	struct ls_gpu_util *u = W->u;
	size_t cap = 0, *from = NULL, lanes[LS_GPU_LANES], nl = 0;

	qsort(W->s, W->n, sizeof(*W->s), by_stream);
	for (size_t i = 0, j; i < W->n; i = j) {
		struct ls_gpu_stream_busy *x;
		size_t *f;

		for (j = i;
		     j < W->n && W->s[j].proc == W->s[i].proc && W->s[j].stream == W->s[i].stream;
		     j++)
			;
		x = ls_array_grow(u->streams, &cap, u->nstreams, sizeof(*x), 8);
		f = x ? realloc(from, (u->nstreams + 2) * sizeof(*from)) : NULL;
		if (!f) {
			free(from);
			return -ENOMEM;
		}
		u->streams = x;
		from = f;
		from[u->nstreams] = i;
		from[u->nstreams + 1] = j;
		u->streams[u->nstreams++] = (struct ls_gpu_stream_busy){
			.proc = W->s[i].proc,
			.stream = W->s[i].stream,
			.busy_ns = union_of(&W->s[i], j - i, u, F_ANY, NULL),
			.spans = (int64_t)(j - i),
		};
	}
	/* the busiest LS_GPU_LANES, kept in stream order */
	for (size_t k = 0; k < u->nstreams; k++) {
		size_t at = nl;

		if (nl == LS_GPU_LANES) {
			size_t min = 0;

			for (size_t q = 1; q < nl; q++)
				if (u->streams[lanes[q]].busy_ns < u->streams[lanes[min]].busy_ns)
					min = q;
			if (u->streams[lanes[min]].busy_ns >= u->streams[k].busy_ns)
				continue;
			memmove(&lanes[min], &lanes[min + 1], (nl - 1 - min) * sizeof(lanes[0]));
			at = --nl;
		}
		lanes[at] = k;
		nl++;
	}
	for (size_t q = 0; q < nl; q++) {
		size_t k = lanes[q];
		struct ls_gpu_lane *l = &u->lanes[q];

		l->proc = u->streams[k].proc;
		l->stream = u->streams[k].stream;
		union_of(&W->s[from[k]], from[k + 1] - from[k], u, F_ANY, l->busy);
	}
	u->nlanes = nl;
	free(from);
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

/* Adds ns to a line of one of the longest gaps (the first GAP_SCRATCH lines it has). */
static void charge_gap(struct gap_lines *g, int proc, int file, int line, int64_t ns)
{
	size_t i;

	for (i = 0; i < g->n; i++)
		if (g->l[i].proc == proc && g->l[i].file == file && g->l[i].line == line)
			break;
	if (i == g->n) {
		if (g->n == GAP_SCRATCH)
			return;
		g->l[g->n++] = (struct ls_gpu_idle_line){.proc = proc, .file = file, .line = line};
	}
	g->l[i].idle_ns += ns;
}

/* Charges [a, b) of gap k's idle time to the line of tick t of process proc. */
static int charge(struct dev_work *W, size_t k, int proc, const struct ls_mtick *t, int file,
		  int line, int64_t a, int64_t b)
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
	if (W->top[k] >= 0)
		charge_gap(&W->top_lines[W->top[k]], proc, file, line, b - a);
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

	/* every tick, also past the last gap: a late tick's jittered start may reach back into it */
	for (size_t i = lo; i < hi; i++) {
		const struct ls_mtick *t = &S->ticks[i];
		int64_t a = t->t_ns - t->dur_ns, b = t->t_ns;
		size_t k;
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
			int err = y > x ? charge(W, k, proc, t, file, line, x, y) : 0;

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

/* Picks the longest gaps (longest first, the earlier of equal ones first) into u->top_gaps. */
static int pick_top_gaps(struct dev_work *W)
{
	struct ls_gpu_util *u = W->u;
	size_t idx[LS_GPU_TOP_GAPS], n = 0;

	W->top = malloc(W->ngaps ?: 1);
	if (!W->top)
		return -ENOMEM;
	memset(W->top, -1, W->ngaps);
	for (size_t g = 0; g < W->ngaps; g++) {
		int64_t len = W->gaps[g].b - W->gaps[g].a;
		size_t at = n;

		while (at > 0 && W->gaps[idx[at - 1]].b - W->gaps[idx[at - 1]].a < len)
			at--;
		if (at == LS_GPU_TOP_GAPS)
			continue;
		if (n < LS_GPU_TOP_GAPS)
			n++;
		memmove(&idx[at + 1], &idx[at], (n - 1 - at) * sizeof(idx[0]));
		idx[at] = g;
	}
	for (size_t i = 0; i < n; i++) {
		W->top[idx[i]] = (signed char)i;
		u->top_gaps[i] = (struct ls_gpu_gap){
			.t_ns = W->gaps[idx[i]].a, .dur_ns = W->gaps[idx[i]].b - W->gaps[idx[i]].a};
	}
	u->ntop_gaps = n;
	return 0;
}

/* Each of the longest gaps keeps its LS_GPU_GAP_LINES lines with the most of it. */
static void keep_gap_lines(struct dev_work *W)
{
	for (size_t i = 0; i < W->u->ntop_gaps; i++) {
		struct gap_lines *g = &W->top_lines[i];
		struct ls_gpu_gap *x = &W->u->top_gaps[i];

		qsort(g->l, g->n, sizeof(g->l[0]), by_idle);
		x->nlines = g->n < LS_GPU_GAP_LINES ? g->n : LS_GPU_GAP_LINES;
		memcpy(x->lines, g->l, x->nlines * sizeof(g->l[0]));
	}
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
	/* qsort() takes no NULL, even for no items */
	if (W->u->nlines > 1)
		qsort(W->u->lines, W->u->nlines, sizeof(*W->u->lines), by_idle);
	if (W->ncovered > 1)
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

/* The analysis of one device, whose n (> 0) spans are s (reordered). */
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
	u->kernel_ns = union_of(s, n, u, F_KERNEL, u->kernels);
	u->copy_ns = union_of(s, n, u, F_COPY, NULL);
	u->set_ns = union_of(s, n, u, F_SET, NULL);
	union_of(s, n, u, F_COPY_SET, u->copies);
	u->nccl_ns = union_of(s, n, u, F_NCCL, NULL);
	ls_hashmap_init(&W.line_idx);
	err = busy_and_gaps(&W);
	if (!err)
		err = pick_top_gaps(&W);
	if (!err)
		err = idle_lines(&W, runs, run_of, thread_idx);
	if (!err)
		keep_gap_lines(&W);
	if (!err)
		err = streams_of(&W); /* last: it reorders s */
	ls_hashmap_release(&W.line_idx);
	free(W.gaps);
	free(W.covered);
	free(W.top);
	return err;
}

#define PAIR_SKIPPED (UINT64_MAX - 1) /* a (process, ordinal) past LS_GPU_UTIL_MAX_DEVICES */

/* Finding each span's device: (process, ordinal) pairs, device cards, device identities. */
struct dev_maps {
	const struct ls_model *m;
	struct ls_gpu_util **u;
	size_t *n, cap;
	struct ls_hashmap pair;	 /* (proc, ordinal) -> device index, or PAIR_SKIPPED */
	struct ls_hashmap card;	 /* (proc, ordinal) -> index into m->gpu_devs with a UUID */
	struct ls_hashmap ident; /* identity hash -> device index (ls_hashmap__intern) */
	/* the identity being looked up */
	const char *uuid;
	int proc, ordinal;
};

static uint64_t pair_key(int proc, int ordinal)
{
	return (uint64_t)(uint32_t)proc << 32 | (uint32_t)ordinal;
}

/* A device is known by its UUID, else by its ordinal on its host (a merged profile's hosts). */
static bool same_device(const void *ctx, uint64_t idx)
{
	const struct dev_maps *D = ctx;
	const struct ls_gpu_util *x = &(*D->u)[idx];

	if (D->uuid || x->uuid)
		return D->uuid && x->uuid && !strcmp(D->uuid, x->uuid);
	return x->ordinal == D->ordinal &&
	       !strcmp(ls_model__host(D->m, D->proc) ?: "", ls_model__host(D->m, x->proc) ?: "");
}

/* The device of a (process, ordinal) seen for the first time: a known one, or a new one. */
static int new_pair(struct dev_maps *D, int proc, int ordinal, uint64_t *dev)
{
	struct ls_gpu_util *x;
	uint64_t c, h, *slot;

	D->uuid = ls_hashmap__get(&D->card, pair_key(proc, ordinal), &c) ? D->m->gpu_devs[c].uuid
									 : NULL;
	D->proc = proc;
	D->ordinal = ordinal;
	h = D->uuid ? ls_hash_str(D->uuid, 0)
		    : ls_hash_str(ls_model__host(D->m, proc) ?: "",
				  (uint64_t)(uint32_t)ordinal + 1);
	if (ls_hashmap__find(&D->ident, h, same_device, D, dev))
		return 0;
	if (*D->n == LS_GPU_UTIL_MAX_DEVICES) {
		*dev = PAIR_SKIPPED;
		return 0;
	}
	slot = ls_hashmap__intern(&D->ident, h, same_device, D);
	x = slot ? ls_array_grow(*D->u, &D->cap, *D->n, sizeof(*x), 4) : NULL;
	if (!x)
		return -ENOMEM;
	*D->u = x;
	x[*D->n] = (struct ls_gpu_util){.ordinal = ordinal, .proc = proc, .uuid = D->uuid};
	*slot = *dev = (*D->n)++;
	return 0;
}

/*
 * Each span's device (dev[i]; PAIR_SKIPPED past LS_GPU_UTIL_MAX_DEVICES, counted in *skipped),
 * the devices in *u (*n of them). -ENOMEM.
 */
static int devices(const struct ls_model *m, struct ls_gpu_util **u, size_t *n, uint64_t *dev,
		   int64_t *skipped)
{
	const struct ls_mstacks *S = m->stacks;
	struct dev_maps D = {.m = m, .u = u, .n = n};
	int err = 0;

	ls_hashmap_init(&D.pair);
	ls_hashmap_init(&D.card);
	ls_hashmap_init(&D.ident);
	for (size_t i = 0; !err && i < m->ngpu_devs; i++) {
		const struct ls_mgpu_dev *c = &m->gpu_devs[i];
		uint64_t *slot;

		if (!c->uuid || !*c->uuid || c->ordinal < 0 || c->ordinal > INT32_MAX)
			continue;
		slot = ls_hashmap__slot(&D.card, pair_key(c->proc, (int)c->ordinal), UINT64_MAX);
		if (!slot)
			err = -ENOMEM;
		else if (*slot == UINT64_MAX)
			*slot = i;
	}
	for (size_t i = 0; !err && i < S->ngpu_spans; i++) {
		const struct ls_mgpu_span *g = &S->gpu_spans[i];
		uint64_t *slot =
			ls_hashmap__slot(&D.pair, pair_key(g->proc, g->device), UINT64_MAX);

		if (!slot) {
			err = -ENOMEM;
			break;
		}
		if (*slot == UINT64_MAX) {
			uint64_t d = PAIR_SKIPPED;

			err = new_pair(&D, g->proc, g->device, &d);
			/* new_pair() inserted into other maps only: slot is still valid */
			*slot = d;
		}
		dev[i] = *slot;
		*skipped += dev[i] == PAIR_SKIPPED;
	}
	ls_hashmap_release(&D.pair);
	ls_hashmap_release(&D.card);
	ls_hashmap_release(&D.ident);
	return err;
}

/* Every kept span, by device: device d's are all[off[d]] .. all[off[d + 1]]. */
static struct span_ref *spans_by_device(const struct ls_mstacks *S, const uint64_t *dev, size_t nd,
					size_t *off)
{
	struct span_ref *all;
	size_t *at = calloc(nd + 1, sizeof(*at));

	memset(off, 0, (nd + 1) * sizeof(*off));
	for (size_t i = 0; i < S->ngpu_spans; i++)
		if (dev[i] != PAIR_SKIPPED)
			off[dev[i] + 1]++;
	for (size_t d = 0; d < nd; d++)
		off[d + 1] += off[d];
	all = malloc((off[nd] ?: 1) * sizeof(*all));
	if (!all || !at) {
		free(all);
		free(at);
		return NULL;
	}
	for (size_t i = 0; i < S->ngpu_spans; i++) {
		const struct ls_mgpu_span *g = &S->gpu_spans[i];

		if (dev[i] == PAIR_SKIPPED)
			continue;
		all[off[dev[i]] + at[dev[i]]++] = (struct span_ref){
			.a = g->t_ns,
			.b = g->t_ns + g->dur_ns,
			.kind = g->kind,
			.proc = g->proc,
			.stream = g->stream,
			/* a thread with no Python frame has no line */
			.tid = g->stack ? g->tid : 0,
			.nccl = g->kind == KIND_KERNEL && g->name && !strncmp(g->name, "nccl", 4),
		};
	}
	free(at);
	return all;
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

int ls_gpu_util__build(const struct ls_model *m, struct ls_gpu_util **out, size_t *n,
		       int64_t *skipped)
{
	const struct ls_mstacks *S = m->stacks;
	struct ls_mruns runs = {0};
	struct ls_hashmap thread_idx;
	struct ls_gpu_util *u = NULL;
	struct span_ref *all = NULL;
	size_t nd = 0, *off = NULL;
	uint64_t *dev = NULL;
	long *run_of = NULL;
	int err = 0;

	*out = NULL;
	*n = 0;
	*skipped = 0;
	if (!S || !S->ngpu_spans)
		return 0;
	ls_hashmap_init(&thread_idx);
	dev = malloc(S->ngpu_spans * sizeof(*dev));
	run_of = malloc((S->nthreads + 1) * sizeof(*run_of));
	if (!dev || !run_of || ls_mstacks__runs(S, &runs) ||
	    thread_maps(S, &runs, &thread_idx, run_of) || devices(m, &u, &nd, dev, skipped) ||
	    !(off = malloc((nd + 1) * sizeof(*off))) || !(all = spans_by_device(S, dev, nd, off))) {
		err = -ENOMEM;
		goto out;
	}
	for (size_t d = 0; !err && d < nd; d++)
		err = analyse(m, &u[d], &all[off[d]], off[d + 1] - off[d], &runs, run_of,
			      &thread_idx);
out:
	ls_hashmap_release(&thread_idx);
	free(runs.begin);
	free(run_of);
	free(dev);
	free(off);
	free(all);
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
