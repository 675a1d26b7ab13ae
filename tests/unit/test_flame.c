// SPDX-License-Identifier: MIT
/*
 * The flame graph's call tree (report/flame.c): a profile with two processes, threads whose
 * stacks merge, recursion, every sample kind and samples without a Python frame, built whole and
 * under node caps that fold the lightest subtrees into "(other)" nodes.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <jansson.h>
#include "flame.h"
#include "jbuf.h"
#include "model.h"
#include "store.h"
#include "../lib/test_proc.h"
#include "../lib/tmp_profile.h"

#define MS 1000000LL

LS_TEST_PROFILE_FIXTURE("flame")

/* (process id, tid, stack id, kind, count, ms) of every sample row */
static const int64_t rows[][6] = {
	{1, 100, 1, LS_CLASS_CPU, 200, 200}, {1, 101, 1, LS_CLASS_CPU, 20, 20},
	{1, 100, 3, LS_CLASS_CPU, 50, 50},   {1, 100, 4, LS_CLASS_CPU, 30, 30},
	{1, 100, 2, LS_CLASS_WAIT, 1, 40},   {1, 101, 1, LS_CLASS_GIL_WAIT, 1, 5},
	{1, 100, 0, LS_CLASS_CPU, 10, 10},   {1, 100, 5, LS_CLASS_CPU, 4, 4},
	{2, 200, 1, LS_CLASS_CPU, 7, 7},     {2, 200, 2, LS_CLASS_RUNQ, 1, 3},
};

/*
 * Stacks (innermost first): 1 f:2 <module>:5; 2 <module>:5; 3 g:9 f:3 <module>:5; 4 f:2 f:3
 * <module>:5 (f recursing); 5 a function the profile lacks: no Python frame, as stack 0.
 */
static void write_profile(void)
{
	const char *text = "def f():\n    x = 1\n    return f()\n\nf()\n\n\n\ndef g(): pass\n";
	const uint32_t st1[] = {1, 2, 2, 5}, st2[] = {2, 5}, st3[] = {3, 9, 1, 3, 2, 5},
		       st4[] = {1, 2, 1, 3, 2, 5}, st5[] = {9, 1};
	struct ls_store *s;

	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__put_meta(s, "mode", "wall"), 0);
	assert_int_equal(ls_store__put_meta_int(s, "elapsed_ns", 1000 * MS), 0);
	assert_int_equal(ls_store__put_meta_int(s, "period_ns", MS), 0);
	for (int i = 1; i <= 2; i++) {
		struct ls_store_proc p = ls_test_proc_at(i, 100 * i, "python3", "python3 app.py");

		assert_int_equal(ls_store__put_process(s, &p), 0);
	}
	assert_int_equal(ls_store__put_thread(s, 1, 100, "MainThread", -1), 0);
	assert_int_equal(ls_store__put_thread(s, 1, 101, "worker", -1), 0);
	assert_int_equal(ls_store__put_thread(s, 2, 200, "MainThread", -1), 0);
	assert_int_equal(ls_store__put_source(s, 1, "abc", text, strlen(text)), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/app.py", 1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_function(s, 2, 1, "<module>", 1), 0);
	assert_int_equal(ls_store__put_function(s, 3, 1, "g", 9), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 2, false), 0);
	assert_int_equal(ls_store__put_stack(s, 2, st2, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 3, st3, 3, false), 0);
	assert_int_equal(ls_store__put_stack(s, 4, st4, 3, false), 0);
	assert_int_equal(ls_store__put_stack(s, 5, st5, 1, false), 0);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct ls_store_sample x = {.proc_id = rows[i][0],
					    .tid = rows[i][1],
					    .stack_id = rows[i][2],
					    .kind = rows[i][3],
					    .mode = LS_MODE_PYTHON,
					    .count = rows[i][4],
					    .weight_ns = rows[i][5] * MS};

		assert_int_equal(ls_store__put_sample(s, &x), 0);
	}
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static struct ls_model *load(void)
{
	struct ls_model *m = NULL;

	write_profile();
	assert_int_equal(ls_model__load_flags(path, LS_MODEL_STACKS, &m), 0);
	return m;
}

/* Every node after its parent, and the totals of each process those of the model. */
static void check_totals(const struct ls_model *m, const struct ls_flame *f)
{
	int64_t count[2] = {}, ns[2] = {}, all = 0;

	for (size_t i = 0; i < f->n; i++) {
		const struct ls_flame_node *x = &f->nodes[i];

		assert_true(x->parent < (int)i);
		assert_true(x->proc >= 0 && x->proc < 2);
		if (x->parent >= 0)
			assert_int_equal(f->nodes[x->parent].proc, x->proc);
		else
			assert_int_equal(x->func, LS_FLAME_ROOT);
		count[x->proc] += x->count;
		ns[x->proc] += x->ns[0] + x->ns[1] + x->ns[2] + x->ns[3];
		all += x->count;
	}
	for (int p = 0; p < 2; p++) {
		assert_int_equal(count[p], m->procs[p].samples);
		assert_int_equal(ns[p], m->procs[p].weight_ns);
	}
	assert_int_equal(all, m->samples);
	assert_int_equal(all, 321);
}

