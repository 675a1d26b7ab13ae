// SPDX-License-Identifier: MIT
/* The u64 hash map against a reference array under random inserts, updates and deletes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdlib.h>
#include <string.h>
#include "hashmap.h"

#define N 20000

static void test_random_ops(void **state)
{
	static uint64_t ref[N];
	static bool present[N];
	struct ls_hashmap m;
	size_t count = 0, it = 0;
	uint64_t k, v;

	ls_hashmap_init(&m);
	srand(42);
	for (int step = 0; step < 200000; step++) {
		int i = rand() % N, op = rand() % 3;
		uint64_t key = (uint64_t)i * 0x100000001ULL; /* collide in the low bits */

		if (op < 2) {
			ref[i] = rand();
			if (!present[i])
				count++;
			present[i] = true;
			assert_int_equal(ls_hashmap__set(&m, key, ref[i]), 0);
		} else {
			assert_int_equal(ls_hashmap__del(&m, key), present[i]);
			if (present[i])
				count--;
			present[i] = false;
		}
	}
	assert_int_equal(m.n, count);
	for (int i = 0; i < N; i++) {
		bool got = ls_hashmap__get(&m, (uint64_t)i * 0x100000001ULL, &v);

		assert_int_equal(got, present[i]);
		if (got)
			assert_int_equal(v, ref[i]);
	}
	count = 0;
	while (ls_hashmap__next(&m, &it, &k, &v)) {
		assert_true(present[k / 0x100000001ULL]);
		count++;
	}
	assert_int_equal(count, m.n);
	ls_hashmap_release(&m);
}

static void test_slot(void **state)
{
	struct ls_hashmap m;
	uint64_t *s;

	ls_hashmap_init(&m);
	s = ls_hashmap__slot(&m, 0, 7);
	assert_int_equal(*s, 7);
	*s += 1;
	assert_int_equal(*ls_hashmap__slot(&m, 0, 99), 8);
	assert_false(ls_hashmap__get(&m, 1, NULL));
	ls_hashmap_release(&m);
}

static const char *const names[] = {"a", "b", "c", "d", "e", "f", "g", "h"};

static bool same_name(const void *ctx, uint64_t idx)
{
	return !strcmp(names[idx], ctx);
}

/* Every full key gets its own entry even when all of them share one 64-bit hash. */
static void test_intern_collisions(void **state)
{
	struct ls_hashmap m;
	uint64_t *slot;

	ls_hashmap_init(&m);
	for (int round = 0; round < 3; round++) {
		for (uint64_t i = 0; i < 8; i++) {
			slot = ls_hashmap__intern(&m, 42, same_name, names[i]);
			assert_non_null(slot);
			if (round == 0) {
				assert_int_equal(*slot, LS_HASHMAP_EMPTY);
				*slot = i;
			} else {
				assert_int_equal(*slot, i);
			}
		}
	}
	assert_int_equal(m.n, 8);
	/* a lookup follows the same probes, and adds nothing */
	for (uint64_t i = 0; i < 8; i++) {
		uint64_t idx;

		assert_true(ls_hashmap__find(&m, 42, same_name, names[i], &idx));
		assert_int_equal(idx, i);
	}
	{
		uint64_t idx;

		assert_false(ls_hashmap__find(&m, 42, same_name, "absent", &idx));
		assert_false(ls_hashmap__find(&m, 43, same_name, names[0], &idx));
	}
	assert_int_equal(m.n, 8);
	ls_hashmap_release(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_random_ops),
		cmocka_unit_test(test_slot),
		cmocka_unit_test(test_intern_collisions),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
