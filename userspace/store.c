// SPDX-License-Identifier: MIT
/*
 * SQLite profile store. A new profile is built under a temporary name (outfile.c) and replaces
 * the one at its path only when published, once recording has really started; from then on WAL
 * journaling: a commit is durable once written, and a reader of a profile whose writer was killed
 * replays the log. SQLite opens every side file O_NOFOLLOW and, as root, gives it the database
 * file's owner, so the invoking user can read a profile recorded under sudo.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "dirvfs.h"
#include "log.h"
#include "outfile.h"
#include "store.h"

enum stmt_id {
	ST_META,
	ST_STAT,
	ST_PROC,
	ST_EXEC,
	ST_THREAD,
	ST_THREAD_CPU,
	ST_SOURCE,
	ST_FILE,
	ST_FUNC,
	ST_STACK,
	ST_SAMPLE,
	ST_RSS,
	ST_TICK,
	ST_GPU_SPAN,
	ST_GPU,
	ST_GPU_PROC,
	ST_GPU_DEV,
	ST_TRACE,
	ST_NOTEBOOK,
	ST_CELL,
	ST_SPARK_LOG,
	ST_SPARK_EVENT,
	ST__N
};

static const char *const stmt_sql[ST__N] = {
	[ST_META] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
	[ST_STAT] = "INSERT OR REPLACE INTO stats(key, value) VALUES (?, ?)",
	[ST_PROC] =
		"INSERT OR REPLACE INTO processes(id, pid, ppid, nspid, parent_id, spawn_stack,"
		" spawn_tid, comm, argv, exe, start_ns, end_ns, exit_code, python, python_build,"
		" note, cgroup, parent_wait_ns, trace, cgroup_id, rank, local_rank, world_size,"
		" master_addr, waiter_stack, waiter_tid)"
		" VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_EXEC] =
		"INSERT OR REPLACE INTO execs(process_id, seq, how, start_ns, end_ns, comm, argv,"
		" exe, python, python_build, note, samples, cpu_ns, wait_ns, unresolved,"
		" first_line_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
	/* a rename keeps the row's CPU time, unless it brings one */
	[ST_THREAD] = "INSERT INTO threads(process_id, tid, name, cpu_ns) VALUES (?, ?, ?, ?)"
		      " ON CONFLICT(process_id, tid) DO UPDATE SET name = excluded.name,"
		      " cpu_ns = coalesce(excluded.cpu_ns, cpu_ns)",
	[ST_THREAD_CPU] = "UPDATE threads SET cpu_ns = ? WHERE process_id = ? AND tid = ?",
	[ST_SOURCE] = "INSERT OR IGNORE INTO sources(id, hash, size, text) VALUES (?, ?, ?, ?)",
	[ST_FILE] = "INSERT OR REPLACE INTO files(id, path, source_id, kind, unavailable)"
		    " VALUES (?, ?, ?, ?, ?)",
	[ST_FUNC] = "INSERT OR REPLACE INTO functions(id, file_id, qualname, firstlineno)"
		    " VALUES (?, ?, ?, ?)",
	[ST_STACK] = "INSERT OR REPLACE INTO stacks(id, depth, frames, truncated) VALUES (?,?,?,?)",
	[ST_SAMPLE] = "INSERT OR REPLACE INTO samples(process_id, tid, stack_id, kind, mode, gil,"
		      " count, weight_ns) VALUES (?,?,?,?,?,?,?,?)",
	[ST_RSS] = "INSERT INTO rss(process_id, t_ns, rss, stack_id, event) VALUES (?,?,?,?,?)",
	[ST_TICK] = "INSERT INTO timeline(process_id, tid, t_ns, dur_ns, stack_id, kind, mode)"
		    " VALUES (?,?,?,?,?,?,?)",
	[ST_GPU_SPAN] = "INSERT INTO gpu_timeline(process_id, device, stream, t_ns, dur_ns, kind,"
			" name, stack_id, count, bytes, tid) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
	[ST_GPU] = "INSERT OR REPLACE INTO gpu(process_id, stack_id, gpu_ns, api_ns, mem_peak,"
		   " kernels, nccl_ns, sampled, native_ns) VALUES (?,?,?,?,?,?,?,?,?)",
	[ST_GPU_PROC] = "INSERT OR REPLACE INTO gpu_processes(process_id, hello, status, message,"
			" cupti_version, nvml_note, dropped, lost, peak_alloc, peak_nvml, launches,"
			" gpu_ns, api_ns) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?)",
	[ST_GPU_DEV] = "INSERT OR REPLACE INTO gpu_devices(process_id, ordinal, name, mem_total,"
		       " driver, cuda_driver, cc, uuid) VALUES (?,?,?,?,?,?,?,?)",
	[ST_TRACE] =
		"INSERT OR REPLACE INTO trace(process_id, tid, function_id, line, hits, own_ns,"
		" total_ns) VALUES (?,?,?,?,?,?,?)",
	[ST_NOTEBOOK] = "INSERT OR REPLACE INTO notebooks(id, process_id, pid, path, history, note,"
			" parent_id, parent_file_id, parent_line) VALUES (?,?,?,?,?,?,?,?,?)",
	[ST_SPARK_LOG] =
		"INSERT OR REPLACE INTO spark_logs(id, path, codec, note) VALUES (?,?,?,?)",
	[ST_SPARK_EVENT] = "INSERT OR REPLACE INTO spark_events(log_id, seq, event) VALUES (?,?,?)",
	[ST_CELL] = "INSERT OR REPLACE INTO cells(file_id, notebook_id, seq, number, how, hash,"
		    " cell_key) VALUES (?,?,?,?,?,?,?)",
};

