// SPDX-License-Identifier: MIT
/*
 * NVML through dlopen, against the fake libnvidia-ml.so.1 built in tests/gpu/fake (no driver
 * here), plus the failure paths: no library, a driver that refuses.
 */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "nvml.h"

static char fake[PATH_MAX];

static int setup(void **state)
{
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	if (n <= 0)
		return -1;
	exe[n] = 0;
	snprintf(fake, sizeof(fake), "%s/fake/libnvidia-ml.so.1", dirname(exe));
	setenv("LINESCOPE_NVML_LIB", fake, 1);
	unsetenv("FAKE_NVML_INIT_ERR");
	unsetenv("FAKE_NVML_HIDE_PID");
	unsetenv("FAKE_CUDA_DEVICES");
	return 0;
}

static void test_devices_and_driver(void **state)
{
	struct ls_nvml *n = NULL;
	struct ls_nvml_dev d;
	char why[128] = "", drv[32];
	__u32 cuda = 0;

	setenv("FAKE_CUDA_DEVICES", "2", 1);
	assert_int_equal(ls_nvml__open(&n, why, sizeof(why)), 0);
	assert_int_equal(ls_nvml__count(n), 2);
	assert_int_equal(ls_nvml__device(n, 1, &d), 0);
	assert_int_equal(d.index, 1);
	assert_string_equal(d.name, "NVIDIA H200 (fake)");
	assert_string_equal(d.uuid, "GPU-11121314-1516-1718-191a-1b1c1d1e1f20");
	assert_int_equal(d.mem_total, 143771533312ull);
	assert_int_equal(d.mig, 0);
	assert_int_equal(ls_nvml__device(n, 5, &d), -ENODEV);
	ls_nvml__driver(n, drv, sizeof(drv), &cuda);
	assert_string_equal(drv, "580.95.05");
	assert_int_equal(cuda, 13000);
	ls_nvml__close(n);
	unsetenv("FAKE_CUDA_DEVICES");
}

static void test_process_memory(void **state)
{
	struct ls_nvml *n = NULL;
	char why[128] = "";
	__u64 used = 0;

	setenv("FAKE_NVML_BASE_MB", "300", 1);
	assert_int_equal(ls_nvml__open(&n, why, sizeof(why)), 0);
	/* listed among other processes: matched by pid */
	assert_int_equal(ls_nvml__proc_used(n, 0, (__u32)getpid(), &used), 1);
	assert_int_equal(used, 300ull << 20);
	assert_int_equal(ls_nvml__proc_used(n, 0, 1, &used), 1);
	assert_int_equal(used, 1ull << 30);
	assert_int_equal(ls_nvml__proc_used(n, 0, 999999, &used), 0);
	/* a pid namespace: NVML lists host pids only */
	setenv("FAKE_NVML_HIDE_PID", "1", 1);
	assert_int_equal(ls_nvml__proc_used(n, 0, (__u32)getpid(), &used), 0);
	unsetenv("FAKE_NVML_HIDE_PID");
	ls_nvml__close(n);
	unsetenv("FAKE_NVML_BASE_MB");
}

static void test_no_library(void **state)
{
	struct ls_nvml *n = (struct ls_nvml *)0x1;
	char why[128] = "";

	setenv("LINESCOPE_NVML_LIB", "/nonexistent/libnvidia-ml.so.1", 1);
	assert_int_equal(ls_nvml__open(&n, why, sizeof(why)), -ENOENT);
	assert_ptr_equal(n, (struct ls_nvml *)0x1);
	assert_non_null(strstr(why, "not found"));
	setenv("LINESCOPE_NVML_LIB", fake, 1);
}

static void test_driver_refuses(void **state)
{
	struct ls_nvml *n = (struct ls_nvml *)0x1;
	char why[128] = "";

	setenv("FAKE_NVML_INIT_ERR", "9", 1);
	assert_int_equal(ls_nvml__open(&n, why, sizeof(why)), -ENODEV);
	assert_ptr_equal(n, (struct ls_nvml *)0x1);
	assert_non_null(strstr(why, "Driver Not Loaded"));
	unsetenv("FAKE_NVML_INIT_ERR");
	ls_nvml__close(NULL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_devices_and_driver),
		cmocka_unit_test(test_process_memory),
		cmocka_unit_test(test_no_library),
		cmocka_unit_test(test_driver_refuses),
	};

	return cmocka_run_group_tests(tests, setup, NULL);
}
