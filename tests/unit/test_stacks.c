// SPDX-License-Identifier: MIT
/* Stack interning: equal stacks share an id, different ones never do. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include "stacks.h"

static void test_intern(void **state)
{
	struct ls_stacks s;
	uint32_t a[] = {1, 10, 2, 20}, b[] = {1, 10, 2, 21}, c[] = {1, 10};
	int64_t ia, ib, ic;

	ls_stacks_init(&s);
	assert_int_equal(ls_stacks__intern(&s, a, 0, false), 0);
	ia = ls_stacks__intern(&s, a, 2, false);
	ib = ls_stacks__intern(&s, b, 2, false);
	ic = ls_stacks__intern(&s, c, 1, false);
	assert_true(ia > 0 && ib > 0 && ic > 0);
	assert_true(ia != ib && ib != ic && ia != ic);
	assert_int_equal(ls_stacks__intern(&s, a, 2, false), ia);
	/* a truncated stack is a different stack */
	assert_true(ls_stacks__intern(&s, a, 2, true) != ia);
	assert_int_equal(ls_stacks__get(&s, ib)->frames[3], 21);
	ls_stacks_release(&s);
}

static void test_many(void **state)
{
	struct ls_stacks s;
	uint32_t f[8];

	ls_stacks_init(&s);
	for (uint32_t i = 0; i < 50000; i++) {
		for (int k = 0; k < 8; k++)
			f[k] = i * 8 + k;
		assert_int_equal(ls_stacks__intern(&s, f, 4, false), i + 1);
	}
	for (uint32_t i = 0; i < 50000; i += 997) {
		for (int k = 0; k < 8; k++)
			f[k] = i * 8 + k;
		assert_int_equal(ls_stacks__intern(&s, f, 4, false), i + 1);
	}
	ls_stacks_release(&s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_intern),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
