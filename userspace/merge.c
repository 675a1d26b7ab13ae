// SPDX-License-Identifier: MIT
/*
 * Merging profiles. Each input's rows are copied table by table, every column through a rule:
 * process and notebook ids move past those already merged, except that a process of a --rotate
 * interval joins itself from an earlier interval (its counts added: upsert_of()); sources are
 * shared by content hash, files by (path, kind, source), functions by (file, name, first line)
 * and stacks by their frames, as one recording shares them between its processes (so the
 * function ids inside stack blobs are mapped too);
 * times move onto the first profile's clock; each process names the `hosts` row of the profile
 * it came from. A column the input's schema lacks is NULL.
 *
 * Clocks: every *_ns time counts from its profile's start on that host's CLOCK_MONOTONIC. Within
 * one boot the shift is the starts' difference on that clock, exact; across hosts, that of the
 * wall clocks each profile read at its start, so timelines line up as well as the hosts' clocks
 * agree (NTP: milliseconds), or to the second for a profile older than wall_start_ns.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "hashmap.h"
#include "log.h"
#include "merge.h"
#include "outfile.h"
#include "store.h"

struct input {
	const char *path;
	struct ls_store *st;
	sqlite3 *db;
	int64_t clock_start; /* meta clock_start_ns */
	int64_t wall_start;  /* the wall clock at clock_start, ns since the epoch */
	int64_t elapsed;     /* meta elapsed_ns, after interval_start_ns (--rotate) */
	int64_t dt;	     /* added to its times (relative to its start) to be on the first's */
	bool wall_exact;     /* wall_start_ns recorded (else started_at, to the second) */
	bool interval;	     /* an interval of a --rotate recording (interval_start_ns) */
	char *host, *boot_id, *mode;
	/* its ids -> the merged profile's */
	struct ls_hashmap sources, files, funcs, procs, stacks;
};

/* What moves an input's rows into the merged profile. */
struct shift {
	int64_t proc, notebook, host,
		spark_log; /* added to its ids (processes not merged already) */
	int64_t host_id;   /* its own `hosts` row */
	int64_t dt;	   /* added to its times */
};