static const char schema_sql[] =
	"CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT);"
	"CREATE TABLE stats(key TEXT PRIMARY KEY, value INTEGER);"
	"CREATE TABLE processes(id INTEGER PRIMARY KEY, pid INTEGER NOT NULL, ppid INTEGER,"
	" nspid INTEGER, parent_id INTEGER, spawn_stack INTEGER, spawn_tid INTEGER, comm TEXT,"
	" argv TEXT, exe TEXT, start_ns INTEGER, end_ns INTEGER, exit_code INTEGER, python TEXT,"
	" python_build TEXT, note TEXT, cgroup TEXT, parent_wait_ns INTEGER, trace TEXT,"
	" cgroup_id INTEGER, rank INTEGER, local_rank INTEGER, world_size INTEGER,"
	" master_addr TEXT, host_id INTEGER, waiter_stack INTEGER, waiter_tid INTEGER);"
	"CREATE TABLE hosts(id INTEGER PRIMARY KEY, name TEXT, boot_id TEXT,"
	" clock_start_ns INTEGER, wall_start_ns INTEGER, shift_ns INTEGER NOT NULL, profile TEXT);"
	"CREATE TABLE execs(process_id INTEGER NOT NULL, seq INTEGER NOT NULL, how TEXT NOT NULL,"
	" start_ns INTEGER, end_ns INTEGER, comm TEXT, argv TEXT, exe TEXT, python TEXT,"
	" python_build TEXT, note TEXT, samples INTEGER NOT NULL, cpu_ns INTEGER NOT NULL,"
	" wait_ns INTEGER NOT NULL, unresolved INTEGER NOT NULL, first_line_ns INTEGER,"
	" PRIMARY KEY(process_id, seq)) WITHOUT ROWID;"
	"CREATE TABLE threads(process_id INTEGER NOT NULL, tid INTEGER NOT NULL, name TEXT,"
	" cpu_ns INTEGER, PRIMARY KEY(process_id, tid)) WITHOUT ROWID;"
	"CREATE TABLE sources(id INTEGER PRIMARY KEY, hash TEXT UNIQUE NOT NULL, size INTEGER,"
	" text BLOB);"
	"CREATE TABLE files(id INTEGER PRIMARY KEY, path TEXT NOT NULL, source_id INTEGER,"
	" kind TEXT NOT NULL, unavailable TEXT);"
	"CREATE TABLE functions(id INTEGER PRIMARY KEY, file_id INTEGER NOT NULL,"
	" qualname TEXT NOT NULL, firstlineno INTEGER NOT NULL);"
	"CREATE TABLE stacks(id INTEGER PRIMARY KEY, depth INTEGER NOT NULL, frames BLOB,"
	" truncated INTEGER NOT NULL DEFAULT 0);"
	"CREATE TABLE samples(process_id INTEGER NOT NULL, tid INTEGER NOT NULL,"
	" stack_id INTEGER NOT NULL, kind INTEGER NOT NULL, mode INTEGER NOT NULL,"
	" gil INTEGER NOT NULL, count INTEGER NOT NULL, weight_ns INTEGER NOT NULL,"
	" PRIMARY KEY(process_id, tid, stack_id, kind, mode, gil)) WITHOUT ROWID;"
	"CREATE TABLE rss(process_id INTEGER NOT NULL, t_ns INTEGER NOT NULL, rss INTEGER NOT NULL,"
	" stack_id INTEGER NOT NULL, event INTEGER NOT NULL);"
	"CREATE TABLE timeline(process_id INTEGER NOT NULL, tid INTEGER NOT NULL,"
	" t_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
	" kind INTEGER NOT NULL, mode INTEGER NOT NULL);"
	"CREATE TABLE gpu_timeline(process_id INTEGER NOT NULL, device INTEGER NOT NULL,"
	" stream INTEGER NOT NULL, t_ns INTEGER NOT NULL, dur_ns INTEGER NOT NULL,"
	" kind INTEGER NOT NULL, name TEXT, stack_id INTEGER NOT NULL, count INTEGER NOT NULL,"
	" bytes INTEGER NOT NULL, tid INTEGER);"
	"CREATE TABLE gpu(process_id INTEGER NOT NULL, stack_id INTEGER NOT NULL,"
	" gpu_ns INTEGER NOT NULL, api_ns INTEGER NOT NULL, mem_peak INTEGER NOT NULL,"
	" kernels INTEGER NOT NULL, nccl_ns INTEGER NOT NULL, sampled INTEGER NOT NULL,"
	" native_ns INTEGER, PRIMARY KEY(process_id, stack_id)) WITHOUT ROWID;"
	"CREATE TABLE gpu_processes(process_id INTEGER PRIMARY KEY, hello INTEGER, status INTEGER,"
	" message TEXT, cupti_version INTEGER, nvml_note TEXT, dropped INTEGER, lost INTEGER,"
	" peak_alloc INTEGER, peak_nvml INTEGER, launches INTEGER, gpu_ns INTEGER, api_ns INTEGER);"
	"CREATE TABLE gpu_devices(process_id INTEGER NOT NULL, ordinal INTEGER NOT NULL, name TEXT,"
	" mem_total INTEGER, driver TEXT, cuda_driver INTEGER, cc INTEGER, uuid TEXT,"
	" PRIMARY KEY(process_id, ordinal)) WITHOUT ROWID;"
	"CREATE TABLE trace(process_id INTEGER NOT NULL, tid INTEGER NOT NULL,"
	" function_id INTEGER NOT NULL, line INTEGER NOT NULL, hits INTEGER NOT NULL,"
	" own_ns INTEGER NOT NULL, total_ns INTEGER NOT NULL,"
	" PRIMARY KEY(process_id, tid, function_id, line)) WITHOUT ROWID;"
	"CREATE TABLE notebooks(id INTEGER PRIMARY KEY, process_id INTEGER NOT NULL,"
	" pid INTEGER NOT NULL, path TEXT, history TEXT, note TEXT, parent_id INTEGER,"
	" parent_file_id INTEGER, parent_line INTEGER);"
	"CREATE TABLE cells(file_id INTEGER PRIMARY KEY, notebook_id INTEGER NOT NULL,"
	" seq INTEGER NOT NULL, number INTEGER, how TEXT, hash INTEGER NOT NULL, cell_key TEXT);"
	"CREATE TABLE spark_logs(id INTEGER PRIMARY KEY, path TEXT, codec TEXT, note TEXT);"
	"CREATE TABLE spark_events(log_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" event TEXT NOT NULL, PRIMARY KEY(log_id, seq)) WITHOUT ROWID;";

