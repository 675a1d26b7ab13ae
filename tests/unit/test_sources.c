// SPDX-License-Identifier: MIT
/* Source snapshots: classification, one snapshot per content, reasons for unreadable files. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <grp.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include "asuser.h"
#include "sources.h"

/* views as recorder_view.c gives them: of a live process, by id alone */
static const struct ls_source_view v7 = {.id = 7}, v8 = {.id = 8}, v9 = {.id = 9};

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

/*
 * A read shared within a view: served to the view's other lookups for LS_SOURCES_VIEW_TTL_NS (the
 * file changed on disk meanwhile and the old text still comes back, which shows nothing was read),
 * then read again; never across views, never for view 0, never when it gave no text.
 */
static void test_view_reads(void **state)
{
	char dir[] = "/tmp/ls-src-XXXXXX", a[64], m[64];
	const uint64_t t0 = 1000000000ULL, ttl = LS_SOURCES_VIEW_TTL_NS;
	struct ls_sources s;
	int64_t f1, f2, f3, f4, f5, f6, g1, g2;

	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.py", dir);
	snprintf(m, sizeof(m), "%s/m.py", dir);
	write_file(a, "v = 1\n");
	ls_sources_init(&s);
	f1 = ls_sources__lookup_in(&s, getpid(), &v7, a, t0);
	write_file(a, "v = 2\n");
	f2 = ls_sources__lookup_in(&s, getpid(), &v7, a, t0 + ttl - 1);
	assert_int_equal(f2, f1); /* served: not read again */
	assert_string_equal(s.srcs[s.files[f2].source_id].text, "v = 1\n");
	f3 = ls_sources__lookup_in(&s, getpid(), &v8, a, t0 + 1); /* another view reads */
	assert_string_equal(s.srcs[s.files[f3].source_id].text, "v = 2\n");
	f4 = ls_sources__lookup_in(&s, getpid(), NULL, a, t0 + 1); /* no view: reads */
	assert_int_equal(f4, f3);
	f5 = ls_sources__lookup_in(&s, getpid(), &v7, a, t0 + ttl); /* expired: read again */
	assert_string_equal(s.srcs[s.files[f5].source_id].text, "v = 2\n");
	f6 = ls_sources__lookup_in(&s, getpid(), &v7, a, t0 + ttl + 1); /* served from that read */
	assert_int_equal(f6, f5);
	/* a read that gave no text serves nothing: the file appears, the next lookup reads it */
	g1 = ls_sources__lookup_in(&s, getpid(), &v7, m, t0);
	assert_int_equal(s.files[g1].source_id, -1);
	write_file(m, "w = 3\n");
	g2 = ls_sources__lookup_in(&s, getpid(), &v7, m, t0 + 1);
	assert_true(g2 != g1);
	assert_string_equal(s.srcs[s.files[g2].source_id].text, "w = 3\n");
	ls_sources_release(&s);
	unlink(a);
	unlink(m);
	rmdir(dir);
}

/*
 * Past its time to live, a read still serves its view while the path names the very file it read,
 * unchanged; once the file changes, it is read again with the process's own rights. The second
 * process is nobody's and the directory is root's alone (mkdtemp: 0700): a read of its own would
 * find no text, so a text means the first read was served.
 */