static char *meta_of(sqlite3 *db, const char *key)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = ?", -1, &st, NULL))
		return NULL;
	sqlite3_bind_text(st, 1, key, -1, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* A time or count from a profile's meta, range-checked (ls_profile__meta_num) */
static int64_t meta_int(sqlite3 *db, const char *key, int64_t dflt, int64_t max)
{
	char *v = meta_of(db, key);
	int64_t x = ls_profile__meta_num(v, dflt, max);

	free(v);
	return x;
}

static bool has_table(sqlite3 *db, const char *t)
{
	sqlite3_stmt *st;
	bool yes;

	if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
			       -1, &st, NULL))
		return false;
	sqlite3_bind_text(st, 1, t, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

static int64_t max_id(sqlite3 *db, const char *t)
{
	char sql[96];
	sqlite3_stmt *st;
	int64_t v = 0;

	snprintf(sql, sizeof(sql), "SELECT COALESCE(MAX(id), 0) FROM %s", t);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* ls_frames(blob): a stack's (function id, line) pairs with the function ids mapped */
static void sql_frames(sqlite3_context *c, int argc, sqlite3_value **v)
{
	const struct input *in = sqlite3_user_data(c);
	const uint32_t *frames = sqlite3_value_blob(v[0]);
	int n = sqlite3_value_bytes(v[0]);
	uint32_t *out;
	uint64_t id;

	(void)argc;
	if (!frames || n % 8) {
		sqlite3_result_value(c, v[0]); /* damaged: the reader refuses it as it would here */
		return;
	}
	out = malloc(n);
	if (!out) {
		sqlite3_result_error_nomem(c);
		return;
	}
	for (int i = 0; i < n / 4; i++) {
		out[i] = frames[i];
		/* an unknown function stays unknown: 0 is no function's id */
		if (i % 2 == 0)
			out[i] = ls_hashmap__get(&in->funcs, frames[i], &id) ? (uint32_t)id : 0;
	}
	sqlite3_result_blob(c, out, n, free);
}

/*
 * ls_map(id, which): the merged profile's id of the input's source (0), file (1), function (2),
 * process (3) or stack (4)
 */
static void sql_map(sqlite3_context *c, int argc, sqlite3_value **v)
{
	struct input *in = sqlite3_user_data(c);
	const struct ls_hashmap *maps[] = {&in->sources, &in->files, &in->funcs, &in->procs,
					   &in->stacks};
	int which = sqlite3_value_int(v[1]);
	const struct ls_hashmap *m = maps[which >= 0 && which < 5 ? which : 2];
	uint64_t id;

	(void)argc;
	if (sqlite3_value_type(v[0]) == SQLITE_NULL ||
	    !ls_hashmap__get(m, (uint64_t)sqlite3_value_int64(v[0]), &id))
		sqlite3_result_null(c);
	else
		sqlite3_result_int64(c, (int64_t)id);
}

/* The expression that gives table t's column c in the merged profile; has: the input has c. */
static void column_rule(const char *t, const char *c, bool has, const struct shift *s, char *buf,
			size_t n)
{
	static const char *const times[] = {"start_ns", "end_ns", "first_line_ns", "t_ns"};
	int64_t id_off = !strcmp(t, "notebooks")    ? s->notebook
			 : !strcmp(t, "hosts")	    ? s->host
			 : !strcmp(t, "spark_logs") ? s->spark_log
						    : 0;

	if (!strcmp(c, "host_id") && has) { /* a merged input's processes keep their hosts */
		snprintf(buf, n, "COALESCE(host_id + %lld, %lld)", (long long)s->host,
			 (long long)s->host_id);
		return;
	}
	if (!strcmp(c, "host_id")) {
		snprintf(buf, n, "%lld", (long long)s->host_id);
		return;
	}
	if (!has) {
		snprintf(buf, n, "NULL");
		return;
	}
	snprintf(buf, n, "%s", c);
	if (!strcmp(c, "id") && !strcmp(t, "processes"))
		snprintf(buf, n, "ls_map(id, 3)");
	else if (!strcmp(c, "id"))
		snprintf(buf, n, "id + %lld", (long long)id_off);
	else if (!strcmp(c, "process_id"))
		snprintf(buf, n, "ls_map(process_id, 3)");
	else if (!strcmp(c, "parent_id") && !strcmp(t, "notebooks"))
		snprintf(buf, n, "parent_id + %lld", (long long)s->notebook);
	else if (!strcmp(c, "parent_id"))
		snprintf(buf, n, "ls_map(parent_id, 3)");
	else if (!strcmp(c, "stack_id") || !strcmp(c, "spawn_stack") || !strcmp(c, "waiter_stack"))
		/* 0: no stack; LS_GPU_STACK_UNSEEN: a launch never seen */
		snprintf(buf, n,
			 "CASE WHEN %1$s > 0 AND %1$s < %2$u THEN ls_map(%1$s, 4) ELSE %1$s END", c,
			 LS_GPU_STACK_UNSEEN);
	else if (!strcmp(c, "function_id"))
		snprintf(buf, n, "ls_map(function_id, 2)");
	else if (!strcmp(c, "file_id") || !strcmp(c, "parent_file_id"))
		snprintf(buf, n, "ls_map(%s, 1)", c);
	else if (!strcmp(c, "notebook_id"))
		snprintf(buf, n, "notebook_id + %lld", (long long)s->notebook);
	else if (!strcmp(c, "log_id"))
		snprintf(buf, n, "log_id + %lld", (long long)s->spark_log);
	else if (!strcmp(c, "frames"))
		snprintf(buf, n, "ls_frames(frames)");
	else if (!strcmp(c, "shift_ns"))
		snprintf(buf, n, "shift_ns + %lld", (long long)s->dt);
	for (size_t i = 0; i < sizeof(times) / sizeof(times[0]); i++)
		if (!strcmp(c, times[i]))
			snprintf(buf, n, "%s + %lld", c, (long long)s->dt);
}

static bool has_column(sqlite3 *db, const char *t, const char *c)
{
	char sql[128];
	sqlite3_stmt *st;
	bool yes = false;

	snprintf(sql, sizeof(sql), "SELECT 1 FROM pragma_table_info('%s') WHERE name = ?", t);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL))
		return false;
	sqlite3_bind_text(st, 1, c, -1, SQLITE_STATIC);
	yes = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return yes;
}

