// SPDX-License-Identifier: MIT
/* The resolution table of the kernel's added-up stacks: by (hash, pid), replaced, never mixed. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include "kstacks.h"

static void test_set_get(void **state)
{
	struct ls_kstacks t;
	const struct ls_kstack *e;

	ls_kstacks_init(&t);
	for (uint32_t pid = 1; pid <= 2000; pid++) {
		/* the same hash in every process: each pid keeps its own */
		struct ls_kstack a = {.hash = 77, .pid = pid, .proc = pid, .stack = pid * 10};

		assert_int_equal(ls_kstacks__set(&t, &a), 0);
	}
	for (uint32_t pid = 1; pid <= 2000; pid++) {
		e = ls_kstacks__get(&t, 77, pid);
		assert_non_null(e);
		assert_int_equal(e->stack, pid * 10);
	}
	assert_null(ls_kstacks__get(&t, 78, 1));
	assert_null(ls_kstacks__get(&t, 77, 2001));
	ls_kstacks_release(&t);
}

static void test_replace(void **state)
{
	struct ls_kstacks t;
	struct ls_kstack a = {.hash = 5, .pid = 9, .stack = 1, .flags = 0}, b = a;

	ls_kstacks_init(&t);
	assert_int_equal(ls_kstacks__set(&t, &a), 0);
	/* a better resolution of the same stack (its code record came late) replaces the first */
	b.stack = 2;
	assert_int_equal(ls_kstacks__set(&t, &b), 0);
	assert_int_equal(t.n, 1);
	assert_int_equal(ls_kstacks__get(&t, 5, 9)->stack, 2);
	ls_kstacks_release(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_set_get),
		cmocka_unit_test(test_replace),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