struct ls_store {
	sqlite3 *db;
	sqlite3_stmt *st[ST__N];
	char *path;
	struct ls_outfile out; /* a profile being written: its directory and file */
	bool writer;
	/*
	 * LINESCOPE_FAULT_STORE=T:W (tests): write W of transaction T fails, as a full disk would;
	 * T:W:kill: the process is killed there instead, in the middle of a flush
	 */
	unsigned long fault_txn, fault_write, txns, writes;
	bool fault_kill;
	int err;     /* the open transaction's first failed write: every later one is skipped */
	int version; /* the schema of a profile opened for reading */
};

static int db_err(struct ls_store *s, int rc, const char *what)
{
	return ls_err(-EIO, "profile %s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
}

static int exec_sql(struct ls_store *s, const char *sql)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);

	if (rc != SQLITE_OK) {
		rc = ls_err(-EIO, "profile %s: %s", s->path, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return rc;
	}
	return 0;
}

static void db_close(struct ls_store *s)
{
	for (int i = 0; i < ST__N; i++) {
		sqlite3_finalize(s->st[i]);
		s->st[i] = NULL;
	}
	if (s->db)
		sqlite3_close(s->db);
	s->db = NULL;
}

void ls_store__free(struct ls_store *s)
{
	if (!s)
		return;
	db_close(s);
	if (s->writer)
		ls_outfile__release(&s->out); /* removes a profile never published */
	free(s->path);
	free(s);
}

