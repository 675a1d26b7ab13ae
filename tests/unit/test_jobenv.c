// SPDX-License-Identifier: MIT
/* A process's rank in its job from its environment (userspace/jobenv.c), hostile values too */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <string.h>
#include "jobenv.h"

#define ENV(s) s, sizeof(s) - 1 /* a literal with its NULs, without the final one */

static void test_torchrun(void **state)
{
	struct ls_jobenv j;

	assert_int_equal(ls_jobenv__parse(ENV("PATH=/bin\0RANK=3\0LOCAL_RANK=1\0WORLD_SIZE=8\0"
					      "MASTER_ADDR=10.0.0.1\0MASTER_PORT=29500"),
					  &j),
			 1);
	assert_int_equal(j.rank, 3);
	assert_int_equal(j.local_rank, 1);
	assert_int_equal(j.world_size, 8);
	assert_string_equal(j.master_addr, "10.0.0.1");
}

static void test_none(void **state)
{
	struct ls_jobenv j;

	/* names that only end or start like ours are other variables */
	assert_int_equal(ls_jobenv__parse(ENV("NODE_RANK=2\0RANKS=1\0XWORLD_SIZE=4\0HOME=/"), &j),
			 0);
	assert_int_equal(j.rank, -1);
	assert_int_equal(j.local_rank, -1);
	assert_int_equal(j.world_size, -1);
	assert_string_equal(j.master_addr, "");
	assert_int_equal(ls_jobenv__parse("", 0, &j), 0);
}

static void test_hostile(void **state)
{
	struct ls_jobenv j;
	char big[600];

	/* not plain decimal numbers, too large, a size of 0, a rank past the size */
	ls_jobenv__parse(ENV("RANK=-1\0LOCAL_RANK=1e3\0WORLD_SIZE=0"), &j);
	assert_int_equal(j.rank, -1);
	assert_int_equal(j.local_rank, -1);
	assert_int_equal(j.world_size, -1);
	ls_jobenv__parse(ENV("RANK=99999999999\0LOCAL_RANK= 1\0WORLD_SIZE=16777216"), &j);
	assert_int_equal(j.rank, -1);
	assert_int_equal(j.local_rank, -1);
	assert_int_equal(j.world_size, -1);
	ls_jobenv__parse(ENV("RANK=4\0WORLD_SIZE=4"), &j);
	assert_int_equal(j.rank, -1);
	assert_int_equal(j.world_size, 4);
	/* the last one wins, as getenv() would see it; an unended last string still counts */
	ls_jobenv__parse(ENV("RANK=1\0RANK=2"), &j);
	assert_int_equal(j.rank, 2);
	/* a long address is cut, never overflows */
	memcpy(big, "MASTER_ADDR=", 12);
	memset(big + 12, 'a', sizeof(big) - 12);
	ls_jobenv__parse(big, sizeof(big), &j);
	assert_int_equal(strlen(j.master_addr), sizeof(j.master_addr) - 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_torchrun),
		cmocka_unit_test(test_none),
		cmocka_unit_test(test_hostile),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