static const struct ls_flame_node *child(const struct ls_model *m, const struct ls_flame *f,
					 int parent, const char *name, int line)
{
	for (size_t i = parent + 1; i < f->n; i++) {
		const struct ls_flame_node *x = &f->nodes[i];

		if (x->parent == parent && x->line == line &&
		    (x->func < 0 ? !name : name && !strcmp(m->funcs[x->func].qualname, name)))
			return x;
	}
	return NULL;
}

static int idx(const struct ls_flame *f, const struct ls_flame_node *x)
{
	assert_non_null(x);
	return x - f->nodes;
}

static void test_whole_tree(void **state)
{
	struct ls_model *m = load();
	const struct ls_flame_node *mod, *f2, *f3, *rec, *nat;
	struct ls_flame *f = NULL;

	assert_int_equal(ls_flame__new(m, LS_FLAME_MAX_NODES, &f), 0);
	/* pid 100: root, [native], <module>:5, f:2, f:3, g:9, f:2 (recursion); pid 200: 3 */
	assert_int_equal(f->n, 10);
	assert_int_equal(f->folded, 0);
	check_totals(m, f);
	assert_int_equal(f->nodes[0].func, LS_FLAME_ROOT);
	mod = child(m, f, 0, "<module>", 5);
	/* thread 101's samples of stack 1 merged with thread 100's */
	f2 = child(m, f, idx(f, mod), "f", 2);
	assert_int_equal(f2->count, 220);
	assert_int_equal(f2->ns[LS_CLASS_CPU], 220 * MS);
	assert_int_equal(f2->ns[LS_CLASS_GIL_WAIT], 5 * MS);
	assert_int_equal(mod->ns[LS_CLASS_WAIT], 40 * MS);
	f3 = child(m, f, idx(f, mod), "f", 3);
	assert_int_equal(f3->count, 0);
	assert_int_equal(child(m, f, idx(f, f3), "g", 9)->count, 50);
	rec = child(m, f, idx(f, f3), "f", 2);
	assert_int_equal(rec->count, 30);
	/* stack 0 and a stack of unknown functions: the one [native] node */
	nat = &f->nodes[1];
	assert_int_equal(nat->func, LS_FLAME_NATIVE);
	assert_int_equal(nat->count, 14);
	ls_flame__free(f);
	ls_model__free(m);
}

static int others(const struct ls_flame *f, int64_t *ns)
{
	int n = 0;

	*ns = 0;
	for (size_t i = 0; i < f->n; i++)
		if (f->nodes[i].func == LS_FLAME_OTHER) {
			n++;
			*ns += f->nodes[i].ns[0] + f->nodes[i].ns[1] + f->nodes[i].ns[2] +
			       f->nodes[i].ns[3];
		}
	return n;
}

static void test_cap(void **state)
{
	struct ls_model *m = load();
	struct ls_flame *f = NULL;
	int64_t ns;

	/*
	 * 8: the roots and their "(other)" room (4), <module>:5 with its room (6), f:2 (7),
	 * [native] (8); f:3 (80 ms) and pid 200's <module>:5 (10 ms) are folded, with what is below
	 * them.
	 */
	assert_int_equal(ls_flame__new(m, 8, &f), 0);
	check_totals(m, f);
	assert_int_equal(f->n, 7);
	assert_int_equal(f->folded, 5);
	assert_int_equal(others(f, &ns), 2);
	assert_int_equal(ns, 80 * MS + 10 * MS);
	assert_non_null(child(m, f, 0, "<module>", 5));
	ls_flame__free(f);
	/* too small for anything but the roots: all the rest is "(other)", nothing lost */
	assert_int_equal(ls_flame__new(m, 1, &f), 0);
	check_totals(m, f);
	assert_int_equal(f->n, 4);
	assert_int_equal(f->folded, 8);
	assert_int_equal(others(f, &ns), 2);
	ls_flame__free(f);
	ls_model__free(m);
}

static void test_json(void **state)
{
	struct ls_model *m = load();
	struct ls_flame *f = NULL;
	json_t *d, *nodes, *funcs;
	struct ls_jbuf b;
	char *text;

	assert_int_equal(ls_flame__new(m, LS_FLAME_MAX_NODES, &f), 0);
	ls_jbuf_init(&b);
	ls_flame__json(&b, m, f);
	text = ls_jbuf__detach(&b, NULL);
	d = json_loads(text, 0, NULL);
	assert_non_null(d);
	assert_int_equal(json_integer_value(json_object_get(d, "max_nodes")), LS_FLAME_MAX_NODES);
	nodes = json_object_get(d, "nodes");
	funcs = json_object_get(d, "funcs");
	assert_int_equal(json_array_size(json_object_get(nodes, "parent")), f->n);
	assert_int_equal(json_array_size(json_object_get(nodes, "runq_s")), f->n);
	/* <module>, f and g, in order of first use */
	assert_int_equal(json_array_size(json_object_get(funcs, "name")), 3);
	assert_string_equal(json_string_value(json_array_get(json_object_get(funcs, "name"), 0)),
			    "<module>");
	assert_int_equal(json_integer_value(json_array_get(json_object_get(nodes, "func"), 1)),
			 LS_FLAME_NATIVE);
	json_decref(d);
	free(text);
	ls_flame__free(f);
	ls_model__free(m);
	/* without the stacks there is no tree */
	assert_int_equal(ls_model__load(path, &m), 0);
	assert_int_equal(ls_flame__new(m, 10, &f), -EINVAL);
	ls_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_whole_tree, setup, teardown),
		cmocka_unit_test_setup_teardown(test_cap, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