/*
 * What a row does when its key is there already: a process's later profile (another --rotate
 * interval of one recording) adds its counts to the rows of the earlier ones and brings its end.
 */
static const char *upsert_of(const char *t)
{
	static const struct {
		const char *table, *clause;
	} rules[] = {
		{"processes",
		 " ON CONFLICT(id) DO UPDATE SET end_ns = COALESCE(excluded.end_ns, end_ns),"
		 " exit_code = COALESCE(excluded.exit_code, exit_code),"
		 " python = COALESCE(python, excluded.python),"
		 " python_build = COALESCE(python_build, excluded.python_build),"
		 " note = COALESCE(excluded.note, note),"
		 " trace = COALESCE(excluded.trace, trace)"},
		{"execs",
		 " ON CONFLICT DO UPDATE SET samples = samples + excluded.samples,"
		 " cpu_ns = cpu_ns + excluded.cpu_ns, wait_ns = wait_ns + excluded.wait_ns,"
		 " unresolved = unresolved + excluded.unresolved,"
		 " end_ns = COALESCE(excluded.end_ns, end_ns),"
		 " first_line_ns = COALESCE(first_line_ns, excluded.first_line_ns)"},
		/* a thread whose CPU time is unknown in one interval has none in the sum */
		{"threads", " ON CONFLICT DO UPDATE SET name = COALESCE(excluded.name, name),"
			    " cpu_ns = cpu_ns + excluded.cpu_ns"},
		{"samples", " ON CONFLICT DO UPDATE SET count = count + excluded.count,"
			    " weight_ns = weight_ns + excluded.weight_ns"},
		{"gpu",
		 " ON CONFLICT DO UPDATE SET gpu_ns = gpu_ns + excluded.gpu_ns,"
		 " api_ns = api_ns + excluded.api_ns, mem_peak = max(mem_peak, excluded.mem_peak),"
		 " kernels = kernels + excluded.kernels, nccl_ns = nccl_ns + excluded.nccl_ns,"
		 " native_ns = COALESCE(native_ns, 0) + COALESCE(excluded.native_ns, 0),"
		 " sampled = max(sampled, excluded.sampled)"},
		{"gpu_processes",
		 " ON CONFLICT DO UPDATE SET dropped = dropped + excluded.dropped,"
		 " lost = lost + excluded.lost, launches = launches + excluded.launches,"
		 " gpu_ns = gpu_ns + excluded.gpu_ns, api_ns = api_ns + excluded.api_ns,"
		 " peak_alloc = max(peak_alloc, excluded.peak_alloc),"
		 " peak_nvml = max(peak_nvml, excluded.peak_nvml)"},
		{"trace",
		 " ON CONFLICT DO UPDATE SET hits = hits + excluded.hits,"
		 " own_ns = own_ns + excluded.own_ns, total_ns = total_ns + excluded.total_ns"},
		/* a notebook's cells are its file's: one file shared by two inputs has them once */
		{"cells", " ON CONFLICT DO NOTHING"},
		{"gpu_devices", " ON CONFLICT DO NOTHING"},
	};

	for (size_t i = 0; i < sizeof(rules) / sizeof(rules[0]); i++)
		if (!strcmp(rules[i].table, t))
			return rules[i].clause;
	return "";
}

