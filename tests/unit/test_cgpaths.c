// SPDX-License-Identifier: MIT
/*
 * cgroup v2 paths by id (userspace/cgpaths.c), against the machine's own v2 hierarchy: our own
 * cgroup's path is read once and then given by its id for a process that is gone; a path whose
 * directory is not the record's cgroup (a process moved since its exec) is given but not kept.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "cgpaths.h"
#include "procfs.h"
#include "targets.h"

/* A pid no process has: a child's, once reaped. */
static pid_t gone_pid(void)
{
	pid_t pid = fork();

	if (pid == 0)
		_exit(0);
	assert_true(pid > 0);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	return pid;
}

static void test_kept_by_id(void **state)
{
	char mnt[PATH_MAX], own[PATH_MAX], full[2 * PATH_MAX], buf[PATH_MAX];
	struct ls_cgpaths c;
	const char *got;
	struct stat st;
	pid_t gone = gone_pid();
	uint64_t id;

	(void)state;
	assert_int_equal(ls_cgroup__v2_mount(mnt, sizeof(mnt)), 0);
	assert_true(ls_procfs__cgroup(getpid(), own, sizeof(own)) > 0);
	snprintf(full, sizeof(full), "%s%s", mnt, own);
	assert_int_equal(stat(full, &st), 0);
	id = st.st_ino; /* a v2 cgroup's id is its directory's inode number */
	ls_cgpaths_init(&c);

	/* another id than the directory's: the path read is given, not kept */
	got = ls_cgpaths__of(&c, getpid(), id + 1000003, buf, sizeof(buf));
	assert_non_null(got);
	assert_string_equal(got, own);
	assert_null(ls_cgpaths__of(&c, gone, id + 1000003, buf, sizeof(buf)));

	/* its own id: read once, then given for a pid /proc no longer has */
	got = ls_cgpaths__of(&c, getpid(), id, buf, sizeof(buf));
	assert_non_null(got);
	assert_string_equal(got, own);
	assert_int_equal(c.hits, 0);
	got = ls_cgpaths__of(&c, gone, id, buf, sizeof(buf));
	assert_non_null(got);
	assert_string_equal(got, own);
	assert_int_equal(c.hits, 1);

	/* id 0 (not known): always read */
	assert_null(ls_cgpaths__of(&c, gone, 0, buf, sizeof(buf)));
	ls_cgpaths_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kept_by_id),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
