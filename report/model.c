// SPDX-License-Identifier: MIT
/* Loads a stored profile and aggregates its sample rows by line, function and caller edge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
#include "log.h"
#include "model.h"
#include "model_int.h"
#include "gpu_idle.h"
#include "spark.h"
#include "procfs.h"
#include "pyindex.h"
#include "profile.h"

char *lsm_dup(const char *t)
{
	return t ? strdup(t) : NULL;
}

static int meta_row(void *ctx, const struct ls_prow_meta *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	char **k = ls_array_grow(m->meta_keys, &L->cap, m->nmeta, sizeof(char *), 256), **v;

	if (!k)
		return -ENOMEM;
	m->meta_keys = k;
	v = realloc(m->meta_vals, L->cap * sizeof(char *));
	if (!v)
		return -ENOMEM;
	m->meta_vals = v;
	m->meta_keys[m->nmeta] = lsm_dup(r->key);
	m->meta_vals[m->nmeta] = lsm_dup(r->value);
	m->nmeta++;
	return 0;
}

const char *ls_model__status(const struct ls_model *m)
{
	const char *status = ls_model__meta(m, "status"), *pid = ls_model__meta(m, "writer_pid"),
		   *start = ls_model__meta(m, "writer_start");
	struct ls_procstat st;

	if (status || !pid || !start)
		return status;
	if (ls_procfs__stat((pid_t)strtol(pid, NULL, 10), &st) ||
	    st.start_ticks != strtoull(start, NULL, 10))
		return NULL;
	return "Running";
}

const char *ls_model__host(const struct ls_model *m, int proc)
{
	const char *h = proc >= 0 && (size_t)proc < m->nprocs ? m->procs[proc].host : NULL;

	return h ? h : ls_model__meta(m, "host");
}

const char *ls_model__meta(const struct ls_model *m, const char *key)
{
	for (size_t i = 0; i < m->nmeta; i++)
		if (m->meta_keys[i] && !strcmp(m->meta_keys[i], key))
			return m->meta_vals[i];
	return NULL;
}

const char *ls_mfile__line(const struct ls_mfile *f, int line, size_t *len)
{
	const char *p, *end, *nl;

	if (!f->text || line < 1)
		return NULL;
	p = f->text;
	end = f->text + f->len;
	for (int l = 1; l < line && p < end; l++) {
		p = memchr(p, '\n', end - p);
		if (!p)
			return NULL;
		p++;
	}
	if (p >= end)
		return NULL;
	nl = memchr(p, '\n', end - p);
	*len = (nl ? nl : end) - p;
	return p;
}

static int64_t stat_of(struct loader *L, const char *key)
{
	return ls_profile__stat(L->prof, key, 0);
}

static int proc_row(void *ctx, const struct ls_prow_proc *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	struct ls_mproc *v = ls_array_grow(m->procs, &L->cap, m->nprocs, sizeof(*v), 256), *p;

	if (!v)
		return -ENOMEM;
	m->procs = v;
	p = &m->procs[m->nprocs];
	*p = (struct ls_mproc){
		.id = r->id,
		.pid = r->pid,
		.ppid = r->ppid,
		.nspid = r->nspid,
		.parent = (int)r->parent_id, /* resolved to an index below */
		.spawn_stack = r->spawn_stack,
		.waiter_stack = r->waiter_stack,
		.comm = lsm_dup(r->comm),
		.argv = lsm_dup(r->argv),
		.exe = lsm_dup(r->exe),
		.start_ns = r->start_ns,
		.end_ns = r->end_ns,
		.exit_code = r->exit_code,
		.python = lsm_dup(r->python),
		.python_build = lsm_dup(r->python_build),
		.note = lsm_dup(r->note),
		.threads = r->threads,
		.parent_wait_ns = r->parent_wait_ns,
		.trace = lsm_dup(r->trace),
		.cgroup = lsm_dup(r->cgroup),
		.cgroup_id = r->cgroup_id,
		.rank = r->rank,
		.local_rank = r->local_rank,
		.world_size = r->world_size,
		.master_addr = lsm_dup(r->master_addr),
		.host = lsm_dup(r->host),
		.spawn_file = -1,
	};
	m->threads += p->threads;
	m->nprocs++;
	return ls_hashmap__set(&L->proc_idx, p->id, m->nprocs - 1) ? -ENOMEM : 0;
}