/* Copies table t of in into out through column_rule(); a table in lacks is nothing to copy. */
static int copy_table(struct input *in, sqlite3 *out, const char *t, const struct shift *s)
{
	char *sel = NULL, *ins = NULL, *qs = NULL, expr[256], sql[128];
	sqlite3_stmt *cols = NULL, *from = NULL, *to = NULL;
	int n = 0, rc, err = 0;

	if (!has_table(in->db, t))
		return 0;
	snprintf(sql, sizeof(sql), "SELECT name FROM pragma_table_info('%s') ORDER BY cid", t);
	if (sqlite3_prepare_v2(out, sql, -1, &cols, NULL))
		return ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
	sel = sqlite3_mprintf("SELECT");
	ins = sqlite3_mprintf("INSERT INTO %s(", t);
	qs = sqlite3_mprintf("");
	while (sel && ins && qs && sqlite3_step(cols) == SQLITE_ROW) {
		const char *c = (const char *)sqlite3_column_text(cols, 0);
		char *a, *b, *q;

		column_rule(t, c, has_column(in->db, t, c), s, expr, sizeof(expr));
		a = sqlite3_mprintf("%s%s %s", sel, n ? "," : "", expr);
		b = sqlite3_mprintf("%s%s%s", ins, n ? ", " : "", c);
		q = sqlite3_mprintf("%s%s?", qs, n ? ", " : "");
		sqlite3_free(sel);
		sqlite3_free(ins);
		sqlite3_free(qs);
		sel = a, ins = b, qs = q;
		n++;
	}
	sqlite3_finalize(cols);
	if (!sel || !ins || !qs) {
		err = -ENOMEM;
		goto out;
	}
	{
		char *a = sqlite3_mprintf("%s FROM %s", sel, t);
		char *b = sqlite3_mprintf("%s) VALUES (%s)%s", ins, qs, upsert_of(t));

		sqlite3_free(sel);
		sqlite3_free(ins);
		sel = a, ins = b;
	}
	if (!sel || !ins) {
		err = -ENOMEM;
		goto out;
	}
	if (sqlite3_prepare_v2(in->db, sel, -1, &from, NULL)) {
		err = ls_err(-EINVAL, "merge: %s: table %s: %s", in->path, t,
			     sqlite3_errmsg(in->db));
		goto out;
	}
	if (sqlite3_prepare_v2(out, ins, -1, &to, NULL)) {
		err = ls_err(-EIO, "merge: table %s: %s", t, sqlite3_errmsg(out));
		goto out;
	}
	while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
		for (int i = 0; i < n; i++)
			sqlite3_bind_value(to, i + 1, sqlite3_column_value(from, i));
		if (sqlite3_step(to) != SQLITE_DONE) {
			err = ls_err(-EIO, "merge: %s: a row of %s: %s", in->path, t,
				     sqlite3_errmsg(out));
			goto out;
		}
		sqlite3_reset(to);
	}
	if (rc != SQLITE_DONE)
		err = ls_err(-EINVAL, "merge: %s: table %s: %s", in->path, t,
			     sqlite3_errmsg(in->db));
out:
	sqlite3_finalize(from);
	sqlite3_finalize(to);
	sqlite3_free(sel);
	sqlite3_free(ins);
	sqlite3_free(qs);
	return err;
}

/*
 * Maps each row of the input's query q (its id, then the key columns, other tables' ids in them
 * already mapped) to the merged profile's row with that key (find, which may bind fewer of
 * them), or to a new one (put, from the key columns; its rowid is the id).
 */
static int map_rows(struct input *in, sqlite3 *out, const char *q, const char *find,
		    const char *put, int nkey, struct ls_hashmap *map)
{
	sqlite3_stmt *from = NULL, *get = NULL, *add = NULL;
	int rc, err = 0;

	if (sqlite3_prepare_v2(in->db, q, -1, &from, NULL)) {
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
		goto out;
	}
	if (sqlite3_prepare_v2(out, find, -1, &get, NULL) ||
	    sqlite3_prepare_v2(out, put, -1, &add, NULL)) {
		err = ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
		goto out;
	}
	while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
		int64_t id;

		for (int i = 1; i <= nkey; i++) {
			sqlite3_bind_value(get, i, sqlite3_column_value(from, i));
			sqlite3_bind_value(add, i, sqlite3_column_value(from, i));
		}
		if (sqlite3_step(get) == SQLITE_ROW) {
			id = sqlite3_column_int64(get, 0);
		} else if (sqlite3_step(add) == SQLITE_DONE) {
			id = sqlite3_last_insert_rowid(out);
		} else {
			err = ls_err(-EIO, "merge: %s: %s", in->path, sqlite3_errmsg(out));
			goto out;
		}
		if (ls_hashmap__set(map, sqlite3_column_int64(from, 0), id)) {
			err = -ENOMEM;
			goto out;
		}
		sqlite3_reset(get);
		sqlite3_reset(add);
	}
	if (rc != SQLITE_DONE)
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
out:
	sqlite3_finalize(from);
	sqlite3_finalize(get);
	sqlite3_finalize(add);
	return err;
}