/* Opens name in the profile's directory, through its descriptor, runs sql, prepares the writes. */
static int db_open(struct ls_store *s, const char *name, const char *sql)
{
	char p[PATH_MAX + 64];
	int rc, err;

	ls_dirvfs__path(s->out.dirfd, name, p, sizeof(p));
	/* one thread at a time uses a store (the one that made it hands it over): no lock per call */
	rc = sqlite3_open_v2(p, &s->db,
			     SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOFOLLOW | SQLITE_OPEN_NOMUTEX,
			     LS_DIRVFS_NAME);
	if (rc != SQLITE_OK)
		return ls_err(-EIO, "cannot create profile %s: %s", s->path,
			      s->db ? sqlite3_errmsg(s->db) : sqlite3_errstr(rc));
	err = exec_sql(s, sql);
	for (int i = 0; !err && i < ST__N; i++)
		if (sqlite3_prepare_v3(s->db, stmt_sql[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i],
				       NULL) != SQLITE_OK)
			err = db_err(s, 0, "prepare");
	return err;
}

int ls_store__create(const char *path, int owner_uid, int owner_gid, struct ls_store **out)
{
	struct ls_store *s;
	char *sql;
	int err;

	err = ls_dirvfs__register();
	if (err)
		return ls_err(err, "cannot create profile %s: no SQLite VFS", path);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	err = ls_outfile__open(&s->out, path, LS_OUT_REGULAR, owner_uid, owner_gid);
	if (err) {
		free(s->path);
		free(s);
		return err;
	}
	s->writer = true;
	if (getenv("LINESCOPE_FAULT_STORE")) {
		char how[8] = "";

		sscanf(getenv("LINESCOPE_FAULT_STORE"), "%lu:%lu:%7s", &s->fault_txn,
		       &s->fault_write, how);
		s->fault_kill = !strcmp(how, "kill");
	}
	/*
	 * unpublished, it has a rollback journal only while a transaction is open. Pages stay 4 KiB:
	 * 16 KiB made a flush's writes 10% cheaper at 10,000 threads, but every table has a page
	 * of its own, and an empty profile grew from 120 KiB to 480.
	 */
	sql = sqlite3_mprintf("PRAGMA synchronous=NORMAL; BEGIN; %s"
			      " PRAGMA user_version=%d; COMMIT;",
			      schema_sql, LS_SCHEMA_VERSION);
	err = sql ? db_open(s, s->out.tmp, sql) : -ENOMEM;
	sqlite3_free(sql);
	if (err) {
		ls_store__free(s);
		return err;
	}
	*out = s;
	return 0;
}