static int load_procs(struct loader *L)
{
	struct ls_model *m = L->m;
	int err;

	L->cap = 0;
	err = ls_profile__procs(L->prof, proc_row, L);
	for (size_t i = 0; i < m->nprocs; i++) {
		uint64_t idx;

		m->procs[i].parent =
			m->procs[i].parent >= 0 &&
					ls_hashmap__get(&L->proc_idx, m->procs[i].parent, &idx)
				? (int)idx
				: -1;
	}
	return err;
}

int lsm_count_lines(const char *t, size_t len)
{
	int n = 0;

	for (size_t i = 0; i < len; i++)
		n += t[i] == '\n';
	return n + (len && t[len - 1] != '\n');
}

static int file_row(void *ctx, const struct ls_prow_file *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	struct ls_mfile *v = ls_array_grow(m->files, &L->cap, m->nfiles, sizeof(*v), 256), *f;
	const char *slash;

	if (!v)
		return -ENOMEM;
	m->files = v;
	f = &m->files[m->nfiles];
	memset(f, 0, sizeof(*f));
	f->id = r->id;
	f->path = strdup(r->path ?: "<unknown>");
	if (!f->path)
		return -ENOMEM;
	slash = strrchr(f->path, '/');
	f->name = slash && slash[1] ? slash + 1 : f->path;
	f->kind = r->kind && !strcmp(r->kind, "library") ? "library" : "python";
	f->unavailable = lsm_dup(r->unavailable);
	if (r->text) {
		f->len = r->len;
		f->text = malloc(f->len + 1);
		if (f->text) {
			memcpy(f->text, r->text, f->len);
			f->text[f->len] = 0;
			f->nlines = lsm_count_lines(f->text, f->len);
		}
	}
	m->nfiles++;
	return ls_hashmap__set(&L->file_idx, f->id, m->nfiles - 1) ? -ENOMEM : 0;
}

static int func_row(void *ctx, const struct ls_prow_func *r)
{
	struct loader *L = ctx;
	struct ls_model *m = L->m;
	struct ls_mfunc *v = ls_array_grow(m->funcs, &L->cap, m->nfuncs, sizeof(*v), 256), *f;
	uint64_t fi;

	if (!v)
		return -ENOMEM;
	m->funcs = v;
	if (!ls_hashmap__get(&L->file_idx, r->file_id, &fi) || !r->qualname)
		return 0; /* a function of a file this profile does not hold */
	f = &m->funcs[m->nfuncs];
	f->id = r->id;
	f->file = (int)fi;
	f->qualname = strdup(r->qualname);
	f->firstlineno = r->firstlineno;
	if (!f->qualname)
		return -ENOMEM;
	m->nfuncs++;
	return ls_hashmap__set(&L->func_idx, f->id, m->nfuncs - 1) ? -ENOMEM : 0;
}

static int stack_row(void *ctx, const struct ls_prow_stack *r)
{
	struct loader *L = ctx;
	struct stack *s = &L->stacks[r->id];
	size_t bytes = (size_t)r->depth * 2 * sizeof(uint32_t);

	if (s->frames) { /* the same id twice */
		L->m->damaged_rows++;
		return 0;
	}
	s->frames = malloc(bytes);
	if (!s->frames)
		return -ENOMEM;
	memcpy(s->frames, r->frames, bytes);
	s->depth = r->depth;
	if ((size_t)r->depth > L->scratch)
		L->scratch = r->depth;
	return 0;
}

static int load_stacks(struct loader *L)
{
	int64_t max;
	int err = ls_profile__max_stack_id(L->prof, &max);

	if (err)
		return err;
	L->nstacks = max + 1;
	L->stacks = calloc(L->nstacks, sizeof(*L->stacks));
	if (!L->stacks)
		return -ENOMEM;
	return ls_profile__stacks(L->prof, max, stack_row, L);
}

static int sample_row(void *ctx, const struct ls_prow_sample_sum *r)
{
	struct loader *L = ctx;
	uint64_t proc;

	if (!ls_hashmap__get(&L->proc_idx, r->proc_id, &proc)) {
		L->m->damaged_rows++;
		return 0;
	}
	return lsm_add_row(L, proc, r->stack_id, r->kind, r->mode, r->count, r->weight_ns);
}

static int load_samples(struct loader *L)
{
	return ls_profile__sample_sums(L->prof, sample_row, L);
}