/* sources by content hash: find binds the hash only */
static int copy_sources(struct input *in, sqlite3 *out)
{
	return map_rows(in, out, "SELECT id, hash, size, text FROM sources",
			"SELECT id FROM sources WHERE hash = ?",
			"INSERT INTO sources(hash, size, text) VALUES (?, ?, ?)", 3, &in->sources);
}

static int copy_files(struct input *in, sqlite3 *out)
{
	return map_rows(in, out,
			"SELECT id, path, kind, ls_map(source_id, 0), unavailable FROM files",
			"SELECT id FROM files WHERE path IS ? AND kind IS ? AND source_id IS ?"
			" AND unavailable IS ?",
			"INSERT INTO files(path, kind, source_id, unavailable) VALUES (?, ?, ?, ?)",
			4, &in->files);
}

static int copy_functions(struct input *in, sqlite3 *out)
{
	return map_rows(in, out,
			"SELECT id, ls_map(file_id, 1), qualname, firstlineno FROM functions",
			"SELECT id FROM functions WHERE file_id IS ? AND qualname IS ?"
			" AND firstlineno IS ?",
			"INSERT INTO functions(file_id, qualname, firstlineno) VALUES (?, ?, ?)", 3,
			&in->funcs);
}

/* stacks by content (their function ids mapped): a stack two inputs share is one row */
static int copy_stacks(struct input *in, sqlite3 *out)
{
	return map_rows(in, out, "SELECT id, depth, ls_frames(frames), truncated FROM stacks",
			"SELECT id FROM stacks WHERE depth IS ? AND frames IS ? AND truncated IS ?",
			"INSERT INTO stacks(depth, frames, truncated) VALUES (?, ?, ?)", 3,
			&in->stacks);
}

/*
 * An interval of a --rotate recording whose process (pid and start) is one already merged from
 * that recording (its boot and clock start) is that process: its rows join it. Every other moves
 * past the ids merged so far (two recordings of one process are two processes: they may overlap).
 */
static int map_procs(struct input *in, sqlite3 *out, const struct shift *s)
{
	sqlite3_stmt *from = NULL, *find = NULL;
	int rc, err = 0;

	if (sqlite3_prepare_v2(in->db, "SELECT id, pid, start_ns FROM processes", -1, &from,
			       NULL)) {
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
		goto out;
	}
	if (sqlite3_prepare_v2(out,
			       "SELECT p.id FROM processes p JOIN hosts h ON h.id = p.host_id"
			       " WHERE p.pid = ? AND p.start_ns = ? AND h.boot_id = ?"
			       " AND h.clock_start_ns = ? LIMIT 1",
			       -1, &find, NULL)) {
		err = ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
		goto out;
	}
	while ((rc = sqlite3_step(from)) == SQLITE_ROW) {
		int64_t id = sqlite3_column_int64(from, 0), to = id + s->proc;

		if (in->interval && in->boot_id && in->clock_start >= 0 &&
		    sqlite3_column_type(from, 2) != SQLITE_NULL) {
			sqlite3_bind_int64(find, 1, sqlite3_column_int64(from, 1));
			sqlite3_bind_int64(find, 2, sqlite3_column_int64(from, 2) + s->dt);
			sqlite3_bind_text(find, 3, in->boot_id, -1, SQLITE_STATIC);
			sqlite3_bind_int64(find, 4, in->clock_start);
			if (sqlite3_step(find) == SQLITE_ROW)
				to = sqlite3_column_int64(find, 0);
			sqlite3_reset(find);
		}
		if (ls_hashmap__set(&in->procs, id, to)) {
			err = -ENOMEM;
			goto out;
		}
	}
	if (rc != SQLITE_DONE)
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
out:
	sqlite3_finalize(from);
	sqlite3_finalize(find);
	return err;
}

