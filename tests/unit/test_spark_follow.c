// SPDX-License-Identifier: MIT
/*
 * Following Spark event logs as Spark writes them: a single-file log growing line by line (a
 * line cut between two polls), renamed from .inprogress when the application ends; a rolling
 * log whose parts appear one after another; a directory of logs where an old one is left out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <utime.h>
#include "spark_follow.h"

struct seen {
	int napps;
	char paths[8][256];
	char lines[64][64];
	int app_of[64];
	int n;
};

static int on_app(void *ctx, int app, const char *path, const char *codec)
{
	struct seen *s = ctx;

	assert_int_equal(app, s->napps);
	assert_string_equal(codec, "plain");
	snprintf(s->paths[s->napps++], sizeof(s->paths[0]), "%s", path);
	return 0;
}

static int on_line(void *ctx, int app, const char *line, size_t len)
{
	struct seen *s = ctx;

	assert_true(s->n < 64 && len < 64);
	memcpy(s->lines[s->n], line, len);
	s->lines[s->n][len] = 0;
	s->app_of[s->n++] = app;
	return 0;
}

static void on_renamed(void *ctx, int app, const char *path)
{
	struct seen *s = ctx;

	snprintf(s->paths[app], sizeof(s->paths[0]), "%s", path);
}

static const struct ls_spark_follow_ops ops = {on_app, on_line, NULL, on_renamed};

static void append(const char *path, const char *text)
{
	FILE *f = fopen(path, "a");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static char dir[64];

static int setup(void **state)
{
	snprintf(dir, sizeof(dir), "/tmp/ls-follow-XXXXXX");
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void test_inprogress(void **state)
{
	char live[128], done[128];
	const char *path = live;
	struct ls_spark_follow *f;
	struct seen s = {0};

	snprintf(live, sizeof(live), "%s/local-1.inprogress", dir);
	snprintf(done, sizeof(done), "%s/local-1", dir);
	append(live, "{\"a\":1}\n{\"b\":");
	assert_int_equal(ls_spark_follow__new(&path, 1, -1, NULL, &f), 0);
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, false), 0);
	assert_int_equal(s.n, 1); /* the cut line waits for its end */
	assert_string_equal(s.lines[0], "{\"a\":1}");
	append(live, "2}\n");
	assert_int_equal(rename(live, done), 0); /* the application ended */
	append(done, "{\"c\":3}");		 /* no newline: the last line, read at the end */
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, false), 0);
	assert_int_equal(s.n, 2);
	assert_string_equal(s.lines[1], "{\"b\":2}");
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, true), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.lines[2], "{\"c\":3}");
	assert_int_equal(s.napps, 1); /* the renamed file is the same log, under its new name */
	assert_string_equal(s.paths[0], done);
	ls_spark_follow__free(f);
}

static void test_rolling_and_dir(void **state)
{
	char v2[128], part[192], old[128];
	const char *path = dir;
	struct ls_spark_follow *f;
	struct seen s = {0};
	struct utimbuf t = {.actime = 1000000000, .modtime = 1000000000};

	/* an old finished log: left out of a directory followed from now on */
	snprintf(old, sizeof(old), "%s/app-old", dir);
	append(old, "{\"old\":1}\n");
	assert_int_equal(utime(old, &t), 0);
	snprintf(v2, sizeof(v2), "%s/eventlog_v2_app-2", dir);
	assert_int_equal(mkdir(v2, 0755), 0);
	assert_int_equal(ls_spark_follow__new(&path, 1, time(NULL) - 5, NULL, &f), 0);
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, false), 0);
	assert_int_equal(s.napps, 0); /* a rolling log's directory without a part yet */
	snprintf(part, sizeof(part), "%s/events_1_app-2", v2);
	append(part, "{\"p\":1}\n");
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, false), 0);
	assert_int_equal(s.napps, 1);
	assert_string_equal(s.paths[0], v2);
	snprintf(part, sizeof(part), "%s/events_2_app-2", v2);
	append(part, "{\"p\":2}\n");
	snprintf(part, sizeof(part), "%s/events_10_app-2", v2);
	append(part, "{\"p\":10}\n");
	snprintf(part, sizeof(part), "%s/appstatus_app-2", v2);
	append(part, "");
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, true), 0);
	assert_int_equal(s.n, 3);
	assert_string_equal(s.lines[0], "{\"p\":1}");
	assert_string_equal(s.lines[1], "{\"p\":2}");
	assert_string_equal(s.lines[2], "{\"p\":10}"); /* parts by number, not by name */
	assert_int_equal(s.napps, 1);
	ls_spark_follow__free(f);

	/* the same directory for a report (since -1): the old log is read too */
	memset(&s, 0, sizeof(s));
	assert_int_equal(ls_spark_follow__new(&path, 1, -1, NULL, &f), 0);
	assert_int_equal(ls_spark_follow__poll(f, &ops, &s, true), 0);
	assert_int_equal(s.napps, 2);
	assert_int_equal(s.n, 4);
	ls_spark_follow__free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_inprogress, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rolling_and_dir, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