static void test_view_identity(void **state)
{
	char dir[] = "/tmp/ls-src-XXXXXX", b[64];
	const uint64_t t0 = 1000000000ULL, ttl = LS_SOURCES_VIEW_TTL_NS;
	struct ls_sources s;
	int64_t f1, f2, f3;
	int status, ready[2];
	pid_t nobody;
	char c;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(b, sizeof(b), "%s/b.py", dir);
	write_file(b, "x = 1\n");
	assert_int_equal(pipe(ready), 0);
	nobody = fork();
	assert_true(nobody >= 0);
	if (!nobody) {
		/* gone with us, even when an assertion ends the test early */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || setgroups(0, NULL) || setgid(65534) ||
		    setuid(65534))
			_exit(1);
		if (write(ready[1], "", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(ready[0], &c, 1), 1); /* it has nobody's ids now */
	ls_sources_init(&s);
	f1 = ls_sources__lookup_in(&s, getpid(), &v9, b, t0);
	assert_string_equal(s.srcs[s.files[f1].source_id].text, "x = 1\n");
	/* its own read fails (the directory), which is what the served text is told apart from */
	assert_int_equal(s.files[ls_sources__lookup(&s, nobody, b)].source_id, -1);
	f2 = ls_sources__lookup_in(&s, nobody, &v9, b, t0 + 2 * ttl);
	assert_int_equal(f2, f1);
	write_file(b, "x = 1000\n"); /* another size: a change within one timestamp tick shows */
	f3 = ls_sources__lookup_in(&s, nobody, &v9, b, t0 + 4 * ttl);
	assert_true(f3 != f1);
	assert_int_equal(s.files[f3].source_id, -1);
	kill(nobody, SIGKILL);
	assert_int_equal(waitpid(nobody, &status, 0), nobody);
	close(ready[0]);
	close(ready[1]);
	ls_sources_release(&s);
	unlink(b);
	rmdir(dir);
}

/*
 * A process that has ended reads with its rights at its exit, in our root when that was its own:
 * nobody's rights find no text in root's 0700 directory, root's do. In a root not ours, it reads
 * nothing itself, and only a read of the same view serves it (here, a live process's). The pid
 * given is gone: nothing goes through it.
 */
static void test_view_gone(void **state)
{
	char dir[] = "/tmp/ls-src-XXXXXX", a[64], b[64];
	const uint64_t t0 = 1000000000ULL, ttl = LS_SOURCES_VIEW_TTL_NS;
	struct ls_creds root = {0}, nobody = {.fsuid = 65534, .fsgid = 65534};
	struct ls_source_view as_nobody = {.id = 11, .gone = &nobody, .in_ours = true},
			      as_root = {.id = 12, .gone = &root, .in_ours = true},
			      elsewhere = {.id = 13, .gone = &root, .in_ours = false},
			      live = {.id = 13}, unknown = {0};
	const pid_t gone = 0x3fffffff; /* above any pid_max */
	struct ls_sources s;
	int64_t f1, f2, f3, f4, f5;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof(a), "%s/a.py", dir);
	snprintf(b, sizeof(b), "%s/b.py", dir);
	write_file(a, "z = 1\n");
	write_file(b, "y = 1\n");
	ls_sources_init(&s);
	f1 = ls_sources__lookup_in(&s, gone, &as_nobody, a, t0);
	assert_int_equal(s.files[f1].source_id, -1);
	assert_non_null(strstr(s.files[f1].unavailable, "unreadable"));
	f2 = ls_sources__lookup_in(&s, gone, &as_root, a, t0);
	assert_string_equal(s.srcs[s.files[f2].source_id].text, "z = 1\n");
	/* past its time to live, the read stands while the file is unchanged (looked at in our root) */
	f3 = ls_sources__lookup_in(&s, gone, &as_root, a, t0 + 2 * ttl);
	assert_int_equal(f3, f2);
	/* a root not ours: nothing to read it in */
	f4 = ls_sources__lookup_in(&s, gone, &elsewhere, b, t0);
	assert_int_equal(s.files[f4].source_id, -1);
	assert_non_null(strstr(s.files[f4].unavailable, "ended"));
	assert_int_equal(s.files[ls_sources__lookup_in(&s, gone, &elsewhere, a, t0)].source_id, -1);
	f5 = ls_sources__lookup_in(&s, getpid(), &live, a, t0); /* a live process of that view */
	assert_int_equal(f5, f2);
	assert_int_equal(ls_sources__lookup_in(&s, gone, &elsewhere, a, t0 + 1), f2);
	assert_int_equal(
		s.files[ls_sources__lookup_in(&s, gone, &elsewhere, a, t0 + ttl + 1)].source_id,
		-1); /* stale, and it cannot be looked at */
	/* ended, its view unknown: nothing is read through its pid, which may be another's now */
	unknown.gone = &root;
	f5 = ls_sources__lookup_in(&s, getpid(), &unknown, a, t0);
	assert_int_equal(s.files[f5].source_id, -1);
	assert_int_equal(
		s.files[ls_sources__lookup_in(&s, getpid(), &as_root, "a.py", t0)].source_id, -1);
	assert_string_equal(
		s.files[ls_sources__lookup_in(&s, getpid(), &unknown, "<string>", t0)].unavailable,
		"code without a source file");
	ls_sources_release(&s);
	unlink(a);
	unlink(b);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kind),	   cmocka_unit_test(test_snapshots),
		cmocka_unit_test(test_view_reads), cmocka_unit_test(test_view_identity),
		cmocka_unit_test(test_view_gone),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
