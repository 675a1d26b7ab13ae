// SPDX-License-Identifier: MIT
/*
 * Exports (report/model_stacks.c, report/export*.c): a profile written through the store with
 * two processes, three threads, every sample kind, a thread scaled to its accounted CPU, stacks
 * without a known frame, a timeline and damaged rows, read back as the model's stacks and as
 * each format.
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
#include <zlib.h>
#include "export.h"
#include "json.h"
#include "model.h"
#include "store.h"
#include "../lib/test_proc.h"
#include "../lib/tmp_profile.h"
#include "report/profile.pb-c.h"

typedef Perftools__Profiles__Profile PbProfileT;

#define MS 1000000LL

LS_TEST_PROFILE_FIXTURE("export")

static void put_proc(struct ls_store *s, int64_t id, int pid, const char *comm, const char *argv)
{
	struct ls_store_proc p = ls_test_proc_at(id, pid, comm, argv);

	assert_int_equal(ls_store__put_process(s, &p), 0);
}

/* a timeline tick of [end - dur, end] ms */
static void put_tick(struct ls_store *s, int64_t proc, int tid, int64_t stack, int kind,
		     int64_t end, int64_t dur)
{
	struct ls_store_tick t = {.proc_id = proc,
				  .tid = tid,
				  .stack_id = stack,
				  .kind = kind,
				  .mode = LS_MODE_PYTHON,
				  .t_ns = end * MS,
				  .dur_ns = dur * MS};

	assert_int_equal(ls_store__put_tick(s, &t), 0);
}

/* device work of process 1 on device 0: [start, start + dur] ms */
static void put_span(struct ls_store *s, int stream, int kind, int64_t start, int64_t dur,
		     int64_t stack, const char *name, int64_t bytes)
{
	struct ls_store_gpu_span g = {.proc_id = 1,
				      .stack_id = stack,
				      .stream = stream,
				      .kind = kind,
				      .t_ns = start * MS,
				      .dur_ns = dur * MS,
				      .count = 1,
				      .bytes = bytes,
				      .name = name};

	assert_int_equal(ls_store__put_gpu_span(s, &g), 0);
}

static void put_row(struct ls_store *s, int64_t proc, int tid, int64_t stack, int kind, int mode,
		    int64_t count, int64_t weight)
{
	struct ls_store_sample x = {.proc_id = proc,
				    .tid = tid,
				    .stack_id = stack,
				    .kind = kind,
				    .mode = mode,
				    .count = count,
				    .weight_ns = weight};

	assert_int_equal(ls_store__put_sample(s, &x), 0);
}

/*
 * Stacks (innermost first): 1 f:2 <module>:5; 2 <module>:5; 3 g:10 f:3 <module>:5 (g in a
 * library); 4 a frame of a function whose file the profile lacks; 5 f:8 <module>:6, f a second
 * code object of the same name and file; 6 a depth that does not match its blob; 7 a line
 * beyond any file's. 4, 6 and 7 hold no Python frame the report can show.
 */