int ls_store__publish(struct ls_store *s)
{
	static const char *const stale[] = {"-wal", "-shm", "-journal"};
	char aux[NAME_MAX + 16];

	if (!s->out.tmp[0])
		return 0;
	db_close(s);
	/* the old profile's log must not replay into this one; unlinkat never follows */
	for (size_t i = 0; i < sizeof(stale) / sizeof(stale[0]); i++) {
		snprintf(aux, sizeof(aux), "%s%s", s->out.base, stale[i]);
		if (unlinkat(s->out.dirfd, aux, 0) && errno != ENOENT)
			return ls_err(-errno, "cannot replace profile %s: %s", s->path,
				      strerror(errno));
	}
	if (ls_outfile__commit(&s->out))
		return -EIO;
	return db_open(s, s->out.base, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;");
}

int ls_store__open(const char *path, struct ls_store **out)
{
	struct ls_store *s;
	sqlite3_stmt *st = NULL;
	int rc, version = -1, err;

	struct stat lst;

	if (access(path, R_OK))
		return ls_err(-errno, "cannot read profile %s: %s", path, strerror(errno));
	if (!lstat(path, &lst) && S_ISLNK(lst.st_mode))
		return ls_err(-ELOOP, "profile %s is a symbolic link; name the file itself", path);
	s = calloc(1, sizeof(*s));
	if (!s || !(s->path = strdup(path))) {
		free(s);
		return -ENOMEM;
	}
	/* read-write when possible, so that the log of a killed recorder can be replayed */
	rc = sqlite3_open_v2(path, &s->db,
			     (access(path, W_OK) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) |
				     SQLITE_OPEN_NOFOLLOW,
			     NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
		version = sqlite3_column_int(st, 0);
	else if (rc == SQLITE_OK)
		rc = sqlite3_errcode(s->db);
	sqlite3_finalize(st);
	if (rc == SQLITE_OK) {
		/* user_version alone does not prove it is ours: check a table too */
		rc = sqlite3_prepare_v2(s->db, "SELECT count(*) FROM samples", -1, &st, NULL);
		if (rc == SQLITE_OK && sqlite3_step(st) != SQLITE_ROW)
			rc = sqlite3_errcode(s->db);
		sqlite3_finalize(st);
	}
	if (rc != SQLITE_OK) {
		err = ls_err(-EINVAL, "%s is not a linescope profile or is corrupt (%s)", path,
			     sqlite3_errmsg(s->db));
		ls_store__free(s);
		return err;
	}
	if (version < LS_SCHEMA_OLDEST || version > LS_SCHEMA_VERSION) {
		err = ls_err(-EPROTO, "%s has profile schema %d; this linescope-bpf reads %d to %d",
			     path, version, LS_SCHEMA_OLDEST, LS_SCHEMA_VERSION);
		ls_store__free(s);
		return err;
	}
	s->version = version;
	*out = s;
	return 0;
}

int ls_store__version(const struct ls_store *s)
{
	return s->version;
}

sqlite3 *ls_store__db(struct ls_store *s)
{
	return s->db;
}

int ls_store__begin(struct ls_store *s)
{
	s->txns++;
	s->writes = 0;
	s->err = 0;
	return exec_sql(s, "BEGIN");
}

int ls_store__commit(struct ls_store *s)
{
	int err = s->err ?: exec_sql(s, "COMMIT");

	/* a transaction with a failed write is never committed half: it ends here either way */
	if (err)
		ls_store__rollback(s);
	s->err = 0;
	return err;
}

void ls_store__rollback(struct ls_store *s)
{
	sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
}

static int step(struct ls_store *s, enum stmt_id id)
{
	int rc;

	if (s->err) {
		sqlite3_clear_bindings(s->st[id]);
		return s->err;
	}
	if (++s->writes == s->fault_write && s->txns == s->fault_txn && s->fault_kill)
		kill(getpid(), SIGKILL);
	if (s->writes == s->fault_write && s->txns == s->fault_txn)
		return s->err = ls_err(-EIO,
				       "profile %s: write %lu of transaction %lu failed (injected)",
				       s->path, s->writes, s->txns);
	rc = sqlite3_step(s->st[id]);

	sqlite3_reset(s->st[id]);
	sqlite3_clear_bindings(s->st[id]);
	if (rc != SQLITE_DONE)
		return s->err = db_err(s, rc, "write");
	return 0;
}

static void bind_text(sqlite3_stmt *st, int i, const char *v)
{
	if (v)
		sqlite3_bind_text(st, i, v, -1, SQLITE_TRANSIENT);
	else
		sqlite3_bind_null(st, i);
}

static void bind_id(sqlite3_stmt *st, int i, int64_t v)
{
	if (v >= 0)
		sqlite3_bind_int64(st, i, v);
	else
		sqlite3_bind_null(st, i);
}

int ls_store__put_meta(struct ls_store *s, const char *key, const char *value)
{
	bind_text(s->st[ST_META], 1, key);
	bind_text(s->st[ST_META], 2, value);
	return step(s, ST_META);
}

int ls_store__put_meta_int(struct ls_store *s, const char *key, int64_t value)
{
	char v[32];

	snprintf(v, sizeof(v), "%lld", (long long)value);
	return ls_store__put_meta(s, key, v);
}

int ls_store__put_stat(struct ls_store *s, const char *key, int64_t value)
{
	bind_text(s->st[ST_STAT], 1, key);
	sqlite3_bind_int64(s->st[ST_STAT], 2, value);
	return step(s, ST_STAT);
}

int ls_store__put_process(struct ls_store *s, const struct ls_store_proc *p)
{
	sqlite3_stmt *st = s->st[ST_PROC];

	sqlite3_bind_int64(st, 1, p->id);
	sqlite3_bind_int(st, 2, p->pid);
	sqlite3_bind_int(st, 3, p->ppid);
	sqlite3_bind_int(st, 4, p->nspid);
	bind_id(st, 5, p->parent_id);
	bind_id(st, 6, p->spawn_stack);
	bind_id(st, 7, p->spawn_tid);
	bind_text(st, 8, p->comm);
	bind_text(st, 9, p->argv);
	bind_text(st, 10, p->exe);
	sqlite3_bind_int64(st, 11, p->start_ns);
	bind_id(st, 12, p->end_ns);
	if (p->exit_code >= 0)
		sqlite3_bind_int(st, 13, p->exit_code);
	bind_text(st, 14, p->python);
	bind_text(st, 15, p->python_build);
	bind_text(st, 16, p->note);
	bind_text(st, 17, p->cgroup);
	sqlite3_bind_int64(st, 18, p->parent_wait_ns);
	bind_text(st, 19, p->trace);
	bind_id(st, 20, p->cgroup_id);
	bind_id(st, 21, p->job ? p->job->rank : -1);
	bind_id(st, 22, p->job ? p->job->local_rank : -1);
	bind_id(st, 23, p->job ? p->job->world_size : -1);
	bind_text(st, 24, p->job && p->job->master_addr[0] ? p->job->master_addr : NULL);
	bind_id(st, 25, p->waiter_stack);
	bind_id(st, 26, p->waiter_tid);
	return step(s, ST_PROC);
}

int ls_store__put_exec(struct ls_store *s, const struct ls_store_exec *x)
{
	sqlite3_stmt *st = s->st[ST_EXEC];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->seq);
	bind_text(st, 3, x->how);
	sqlite3_bind_int64(st, 4, x->start_ns);
	bind_id(st, 5, x->end_ns);
	bind_text(st, 6, x->comm);
	bind_text(st, 7, x->argv);
	bind_text(st, 8, x->exe);
	bind_text(st, 9, x->python);
	bind_text(st, 10, x->python_build);
	bind_text(st, 11, x->note);
	sqlite3_bind_int64(st, 12, x->samples);
	sqlite3_bind_int64(st, 13, x->cpu_ns);
	sqlite3_bind_int64(st, 14, x->wait_ns);
	sqlite3_bind_int64(st, 15, x->unresolved);
	bind_id(st, 16, x->first_line_ns);
	return step(s, ST_EXEC);
}

int ls_store__put_thread(struct ls_store *s, int64_t proc_id, int tid, const char *name,
			 int64_t cpu_ns)
{
	sqlite3_bind_int64(s->st[ST_THREAD], 1, proc_id);
	sqlite3_bind_int(s->st[ST_THREAD], 2, tid);
	bind_text(s->st[ST_THREAD], 3, name);
	bind_id(s->st[ST_THREAD], 4, cpu_ns);
	return step(s, ST_THREAD);
}

int ls_store__put_thread_cpu(struct ls_store *s, int64_t proc_id, int tid, int64_t cpu_ns)
{
	sqlite3_bind_int64(s->st[ST_THREAD_CPU], 1, cpu_ns);
	sqlite3_bind_int64(s->st[ST_THREAD_CPU], 2, proc_id);
	sqlite3_bind_int(s->st[ST_THREAD_CPU], 3, tid);
	return step(s, ST_THREAD_CPU);
}

int ls_store__put_source(struct ls_store *s, int64_t id, const char *hash, const void *text,
			 size_t len)
{
	sqlite3_stmt *st = s->st[ST_SOURCE];

	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, hash);
	sqlite3_bind_int64(st, 3, len);
	sqlite3_bind_blob64(st, 4, text, len, SQLITE_TRANSIENT);
	return step(s, ST_SOURCE);
}

