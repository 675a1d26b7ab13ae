// SPDX-License-Identifier: MIT
/*
 * The GPU timeline (report/gpu_idle.c) of a profile written through the store: one physical
 * device that two processes know under different ordinals (one UUID), overlapping spans, three
 * launching threads whose ticks overlap each other and span two gaps, a bystander thread and a
 * native launcher that must not count, a second device without gaps; then the same profile as an
 * older schema wrote it (no launching thread), and as the JSON documents give it.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <string.h>
#include <jansson.h>
#include "gpu_idle.h"
#include "json.h"
#include "model.h"
#include "store.h"
#include "../lib/test_proc.h"
#include "../lib/tmp_profile.h"

#define MS 1000000LL

LS_TEST_PROFILE_FIXTURE("gpuidle")

static void put_proc(struct ls_store *s, int64_t id, int pid)
{
	struct ls_store_proc p = ls_test_proc_at(id, pid, "python3", "python3 train.py");

	assert_int_equal(ls_store__put_process(s, &p), 0);
}

/* A new profile at path, open in a transaction, recorded with --gpu --timeline. */
static struct ls_store *begin_profile(void)
{
	struct ls_store *s;

	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "timeline", "1"), 0);
	assert_int_equal(ls_store__put_meta(s, "gpu", "1"), 0);
	return s;
}

static void put_dev(struct ls_store *s, int64_t proc, int ordinal, const char *uuid)
{
	struct ls_store_gpu_device d = {
		.proc_id = proc, .ordinal = ordinal, .name = "GPU", .uuid = uuid};

	assert_int_equal(ls_store__put_gpu_device(s, &d), 0);
}

/* [start, start + dur) ms of device work */
static void put_span(struct ls_store *s, int64_t proc, int device, int stream, int kind,
		     int64_t start, int64_t dur, int64_t stack, uint32_t tid, const char *name)
{
	struct ls_store_gpu_span g = {.proc_id = proc,
				      .stack_id = stack,
				      .device = device,
				      .stream = stream,
				      .kind = kind,
				      .t_ns = start * MS,
				      .dur_ns = dur * MS,
				      .count = 1,
				      .name = name,
				      .tid = tid};

	assert_int_equal(ls_store__put_gpu_span(s, &g), 0);
}

/* a tick of [start, end) ms, and a samples row so that its thread is known */
static void put_tick(struct ls_store *s, int64_t proc, int tid, int64_t stack, int kind,
		     int64_t start, int64_t end)
{
	struct ls_store_tick t = {.proc_id = proc,
				  .tid = tid,
				  .stack_id = stack,
				  .kind = kind,
				  .mode = LS_MODE_PYTHON,
				  .t_ns = end * MS,
				  .dur_ns = (end - start) * MS};
	struct ls_store_sample x = {.proc_id = proc,
				    .tid = tid,
				    .stack_id = stack,
				    .kind = kind,
				    .mode = LS_MODE_PYTHON,
				    .count = kind == LS_CLASS_CPU,
				    .weight_ns = (end - start) * MS};

	assert_int_equal(ls_store__put_tick(s, &t), 0);
	assert_int_equal(ls_store__put_sample(s, &x), 0);
}

/*
 * train.py's f: line 2 preprocesses (stack 1), 3 loads (stack 2), 4 is the bystander's (stack
 * 3), 5 process 2's (stack 4). Device GPU-A (process 1's ordinal 0, process 2's ordinal 1):
 * busy [0, 12) (a kernel and a copy overlapping it), [20, 30) (NCCL), [40, 50) (with a native
 * thread's kernel inside): idle [12, 20) and [30, 40).
 */
static void write_profile(void)
{
	const char *text = "def f():\n    pre()\n    load()\n    sleep()\n    other()\n";
	const uint32_t st[4][2] = {{1, 2}, {1, 3}, {1, 4}, {1, 5}};
	struct ls_store *s = begin_profile();

	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__put_meta(s, "mode", "wall"), 0);
	assert_int_equal(ls_store__put_meta_int(s, "elapsed_ns", 200 * MS), 0);
	assert_int_equal(ls_store__put_meta_int(s, "period_ns", MS), 0);
	put_proc(s, 1, 100);
	put_proc(s, 2, 200);
	assert_int_equal(ls_store__put_source(s, 1, "abc", text, strlen(text)), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/train.py", 1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	for (int i = 0; i < 4; i++)
		assert_int_equal(ls_store__put_stack(s, i + 1, st[i], 1, false), 0);
	put_dev(s, 1, 0, "GPU-A");
	put_dev(s, 1, 1, "GPU-B");
	put_dev(s, 2, 1, "GPU-A");
	put_span(s, 1, 0, 7, 1, 0, 10, 1, 100, "gemm");
	put_span(s, 1, 0, 8, 2, 5, 7, 2, 101, NULL);
	put_span(s, 2, 1, 3, 1, 20, 10, 4, 200, "ncclKernel_AllReduce");
	put_span(s, 1, 0, 7, 1, 40, 10, 1, 100, "gemm");
	put_span(s, 1, 0, 7, 1, 45, 1, 0, 300, "native");
	put_span(s, 1, 1, 2, 1, 100, 5, 1, 100, "other_device");
	/* thread 100: preprocessing across the first gap's start, then blocked loading */
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 11, 14);
	put_tick(s, 1, 100, 2, LS_CLASS_WAIT, 14, 22);
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 31, 33);
	/* thread 101: preprocessing beside 100 (the union counts it once), then the GIL */
	put_tick(s, 1, 101, 1, LS_CLASS_CPU, 13, 15);
	put_tick(s, 1, 101, 2, LS_CLASS_GIL_WAIT, 35, 41);
	/* the bystander launches nothing: its ticks are no cause */
	put_tick(s, 1, 102, 3, LS_CLASS_CPU, 12, 20);
	put_tick(s, 1, 102, 3, LS_CLASS_WAIT, 30, 40);
	/* process 2's launcher: one wait across both gaps */
	put_tick(s, 2, 200, 4, LS_CLASS_WAIT, 18, 32);
	/* the native launcher's samples have no Python frame */
	put_tick(s, 1, 300, 0, LS_CLASS_CPU, 12, 40);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static struct ls_model *load(void)
{
	struct ls_model *m = NULL;

	/* as --format json loads it: the GPU timeline needs no flag */
	assert_int_equal(ls_model__load_flags(path, 0, &m), 0);
	return m;
}