static void write_profile(void)
{
	const char *text = "def f():\n    x = 1\n    return g()\n\nf()\nf()\ndef f():\n    pass\n";
	const uint32_t st1[] = {1, 2, 2, 5}, st2[] = {2, 5}, st3[] = {3, 10, 1, 3, 2, 5},
		       st4[] = {5, 1}, st5[] = {4, 8, 2, 6}, st6[] = {1, 2},
		       st7[] = {1, 0x80000000};
	struct ls_store *s;

	assert_int_equal(ls_store__create(path, -1, -1, &s), 0);
	assert_int_equal(ls_store__publish(s), 0);
	assert_int_equal(ls_store__begin(s), 0);
	assert_int_equal(ls_store__put_meta(s, "status", "Success"), 0);
	assert_int_equal(ls_store__put_meta(s, "tool", "linescope-bpf 0.1.0"), 0);
	assert_int_equal(ls_store__put_meta(s, "mode", "wall"), 0);
	assert_int_equal(ls_store__put_meta(s, "host", "box"), 0);
	assert_int_equal(ls_store__put_meta(s, "scope", "python3 app.py"), 0);
	assert_int_equal(ls_store__put_meta(s, "started_at", "2026-01-02T03:04:05Z"), 0);
	assert_int_equal(ls_store__put_meta_int(s, "elapsed_ns", 2000 * MS), 0);
	assert_int_equal(ls_store__put_meta_int(s, "period_ns", MS), 0);
	put_proc(s, 1, 100, "python3", "python3 app.py");
	put_proc(s, 2, 200, "w;rk\n", "w;rk --x");
	assert_int_equal(ls_store__put_thread(s, 1, 100, "MainThread", -1), 0);
	assert_int_equal(ls_store__put_thread(s, 1, 101, "worker", -1), 0);
	assert_int_equal(ls_store__put_thread(s, 2, 200, "py\"2", -1), 0);
	/* thread 100 sampled 260 ms, accounted 390: its on-CPU weights are scaled by 1.5 */
	assert_int_equal(ls_store__put_thread_cpu(s, 1, 100, 390 * MS), 0);
	assert_int_equal(ls_store__put_source(s, 1, "abc", text, strlen(text)), 0);
	assert_int_equal(ls_store__put_file(s, 1, "/src/app.py", 1, "python", NULL), 0);
	assert_int_equal(
		ls_store__put_file(s, 2, "/usr/lib/python3.11/l;b.py", -1, "library", "gone"), 0);
	assert_int_equal(ls_store__put_function(s, 1, 1, "f", 1), 0);
	assert_int_equal(ls_store__put_function(s, 2, 1, "<module>", 1), 0);
	assert_int_equal(ls_store__put_function(s, 3, 2, "g", 9), 0);
	assert_int_equal(ls_store__put_function(s, 4, 1, "f", 7), 0);
	assert_int_equal(ls_store__put_function(s, 5, 9, "lost", 1), 0);
	assert_int_equal(ls_store__put_stack(s, 1, st1, 2, false), 0);
	assert_int_equal(ls_store__put_stack(s, 2, st2, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 3, st3, 3, false), 0);
	assert_int_equal(ls_store__put_stack(s, 4, st4, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 5, st5, 2, false), 0);
	assert_int_equal(ls_store__put_stack(s, 6, st6, 1, false), 0);
	assert_int_equal(ls_store__put_stack(s, 7, st7, 1, false), 0);
	assert_int_equal(sqlite3_exec(ls_store__db(s), "UPDATE stacks SET depth = 3 WHERE id = 6",
				      NULL, NULL, NULL),
			 SQLITE_OK);

	put_row(s, 1, 100, 1, LS_CLASS_CPU, LS_MODE_PYTHON, 200, 200 * MS);
	put_row(s, 1, 100, 3, LS_CLASS_CPU, LS_MODE_NATIVE, 50, 50 * MS);
	put_row(s, 1, 100, 0, LS_CLASS_CPU, LS_MODE_NATIVE, 10, 10 * MS);
	put_row(s, 1, 100, 2, LS_CLASS_WAIT, LS_MODE_KERNEL, 1, 40 * MS);
	put_row(s, 1, 101, 1, LS_CLASS_CPU, LS_MODE_PYTHON, 20, 20 * MS);
	put_row(s, 1, 101, 1, LS_CLASS_GIL_WAIT, LS_MODE_KERNEL, 1, 5 * MS);
	put_row(s, 1, 101, 5, LS_CLASS_RUNQ, LS_MODE_KERNEL, 1, 3 * MS);
	put_row(s, 1, 101, 4, LS_CLASS_CPU, LS_MODE_PYTHON, 2, 2 * MS);
	put_row(s, 1, 101, 6, LS_CLASS_CPU, LS_MODE_PYTHON, 1, 1 * MS);
	put_row(s, 1, 101, 7, LS_CLASS_CPU, LS_MODE_PYTHON, 1, 1 * MS);
	/* two modes of one (thread, stack, kind): one sample in every export */
	put_row(s, 2, 200, 2, LS_CLASS_CPU, LS_MODE_PYTHON, 7, 7 * MS);
	put_row(s, 2, 200, 2, LS_CLASS_CPU, LS_MODE_KERNEL, 3, 3 * MS);
	put_row(s, 2, 200, 0, LS_CLASS_CPU, LS_MODE_NATIVE, 1, 1 * MS);
	/* a kind no reader knows: skipped (and counted as damaged) */
	put_row(s, 1, 100, 1, 7, LS_MODE_PYTHON, 5, 5 * MS);
	/*
	 * The timeline of thread 100 (1 ms period), in no order: stack 1 twice, stack 3 on-CPU
	 * then blocked 5 ms, a gap, stack 1 and a tick without a Python frame; thread 101 waits
	 * for the GIL once. Refused: a tick longer than the time before it, one of a thread
	 * without samples, one of a kind no reader knows.
	 */
	assert_int_equal(ls_store__put_meta(s, "timeline", "1"), 0);
	assert_int_equal(ls_store__put_meta_int(s, "frequency_hz", 1000), 0);
	put_tick(s, 1, 100, 3, LS_CLASS_WAIT, 8, 5);
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 1, 1);
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 20, 1);
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 2, 1);
	put_tick(s, 1, 100, 3, LS_CLASS_CPU, 3, 1);
	put_tick(s, 1, 100, 0, LS_CLASS_CPU, 21, 1);
	put_tick(s, 1, 101, 1, LS_CLASS_GIL_WAIT, 30, 5);
	put_tick(s, 1, 100, 1, LS_CLASS_CPU, 5, 6);
	put_tick(s, 1, 999, 1, LS_CLASS_CPU, 5, 1);
	put_tick(s, 1, 100, 1, 9, 40, 1);
	/*
	 * Device work on stream 7 (the second span starts before the first ended: a graph's, moved
	 * after it) and 9; a span of no time is refused.
	 */
	put_span(s, 7, 1, 40, 2, 1, "k1", 0);
	put_span(s, 7, 1, 41, 1, LS_GPU_STACK_UNSEEN, "k\"2", 0);
	put_span(s, 9, 2, 40, 1, 3, NULL, 4096);
	put_span(s, 9, 3, 41, 1, 0, NULL, 64);
	put_span(s, 9, 2, 50, 0, 3, NULL, 4096);
	assert_int_equal(ls_store__commit(s), 0);
	ls_store__free(s);
}

