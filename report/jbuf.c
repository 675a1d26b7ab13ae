// SPDX-License-Identifier: MIT
/* JSON text buffer with integer-only number formatting (no printf in the hot loop). */
#include <stdlib.h>
#include <string.h>
#include "jbuf.h"

void ls_jbuf_init(struct ls_jbuf *b)
{
	memset(b, 0, sizeof(*b));
}

void ls_jbuf_release(struct ls_jbuf *b)
{
	free(b->s);
	ls_jbuf_init(b);
}

static bool reserve(struct ls_jbuf *b, size_t n)
{
	size_t cap;
	char *s;

	if (b->failed)
		return false;
	if (b->len + n + 1 <= b->cap)
		return true;
	cap = b->cap ? b->cap : 4096;
	while (cap < b->len + n + 1)
		cap *= 2;
	s = realloc(b->s, cap);
	if (!s) {
		b->failed = true;
		return false;
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void ls_jbuf__raw(struct ls_jbuf *b, const char *s, size_t n)
{
	if (!reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void ls_jbuf__str(struct ls_jbuf *b, const char *s)
{
	ls_jbuf__raw(b, s, strlen(s));
}

static size_t utoa(uint64_t v, char *out)
{
	char tmp[24];
	size_t n = 0, i;

	do {
		tmp[n++] = '0' + v % 10;
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void ls_jbuf__int(struct ls_jbuf *b, int64_t v)
{
	char buf[24];
	size_t n = 0;

	if (v < 0) {
		buf[n++] = '-';
		n += utoa(-(uint64_t)v, buf + n);
	} else {
		n += utoa(v, buf);
	}
	ls_jbuf__raw(b, buf, n);
}

void ls_jbuf__secs(struct ls_jbuf *b, int64_t ns)
{
	char buf[40];
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns, frac = a % 1000000000ULL;
	size_t n = 0;

	if (ns < 0)
		buf[n++] = '-';
	n += utoa(a / 1000000000ULL, buf + n);
	if (frac) {
		int digits = 9;

		while (frac % 10 == 0) {
			frac /= 10;
			digits--;
		}
		buf[n++] = '.';
		for (int i = digits - 1; i >= 0; i--) {
			buf[n + i] = '0' + frac % 10;
			frac /= 10;
		}
		n += digits;
	}
	ls_jbuf__raw(b, buf, n);
}

void ls_jbuf__json(struct ls_jbuf *b, json_t *v)
{
	char *s;

	if (!v) {
		ls_jbuf__raw(b, "null", 4);
		return;
	}
	s = json_dumps(v, JSON_COMPACT | JSON_ENCODE_ANY | JSON_REAL_PRECISION(9));
	json_decref(v);
	if (!s) {
		b->failed = true;
		return;
	}
	ls_jbuf__str(b, s);
	free(s);
}

void ls_jbuf__null_col(struct ls_jbuf *b, const char *name)
{
	ls_jbuf__str(b, ",\"");
	ls_jbuf__str(b, name);
	ls_jbuf__str(b, "\":null");
}

char *ls_jbuf__detach(struct ls_jbuf *b, size_t *len)
{
	char *s = b->failed ? NULL : b->s;

	if (b->failed)
		free(b->s);
	else if (!s && reserve(b, 0))
		s = b->s;
	if (len)
		*len = s ? b->len : 0;
	ls_jbuf_init(b);
	return s;
}
