// SPDX-License-Identifier: MIT
/*
 * Folded stacks, as flamegraph.pl, speedscope and inferno read them: one line per distinct stack,
 * root first, frames "function (file:line)" joined by ';', then a space and the weight.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "export.h"
#include "jbuf.h"

struct folded {
	char *stack;
	int64_t weight;
};

static int by_stack(const void *a, const void *b)
{
	int c = strcmp(((const struct folded *)a)->stack, ((const struct folded *)b)->stack);

	return c < 0 ? -1 : c > 0;
}

/* ';' separates frames and a newline ends the record: neither may be part of a name */
static char *frame_text(const char *name, const char *path)
{
	char *n = ls_export__name(name, true), *p = ls_export__name(path, true), *s = NULL;

	if (n && p && asprintf(&s, "%s (%s", n, p) < 0)
		s = NULL;
	free(n);
	free(p);
	for (char *c = s; c && *c; c++)
		if (*c == ';')
			*c = ',';
	return s;
}

/* "function (file" of every function, the line and ")" added per frame */
static char **function_texts(const struct ls_model *m)
{
	char **t = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*t));

	for (size_t i = 0; t && i < m->nfuncs; i++) {
		t[i] = frame_text(m->funcs[i].qualname, m->files[m->funcs[i].file].path);
		if (!t[i]) {
			for (size_t j = 0; j < i; j++)
				free(t[j]);
			free(t);
			return NULL;
		}
	}
	return t;
}

static char *stack_text(const struct ls_model *m, char **texts, const struct ls_export_row *r)
{
	const struct ls_mstack *s = &m->stacks->stacks[r->stack];
	struct ls_jbuf b;
	char native[512];

	ls_jbuf_init(&b);
	if (!s->depth) {
		ls_export__native_name(m, m->stacks->threads[r->thread].proc, native,
				       sizeof(native));
		for (char *c = native; *c; c++)
			if (*c == ';')
				*c = ',';
		ls_jbuf__str(&b, native);
	}
	for (int i = s->depth - 1; i >= 0; i--) {
		ls_jbuf__str(&b, texts[s->frames[i].func]);
		ls_jbuf__raw(&b, ":", 1);
		ls_jbuf__int(&b, s->frames[i].line);
		ls_jbuf__raw(&b, i ? ");" : ")", i ? 2 : 1);
	}
	return ls_jbuf__detach(&b, NULL);
}

int ls_export__collapsed(FILE *out, const struct ls_model *m, enum ls_export_weight weight)
{
	const struct ls_mstacks *s = m->stacks;
	struct folded *v = NULL;
	struct ls_export_row r;
	size_t n = 0, cap = 0;
	char **texts;
	int err = 0;

	texts = function_texts(m);
	if (!texts)
		return -ENOMEM;
	for (size_t i = 0; ls_export__next(s, &i, &r);) {
		int64_t w = weight == LS_EXPORT_SAMPLES ? r.count : ls_export__row_ns(&r);
		struct folded *f;

		if (!w)
			continue; /* off-CPU time alone has no samples */
		f = ls_array_grow(v, &cap, n, sizeof(*v), 256);
		if (!f) {
			err = -ENOMEM;
			goto cleanup;
		}
		v = f;
		v[n].weight = w;
		v[n].stack = stack_text(m, texts, &r);
		if (!v[n].stack) {
			err = -ENOMEM;
			goto cleanup;
		}
		n++;
	}
	/* the same stack in several threads or processes is one line */
	if (n)
		qsort(v, n, sizeof(*v), by_stack);
	for (size_t i = 0; i < n;) {
		int64_t w = 0;
		size_t j = i;

		for (; j < n && !strcmp(v[j].stack, v[i].stack); j++)
			w += v[j].weight;
		/* time in microseconds, rounded once per line */
		if (weight == LS_EXPORT_TIME)
			w = (w + 500) / 1000;
		if (w && fprintf(out, "%s %" PRId64 "\n", v[i].stack, w) < 0) {
			err = -EIO;
			break;
		}
		i = j;
	}
cleanup:
	for (size_t i = 0; i < n; i++)
		free(v[i].stack);
	free(v);
	for (size_t i = 0; i < m->nfuncs; i++)
		free(texts[i]);
	free(texts);
	return err;
}
