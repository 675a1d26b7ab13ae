// SPDX-License-Identifier: MIT
/* UTF-8 repair and the escaping that keeps profile text inert inside the HTML report. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "escape.h"

static const char replacement[] = "\xef\xbf\xbd"; /* U+FFFD */

/* Unicode 15, table 3-7: the second byte's range depends on the lead byte. */
int ls_utf8_seq(const unsigned char *s, size_t n)
{
	unsigned char c = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (c < 0x80)
		return 1;
	if (c < 0xc2 || c > 0xf4)
		return -1; /* continuation byte, overlong 2-byte lead, or beyond U+10FFFF */
	if (c < 0xe0) {
		need = 2;
	} else if (c < 0xf0) {
		need = 3;
		if (c == 0xe0)
			lo = 0xa0; /* overlong */
		else if (c == 0xed)
			hi = 0x9f; /* surrogates */
	} else {
		need = 4;
		if (c == 0xf0)
			lo = 0x90; /* overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	}
	for (i = 1; i < need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi)
			return -(int)i;
		lo = 0x80;
		hi = 0xbf;
	}
	return (int)need;
}

int ls_utf8_sanitize(const char *in, size_t len, char **out, size_t *out_len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t i = 0, o = 0;
	int bad = 0, k;
	char *buf;

	/* Each replaced subpart is at least one byte and becomes three: 3 * len is always enough.
	 */
	if (len > (SIZE_MAX - 1) / 3)
		return -ENOMEM;
	buf = malloc(len * 3 + 1);
	if (!buf)
		return -ENOMEM;
	while (i < len) {
		k = ls_utf8_seq(s + i, len - i);
		if (k > 0) {
			memcpy(buf + o, s + i, k);
			o += k;
			i += k;
		} else {
			memcpy(buf + o, replacement, 3);
			o += 3;
			i += -k;
			bad++;
		}
	}
	buf[o] = '\0';
	*out = buf;
	if (out_len)
		*out_len = o;
	return bad;
}

/*
 * What replaces the character at s (k = its byte length, negative for an invalid sequence, as
 * ls_utf8_seq), or NULL to copy it as it is.
 */
typedef const char *(*subst_fn)(const unsigned char *s, size_t left, int *k);

/* Copies text[0..len) to out, unchanged runs in one write, with subst's replacements. */
static inline __attribute__((always_inline)) int escape_with(FILE *out, const char *text,
							     size_t len, subst_fn subst)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t i = 0, start = 0, run;
	const char *sub;
	int k;

	while (i < len) {
		sub = subst(s + i, len - i, &k);
		if (!sub) {
			i += k;
			continue;
		}
		run = i - start;
		if ((run && fwrite(text + start, 1, run, out) != run) || fputs(sub, out) < 0)
			return -EIO;
		i += k < 0 ? (size_t)-k : (size_t)k;
		start = i;
	}
	run = i - start;
	return run && fwrite(text + start, 1, run, out) != run ? -EIO : 0;
}

/* Inside <script>: no "<", ">", "&" (no closing tag or comment), no line separators. */
static const char *json_script_subst(const unsigned char *s, size_t left, int *k)
{
	unsigned char c = s[0];

	*k = 1;
	if (c < 0x80 && c != '<' && c != '>' && c != '&')
		return NULL;
	if (c == '<')
		return "\\u003c";
	if (c == '>')
		return "\\u003e";
	if (c == '&')
		return "\\u0026";
	*k = ls_utf8_seq(s, left);
	if (*k == 3 && c == 0xe2 && s[1] == 0x80 && s[2] == 0xa8)
		return "\\u2028";
	if (*k == 3 && c == 0xe2 && s[1] == 0x80 && s[2] == 0xa9)
		return "\\u2029";
	return *k < 0 ? "\\ufffd" : NULL;
}

static const char *html_subst(const unsigned char *s, size_t left, int *k)
{
	*k = 1;
	switch (s[0]) {
	case '&':
		return "&amp;";
	case '<':
		return "&lt;";
	case '>':
		return "&gt;";
	case '"':
		return "&quot;";
	case '\'':
		return "&#39;";
	default:
		*k = ls_utf8_seq(s, left);
		return *k < 0 ? replacement : NULL;
	}
}

int ls_escape__json_script(FILE *out, const char *json, size_t len)
{
	return escape_with(out, json, len, json_script_subst);
}

int ls_escape__html(FILE *out, const char *text)
{
	return escape_with(out, text, strlen(text), html_subst);
}

size_t ls_escape__name(const char *in, bool controls, char *out, size_t len)
{
	const unsigned char *s = (const unsigned char *)in;
	size_t n = strlen(in), o = 0;

	if (!len)
		return 0;
	for (size_t i = 0; i < n;) {
		int k = ls_utf8_seq(s + i, n - i);

		if (k > 0 && (k > 1 || !controls || (s[i] >= 0x20 && s[i] != 0x7f))) {
			if (o + k >= len)
				break;
			memcpy(out + o, s + i, k);
			o += k;
			i += k;
			continue;
		}
		if (o + 4 >= len)
			break;
		o += snprintf(out + o, len - o, "\\x%02x", s[i]);
		i++;
	}
	out[o] = 0;
	return o;
}
