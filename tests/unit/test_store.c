// SPDX-License-Identifier: MIT
/* Store round trip: what the recorder writes, the report model reads back. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "model.h"
#include "store.h"
#include "../lib/test_proc.h"
#include "../lib/tmp_profile.h"

LS_TEST_PROFILE_FIXTURE("store")

/* app.py's source, file 1, functions f (1) and <module> (2), and their two stacks. */
static void put_app(struct ls_store *s)
{
	const char *text = "def f():\n    x = 1\n    return x\n\nf()\n";
	/* stack 1: f line 2 called from <module> line 5; stack 2: <module> line 5 alone */
	const uint32_t st1[] = {1, 2, 2, 5}, st2[] = {2, 5};

	assert_int_equal(ls_store__put_source(s, 1, "abc", text, strlen(text)), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/app.py", 1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_function(s, 2, 1, "<module>", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 2, false), 0);
	assert_int_equal(ls_store__put_stack(s, 2, st2, 1, false), 0);
}

/* count on-CPU samples of 1 ms each, on thread 100 of process 1 */
static void put_samples(struct ls_store *s, int64_t stack_id, int64_t count)
{
	struct ls_store_sample x = {.proc_id = 1,
				    .tid = 100,
				    .stack_id = stack_id,
				    .count = count,
				    .weight_ns = count * 1000000};

	assert_int_equal(ls_store__put_sample(s, &x), 0);
}

static void write_profile(void)
{
	struct ls_store *s;
	struct ls_store_proc p = ls_test_proc();

	p.argv = "python3 app.py";
	p.exe = "/usr/bin/python3";
	p.start_ns = 5;
	p.end_ns = 2000000000;
	p.python = "3.11.2";
	p.python_build = "static";

	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__put_meta_int(s, "elapsed_ns", 2000000000), 0);
	assert_int_equal(ls_store__put_meta_int(s, "period_ns", 1000000), 0);
	assert_int_equal(ls_store__put_process(s, &p), 0);
	assert_int_equal(ls_store__put_thread(s, 1, 100, "python3", -1), 0);
	put_app(s);
	assert_int_equal(ls_store__put_file(s, 2, "/usr/lib/python3.11/json/x.py", -1, "library",
					    "cannot read source: Permission denied"),
			 0);
	put_samples(s, 1, 30);
	put_samples(s, 2, 10);
	/* samples are totals: writing the same key again replaces */
	put_samples(s, 2, 12);
	assert_int_equal(ls_store__put_stat(s, "ringbuf_drops", 4), 0);
	assert_int_equal(ls_store__put_stat(s, "sample_drops", 3), 0);
	assert_int_equal(ls_store__put_stat(s, "unresolved_samples", 2), 0);
	assert_int_equal(ls_store__put_stat(s, "taken", 45), 0);
	{
		struct ls_store_exec x0 = {.proc_id = 1,
					   .seq = 0,
					   .how = "attach",
					   .end_ns = 5,
					   .comm = "sh",
					   .argv = "sh -c x",
					   .samples = 1},
				     x1 = {.proc_id = 1,
					   .seq = 1,
					   .how = "exec",
					   .start_ns = 5,
					   .end_ns = -1,
					   .comm = "python3.11",
					   .python = "3.11.2",
					   .samples = 41,
					   .cpu_ns = 41000,
					   .unresolved = 2};

		assert_int_equal(ls_store__put_exec(s, &x0), 0);
		assert_int_equal(ls_store__put_exec(s, &x1), 0);
	}
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static const struct ls_mline *find_line(const struct ls_model *m, int line)
{
	for (size_t i = 0; i < m->nlines; i++)
		if (m->lines[i].line == line)
			return &m->lines[i];
	return NULL;
}

/*
 * Lines whose keys collided in the old (proc << 44 ^ file << 22 ^ line) index: /a.py:2^22+3 and
 * /b.py:3. Each must be one line, however many stacks it is on.
 */
static void test_line_key_collision(void **state)
{
	const uint32_t big = (1u << 22) + 3, st1[] = {1, big}, st2[] = {2, 3},
		       st3[] = {2, 3, 1, big};
	struct ls_store_proc p = ls_test_proc();
	const struct ls_mline *a = NULL, *b = NULL;
	struct ls_store *s;
	struct ls_model *m;

	unlink(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_process(s, &p), 0);
	assert_int_equal(ls_store__put_thread(s, 1, 100, "python3", -1), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/a.py", -1, "python", "gone"), 0);
	assert_int_equal(ls_store__put_file(s, 2, "/b.py", -1, "python", "gone"), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "fa", 1), 0);
	assert_int_equal(ls_store__put_function(s, 2, 2, "fb", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 2, st2, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 3, st3, 2, false), 0);
	put_samples(s, 1, 10);
	put_samples(s, 2, 7);
	put_samples(s, 3, 5);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);

	assert_int_equal(ls_model__load(path, &m), 0);
	assert_int_equal(m->nlines, 2);
	for (size_t i = 0; i < m->nlines; i++)
		*(m->lines[i].line == 3 ? &b : &a) = &m->lines[i];
	assert_non_null(a);
	assert_non_null(b);
	assert_int_equal(a->line, (int)big);
	assert_int_equal(a->self_count, 10);
	assert_int_equal(a->total_count, 15);
	assert_int_equal(b->self_count, 12);
	ls_model__free(m);
}