int ls_store__put_notebook(struct ls_store *s, const struct ls_store_notebook *nb)
{
	sqlite3_stmt *st = s->st[ST_NOTEBOOK];

	sqlite3_bind_int64(st, 1, nb->id);
	sqlite3_bind_int64(st, 2, nb->proc_id);
	sqlite3_bind_int64(st, 3, nb->pid);
	bind_text(st, 4, nb->path);
	bind_text(st, 5, nb->history);
	bind_text(st, 6, nb->note);
	bind_id(st, 7, nb->parent_id);
	bind_id(st, 8, nb->parent_id > 0 ? nb->parent_file_id : -1);
	bind_id(st, 9, nb->parent_id > 0 ? nb->parent_line : -1);
	return step(s, ST_NOTEBOOK);
}

int ls_store__put_cell(struct ls_store *s, const struct ls_store_cell *c)
{
	sqlite3_stmt *st = s->st[ST_CELL];

	sqlite3_bind_int64(st, 1, c->file_id);
	sqlite3_bind_int64(st, 2, c->notebook_id);
	sqlite3_bind_int64(st, 3, c->seq);
	if (c->number > 0)
		sqlite3_bind_int64(st, 4, c->number);
	else
		sqlite3_bind_null(st, 4);
	bind_text(st, 5, c->how);
	sqlite3_bind_int64(st, 6, c->hash);
	bind_text(st, 7, c->key);
	return step(s, ST_CELL);
}

