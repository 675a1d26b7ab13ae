// SPDX-License-Identifier: MIT
/*
 * Reading a profile: opening it, and the core tables a report is built from (meta, stats,
 * processes, files, functions, stacks, samples). The collector-specific tables are read in
 * profile_read_aux.c.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "jobenv.h"
#include "linescope.h"
#include "log.h"
#include "profile_int.h"
#include "store.h"

int64_t ls_profile__meta_num(const char *v, int64_t dflt, int64_t max)
{
	char *end;
	long long x;

	if (!v)
		return dflt;
	errno = 0;
	x = strtoll(v, &end, 10);
	return errno || end == v || *end || x < 0 || x > max ? dflt : x;
}

int ls_profile__open(const char *path, struct ls_profile **out)
{
	struct ls_profile *p = calloc(1, sizeof(*p));
	int err;

	if (!p)
		return -ENOMEM;
	err = ls_store__open(path, &p->store); /* checks the schema version */
	if (err) {
		free(p);
		return err;
	}
	p->db = ls_store__db(p->store);
	p->schema = ls_store__version(p->store);
	*out = p;
	return 0;
}

void ls_profile__close(struct ls_profile *p)
{
	if (!p)
		return;
	ls_store__free(p->store);
	free(p);
}

int ls_profile__schema(const struct ls_profile *p)
{
	return p->schema;
}

int64_t ls_profile__damaged(const struct ls_profile *p)
{
	return p->damaged;
}

const char *lsp_text(sqlite3_stmt *st, int col)
{
	return (const char *)sqlite3_column_text(st, col);
}

int64_t lsp_id(sqlite3_stmt *st, int col)
{
	return sqlite3_column_type(st, col) == SQLITE_NULL ? -1 : sqlite3_column_int64(st, col);
}

int lsp_each(struct ls_profile *p, const char *sql, int (*row)(sqlite3_stmt *st, struct lsp_cb *cb),
	     struct lsp_cb *cb)
{
	sqlite3_stmt *st;
	int rc, err = 0;

	if (sqlite3_prepare_v2(p->db, sql, -1, &st, NULL) != SQLITE_OK)
		return ls_err(-EINVAL, "profile query failed: %s", sqlite3_errmsg(p->db));
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		if ((err = row(st, cb)))
			break;
	/* a corrupt page is an error, not the end of a table: never a silently short report */
	if (!err && rc != SQLITE_DONE)
		err = ls_err(-EIO, "profile is damaged: %s", sqlite3_errmsg(p->db));
	sqlite3_finalize(st);
	return err;
}

static int meta_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_meta r = {lsp_text(st, 0), lsp_text(st, 1)};

	return LSP_CALL(ls_prow_meta, cb, &r);
}

int ls_profile__meta(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_meta *r),
		     void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p, "SELECT key, value FROM meta", meta_row, &cb);
}

int64_t ls_profile__stat(struct ls_profile *p, const char *key, int64_t absent)
{
	sqlite3_stmt *st;
	int64_t v = absent;

	if (sqlite3_prepare_v2(p->db, "SELECT value FROM stats WHERE key = ?", -1, &st, NULL) !=
	    SQLITE_OK)
		return absent;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* a rank or job size as the recorder checks them (jobenv.h), or -1 */
static int rank_col(sqlite3_stmt *st, int col)
{
	int64_t v = lsp_id(st, col);

	return v >= 0 && v < LS_JOBENV_MAX_RANK ? (int)v : -1;
}

static int proc_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_proc r = {
		.id = sqlite3_column_int64(st, 0),
		.pid = sqlite3_column_int(st, 1),
		.ppid = sqlite3_column_int(st, 2),
		.nspid = sqlite3_column_int(st, 3),
		.parent_id = lsp_id(st, 4),
		.spawn_stack = lsp_id(st, 5),
		.comm = lsp_text(st, 6),
		.argv = lsp_text(st, 7),
		.exe = lsp_text(st, 8),
		.start_ns = sqlite3_column_int64(st, 9),
		.end_ns = lsp_id(st, 10),
		.exit_code = (int)lsp_id(st, 11),
		.python = lsp_text(st, 12),
		.python_build = lsp_text(st, 13),
		.note = lsp_text(st, 14),
		.threads = sqlite3_column_int(st, 15),
		.parent_wait_ns = sqlite3_column_int64(st, 16),
		.trace = lsp_text(st, 17),
		.cgroup = lsp_text(st, 18),
		.cgroup_id = lsp_id(st, 19),
		.rank = rank_col(st, 20),
		.local_rank = rank_col(st, 21),
		.world_size = rank_col(st, 22),
		.master_addr = lsp_text(st, 23),
		.host = lsp_text(st, 24),
		.waiter_stack = lsp_id(st, 25),
	};

	return LSP_CALL(ls_prow_proc, cb, &r);
}

