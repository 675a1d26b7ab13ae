// SPDX-License-Identifier: MIT
/*
 * The location-table decoder against the interpreter itself: every code object of the standard
 * library of each test interpreter, every code unit, compared with co_positions().
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "linetable.h"

/* chroot: run the interpreter inside this root (the dump goes through its /tmp); or NULL */
static void check_interpreter_in(const char *root, const char *python)
{
	char path[] = "/tmp/ls-positions-XXXXXX", cmd[1024];
	long codes = 0, units = 0, diffs = 0, nearest_bad = 0;
	int fd = mkstemp(path);
	FILE *f;

	assert_true(fd >= 0);
	close(fd);
	if (root) {
		/* the root's /tmp holds the script and the dump while its interpreter runs */
		snprintf(
			cmd, sizeof(cmd),
			"cp tests/fixtures/dump_positions.py %s/tmp/ls-dump.py && "
			"chroot %s %s /tmp/ls-dump.py /tmp/ls-dump.bin && mv %s/tmp/ls-dump.bin %s",
			root, root, python, root, path);
	} else {
		snprintf(cmd, sizeof(cmd), "%s tests/fixtures/dump_positions.py %s", python, path);
	}
	assert_int_equal(system(cmd), 0);
	f = fopen(path, "rb");
	assert_non_null(f);
	for (;;) {
		uint32_t hdr[2], n;
		uint8_t *tab;
		int32_t *want;
		int *got, covered;

		assert_int_equal(fread(hdr, 4, 1, f), 1);
		if (hdr[0] == 0xffffffff)
			break;
		assert_int_equal(fread(&hdr[1], 4, 1, f), 1);
		tab = malloc(hdr[1] + 1);
		assert_non_null(tab);
		assert_int_equal(fread(tab, 1, hdr[1], f), hdr[1]);
		assert_int_equal(fread(&n, 4, 1, f), 1);
		want = malloc(n * 4 + 4);
		got = malloc(n * sizeof(int) + 4);
		assert_true(want && got);
		assert_int_equal(fread(want, 4, n, f), n);

		covered = ls_linetable__decode(tab, hdr[1], hdr[0], got, n);
		assert_int_equal(covered, n);
		for (uint32_t u = 0; u < n; u++) {
			int nearest = 0, line = got[u];

			/* the per-unit lookup is linear: check it on a spread of units */
			if (n < 256 || u % 7 == 0)
				line = ls_linetable__line(tab, hdr[1], hdr[0], u, &nearest);

			if (got[u] != want[u] || line != want[u])
				diffs++;
			if (nearest < 0)
				nearest_bad++;
		}
		units += n;
		codes++;
		free(tab);
		free(want);
		free(got);
	}
	fclose(f);
	unlink(path);
	fprintf(stderr, "%s: %ld code objects, %ld units, %ld differences\n", python, codes, units,
		diffs);
	assert_true(codes > 5000);
	assert_int_equal(diffs, 0);
	assert_int_equal(nearest_bad, 0);
}

static void check_interpreter(const char *python)
{
	check_interpreter_in(NULL, python);
}

/* Debian sid's 3.13-3.15 (tests/fixtures/pyroot.sh; `make test-unit` builds it first). */
static const char *sid_root(void)
{
	const char *r = getenv("LS_SID_ROOT");

	return r ? r : "/var/cache/linescope/sid-root";
}

static void test_stdlib_pyenv_312(void **state)
{
	check_interpreter("/root/.pyenv/versions/3.12.1/bin/python3.12");
}

static void test_stdlib_pyenv_313(void **state)
{
	check_interpreter("/root/.pyenv/versions/3.13.0/bin/python3.13");
}

static void test_stdlib_sid_313(void **state)
{
	check_interpreter_in(sid_root(), "/usr/bin/python3.13");
}

static void test_stdlib_sid_314(void **state)
{
	check_interpreter_in(sid_root(), "/usr/bin/python3.14");
}

static void test_stdlib_sid_315(void **state)
{
	check_interpreter_in(sid_root(), "/usr/bin/python3.15");
}