int ls_store__put_spark_log(struct ls_store *s, int64_t id, const char *path, const char *codec,
			    const char *note)
{
	sqlite3_stmt *st = s->st[ST_SPARK_LOG];

	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, path);
	bind_text(st, 3, codec);
	bind_text(st, 4, note);
	return step(s, ST_SPARK_LOG);
}

int ls_store__put_spark_event(struct ls_store *s, int64_t log_id, int64_t seq, const char *line,
			      size_t len)
{
	sqlite3_stmt *st = s->st[ST_SPARK_EVENT];

	sqlite3_bind_int64(st, 1, log_id);
	sqlite3_bind_int64(st, 2, seq);
	sqlite3_bind_text(st, 3, line, (int)len, SQLITE_STATIC);
	return step(s, ST_SPARK_EVENT);
}

int ls_store__put_file(struct ls_store *s, int64_t id, const char *path, int64_t source_id,
		       const char *kind, const char *unavailable)
{
	sqlite3_stmt *st = s->st[ST_FILE];

	sqlite3_bind_int64(st, 1, id);
	bind_text(st, 2, path);
	bind_id(st, 3, source_id);
	bind_text(st, 4, kind);
	bind_text(st, 5, unavailable);
	return step(s, ST_FILE);
}

int ls_store__put_function(struct ls_store *s, int64_t id, int64_t file_id, const char *qualname,
			   int firstlineno)
{
	sqlite3_stmt *st = s->st[ST_FUNC];

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int64(st, 2, file_id);
	bind_text(st, 3, qualname);
	sqlite3_bind_int(st, 4, firstlineno);
	return step(s, ST_FUNC);
}

int ls_store__put_stack(struct ls_store *s, int64_t id, const uint32_t *frames, int n,
			bool truncated)
{
	sqlite3_stmt *st = s->st[ST_STACK];

	sqlite3_bind_int64(st, 1, id);
	sqlite3_bind_int(st, 2, n);
	sqlite3_bind_blob(st, 3, frames, n * 8, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 4, truncated);
	return step(s, ST_STACK);
}

int ls_store__put_sample(struct ls_store *s, const struct ls_store_sample *x)
{
	sqlite3_stmt *st = s->st[ST_SAMPLE];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->tid);
	sqlite3_bind_int64(st, 3, x->stack_id);
	sqlite3_bind_int(st, 4, x->kind);
	sqlite3_bind_int(st, 5, x->mode);
	sqlite3_bind_int(st, 6, x->gil);
	sqlite3_bind_int64(st, 7, x->count);
	sqlite3_bind_int64(st, 8, x->weight_ns);
	return step(s, ST_SAMPLE);
}

int ls_store__put_rss(struct ls_store *s, const struct ls_store_rss *x)
{
	sqlite3_stmt *st = s->st[ST_RSS];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int64(st, 2, x->t_ns);
	sqlite3_bind_int64(st, 3, x->rss);
	sqlite3_bind_int64(st, 4, x->stack_id);
	sqlite3_bind_int(st, 5, x->event);
	return step(s, ST_RSS);
}

