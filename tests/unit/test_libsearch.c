// SPDX-License-Identifier: MIT
/* ld.so's search for a needed library: against the libc this very process was given by ld.so. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libsearch.h"

/* the libc.so.6 ld.so mapped into this process (it needs it, as /bin/sh does), resolved */
static void our_libc(char *out)
{
	char line[PATH_MAX + 128], *p;
	FILE *f = fopen("/proc/self/maps", "r");

	assert_non_null(f);
	out[0] = 0;
	while (fgets(line, sizeof(line), f))
		if ((p = strchr(line, '/')) && strstr(p, "/libc.so.6")) {
			p[strcspn(p, "\n")] = 0;
			assert_non_null(realpath(p, out));
			break;
		}
	fclose(f);
	assert_true(out[0]);
}

static void test_system(void **state)
{
	char want[PATH_MAX], got[PATH_MAX];

	(void)state;
	our_libc(want);
	/* no path of its own: the cache (or the default directories) names what ld.so mapped */
	assert_int_equal(ls_libsearch__find("/bin/sh", "libc.so", NULL, got, sizeof(got)), 0);
	assert_string_equal(got, want);
	assert_int_equal(ls_libsearch__find("/bin/sh", "libpython", NULL, got, sizeof(got)),
			 -ENOENT);
	assert_int_equal(ls_libsearch__find("/no/such/exe", "libc.so", NULL, got, sizeof(got)),
			 -ENOENT);
	assert_int_equal(ls_libsearch__find("/bin/sh", "libc.so", NULL, got, 4), -ENAMETOOLONG);
}

static void test_library_path(void **state)
{
	char dir[] = "/tmp/ls-libsearch-XXXXXX", lib[PATH_MAX], got[PATH_MAX], want[PATH_MAX];
	char llp[PATH_MAX * 2], origin[PATH_MAX];
	int at;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(lib, sizeof(lib), "%s/libc.so.6", dir);
	f = fopen(lib, "w");
	assert_non_null(f);
	fclose(f);
	/* LD_LIBRARY_PATH comes before the cache; an empty entry, $PLATFORM and a missing
	 * directory are passed over */
	snprintf(llp, sizeof(llp), ":$PLATFORM:/no/such/dir:%s", dir);
	assert_int_equal(ls_libsearch__find("/bin/sh", "libc.so", llp, got, sizeof(got)), 0);
	assert_non_null(realpath(lib, want));
	assert_string_equal(got, want);
	/* $ORIGIN is the executable's directory, resolved: up from there to libc's */
	our_libc(want);
	assert_non_null(realpath("/bin/sh", origin));
	*strrchr(origin, '/') = 0;
	at = snprintf(llp, sizeof(llp), "${ORIGIN}/../no-such:$ORIGIN");
	for (const char *c = origin; (c = strchr(c, '/')); c++)
		at += snprintf(llp + at, sizeof(llp) - at, "/..");
	snprintf(llp + at, sizeof(llp) - at, "%.*s", (int)(strrchr(want, '/') - want), want);
	assert_int_equal(ls_libsearch__find("/bin/sh", "libc.so", llp, got, sizeof(got)), 0);
	assert_string_equal(got, want);
	unlink(lib);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_system),
		cmocka_unit_test(test_library_path),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
