// SPDX-License-Identifier: MIT
/*
 * Notebook cells against real processes: a stand-in kernel (a shell whose argv carries the history
 * option) under a stand-in launcher (a shell whose argv names the notebook as nbconvert's does).
 * Cells found in the history (trailing newline stripped), in the notebook, in a notebook a cell
 * %runs, and one found nowhere, marked.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <limits.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ipycell.h"
#include "notebooks.h"
#include "../lib/write_file.h"

static char dir[] = "/tmp/ls-nb-XXXXXX";

static void write_file(const char *name, const char *text)
{
	assert_int_equal(ls_test_write_file(dir, name, text, 0644), 0);
}

/* The cell name of text as ipykernel would give it */
static const char *name_of(const char *text, char *buf, size_t len)
{
	snprintf(buf, len, "/tmp/ipykernel_9/%u.py",
		 ls_ipycell__murmur2(text, strlen(text), LS_IPYCELL_SEED));
	return buf;
}

static void test_cells(void **state)
{
	char path[PATH_MAX], name[64], script[PATH_MAX * 2], hist[PATH_MAX + 32];
	struct ls_notebooks n;
	struct ls_sources s;
	int64_t fa, fb, frun, fc, fz;
	pid_t launcher, kernel = 0;
	sqlite3 *db;
	FILE *f;

	assert_non_null(mkdtemp(dir));
	assert_int_equal(chdir(dir), 0); /* the kernel's cwd: %run names child.ipynb from it */
	write_file("nb.ipynb",
		   "{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": ["
		   "{\"cell_type\": \"code\", \"source\": [\"a = 1\"]},"
		   "{\"cell_type\": \"code\", \"source\": \"%run child.ipynb\"}]}");
	write_file("child.ipynb", "{\"nbformat\": 4, \"cells\": ["
				  "{\"cell_type\": \"code\", \"source\": \"c = 3\"}]}");
	snprintf(path, sizeof(path), "%s/h.sqlite", dir);
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
		sqlite3_exec(db,
			     "CREATE TABLE history (session integer, line integer, source text,"
			     " source_raw text); INSERT INTO history VALUES (3, 7, 'b = 2',"
			     " 'b = 2')",
			     NULL, NULL, NULL),
		SQLITE_OK);
	sqlite3_close(db);
	snprintf(hist, sizeof(hist), "--HistoryManager.hist_file=%s", path);
	snprintf(script, sizeof(script), "sh -c 'echo $$ > %s/pid; sleep 30; :' %s; :", dir, hist);
	snprintf(path, sizeof(path), "%s/nb.ipynb", dir);
	launcher = fork();
	if (!launcher) {
		execl("/bin/sh", "sh", "-c", script, "jupyter-nbconvert", "--execute", path, NULL);
		_exit(127);
	}
	for (int i = 0; i < 500 && kernel <= 0; i++) {
		snprintf(name, sizeof(name), "%s/pid", dir);
		f = fopen(name, "r");
		if (!f || fscanf(f, "%d", &kernel) != 1)
			usleep(10000);
		if (f)
			fclose(f);
	}
	assert_true(kernel > 0);

	ls_sources_init(&s);
	ls_notebooks_init(&n);
	fa = ls_notebooks__cell(&n, &s, kernel, 1, 0, name_of("a = 1", name, sizeof(name)));
	fb = ls_notebooks__cell(&n, &s, kernel, 1, 0, name_of("b = 2\n", name, sizeof(name)));
	frun = ls_notebooks__cell(&n, &s, kernel, 1, 0,
				  name_of("%run child.ipynb", name, sizeof(name)));
	fc = ls_notebooks__cell(&n, &s, kernel, 1, 0, name_of("c = 3", name, sizeof(name)));
	fz = ls_notebooks__cell(&n, &s, kernel, 1, 0, name_of("zzz", name, sizeof(name)));
	assert_true(fa > 0 && fb > 0 && frun > 0 && fc > 0 && fz > 0);
	/* not a cell name: an ordinary source */
	assert_true(ls_notebooks__cell(&n, &s, kernel, 1, 0, path) > 0);

	assert_int_equal(n.ncells, 5);
	/* files are opened with the kernel's rights (ls_asuser): as root, as CI runs these */
	for (int i = 0; i < 4; i++)
		assert_non_null(n.cells[i].how);
	assert_string_equal(n.cells[0].how, "notebook");
	assert_int_equal(n.cells[0].number, 1);
	assert_string_equal(s.srcs[s.files[fa].source_id].text, "a = 1");
	/* the history keeps it without the newline the kernel hashed */
	assert_string_equal(n.cells[1].how, "history");
	assert_int_equal(n.cells[1].number, 7);
	assert_string_equal(s.srcs[s.files[fb].source_id].text, "b = 2\n");
	assert_string_equal(n.cells[2].how, "notebook");
	assert_int_equal(n.cells[2].number, 2);
	/* the %run child: a notebook of its own, with its parent's line */
	assert_string_equal(n.cells[3].how, "notebook");
	assert_int_equal(n.nbs[n.cells[3].notebook].parent, 1);
	assert_int_equal(n.nbs[n.cells[3].notebook].parent_file, frun);
	assert_int_equal(n.nbs[n.cells[3].notebook].parent_line, 1);
	assert_non_null(strstr(n.nbs[n.cells[3].notebook].path, "/child.ipynb"));
	assert_string_equal(n.nbs[0].path, path);
	/* found nowhere: marked, tried again, then marked for good */
	assert_null(n.cells[4].how);
	assert_int_equal(s.files[fz].source_id, -1);
	assert_non_null(strstr(s.files[fz].unavailable, "text not found yet"));
	for (int i = 0; i < LS_NBCELL_TRIES; i++)
		assert_int_equal(ls_notebooks__retry(&n, &s), 0);
	assert_null(n.cells[4].how);
	assert_non_null(strstr(s.files[fz].unavailable, "no text found that hashes to its name"));
	assert_non_null(strstr(s.files[fz].unavailable, "not a code cell of"));

	ls_notebooks_release(&n);
	ls_sources_release(&s);
	kill(kernel, SIGKILL);
	kill(launcher, SIGKILL);
	waitpid(launcher, NULL, 0);
	snprintf(script, sizeof(script), "rm -rf %s", dir);
	assert_int_equal(system(script), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cells),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
