// SPDX-License-Identifier: MIT
/*
 * Text output (report/text.c) of a small profile built by hand: the header's counts, the lines
 * hottest first with their shares and times, and hostile strings written escaped: no control
 * character or invalid UTF-8 reaches the terminal.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"
#include "model.h"
#include "text.h"
#include "../lib/hostile_profile.h"
#include "../lib/tmp_profile.h"

static char path[64];

static int setup(void **state)
{
	ls_test_profile_path(path, "text");
	ls_test_profile_remove(path);
	return ls_test_hostile_profile(path);
}

static int teardown(void **state)
{
	ls_test_profile_remove(path);
	return 0;
}

static char *render(int top)
{
	struct ls_model *m = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(ls_model__load(path, &m), 0);
	assert_int_equal(ls_text__write(f, m, top), 0);
	assert_int_equal(fclose(f), 0);
	ls_model__free(m);
	assert_non_null(buf);
	assert_int_equal(strlen(buf), len);
	return buf;
}

/* Every byte printable or a newline, and the whole well-formed UTF-8. */
static void assert_clean(const char *s)
{
	size_t n = strlen(s);

	for (size_t i = 0; i < n;) {
		int k = ls_utf8_seq((const unsigned char *)s + i, n - i);

		assert_true(k > 0);
		if (k == 1)
			assert_true(s[i] == '\n' || (s[i] >= 0x20 && s[i] != 0x7f));
		i += k;
	}
}

static void test_lines(void **state)
{
	char *out = render(0), *l1, *l2;

	assert_clean(out);
	assert_non_null(strstr(out, "# Status: Success"));
	assert_non_null(strstr(out, "40 samples"));
	/* the function does not start at line 1 of the text: the note names it, escaped */
	assert_non_null(strstr(out, "# Stale source: /src/\"</script>\\x01\\xff.py: "));
	assert_non_null(strstr(out, "f\"</script>\\x7f\\xfe is not defined at line 1"));
	/* the command line, escaped */
	assert_non_null(strstr(out, "python3 \"a\\b</script>\\x1b[31m\\xff"));
	/* the hotter line first: 75% of the time, 30 samples, 0.030 s */
	/* the file's name: after the last slash, the one in "</script>" */
	l1 = strstr(out, "  script>\\x01\\xff.py:1 [100] ");
	l2 = strstr(out, "  script>\\x01\\xff.py:2 [100] ");
	assert_non_null(l1);
	assert_non_null(l2);
	assert_true(l1 < l2);
	assert_non_null(strstr(out, "  75.00%        30     0.030     0.030  "));
	assert_non_null(strstr(out, "  25.00%        10     0.010     0.010  "));
	assert_non_null(strstr(out, "f\"</script>\\x7f\\xfe"));
	assert_non_null(strstr(out, "x = \"</script>\"\n"));
	assert_non_null(strstr(out, "print(x)\n"));
	free(out);

	/* top 1: only the hotter line */
	out = render(1);
	assert_non_null(strstr(out, ".py:1 [100]"));
	assert_null(strstr(out, ".py:2 [100]"));
	free(out);
}

static void test_put_clean(void **state)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	ls_text__put_clean(f, "a\tb\x1b\xc3", -1);
	fputc('|', f);
	ls_text__put_clean(f, "abc", 5); /* padded */
	fputc('|', f);
	ls_text__put_clean(f, "abcdef", 3); /* cut */
	fputc('|', f);
	ls_text__put_clean(f, NULL, 2);
	assert_int_equal(fclose(f), 0);
	assert_string_equal(buf, "a\\x09b\\x1b\\xc3|abc  |abc|  ");
	free(buf);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_lines, setup, teardown),
		cmocka_unit_test(test_put_clean),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
