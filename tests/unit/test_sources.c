// SPDX-License-Identifier: MIT
/* Source snapshots: classification, one snapshot per content, reasons for unreadable files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "sources.h"

static void test_kind(void **state)
{
	assert_string_equal(ls_sources__kind("/usr/lib/python3.11/json/__init__.py"), "library");
	assert_string_equal(ls_sources__kind("/root/.pyenv/versions/3.11.7/lib/python3.11/os.py"),
			    "library");
	assert_string_equal(ls_sources__kind("/usr/lib/python3/dist-packages/numpy/a.py"),
			    "library");
	assert_string_equal(ls_sources__kind("/venv/lib/python3.12/site-packages/x.py"), "library");
	assert_string_equal(ls_sources__kind("/opt/lib/python3.13t/os.py"), "library");
	assert_string_equal(ls_sources__kind("<frozen importlib._bootstrap>"), "library");
	assert_string_equal(ls_sources__kind("/home/u/proj/lib/pythonic/app.py"), "python");
	assert_string_equal(ls_sources__kind("/home/u/proj/app.py"), "python");
	assert_string_equal(ls_sources__kind("app.py"), "python");
	assert_string_equal(ls_sources__kind("<string>"), "python");
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void test_snapshots(void **state)
{
	char dir[] = "/tmp/ls-src-XXXXXX", a[64], b[64], c[64];
	struct ls_sources s;
	int64_t fa, fb, fc, fa2, fs, fmissing;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.py", dir);
	snprintf(b, sizeof(b), "%s/b.py", dir);
	snprintf(c, sizeof(c), "%s/c.py", dir);
	write_file(a, "x = 1\n");
	write_file(b, "x = 1\n"); /* same content, other path */
	write_file(c, "y = 2\n");
	ls_sources_init(&s);
	fa = ls_sources__lookup(&s, getpid(), a);
	fb = ls_sources__lookup(&s, getpid(), b);
	fc = ls_sources__lookup(&s, getpid(), c);
	assert_true(fa > 0 && fb > 0 && fc > 0 && fa != fb);
	assert_int_equal(s.files[fa].source_id, s.files[fb].source_id);
	assert_true(s.files[fc].source_id != s.files[fa].source_id);
	assert_int_equal(s.nsrcs - 1, 2);
	/* the file changed after first sight: a new snapshot, the old one stays */
	write_file(a, "x = 3\n");
	fa2 = ls_sources__lookup(&s, getpid(), a);
	assert_true(fa2 != fa);
	assert_string_equal(s.srcs[s.files[fa].source_id].text, "x = 1\n");
	assert_string_equal(s.srcs[s.files[fa2].source_id].text, "x = 3\n");
	fs = ls_sources__lookup(&s, getpid(), "<string>");
	assert_int_equal(s.files[fs].source_id, -1);
	assert_non_null(s.files[fs].unavailable);
	fmissing = ls_sources__lookup(&s, getpid(), "/no/such/file.py");
	assert_int_equal(s.files[fmissing].source_id, -1);
	assert_non_null(strstr(s.files[fmissing].unavailable, "no such file"));
	ls_sources_release(&s);
	unlink(a);
	unlink(b);
	unlink(c);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),
		cmocka_unit_test(test_snapshots),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
