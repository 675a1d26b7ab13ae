// SPDX-License-Identifier: MIT
/*
 * JSON output (report/json.c) of a small profile built by hand: `--format json` and the HTML
 * report's data parse back (jansson) with the stored counts and times, and hostile strings come
 * back as the documented escapes (invalid UTF-8 as \xHH in names, U+FFFD elsewhere).
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <jansson.h>
#include "json.h"
#include "model.h"
#include "../lib/hostile_profile.h"
#include "../lib/tmp_profile.h"

static char path[64];

static int setup(void **state)
{
	ls_test_profile_path(path, "json");
	ls_test_profile_remove(path);
	return ls_test_hostile_profile(path);
}

static int teardown(void **state)
{
	ls_test_profile_remove(path);
	return 0;
}

/* o rendered as text and parsed back: what a reader of the output gets */
static json_t *round_trip(json_t *o)
{
	char *text = json_dumps(o, JSON_INDENT(1) | JSON_REAL_PRECISION(9));
	json_error_t e;
	json_t *back;

	assert_non_null(text);
	back = json_loads(text, 0, &e);
	assert_non_null(back);
	free(text);
	json_decref(o);
	return back;
}

static const json_t *line_of(const json_t *doc, int line)
{
	const json_t *lines = json_object_get(doc, "lines"), *l;
	size_t i;

	json_array_foreach(lines, i,
			   l) if (json_integer_value(json_object_get(l, "line")) == line) return l;
	return NULL;
}

static void assert_str(const json_t *o, const char *key, const char *want)
{
	const json_t *v = json_object_get(o, key);

	assert_true(json_is_string(v));
	assert_string_equal(json_string_value(v), want);
}

static void test_lines(void **state)
{
	struct ls_model *m = NULL;
	const json_t *l1, *l2, *run, *fn, *proc;
	json_t *doc;

	assert_int_equal(ls_model__load(path, &m), 0);
	doc = round_trip(ls_json__lines(m));
	run = json_object_get(doc, "run");
	assert_int_equal(json_integer_value(json_object_get(run, "schema")), 1);
	assert_int_equal(json_integer_value(json_object_get(run, "samples")), 40);
	assert_str(run, "status", "Success");
	assert_int_equal(json_array_size(json_object_get(doc, "lines")), 2);
	l1 = line_of(doc, 1);
	l2 = line_of(doc, 2);
	assert_non_null(l1);
	assert_non_null(l2);
	assert_int_equal(json_integer_value(json_object_get(l1, "samples")), 30);
	assert_int_equal(json_integer_value(json_object_get(l2, "samples")), 10);
	assert_true(fabs(json_real_value(json_object_get(l1, "time_s")) - 0.030) < 1e-9);
	assert_true(fabs(json_real_value(json_object_get(l2, "self_time_s")) - 0.010) < 1e-9);
	assert_int_equal(json_integer_value(json_object_get(l1, "pid")), 100);
	/* names: a quote and </script> as they are (JSON escapes the quote), a control
	 * character escaped by JSON, an invalid byte as \xHH */
	assert_str(l1, "path", "/src/\"</script>\x01\\xff.py");
	/* other text: invalid UTF-8 as U+FFFD */
	assert_str(l1, "function", "f\"</script>\x7f\xef\xbf\xbd");
	assert_str(l1, "source", "x = \"</script>\"");
	assert_str(l2, "source", "print(x)");
	assert_true(json_is_null(json_object_get(l1, "hits")));
	fn = json_array_get(json_object_get(doc, "functions"), 0);
	assert_non_null(fn);
	assert_int_equal(json_integer_value(json_object_get(fn, "samples")), 40);
	assert_str(fn, "path", "/src/\"</script>\x01\\xff.py");
	proc = json_array_get(json_object_get(doc, "processes"), 0);
	assert_non_null(proc);
	assert_str(proc, "argv", "python3 \"a\\b</script>\x1b[31m\\xff");
	assert_true(json_is_null(json_object_get(proc, "parent_pid")));
	assert_int_equal(json_array_size(json_object_get(doc, "files")), 1);
	assert_int_equal(json_integer_value(json_object_get(
				 json_array_get(json_object_get(doc, "files"), 0), "samples")),
			 40);
	json_decref(doc);
	ls_model__free(m);
}

/* The HTML report's data block: one JSON document, whatever the strings hold. */
static void test_report_data(void **state)
{
	struct ls_model *m = NULL;
	const json_t *srcs, *procs;
	json_error_t e;
	json_t *doc;
	size_t len = 0;
	char *text;

	assert_int_equal(ls_model__load(path, &m), 0);
	text = ls_json__report_text(m, &len);
	assert_non_null(text);
	assert_int_equal(strlen(text), len);
	doc = json_loadb(text, len, 0, &e);
	assert_non_null(doc);
	assert_int_equal(json_integer_value(json_object_get(doc, "version")), 1);
	srcs = json_object_get(doc, "sources");
	procs = json_object_get(doc, "processes");
	assert_int_equal(json_array_size(srcs), 1);
	assert_int_equal(json_array_size(procs), 1);
	/* the raw text held no invalid UTF-8 and no control character: JSON escaped them */
	for (size_t i = 0; i < len; i++)
		assert_true((unsigned char)text[i] >= 0x20);
	assert_null(strstr(text, "\xff"));
	json_decref(doc);
	free(text);
	ls_model__free(m);
}

static void test_helpers(void **state)
{
	json_t *v;

	v = ls_json__str(NULL);
	assert_true(json_is_null(v));
	json_decref(v);
	v = ls_json__strn("a\xc3(b", 4);
	assert_string_equal(json_string_value(v), "a\xef\xbf\xbd(b");
	json_decref(v);
	v = ls_json__name("\xe2\x82\xac\x80");
	assert_string_equal(json_string_value(v), "\xe2\x82\xac\\x80");
	json_decref(v);
	v = ls_json__secs(1500000000);
	assert_true(fabs(json_real_value(v) - 1.5) < 1e-12);
	json_decref(v);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lines, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_data, setup, teardown),
		cmocka_unit_test(test_helpers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
