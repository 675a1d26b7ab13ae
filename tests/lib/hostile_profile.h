/* SPDX-License-Identifier: MIT */
/*
 * Tests: a small profile written by hand whose user strings are hostile (quotes, a backslash,
 * </script>, control characters, invalid UTF-8), for the output formats to escape. Process 100
 * ran LS_HOSTILE_PATH: 30 on-CPU samples of 1 ms on line 1, 10 on line 2, both in function
 * LS_HOSTILE_FUNC; the file's text is LS_HOSTILE_TEXT.
 */
#ifndef LS_TEST_HOSTILE_PROFILE_H
#define LS_TEST_HOSTILE_PROFILE_H

#include <string.h>
#include "store.h"
#include "test_proc.h"

#define LS_HOSTILE_PATH "/src/\"</script>\x01\xff.py"
#define LS_HOSTILE_FUNC "f\"</script>\x7f\xfe"
#define LS_HOSTILE_ARGV "python3 \"a\\b</script>\x1b[31m\xff"
#define LS_HOSTILE_TEXT "x = \"</script>\"\nprint(x)\n"

/* Returns 0 or the first failing store call's error. */
static inline int ls_test_hostile_profile(const char *path)
{
	static const uint32_t st1[] = {1, 1}, st2[] = {1, 2};
	struct ls_store_proc p = ls_test_proc();
	struct ls_store_sample x = {
		.proc_id = 1, .tid = 100, .stack_id = 1, .count = 30, .weight_ns = 30000000};
	struct ls_store *s = NULL;
	int err = ls_store__create(path, -1, -1, &s);

	p.argv = LS_HOSTILE_ARGV;
	p.exe = "/usr/bin/python3";
	p.end_ns = 2000000000;
	p.python = "3.11.2";
	p.python_build = "static";
	p.cgroup_id = -1;

	if (err)
		return err;
	err = ls_store__publish(s) ?: ls_store__begin(s);
	if (!err) {
		ls_store__put_meta(s, "tool", "linescope-bpf test");
		ls_store__put_meta(s, "status", "Success");
		ls_store__put_meta(s, "scope_kind", "command");
		ls_store__put_meta(s, "scope", LS_HOSTILE_ARGV);
		ls_store__put_meta(s, "mode", "cpu");
		ls_store__put_meta_int(s, "elapsed_ns", 2000000000);
		ls_store__put_meta_int(s, "period_ns", 1000000);
		ls_store__put_meta_int(s, "frequency_hz", 1000);
		ls_store__put_process(s, &p);
		ls_store__put_thread(s, 1, 100, "python3", -1);
		ls_store__put_source(s, 1, "h1", LS_HOSTILE_TEXT, strlen(LS_HOSTILE_TEXT));
		ls_store__put_file(s, 1, LS_HOSTILE_PATH, 1, "python", NULL);
		ls_store__put_function(s, 1, 1, LS_HOSTILE_FUNC, 1);
		ls_store__put_stack(s, 1, st1, 1, false);
		ls_store__put_stack(s, 2, st2, 1, false);
		ls_store__put_sample(s, &x);
		x.stack_id = 2;
		x.count = 10;
		x.weight_ns = 10000000;
		ls_store__put_sample(s, &x);
		ls_store__put_stat(s, "received_samples", 40);
		/* the commit returns the first failed write's error */
		err = ls_store__commit(s);
	}
	ls_store__free(s);
	return err;
}

#endif