/* every column of processes but the ones schema 5 added */
#define PROC_COLS                                                                                 \
	"SELECT id, pid, ppid, nspid, parent_id, spawn_stack, comm, argv, exe, start_ns, end_ns," \
	" exit_code, python, python_build, note,"                                                 \
	" (SELECT count(*) FROM threads t WHERE t.process_id = p.id), parent_wait_ns, trace,"     \
	" cgroup, cgroup_id, "

int ls_profile__procs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_proc *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	/*
	 * schema 5 added each process's rank in its job, 6 its host in a merged profile, 8 the
	 * stack of the thread that waited for it
	 */
	return lsp_each(
		p,
		p->schema >= 8	 ? PROC_COLS "rank, local_rank, world_size, master_addr,"
					     " (SELECT name FROM hosts h WHERE h.id = p.host_id),"
					     " waiter_stack FROM processes p ORDER BY id"
		: p->schema >= 6 ? PROC_COLS
			"rank, local_rank, world_size, master_addr,"
			" (SELECT name FROM hosts h WHERE h.id = p.host_id), NULL"
			" FROM processes p ORDER BY id"
		: p->schema >= 5 ? PROC_COLS "rank, local_rank, world_size, master_addr, NULL, NULL"
					     " FROM processes p ORDER BY id"
				 : PROC_COLS "NULL, NULL, NULL, NULL, NULL, NULL"
					     " FROM processes p ORDER BY id",
		proc_row, &cb);
}

static int file_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_file r = {
		.id = sqlite3_column_int64(st, 0),
		.path = lsp_text(st, 1),
		.kind = lsp_text(st, 2),
		.unavailable = lsp_text(st, 3),
		.text = sqlite3_column_blob(st, 4),
	};

	if (r.text)
		r.len = sqlite3_column_bytes(st, 4);
	return LSP_CALL(ls_prow_file, cb, &r);
}

int ls_profile__files(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_file *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT f.id, f.path, f.kind, f.unavailable, s.text"
			" FROM files f LEFT JOIN sources s ON s.id = f.source_id ORDER BY f.id",
			file_row, &cb);
}

static int func_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_func r = {
		.id = sqlite3_column_int64(st, 0),
		.file_id = sqlite3_column_int64(st, 1),
		.qualname = lsp_text(st, 2),
		.firstlineno = sqlite3_column_int(st, 3),
	};

	return LSP_CALL(ls_prow_func, cb, &r);
}

int ls_profile__funcs(struct ls_profile *p, int (*fn)(void *ctx, const struct ls_prow_func *r),
		      void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p, "SELECT id, file_id, qualname, firstlineno FROM functions ORDER BY id",
			func_row, &cb);
}

int ls_profile__max_stack_id(struct ls_profile *p, int64_t *max)
{
	sqlite3_stmt *st;

	*max = 0;
	if (sqlite3_prepare_v2(p->db, "SELECT max(id) FROM stacks", -1, &st, NULL) != SQLITE_OK)
		return ls_err(-EINVAL, "profile query failed: %s", sqlite3_errmsg(p->db));
	if (sqlite3_step(st) == SQLITE_ROW)
		*max = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (*max < 0 || *max > LS_PROFILE_MAX_STACKS)
		return ls_err(-EINVAL, "profile has an implausible stack count %lld",
			      (long long)*max);
	return 0;
}

struct stacks_cb {
	struct lsp_cb cb;
	int64_t max;
};

static int stack_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	int64_t id = sqlite3_column_int64(st, 0), depth = sqlite3_column_int64(st, 1);
	int64_t bytes = sqlite3_column_bytes(st, 2), max = ((struct stacks_cb *)cb)->max;
	const uint32_t *blob = sqlite3_column_blob(st, 2);
	struct ls_prow_stack r;

	/* 64-bit arithmetic: a depth of 2^29 + 1 must not match an 8-byte blob */
	if (id <= 0 || id > max || depth <= 0 || depth > LS_PROFILE_MAX_DEPTH ||
	    bytes != depth * 8 || !blob)
		goto refused;
	for (int64_t i = 0; i < depth; i++)
		if (blob[2 * i + 1] > INT32_MAX)
			goto refused;
	r = (struct ls_prow_stack){.id = id, .depth = (int)depth, .frames = blob};
	return LSP_CALL(ls_prow_stack, cb, &r);
refused:
	cb->p->damaged++;
	return 0;
}

int ls_profile__stacks(struct ls_profile *p, int64_t max,
		       int (*fn)(void *ctx, const struct ls_prow_stack *r), void *ctx)
{
	struct stacks_cb cb = {LSP_CB(p, fn, ctx), max};

	return lsp_each(p, "SELECT id, depth, frames FROM stacks", stack_row, &cb.cb);
}

