// SPDX-License-Identifier: MIT
/* Kernel-name interning of the injection library. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "kname.h"
#include "gpu_records.h"

static void test_same_name_same_id(void **state)
{
	struct ls_kname *t;
	struct ls_kname_entry *e = NULL;
	char a[] = "gemm_kernel", b[] = "gemm_kernel", c[] = "softmax_kernel";
	__u32 ia, ib, ic;

	assert_int_equal(ls_kname__new(&t), 0);
	ia = ls_kname__intern(t, a, &e);
	assert_int_equal(ia, 1);
	assert_string_equal(e->name, "gemm_kernel");
	assert_int_equal(e->len, 11);
	assert_int_equal(e->flags, 0);
	assert_int_equal(e->sent_epoch, 0);
	/* CUPTI's shared pointer again, then a different pointer with the same text */
	assert_int_equal(ls_kname__intern(t, a, &e), ia);
	ib = ls_kname__intern(t, b, &e);
	assert_int_equal(ib, ia);
	ic = ls_kname__intern(t, c, &e);
	assert_int_equal(ic, 2);
	assert_string_equal(e->name, "softmax_kernel");
	assert_int_equal(ls_kname__count(t), 2);
	assert_int_equal(ls_kname__intern(t, NULL, &e), 0);
	ls_kname__free(t);
	ls_kname__free(NULL);
}

static void test_flags(void **state)
{
	struct ls_kname *t;
	struct ls_kname_entry *e = NULL;
	char *longname = malloc(LS_GPU_NAME_MAX + 100);

	memset(longname, 'x', LS_GPU_NAME_MAX + 99);
	longname[LS_GPU_NAME_MAX + 99] = 0;
	assert_int_equal(ls_kname__new(&t), 0);
	assert_int_not_equal(ls_kname__intern(t, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", &e), 0);
	assert_int_equal(e->flags, LS_GPU_AF_NCCL);
	assert_int_not_equal(ls_kname__intern(t, longname, &e), 0);
	assert_int_equal(e->flags, LS_GPU_AF_NAME_CUT);
	assert_int_equal(e->len, LS_GPU_NAME_MAX);
	assert_int_equal(strlen(e->name), LS_GPU_NAME_MAX);
	free(longname);
	ls_kname__free(t);
}

/* Many names: the tables grow, pointer-cache slots are shared by different names. */
static void test_many(void **state)
{
	enum { N = 5000 };
	struct ls_kname *t;
	struct ls_kname_entry *e = NULL;
	char(*names)[32] = calloc(N, 32);
	__u32 i, id;

	assert_int_equal(ls_kname__new(&t), 0);
	for (i = 0; i < N; i++) {
		snprintf(names[i], 32, "kernel_%u", i);
		assert_int_equal(ls_kname__intern(t, names[i], &e), i + 1);
	}
	for (i = 0; i < N; i++) {
		char copy[32];

		snprintf(copy, sizeof(copy), "kernel_%u", i);
		id = ls_kname__intern(t, (i % 2) ? copy : names[i], &e);
		assert_int_equal(id, i + 1);
		assert_string_equal(e->name, names[i]);
	}
	assert_int_equal(ls_kname__count(t), N);
	free(names);
	ls_kname__free(t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_same_name_same_id),
		cmocka_unit_test(test_flags),
		cmocka_unit_test(test_many),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
