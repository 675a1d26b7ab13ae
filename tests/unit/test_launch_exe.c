// SPDX-License-Identifier: MIT
/*
 * What a launched command's exec will run (userspace/launch_exe.c), and its interpreter found from
 * the file alone (ls_python__probe_exe) as a process of it shows it, for BPF's `images`.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include "images.h"
#include "launch_exe.h"
#include "procfs.h"
#include "python.h"
#include "../lib/write_file.h"

#define PY "/usr/bin/python3.11"

static char dir[] = "/tmp/ls-launch.XXXXXX";
static char *saved_path;

static void put(const char *name, const char *text, mode_t mode)
{
	assert_int_equal(ls_test_write_file(dir, name, text, mode), 0);
}

static int setup(void **state)
{
	char path[PATH_MAX];

	saved_path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/a", dir);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/b", dir);
	mkdir(path, 0755);
	return 0;
}

static int teardown(void **state)
{
	char cmd[PATH_MAX + 16];

	if (saved_path)
		setenv("PATH", saved_path, 1);
	free(saved_path);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd);
}

static void full(const char *want, char *path)
{
	if (want[0] != '/')
		snprintf(path, PATH_MAX, "%s/%s", dir, want);
	else
		snprintf(path, PATH_MAX, "%s", want);
}

/* exec'ing argv0 runs want (NULL: cannot be told), then what env runs (then) */
static void expect2(const char *argv0, const char *want, const char *then)
{
	char *argv[] = {(char *)argv0, NULL}, out[LS_LAUNCH_EXES][PATH_MAX], path[PATH_MAX];

	if (!want) {
		assert_int_equal(ls_launch_exes(argv, out), -ENOENT);
		return;
	}
	assert_int_equal(ls_launch_exes(argv, out), then ? 2 : 1);
	full(want, path);
	assert_string_equal(out[0], path);
	if (then) {
		full(then, path);
		assert_string_equal(out[1], path);
	}
}

static void expect(const char *argv0, const char *want)
{
	expect2(argv0, want, NULL);
}

static void test_path_search(void **state)
{
	char path[2 * PATH_MAX + 8], link[PATH_MAX];

	/* the first PATH entry where it can run wins: a file that cannot is passed over */
	put("a/tool", "x", 0644);
	put("b/tool", "\177ELF", 0755);
	snprintf(path, sizeof(path), "%s/a:%s/b", dir, dir);
	setenv("PATH", path, 1);
	expect("tool", "b/tool");
	put("a/tool", "x", 0755);
	expect("tool", "a/tool");
	expect("missing", NULL);
	expect("", NULL);
	/* a name with a slash is not looked up; links are followed to the file */
	snprintf(link, sizeof(link), "%s/b/python", dir);
	assert_int_equal(symlink(PY, link), 0);
	expect("python", PY);
	expect(link, PY);
	/* a directory is not a command */
	snprintf(path, sizeof(path), "%s/a", dir);
	expect(path, NULL);
}

static void test_scripts(void **state)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/b", dir);
	setenv("PATH", path, 1);
	put("b/py", "#!" PY " -u\nprint(1)\n", 0755);
	expect("py", PY);
	put("b/py", "#! " PY "\n", 0755);
	expect("py", PY);
	/* through env, which looks its name up in PATH */
	put("b/python3.11", "\177ELF", 0755);
	put("b/envpy", "#!/usr/bin/env python3.11\n", 0755);
	expect2("envpy", "/usr/bin/env", "b/python3.11");
	put("b/envpy", "#!/usr/bin/env -S python3.11 -u\n", 0755);
	expect2("envpy", "/usr/bin/env", "b/python3.11");
	put("b/envpy", "#!/usr/bin/env -Spython3.11\n", 0755);
	expect2("envpy", "/usr/bin/env", "b/python3.11");
	/* env with variables or other options, or nothing to run: env alone */
	put("b/envpy", "#!/usr/bin/env A=1 python3.11\n", 0755);
	expect("envpy", "/usr/bin/env");
	put("b/envpy", "#!/usr/bin/env -i python3.11\n", 0755);
	expect("envpy", "/usr/bin/env");
	put("b/envpy", "#!/usr/bin/env\n", 0755);
	expect("envpy", "/usr/bin/env");
	put("b/envpy", "#!/usr/bin/env nothing-by-this-name\n", 0755);
	expect("envpy", "/usr/bin/env");
	/* an interpreter that is not there, or none */
	put("b/envpy", "#!/nonexistent/python\n", 0755);
	expect("envpy", NULL);
	put("b/envpy", "#!\n", 0755);
	expect("envpy", NULL);
}

