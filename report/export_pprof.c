// SPDX-License-Identifier: MIT
/*
 * pprof: a gzipped perftools.profiles.Profile (profile.proto, encoded by protobuf-c from code
 * that protoc-c generates at build time), as `go tool pprof`, Parca and Pyroscope read it. One
 * Function per qualified name and file, one Location per (function, line), one Sample per
 * (thread, stack) with the thread's labels.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <xxhash.h>
#include <zlib.h>
#include "array.h"
#include "export.h"
#include "hashmap.h"
#include "report/profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfile;
typedef Perftools__Profiles__ValueType PbValueType;
typedef Perftools__Profiles__Sample PbSample;
typedef Perftools__Profiles__Label PbLabel;
typedef Perftools__Profiles__Location PbLocation;
typedef Perftools__Profiles__Line PbLine;
typedef Perftools__Profiles__Function PbFunction;
typedef Perftools__Profiles__Mapping PbMapping;

/* sample types, in this order; the off-CPU ones and wall only in wall mode */
enum { V_SAMPLES, V_CPU, V_WAIT, V_GIL_WAIT, V_CPU_WAIT, V_WALL, V_MAX };
static const char *const value_names[V_MAX][2] = {
	{"samples", "count"},	     {"cpu", "nanoseconds"},	  {"wait", "nanoseconds"},
	{"gil_wait", "nanoseconds"}, {"cpu_wait", "nanoseconds"}, {"wall", "nanoseconds"},
};

enum { L_PID, L_TID, L_THREAD, L_COMM, L_CMDLINE, L_HOST, L_RANK, L_MAX };

struct pprof {
	const struct ls_model *m;
	int err;
	/* the string table: index 0 is "" */
	char **str;
	size_t nstr, strcap;
	struct ls_hashmap str_idx;
	/* functions and locations; ids are index + 1 */
	PbFunction *funcs;
	size_t nfuncs, fcap;
	struct ls_hashmap func_idx; /* name << 32 | file (string indices) -> index */
	uint64_t *func_of;	    /* model function -> function id, 0 before first use */
	PbLocation *locs;
	PbLine *lines;
	size_t nlocs, lcap;
	struct ls_hashmap loc_idx; /* function id << 32 | line -> index */
	uint64_t **stack_locs;	   /* per model stack, innermost first (stack 0: per process) */
	uint64_t *native_loc;	   /* per process: the location of its [native] frame */
};

struct str_probe {
	const struct pprof *P;
	const char *s;
};

static bool same_str(const void *ctx, uint64_t idx)
{
	const struct str_probe *q = ctx;

	return !strcmp(q->P->str[idx], q->s);
}

/* Index of s in the string table, added (copied) on first use; 0 with P->err set on -ENOMEM. */
static int64_t str_at(struct pprof *P, const char *s)
{
	struct str_probe q = {P, s};
	uint64_t *slot;
	char **v;

	if (P->err)
		return 0;
	slot = ls_hashmap__intern(&P->str_idx, XXH3_64bits(s, strlen(s)), same_str, &q);
	if (!slot)
		goto nomem;
	if (*slot != LS_HASHMAP_EMPTY)
		return *slot;
	v = ls_array_grow(P->str, &P->strcap, P->nstr, sizeof(*v), 256);
	if (!v)
		goto nomem;
	P->str = v;
	P->str[P->nstr] = strdup(s);
	if (!P->str[P->nstr])
		goto nomem;
	*slot = P->nstr;
	return P->nstr++;
nomem:
	P->err = -ENOMEM;
	return 0;
}

/* A name escaped as in every output (ls_escape__name), in the string table. */
static int64_t name_at(struct pprof *P, const char *name)
{
	char *s = ls_export__name(name ? name : "", false);
	int64_t i;

	if (!s) {
		P->err = -ENOMEM;
		return 0;
	}
	i = str_at(P, s);
	free(s);
	return i;
}