static const struct ls_gpu_idle_line *line_at(const struct ls_model *m, const struct ls_gpu_util *u,
					      int pid, int line)
{
	for (size_t i = 0; i < u->nlines; i++)
		if (m->procs[u->lines[i].proc].pid == pid && u->lines[i].line == line)
			return &u->lines[i];
	return NULL;
}

static void test_devices(void **state)
{
	struct ls_model *m;
	const struct ls_gpu_util *a, *b;

	write_profile();
	m = load();
	assert_int_equal(m->ngpu_util, 2);
	a = &m->gpu_util[0];
	b = &m->gpu_util[1];
	assert_string_equal(a->uuid, "GPU-A");
	assert_string_equal(b->uuid, "GPU-B");
	assert_int_equal(a->t0_ns, 0);
	assert_int_equal(a->t1_ns, 50 * MS);
	assert_int_equal(a->busy_ns, 32 * MS);
	assert_int_equal(a->kernel_ns, 30 * MS);
	assert_int_equal(a->copy_ns, 7 * MS);
	assert_int_equal(a->set_ns, 0);
	assert_int_equal(a->nccl_ns, 10 * MS);
	assert_int_equal(a->spans, 5);
	assert_int_equal(a->gaps, 2);
	assert_int_equal(a->longest_gap_ns, 10 * MS);
	/* busy from 0 to 12 ms, idle from 12 to 20 (a part is 0.25 ms), busy again at 20 */
	assert_true(a->busy[0] == 1.0f && a->busy[47] == 1.0f && a->busy[48] == 0.0f);
	assert_true(a->busy[79] == 0.0f && a->busy[80] == 1.0f);
	assert_true(a->busy[LS_GPU_UTIL_BUCKETS - 1] == 1.0f);
	/* streams: process 1's 7 (two kernels and the native one) and 8, process 2's 3 */
	assert_int_equal(a->nstreams, 3);
	assert_int_equal(a->streams[0].stream, 7);
	assert_int_equal(a->streams[0].busy_ns, 20 * MS);
	assert_int_equal(a->streams[0].spans, 3);
	assert_int_equal(a->streams[1].stream, 8);
	assert_int_equal(a->streams[1].busy_ns, 7 * MS);
	assert_int_equal(m->procs[a->streams[2].proc].pid, 200);
	/* each stream a lane; the kernels' and the copies' own series */
	assert_int_equal(a->nlanes, 3);
	assert_int_equal(a->lanes[1].stream, 8);
	assert_true(a->lanes[0].busy[0] == 1.0f && a->lanes[1].busy[0] == 0.0f);
	assert_true(a->lanes[1].busy[20] == 1.0f && a->lanes[2].busy[80] == 1.0f);
	assert_true(a->kernels[20] == 1.0f && a->copies[20] == 1.0f && a->copies[0] == 0.0f);
	assert_true(a->kernels[44] == 0.0f && a->copies[44] == 1.0f);
	/* 100, 101 and 200 launch with a Python frame; 102 and the native 300 do not count */
	assert_int_equal(a->threads, 3);
	assert_int_equal(a->nlines, 3);
	/* most idle first: loading (100 blocked 6 ms, 101 for the GIL 5 ms) */
	assert_int_equal(a->lines[0].line, 3);
	assert_int_equal(a->lines[0].idle_ns, 11 * MS);
	assert_int_equal(a->lines[0].blocked_ns, 11 * MS);
	assert_int_equal(a->lines[0].cpu_ns, 0);
	/* preprocessing: 100's 2 + 2 ms and 101's 2 ms, each in full */
	assert_non_null(line_at(m, a, 100, 2));
	assert_int_equal(line_at(m, a, 100, 2)->idle_ns, 6 * MS);
	assert_int_equal(line_at(m, a, 100, 2)->cpu_ns, 6 * MS);
	/* process 2's one wait, 2 ms in each gap */
	assert_non_null(line_at(m, a, 200, 5));
	assert_int_equal(line_at(m, a, 200, 5)->idle_ns, 4 * MS);
	assert_null(line_at(m, a, 100, 4));
	/* explained: all of [12, 20); [30, 33) and [35, 40) of the second gap */
	assert_int_equal(a->explained_ns, 16 * MS);
	/* the longest gaps, longest first: [30, 40) (three lines in it, most first), [12, 20) */
	assert_int_equal(a->ntop_gaps, 2);
	assert_int_equal(a->top_gaps[0].t_ns, 30 * MS);
	assert_int_equal(a->top_gaps[0].dur_ns, 10 * MS);
	assert_int_equal(a->top_gaps[0].nlines, 3);
	assert_int_equal(a->top_gaps[0].lines[0].line, 3); /* 101's GIL wait, 5 ms */
	assert_int_equal(a->top_gaps[0].lines[0].idle_ns, 5 * MS);
	assert_int_equal(a->top_gaps[1].t_ns, 12 * MS);
	assert_int_equal(a->top_gaps[1].lines[0].line, 3); /* 100's wait, 6 ms */
	assert_int_equal(a->top_gaps[1].lines[0].idle_ns, 6 * MS);
	/* the other device: busy throughout, nothing idle */
	assert_int_equal(b->busy_ns, 5 * MS);
	assert_int_equal(b->gaps, 0);
	assert_int_equal(b->nlines, 0);
	ls_model__free(m);
}

