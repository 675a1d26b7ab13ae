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

/* Writes s[start..i) when non-empty; the caller then writes its substitute. */
static int flush(FILE *out, const char *s, size_t start, size_t i)
{
	if (i > start && fwrite(s + start, 1, i - start, out) != i - start)
		return -EIO;
	return 0;
}

static int put(FILE *out, const char *str)
{
	return fputs(str, out) < 0 ? -EIO : 0;
}

int ls_escape__json_script(FILE *out, const char *json, size_t len)
{
	const unsigned char *s = (const unsigned char *)json;
	size_t i = 0, start = 0;
	const char *sub;
	int k, err;

	while (i < len) {
		unsigned char c = s[i];

		if (c < 0x80 && c != '<' && c != '>' && c != '&') {
			i++;
			continue;
		}
		k = c < 0x80 ? 1 : ls_utf8_seq(s + i, len - i);
		if (c == '<')
			sub = "\\u003c";
		else if (c == '>')
			sub = "\\u003e";
		else if (c == '&')
			sub = "\\u0026";
		else if (k == 3 && c == 0xe2 && s[i + 1] == 0x80 && s[i + 2] == 0xa8)
			sub = "\\u2028";
		else if (k == 3 && c == 0xe2 && s[i + 1] == 0x80 && s[i + 2] == 0xa9)
			sub = "\\u2029";
		else if (k < 0)
			sub = "\\ufffd";
		else
			sub = NULL;
		if (!sub) {
			i += k;
			continue;
		}
		err = flush(out, json, start, i);
		if (!err)
			err = put(out, sub);
		if (err)
			return err;
		i += k < 0 ? (size_t)-k : (size_t)k;
		start = i;
	}
	return flush(out, json, start, i);
}

int ls_escape__html(FILE *out, const char *text)
{
	const unsigned char *s = (const unsigned char *)text;
	size_t len = strlen(text), i = 0, start = 0;
	const char *sub;
	int k, err;

	while (i < len) {
		switch (s[i]) {
		case '&':
			sub = "&amp;";
			k = 1;
			break;
		case '<':
			sub = "&lt;";
			k = 1;
			break;
		case '>':
			sub = "&gt;";
			k = 1;
			break;
		case '"':
			sub = "&quot;";
			k = 1;
			break;
		case '\'':
			sub = "&#39;";
			k = 1;
			break;
		default:
			k = ls_utf8_seq(s + i, len - i);
			sub = k < 0 ? replacement : NULL;
			break;
		}
		if (!sub) {
			i += k;
			continue;
		}
		err = flush(out, text, start, i);
		if (!err)
			err = put(out, sub);
		if (err)
			return err;
		i += k < 0 ? (size_t)-k : (size_t)k;
		start = i;
	}
	return flush(out, text, start, i);
}
