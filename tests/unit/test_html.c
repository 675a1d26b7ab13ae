// SPDX-License-Identifier: MIT
/*
 * The HTML report writer: UTF-8 repair, the JSON-in-script escaping, and the assembled page
 * (one data block that parses back to the input document, an escaped title, working errors).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <jansson.h>
#include "assets.h"
#include "escape.h"
#include "html.h"

#define FFFD "\xef\xbf\xbd"

static char *sanitize(const char *in, size_t len, int want_bad)
{
	size_t out_len = 0;
	char *out = NULL;

	assert_int_equal(ls_utf8_sanitize(in, len, &out, &out_len), want_bad);
	assert_non_null(out);
	assert_int_equal(strlen(out), out_len);
	return out;
}

static void check_sanitize(const char *in, size_t len, const char *want, int want_bad)
{
	char *out = sanitize(in, len, want_bad);

	assert_string_equal(out, want);
	free(out);
}

static void test_utf8_valid_is_unchanged(void **state)
{
	/* ASCII, 2-byte (é), 3-byte (€, U+2028), 4-byte (U+1F600), and the edges of each range */
	static const char text[] = "a\xc3\xa9\xe2\x82\xac\xe2\x80\xa8\xf0\x9f\x98\x80"
				   "\xc2\x80\xdf\xbf\xe0\xa0\x80\xef\xbf\xbf\xf0\x90\x80\x80"
				   "\xf4\x8f\xbf\xbf\xed\x9f\xbf\xee\x80\x80";

	check_sanitize(text, sizeof(text) - 1, text, 0);
	check_sanitize("", 0, "", 0);
}

static void test_utf8_overlong(void **state)
{
	/* "/" as 2, 3 and 4 bytes: C0 and C1 never start a sequence; E0 80 and F0 80 stop at E0/F0
	 */
	check_sanitize("<\xc0\xaf>", 4, "<" FFFD FFFD ">", 2);
	check_sanitize("\xc1\xbf", 2, FFFD FFFD, 2);
	check_sanitize("\xe0\x80\xaf", 3, FFFD FFFD FFFD, 3);
	check_sanitize("\xf0\x80\x80\xaf", 4, FFFD FFFD FFFD FFFD, 4);
}

static void test_utf8_surrogates(void **state)
{
	/* U+D800 and U+DFFF encoded directly (CESU-style) are ill-formed in UTF-8 */
	check_sanitize("x\xed\xa0\x80y", 5, "x" FFFD FFFD FFFD "y", 3);
	check_sanitize("\xed\xbf\xbf", 3, FFFD FFFD FFFD, 3);
}

static void test_utf8_truncated(void **state)
{
	/* A truncated sequence is one maximal subpart: one replacement, whatever follows it */
	check_sanitize("ab\xe2\x82", 4, "ab" FFFD, 1);
	check_sanitize("\xf0\x9f\x98 ok", 6, FFFD " ok", 1);
	check_sanitize("\xc3", 1, FFFD, 1);
	/* a lone continuation byte */
	check_sanitize("\x80", 1, FFFD, 1);
}

static void test_utf8_beyond_max(void **state)
{
	/* U+110000 (F4 90 ...) and the never-valid leads F5..FF */
	check_sanitize("\xf4\x90\x80\x80", 4, FFFD FFFD FFFD FFFD, 4);
	check_sanitize("\xf5\x80", 2, FFFD FFFD, 2);
	check_sanitize("\xff", 1, FFFD, 1);
}

static void test_utf8_embedded_nul(void **state)
{
	/* NUL is valid UTF-8; the result keeps it and its length says so */
	size_t out_len;
	char *out;

	assert_int_equal(ls_utf8_sanitize("a\0b", 3, &out, &out_len), 0);
	assert_int_equal(out_len, 3);
	assert_memory_equal(out, "a\0b", 4);
	free(out);
}

/* Runs fn on a memory stream and returns the text it wrote (caller frees). */
static char *escape_json(const char *json, size_t len)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(ls_escape__json_script(f, json, len), 0);
	fclose(f);
	return buf;
}

static void test_json_script_escapes(void **state)
{
	static const char in[] = "{\"s\":\"</script><img src=x onerror=alert(1)>&amp;"
				 "\xe2\x80\xa8|\xe2\x80\xa9\"}";
	char *out = escape_json(in, sizeof(in) - 1);
	json_error_t jerr;
	json_t *doc;

	assert_string_equal(out, "{\"s\":\"\\u003c/script\\u003e\\u003cimg src=x "
				 "onerror=alert(1)\\u003e\\u0026amp;\\u2028|\\u2029\"}");
	assert_null(strchr(out, '<'));
	/* still the same document */
	doc = json_loads(out, 0, &jerr);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_object_get(doc, "s")),
			    "</script><img src=x onerror=alert(1)>&amp;\xe2\x80\xa8|\xe2\x80\xa9");
	json_decref(doc);
	free(out);
}

