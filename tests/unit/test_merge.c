// SPDX-License-Identifier: MIT
/*
 * merge: two small profiles of one program on two hosts, whose ids disagree (same pid, function
 * ids in another order, a function only one of them has), merged and read back by the report
 * model: every line keeps its counts and its function, sources, files and functions are shared,
 * each process names its host, and times move by the wall clocks' difference (by the monotonic
 * clocks' within one boot).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include "merge.h"
#include "model.h"
#include "store.h"
#include "../lib/tmp_profile.h"

static char pa[64], pb[64], pm[64];

static int setup(void **state)
{
	(void)state;
	ls_test_profile_path(pa, "merge-a");
	ls_test_profile_path(pb, "merge-b");
	ls_test_profile_path(pm, "merge-m");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	ls_test_profile_remove(pa);
	ls_test_profile_remove(pb);
	ls_test_profile_remove(pm);
	return 0;
}

static const char text[] = "def f():\n    x = 1\n    return x\n\ndef g():\n    f()\n\nf()\ng()\n";

struct fake {
	const char *host, *boot, *mode;
	int64_t clock, wall, start;
	bool b_order; /* functions numbered g, <module>, f (else f, <module>) */
};

/* app.py run as pid 100: 30 samples in f line 2 under <module> line 8 (B: 20 more under g) */
static void write_fake(const char *path, const struct fake *f)
{
	struct ls_store_proc p = {.id = 1,
				  .pid = 100,
				  .parent_id = -1,
				  .spawn_stack = -1,
				  .spawn_tid = -1,
				  .comm = "python3",
				  .argv = "python3 app.py",
				  .start_ns = f->start,
				  .end_ns = f->start + 1000,
				  .exit_code = 0};
	struct ls_store_sample x = {.proc_id = 1, .tid = 100, .count = 30, .weight_ns = 30000000};
	uint32_t fid = f->b_order ? 3 : 1, mid = 2, gid = 1;
	const uint32_t st1[] = {fid, 2, mid, 8}, st2[] = {fid, 2, gid, 6, mid, 9};
	struct ls_store *s;

	unlink(path);
	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "host", f->host), 0);
	assert_int_equal(ls_store__put_meta(s, "boot_id", f->boot), 0);
	assert_int_equal(ls_store__put_meta(s, "mode", f->mode), 0);
	assert_int_equal(ls_store__put_meta_int(s, "clock_start_ns", f->clock), 0);
	assert_int_equal(ls_store__put_meta_int(s, "wall_start_ns", f->wall), 0);
	assert_int_equal(ls_store__put_meta_int(s, "elapsed_ns", 5000), 0);
	assert_int_equal(ls_store__put_stat(s, "taken", 30), 0);
	assert_int_equal(ls_store__put_process(s, &p), 0);
	assert_int_equal(ls_store__put_thread(s, 1, 100, "python3", -1), 0);
	assert_int_equal(ls_store__put_source(s, 1, "h-app", text, strlen(text)), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/app.py", 1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, fid, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_function(s, mid, 1, "<module>", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 2, false), 0);
	x.stack_id = 1;
	assert_int_equal(ls_store__put_sample(s, &x), 0);
	if (f->b_order) {
		assert_int_equal(ls_store__put_function(s, gid, 1, "g", 5), 0);
		assert_int_equal(ls_store__put_stack(s, 2, st2, 3, false), 0);
		x.stack_id = 2;
		x.count = 20;
		x.weight_ns = 20000000;
		assert_int_equal(ls_store__put_sample(s, &x), 0);
	}
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static const struct ls_mline *line_of(const struct ls_model *m, int proc, int line)
{
	for (size_t i = 0; i < m->nlines; i++)
		if (m->lines[i].proc == proc && m->lines[i].line == line)
			return &m->lines[i];
	return NULL;
}

static int proc_on(const struct ls_model *m, const char *host)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].host && !strcmp(m->procs[i].host, host))
			return (int)i;
	return -1;
}

