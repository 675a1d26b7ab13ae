// SPDX-License-Identifier: MIT
/* Jupyter server sessions: the notebook path of a kernel id, from well- and ill-formed replies. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "jpserver.h"

static char *path_of(const char *reply, const char *id)
{
	return ls_jpserver__session_path(reply, strlen(reply), id);
}

static void test_sessions(void **state)
{
	const char *reply =
		"[{\"id\": \"s1\", \"path\": \"a.ipynb\", \"type\": \"notebook\","
		" \"kernel\": {\"id\": \"k1\", \"name\": \"python3\"}, \"notebook\": {\"path\": \"a.ipynb\"}},"
		" {\"id\": \"s2\", \"path\": \"old/name.ipynb\", \"kernel\": {\"id\": \"k2\"},"
		" \"notebook\": {\"path\": \"sub/b.ipynb\"}},"
		" {\"id\": \"s3\", \"path\": \"c.ipynb\", \"kernel\": {\"id\": \"k3\"}}]";
	char *p;

	p = path_of(reply, "k1");
	assert_string_equal(p, "a.ipynb");
	free(p);
	p = path_of(reply, "k2"); /* notebook.path (notebook 6) before path */
	assert_string_equal(p, "sub/b.ipynb");
	free(p);
	p = path_of(reply, "k3");
	assert_string_equal(p, "c.ipynb");
	free(p);
	assert_null(path_of(reply, "k4"));
}

static void test_refused(void **state)
{
	static const char *const bad[] = {
		"",
		"{",
		"{\"kernel\": {\"id\": \"k1\"}, \"path\": \"a\"}",
		"[1, \"x\", null]",
		"[{\"kernel\": \"k1\", \"path\": \"a\"}]",
		"[{\"kernel\": {\"id\": 1}, \"path\": \"a\"}]",
		"[{\"kernel\": {\"id\": \"k1\"}, \"path\": 7}]",
		"[{\"kernel\": {\"id\": \"k1\"}, \"path\": \"\"}]",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_null(path_of(bad[i], "k1"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sessions),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