static struct ls_model *load(void)
{
	struct ls_model *m = NULL;

	write_profile();
	assert_int_equal(ls_model__load_flags(path, LS_MODEL_STACKS, &m), 0);
	assert_non_null(m->stacks);
	return m;
}

/* The text one exporter writes, NUL-terminated (binary output: *len). */
static char *export(const struct ls_model *m, int fmt, size_t *len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	int err;

	assert_non_null(f);
	err = fmt == 0	 ? ls_export__collapsed(f, m, LS_EXPORT_SAMPLES)
	      : fmt == 1 ? ls_export__collapsed(f, m, LS_EXPORT_TIME)
	      : fmt == 2 ? ls_export__speedscope(f, m)
			 : ls_export__pprof(f, m);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(err, 0);
	if (len)
		*len = n;
	return buf;
}

static void test_model_stacks(void **state)
{
	struct ls_model *m = load(), *plain = NULL;
	const struct ls_mstacks *s = m->stacks;
	int64_t count = 0, ns[4] = {};
	char *a, *b;
	json_t *j;

	/* the same report as a model loaded without the stacks */
	assert_int_equal(ls_model__load(path, &plain), 0);
	assert_null(plain->stacks);
	j = ls_json__lines(m);
	a = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	j = ls_json__lines(plain);
	b = json_dumps(j, JSON_SORT_KEYS);
	json_decref(j);
	assert_string_equal(a, b);
	free(a);
	free(b);

	assert_int_equal(s->nthreads, 3);
	assert_int_equal(s->threads[0].tid, 100);
	assert_string_equal(s->threads[0].name, "MainThread");
	assert_int_equal(s->threads[2].proc, 1);
	assert_string_equal(s->threads[2].name, "py\"2");
	/* the empty stack, then 1, 3, 2 and 5 as first used; 4, 6 and 7 are the empty stack */
	assert_int_equal(s->nstacks, 5);
	assert_int_equal(s->stacks[0].depth, 0);
	for (size_t i = 0; i < s->nsamples; i++) {
		const struct ls_msample *x = &s->samples[i];

		assert_true(x->thread >= 0 && (size_t)x->thread < s->nthreads);
		assert_true(x->stack >= 0 && (size_t)x->stack < s->nstacks);
		count += x->count;
		ns[x->kind] += x->weight_ns;
	}
	/* every valid sample row, weighted as the lines are */
	assert_int_equal(count, m->samples);
	assert_int_equal(count, 295);
	assert_int_equal(ns[LS_CLASS_CPU], (300 + 75 + 15 + 20 + 2 + 1 + 1 + 7 + 3 + 1) * MS);
	assert_int_equal(ns[LS_CLASS_WAIT], 40 * MS);
	assert_int_equal(ns[LS_CLASS_GIL_WAIT], 5 * MS);
	assert_int_equal(ns[LS_CLASS_RUNQ], 3 * MS);
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];

		if (l->line == 2)
			assert_int_equal(l->self_ns, (300 + 20 + 5) * MS);
	}
	/* f:8 is the second code object of f */
	for (size_t i = 1; i < s->nstacks; i++)
		if (s->stacks[i].frames[0].line == 8)
			assert_int_equal(m->funcs[s->stacks[i].frames[0].func].firstlineno, 7);
	ls_model__free(plain);
	ls_model__free(m);
}