int ls_store__put_tick(struct ls_store *s, const struct ls_store_tick *x)
{
	sqlite3_stmt *st = s->st[ST_TICK];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->tid);
	sqlite3_bind_int64(st, 3, x->t_ns);
	sqlite3_bind_int64(st, 4, x->dur_ns);
	sqlite3_bind_int64(st, 5, x->stack_id);
	sqlite3_bind_int(st, 6, x->kind);
	sqlite3_bind_int(st, 7, x->mode);
	return step(s, ST_TICK);
}

int ls_store__put_gpu_span(struct ls_store *s, const struct ls_store_gpu_span *x)
{
	sqlite3_stmt *st = s->st[ST_GPU_SPAN];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->device);
	sqlite3_bind_int(st, 3, x->stream);
	sqlite3_bind_int64(st, 4, x->t_ns);
	sqlite3_bind_int64(st, 5, x->dur_ns);
	sqlite3_bind_int(st, 6, x->kind);
	bind_text(st, 7, x->name);
	sqlite3_bind_int64(st, 8, x->stack_id);
	sqlite3_bind_int64(st, 9, x->count);
	sqlite3_bind_int64(st, 10, x->bytes);
	sqlite3_bind_int64(st, 11, x->tid);
	return step(s, ST_GPU_SPAN);
}

int ls_store__put_gpu(struct ls_store *s, const struct ls_store_gpu *x)
{
	sqlite3_stmt *st = s->st[ST_GPU];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int64(st, 2, x->stack_id);
	sqlite3_bind_int64(st, 3, x->gpu_ns);
	sqlite3_bind_int64(st, 4, x->api_ns);
	sqlite3_bind_int64(st, 5, x->mem_peak);
	sqlite3_bind_int64(st, 6, x->kernels);
	sqlite3_bind_int64(st, 7, x->nccl_ns);
	sqlite3_bind_int(st, 8, x->sampled);
	sqlite3_bind_int64(st, 9, x->native_ns);
	return step(s, ST_GPU);
}

int ls_store__put_gpu_proc(struct ls_store *s, const struct ls_store_gpu_proc *x)
{
	sqlite3_stmt *st = s->st[ST_GPU_PROC];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->hello);
	sqlite3_bind_int(st, 3, x->status);
	bind_text(st, 4, x->message);
	sqlite3_bind_int(st, 5, x->cupti_version);
	bind_text(st, 6, x->nvml_note);
	sqlite3_bind_int64(st, 7, x->dropped);
	sqlite3_bind_int64(st, 8, x->lost);
	sqlite3_bind_int64(st, 9, x->peak_alloc);
	sqlite3_bind_int64(st, 10, x->peak_nvml);
	sqlite3_bind_int64(st, 11, x->launches);
	sqlite3_bind_int64(st, 12, x->gpu_ns);
	sqlite3_bind_int64(st, 13, x->api_ns);
	return step(s, ST_GPU_PROC);
}

int ls_store__put_gpu_device(struct ls_store *s, const struct ls_store_gpu_device *x)
{
	sqlite3_stmt *st = s->st[ST_GPU_DEV];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int64(st, 2, x->ordinal);
	bind_text(st, 3, x->name);
	sqlite3_bind_int64(st, 4, x->mem_total);
	bind_text(st, 5, x->driver);
	sqlite3_bind_int64(st, 6, x->cuda_driver);
	sqlite3_bind_int64(st, 7, x->cc);
	bind_text(st, 8, x->uuid);
	return step(s, ST_GPU_DEV);
}

int ls_store__put_trace(struct ls_store *s, const struct ls_store_trace *x)
{
	sqlite3_stmt *st = s->st[ST_TRACE];

	sqlite3_bind_int64(st, 1, x->proc_id);
	sqlite3_bind_int(st, 2, x->tid);
	sqlite3_bind_int64(st, 3, x->func_id);
	sqlite3_bind_int(st, 4, x->line);
	sqlite3_bind_int64(st, 5, x->hits);
	sqlite3_bind_int64(st, 6, x->own_ns);
	sqlite3_bind_int64(st, 7, x->total_ns);
	return step(s, ST_TRACE);
}