static void test_json_script_invalid_utf8(void **state)
{
	/* Bytes jansson would reject become \ufffd escapes, so the output is valid JSON again */
	static const char in[] = "[\"a\xc0\xaf"
				 "b\xed\xa0\x80"
				 "c\xf4\x90\x80\x80\xe2\x82\"]";
	char *out = escape_json(in, sizeof(in) - 1);
	json_error_t jerr;
	json_t *doc;

	assert_string_equal(out, "[\"a\\ufffd\\ufffdb\\ufffd\\ufffd\\ufffdc\\ufffd\\ufffd\\ufffd"
				 "\\ufffd\\ufffd\"]");
	doc = json_loads(out, 0, &jerr);
	assert_non_null(doc);
	assert_string_equal(json_string_value(json_array_get(doc, 0)),
			    "a" FFFD FFFD "b" FFFD FFFD FFFD "c" FFFD FFFD FFFD FFFD FFFD);
	json_decref(doc);
	free(out);
}

static void test_html_escape(void **state)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_int_equal(ls_escape__html(f, "a<b>&\"c\" 'd' \xff"), 0);
	fclose(f);
	assert_string_equal(buf, "a&lt;b&gt;&amp;&quot;c&quot; &#39;d&#39; " FFFD);
	free(buf);
}

/* The text between the data block's start tag and the next "</script", or NULL. */
static char *data_block(const char *page, int *count)
{
	static const char open_tag[] = "<script type=\"application/json\" id=\"ls-data\">";
	const char *p = page, *start = NULL, *end;

	*count = 0;
	while ((p = strstr(p, open_tag))) {
		(*count)++;
		p += strlen(open_tag);
		start = p;
	}
	if (!start)
		return NULL;
	end = strstr(start, "</script");
	assert_non_null(end);
	return strndup(start, end - start);
}

static char *write_page(const char *json, const char *title)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_non_null(f);
	assert_int_equal(ls_html__write(f, json, strlen(json), title), 0);
	fclose(f);
	return buf;
}

static void test_page_has_one_data_block_that_parses_back(void **state)
{
	/* what report/model.c would produce for a hostile source file */
	static const char json[] =
		"{\"version\":1,\"sources\":[{\"name\":\"x.py\",\"text\":\"s = '</script>'\\n"
		"t = '<!--<script>'\\nu = '\xe2\x80\xa8'\\n<img src=x onerror=alert(1)>\"}]}";
	char *page = write_page(json, "x.py </title> & co");
	json_t *in, *back;
	json_error_t jerr;
	char *data;
	int count;

	data = data_block(page, &count);
	assert_int_equal(count, 1);
	assert_non_null(data);
	assert_null(strstr(data, "<"));
	assert_null(strstr(data, "\xe2\x80\xa8"));
	in = json_loads(json, 0, &jerr);
	back = json_loads(data, 0, &jerr);
	assert_non_null(in);
	assert_non_null(back);
	assert_true(json_equal(in, back));
	/* title escaped, CSP present, script and stylesheet inlined */
	assert_non_null(strstr(page, "<title>x.py &lt;/title&gt; &amp; co</title>"));
	assert_non_null(strstr(page, "script-src 'sha256-"));
	assert_non_null(strstr(page, "default-src 'none'"));
	assert_non_null(memmem(page, strlen(page), ls_asset_js, LS_ASSET_LEN(js)));
	assert_non_null(memmem(page, strlen(page), ls_asset_css, LS_ASSET_LEN(css)));
	/* no placeholder left behind, and no remote resource referenced */
	assert_null(strstr(page, "@@LS_"));
	assert_null(strstr(page, "src=\"http"));
	assert_null(strstr(page, "href=\"http"));
	json_decref(in);
	json_decref(back);
	free(data);
	free(page);
}

static void test_page_default_title(void **state)
{
	char *page = write_page("{}", NULL);

	assert_non_null(strstr(page, "<title>LineScope-BPF report</title>"));
	free(page);
}

static void test_page_errors(void **state)
{
	FILE *full = fopen("/dev/full", "w");
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	assert_int_equal(ls_html__write(f, NULL, 3, NULL), -EINVAL);
	assert_int_equal(ls_html__write(f, "{}", 0, NULL), -EINVAL);
	assert_int_equal(ls_html__write(NULL, "{}", 2, NULL), -EINVAL);
	fclose(f);
	assert_int_equal(n, 0); /* nothing written on a refused call */
	free(buf);
	assert_non_null(full);
	assert_int_equal(ls_html__write(full, "{}", 2, NULL), -EIO);
	fclose(full);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_utf8_valid_is_unchanged),
		cmocka_unit_test(test_utf8_overlong),
		cmocka_unit_test(test_utf8_surrogates),
		cmocka_unit_test(test_utf8_truncated),
		cmocka_unit_test(test_utf8_beyond_max),
		cmocka_unit_test(test_utf8_embedded_nul),
		cmocka_unit_test(test_json_script_escapes),
		cmocka_unit_test(test_json_script_invalid_utf8),
		cmocka_unit_test(test_html_escape),
		cmocka_unit_test(test_page_has_one_data_block_that_parses_back),
		cmocka_unit_test(test_page_default_title),
		cmocka_unit_test(test_page_errors),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
