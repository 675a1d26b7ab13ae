// SPDX-License-Identifier: MIT
/* Argument parsing: accepted forms fill ls_opts; bad combinations exit 64 with one line. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cli.h"

static void parse(struct ls_opts *o, int argc, const char **argv)
{
	ls_cli__parse(argc, (char **)argv, o);
}

static void test_command(void **state)
{
	const char *argv[] = {"linescope-bpf", "-F", "499",	 "-o", "r.html", "--",
			      "python3",       "-c", "print(1)", "--", NULL};
	struct ls_opts o;

	parse(&o, 10, argv);
	assert_false(o.report);
	assert_int_equal(o.frequency, 499);
	assert_string_equal(o.output, "r.html");
	assert_string_equal(o.profile, "linescope.lsprof");
	assert_non_null(o.command);
	assert_string_equal(o.command[0], "python3");
	/* a second "--" belongs to the command */
	assert_string_equal(o.command[3], "--");
	assert_int_equal(o.mode, LS_TIME_WALL);
	ls_cli__release(&o);
}

static void test_pids_and_duration(void **state)
{
	const char *argv[] = {"linescope-bpf", "-p",	   "12,34", "--pid",  "56",  "-d", "2.5",
			      "--profile",     "x.lsprof", "-vv",   "--mode", "cpu", NULL};
	struct ls_opts o;

	parse(&o, 12, argv);
	assert_int_equal(o.npids, 3);
	assert_int_equal(o.pids[0], 12);
	assert_int_equal(o.pids[1], 34);
	assert_int_equal(o.pids[2], 56);
	assert_true(o.duration > 2.49 && o.duration < 2.51);
	assert_string_equal(o.profile, "x.lsprof");
	assert_int_equal(o.verbose, 2);
	assert_int_equal(o.mode, LS_TIME_CPU);
	ls_cli__release(&o);
}

static void test_report(void **state)
{
	const char *argv[] = {"linescope-bpf", "report", "p.lsprof", "--format",
			      "json",	       "-o",	 "-",	     NULL};
	struct ls_opts o;

	parse(&o, 7, argv);
	assert_true(o.report);
	assert_string_equal(o.profile, "p.lsprof");
	assert_int_equal(o.format, LS_FMT_JSON);
	assert_string_equal(o.output, "-");
	ls_cli__release(&o);
}

static void test_export_formats(void **state)
{
	static const struct {
		const char *args[3];
		enum ls_format want;
	} cases[] = {
		{{"--format", "pprof"}, LS_FMT_PPROF},
		{{"--format", "speedscope"}, LS_FMT_SPEEDSCOPE},
		{{"--format", "collapsed"}, LS_FMT_COLLAPSED},
		{{"--format=collapsed", "--weight=samples"}, LS_FMT_COLLAPSED},
		/* --weight time picks the folded stacks by time, before or after --format */
		{{"--weight", "time", "--format=collapsed"}, LS_FMT_COLLAPSED_TIME},
		{{"--format=collapsed", "--weight", "time"}, LS_FMT_COLLAPSED_TIME},
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *argv[8] = {"linescope-bpf", "report", "p.lsprof"};
		struct ls_opts o;
		int argc = 3;

		for (int k = 0; k < 3 && cases[i].args[k]; k++)
			argv[argc++] = cases[i].args[k];
		parse(&o, argc, argv);
		assert_int_equal(o.format, cases[i].want);
		ls_cli__release(&o);
	}
}

/* Runs a parse in a child; returns its exit status and the stderr line count. */
static int parse_fails(int argc, const char **argv, int *lines)
{
	int fds[2], status;
	char buf[4096];
	ssize_t n;
	pid_t pid;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	if (pid == 0) {
		struct ls_opts o;

		dup2(fds[1], 2);
		close(fds[0]);
		parse(&o, argc, argv);
		_exit(0);
	}
	close(fds[1]);
	for (size_t got = 0;; got += n) {
		n = read(fds[0], buf + got, sizeof(buf) - 1 - got);
		if (n <= 0) {
			buf[got] = 0;
			break;
		}
	}
	close(fds[0]);
	waitpid(pid, &status, 0);
	*lines = 0;
	for (char *p = buf; *p; p++)
		*lines += *p == '\n';
	if (WIFSIGNALED(status))
		fprintf(stderr, "child killed by signal %d\n", WTERMSIG(status));
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void test_usage_errors(void **state)
{
	const char *none[] = {"linescope-bpf", NULL};
	const char *both[] = {"linescope-bpf", "-p", "1", "-c", "x", NULL};
	const char *badf[] = {"linescope-bpf", "-F", "0", "-p", "1", NULL};
	const char *badd[] = {"linescope-bpf", "-d", "-3", "-p", "1", NULL};
	const char *stray[] = {"linescope-bpf", "python3", "app.py", NULL};
	const char *nocmd[] = {"linescope-bpf", "--", NULL};
	const char *sample[] = {"linescope-bpf", "--sample", "-p", "1", NULL};
	const char *fmt[] = {"linescope-bpf", "report", "x", "--format", "pdf", NULL};
	const char *noprof[] = {"linescope-bpf", "report", NULL};
	const char *weight[] = {"linescope-bpf", "report", "x", "--weight", "time", NULL};
	const char *badw[] = {"linescope-bpf",	    "report",	   "x",
			      "--format=collapsed", "--weight=ms", NULL};
	int lines;

	assert_int_equal(parse_fails(1, none, &lines), LS_EXIT_USAGE);
	assert_int_equal(lines, 1);
	assert_int_equal(parse_fails(5, both, &lines), LS_EXIT_USAGE);
	assert_int_equal(lines, 1);
	assert_int_equal(parse_fails(5, badf, &lines), LS_EXIT_USAGE);
	assert_int_equal(parse_fails(5, badd, &lines), LS_EXIT_USAGE);
	assert_int_equal(parse_fails(3, stray, &lines), LS_EXIT_USAGE);
	assert_int_equal(lines, 1);
	assert_int_equal(parse_fails(2, nocmd, &lines), LS_EXIT_USAGE);
	assert_int_equal(parse_fails(4, sample, &lines), LS_EXIT_USAGE);
	assert_int_equal(parse_fails(5, fmt, &lines), LS_EXIT_USAGE);
	assert_int_equal(parse_fails(2, noprof, &lines), LS_EXIT_USAGE);
	/* --weight belongs to the folded stacks: the other formats have one weight, or all */
	assert_int_equal(parse_fails(5, weight, &lines), LS_EXIT_USAGE);
	assert_int_equal(lines, 1);
	assert_int_equal(parse_fails(5, badw, &lines), LS_EXIT_USAGE);
	assert_int_equal(lines, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_command),	     cmocka_unit_test(test_pids_and_duration),
		cmocka_unit_test(test_report),	     cmocka_unit_test(test_export_formats),
		cmocka_unit_test(test_usage_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