static void merge_two(const struct fake *a, const struct fake *b, struct ls_model **m)
{
	const char *in[] = {pa, pb};

	write_fake(pa, a);
	write_fake(pb, b);
	assert_int_equal(ls_merge__run(in, 2, pm, -1, -1), 0);
	assert_int_equal(ls_model__load(pm, m), 0);
}

static void test_ids_and_hosts(void **state)
{
	const struct fake a = {"node-a", "boot-a", "wall", 1000000, 5000000000, 100, false};
	const struct fake b = {"node-b", "boot-b", "wall", 9000000, 7000000000, 300, true};
	const struct ls_mline *l;
	struct ls_model *m;
	int ia, ib;

	(void)state;
	merge_two(&a, &b, &m);
	assert_int_equal(m->nprocs, 2);
	ia = proc_on(m, "node-a");
	ib = proc_on(m, "node-b");
	assert_true(ia >= 0 && ib >= 0 && ia != ib);
	assert_string_equal(ls_model__host(m, ib), "node-b");
	/* one source, one file, three functions: shared as one recording shares them */
	assert_int_equal(m->nfiles, 1);
	assert_int_equal(m->nfuncs, 3);
	/* f line 2: A's 30 samples, B's 30 + 20, each in its own process, in f */
	l = line_of(m, ia, 2);
	assert_non_null(l);
	assert_int_equal(l->self_count, 30);
	assert_string_equal(m->funcs[l->func].qualname, "f");
	l = line_of(m, ib, 2);
	assert_non_null(l);
	assert_int_equal(l->self_count, 50);
	assert_string_equal(m->funcs[l->func].qualname, "f");
	/* g line 6 only in B, from the stack whose function ids were remapped */
	l = line_of(m, ib, 6);
	assert_non_null(l);
	assert_int_equal(l->total_count, 20);
	assert_string_equal(m->funcs[l->func].qualname, "g");
	assert_null(line_of(m, ia, 6));
	/* other boots: B's times move by the wall clocks' difference (2 s) */
	assert_int_equal(m->procs[ia].start_ns, 100);
	assert_int_equal(m->procs[ib].start_ns, 300 + 2000000000);
	assert_string_equal(ls_model__meta(m, "host"), "node-a, node-b");
	assert_string_equal(ls_model__meta(m, "merged_profiles"), "2");
	ls_model__free(m);
}

static void test_one_boot(void **state)
{
	/* one boot: the monotonic clocks' difference (8 ms), whatever the wall clocks say */
	const struct fake a = {"node-a", "boot-a", "wall", 1000000, 5000000000, 100, false};
	const struct fake b = {"node-a", "boot-a", "wall", 9000000, 9000000000, 300, true};
	struct ls_model *m;

	(void)state;
	merge_two(&a, &b, &m);
	assert_int_equal(m->procs[1].start_ns, 300 + 8000000);
	ls_model__free(m);
}

static void test_refused(void **state)
{
	const struct fake a = {"node-a", "boot-a", "wall", 1000000, 5000000000, 100, false};
	const struct fake b = {"node-b", "boot-b", "cpu", 9000000, 7000000000, 300, true};
	const char *in[] = {pa, pb}, *self[] = {pa, pm};

	(void)state;
	write_fake(pa, &a);
	write_fake(pb, &b);
	unlink(pm);
	assert_int_equal(ls_merge__run(in, 2, pm, -1, -1), -EINVAL);
	assert_int_equal(access(pm, F_OK), -1); /* nothing written */
	write_fake(pm, &a);
	assert_int_equal(ls_merge__run(self, 2, pm, -1, -1), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ids_and_hosts, setup, teardown),
		cmocka_unit_test_setup_teardown(test_one_boot, setup, teardown),
		cmocka_unit_test_setup_teardown(test_refused, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