static void test_round_trip(void **state)
{
	struct ls_model *m;
	const struct ls_mline *l2, *l5;

	write_profile();
	assert_int_equal(ls_model__load(path, &m), 0);
	assert_string_equal(ls_model__meta(m, "status"), "Success");
	assert_int_equal(m->nprocs, 1);
	assert_int_equal(m->procs[0].pid, 100);
	assert_string_equal(m->procs[0].python, "3.11.2");
	assert_int_equal(m->procs[0].threads, 1);
	assert_int_equal(m->samples, 42);
	assert_int_equal(m->lost_ringbuf, 3); /* the samples among the ring buffer's drops */
	assert_int_equal(m->lost_records, 1); /* the other record */
	assert_int_equal(m->lost_unresolved, 2);
	assert_int_equal(m->taken, 45); /* 42 received (2 of them unresolved) + 3 dropped */
	assert_int_equal(m->procs[0].nexecs, 2);
	assert_string_equal(m->procs[0].execs[0].how, "attach");
	assert_int_equal(m->procs[0].execs[0].end_ns, 5);
	assert_string_equal(m->procs[0].execs[1].python, "3.11.2");
	assert_int_equal(m->procs[0].execs[1].end_ns, -1);
	assert_int_equal(m->procs[0].execs[1].unresolved, 2);
	assert_int_equal(m->nfiles, 2);
	assert_string_equal(m->files[0].name, "app.py");
	assert_int_equal(m->files[0].nlines, 5);
	assert_null(m->files[1].text);
	assert_string_equal(m->files[1].unavailable, "cannot read source: Permission denied");
	l2 = find_line(m, 2);
	l5 = find_line(m, 5);
	assert_non_null(l2);
	assert_non_null(l5);
	/* line 2 is the innermost frame of 30 samples; line 5 of 12, on the stack of all 42 */
	assert_int_equal(l2->self_count, 30);
	assert_int_equal(l2->own_count, 30);
	assert_int_equal(l5->self_count, 12);
	assert_int_equal(l5->total_count, 42);
	assert_int_equal(l5->total_ns, 42000000);
	assert_int_equal(m->nedges, 1);
	assert_int_equal(m->edges[0].line, 5);
	assert_string_equal(m->funcs[m->edges[0].callee].qualname, "f");
	ls_model__free(m);
}

/*
 * A thread's on-CPU samples are scaled to its kernel-accounted CPU time when that is known, large
 * enough to trust (100 ms) and within 2x of the sampled time; otherwise they stay as sampled.
 * at_insert: the CPU time comes with the thread's row (a thread that ended before its row was
 * written), then a rename, which keeps it; else it is set after.
 */
static int64_t scaled_line5_ns(int64_t cpu_ns, bool at_insert)
{
	struct ls_store *s;
	struct ls_store_proc p = ls_test_proc();
	struct ls_model *m;
	const struct ls_mline *l2, *l5;
	int64_t total;

	unlink(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_process(s, &p), 0);
	if (at_insert) {
		assert_int_equal(ls_store__put_thread(s, 1, 100, "python3", cpu_ns), 0);
		assert_int_equal(ls_store__put_thread(s, 1, 100, "renamed", -1), 0);
	} else {
		assert_int_equal(ls_store__put_thread(s, 1, 100, "python3", -1), 0);
		if (cpu_ns >= 0)
			assert_int_equal(ls_store__put_thread_cpu(s, 1, 100, cpu_ns), 0);
	}
	put_app(s);
	put_samples(s, 1, 150);
	put_samples(s, 2, 50);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);

	assert_int_equal(ls_model__load(path, &m), 0);
	l2 = find_line(m, 2);
	l5 = find_line(m, 5);
	assert_non_null(l2);
	assert_non_null(l5);
	/* shares and sample counts do not change */
	assert_int_equal(l5->total_count, 200);
	assert_int_equal(l2->self_count, 150);
	assert_true(l2->self_ns * 4 >= l5->total_ns * 3 - 4 &&
		    l2->self_ns * 4 <= l5->total_ns * 3 + 4);
	total = l5->total_ns;
	ls_model__free(m);
	return total;
}