/* The function id of (name, file), added on first use; 0 on -ENOMEM. */
static uint64_t function_at(struct pprof *P, int64_t name, int64_t file, int start_line)
{
	uint64_t *slot =
		ls_hashmap__slot(&P->func_idx, (uint64_t)name << 32 | (uint32_t)file, UINT64_MAX);
	PbFunction *f;

	if (P->err || !slot)
		goto nomem;
	if (*slot != UINT64_MAX)
		return *slot + 1;
	f = ls_array_grow(P->funcs, &P->fcap, P->nfuncs, sizeof(*f), 256);
	if (!f)
		goto nomem;
	P->funcs = f;
	f = &P->funcs[P->nfuncs];
	perftools__profiles__function__init(f);
	f->id = P->nfuncs + 1;
	/*
	 * No system_name: pprof demangles a name that equals it, and takes "<module>" or "(pid 1)"
	 * for C++ template or parameter lists to strip. A name that differs is taken as demangled.
	 */
	f->name = name;
	f->filename = file;
	f->start_line = start_line;
	*slot = P->nfuncs++;
	return f->id;
nomem:
	P->err = P->err ?: -ENOMEM;
	return 0;
}

/* The location id of (function id, line), added on first use; 0 on -ENOMEM. */
static uint64_t location_at(struct pprof *P, uint64_t func, int line)
{
	uint64_t *slot = ls_hashmap__slot(&P->loc_idx, func << 32 | (uint32_t)line, UINT64_MAX);
	PbLocation *l;
	PbLine *ln;

	if (P->err || !slot)
		goto nomem;
	if (*slot != UINT64_MAX)
		return *slot + 1;
	if (P->nlocs == P->lcap) {
		size_t cap = P->lcap;

		l = ls_array_grow(P->locs, &cap, P->nlocs, sizeof(*l), 256);
		if (!l)
			goto nomem;
		P->locs = l;
		ln = realloc(P->lines, cap * sizeof(*ln));
		if (!ln)
			goto nomem;
		P->lines = ln;
		P->lcap = cap;
	}
	l = &P->locs[P->nlocs];
	ln = &P->lines[P->nlocs];
	perftools__profiles__location__init(l);
	perftools__profiles__line__init(ln);
	l->id = P->nlocs + 1;
	l->mapping_id = 1;
	ln->function_id = func;
	ln->line = line;
	*slot = P->nlocs++;
	return l->id;
nomem:
	P->err = P->err ?: -ENOMEM;
	return 0;
}

static uint64_t model_function(struct pprof *P, int func)
{
	const struct ls_mfunc *fn = &P->m->funcs[func];

	if (!P->func_of[func])
		P->func_of[func] =
			function_at(P, name_at(P, fn->qualname),
				    name_at(P, P->m->files[fn->file].path), fn->def_line);
	return P->func_of[func];
}

/* Location ids of a stack, innermost first as pprof wants them; NULL on -ENOMEM. */
static uint64_t *stack_locations(struct pprof *P, int stack, int proc, size_t *n)
{
	const struct ls_mstack *s = &P->m->stacks->stacks[stack];

	if (!s->depth) {
		if (!P->native_loc[proc]) {
			char name[512];

			ls_export__native_name(P->m, proc, name, sizeof(name));
			P->native_loc[proc] =
				location_at(P, function_at(P, str_at(P, name), 0, 0), 0);
		}
		*n = 1;
		return P->err ? NULL : &P->native_loc[proc];
	}
	*n = s->depth;
	if (P->stack_locs[stack])
		return P->stack_locs[stack];
	P->stack_locs[stack] = malloc(s->depth * sizeof(uint64_t));
	if (!P->stack_locs[stack]) {
		P->err = -ENOMEM;
		return NULL;
	}
	for (int i = 0; i < s->depth; i++)
		P->stack_locs[stack][i] =
			location_at(P, model_function(P, s->frames[i].func), s->frames[i].line);
	return P->err ? NULL : P->stack_locs[stack];
}

