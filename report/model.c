// SPDX-License-Identifier: MIT
/* Loads a stored profile and aggregates its sample rows by line, function and caller edge. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"
#include "log.h"
#include "model.h"
#include "model_int.h"
#include "spark.h"
#include "procfs.h"
#include "pyindex.h"
#include "store.h"

char *lsm_col_dup(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

int64_t lsm_col_id(sqlite3_stmt *st, int i)
{
	return sqlite3_column_type(st, i) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, i);
}

/* Deeper than any stack the recorder stores (LS_MAX_FRAMES and a spawn chain); CPython's lines */
#define LS_MODEL_MAX_DEPTH 65536
#define LS_MODEL_MAX_LINE  INT32_MAX

int lsm_step(struct loader *L, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	/* a corrupt page is an error, not the end of a table: never a silently short report */
	return ls_err(-EIO, "profile is damaged: %s", sqlite3_errmsg(L->db));
}

int lsm_prepare(struct loader *L, const char *sql, sqlite3_stmt **st)
{
	if (sqlite3_prepare_v2(L->db, sql, -1, st, NULL) != SQLITE_OK)
		return ls_err(-EINVAL, "profile query failed: %s", sqlite3_errmsg(L->db));
	return 0;
}

static int load_meta(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	int err = lsm_prepare(L, "SELECT key, value FROM meta", &st);

	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		char **k = ls_array_grow(m->meta_keys, &cap, m->nmeta, sizeof(char *), 256), **v;

		if (!k) {
			err = -ENOMEM;
			break;
		}
		m->meta_keys = k;
		v = realloc(m->meta_vals, cap * sizeof(char *));
		if (!v) {
			err = -ENOMEM;
			break;
		}
		m->meta_vals = v;
		m->meta_keys[m->nmeta] = lsm_col_dup(st, 0);
		m->meta_vals[m->nmeta] = lsm_col_dup(st, 1);
		m->nmeta++;
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
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

/* A run statistic, or absent when the profile does not record it. */
static int64_t stat_or(struct loader *L, const char *key, int64_t absent)
{
	sqlite3_stmt *st;
	int64_t v = absent;

	if (lsm_prepare(L, "SELECT value FROM stats WHERE key = ?", &st))
		return absent;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static int64_t stat_of(struct loader *L, const char *key)
{
	return stat_or(L, key, 0);
}

/* a rank or job size as the recorder checks them (jobenv.h), or -1 */
static int rank_col(sqlite3_stmt *st, int col)
{
	int64_t v = lsm_col_id(st, col);

	return v >= 0 && v < LS_JOBENV_MAX_RANK ? (int)v : -1;
}

/* every column of processes but the ones schema 5 added */
#define PROC_COLS                                                                                 \
	"SELECT id, pid, ppid, nspid, parent_id, spawn_stack, comm, argv, exe, start_ns, end_ns," \
	" exit_code, python, python_build, note,"                                                 \
	" (SELECT count(*) FROM threads t WHERE t.process_id = p.id), parent_wait_ns, trace,"     \
	" cgroup, cgroup_id, "

static int load_procs(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	/* schema 5 added each process's rank in its job, 6 its host in a merged profile */
	int err = lsm_prepare(
		L,
		L->schema >= 6	 ? PROC_COLS "rank, local_rank, world_size, master_addr,"
					     " (SELECT name FROM hosts h WHERE h.id = p.host_id)"
					     " FROM processes p ORDER BY id"
		: L->schema >= 5 ? PROC_COLS "rank, local_rank, world_size, master_addr, NULL"
					     " FROM processes p ORDER BY id"
				 : PROC_COLS "NULL, NULL, NULL, NULL, NULL"
					     " FROM processes p ORDER BY id",
		&st);

	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		struct ls_mproc *v = ls_array_grow(m->procs, &cap, m->nprocs, sizeof(*v), 256), *p;

		if (!v) {
			err = -ENOMEM;
			break;
		}
		m->procs = v;
		p = &m->procs[m->nprocs];
		memset(p, 0, sizeof(*p));
		p->id = sqlite3_column_int64(st, 0);
		p->pid = sqlite3_column_int(st, 1);
		p->ppid = sqlite3_column_int(st, 2);
		p->nspid = sqlite3_column_int(st, 3);
		p->parent = (int)lsm_col_id(st, 4); /* resolved to an index below */
		p->spawn_stack = lsm_col_id(st, 5);
		p->comm = lsm_col_dup(st, 6);
		p->argv = lsm_col_dup(st, 7);
		p->exe = lsm_col_dup(st, 8);
		p->start_ns = sqlite3_column_int64(st, 9);
		p->end_ns = lsm_col_id(st, 10);
		p->exit_code = (int)lsm_col_id(st, 11);
		p->python = lsm_col_dup(st, 12);
		p->python_build = lsm_col_dup(st, 13);
		p->note = lsm_col_dup(st, 14);
		p->threads = sqlite3_column_int(st, 15);
		p->parent_wait_ns = sqlite3_column_int64(st, 16);
		p->trace = lsm_col_dup(st, 17);
		p->cgroup = lsm_col_dup(st, 18);
		p->cgroup_id = lsm_col_id(st, 19);
		p->rank = rank_col(st, 20);
		p->local_rank = rank_col(st, 21);
		p->world_size = rank_col(st, 22);
		p->master_addr = lsm_col_dup(st, 23);
		p->host = lsm_col_dup(st, 24);
		p->spawn_file = -1;
		m->threads += p->threads;
		m->nprocs++;
		if (ls_hashmap__set(&L->proc_idx, p->id, m->nprocs - 1)) {
			err = -ENOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
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

static int load_files(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	int err =
		lsm_prepare(L,
			    "SELECT f.id, f.path, f.kind, f.unavailable, s.text"
			    " FROM files f LEFT JOIN sources s ON s.id = f.source_id ORDER BY f.id",
			    &st);

	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		struct ls_mfile *v = ls_array_grow(m->files, &cap, m->nfiles, sizeof(*v), 256), *f;
		const void *text;
		const char *slash;

		if (!v) {
			err = -ENOMEM;
			break;
		}
		m->files = v;
		f = &m->files[m->nfiles];
		memset(f, 0, sizeof(*f));
		f->id = sqlite3_column_int64(st, 0);
		f->path = lsm_col_dup(st, 1);
		if (!f->path)
			f->path = strdup("<unknown>");
		slash = strrchr(f->path, '/');
		f->name = slash && slash[1] ? slash + 1 : f->path;
		{
			const char *kind = (const char *)sqlite3_column_text(st, 2);

			f->kind = kind && !strcmp(kind, "library") ? "library" : "python";
		}
		f->unavailable = lsm_col_dup(st, 3);
		text = sqlite3_column_blob(st, 4);
		if (text) {
			f->len = sqlite3_column_bytes(st, 4);
			f->text = malloc(f->len + 1);
			if (f->text) {
				memcpy(f->text, text, f->len);
				f->text[f->len] = 0;
				f->nlines = lsm_count_lines(f->text, f->len);
			}
		}
		m->nfiles++;
		if (ls_hashmap__set(&L->file_idx, f->id, m->nfiles - 1)) {
			err = -ENOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

static int load_funcs(struct loader *L)
{
	int rc = 0;
	struct ls_model *m = L->m;
	sqlite3_stmt *st;
	size_t cap = 0;
	int err = lsm_prepare(
		L, "SELECT id, file_id, qualname, firstlineno FROM functions ORDER BY id", &st);

	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		struct ls_mfunc *v = ls_array_grow(m->funcs, &cap, m->nfuncs, sizeof(*v), 256), *f;
		uint64_t fi;

		if (!v) {
			err = -ENOMEM;
			break;
		}
		m->funcs = v;
		f = &m->funcs[m->nfuncs];
		f->id = sqlite3_column_int64(st, 0);
		f->file = ls_hashmap__get(&L->file_idx, sqlite3_column_int64(st, 1), &fi) ? (int)fi
											  : -1;
		f->qualname = lsm_col_dup(st, 2);
		f->firstlineno = sqlite3_column_int(st, 3);
		if (f->file < 0 || !f->qualname) {
			free(f->qualname);
			continue; /* a function of a file this profile does not hold */
		}
		m->nfuncs++;
		if (ls_hashmap__set(&L->func_idx, f->id, m->nfuncs - 1)) {
			err = -ENOMEM;
			break;
		}
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

static int load_stacks(struct loader *L)
{
	int rc = 0;
	sqlite3_stmt *st;
	int64_t max = 0;
	int err = lsm_prepare(L, "SELECT max(id) FROM stacks", &st);

	if (err)
		return err;
	if (sqlite3_step(st) == SQLITE_ROW)
		max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (max < 0 || max > (1 << 28))
		return ls_err(-EINVAL, "profile has an implausible stack count %lld",
			      (long long)max);
	L->nstacks = max + 1;
	L->stacks = calloc(L->nstacks, sizeof(*L->stacks));
	if (!L->stacks)
		return -ENOMEM;
	err = lsm_prepare(L, "SELECT id, depth, frames FROM stacks", &st);
	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		int64_t id = sqlite3_column_int64(st, 0), depth = sqlite3_column_int64(st, 1);
		int64_t bytes = sqlite3_column_bytes(st, 2);
		const uint32_t *blob = sqlite3_column_blob(st, 2);
		bool bad = false;
		struct stack *s;

		/* 64-bit arithmetic: a depth of 2^29 + 1 must not match an 8-byte blob */
		if (id <= 0 || id > max || depth <= 0 || depth > LS_MODEL_MAX_DEPTH ||
		    bytes != depth * 8 || !blob || L->stacks[id].frames) {
			L->m->damaged_rows++;
			continue;
		}
		for (int64_t i = 0; i < depth && !bad; i++)
			bad = blob[2 * i + 1] > LS_MODEL_MAX_LINE;
		if (bad) {
			L->m->damaged_rows++;
			continue;
		}
		s = &L->stacks[id];
		s->frames = malloc(bytes);
		if (!s->frames) {
			err = -ENOMEM;
			break;
		}
		memcpy(s->frames, blob, bytes);
		s->depth = depth;
		if ((size_t)depth > L->scratch)
			L->scratch = depth;
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

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
static int add_row(struct loader *L, int proc, int64_t stack_id, int kind, int mode, int64_t count,
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

static int load_samples(struct loader *L)
{
	int rc = 0;
	sqlite3_stmt *st;
	int err = lsm_prepare(L,
			      "SELECT s.process_id, s.stack_id, s.kind, s.mode, sum(s.count),"
			      " sum(" LSM_SCALED_WEIGHT ")"
			      " FROM samples s LEFT JOIN (" LSM_CPU_SCALE_SQL ") c"
			      " ON c.c_proc = s.process_id AND c.c_tid = s.tid"
			      " GROUP BY s.process_id, s.stack_id, s.kind, s.mode"
			      " ORDER BY s.kind, s.process_id, s.stack_id, s.mode",
			      &st);

	if (err)
		return err;
	while (!err && (rc = lsm_step(L, st)) > 0) {
		uint64_t proc;

		int64_t kind = sqlite3_column_int64(st, 2), count = sqlite3_column_int64(st, 4);
		int64_t weight = sqlite3_column_int64(st, 5);

		if (!ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 0), &proc) ||
		    kind < LS_CLASS_CPU || kind > LS_CLASS_RUNQ || count < 0 || weight < 0) {
			L->m->damaged_rows++;
			continue;
		}
		err = add_row(L, proc, sqlite3_column_int64(st, 1), (int)kind,
			      sqlite3_column_int(st, 3), count, weight);
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	return err;
}

/* The line that started each child: the innermost project frame of its parent's spawn stack. */
static void resolve_spawns(struct loader *L)
{
	struct ls_model *m = L->m;

	for (size_t i = 0; i < m->nprocs; i++) {
		struct ls_mproc *p = &m->procs[i];
		const struct stack *s;

		if (p->spawn_stack <= 0 || (size_t)p->spawn_stack >= L->nstacks)
			continue;
		s = &L->stacks[p->spawn_stack];
		for (int k = 0; k < s->depth; k++) {
			int f = lsm_func_at(L, s->frames[2 * k]);

			if (f < 0)
				continue;
			if (p->spawn_file < 0 || ls_mfile__project(&m->files[m->funcs[f].file])) {
				p->spawn_file = m->funcs[f].file;
				p->spawn_line = (int)s->frames[2 * k + 1];
				m->files[p->spawn_file].used = true;
			}
			if (ls_mfile__project(&m->files[m->funcs[f].file]))
				break;
		}
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

int ls_model__load_opts(const char *path, const struct ls_model_opts *o, struct ls_model **out)
{
	unsigned flags = o->flags;
	bool spark = false; /* the profile holds Spark logs */
	struct ls_store *store;
	struct loader L = {};
	const char *v;
	int err;

	err = ls_store__open(path, &store);
	if (err)
		return err;
	L.m = calloc(1, sizeof(*L.m));
	if (L.m)
		L.m->collector_cpu_ns = L.m->collector_setup_cpu_ns = -1;
	if (!L.m) {
		ls_store__free(store);
		return -ENOMEM;
	}
	L.db = ls_store__db(store);
	L.schema = ls_store__version(store);
	ls_hashmap_init(&L.file_idx);
	ls_hashmap_init(&L.func_idx);
	ls_hashmap_init(&L.proc_idx);
	ls_hashmap_init(&L.line_idx);
	ls_hashmap_init(&L.fstat_idx);
	ls_hashmap_init(&L.edge_idx);

	err = load_meta(&L);
	if (!err)
		err = load_procs(&L);
	if (!err)
		err = load_files(&L);
	if (!err)
		err = load_funcs(&L);
	if (!err)
		err = load_stacks(&L);
	if (!err)
		err = lsm_load_notebooks(&L);
	if (!err)
		err = load_samples(&L);
	/* Spark actions without a call site are matched on the timeline */
	spark = !err && lsm_has_spark(&L);
	if (!err && (o->nspark_paths || spark))
		flags |= LS_MODEL_STACKS | LS_MODEL_TIMELINE;
	if (!err && (flags & (LS_MODEL_STACKS | LS_MODEL_TIMELINE)))
		err = lsm_load_stacks(&L, flags & LS_MODEL_TIMELINE);
	if (!err)
		err = lsm_load_rss(&L);
	if (!err)
		err = lsm_load_gpu(&L);
	if (!err) {
		const char *method = ls_model__meta(L.m, "method");

		L.m->sampled = !method || strcmp(method, "Tracing");
		err = lsm_load_trace(&L);
	}
	if (!err)
		err = index_sources(L.m);
	if (!err)
		resolve_spawns(&L);
	if (!err) {
		int64_t drops = stat_of(&L, "ringbuf_drops");

		/* of the ring buffer's drops, the samples; the rest were other records */
		L.m->lost_ringbuf = stat_of(&L, "sample_drops");
		L.m->collector_cpu_ns = stat_or(&L, "collector_cpu_ns", -1);
		L.m->collector_setup_cpu_ns = stat_or(&L, "collector_setup_cpu_ns", -1);
		if (L.m->collector_cpu_ns < -1)
			L.m->collector_cpu_ns = -1;
		if (L.m->collector_setup_cpu_ns < -1)
			L.m->collector_setup_cpu_ns = -1;
		L.m->lost_records = drops > L.m->lost_ringbuf ? drops - L.m->lost_ringbuf : 0;
		/* off-CPU, trace and GPU records a preempted program's busy buffer turned away */
		L.m->lost_records += stat_of(&L, "scratch_busy");
		/* off-CPU intervals with no room to be noted, or whose thread exited unreported */
		L.m->lost_records +=
			stat_of(&L, "offcpu_pending_full") + stat_of(&L, "offcpu_lost_at_exit");
		L.m->lost_read = stat_of(&L, "read_fail");
		L.m->lost_trace_batches = stat_of(&L, "trace_lost_batches");
		if (L.m->lost_trace_batches < 0)
			L.m->lost_trace_batches = 0;
		L.m->lost_truncated = stat_of(&L, "truncated_stacks");
		L.m->unresolved_frames = stat_of(&L, "unresolved_frames");
		L.m->lost_unresolved = stat_of(&L, "unresolved_samples");
		L.m->taken = stat_or(&L, "taken", -1);
		err = lsm_load_execs(&L);
	if (!err)
		err = lsm_load_cost(&L);
	}
	if (!err) {
		v = ls_model__meta(L.m, "elapsed_ns");
		L.m->elapsed_s = v ? strtoll(v, NULL, 10) / 1e9 : 0;
		v = ls_model__meta(L.m, "period_ns");
		L.m->period_ns = v ? strtoull(v, NULL, 10) : 0;
		v = ls_model__meta(L.m, "mode");
		L.m->wall = L.m->wall || (v && !strcmp(v, "wall"));
		v = ls_model__meta(L.m, "memory");
		L.m->memory = v && !strcmp(v, "1");
		v = ls_model__meta(L.m, "gpu");
		L.m->gpu_requested = v && !strcmp(v, "1");
	}
	/* last: actions are matched on everything above */
	if (!err)
		err = lsm_load_spark(&L, spark, o->spark_paths, o->nspark_paths);
	loader_release(&L);
	ls_store__free(store);
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