static void test_cpu_scaled_to_accounting(void **state)
{
	assert_int_equal(scaled_line5_ns(-1, false), 200000000);	/* no accounting */
	assert_int_equal(scaled_line5_ns(300000000, false), 300000000); /* 1.5x */
	assert_int_equal(scaled_line5_ns(150000000, false), 150000000); /* 0.75x */
	assert_int_equal(scaled_line5_ns(50000000, false),
			 200000000); /* under 100 ms: as sampled */
	assert_int_equal(scaled_line5_ns(900000000, false), 200000000); /* 4.5x: does not match */
	/* written with the row, and kept through a rename */
	assert_int_equal(scaled_line5_ns(300000000, true), 300000000);
	assert_int_equal(scaled_line5_ns(-1, true), 200000000);
}

static void test_rejects_newer_schema(void **state)
{
	struct ls_model *m = NULL;
	char cmd[128];

	write_profile();
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version=99'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ls_model__load(path, &m), -EPROTO);
	assert_null(m);
}

/* A profile of the schema before notebooks (3: no notebooks or cells tables) still reads. */
static void test_reads_older_schema(void **state)
{
	struct ls_model *m = NULL;
	char cmd[256];

	write_profile();
	snprintf(cmd, sizeof(cmd),
		 "sqlite3 %s 'DROP TABLE cells; DROP TABLE notebooks; PRAGMA user_version=3'",
		 path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ls_model__load(path, &m), 0);
	assert_true(m->nlines > 0);
	ls_model__free(m);
	snprintf(cmd, sizeof(cmd), "sqlite3 %s 'PRAGMA user_version=2'", path);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ls_model__load(path, &m), -EPROTO);
}

static void test_killed_writer_is_readable(void **state)
{
	struct ls_store *s;
	struct ls_model *m;
	char copy[96], cmd[1024];
	const uint32_t st[] = {1, 3};
	struct ls_store_sample x = {.proc_id = 1, .tid = 7, .stack_id = 1, .count = 5};
	struct ls_store_proc p = {.id = 1,
				  .pid = 7,
				  .parent_id = -1,
				  .spawn_stack = -1,
				  .spawn_tid = -1,
				  .end_ns = -1,
				  .exit_code = -1};

	/* commit one flush, leave the writer open (as a killed recorder does), copy the files */
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	ls_store__put_process(s, &p);
	ls_store__put_file(s, 1, "/a.py", -1, "python", NULL);
	ls_store__put_function(s, 1, 1, "g", 1);
	ls_store__put_stack(s, 1, st, 1, false);
	ls_store__put_sample(s, &x);
	assert_int_equal(ls_store__commit(s), 0);
	assert_int_equal(ls_store__begin(s), 0); /* an unfinished transaction */
	x.count = 500;
	ls_store__put_sample(s, &x);
	snprintf(copy, sizeof(copy), "%s.copy", path);
	snprintf(cmd, sizeof(cmd), "cp %s %s && cp %s-wal %s-wal && cp %s-shm %s-shm", path, copy,
		 path, copy, path, copy);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(ls_model__load(copy, &m), 0);
	assert_int_equal(m->samples, 5);
	assert_null(ls_model__meta(m, "status"));
	ls_model__free(m);
	ls_store__free(s);
	snprintf(cmd, sizeof(cmd), "rm -f %s %s-wal %s-shm", copy, copy, copy);
	assert_int_equal(system(cmd), 0);
}

/* write_profile(), then sql on it; the model loaded from the result (NULL when it was refused) */
static struct ls_model *load_mutated(const char *sql, int *err)
{
	struct ls_model *m = NULL;
	char cmd[512];

	write_profile();
	snprintf(cmd, sizeof(cmd), "sqlite3 %s \"%s\"", path, sql);
	assert_int_equal(system(cmd), 0);
	*err = ls_model__load(path, &m);
	return m;
}