static void test_stdlib_debian_311(void **state)
{
	check_interpreter("/usr/bin/python3.11");
}

static void test_stdlib_pyenv_311(void **state)
{
	check_interpreter("/root/.pyenv/versions/3.11.7/bin/python3.11");
}

static void test_none_entry_keeps_running_line(void **state)
{
	/*
	 * firstlineno 10; entry 1: code 13 (no column) delta +2, 1 unit -> line 12;
	 * entry 2: code 15 (none), 2 units; entry 3: short form, 1 unit -> still line 12.
	 */
	const uint8_t tab[] = {0x80 | (13 << 3) | 0, 4, 0x80 | (15 << 3) | 1, 0x80 | (0 << 3) | 0,
			       5};
	int lines[4], nearest;

	assert_int_equal(ls_linetable__decode(tab, sizeof(tab), 10, lines, 4), 4);
	assert_int_equal(lines[0], 12);
	assert_int_equal(lines[1], -1);
	assert_int_equal(lines[2], -1);
	assert_int_equal(lines[3], 12);
	assert_int_equal(ls_linetable__line(tab, sizeof(tab), 10, 1, &nearest), -1);
	assert_int_equal(nearest, 12);
	assert_int_equal(ls_linetable__line(tab, sizeof(tab), 10, -1, &nearest), 10);
	assert_int_equal(ls_linetable__line(tab, sizeof(tab), 10, 4, &nearest), -ERANGE);
}

static void test_entry_end_is_exclusive(void **state)
{
	/* two one-line entries of 2 units each: line 5 then line 6 (code 11 = delta +1) */
	const uint8_t tab[] = {0x80 | (10 << 3) | 1, 0, 1, 0x80 | (11 << 3) | 1, 0, 1};

	assert_int_equal(ls_linetable__line(tab, sizeof(tab), 5, 1, NULL), 5);
	assert_int_equal(ls_linetable__line(tab, sizeof(tab), 5, 2, NULL), 6);
}

static void test_malformed(void **state)
{
	const uint8_t no_high_bit[] = {0x10};
	const uint8_t truncated[] = {0x80 | (14 << 3), 0x41};
	int lines[8];

	assert_int_equal(ls_linetable__decode(no_high_bit, 1, 1, lines, 8), -EINVAL);
	assert_int_equal(ls_linetable__decode(truncated, 2, 1, lines, 8), -EINVAL);
	assert_int_equal(ls_linetable__decode(NULL, 0, 1, lines, 8), 0);
}

/* Line deltas from a target's memory that leave int's range are a malformed table (was UB). */
static void test_line_overflow(void **state)
{
	/* no-column entries (code 13), each +2^30 (svarint 2^31 in six 6-bit chunks) */
	const uint8_t big[] = {0x80 | (13 << 3), 0x40 | 0, 0x40, 0x40, 0x40, 0x40, 0x02,
			       0x80 | (13 << 3), 0x40 | 0, 0x40, 0x40, 0x40, 0x40, 0x02};
	int lines[8];

	assert_int_equal(ls_linetable__decode(big, 7, 1, lines, 8), 1);
	assert_int_equal(lines[0], 1 + (1 << 30));
	assert_int_equal(ls_linetable__decode(big, sizeof(big), 1 << 30, lines, 8), -EINVAL);
	assert_int_equal(ls_linetable__line(big, sizeof(big), 1 << 30, 1, NULL), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_none_entry_keeps_running_line),
		cmocka_unit_test(test_entry_end_is_exclusive),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_line_overflow),
		cmocka_unit_test(test_stdlib_debian_311),
		cmocka_unit_test(test_stdlib_pyenv_311),
		cmocka_unit_test(test_stdlib_pyenv_312),
		cmocka_unit_test(test_stdlib_pyenv_313),
		cmocka_unit_test(test_stdlib_sid_313),
		cmocka_unit_test(test_stdlib_sid_314),
		cmocka_unit_test(test_stdlib_sid_315),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
