// SPDX-License-Identifier: MIT
/*
 * The record consumer (userspace/recorder*.c) driven with hand-built ring-buffer records, no BPF:
 * what it aggregates and writes to the profile, read back with SQLite; malformed records refused
 * and counted; and a profile whose N-th write of a flush fails (LINESCOPE_FAULT_STORE, store.c's
 * test hook), for every N: the flush reports -EIO, the file keeps the last good flush, and the
 * next flush writes everything again, once.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <sqlite3.h>
#include "log.h"
#include "recorder.h"
#include "store.h"
#include "../lib/sql_query.h"
#include "../lib/tmp_profile.h"

/* Above PID_MAX_LIMIT (2^22): no process of the machine has these, so /proc never answers */
#define PID   4500001
#define CHILD 4500002
#define T0    1000000000ULL /* the run's start on the records' clock */
#define MS    1000000ULL

static char path[64];

struct fake_bpf {
	int set_proc, set_layout, forget_stack;
};

static int set_proc(void *ctx, pid_t pid, const struct ls_proc *p)
{
	((struct fake_bpf *)ctx)->set_proc++;
	return 0;
}

static int set_layout(void *ctx, uint32_t id, const struct ls_pylayout *L)
{
	((struct fake_bpf *)ctx)->set_layout++;
	return 0;
}

static void forget_stack(void *ctx, const struct ls_known_key *k)
{
	((struct fake_bpf *)ctx)->forget_stack++;
}

static const struct ls_recorder_ops ops = {
	.set_proc = set_proc,
	.set_layout = set_layout,
	.forget_stack = forget_stack,
};

static int setup(void **state)
{
	ls_test_profile_path(path, "recorder");
	ls_log_set_level(LS_LOG_QUIET); /* errors only: the injected failures log one each */
	return 0;
}

static int teardown(void **state)
{
	ls_test_profile_remove(path);
	return 0;
}

/* ---- records ---------------------------------------------------------------------------- */

static void feed(struct ls_recorder *r, const void *rec, size_t len)
{
	assert_int_equal(ls_recorder__handle(r, (void *)rec, len), 0);
}

static void proc_event(struct ls_recorder *r, uint32_t kind, uint32_t pid, uint32_t ppid,
		       uint32_t tid, uint64_t ts, int exit_code, uint64_t cpu_ns)
{
	struct ls_proc_event e = {
		.type = LS_REC_PROC,
		.kind = kind,
		.pid = pid,
		.ppid = ppid,
		.tid = tid,
		.exit_code = exit_code,
		.ts = ts,
		.cgroup_id = 77,
		.cpu_ns = cpu_ns,
		.start_ns = ts,
		.nspid = 7,
	};

	feed(r, &e, sizeof(e));
}

static void exec_event(struct ls_recorder *r, uint32_t pid, uint64_t ts)
{
	static const char args[] = "python3\0app.py\0--fast";
	struct ls_exec_event *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->type = LS_REC_EXEC;
	e->pid = pid;
	e->old_tid = pid;
	e->nspid = 7;
	e->ts = ts;
	e->start_ns = T0;
	e->cgroup_id = 77;
	e->gen = 2;
	strcpy(e->comm, "python3");
	strcpy(e->path, "/usr/bin/python3");
	e->path_len = strlen(e->path);
	memcpy(e->args, args, sizeof(args));
	e->args_len = sizeof(args);
	feed(r, e, sizeof(*e));
	free(e);
}

/* pid execs the file named (dev 1, ino, mtime 5) */
static void exec_file(struct ls_recorder *r, uint32_t pid, uint64_t ts, uint64_t ino)
{
	struct ls_exec_event *e = calloc(1, sizeof(*e));

	assert_non_null(e);
	e->type = LS_REC_EXEC;
	e->pid = pid;
	e->old_tid = pid;
	e->ts = ts;
	e->start_ns = T0;
	e->gen = 2;
	e->image = (struct ls_image_key){.dev = 1, .ino = ino, .mtime_sec = 5};
	strcpy(e->comm, "tool");
	strcpy(e->path, "/usr/bin/tool");
	e->path_len = strlen(e->path);
	feed(r, e, sizeof(*e));
	free(e);
}

