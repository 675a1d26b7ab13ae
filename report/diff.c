// SPDX-License-Identifier: MIT
/*
 * Two models compared line by line, function by function and file by file (diff.h says how rows
 * are matched). Each side is first summed over processes into rows sorted by key, so that every
 * lookup is a binary search and every pass is linear in the rows.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "diff.h"

/* One side's rows, sorted by (path, line) for lines and files, (path, function) for functions. */
struct side {
	const struct ls_model *m;
	struct ls_drow *rows;
	size_t n;
	int *other; /* the index of the row it matched on the other side, or -1 */
};

static int cmp_str(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "");
}

static int cmp_line(const void *pa, const void *pb)
{
	const struct ls_drow *a = pa, *b = pb;
	int c = cmp_str(a->path, b->path);

	return c ? c : (a->line > b->line) - (a->line < b->line);
}

static int cmp_func(const void *pa, const void *pb)
{
	const struct ls_drow *a = pa, *b = pb;
	int c = cmp_str(a->path, b->path);

	return c ? c : cmp_str(a->function, b->function);
}

/* Biggest regression first; then by path and line, so that the order does not depend on qsort. */
static int cmp_delta(const void *pa, const void *pb)
{
	const struct ls_drow *a = pa, *b = pb;
	int64_t da = a->ns - a->base_ns, db = b->ns - b->base_ns;

	if (da != db)
		return da < db ? 1 : -1;
	return cmp_line(pa, pb) ?: cmp_str(a->function, b->function);
}

static const char *func_name(const struct ls_model *m, int func)
{
	return func >= 0 ? m->funcs[func].qualname : NULL;
}

/*
 * Sorts rows by cmp and sums those with equal keys into the first, which keeps the file and
 * function of the part with the most time. Returns the number of rows left.
 */
static size_t fold(struct ls_drow *rows, size_t n, int (*cmp)(const void *, const void *))
{
	size_t out = 0;
	int64_t best = 0;

	qsort(rows, n, sizeof(*rows), cmp);
	for (size_t i = 0; i < n; i++) {
		struct ls_drow *r = &rows[out - (out > 0)];

		if (out && !cmp(r, &rows[i])) {
			if (rows[i].ns > best) {
				best = rows[i].ns;
				r->file = rows[i].file;
				r->func = rows[i].func;
				r->function = rows[i].function;
				r->line = cmp == cmp_func ? rows[i].line : r->line;
			}
			r->ns += rows[i].ns;
			r->count += rows[i].count;
			continue;
		}
		best = rows[i].ns;
		rows[out++] = rows[i];
	}
	return out;
}

static struct ls_drow blank_row(void)
{
	return (struct ls_drow){.file = -1, .base_file = -1, .func = -1, .base_func = -1};
}

/* The model's lines with any Time, summed over processes by (path, line). */
static int side_lines(struct side *s)
{
	const struct ls_model *m = s->m;

	s->rows = calloc(m->nlines ? m->nlines : 1, sizeof(*s->rows));
	if (!s->rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];
		struct ls_drow *r = &s->rows[s->n];

		if (!l->own_ns && !l->own_count)
			continue; /* only on the stack: no Time of its own to compare */
		*r = blank_row();
		r->path = m->files[l->file].path;
		r->line = l->line;
		r->file = l->file;
		r->func = l->func;
		r->function = func_name(m, l->func);
		r->ns = l->own_ns;
		r->count = l->own_count;
		s->n++;
	}
	s->n = fold(s->rows, s->n, cmp_line);
	return 0;
}

/* The model's functions summed over processes by (path, qualified name). */
static int side_funcs(struct side *s)
{
	const struct ls_model *m = s->m;

	s->rows = calloc(m->nfstats ? m->nfstats : 1, sizeof(*s->rows));
	if (!s->rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->nfstats; i++) {
		const struct ls_mfstat *fs = &m->fstats[i];
		const struct ls_mfunc *f = &m->funcs[fs->func];
		struct ls_drow *r = &s->rows[s->n++];

		*r = blank_row();
		r->path = m->files[f->file].path;
		r->function = f->qualname;
		r->line = f->def_line;
		r->file = f->file;
		r->func = fs->func;
		r->ns = fs->own_ns;
		r->count = fs->own_count;
	}
	s->n = fold(s->rows, s->n, cmp_func);
	return 0;
}

/* Files summed from a side's line rows, by path. */
static int side_files(struct side *s, const struct side *lines)
{
	s->rows = calloc(lines->n ? lines->n : 1, sizeof(*s->rows));
	if (!s->rows)
		return -ENOMEM;
	for (size_t i = 0; i < lines->n; i++) {
		struct ls_drow *r = &s->rows[s->n++];

		*r = blank_row();
		r->path = lines->rows[i].path;
		r->file = lines->rows[i].file;
		r->ns = lines->rows[i].ns;
		r->count = lines->rows[i].count;
	}
	s->n = fold(s->rows, s->n, cmp_line);
	return 0;
}

static int side_other(struct side *s)
{
	s->other = malloc((s->n ? s->n : 1) * sizeof(*s->other));
	if (!s->other)
		return -ENOMEM;
	for (size_t i = 0; i < s->n; i++)
		s->other[i] = -1;
	return 0;
}