/* A stored stack's innermost project frame, else its innermost known one: false when none. */
static bool stack_line(struct loader *L, int64_t id, int *file, int *line, bool *project)
{
	const struct stack *s = id > 0 && (size_t)id < L->nstacks ? &L->stacks[id] : NULL;
	struct ls_model *m = L->m;
	bool found = false;

	*project = false;
	for (int k = 0; s && k < s->depth; k++) {
		int f = lsm_func_at(L, s->frames[2 * k]);

		if (f < 0)
			continue;
		*project = ls_mfile__project(&m->files[m->funcs[f].file]);
		if (!found || *project) {
			*file = m->funcs[f].file;
			*line = (int)s->frames[2 * k + 1];
			found = true;
		}
		if (*project)
			break;
	}
	return found;
}

/*
 * The line that started each child: the innermost project frame of its parent's spawn stack;
 * when that has none (a library's thread started it), the line of the parent's thread that
 * waited for it meanwhile, when the recorder found one.
 */
static void resolve_spawns(struct loader *L)
{
	struct ls_model *m = L->m;

	for (size_t i = 0; i < m->nprocs; i++) {
		struct ls_mproc *p = &m->procs[i];
		int file, line;
		bool project = false;

		if (stack_line(L, p->spawn_stack, &file, &line, &project)) {
			p->spawn_file = file;
			p->spawn_line = line;
		}
		if (!project && stack_line(L, p->waiter_stack, &file, &line, &project) && project) {
			p->spawn_file = file;
			p->spawn_line = line;
			p->by_waiter = true;
		}
		if (p->spawn_file >= 0)
			m->files[p->spawn_file].used = true;
	}
}

/*
 * A function that ran (its code object says where it starts) but that the stored text does not
 * define there: the file changed on disk after the process loaded it, so the text shown is not
 * what ran. Lambdas, comprehensions and module bodies (names in <>) have no def to look for.
 */
static void check_stale(struct ls_model *m, const struct ls_mfunc *fn)
{
	struct ls_mfile *f = &m->files[fn->file];
	const char *name = strrchr(fn->qualname, '.');
	char why[320];

	name = name ? name + 1 : fn->qualname;
	if (!f->text || strcmp(f->kind, "python") || f->stale || name[0] == '<' ||
	    fn->firstlineno <= 0)
		return;
	snprintf(why, sizeof(why),
		 "changed on disk after it was loaded: %.200s is not defined at line %d, where its "
		 "code says it starts",
		 fn->qualname, fn->firstlineno);
	f->stale = strdup(why);
}

/*
 * Static index of the project sources: symbol links for the source view, and each function's
 * definition line and extent (Lines). Library sources are not indexed: they are not link targets.
 */
static int index_sources(struct ls_model *m)
{
	int err = ls_pyindex__new(&m->index);

	if (err)
		return err;
	for (size_t i = 0; i < m->nfiles; i++) {
		const struct ls_mfile *f = &m->files[i];

		if (!f->text || !ls_mfile__project(f))
			continue;
		err = ls_pyindex__add_source(m->index, i, f->path, f->text, f->len);
		if (err == -ENOMEM)
			return err;
		/* a source the indexer refuses (too large, not text) just gets no links */
	}
	err = ls_pyindex__resolve(m->index);
	if (err < 0)
		return err;
	for (size_t i = 0; i < m->nfuncs; i++) {
		struct ls_mfunc *fn = &m->funcs[i];
		const struct ls_pyindex_def *defs;
		int d = ls_pyindex__find_def(m->index, fn->file, fn->qualname, fn->firstlineno);

		fn->def_line = fn->firstlineno;
		fn->end_line = 0;
		if (d < 0)
			check_stale(m, fn);
		if (d < 0 || ls_pyindex__defs(m->index, fn->file, &defs) <= d)
			continue;
		fn->def_line = defs[d].def_line;
		fn->end_line = defs[d].end_line;
	}
	return 0;
}

static void loader_release(struct loader *L)
{
	for (size_t i = 0; i < L->nstacks; i++)
		free(L->stacks[i].frames);
	free(L->stacks);
	ls_hashmap_release(&L->file_idx);
	ls_hashmap_release(&L->func_idx);
	ls_hashmap_release(&L->proc_idx);
	ls_hashmap_release(&L->line_idx);
	ls_hashmap_release(&L->fstat_idx);
	ls_hashmap_release(&L->edge_idx);
	free(L->func_shift);
}