static void test_collapsed(void **state)
{
	struct ls_model *m = load();
	char *samples = export(m, 0, NULL), *time = export(m, 1, NULL);

	/* root first, one line per distinct stack (both processes' <module>:5 together), sorted */
	assert_string_equal(samples, "<module> (/src/app.py:5) 10\n"
				     "<module> (/src/app.py:5);f (/src/app.py:2) 220\n"
				     "<module> (/src/app.py:5);f (/src/app.py:3);"
				     "g (/usr/lib/python3.11/l,b.py:10) 50\n"
				     "[native] python3 (pid 100) 14\n"
				     "[native] w,rk\\x0a (pid 200) 1\n");
	/* microseconds of every kind, on-CPU as scaled: 300 ms for stack 1 on thread 100 */
	assert_string_equal(time, "<module> (/src/app.py:5) 50000\n"
				  "<module> (/src/app.py:5);f (/src/app.py:2) 325000\n"
				  "<module> (/src/app.py:5);f (/src/app.py:3);"
				  "g (/usr/lib/python3.11/l,b.py:10) 75000\n"
				  "<module> (/src/app.py:6);f (/src/app.py:8) 3000\n"
				  "[native] python3 (pid 100) 19000\n"
				  "[native] w,rk\\x0a (pid 200) 1000\n");
	free(samples);
	free(time);
	ls_model__free(m);
}

static const char *frame_name(json_t *frames, json_t *idx)
{
	return json_string_value(
		json_object_get(json_array_get(frames, json_integer_value(idx)), "name"));
}

static void test_speedscope(void **state)
{
	struct ls_model *m = load();
	char *text = export(m, 2, NULL);
	json_error_t jerr;
	json_t *d = json_loads(text, 0, &jerr), *frames, *profiles, *p;
	int64_t sum = 0;
	size_t i;
	json_t *w;

	assert_non_null(d);
	assert_string_equal(json_string_value(json_object_get(d, "$schema")),
			    "https://www.speedscope.app/file-format-schema.json");
	assert_string_equal(json_string_value(json_object_get(d, "name")), "python3 app.py");
	frames = json_object_get(json_object_get(d, "shared"), "frames");
	profiles = json_object_get(d, "profiles");
	/* one profile per thread, the busiest shown first */
	assert_int_equal(json_array_size(profiles), 3);
	assert_int_equal(json_integer_value(json_object_get(d, "activeProfileIndex")), 0);
	p = json_array_get(profiles, 0);
	assert_string_equal(json_string_value(json_object_get(p, "type")), "sampled");
	assert_string_equal(json_string_value(json_object_get(p, "unit")), "nanoseconds");
	assert_string_equal(json_string_value(json_object_get(p, "name")),
			    "python3 (pid 100): MainThread (tid 100)");
	json_array_foreach(json_object_get(p, "weights"), i, w) sum += json_integer_value(w);
	/* on-CPU scaled, and off-CPU */
	assert_int_equal(sum, (300 + 75 + 15 + 40) * MS);
	assert_int_equal(json_integer_value(json_object_get(p, "endValue")), sum);
	/* stacks root first: stack 1 is <module>:5 then f:2 */
	json_array_foreach(json_object_get(p, "samples"), i, w)
	{
		if (json_array_size(w) != 2)
			continue;
		assert_string_equal(frame_name(frames, json_array_get(w, 0)), "<module>");
		assert_string_equal(frame_name(frames, json_array_get(w, 1)), "f");
		assert_int_equal(
			json_integer_value(json_object_get(
				json_array_get(frames, json_integer_value(json_array_get(w, 1))),
				"line")),
			2);
	}
	p = json_array_get(profiles, 2);
	/* names in JSON as they are, the comm escaped as everywhere */
	assert_string_equal(json_string_value(json_object_get(p, "name")),
			    "w;rk\\x0a (pid 200): py\"2 (tid 200)");
	assert_int_equal(json_integer_value(json_object_get(p, "endValue")), 11 * MS);
	json_decref(d);
	free(text);
	ls_model__free(m);
}

