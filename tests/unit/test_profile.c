// SPDX-License-Identifier: MIT
/* The profile reader (profile.h): rows as written, refused rows counted, schemas checked. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "profile.h"
#include "store.h"
#include "../lib/test_proc.h"
#include "../lib/tmp_profile.h"

LS_TEST_PROFILE_FIXTURE("profile")

/* one process with a parent it does not name, two stacks, samples of two classes */
static void write_profile(void)
{
	const uint32_t st1[] = {1, 2, 2, 5}, st2[] = {2, 5};
	struct ls_store_proc p = ls_test_proc();
	struct ls_store_sample cpu = {.proc_id = 1,
				      .tid = 100,
				      .stack_id = 1,
				      .count = 30,
				      .weight_ns = 30000000},
			       wait = {.proc_id = 1,
				       .tid = 100,
				       .stack_id = 2,
				       .kind = LS_CLASS_WAIT,
				       .weight_ns = 7000};
	struct ls_store *s;

	p.start_ns = 5;
	p.end_ns = -1;
	p.exit_code = -1;

	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "mode", "wall"), 0);
	assert_int_equal(ls_store__put_process(s, &p), 0);
	assert_int_equal(ls_store__put_source(s, 1, "abc", "x\ny\n", 4), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/app.py", 1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_function(s, 2, 1, "<module>", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 2, false), 0);
	assert_int_equal(ls_store__put_stack(s, 2, st2, 1, false), 0);
	assert_int_equal(ls_store__put_sample(s, &cpu), 0);
	assert_int_equal(ls_store__put_sample(s, &wait), 0);
	assert_int_equal(ls_store__put_stat(s, "taken", 45), 0);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static void mutate(const char *sql)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "sqlite3 %s \"%s\"", path, sql);
	assert_int_equal(system(cmd), 0);
}

static int on_proc(void *ctx, const struct ls_prow_proc *r)
{
	*(struct ls_prow_proc *)ctx = *r;
	((struct ls_prow_proc *)ctx)->comm = NULL; /* lives only during the call */
	assert_string_equal(r->comm, "python3");
	return 0;
}

static int count_stack(void *ctx, const struct ls_prow_stack *r)
{
	assert_true(r->depth > 0 && r->frames);
	++*(int *)ctx;
	return 0;
}

struct sums {
	int n;
	int64_t cpu_count, wait_ns;
};

static int add_sum(void *ctx, const struct ls_prow_sample_sum *r)
{
	struct sums *s = ctx;

	s->n++;
	if (r->kind == LS_CLASS_CPU)
		s->cpu_count += r->count;
	else
		s->wait_ns += r->weight_ns;
	return 0;
}

static int count_cost(void *ctx, const struct ls_prow_bpf_cost *r)
{
	++*(int *)ctx;
	return 0;
}

static int stop_at_first(void *ctx, const struct ls_prow_stack *r)
{
	++*(int *)ctx;
	return 42;
}

static void test_rows_as_written(void **state)
{
	struct ls_profile *p;
	struct ls_prow_proc proc;
	struct sums sums = {};
	int64_t max;
	int n = 0;

	write_profile();
	assert_int_equal(ls_profile__open(path, &p), 0);
	assert_int_equal(ls_profile__schema(p), LS_SCHEMA_VERSION);
	assert_int_equal(ls_profile__procs(p, on_proc, &proc), 0);
	assert_int_equal(proc.pid, 100);
	assert_int_equal(proc.parent_id, -1); /* NULL ids and times read as -1 */
	assert_int_equal(proc.end_ns, -1);
	assert_int_equal(proc.rank, -1);
	assert_int_equal(ls_profile__max_stack_id(p, &max), 0);
	assert_int_equal(max, 2);
	assert_int_equal(ls_profile__stacks(p, max, count_stack, &n), 0);
	assert_int_equal(n, 2);
	/* a callback's non-zero return stops the walk and is returned */
	n = 0;
	assert_int_equal(ls_profile__stacks(p, max, stop_at_first, &n), 42);
	assert_int_equal(n, 1);
	assert_int_equal(ls_profile__sample_sums(p, add_sum, &sums), 0);
	assert_int_equal(sums.n, 2);
	assert_int_equal(sums.cpu_count, 30);
	assert_int_equal(sums.wait_ns, 7000);
	assert_int_equal(ls_profile__stat(p, "taken", -1), 45);
	assert_int_equal(ls_profile__stat(p, "no such stat", -1), -1);
	assert_false(ls_profile__has_spark(p));
	assert_int_equal(ls_profile__damaged(p), 0);
	ls_profile__close(p);
}