static int run_sql(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	ls_err(-EIO, "merge: %s", msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	return -EIO;
}

/* The tables that follow sources, in the order their ids are referred to. */
static const char *const tables[] = {
	"hosts",     "processes", "execs",	  "threads",	   "samples",	  "rss",
	"timeline",  "gpu",	  "gpu_timeline", "gpu_processes", "gpu_devices", "trace",
	"notebooks", "cells",	  "spark_logs",	  "spark_events",
};

/* Copies the (key, value) rows of in's query q into out through put. */
static int copy_pairs(struct input *in, const char *q, sqlite3 *out, const char *put)
{
	sqlite3_stmt *from = NULL, *to = NULL;
	int rc, err = 0;

	if (sqlite3_prepare_v2(in->db, q, -1, &from, NULL))
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
	else if (sqlite3_prepare_v2(out, put, -1, &to, NULL))
		err = ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
	while (!err && (rc = sqlite3_step(from)) == SQLITE_ROW) {
		sqlite3_bind_value(to, 1, sqlite3_column_value(from, 0));
		sqlite3_bind_value(to, 2, sqlite3_column_value(from, 1));
		if (sqlite3_step(to) != SQLITE_DONE)
			err = ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
		sqlite3_reset(to);
	}
	if (!err && rc != SQLITE_DONE)
		err = ls_err(-EINVAL, "merge: %s: %s", in->path, sqlite3_errmsg(in->db));
	sqlite3_finalize(from);
	sqlite3_finalize(to);
	return err;
}

static bool same_boot(const struct input *a, const struct input *b)
{
	return a->boot_id && b->boot_id && !strcmp(a->boot_id, b->boot_id);
}

/*
 * Times are relative to each profile's start: one boot shares CLOCK_MONOTONIC, so the starts'
 * difference on it; across boots, the wall clocks'.
 */
static int64_t shift_of(const struct input *in, const struct input *base)
{
	if (same_boot(in, base) && in->clock_start >= 0 && base->clock_start >= 0)
		return in->clock_start - base->clock_start;
	return in->wall_start >= 0 && base->wall_start >= 0 ? in->wall_start - base->wall_start : 0;
}

/* Adds input in to out: its host row, then every table, then its stats. */
static int merge_one(struct input *in, sqlite3 *out)
{
	struct shift s = {
		.proc = max_id(out, "processes"),
		.notebook = max_id(out, "notebooks"),
		.host = max_id(out, "hosts"),
		.spark_log = max_id(out, "spark_logs"),
	};
	sqlite3_stmt *st;
	int err;

	s.dt = in->dt;
	/* its own host after those it carries from an earlier merge */
	s.host_id = s.host + (has_table(in->db, "hosts") ? max_id(in->db, "hosts") : 0) + 1;
	if (sqlite3_prepare_v2(out,
			       "INSERT INTO hosts(id, name, boot_id, clock_start_ns, wall_start_ns,"
			       " shift_ns, profile) VALUES (?, ?, ?, ?, ?, ?, ?)",
			       -1, &st, NULL))
		return ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
	sqlite3_bind_int64(st, 1, s.host_id);
	sqlite3_bind_text(st, 2, in->host, -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 3, in->boot_id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, in->clock_start);
	sqlite3_bind_int64(st, 5, in->wall_start);
	sqlite3_bind_int64(st, 6, s.dt);
	sqlite3_bind_text(st, 7, in->path, -1, SQLITE_STATIC);
	err = sqlite3_step(st) == SQLITE_DONE ? 0 : ls_err(-EIO, "merge: %s", sqlite3_errmsg(out));
	sqlite3_finalize(st);
	if (err)
		return err;
	if (sqlite3_create_function(in->db, "ls_frames", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, in,
				    sql_frames, NULL, NULL) ||
	    sqlite3_create_function(in->db, "ls_map", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, in,
				    sql_map, NULL, NULL))
		return ls_err(-ENOMEM, "merge: %s", sqlite3_errmsg(in->db));
	err = copy_sources(in, out) ?: copy_files(in, out) ?: copy_functions(in, out) ?:
	      copy_stacks(in, out) ?: map_procs(in, out, &s);
	for (size_t i = 0; !err && i < sizeof(tables) / sizeof(tables[0]); i++)
		err = copy_table(in, out, tables[i], &s);
	if (err)
		return err;
	/* counters add up */
	return copy_pairs(in, "SELECT key, value FROM stats", out,
			  "INSERT INTO stats(key, value) VALUES (?, ?)"
			  " ON CONFLICT(key) DO UPDATE SET value = value + excluded.value");
}

/* The wall clock at the input's clock start: wall_start_ns, else started_at to the second. */
static int read_clock(struct input *in)
{
	char *at = meta_of(in->db, "started_at");
	struct tm tm = {0};
	const char *end;

	in->clock_start = meta_int(in->db, "clock_start_ns", -1, LS_META_SPAN_MAX);
	in->interval = meta_int(in->db, "interval_start_ns", -1, LS_META_SPAN_MAX) >= 0;
	in->elapsed = meta_int(in->db, "interval_start_ns", 0, LS_META_SPAN_MAX) +
		      meta_int(in->db, "elapsed_ns", 0, LS_META_SPAN_MAX);
	in->wall_start = meta_int(in->db, "wall_start_ns", -1, LS_META_WALL_MAX);
	in->wall_exact = in->wall_start >= 0;
	if (!in->wall_exact && at && (end = strptime(at, "%Y-%m-%dT%H:%M:%SZ", &tm)) && !*end) {
		time_t t = timegm(&tm);

		if (t >= 0 && t <= LS_META_WALL_MAX / 1000000000LL)
			in->wall_start = (int64_t)t * 1000000000LL;
	}
	free(at);
	if (in->wall_start < 0)
		ls_warn(0, "merge: %s does not say when it started; its times are not moved",
			in->path);
	return 0;
}

static int open_input(struct input *in, const char *path)
{
	int err;

	in->path = path;
	ls_hashmap_init(&in->sources);
	ls_hashmap_init(&in->files);
	ls_hashmap_init(&in->funcs);
	ls_hashmap_init(&in->procs);
	ls_hashmap_init(&in->stacks);
	err = ls_store__open(path, &in->st);
	if (err)
		return err;
	in->db = ls_store__db(in->st);
	in->host = meta_of(in->db, "host");
	in->boot_id = meta_of(in->db, "boot_id");
	in->mode = meta_of(in->db, "mode");
	return read_clock(in);
}

static void close_input(struct input *in)
{
	ls_store__free(in->st);
	ls_hashmap_release(&in->sources);
	ls_hashmap_release(&in->files);
	ls_hashmap_release(&in->funcs);
	ls_hashmap_release(&in->procs);
	ls_hashmap_release(&in->stacks);
	free(in->host);
	free(in->boot_id);
	free(in->mode);
}

static int by_wall_start(const void *a, const void *b)
{
	const struct input *x = a, *y = b;

	return (x->wall_start > y->wall_start) - (x->wall_start < y->wall_start);
}

/* The merged profile's meta: the earliest input's, with what describes them all. */
static int write_meta(struct ls_store *st, struct input *in, int n)
{
	sqlite3 *out = ls_store__db(st);
	char hosts[1024] = "", note[512];
	int64_t end = 0;
	size_t len = 0;
	bool exact = true, one_boot = true, untimed = false;
	int err;

	/* the writer's, and an interval's: the merged profile's times count from its clock start */
	err = run_sql(out, "DELETE FROM meta WHERE key IN ('writer_pid', 'writer_start',"
			   " 'interval_start_ns', 'rotate_s')");
	for (int i = 0; i < n; i++) {
		bool seen = false;
		int64_t e = in[i].dt + in[i].elapsed;

		end = e > end ? e : end;
		exact &= in[i].wall_exact;
		untimed |= in[i].wall_start < 0;
		one_boot &= same_boot(&in[i], &in[0]);
		for (int j = 0; j < i; j++)
			seen |= !strcmp(in[j].host ?: "?", in[i].host ?: "?");
		if (!seen && len < sizeof(hosts))
			len += snprintf(hosts + len, sizeof(hosts) - len, "%s%s", len ? ", " : "",
					in[i].host ?: "?");
	}
	if (untimed)
		snprintf(note, sizeof(note),
			 "a profile that does not say when it started: not moved");
	else if (one_boot)
		snprintf(note, sizeof(note), "one boot of one host: its clock, exact");
	else
		snprintf(
			note, sizeof(note),
			"hosts' clocks aligned by the wall clock each read at its start: to within "
			"their NTP offset%s",
			exact ? "" : "; a profile without wall_start_ns to within a second");
	/* a failed write fails the commit */
	ls_store__put_meta(st, "host", hosts);
	ls_store__put_meta_int(st, "elapsed_ns", end);
	ls_store__put_meta_int(st, "merged_profiles", n);
	ls_store__put_meta(st, "merge_clock", note);
	return err;
}

int ls_merge__run(const char *const *paths, int n, const char *outpath, int uid, int gid)
{
	struct input *in = calloc(n, sizeof(*in));
	struct ls_store *out = NULL;
	int err = 0, k = 0;

	if (!in)
		return -ENOMEM;
	for (; k < n && !err; k++) {
		if (ls_outfile__same(paths[k], outpath))
			err = ls_err(-EINVAL, "merge: %s is one of the inputs", outpath);
		else
			err = open_input(&in[k], paths[k]);
	}
	if (err)
		goto done;
	for (int i = 1; i < n; i++)
		if (strcmp(in[i].mode ?: "wall", in[0].mode ?: "wall"))
			err = ls_err(
				-EINVAL,
				"merge: %s was recorded in %s mode, %s in %s mode: their times do "
				"not add up",
				in[0].path, in[0].mode ?: "wall", in[i].path, in[i].mode ?: "wall");
	if (err)
		goto done;
	qsort(in, n, sizeof(*in), by_wall_start);
	for (int i = 0; i < n; i++)
		in[i].dt = shift_of(&in[i], &in[0]);
	err = ls_store__create(outpath, uid, gid, &out);
	if (err)
		goto done;
	err = ls_store__begin(out);
	/* the earliest profile's meta describes the run; write_meta() rewrites the rest */
	if (!err)
		err = copy_pairs(&in[0], "SELECT key, value FROM meta", ls_store__db(out),
				 "INSERT INTO meta(key, value) VALUES (?, ?)");
	/* for the lookups of files and functions by key; not kept in the profile */
	if (!err)
		err = run_sql(
			ls_store__db(out),
			"CREATE INDEX merge_files ON files(path);"
			"CREATE INDEX merge_funcs ON functions(file_id, qualname, firstlineno);"
			"CREATE INDEX merge_stacks ON stacks(depth, frames);"
			"CREATE INDEX merge_procs ON processes(pid, start_ns);");
	for (int i = 0; !err && i < n; i++)
		err = merge_one(&in[i], ls_store__db(out));
	if (!err)
		err = run_sql(ls_store__db(out),
			      "DROP INDEX merge_files; DROP INDEX merge_funcs;"
			      " DROP INDEX merge_stacks; DROP INDEX merge_procs;");
	if (!err)
		err = write_meta(out, in, n);
	if (!err)
		err = ls_store__commit(out);
	else
		ls_store__rollback(out);
	if (!err)
		err = ls_store__publish(out);
done:
	ls_store__free(out);
	for (int i = 0; i < k; i++)
		close_input(&in[i]);
	free(in);
	return err;
}