/*
 * The labels of every sample of thread t: process and thread identity, the host, and the
 * process's rank in its distributed job when it has one.
 */
static size_t thread_labels(struct pprof *P, const struct ls_mthread *t, PbLabel *l, PbLabel **lp)
{
	const struct ls_mproc *p = &P->m->procs[t->proc];
	const char *host = ls_model__host(P->m, t->proc);
	size_t n = 0;

	for (int k = 0; k < L_MAX; k++)
		perftools__profiles__label__init(&l[k]);
	l[n].key = str_at(P, "pid");
	l[n++].num = p->pid;
	l[n].key = str_at(P, "thread_id");
	l[n++].num = t->tid;
	if (t->name) {
		l[n].key = str_at(P, "thread_name");
		l[n++].str = name_at(P, t->name);
	}
	if (p->comm) {
		l[n].key = str_at(P, "comm");
		l[n++].str = name_at(P, p->comm);
	}
	if (p->argv) {
		l[n].key = str_at(P, "cmdline");
		l[n++].str = name_at(P, p->argv);
	}
	if (host) {
		l[n].key = str_at(P, "host");
		l[n++].str = name_at(P, host);
	}
	if (p->rank >= 0) {
		char rank[16];

		/* a string: pprof drops a numeric label of value 0, rank 0's */
		snprintf(rank, sizeof(rank), "%d", p->rank);
		l[n].key = str_at(P, "rank");
		l[n++].str = str_at(P, rank);
	}
	for (size_t k = 0; k < n; k++)
		lp[k] = &l[k];
	return n;
}

/* protobuf-c's output buffer, gzipped into a stream as it is packed */
struct gz_buffer {
	ProtobufCBuffer base;
	z_stream z;
	FILE *out;
	int err;
	unsigned char chunk[1 << 16];
};

static void gz_run(struct gz_buffer *g, int flush)
{
	int rc;

	do {
		g->z.next_out = g->chunk;
		g->z.avail_out = sizeof(g->chunk);
		rc = deflate(&g->z, flush);
		if (rc == Z_STREAM_ERROR) {
			g->err = -EIO;
			return;
		}
		if (fwrite(g->chunk, 1, sizeof(g->chunk) - g->z.avail_out, g->out) !=
		    sizeof(g->chunk) - g->z.avail_out) {
			g->err = -EIO;
			return;
		}
	} while (g->z.avail_out == 0 || (flush == Z_FINISH && rc != Z_STREAM_END));
}

static void gz_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
	struct gz_buffer *g = (struct gz_buffer *)b;

	while (len && !g->err) {
		unsigned int k = len > (1u << 30) ? 1u << 30 : (unsigned int)len;

		g->z.next_in = (unsigned char *)data;
		g->z.avail_in = k;
		gz_run(g, Z_NO_FLUSH);
		data += k;
		len -= k;
	}
}