/* start_code of pid (/proc/PID/stat field 26) */
static uint64_t start_code(pid_t pid)
{
	char path[64], buf[4096], *s;
	unsigned long long v = 0;
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	f = fopen(path, "r");
	assert_non_null(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	s = strrchr(buf, ')');
	assert_non_null(s);
	/* after ") ": state is field 3; start_code is field 26 */
	s += 2;
	for (int field = 3; field < 26; field++) {
		s = strchr(s, ' ');
		assert_non_null(s);
		s++;
	}
	assert_int_equal(sscanf(s, "%llu", &v), 1);
	return v;
}

/* A process of PY, running; *fd reads its end. */
static pid_t spawn_py(int *fd)
{
	int fds[2];
	pid_t pid;
	char c;

	assert_int_equal(pipe(fds), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		dup2(fds[1], 1);
		close(fds[0]);
		execl(PY, PY, "-c", "import time; print(1, flush=True); time.sleep(60)", NULL);
		_exit(127);
	}
	close(fds[1]);
	assert_int_equal(read(fds[0], &c, 1), 1); /* initialised */
	*fd = fds[0];
	return pid;
}

/*
 * The file alone gives, moved to a process's load bias, what that process shows; twice, the
 * second process's file from what discovery kept of the first's (python.c `pyfiles`).
 */
static void test_probe_matches_process(void **state)
{
	struct ls_pyinfo *file = calloc(1, sizeof(*file)), *live = calloc(1, sizeof(*live)),
			 *moved = calloc(1, sizeof(*moved));
	struct stat st;
	char why[256];
	int fd, status, err;
	pid_t pid;

	assert_non_null(file);
	assert_non_null(live);
	assert_non_null(moved);
	assert_int_equal(ls_python__probe_exe(PY, file, why, sizeof(why)), 0);
	assert_true(file->in_exe);
	assert_int_equal(file->bias, 0);
	assert_int_not_equal(file->text_end, 0);
	/* an installed interpreter was last changed long before: its change time is kept */
	assert_int_equal(stat(PY, &st), 0);
	assert_int_equal(file->image_ctime.tv_sec, st.st_ctim.tv_sec);
	assert_int_equal(file->image_ctime.tv_nsec, st.st_ctim.tv_nsec);
	for (int round = 0; round < 2; round++) {
		memset(live, 0, sizeof(*live));
		pid = spawn_py(&fd);
		err = ls_python__discover(pid, live, why, sizeof(why));
		if (err)
			fprintf(stderr, "discover: %s\n", why);
		assert_int_equal(err, 0);
		ls_python__rebase(file, start_code(pid), moved);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		close(fd);
		assert_int_equal(moved->bias, live->bias);
		assert_int_equal(moved->runtime, live->runtime);
		assert_int_equal(moved->text_start, live->text_start);
		assert_int_equal(moved->text_end, live->text_end);
		assert_int_equal(moved->proc.code_type, live->proc.code_type);
		assert_int_equal(moved->proc.gil_lo, live->proc.gil_lo);
		assert_int_equal(moved->proc.tss_addr, live->proc.tss_addr);
		assert_int_equal(moved->proc.tsd_mode, LS_TS_GLIBC_TSD);
		assert_int_equal(live->proc.tsd_mode, LS_TS_GLIBC_TSD);
		assert_true(live->tsd_verified); /* checked on this process's own thread */
		assert_memory_equal(&moved->image, &live->image, sizeof(live->image));
		assert_memory_equal(&moved->layout, &live->layout, sizeof(live->layout));
		assert_string_equal(moved->version, live->version);
		assert_string_equal(moved->build, live->build);
		assert_string_equal(live->path, PY);
		assert_false(moved->tsd_verified); /* no process checked it */
	}
	/* not an interpreter, named as the kernel names it at exec; or not a file */
	assert_int_equal(ls_python__probe_exe("/bin/sh", file, why, sizeof(why)), -ENOENT);
	assert_int_not_equal(file->image.ino, 0);
	assert_int_not_equal(file->image.ino, live->image.ino);
	assert_true(ls_python__probe_exe("/nonexistent", file, why, sizeof(why)) < 0);
	free(file);
	free(live);
	free(moved);
}

/* an image nobody checked is published with the thread-list walk, then with glibc's once checked */
static void test_publish_unchecked(void **state)
{
	struct ls_pyinfo *pi = calloc(1, sizeof(*pi));
	struct ls_images m;
	struct ls_image_ent *e;
	char why[256];

	assert_non_null(pi);
	ls_images_init(&m);
	assert_int_equal(ls_python__probe_exe(PY, pi, why, sizeof(why)), 0);
	e = ls_images__learn(&m, pi);
	assert_non_null(e);
	assert_int_equal(e->published_tsd, LS_TS_THREAD_LIST);
	assert_null(ls_images__learn(&m, pi)); /* nothing new */
	pi->tsd_verified = true;
	e = ls_images__learn(&m, pi);
	assert_non_null(e);
	assert_int_equal(e->published_tsd, LS_TS_GLIBC_TSD);
	assert_null(ls_images__learn(&m, pi));
	ls_images_release(&m);
	free(pi);
}

/*
 * A process that has exited but is not reaped yet (a zombie: /proc/PID is there, its memory is
 * not) is gone, not "not Python": that verdict would settle every other process of its file.
 */
static void test_discover_zombie(void **state)
{
	struct ls_pyinfo *pi = calloc(1, sizeof(*pi));
	char why[256];
	int status;
	pid_t pid;

	(void)state;
	assert_non_null(pi);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	/* exited once waitid() sees it, which leaves it unreaped (WNOWAIT) */
	assert_int_equal(waitid(P_PID, pid, &(siginfo_t){0}, WEXITED | WNOWAIT), 0);
	assert_true(ls_procfs__alive(pid));
	assert_int_equal(ls_python__discover(pid, pi, why, sizeof(why)), -ESRCH);
	assert_non_null(strstr(why, "ended"));
	assert_int_equal(waitpid(pid, &status, 0), pid);
	free(pi);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_path_search),
		cmocka_unit_test(test_scripts),
		cmocka_unit_test(test_probe_matches_process),
		cmocka_unit_test(test_publish_unchecked),
		cmocka_unit_test(test_discover_zombie),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