struct sample_spec {
	uint32_t type, pid, tid;
	uint8_t kind, flags;
	uint16_t xflags;
	uint64_t ts, weight_ns, aux, stack;
	const char *comm;
};

static void sample(struct ls_recorder *r, const struct sample_spec *x)
{
	struct ls_sample s = {
		.type = x->type ?: LS_REC_SAMPLE,
		.pid = x->pid ?: PID,
		.tid = x->tid ?: x->pid ?: PID,
		.kind = x->kind,
		.flags = x->flags,
		.ts = x->ts ?: T0 + 10 * MS,
		.weight_ns = x->weight_ns,
		.aux = x->aux,
		.xflags = x->xflags,
		.stack = x->stack,
	};

	snprintf(s.comm, sizeof(s.comm), "%s", x->comm ?: "python3");
	feed(r, &s, sizeof(s));
}

static void oncpu(struct ls_recorder *r, uint32_t tid, const char *comm, uint8_t flags, int n)
{
	for (int i = 0; i < n; i++)
		sample(r, &(struct sample_spec){.tid = tid,
						.comm = comm,
						.flags = flags,
						.weight_ns = MS,
						.ts = T0 + (20 + i) * MS});
}

/* n on-CPU samples of pid that BPF could not walk: no interpreter known for it */
static void unwalked(struct ls_recorder *r, uint32_t pid, int n)
{
	for (int i = 0; i < n; i++)
		sample(r, &(struct sample_spec){.pid = pid,
						.flags = LS_SF_NOT_PYTHON,
						.weight_ns = MS,
						.ts = T0 + (100 + i) * MS});
}

/* pid execs file ino at ms, has n unwalked samples, and exits a millisecond later */
static void short_run(struct ls_recorder *r, uint32_t pid, uint64_t ms, uint64_t ino, int n)
{
	exec_file(r, pid, T0 + ms * MS, ino);
	unwalked(r, pid, n);
	proc_event(r, LS_PE_EXIT, pid, 1, pid, T0 + (ms + 1) * MS, 0, 0);
}

/* ---- reading the profile back ------------------------------------------------------------ */

