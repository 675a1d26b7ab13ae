// SPDX-License-Identifier: MIT
/* IPython cell names: the name parser and murmur2 against ipykernel's own murmur2_x86. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "ipycell.h"

/* values of ipykernel.compiler.murmur2_x86(text, 0xC70F6907) (ipykernel 6.17) */
static const struct {
	const char *text;
	uint32_t hash;
} vectors[] = {
	{"", 3990065800u},
	{"a", 2167009006u},
	{"ab", 2805137849u},
	{"abc", 3350977461u},
	{"abcd", 804720481u},
	{"x = 1", 3427300630u},
	{"print(\"h\xc3\xa9llo \xe2\x9c\x93\")\n", 1781929789u},
	{"import time\nt0 = time.thread_time()", 2701673649u},
};

static void test_murmur2(void **state)
{
	for (size_t i = 0; i < sizeof(vectors) / sizeof(vectors[0]); i++)
		assert_int_equal(ls_ipycell__murmur2(vectors[i].text, strlen(vectors[i].text),
						     LS_IPYCELL_SEED),
				 vectors[i].hash);
}

static void test_verify(void **state)
{
	const char *p = "print(\"h\xc3\xa9llo \xe2\x9c\x93\")";

	/* history keeps "print(...)" without the newline the kernel hashed */
	assert_int_equal(ls_ipycell__verify("x = 1", 5, 3427300630u), 0);
	assert_int_equal(ls_ipycell__verify(p, strlen(p), 1781929789u), 1);
	assert_int_equal(ls_ipycell__verify("x = 2", 5, 3427300630u), -1);
}

static void test_hashes(void **state)
{
	const char *p = "print(\"h\xc3\xa9llo \xe2\x9c\x93\")";
	uint32_t h[LS_IPYCELL_MAX_NL + 1];

	assert_int_equal(ls_ipycell__hashes(p, strlen(p), h), 0);
	assert_int_equal(h[1], 1781929789u);
	assert_int_equal(h[0], ls_ipycell__murmur2(p, strlen(p), LS_IPYCELL_SEED));
	assert_int_equal(ls_ipycell__hashes("", 0, h), 0);
	assert_int_equal(h[0], 3990065800u);
}

static void test_parse(void **state)
{
	uint32_t hash = 0;
	int pid = 0;

	assert_true(ls_ipycell__parse("/tmp/ipykernel_5891/3524181645.py", &pid, &hash));
	assert_int_equal(pid, 5891);
	assert_int_equal(hash, 3524181645u);
	assert_true(ls_ipycell__parse("/var/tmp/x/ipykernel_1/0.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_5891/4294967296.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_5891/12a.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_5891/12.pyc", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_/12.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_0/12.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_12x/12.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/usr/lib/python3/dist-packages/ipykernel_launcher.py", &pid,
				       &hash));
	assert_false(ls_ipycell__parse("ipykernel_1/2.py", &pid, &hash));
	assert_false(ls_ipycell__parse("/tmp/ipykernel_99999999999/2.py", &pid, &hash));
}

/* The IPython shell's names: <ipython-input-N-HASH>, HASH from hashlib.sha1(code)[:12]. */
static void test_input_names(void **state)
{
	/* what IPython 8.5 named these cells (their compiled text, with its newline) */
	static const char def[] = "def f():\n    return sys._getframe().f_code.co_filename\n";
	int n;
	uint64_t h;

	assert_true(ls_ipycell__parse_input("<ipython-input-2-2fc4134e2bdf>", &n, &h));
	assert_int_equal(n, 2);
	assert_int_equal(h, 0x2fc4134e2bdfULL);
	assert_int_equal(ls_ipycell__sha48(def, strlen(def)), 0x2fc4134e2bdfULL);
	/* the history keeps it without its newline: found with one added back */
	assert_int_equal(ls_ipycell__verify_sha48(def, strlen(def) - 1, h), 1);
	assert_int_equal(ls_ipycell__verify_sha48("x = 1", 5, h), -1);
	assert_false(ls_ipycell__parse_input("<ipython-input-2-2fc4134e2bd>", &n, &h));
	assert_false(ls_ipycell__parse_input("<ipython-input-2-2fc4134e2bdfa>", &n, &h));
	assert_false(ls_ipycell__parse_input("<ipython-input-2-2FC4134E2BDF>", &n, &h));
	assert_false(ls_ipycell__parse_input("<ipython-input--2fc4134e2bdf>", &n, &h));
	assert_false(ls_ipycell__parse_input("<ipython-input-99999999999-2fc4134e2bdf>", &n, &h));
	assert_false(ls_ipycell__parse_input("/tmp/<ipython-input-2-2fc4134e2bdf>", &n, &h));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_murmur2),	    cmocka_unit_test(test_verify),
		cmocka_unit_test(test_hashes),	    cmocka_unit_test(test_parse),
		cmocka_unit_test(test_input_names),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
