// SPDX-License-Identifier: MIT
/*
 * Location-table decoder. Two pitfalls of other decoders are avoided on purpose: an entry without
 * location (code 15) must not reset the running line, and an entry covers units [start, end).
 */
#include <errno.h>
#include "linetable.h"

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static unsigned read_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static unsigned read_varint(struct cursor *c)
{
	unsigned b = read_byte(c), val = b & 63, shift = 6;

	while ((b & 64) && !c->bad && shift < 32) {
		b = read_byte(c);
		val |= (b & 63) << shift;
		shift += 6;
	}
	return val;
}

static int read_svarint(struct cursor *c)
{
	unsigned uv = read_varint(c);

	return (uv & 1) ? -(int)(uv >> 1) : (int)(uv >> 1);
}

/*
 * Walks entries, calling back with [start, end) units and the entry's line (-1 = none) plus the
 * running line. Stops early when cb returns non-zero. Returns units covered or -EINVAL.
 */
/* line + delta, or -EINVAL when a table (from a target's memory) leaves int's range */
static int add_line(int *line, int64_t delta)
{
	int64_t v = (int64_t)*line + delta;

	if (v < INT32_MIN || v > INT32_MAX)
		return -EINVAL;
	*line = (int)v;
	return 0;
}

static int walk(const uint8_t *tab, size_t len, int firstlineno,
		int (*cb)(void *arg, int start, int end, int line, int running), void *arg)
{
	struct cursor c = {.p = tab, .end = tab + len};
	int line = firstlineno, unit = 0;

	while (c.p < c.end) {
		unsigned first = read_byte(&c), code, n;
		int entry_line;

		if (!(first & 0x80))
			return -EINVAL; /* every entry starts with its high bit set */
		code = (first >> 3) & 15;
		n = (first & 7) + 1;
		switch (code) {
		case 15: /* no location */
			entry_line = -1;
			break;
		case 14: /* long form: line delta, end-line delta, column, end column */
			if (add_line(&line, read_svarint(&c)))
				return -EINVAL;
			read_varint(&c);
			read_varint(&c);
			read_varint(&c);
			entry_line = line;
			break;
		case 13: /* no column */
			if (add_line(&line, read_svarint(&c)))
				return -EINVAL;
			entry_line = line;
			break;
		case 10:
		case 11:
		case 12: /* one-line form */
			if (add_line(&line, code - 10))
				return -EINVAL;
			read_byte(&c);
			read_byte(&c);
			entry_line = line;
			break;
		default: /* short form: same line, one column byte */
			read_byte(&c);
			entry_line = line;
			break;
		}
		if (c.bad)
			return -EINVAL;
		if (cb && cb(arg, unit, unit + n, entry_line, line))
			return unit + n;
		unit += n;
		/* entries are at most 8 units, so this bounds pathological tables */
		if (unit > (1 << 26))
			return -EINVAL;
	}
	return unit;
}

struct fill_arg {
	int *lines;
	int cap;
};

static int fill_cb(void *arg, int start, int end, int line, int running)
{
	struct fill_arg *f = arg;

	for (int u = start; u < end && u < f->cap; u++)
		f->lines[u] = line;
	return 0;
}

int ls_linetable__decode(const uint8_t *tab, size_t len, int firstlineno, int *lines, int cap)
{
	struct fill_arg f = {.lines = lines, .cap = lines ? cap : 0};

	return walk(tab, len, firstlineno, fill_cb, &f);
}

struct find_arg {
	int unit;
	int line, running, found;
};

static int find_cb(void *arg, int start, int end, int line, int running)
{
	struct find_arg *f = arg;

	if (f->unit >= start && f->unit < end) {
		f->line = line;
		f->running = running;
		f->found = 1;
		return 1;
	}
	return 0;
}

int ls_linetable__line(const uint8_t *tab, size_t len, int firstlineno, int unit, int *nearest)
{
	struct find_arg f = {.unit = unit};
	int err;

	if (unit < 0) {
		if (nearest)
			*nearest = firstlineno;
		return firstlineno;
	}
	err = walk(tab, len, firstlineno, find_cb, &f);
	if (err < 0)
		return err;
	if (!f.found)
		return -ERANGE;
	if (nearest)
		*nearest = f.line >= 0 ? f.line : f.running;
	return f.line;
}