/* Out-of-range rows are skipped and counted, the rest still read. */
static void test_refuses_and_counts(void **state)
{
	struct ls_profile *p;
	struct sums sums = {};
	int64_t max;
	int n = 0;

	write_profile();
	mutate("UPDATE stacks SET depth = 536870913, frames = X'0100000002000000' WHERE id = 1;"
	       " UPDATE samples SET kind = 9 WHERE kind = 1;"
	       " INSERT INTO stats VALUES ('bpf_runs:Evil Name', 1), ('bpf_run_ns:Evil Name', 2)");
	assert_int_equal(ls_profile__open(path, &p), 0);
	assert_int_equal(ls_profile__max_stack_id(p, &max), 0);
	assert_int_equal(ls_profile__stacks(p, max, count_stack, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(ls_profile__damaged(p), 1);
	assert_int_equal(ls_profile__sample_sums(p, add_sum, &sums), 0);
	assert_int_equal(sums.n, 1);
	assert_int_equal(sums.wait_ns, 0);
	assert_int_equal(ls_profile__damaged(p), 2);
	n = 0; /* a program name the kernel would not give */
	assert_int_equal(ls_profile__bpf_cost(p, count_cost, &n), 0);
	assert_int_equal(n, 0);
	assert_int_equal(ls_profile__damaged(p), 3);
	ls_profile__close(p);
}

static void test_stack_count_checked(void **state)
{
	struct ls_profile *p;
	int64_t max;

	write_profile();
	mutate("UPDATE stacks SET id = 1073741824 WHERE id = 2");
	assert_int_equal(ls_profile__open(path, &p), 0);
	assert_int_equal(ls_profile__max_stack_id(p, &max), -EINVAL);
	ls_profile__close(p);
}

static void test_schema_checked(void **state)
{
	struct ls_profile *p = NULL;

	write_profile();
	mutate("PRAGMA user_version=99");
	assert_int_equal(ls_profile__open(path, &p), -EPROTO);
	assert_null(p);
	mutate("PRAGMA user_version=2");
	assert_int_equal(ls_profile__open(path, &p), -EPROTO);
	/* schema 3: no notebooks, no timeline, no Spark: those readers give no rows */
	mutate("DROP TABLE cells; DROP TABLE notebooks; PRAGMA user_version=3");
	assert_int_equal(ls_profile__open(path, &p), 0);
	assert_int_equal(ls_profile__cells(p, NULL, NULL), 0);
	assert_int_equal(ls_profile__ticks(p, NULL, NULL), 0);
	assert_int_equal(ls_profile__spark(p, NULL, NULL), 0);
	ls_profile__close(p);
}

static void test_meta_num(void **state)
{
	assert_int_equal(ls_profile__meta_num("12", -1, 100), 12);
	assert_int_equal(ls_profile__meta_num("101", -1, 100), -1);
	assert_int_equal(ls_profile__meta_num("-3", -1, 100), -1);
	assert_int_equal(ls_profile__meta_num("7x", -1, 100), -1);
	assert_int_equal(ls_profile__meta_num(NULL, 5, 100), 5);
	assert_int_equal(ls_profile__meta_num("99999999999999999999", -1, LS_META_WALL_MAX), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_rows_as_written, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refuses_and_counts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stack_count_checked, setup, teardown),
		cmocka_unit_test_setup_teardown(test_schema_checked, setup, teardown),
		cmocka_unit_test(test_meta_num),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
