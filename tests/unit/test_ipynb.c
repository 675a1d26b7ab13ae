// SPDX-License-Identifier: MIT
/* .ipynb reader: code cells in order, both source forms, and every malformed input refused. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include "ipynb.h"

static int parse(const char *text, struct ls_ipynb *nb, char *why)
{
	return ls_ipynb__parse(text, strlen(text), nb, why, 256);
}

static void test_cells(void **state)
{
	struct ls_ipynb nb;
	char why[256] = "";

	assert_int_equal(
		parse("{\"nbformat\": 4, \"nbformat_minor\": 5, \"metadata\": {}, \"cells\": ["
		      "{\"cell_type\": \"markdown\", \"source\": \"# t\"},"
		      "{\"cell_type\": \"code\", \"id\": \"a1-B_2\", \"source\": [\"a = 1\\n\", \"b = 2\"]},"
		      "{\"cell_type\": \"code\", \"source\": [1, 2]},"
		      "{\"cell_type\": \"raw\", \"source\": \"x\"},"
		      "{\"cell_type\": \"code\", \"id\": \"no spaces allowed\", \"source\": \"%time c = 3\"},"
		      "{\"cell_type\": \"code\", \"source\": []}]}",
		      &nb, why),
		0);
	assert_int_equal(nb.n, 3);
	assert_string_equal(nb.cells[0].text, "a = 1\nb = 2");
	assert_int_equal(nb.cells[0].len, 11);
	assert_int_equal(nb.cells[0].index, 1);
	/* nbformat 4.5's id, kept only as nbformat allows it */
	assert_string_equal(nb.cells[0].id, "a1-B_2");
	assert_null(nb.cells[1].id);
	/* the unreadable cell keeps its place in the numbering */
	assert_string_equal(nb.cells[1].text, "%time c = 3");
	assert_int_equal(nb.cells[1].index, 3);
	assert_string_equal(nb.cells[2].text, "");
	assert_int_equal(nb.cells[2].index, 4);
	ls_ipynb_release(&nb);
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"{not json",
		"[1, 2]",
		"{\"nbformat\": 3, \"worksheets\": []}",
		"{\"nbformat\": 4}",
		"{\"nbformat\": 4, \"cells\": {}}",
		"{\"nbformat\": 4, \"cells\": [], \"cells\": []}",
	};
	struct ls_ipynb nb;
	char why[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = 0;
		assert_true(parse(bad[i], &nb, why) < 0);
		assert_true(why[0] != 0);
		assert_int_equal(nb.n, 0);
	}
}

static void test_too_many_cells(void **state)
{
	size_t n = LS_IPYNB_MAX_CELLS + 1, cap = n * 4 + 64, at = 0;
	char *text = malloc(cap), why[256] = "";
	struct ls_ipynb nb;

	assert_non_null(text);
	at += sprintf(text, "{\"nbformat\": 4, \"cells\": [");
	for (size_t i = 0; i < n; i++)
		at += sprintf(text + at, "%s{}", i ? "," : "");
	sprintf(text + at, "]}");
	assert_int_equal(ls_ipynb__parse(text, strlen(text), &nb, why, sizeof(why)), -EFBIG);
	assert_non_null(strstr(why, "more than"));
	free(text);
}

static void write_cells(const char *path, int n)
{
	FILE *f = fopen(path, "w"); /* in place, as Jupyter and nbformat.write() save */

	assert_non_null(f);
	fprintf(f, "{\"nbformat\": 4, \"cells\": [");
	for (int i = 0; i < n; i++)
		fprintf(f, "%s{\"cell_type\": \"code\", \"source\": \"x = %d\"}", i ? "," : "", i);
	fprintf(f, "]}");
	assert_int_equal(fclose(f), 0);
}

/* A kernel that has gone is read through the descriptor it opened while it ran */
static void test_kept(void **state)
{
	char dir[] = "/tmp/ls-ipynb-XXXXXX", path[64], why[256] = "";
	int kept = -1, none = -1, status;
	struct ls_ipynb nb;
	pid_t child;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/k.ipynb", dir);
	write_cells(path, 1);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		pause();
		_exit(0);
	}
	assert_int_equal(ls_ipynb__load(child, path, &kept, &nb, why, sizeof(why)), 0);
	assert_int_equal(nb.n, 1);
	ls_ipynb_release(&nb);
	assert_true(kept >= 0);
	write_cells(path, 3); /* saved again, after the kernel's last read */
	kill(child, SIGKILL);
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_int_equal(ls_ipynb__load(child, path, &none, &nb, why, sizeof(why)), -ESRCH);
	assert_int_equal(ls_ipynb__load(child, path, NULL, &nb, why, sizeof(why)), -ESRCH);
	assert_int_equal(ls_ipynb__load(child, path, &kept, &nb, why, sizeof(why)), 0);
	assert_int_equal(nb.n, 3);
	assert_string_equal(nb.cells[2].text, "x = 2");
	ls_ipynb_release(&nb);
	close(kept);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cells),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_too_many_cells),
		cmocka_unit_test(test_kept),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