static int write_gzipped(FILE *out, const PbProfile *pb)
{
	struct gz_buffer *g = calloc(1, sizeof(*g));
	int err;

	if (!g)
		return -ENOMEM;
	g->base.append = gz_append;
	g->out = out;
	/* windowBits 15 + 16: a gzip header and trailer, as pprof files are */
	if (deflateInit2(&g->z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK) {
		free(g);
		return -ENOMEM;
	}
	perftools__profiles__profile__pack_to_buffer(pb, &g->base);
	if (!g->err)
		gz_run(g, Z_FINISH);
	deflateEnd(&g->z);
	err = g->err;
	free(g);
	return err;
}

/* meta started_at ("2026-11-29T18:00:00Z") in nanoseconds since the epoch, or 0 */
static int64_t started_ns(const struct ls_model *m)
{
	const char *v = ls_model__meta(m, "started_at"), *end;
	struct tm tm = {};
	time_t t;

	if (!v || !(end = strptime(v, "%Y-%m-%dT%H:%M:%SZ", &tm)) || *end)
		return 0;
	/* a profile's text: only dates that fit int64 nanoseconds (1970..2262) */
	t = timegm(&tm);
	if (t < 0 || t > INT64_MAX / 1000000000)
		return 0;
	return (int64_t)t * 1000000000;
}

static void release(struct pprof *P)
{
	for (size_t i = 0; i < P->nstr; i++)
		free(P->str[i]);
	free(P->str);
	ls_hashmap_release(&P->str_idx);
	free(P->funcs);
	ls_hashmap_release(&P->func_idx);
	free(P->func_of);
	free(P->locs);
	free(P->lines);
	ls_hashmap_release(&P->loc_idx);
	if (P->stack_locs)
		for (size_t i = 0; i < P->m->stacks->nstacks; i++)
			free(P->stack_locs[i]);
	free(P->stack_locs);
	free(P->native_loc);
}

int ls_export__pprof(FILE *out, const struct ls_model *m)
{
	const struct ls_mstacks *s = m->stacks;
	const char *v;
	struct pprof P = {.m = m};
	PbProfile pb = PERFTOOLS__PROFILES__PROFILE__INIT;
	PbValueType types[V_MAX], period_type, *type_ptrs[V_MAX];
	PbSample *samples = NULL, **sample_ptrs = NULL;
	PbMapping mapping, *mapping_ptr = &mapping;
	PbFunction **func_ptrs = NULL;
	PbLocation **loc_ptrs = NULL;
	PbLine **line_ptrs = NULL;
	PbLabel *labels = NULL, **label_ptrs = NULL;
	size_t *nlabels = NULL, nrows = 0, ntypes = m->wall ? V_MAX : V_CPU + 1, n = 0;
	int64_t *values = NULL, comments[3];
	struct ls_export_row r;
	int err;

	ls_hashmap_init(&P.str_idx);
	ls_hashmap_init(&P.func_idx);
	ls_hashmap_init(&P.loc_idx);
	str_at(&P, "");
	for (size_t i = 0; ls_export__next(s, &i, &r);)
		nrows++;
	P.func_of = calloc(m->nfuncs + 1, sizeof(*P.func_of));
	P.native_loc = calloc(m->nprocs + 1, sizeof(*P.native_loc));
	P.stack_locs = calloc(s->nstacks + 1, sizeof(*P.stack_locs));
	samples = calloc(nrows + 1, sizeof(*samples));
	sample_ptrs = calloc(nrows + 1, sizeof(*sample_ptrs));
	values = calloc((nrows + 1) * ntypes, sizeof(*values));
	labels = calloc((s->nthreads + 1) * L_MAX, sizeof(*labels));
	label_ptrs = calloc((s->nthreads + 1) * L_MAX, sizeof(*label_ptrs));
	nlabels = calloc(s->nthreads + 1, sizeof(*nlabels));
	if (!P.func_of || !P.native_loc || !P.stack_locs || !samples || !sample_ptrs || !values ||
	    !labels || !label_ptrs || !nlabels) {
		err = -ENOMEM;
		goto cleanup;
	}

	for (int k = 0; k < V_MAX; k++) {
		perftools__profiles__value_type__init(&types[k]);
		types[k].type = str_at(&P, value_names[k][0]);
		types[k].unit = str_at(&P, value_names[k][1]);
		type_ptrs[k] = &types[k];
	}
	for (size_t t = 0; t < s->nthreads; t++)
		nlabels[t] = thread_labels(&P, &s->threads[t], &labels[t * L_MAX],
					   &label_ptrs[t * L_MAX]);
	for (size_t i = 0; !P.err && ls_export__next(s, &i, &r);) {
		PbSample *x = &samples[n];
		int64_t *val = &values[n * ntypes];

		if (!r.count && !ls_export__row_ns(&r))
			continue; /* nothing to show */
		val[V_SAMPLES] = r.count;
		val[V_CPU] = r.ns[0];
		if (m->wall) {
			val[V_WAIT] = r.ns[1];
			val[V_GIL_WAIT] = r.ns[2];
			val[V_CPU_WAIT] = r.ns[3];
			val[V_WALL] = ls_export__row_ns(&r);
		}
		perftools__profiles__sample__init(x);
		x->location_id =
			stack_locations(&P, r.stack, s->threads[r.thread].proc, &x->n_location_id);
		x->n_value = ntypes;
		x->value = val;
		x->n_label = nlabels[r.thread];
		x->label = &label_ptrs[r.thread * L_MAX];
		sample_ptrs[n++] = x;
	}

	/* the Location and Function arrays moved as they grew: point into them only now */
	func_ptrs = calloc(P.nfuncs + 1, sizeof(*func_ptrs));
	loc_ptrs = calloc(P.nlocs + 1, sizeof(*loc_ptrs));
	line_ptrs = calloc(P.nlocs + 1, sizeof(*line_ptrs));
	if (!func_ptrs || !loc_ptrs || !line_ptrs)
		P.err = -ENOMEM;
	for (size_t i = 0; !P.err && i < P.nfuncs; i++)
		func_ptrs[i] = &P.funcs[i];
	for (size_t i = 0; !P.err && i < P.nlocs; i++) {
		line_ptrs[i] = &P.lines[i];
		loc_ptrs[i] = &P.locs[i];
		loc_ptrs[i]->n_line = 1;
		loc_ptrs[i]->line = &line_ptrs[i];
	}

	pb.n_sample_type = ntypes;
	pb.sample_type = type_ptrs;
	pb.n_sample = n;
	pb.sample = sample_ptrs;
	/*
	 * One mapping for every location, named after the (first) interpreter, that says its frames
	 * are symbolized already: no tool looks for a binary to read them from.
	 */
	perftools__profiles__mapping__init(&mapping);
	mapping.id = 1;
	mapping.filename = name_at(&P, m->nprocs && m->procs[0].exe ? m->procs[0].exe : "python");
	mapping.has_functions = mapping.has_filenames = mapping.has_line_numbers = true;
	pb.n_mapping = 1;
	pb.mapping = &mapping_ptr;
	pb.n_location = P.nlocs;
	pb.location = loc_ptrs;
	pb.n_function = P.nfuncs;
	pb.function = func_ptrs;
	pb.time_nanos = started_ns(m);
	v = ls_model__meta(m, "elapsed_ns");
	pb.duration_nanos = v ? strtoll(v, NULL, 10) : 0;
	perftools__profiles__value_type__init(&period_type);
	period_type.type = types[V_CPU].type;
	period_type.unit = types[V_CPU].unit;
	pb.period_type = &period_type;
	pb.period = m->period_ns;
	/* what the report shows by default: on-CPU time, or wall time in wall mode */
	pb.default_sample_type = m->wall ? types[V_WALL].type : types[V_CPU].type;
	pb.n_comment = 0;
	comments[pb.n_comment++] = name_at(&P, ls_model__meta(m, "tool") ?: "linescope-bpf");
	if ((v = ls_model__meta(m, "scope")))
		comments[pb.n_comment++] = name_at(&P, v);
	if ((v = ls_model__meta(m, "mode")))
		comments[pb.n_comment++] =
			str_at(&P, !strcmp(v, "wall") ? "mode: wall" : "mode: cpu");
	pb.comment = comments;
	/* the string table last: every string is in it now */
	pb.n_string_table = P.nstr;
	pb.string_table = P.str;
	err = P.err ?: write_gzipped(out, &pb);
cleanup:
	release(&P);
	free(samples);
	free(sample_ptrs);
	free(values);
	free(labels);
	free(label_ptrs);
	free(nlabels);
	free(func_ptrs);
	free(loc_ptrs);
	free(line_ptrs);
	return err;
}