static PbProfileT *unpack_pprof(const char *gz, size_t len)
{
	size_t cap = 1 << 20;
	unsigned char *raw = malloc(cap);
	z_stream z = {};
	PbProfileT *pb;

	assert_non_null(raw);
	/* 15 + 32: gzip (or zlib) header, as pprof files are read */
	assert_int_equal(inflateInit2(&z, 15 + 32), Z_OK);
	z.next_in = (unsigned char *)gz;
	z.avail_in = len;
	z.next_out = raw;
	z.avail_out = cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	pb = perftools__profiles__profile__unpack(NULL, z.total_out, raw);
	inflateEnd(&z);
	free(raw);
	assert_non_null(pb);
	return pb;
}

static const char *str(const PbProfileT *pb, int64_t i)
{
	assert_true(i >= 0 && (size_t)i < pb->n_string_table);
	return pb->string_table[i];
}

static const Perftools__Profiles__Function *pb_function(const PbProfileT *pb, uint64_t loc)
{
	assert_true(loc >= 1 && loc <= pb->n_location);
	assert_int_equal(pb->location[loc - 1]->id, loc);
	assert_int_equal(pb->location[loc - 1]->n_line, 1);
	for (size_t i = 0; i < pb->n_function; i++)
		if (pb->function[i]->id == pb->location[loc - 1]->line[0]->function_id)
			return pb->function[i];
	fail_msg("location %llu has no function", (unsigned long long)loc);
	return NULL;
}

static const char *label(const PbProfileT *pb, const Perftools__Profiles__Sample *x,
			 const char *key, int64_t *num)
{
	for (size_t i = 0; i < x->n_label; i++)
		if (!strcmp(str(pb, x->label[i]->key), key)) {
			if (num)
				*num = x->label[i]->num;
			return str(pb, x->label[i]->str);
		}
	return NULL;
}

static void test_pprof(void **state)
{
	static const char *const types[] = {"samples",	"cpu",	    "wait",
					    "gil_wait", "cpu_wait", "wall"};
	struct ls_model *m = load();
	size_t len;
	char *gz = export(m, 3, &len);
	PbProfileT *pb = unpack_pprof(gz, len);
	int64_t sum[6] = {}, num = 0;
	int found = 0, fs = 0;

	assert_true(len > 2 && (unsigned char)gz[0] == 0x1f && (unsigned char)gz[1] == 0x8b);
	assert_string_equal(str(pb, 0), "");
	/* wall mode: the off-CPU kinds and their sum, each in its unit */
	assert_int_equal(pb->n_sample_type, 6);
	for (int k = 0; k < 6; k++) {
		assert_string_equal(str(pb, pb->sample_type[k]->type), types[k]);
		assert_string_equal(str(pb, pb->sample_type[k]->unit), k ? "nanoseconds" : "count");
	}
	assert_string_equal(str(pb, pb->default_sample_type), "wall");
	assert_int_equal(pb->period, MS);
	assert_int_equal(pb->duration_nanos, 2000 * MS);
	assert_int_equal(pb->time_nanos, 1767323045LL * 1000000000);
	/* one Function for the two code objects of f: f, <module>, g and two [native] */
	assert_int_equal(pb->n_function, 5);
	for (size_t i = 0; i < pb->n_function; i++)
		if (!strcmp(str(pb, pb->function[i]->name), "f")) {
			assert_string_equal(str(pb, pb->function[i]->filename), "/src/app.py");
			fs++;
		}
	assert_int_equal(fs, 1);
	/* (f,2) (<module>,5) (f,3) (g,10) (f,8) (<module>,6) and the two native frames */
	assert_int_equal(pb->n_location, 8);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const Perftools__Profiles__Sample *x = pb->sample[i];

		assert_int_equal(x->n_value, 6);
		for (int k = 0; k < 6; k++)
			sum[k] += x->value[k];
		assert_int_equal(x->value[5],
				 x->value[1] + x->value[2] + x->value[3] + x->value[4]);
		/* leaf first: f:2 called from <module>:5, on the main thread */
		if (x->n_location_id == 2 &&
		    !strcmp(str(pb, pb_function(pb, x->location_id[0])->name), "f") &&
		    pb->location[x->location_id[0] - 1]->line[0]->line == 2 &&
		    label(pb, x, "thread_id", &num) && num == 100) {
			found++;
			assert_string_equal(str(pb, pb_function(pb, x->location_id[1])->name),
					    "<module>");
			assert_int_equal(x->value[0], 200);
			assert_int_equal(x->value[1], 300 * MS);
			assert_string_equal(label(pb, x, "thread_name", NULL), "MainThread");
			assert_string_equal(label(pb, x, "comm", NULL), "python3");
			assert_string_equal(label(pb, x, "cmdline", NULL), "python3 app.py");
			assert_string_equal(label(pb, x, "host", NULL), "box");
			label(pb, x, "pid", &num);
			assert_int_equal(num, 100);
		}
		if (x->n_location_id == 1 &&
		    !strcmp(str(pb, pb_function(pb, x->location_id[0])->name),
			    "[native] w;rk\\x0a (pid 200)")) {
			found++;
			assert_int_equal(x->value[0], 1);
			assert_string_equal(label(pb, x, "comm", NULL), "w;rk\n");
		}
	}
	assert_int_equal(found, 2);
	assert_int_equal(sum[0], 295);
	assert_int_equal(sum[1], 425 * MS);
	assert_int_equal(sum[2], 40 * MS);
	assert_int_equal(sum[3], 5 * MS);
	assert_int_equal(sum[4], 3 * MS);
	assert_int_equal(sum[5], 473 * MS);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	free(gz);
	ls_model__free(m);
}