static void check_text(sqlite3 *db, const char *sql, const char *want)
{
	sqlite3_stmt *st = NULL;

	assert_int_equal(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	assert_non_null(sqlite3_column_text(st, 0));
	assert_string_equal((const char *)sqlite3_column_text(st, 0), want);
	sqlite3_finalize(st);
}

static int64_t stat_of(sqlite3 *db, const char *key)
{
	char sql[128];

	snprintf(sql, sizeof(sql), "SELECT value FROM stats WHERE key = '%s'", key);
	return ls_test_q_int(db, sql);
}

static struct ls_store *new_store(void)
{
	struct ls_store *s = NULL;

	ls_test_profile_remove(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	return s;
}

/* ---- tests -------------------------------------------------------------------------------- */

static void test_processes_and_samples(void **state)
{
	struct fake_bpf bpf = {0};
	struct ls_recorder_stats st;
	struct ls_store *s = new_store();
	struct ls_recorder *r = NULL;
	sqlite3 *db;

	assert_int_equal(ls_recorder__new(s, &ops, &bpf, T0, &r), 0);
	/* forked by a parent that is not a target, then exec'd into python3 */
	proc_event(r, LS_PE_FORK, PID, 1, 1, T0 + 1 * MS, 0, 0);
	exec_event(r, PID, T0 + 2 * MS);
	assert_true(bpf.set_proc >= 1); /* its BPF entry, pending discovery */
	oncpu(r, PID, "python3", 0, 3);
	oncpu(r, PID, "python3", LS_SF_KERNEL, 1);
	oncpu(r, PID + 100, "loader", LS_SF_GIL_KNOWN | LS_SF_GIL_HELD, 2);
	/* off CPU: blocked 5 ms, then 7 ms waiting for the GIL, then 2 ms preempted */
	sample(r, &(struct sample_spec){.type = LS_REC_OFFCPU,
					.kind = LS_SAMPLE_OFFCPU,
					.xflags = LS_XF_VOLUNTARY,
					.weight_ns = 5 * MS});
	sample(r, &(struct sample_spec){.type = LS_REC_OFFCPU,
					.kind = LS_SAMPLE_OFFCPU,
					.xflags = LS_XF_GIL_WAIT | LS_XF_VOLUNTARY,
					.weight_ns = 7 * MS});
	sample(r, &(struct sample_spec){
			  .type = LS_REC_OFFCPU, .kind = LS_SAMPLE_OFFCPU, .weight_ns = 2 * MS});
	/* a stack the kernel adds up from now on, then its totals, then totals never described */
	sample(r, &(struct sample_spec){.weight_ns = MS, .stack = 0xabcdef, .ts = T0 + 30 * MS});
	ls_recorder__add_agg(r,
			     &(struct ls_agg_key){.stack = 0xabcdef,
						  .pid = PID,
						  .tid = PID,
						  .cls = LS_CLASS_CPU,
						  .mode = LS_MODE_NATIVE},
			     &(struct ls_agg_val){.count = 10, .weight_ns = 10 * MS});
	ls_recorder__add_agg(r,
			     &(struct ls_agg_key){.stack = 0x999,
						  .pid = PID,
						  .tid = PID,
						  .cls = LS_CLASS_CPU,
						  .mode = LS_MODE_NATIVE},
			     &(struct ls_agg_val){.count = 4, .weight_ns = 4 * MS});
	/* a child started from this thread, and waited for 9 ms */
	sample(r, &(struct sample_spec){.kind = LS_SAMPLE_SPAWN, .aux = CHILD});
	sample(r, &(struct sample_spec){.type = LS_REC_OFFCPU,
					.kind = LS_SAMPLE_OFFCPU,
					.xflags = LS_XF_WAITPID | LS_XF_VOLUNTARY,
					.aux = CHILD,
					.weight_ns = 9 * MS});
	/* a memory reading */
	sample(r,
	       &(struct sample_spec){.kind = LS_SAMPLE_RSS, .aux = 123456789, .ts = T0 + 40 * MS});
	/* the loader thread ends after 3 ms of CPU; the child exits with status 256 */
	proc_event(r, LS_PE_THREAD_EXIT, PID, 0, PID + 100, T0 + 50 * MS, 0, 3 * MS);
	proc_event(r, LS_PE_EXIT, CHILD, PID, CHILD, T0 + 60 * MS, 256, 0);

	ls_recorder__stats(r, &st);
	assert_int_equal(st.processes, 2);
	assert_int_equal(st.live, 1);
	assert_int_equal(st.threads, 2);
	/* on-CPU: 3 + 1 + 2 whole, 1 describing the stack, 10 added up in the kernel */
	assert_int_equal(st.samples, 17);
	assert_int_equal(st.agg_orphans, 4);
	assert_int_equal(st.bad_records, 0);
	assert_int_equal(ls_recorder__flush(r), 0);

	db = ls_test_open_ro(path);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM processes"), 2);
	check_text(db, "SELECT comm FROM processes WHERE pid = 4500001", "python3");
	check_text(db, "SELECT argv FROM processes WHERE pid = 4500001", "python3 app.py --fast");
	check_text(db, "SELECT exe FROM processes WHERE pid = 4500001", "/usr/bin/python3");
	assert_int_equal(ls_test_q_int(db, "SELECT start_ns FROM processes WHERE pid = 4500001"),
			 1 * MS);
	assert_int_equal(
		ls_test_q_int(db, "SELECT end_ns IS NULL FROM processes WHERE pid = 4500001"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT cgroup_id FROM processes WHERE pid = 4500001"),
			 77);
	/* the child: its parent row, the thread that started it, its wait, its exit */
	assert_int_equal(ls_test_q_int(db, "SELECT parent_id FROM processes WHERE pid = 4500002"),
			 1);
	assert_int_equal(ls_test_q_int(db, "SELECT spawn_tid FROM processes WHERE pid = 4500002"),
			 PID);
	assert_int_equal(
		ls_test_q_int(db, "SELECT parent_wait_ns FROM processes WHERE pid = 4500002"),
		9 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT exit_code FROM processes WHERE pid = 4500002"),
			 256);
	assert_int_equal(ls_test_q_int(db, "SELECT end_ns FROM processes WHERE pid = 4500002"),
			 60 * MS);
	/* its images: the fork's, then python3's, with what ran in it */
	check_text(db, "SELECT how FROM execs WHERE process_id = 1 AND seq = 0", "fork");
	check_text(db, "SELECT how FROM execs WHERE process_id = 1 AND seq = 1", "exec");
	assert_int_equal(
		ls_test_q_int(db, "SELECT end_ns FROM execs WHERE process_id = 1 AND seq = 0"),
		2 * MS);
	assert_int_equal(
		ls_test_q_int(db, "SELECT samples FROM execs WHERE process_id = 1 AND seq = 1"),
		17);
	assert_int_equal(
		ls_test_q_int(db, "SELECT cpu_ns FROM execs WHERE process_id = 1 AND seq = 1"),
		17 * MS);
	assert_int_equal(
		ls_test_q_int(db, "SELECT wait_ns FROM execs WHERE process_id = 1 AND seq = 1"),
		23 * MS);
	/* no interpreter known: every on-CPU sample is without lines */
	assert_int_equal(
		ls_test_q_int(db, "SELECT unresolved FROM execs WHERE process_id = 1 AND seq = 1"),
		17);
	/* threads, and the ended one's CPU time */
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM threads WHERE process_id = 1"), 2);
	check_text(db, "SELECT name FROM threads WHERE tid = 4500101", "loader");
	assert_int_equal(ls_test_q_int(db, "SELECT cpu_ns FROM threads WHERE tid = 4500101"),
			 3 * MS);
	/* samples by thread, class, mode and GIL (no Python frames: stack 0) */
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM samples WHERE stack_id != 0"), 0);
	assert_int_equal(ls_test_q_int(db,
				       "SELECT count FROM samples WHERE tid = 4500001 AND kind = 0"
				       " AND mode = 1"),
			 3 + 1 + 10);
	assert_int_equal(ls_test_q_int(db, "SELECT weight_ns FROM samples WHERE tid = 4500001"
					   " AND kind = 0 AND mode = 1"),
			 14 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT count FROM samples WHERE kind = 0 AND mode = 2"),
			 1);
	assert_int_equal(
		ls_test_q_int(db, "SELECT count FROM samples WHERE tid = 4500101 AND gil = 1"), 2);
	assert_int_equal(ls_test_q_int(db, "SELECT weight_ns FROM samples WHERE kind = 1"),
			 14 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT weight_ns FROM samples WHERE kind = 2"), 7 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT weight_ns FROM samples WHERE kind = 3"), 2 * MS);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(count) FROM samples WHERE kind = 0"), 17);
	/* the reading, as an event */
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM rss"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT rss FROM rss WHERE event = 1"), 123456789);
	assert_int_equal(ls_test_q_int(db, "SELECT t_ns FROM rss"), 40 * MS);
	assert_int_equal(stat_of(db, "received_samples"), 17);
	assert_int_equal(stat_of(db, "unresolved_samples"), 17);
	assert_int_equal(stat_of(db, "bad_records"), 0);
	sqlite3_close(db);

	/* a record of the exited child: counted as after its exit, kept on its row */
	{
		struct ls_sample late = {.type = LS_REC_SAMPLE,
					 .pid = CHILD,
					 .tid = CHILD,
					 .ts = T0 + 61 * MS,
					 .weight_ns = MS};

		feed(r, &late, sizeof(late));
	}
	ls_recorder__stats(r, &st);
	assert_int_equal(st.after_exit, 1);
	assert_int_equal(st.processes, 2);
	assert_int_equal(ls_recorder__flush(r), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(stat_of(db, "after_exit"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT count FROM samples WHERE process_id = 2"), 1);
	sqlite3_close(db);
	ls_recorder__free(r);
	ls_store__free(s);
}

/*
 * Samples of a program that is not Python are its command's, not samples lost for want of an
 * interpreter: a process seen alive with no interpreter settles it for every process of its file,
 * also one gone before it could be looked at; one nothing tells about stays counted.
 */
static void test_not_python(void **state)
{
	const uint32_t gone = 4500011, later = 4500012, child = 4500013, other = 4500014;
	struct fake_bpf bpf = {0};
	struct ls_store *s = new_store();
	struct ls_recorder *r = NULL;
	int go[2];
	pid_t live;
	char c;
	sqlite3 *db;

	assert_int_equal(ls_recorder__new(s, &ops, &bpf, T0, &r), 0);
	/* gone before /proc could say: undecided, counted */
	short_run(r, gone, 1, 100, 3);
	assert_int_equal(ls_recorder__flush(r), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(stat_of(db, "unresolved_samples"), 3);
	sqlite3_close(db);
	/* a live process of the same file (this test's own code: no interpreter in it) */
	assert_int_equal(pipe(go), 0);
	live = fork();
	assert_true(live >= 0);
	if (live == 0) {
		close(go[1]);
		_exit(read(go[0], &c, 1) < 0);
	}
	close(go[0]);
	short_run(r, live, 6, 100, 2);
	close(go[1]);
	waitpid(live, NULL, 0);
	/* a later process of the file is known at its exec, and so is its forked child */
	exec_file(r, later, T0 + 8 * MS, 100);
	unwalked(r, later, 2);
	proc_event(r, LS_PE_FORK, child, later, 1, T0 + 9 * MS, 0, 0);
	unwalked(r, child, 2);
	/* another file, never seen alive: its samples stay counted */
	short_run(r, other, 10, 200, 4);
	assert_int_equal(ls_recorder__flush(r), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(stat_of(db, "unresolved_samples"), 4);
	assert_int_equal(stat_of(db, "images_none"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(samples) FROM execs"), 13);
	assert_int_equal(ls_test_q_int(db,
				       "SELECT count(*) FROM execs e JOIN processes p ON "
				       "p.id = e.process_id WHERE p.pid = 4500011 AND "
				       "e.unresolved = 0 AND e.python IS NULL AND e.samples = 3"),
			 1);
	assert_int_equal(ls_test_q_int(db, "SELECT e.unresolved FROM execs e JOIN processes p ON "
					   "p.id = e.process_id WHERE p.pid = 4500014"),
			 4);
	sqlite3_close(db);
	ls_recorder__free(r);
	ls_store__free(s);
}

static void test_bad_records(void **state)
{
	struct ls_store *s = new_store();
	struct ls_recorder *r = NULL;
	struct ls_recorder_stats st;
	struct ls_code_rec *c = calloc(1, sizeof(*c) + 8); /* one record longer than the largest */
	unsigned char big[sizeof(struct ls_sample) + 2 * sizeof(struct ls_frame)];
	struct ls_sample *smp = (struct ls_sample *)big;
	uint64_t bad = 0;
	uint32_t junk = 42;
	sqlite3 *db;

	assert_non_null(c);
	assert_int_equal(ls_recorder__new(s, &ops, &(struct fake_bpf){0}, T0, &r), 0);
	proc_event(r, LS_PE_FORK, PID, 1, 1, T0 + MS, 0, 0);

	feed(r, &junk, 2); /* shorter than a type */
	bad++;
	feed(r, &junk, sizeof(junk)); /* no such type */
	bad++;
	/* a sample cut short, and one whose frames run past the record or past LS_MAX_FRAMES */
	memset(big, 0, sizeof(big));
	smp->type = LS_REC_SAMPLE;
	smp->pid = PID;
	smp->tid = PID;
	feed(r, smp, sizeof(*smp) - 1);
	bad++;
	smp->nframes = 3;
	feed(r, smp, sizeof(big));
	bad++;
	smp->nframes = LS_MAX_FRAMES + 1;
	feed(r, smp, sizeof(big));
	bad++;
	smp->type = LS_REC_OFFCPU;
	feed(r, smp, 8);
	bad++;
	/* process events too short or of no known kind; a short exec record */
	{
		struct ls_proc_event e = {.type = LS_REC_PROC, .kind = 99, .pid = PID};

		feed(r, &e, sizeof(e) - 8);
		bad++;
		feed(r, &e, sizeof(e));
		bad++;
		e.type = LS_REC_EXEC;
		feed(r, &e, sizeof(e));
		bad++;
	}
	/* ticks: short, or out of range class or mode */
	{
		struct ls_tick t = {.type = LS_REC_TICK, .pid = PID, .tid = PID, .cls = 4};

		feed(r, &t, sizeof(t) - 1);
		bad++;
		feed(r, &t, sizeof(t));
		bad++;
		t.cls = 0;
		t.mode = LS_MODE_UNKNOWN + 1;
		feed(r, &t, sizeof(t));
		bad++;
	}
	/* added-up totals out of range or empty */
	ls_recorder__add_agg(r, &(struct ls_agg_key){.pid = PID, .cls = 7},
			     &(struct ls_agg_val){.count = 1});
	bad++;
	ls_recorder__add_agg(r, &(struct ls_agg_key){.pid = PID}, &(struct ls_agg_val){.count = 0});
	bad++;
	/* code records: shorter than the header, longer than the largest, lengths past the end */
	c->type = LS_REC_CODE;
	c->pid = PID;
	feed(r, c, LS_CODE_REC_HDR - 1);
	bad++;
	feed(r, c, sizeof(*c) + 1);
	bad++;
	feed(r, c, sizeof(*c)); /* the largest, well formed: of no known interpreter, dropped */
	c->fname_len = LS_CODE_NAME_MAX + 1;
	feed(r, c, sizeof(*c));
	bad++;
	c->fname_len = 10;
	c->qname_len = 10;
	c->ltab_len = 100;
	feed(r, c, LS_CODE_REC_HDR + 50);
	bad++;
	c->fname_len = 0xffffffffu; /* LS_CODE_REC_SIZE would wrap */
	feed(r, c, LS_CODE_REC_HDR + 50);
	bad++;

	ls_recorder__stats(r, &st);
	assert_int_equal(st.bad_records, bad);
	/* nothing was made of them: the fork's process, no thread, no sample */
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.threads, 0);
	assert_int_equal(st.samples, 0);
	assert_int_equal(ls_recorder__flush(r), 0);
	db = ls_test_open_ro(path);
	assert_int_equal(stat_of(db, "bad_records"), (int64_t)bad);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM samples"), 0);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM processes"), 1);
	sqlite3_close(db);
	ls_recorder__free(r);
	ls_store__free(s);
	free(c);
}

/* Flush 1 (good), then more records; returns flush 2's result (its transaction is number 2). */
static int record_two_flushes(struct ls_recorder *r)
{
	proc_event(r, LS_PE_FORK, PID, 1, 1, T0 + MS, 0, 0);
	oncpu(r, PID, "python3", 0, 5);
	sample(r, &(struct sample_spec){.kind = LS_SAMPLE_RSS, .aux = 1000, .ts = T0 + 5 * MS});
	assert_int_equal(ls_recorder__flush(r), 0);
	/* flush 2: more of the same key, a new thread, a new process, an exit, another reading */
	oncpu(r, PID, "python3", 0, 2);
	oncpu(r, PID + 50, "worker", 0, 4);
	proc_event(r, LS_PE_FORK, CHILD, PID, PID, T0 + 6 * MS, 0, 0);
	proc_event(r, LS_PE_EXIT, CHILD, PID, CHILD, T0 + 7 * MS, 0, 0);
	sample(r, &(struct sample_spec){.kind = LS_SAMPLE_RSS, .aux = 2000, .ts = T0 + 8 * MS});
	return ls_recorder__flush(r);
}

/* What flush 1 left in the file. */
static void check_first_flush(sqlite3 *db)
{
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM processes"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM threads"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(count) FROM samples"), 5);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM rss"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT samples FROM execs WHERE process_id = 1"), 5);
	assert_int_equal(stat_of(db, "received_samples"), 5);
}

/* What both flushes hold, written once. */
static void check_all(sqlite3 *db)
{
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM processes"), 2);
	assert_int_equal(ls_test_q_int(db, "SELECT exit_code FROM processes WHERE id = 2"), 0);
	assert_int_equal(ls_test_q_int(db, "SELECT parent_id FROM processes WHERE id = 2"), 1);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM threads"), 2);
	check_text(db, "SELECT name FROM threads WHERE tid = 4500051", "worker");
	assert_int_equal(ls_test_q_int(db, "SELECT count FROM samples WHERE tid = 4500001"), 7);
	assert_int_equal(ls_test_q_int(db, "SELECT count FROM samples WHERE tid = 4500051"), 4);
	assert_int_equal(ls_test_q_int(db, "SELECT count(*) FROM rss"), 2);
	assert_int_equal(ls_test_q_int(db, "SELECT sum(rss) FROM rss"), 3000);
	assert_int_equal(ls_test_q_int(db, "SELECT samples FROM execs WHERE process_id = 1"), 11);
	assert_int_equal(stat_of(db, "received_samples"), 11);
}

static void test_flush_fails(void **state)
{
	int failed = 0, w;

	/* write w of flush 2 fails; past its last write, flush 2 succeeds and the loop ends */
	for (w = 1; w < 200; w++) {
		struct ls_recorder *r = NULL;
		struct ls_store *s;
		char spec[32];
		sqlite3 *db;
		int err;

		snprintf(spec, sizeof(spec), "2:%d", w);
		setenv("LINESCOPE_FAULT_STORE", spec, 1);
		s = new_store();
		unsetenv("LINESCOPE_FAULT_STORE");
		assert_int_equal(ls_recorder__new(s, &ops, &(struct fake_bpf){0}, T0, &r), 0);
		err = record_two_flushes(r);
		if (!err) {
			db = ls_test_open_ro(path);
			check_all(db);
			sqlite3_close(db);
			ls_recorder__free(r);
			ls_store__free(s);
			break;
		}
		failed++;
		assert_int_equal(err, -EIO);
		/* rolled back: a reader sees flush 1, whole, and so does the writer's connection */
		db = ls_test_open_ro(path);
		check_first_flush(db);
		sqlite3_close(db);
		check_first_flush(ls_store__db(s));
		/* the next flush writes everything again, once */
		assert_int_equal(ls_recorder__flush(r), 0);
		db = ls_test_open_ro(path);
		check_all(db);
		sqlite3_close(db);
		ls_recorder__free(r);
		ls_store__free(s);
	}
	/* every write of the flush was made to fail once (it has more than a dozen) */
	assert_true(w < 200);
	assert_true(failed > 12);
	assert_int_equal(w, failed + 1);
}

/* What files probed before any process ran them published: each entry's layout slot */
struct fake_probes {
	unsigned layouts;	      /* slots installed */
	int image_layout, lib_layout; /* of the last image and library published; -1 none */
};

static int probe_set_proc(void *ctx, pid_t pid, const struct ls_proc *p)
{
	return 0;
}

static int probe_set_layout(void *ctx, uint32_t id, const struct ls_pylayout *L)
{
	struct fake_probes *f = ctx;

	assert_int_equal(id, f->layouts); /* slots are handed out in order */
	f->layouts++;
	return 0;
}

static int probe_set_image(void *ctx, const struct ls_image_key *k, const struct ls_image *img)
{
	if (img)
		((struct fake_probes *)ctx)->image_layout = img->proc.layout_id;
	return 0;
}

static int probe_set_lib(void *ctx, uint32_t slot, const char *path, uint64_t offset,
			 const struct ls_lib_image *lib)
{
	((struct fake_probes *)ctx)->lib_layout = lib->proc.layout_id;
	return 0;
}

/*
 * An entry BPF sets by itself (a known image at its exec, a shared build at its start) walks with
 * a layout that is installed: a file probed before any process ran it (a launched command's) used
 * to publish slot 0 with no layout ever set there. Debian's static build, and pyenv's shared one
 * (its libpython found as ld.so would find it), each the first file of a session.
 */
static void test_probed_files(void **state)
{
	static const struct ls_recorder_ops probe_ops = {
		.set_proc = probe_set_proc,
		.set_layout = probe_set_layout,
		.set_image = probe_set_image,
		.set_lib = probe_set_lib,
	};
	static const struct {
		const char *exe;
		int err;
		bool shared;
	} files[] = {
		{"/usr/bin/python3.11", 0, false},
		{"/root/.pyenv/versions/3.11.7/bin/python3.11", -EAGAIN, true},
	};

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		struct fake_probes f = {.image_layout = -1, .lib_layout = -1};
		struct ls_store *s = new_store();
		struct ls_recorder *r = NULL;
		int slot;

		assert_int_equal(ls_recorder__new(s, &probe_ops, &f, T0, &r), 0);
		assert_int_equal(ls_recorder__learn_exe(r, files[i].exe), files[i].err);
		slot = files[i].shared ? f.lib_layout : f.image_layout;
		assert_int_equal(files[i].shared ? f.image_layout : f.lib_layout, -1);
		assert_true(slot >= 0 && (unsigned)slot < f.layouts);
		ls_recorder__free(r);
		ls_store__free(s);
		ls_test_profile_remove(path);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_processes_and_samples, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_python, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_records, setup, teardown),
		cmocka_unit_test_setup_teardown(test_flush_fails, setup, teardown),
		cmocka_unit_test_setup_teardown(test_probed_files, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