static void test_older_schema(void **state)
{
	struct ls_store *s;
	struct ls_model *m;

	write_profile();
	/* what schema 9 wrote: no launching thread, so no line is a cause */
	assert_int_equal(ls_store__open(path, &s), 0);
	assert_int_equal(
		sqlite3_exec(ls_store__db(s),
			     "ALTER TABLE gpu_timeline DROP COLUMN tid; PRAGMA user_version=9",
			     NULL, NULL, NULL),
		SQLITE_OK);
	ls_store__free(s);
	m = load();
	assert_int_equal(m->ngpu_util, 2);
	assert_int_equal(m->gpu_util[0].busy_ns, 32 * MS);
	assert_int_equal(m->gpu_util[0].threads, 0);
	assert_int_equal(m->gpu_util[0].nlines, 0);
	assert_int_equal(m->gpu_util[0].explained_ns, 0);
	ls_model__free(m);
}

static void test_json(void **state)
{
	struct ls_model *m;
	json_t *j, *dev, *l;

	write_profile();
	m = load();
	j = ls_json__lines(m);
	assert_non_null(j);
	dev = json_array_get(json_object_get(json_object_get(j, "gpu"), "timeline"), 0);
	assert_non_null(dev);
	assert_string_equal(json_string_value(json_object_get(dev, "uuid")), "GPU-A");
	assert_int_equal(json_integer_value(json_object_get(dev, "pid")), 100);
	assert_true(json_is_null(json_object_get(dev, "rank")));
	assert_true(json_real_value(json_object_get(dev, "idle_s")) == 0.018);
	assert_true(json_real_value(json_object_get(dev, "utilization")) == 32.0 / 50);
	assert_int_equal(
		json_array_size(json_object_get(json_object_get(dev, "busy_series"), "values")),
		LS_GPU_UTIL_BUCKETS);
	l = json_array_get(json_object_get(dev, "idle_lines"), 0);
	assert_string_equal(json_string_value(json_object_get(l, "path")), "/src/train.py");
	assert_int_equal(json_integer_value(json_object_get(l, "pid")), 100);
	assert_int_equal(json_integer_value(json_object_get(l, "line")), 3);
	assert_true(fabs(json_real_value(json_object_get(l, "idle_share")) - 11.0 / 18) < 1e-9);
	json_decref(j);
	ls_model__free(m);
}

/* A profile that names more devices than any machine has: the rest are skipped, and counted. */
static void test_too_many_devices(void **state)
{
	const uint32_t st[2] = {1, 2};
	struct ls_store *s = begin_profile();
	struct ls_model *m;

	put_proc(s, 1, 100);
	assert_int_equal(ls_store__put_file(s, 1, "/src/train.py", -1, "python", NULL), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st, 1, false), 0);
	for (int d = 0; d < LS_GPU_UTIL_MAX_DEVICES + 6; d++)
		put_span(s, 1, d, 7, 1, d, 1, 1, 100, "k");
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
	m = load();
	assert_int_equal(m->ngpu_util, LS_GPU_UTIL_MAX_DEVICES);
	assert_int_equal(m->gpu_util_skipped, 6);
	assert_int_equal(m->gpu_util[LS_GPU_UTIL_MAX_DEVICES - 1].ordinal,
			 LS_GPU_UTIL_MAX_DEVICES - 1);
	ls_model__free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_devices, setup, teardown),
		cmocka_unit_test_setup_teardown(test_older_schema, setup, teardown),
		cmocka_unit_test_setup_teardown(test_json, setup, teardown),
		cmocka_unit_test_setup_teardown(test_too_many_devices, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