/* Damaged rows: every export still writes, and refers only to what exists. */
static void test_hostile_rows(void **state)
{
	static const char *const sqls[] = {
		"UPDATE stacks SET depth = 536870913, frames = X'0100000002000000' WHERE id = 1",
		"UPDATE stacks SET frames = X'01000000FFFFFFFF02000000FFFFFF7F' WHERE id = 1",
		"UPDATE stacks SET frames = NULL WHERE id = 3",
		"UPDATE stacks SET id = 99999 WHERE id = 1",
		"UPDATE samples SET kind = 9 WHERE tid = 101",
		"UPDATE samples SET count = -5 WHERE stack_id = 1",
		"UPDATE samples SET weight_ns = -5 WHERE stack_id = 2",
		"UPDATE samples SET process_id = 77 WHERE tid = 200",
		"UPDATE samples SET tid = -3 WHERE tid = 101",
		"UPDATE samples SET stack_id = -1 WHERE tid = 100 AND stack_id = 1",
		"DELETE FROM threads",
		"UPDATE threads SET name = NULL",
		"DELETE FROM functions WHERE id = 2",
		"UPDATE processes SET comm = NULL, argv = NULL",
	};

	for (size_t i = 0; i < sizeof(sqls) / sizeof(sqls[0]); i++) {
		struct ls_model *m = NULL;
		sqlite3 *db;

		write_profile();
		assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
		if (sqlite3_exec(db, sqls[i], NULL, NULL, NULL) != SQLITE_OK)
			fail_msg("%s: %s", sqls[i], sqlite3_errmsg(db));
		sqlite3_close(db);
		if (ls_model__load_flags(path, LS_MODEL_STACKS, &m))
			fail_msg("not loaded: %s", sqls[i]);
		for (size_t k = 0; k < m->stacks->nsamples; k++) {
			const struct ls_msample *x = &m->stacks->samples[k];

			assert_true((size_t)x->thread < m->stacks->nthreads);
			assert_true((size_t)x->stack < m->stacks->nstacks);
			assert_true(x->count >= 0 && x->weight_ns >= 0);
		}
		for (int fmt = 0; fmt < 4; fmt++)
			free(export(m, fmt, NULL));
		ls_model__free(m);
	}
}

/* A damaged file is one error from the loader, whatever the format asks for. */
/*
 * The Chrome trace: the timeline's ticks as nested slices per thread, exactly; a gap longer than a
 * period ends every slice; device work on a track per stream, named by its launching line (or
 * its process's native frame);
 * damaged ticks and spans are counted, not shown.
 */