int ls_model__load(const char *path, struct ls_model **out)
{
	return ls_model__load_flags(path, 0, out);
}

int ls_model__load_flags(const char *path, unsigned flags, struct ls_model **out)
{
	struct ls_model_opts o = {.flags = flags};

	return ls_model__load_opts(path, &o, out);
}

static int load_meta(struct loader *L)
{
	L->cap = 0;
	return ls_profile__meta(L->prof, meta_row, L);
}

static int load_files(struct loader *L)
{
	L->cap = 0;
	return ls_profile__files(L->prof, file_row, L);
}

static int load_funcs(struct loader *L)
{
	L->cap = 0;
	return ls_profile__funcs(L->prof, func_row, L);
}

/* What was lost, and the recorder's own cost, from the run statistics. */
static void load_stats(struct loader *L)
{
	struct ls_model *m = L->m;
	int64_t drops = stat_of(L, "ringbuf_drops");

	/* of the ring buffer's drops, the samples; the rest were other records */
	m->lost_ringbuf = stat_of(L, "sample_drops");
	m->collector_cpu_ns = ls_profile__stat(L->prof, "collector_cpu_ns", -1);
	m->collector_setup_cpu_ns = ls_profile__stat(L->prof, "collector_setup_cpu_ns", -1);
	if (m->collector_cpu_ns < -1)
		m->collector_cpu_ns = -1;
	if (m->collector_setup_cpu_ns < -1)
		m->collector_setup_cpu_ns = -1;
	m->lost_records = drops > m->lost_ringbuf ? drops - m->lost_ringbuf : 0;
	/* off-CPU, trace and GPU records a preempted program's busy buffer turned away */
	m->lost_records += stat_of(L, "scratch_busy");
	/* off-CPU intervals with no room to be noted, or whose thread exited unreported */
	m->lost_records += stat_of(L, "offcpu_pending_full") + stat_of(L, "offcpu_lost_at_exit");
	m->lost_read = stat_of(L, "read_fail");
	m->lost_trace_batches = stat_of(L, "trace_lost_batches");
	if (m->lost_trace_batches < 0)
		m->lost_trace_batches = 0;
	m->lost_truncated = stat_of(L, "truncated_stacks");
	m->unresolved_frames = stat_of(L, "unresolved_frames");
	m->lost_unresolved = stat_of(L, "unresolved_samples");
	m->taken = ls_profile__stat(L->prof, "taken", -1);
}

/* The recording's settings, from its meta. */
static void apply_meta(struct ls_model *m)
{
	const char *v;

	v = ls_model__meta(m, "elapsed_ns");
	m->elapsed_s = v ? strtoll(v, NULL, 10) / 1e9 : 0;
	v = ls_model__meta(m, "period_ns");
	m->period_ns = v ? strtoull(v, NULL, 10) : 0;
	v = ls_model__meta(m, "mode");
	m->wall = m->wall || (v && !strcmp(v, "wall"));
	v = ls_model__meta(m, "memory");
	m->memory = v && !strcmp(v, "1");
	v = ls_model__meta(m, "gpu");
	m->gpu_requested = v && !strcmp(v, "1");
}

/* Everything the report shows, table by table; the order matters where noted. */
static int load_all(struct loader *L, const struct ls_model_opts *o)
{
	unsigned flags = o->flags;
	bool spark; /* the profile holds Spark logs */
	const char *method;
	int err;

	if ((err = load_meta(L)) || (err = load_procs(L)) || (err = load_files(L)) ||
	    (err = load_funcs(L)) || (err = load_stacks(L)) ||
	    (err = lsm_load_notebooks(L)) || /* moves cells' frames: before the samples */
	    (err = load_samples(L)))
		return err;
	/* Spark actions without a call site are matched on the timeline */
	spark = ls_profile__has_spark(L->prof);
	if (o->nspark_paths || spark)
		flags |= LS_MODEL_STACKS | LS_MODEL_TIMELINE;
	/* the GPU timeline and why the device was idle are made of both timelines */
	if (!strcmp(ls_model__meta(L->m, "timeline") ?: "0", "1") &&
	    !strcmp(ls_model__meta(L->m, "gpu") ?: "0", "1"))
		flags |= LS_MODEL_STACKS | LS_MODEL_TIMELINE;
	if ((flags & (LS_MODEL_STACKS | LS_MODEL_TIMELINE)) &&
	    (err = lsm_load_stacks(L, flags & LS_MODEL_TIMELINE)))
		return err;
	if ((err = lsm_load_rss(L)) || (err = lsm_load_gpu(L)) ||
	    (err = ls_gpu_util__build(L->m, &L->m->gpu_util, &L->m->ngpu_util,
				      &L->m->gpu_util_skipped)))
		return err;
	method = ls_model__meta(L->m, "method");
	L->m->sampled = !method || strcmp(method, "Tracing");
	if ((err = lsm_load_trace(L)) || (err = index_sources(L->m)))
		return err;
	resolve_spawns(L);
	load_stats(L);
	if ((err = lsm_load_execs(L)) || (err = lsm_load_cost(L)))
		return err;
	apply_meta(L->m);
	/* last: actions are matched on everything above */
	return lsm_load_spark(L, spark, o->spark_paths, o->nspark_paths);
}