static void side_free(struct side *s)
{
	free(s->rows);
	free(s->other);
}

/* Index of the row of s with key's key under cmp, or -1. */
static int find(const struct side *s, const struct ls_drow *key,
		int (*cmp)(const void *, const void *))
{
	const struct ls_drow *r = bsearch(key, s->rows, s->n, sizeof(*s->rows), cmp);

	return r ? (int)(r - s->rows) : -1;
}

/* The unclaimed base line at (path, line), or -1. */
static int free_line(const struct side *b, const char *path, int line)
{
	struct ls_drow key = {.path = path, .line = line};
	int i = find(b, &key, cmp_line);

	return i >= 0 && b->other[i] < 0 ? i : -1;
}

/* Whether line a of fa and line b of fb have the same text. */
static bool text_eq(const struct ls_mfile *fa, int a, const struct ls_mfile *fb, int b)
{
	size_t la, lb;
	const char *ta = ls_mfile__line(fa, a, &la), *tb = ls_mfile__line(fb, b, &lb);

	return ta && tb && la == lb && !memcmp(ta, tb, la);
}

/* Same text on both sides, or a text that was not captured: position is all there is. */
static bool same_text(const struct ls_drow *a, const struct side *sa, const struct ls_drow *b,
		      const struct side *sb)
{
	const struct ls_mfile *fa = &sa->m->files[a->file], *fb = &sb->m->files[b->file];

	return !fa->text || !fb->text || text_eq(fa, a->line, fb, b->line);
}

static void claim(struct side *n, int i, struct side *b, int j, enum ls_diff_match how)
{
	n->other[i] = j;
	b->other[j] = i;
	n->rows[i].match = how;
}

int ls_diff__line_in_new(const struct ls_mfile *nf, int ndef, const struct ls_mfile *bf, int bdef,
			 int line)
{
	int64_t at = (int64_t)line + ndef - bdef;
	const char *want;
	size_t wlen;
	int best = -1, l = 1;

	if (at < 1 || at > INT32_MAX)
		return -1;
	if (!nf->text || !bf->text)
		return (int)at; /* position is all there is */
	if (text_eq(nf, line, bf, line))
		return line;
	if (text_eq(nf, (int)at, bf, line))
		return (int)at;
	/* code added or removed above it inside its function: the nearest line with its text, in
	 * one pass over the new file */
	want = ls_mfile__line(bf, line, &wlen);
	for (const char *p = nf->text, *end = nf->text + nf->len; want && p < end; l++) {
		const char *nl = memchr(p, '\n', end - p) ?: end;

		if ((size_t)(nl - p) == wlen && !memcmp(p, want, wlen) &&
		    (best < 0 || llabs(l - at) < llabs(best - at)))
			best = l;
		p = nl + 1;
	}
	return best;
}

/* The def line of the function of row r in side s's model, or 0. */
static int def_of(const struct side *s, const struct ls_drow *r)
{
	return r->func >= 0 ? s->m->funcs[r->func].def_line : 0;
}

/*
 * The passes of diff.h, each only over the lines the previous ones left: the same place and
 * text; the same text where ls_diff__line_in_new() finds it in the same function; then the same
 * place in the same function, whatever its text.
 */
static void match_lines(struct side *n, struct side *b, const struct side *nfuncs)
{
	for (size_t i = 0; i < n->n; i++) {
		int j = free_line(b, n->rows[i].path, n->rows[i].line);

		if (j >= 0 && same_text(&n->rows[i], n, &b->rows[j], b))
			claim(n, i, b, j, LS_DIFF_SAME);
	}
	for (int pass = 0; pass < 2; pass++) {
		for (size_t j = 0; j < b->n; j++) {
			const struct ls_drow *r = &b->rows[j];
			struct ls_drow key = {.path = r->path, .function = r->function};
			int f, at, i;

			if (b->other[j] >= 0 || !r->function ||
			    (f = find(nfuncs, &key, cmp_func)) < 0)
				continue;
			key.line = nfuncs->rows[f]
					   .line; /* the function's def line in the new profile */
			at = pass ? (int)((int64_t)r->line + key.line - def_of(b, r))
				  : ls_diff__line_in_new(&n->m->files[nfuncs->rows[f].file],
							 key.line, &b->m->files[r->file],
							 def_of(b, r), r->line);
			if (at < 1 || (i = free_line(n, r->path, at)) < 0 ||
			    cmp_str(n->rows[i].function, r->function))
				continue;
			claim(n, i, b, j,
			      pass	      ? LS_DIFF_EDITED
			      : at == r->line ? LS_DIFF_SAME
					      : LS_DIFF_MOVED);
		}
	}
}

/* Functions and files: by key alone. */
static void match_keys(struct side *n, struct side *b, int (*cmp)(const void *, const void *))
{
	for (size_t i = 0; i < n->n; i++) {
		int j = find(b, &n->rows[i], cmp);

		if (j >= 0)
			claim(n, i, b, j, LS_DIFF_SAME);
	}
}