static void test_chrome(void **state)
{
	static const struct {
		int tid;
		const char *name;
		double ts, dur; /* us */
	} want[] = {
		{100, "f (/src/app.py:2)", 0, 2000},
		{100, "[blocked]", 3000, 5000},
		{100, "g (/usr/lib/python3.11/l;b.py:10)", 2000, 6000},
		{100, "f (/src/app.py:3)", 2000, 6000},
		{100, "<module> (/src/app.py:5)", 0, 8000},
		{100, "f (/src/app.py:2)", 19000, 1000},
		{100, "<module> (/src/app.py:5)", 19000, 1000},
		{100, "[native] python3 (pid 100)", 20000, 1000},
		{101, "[GIL wait]", 25000, 5000},
		{101, "f (/src/app.py:2)", 25000, 5000},
		{101, "<module> (/src/app.py:5)", 25000, 5000},
		{0x40000000, "k1", 40000, 2000},
		{0x40000000, "k\"2", 42000, 1000},
		{0x40000001, "memcpy", 40000, 1000},
		{0x40000001, "memset", 41000, 1000},
	};
	static const char *const launched[] = {"f (/src/app.py:2)", "(launch not seen)",
					       "f (/src/app.py:3)", /* g:10 is a library's */
					       "[native] python3 (pid 100)"};
	struct ls_model *m = NULL;
	char *buf = NULL;
	size_t n = 0, i, nx = 0;
	FILE *f = open_memstream(&buf, &n);
	json_error_t jerr;
	json_t *d, *e, *other;
	bool named_hostile = false;

	write_profile();
	assert_int_equal(ls_model__load_flags(path, LS_MODEL_STACKS | LS_MODEL_TIMELINE, &m), 0);
	assert_true(m->stacks->timeline);
	assert_int_equal(m->stacks->nticks, 7);
	assert_int_equal(m->stacks->ticks_bad, 3);
	assert_int_equal(ls_export__chrome(f, m), 0);
	assert_int_equal(fclose(f), 0);
	d = json_loads(buf, 0, &jerr);
	assert_non_null(d);
	json_array_foreach(json_object_get(d, "traceEvents"), i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		const char *name = json_string_value(json_object_get(e, "name"));

		if (!strcmp(ph, "M") && !strcmp(name, "thread_name") &&
		    json_integer_value(json_object_get(e, "tid")) == 200)
			named_hostile = !strcmp(json_string_value(json_object_get(
							json_object_get(e, "args"), "name")),
						"py\"2");
		if (strcmp(ph, "X"))
			continue;
		assert_true(nx < sizeof(want) / sizeof(want[0]));
		assert_int_equal(json_integer_value(json_object_get(e, "pid")), 100);
		assert_int_equal(json_integer_value(json_object_get(e, "tid")), want[nx].tid);
		assert_string_equal(name, want[nx].name);
		assert_true(json_real_value(json_object_get(e, "ts")) == want[nx].ts);
		assert_true(json_real_value(json_object_get(e, "dur")) == want[nx].dur);
		if (want[nx].tid >= 0x40000000)
			assert_string_equal(json_string_value(json_object_get(
						    json_object_get(e, "args"), "launched from")),
					    launched[nx - 11]); /* the last four */
		nx++;
	}
	assert_int_equal(nx, sizeof(want) / sizeof(want[0]));
	assert_true(named_hostile);
	other = json_object_get(d, "otherData");
	assert_true(json_is_true(json_object_get(other, "timeline")));
	assert_int_equal(json_integer_value(json_object_get(other, "ticks")), 7);
	assert_int_equal(json_integer_value(json_object_get(other, "ticks_refused")), 3);
	assert_int_equal(json_integer_value(json_object_get(other, "gpu_spans")), 4);
	assert_int_equal(json_integer_value(json_object_get(other, "gpu_spans_refused")), 1);
	json_decref(d);
	free(buf);
	ls_model__free(m);
}

static void test_not_a_profile(void **state)
{
	struct ls_model *m = NULL;
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs("SQLite format 3\nnot really", f);
	fclose(f);
	assert_int_not_equal(ls_model__load_flags(path, LS_MODEL_STACKS, &m), 0);
	assert_null(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_model_stacks, setup, teardown),
		cmocka_unit_test_setup_teardown(test_collapsed, setup, teardown),
		cmocka_unit_test_setup_teardown(test_speedscope, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pprof, setup, teardown),
		cmocka_unit_test_setup_teardown(test_hostile_rows, setup, teardown),
		cmocka_unit_test_setup_teardown(test_chrome, setup, teardown),
		cmocka_unit_test_setup_teardown(test_not_a_profile, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