/*
 * On-CPU samples of a thread are scaled to the CPU time the scheduler accounted for it during the
 * recording, when the profile has it: the timer sample count carries noise at every preemption,
 * GIL hand-off and vCPU stall, the kernel's accounting does not. Lines keep their shares of the
 * thread's samples. Left as sampled: threads under 100 ms (the exit value can be one scheduler
 * tick stale) and factors outside [0.5, 2] (something does not match, e.g. a reused tid).
 * Columns c_proc, c_tid and f (the factor); SCALED_WEIGHT is a samples row's weight with it.
 */
#define CPU_SCALE_SQL                                                                    \
	"SELECT t.process_id AS c_proc, t.tid AS c_tid, t.cpu_ns * 1.0 / w.w AS f"       \
	" FROM threads t JOIN (SELECT process_id, tid, sum(weight_ns) AS w FROM samples" \
	" WHERE kind = 0 GROUP BY process_id, tid) w"                                    \
	" ON w.process_id = t.process_id AND w.tid = t.tid"                              \
	" WHERE t.cpu_ns >= 100000000 AND w.w >= 100000000"                              \
	" AND t.cpu_ns BETWEEN w.w / 2 AND w.w * 2"
#define SCALED_WEIGHT                              \
	"CASE WHEN s.kind = 0 AND c.f IS NOT NULL" \
	" THEN CAST(round(s.weight_ns * c.f) AS INTEGER) ELSE s.weight_ns END"

static bool sample_ok(int64_t kind, int64_t count, int64_t weight)
{
	return kind >= LS_CLASS_CPU && kind <= LS_CLASS_RUNQ && count >= 0 && weight >= 0;
}

static int sum_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	struct ls_prow_sample_sum r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.stack_id = sqlite3_column_int64(st, 1),
		.kind = (int)sqlite3_column_int64(st, 2),
		.mode = sqlite3_column_int(st, 3),
		.count = sqlite3_column_int64(st, 4),
		.weight_ns = sqlite3_column_int64(st, 5),
	};

	if (!sample_ok(sqlite3_column_int64(st, 2), r.count, r.weight_ns)) {
		cb->p->damaged++;
		return 0;
	}
	return LSP_CALL(ls_prow_sample_sum, cb, &r);
}

int ls_profile__sample_sums(struct ls_profile *p,
			    int (*fn)(void *ctx, const struct ls_prow_sample_sum *r), void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT s.process_id, s.stack_id, s.kind, s.mode, sum(s.count),"
			" sum(" SCALED_WEIGHT ")"
			" FROM samples s LEFT JOIN (" CPU_SCALE_SQL ") c"
			" ON c.c_proc = s.process_id AND c.c_tid = s.tid"
			" GROUP BY s.process_id, s.stack_id, s.kind, s.mode"
			" ORDER BY s.kind, s.process_id, s.stack_id, s.mode",
			sum_row, &cb);
}

static int thread_sample_row(sqlite3_stmt *st, struct lsp_cb *cb)
{
	int64_t tid = sqlite3_column_int64(st, 1);
	struct ls_prow_thread_sample r = {
		.proc_id = sqlite3_column_int64(st, 0),
		.stack_id = sqlite3_column_int64(st, 2),
		.kind = (int)sqlite3_column_int64(st, 3),
		.count = sqlite3_column_int64(st, 4),
		.weight_ns = sqlite3_column_int64(st, 5),
		.thread_name = lsp_text(st, 6),
	};

	/* the rows ls_profile__sample_sums() refuses and counts */
	if (!sample_ok(sqlite3_column_int64(st, 3), r.count, r.weight_ns) || tid < 0 ||
	    tid > INT32_MAX)
		return 0;
	r.tid = (int)tid;
	return LSP_CALL(ls_prow_thread_sample, cb, &r);
}

int ls_profile__samples_by_thread(struct ls_profile *p,
				  int (*fn)(void *ctx, const struct ls_prow_thread_sample *r),
				  void *ctx)
{
	struct lsp_cb cb = LSP_CB(p, fn, ctx);

	return lsp_each(p,
			"SELECT s.process_id, s.tid, s.stack_id, s.kind, sum(s.count),"
			" sum(" SCALED_WEIGHT "),"
			" (SELECT name FROM threads t WHERE t.process_id = s.process_id"
			" AND t.tid = s.tid)"
			" FROM samples s LEFT JOIN (" CPU_SCALE_SQL ") c"
			" ON c.c_proc = s.process_id AND c.c_tid = s.tid"
			" GROUP BY s.process_id, s.tid, s.stack_id, s.kind"
			" ORDER BY s.process_id, s.tid, s.stack_id, s.kind",
			thread_sample_row, &cb);
}