/* Values out of range in a profile anyone can hand us are skipped and counted, never trusted. */
static void test_hostile_values(void **state)
{
	static const char *const sqls[] = {
		/* depth * 8 overflows an int to 8: the old check let it read 4 GiB past the blob */
		"UPDATE stacks SET depth = 536870913, frames = X'0100000002000000' WHERE id = 1",
		"UPDATE stacks SET depth = -1 WHERE id = 1",
		"UPDATE stacks SET frames = X'01000000FFFFFFFF02000000FFFFFF7F' WHERE id = 1",
		"UPDATE samples SET kind = 9",
		"UPDATE samples SET count = -5",
		"UPDATE samples SET process_id = 77",
	};

	for (size_t i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
		int err;
		struct ls_model *m = load_mutated(sqls[i], &err);

		assert_int_equal(err, 0);
		assert_non_null(m);
		if (m->damaged_rows < 1)
			fail_msg("not counted as damaged: %s", sqls[i]);
		for (size_t k = 0; k < m->nlines; k++)
			assert_true(m->lines[k].self_count >= 0 && m->lines[k].line >= 0);
		ls_model__free(m);
	}
}

/* A damaged page is an error, not the end of a table (which made a silently short report). */
static void test_corrupt_page(void **state)
{
	struct ls_model *m = NULL;
	char cmd[256];
	FILE *f;
	int root = 0;
	char junk[64];

	write_profile();
	snprintf(cmd, sizeof(cmd),
		 "sqlite3 %s \"SELECT rootpage FROM sqlite_master WHERE name = 'stacks'\"", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &root), 1);
	pclose(f);
	memset(junk, 0x5a, sizeof(junk));
	f = fopen(path, "r+");
	assert_non_null(f);
	/* the b-tree page header: its type byte and cell count become nonsense */
	assert_int_equal(fseek(f, (long)(root - 1) * 4096, SEEK_SET), 0);
	assert_int_equal(fwrite(junk, 1, sizeof(junk), f), sizeof(junk));
	fclose(f);
	assert_int_not_equal(ls_model__load(path, &m), 0);
	assert_null(m);
}

static int count_entries(const char *dir)
{
	char cmd[128];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "ls -A %s | wc -l", dir);
	f = popen(cmd, "r");
	assert_non_null(f);
	assert_int_equal(fscanf(f, "%d", &n), 1);
	pclose(f);
	return n;
}

/* Until published, the profile at the path is the old one; freed unpublished, nothing is left. */
static void test_unpublished_keeps_old(void **state)
{
	char dir[] = "/tmp/ls-pub-XXXXXX", p[64], buf[16] = "";
	struct ls_store *s;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/keep.lsprof", dir);
	f = fopen(p, "w");
	fputs("old", f);
	fclose(f);
	assert_int_equal(ls_store__create(p, -1, -1, &s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__commit(s), 0);
	f = fopen(p, "r");
	assert_non_null(fgets(buf, sizeof(buf), f));
	fclose(f);
	assert_string_equal(buf, "old");
	assert_int_equal(count_entries(dir), 2); /* keep.lsprof and the new one's temporary */
	ls_store__free(s);
	assert_int_equal(count_entries(dir), 1);
	unlink(p);
	rmdir(dir);
}

/* A symlink at the path is replaced, never followed; the stale log of the old profile goes. */
static void test_publish_replaces_symlink(void **state)
{
	char dir[] = "/tmp/ls-pub-XXXXXX", p[64], victim[64], wal[72];
	struct ls_store *s, *r;
	struct stat st;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(p, sizeof(p), "%s/p.lsprof", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	snprintf(wal, sizeof(wal), "%s-wal", p);
	f = fopen(victim, "w");
	fputs("precious", f);
	fclose(f);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_equal(symlink(victim, wal), 0);
	assert_int_equal(ls_store__create(p, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
	assert_int_equal(lstat(p, &st), 0);
	assert_true(S_ISREG(st.st_mode));
	assert_int_equal(stat(victim, &st), 0);
	assert_int_equal(st.st_size, 8);
	assert_int_equal(ls_store__open(p, &r), 0);
	ls_store__free(r);
	/* and a reader does not follow one either */
	unlink(p);
	assert_int_equal(symlink(victim, p), 0);
	assert_int_not_equal(ls_store__open(p, &r), 0);
	unlink(p);
	unlink(wal);
	unlink(victim);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_round_trip, setup, teardown),
		cmocka_unit_test(test_unpublished_keeps_old),
		cmocka_unit_test_setup_teardown(test_line_key_collision, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_values, setup, teardown),
		cmocka_unit_test_setup_teardown(test_corrupt_page, setup, teardown),
		cmocka_unit_test(test_publish_replaces_symlink),
		cmocka_unit_test_setup_teardown(test_cpu_scaled_to_accounting, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rejects_newer_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_reads_older_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_killed_writer_is_readable, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