int ls_model__load_opts(const char *path, const struct ls_model_opts *o, struct ls_model **out)
{
	struct loader L = {};
	int err;

	err = ls_profile__open(path, &L.prof);
	if (err)
		return err;
	L.m = calloc(1, sizeof(*L.m));
	if (!L.m) {
		ls_profile__close(L.prof);
		return -ENOMEM;
	}
	L.m->collector_cpu_ns = L.m->collector_setup_cpu_ns = -1;
	ls_hashmap_init(&L.file_idx);
	ls_hashmap_init(&L.func_idx);
	ls_hashmap_init(&L.proc_idx);
	ls_hashmap_init(&L.line_idx);
	ls_hashmap_init(&L.fstat_idx);
	ls_hashmap_init(&L.edge_idx);
	err = load_all(&L, o);
	if (!err) /* rows the reader refused */
		L.m->damaged_rows += ls_profile__damaged(L.prof);
	loader_release(&L);
	ls_profile__close(L.prof);
	if (err) {
		ls_model__free(L.m);
		return err == -ENOMEM ? ls_err(err, "out of memory loading %s", path) : err;
	}
	*out = L.m;
	return 0;
}

void ls_model__free(struct ls_model *m)
{
	if (!m)
		return;
	ls_spark__free(m->spark);
	for (size_t i = 0; i < m->nmeta; i++) {
		free(m->meta_keys[i]);
		free(m->meta_vals[i]);
	}
	free(m->meta_keys);
	free(m->meta_vals);
	for (size_t i = 0; i < m->nprocs; i++) {
		struct ls_mproc *p = &m->procs[i];

		free(p->comm);
		free(p->argv);
		free(p->exe);
		free(p->python);
		free(p->python_build);
		free(p->note);
		free(p->gpu_message);
		free(p->trace);
		free(p->cgroup);
		free(p->master_addr);
		free(p->host);
		free(p->gpu_nvml_note);
		lsm_free_execs(p);
	}
	free(m->procs);
	for (size_t i = 0; i < m->ngpu_devs; i++) {
		free(m->gpu_devs[i].name);
		free(m->gpu_devs[i].driver);
		free(m->gpu_devs[i].uuid);
	}
	free(m->gpu_devs);
	ls_gpu_util__free(m->gpu_util, m->ngpu_util);
	for (size_t i = 0; i < m->ncost_progs; i++)
		free(m->cost_progs[i].name);
	free(m->cost_progs);
	for (size_t i = 0; i < m->nfiles; i++) {
		free(m->files[i].path);
		free(m->files[i].unavailable);
		free(m->files[i].stale);
		free(m->files[i].text);
		for (size_t k = 0; k < m->files[i].ncells; k++)
			free(m->files[i].cells[k].unavailable);
		free(m->files[i].cells);
	}
	free(m->files);
	free(m->nbruns);
	for (size_t i = 0; i < m->nfuncs; i++)
		free(m->funcs[i].qualname);
	free(m->funcs);
	free(m->lines);
	free(m->fstats);
	free(m->edges);
	lsm_free_stacks(m->stacks);
	for (size_t i = 0; i < m->nrss; i++) {
		free(m->rss[i].t_ns);
		free(m->rss[i].rss);
		free(m->rss[i].file);
		free(m->rss[i].line);
		free(m->rss[i].event);
	}
	free(m->rss);
	ls_pyindex__free(m->index);
	free(m);
}