/* The rows of n with their base sides filled in, then base's unmatched rows; by change. */
static struct ls_drow *merge(const struct side *n, const struct side *b, size_t *count)
{
	struct ls_drow *out = calloc(n->n + b->n + 1, sizeof(*out));
	size_t k = 0;

	if (!out)
		return NULL;
	for (size_t i = 0; i < n->n; i++) {
		struct ls_drow *r = &out[k++];
		int j = n->other[i];

		*r = n->rows[i];
		if (!r->ns && !r->count && (j < 0 || (!b->rows[j].ns && !b->rows[j].count))) {
			k--; /* no Time on either side: nothing changed */
			continue;
		}
		if (j < 0) {
			r->match = LS_DIFF_NEW;
			continue;
		}
		r->base_line = b->rows[j].line;
		r->base_file = b->rows[j].file;
		r->base_func = b->rows[j].func;
		r->base_ns = b->rows[j].ns;
		r->base_count = b->rows[j].count;
	}
	for (size_t j = 0; j < b->n; j++) {
		struct ls_drow *r = &out[k++];

		if (b->other[j] >= 0 || (!b->rows[j].ns && !b->rows[j].count)) {
			k--;
			continue;
		}
		*r = blank_row();
		r->path = b->rows[j].path;
		r->function = b->rows[j].function;
		r->line = r->base_line = b->rows[j].line;
		r->base_file = b->rows[j].file;
		r->base_func = b->rows[j].func;
		r->base_ns = b->rows[j].ns;
		r->base_count = b->rows[j].count;
		r->match = LS_DIFF_GONE;
	}
	qsort(out, k, sizeof(*out), cmp_delta);
	*count = k;
	return out;
}

int ls_diff__build(const struct ls_model *m, const struct ls_model *base, struct ls_diff **out)
{
	struct side nl = {.m = m}, bl = {.m = base}, nf = {.m = m}, bf = {.m = base};
	struct side nfi = {.m = m}, bfi = {.m = base};
	struct ls_diff *d = calloc(1, sizeof(*d));
	int err = -ENOMEM;

	if (!d)
		return -ENOMEM;
	d->m = m;
	d->base = base;
	if (side_lines(&nl) || side_lines(&bl) || side_funcs(&nf) || side_funcs(&bf) ||
	    side_files(&nfi, &nl) || side_files(&bfi, &bl) || side_other(&nl) || side_other(&bl) ||
	    side_other(&nf) || side_other(&bf) || side_other(&nfi) || side_other(&bfi))
		goto out;
	match_lines(&nl, &bl, &nf);
	match_keys(&nf, &bf, cmp_func);
	match_keys(&nfi, &bfi, cmp_line);
	d->lines = merge(&nl, &bl, &d->nlines);
	d->funcs = merge(&nf, &bf, &d->nfuncs);
	d->files = merge(&nfi, &bfi, &d->nfiles);
	if (!d->lines || !d->funcs || !d->files)
		goto out;
	for (size_t i = 0; i < d->nlines; i++) {
		d->ns += d->lines[i].ns;
		d->base_ns += d->lines[i].base_ns;
		d->matched[d->lines[i].match]++;
	}
	err = 0;
out:
	side_free(&nl);
	side_free(&bl);
	side_free(&nf);
	side_free(&bf);
	side_free(&nfi);
	side_free(&bfi);
	if (err)
		ls_diff__free(d);
	else
		*out = d;
	return err;
}

void ls_diff__free(struct ls_diff *d)
{
	if (!d)
		return;
	free(d->lines);
	free(d->funcs);
	free(d->files);
	free(d);
}

const char *ls_diff__match_name(enum ls_diff_match how)
{
	static const char *const names[] = {
		[LS_DIFF_SAME] = "same", [LS_DIFF_MOVED] = "moved", [LS_DIFF_EDITED] = "edited",
		[LS_DIFF_NEW] = "new",	 [LS_DIFF_GONE] = "gone",
	};

	return (unsigned)how < sizeof(names) / sizeof(names[0]) ? names[how] : "same";
}

double ls_diff__share_delta(const struct ls_diff *d, const struct ls_drow *r)
{
	return (d->ns ? (double)r->ns / d->ns : 0) -
	       (d->base_ns ? (double)r->base_ns / d->base_ns : 0);
}

/* Whether a metadata value differs between the two profiles. */
static bool meta_differs(const struct ls_diff *d, const char *key)
{
	const char *a = ls_model__meta(d->m, key), *b = ls_model__meta(d->base, key);

	return (a || b) && (!a || !b || strcmp(a, b));
}

size_t ls_diff__notes(const struct ls_diff *d, const char **notes, size_t max)
{
	size_t n = 0;

	if (n < max && meta_differs(d, "mode"))
		notes[n++] = "the profiles were recorded in different modes (cpu and wall time): "
			     "their Times measure different things";
	if (n < max && meta_differs(d, "frequency_hz"))
		notes[n++] = "the profiles were sampled at different rates";
	if (n < max && (!d->ns || !d->base_ns))
		notes[n++] = "a profile has no Time on any line: nothing to compare";
	return n;
}
