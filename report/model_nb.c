// SPDX-License-Identifier: MIT
/*
 * Notebooks in the model: the cells an IPython kernel ran (one file each in the profile) become
 * one source, their texts concatenated in capture order, and every line that refers to a cell is
 * moved to the notebook's numbering (line = cell.first + cell_line - 1).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "model_int.h"

/* empty lines a cell without text is given, at most, and all of a notebook's such cells */
#define MAX_CELL_LINES 100000
#define MAX_PAD_LINES  1000000

const struct ls_mcell *ls_mfile__cell_at(const struct ls_mfile *f, int line)
{
	size_t lo = 0, hi = f->ncells;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (f->cells[mid].first + f->cells[mid].nlines <= line)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->ncells && f->cells[lo].first <= line ? &f->cells[lo] : NULL;
}

struct nb_row {
	int64_t notebook;
	int file; /* model file index */
	int number;
	const char *how;
};

/*
 * The highest line the profile names in each file (one pass over functions and stacks): what a
 * cell without text must hold. NULL on -ENOMEM.
 */
static int *max_lines(const struct loader *L)
{
	const struct ls_model *m = L->m;
	int *max = calloc(m->nfiles ? m->nfiles : 1, sizeof(*max));

	if (!max)
		return NULL;
	for (size_t i = 0; i < m->nfuncs; i++)
		if (m->funcs[i].firstlineno > max[m->funcs[i].file])
			max[m->funcs[i].file] = m->funcs[i].firstlineno;
	for (size_t s = 0; s < L->nstacks; s++)
		for (int i = 0; i < L->stacks[s].depth; i++) {
			int f = lsm_func_at((struct loader *)L, L->stacks[s].frames[2 * i]);
			int line = (int)L->stacks[s].frames[2 * i + 1];

			if (f >= 0 && line > max[m->funcs[f].file])
				max[m->funcs[f].file] = line;
		}
	for (size_t i = 0; i < m->nfiles; i++)
		max[i] = max[i] < 1 ? 1 : max[i] < MAX_CELL_LINES ? max[i] : MAX_CELL_LINES;
	return max;
}

/*
 * The same code cell of the notebook file found with another text (edited and run again while
 * recorded): each text is kept, labelled "revision K of N" in capture order. History rows say
 * nothing of which cell they were, so only cells found in the notebook file are linked.
 */
static void label_revisions(struct ls_mfile *nb)
{
	for (size_t i = 0; i < nb->ncells; i++) {
		struct ls_mcell *c = &nb->cells[i];
		int k = 0, total = 0;

		if (!c->how || strcmp(c->how, "notebook") || c->number <= 0)
			continue;
		for (size_t j = 0; j < nb->ncells; j++) {
			const struct ls_mcell *o = &nb->cells[j];

			if (o->how && !strcmp(o->how, "notebook") && o->number == c->number) {
				total++;
				k += j <= i;
			}
		}
		if (total <= 1)
			continue;
		snprintf(c->revision, sizeof(c->revision), "revision %d of %d", k, total);
		c->rev = k;
		c->nrevs = total;
	}
}

/* Appends the notebook of rows[0..n) (one notebook's cells, in capture order) to the files */
static int add_notebook(struct loader *L, const char *path, const struct nb_row *rows, size_t n,
			const int *max, size_t *fcap)
{
	struct ls_model *m = L->m;
	struct ls_mfile *nb, *v;
	size_t len = 0, at = 0;
	int line = 1, idx;
	long pad = MAX_PAD_LINES,
	     budget = MAX_PAD_LINES; /* budget: pad, as the loop below spends it */
	const char *slash;
	char *text;

	for (size_t i = 0; i < n; i++) {
		const struct ls_mfile *c = &m->files[rows[i].file];
		long k = max[rows[i].file] <= budget ? max[rows[i].file] : 1;

		if (!c->text)
			budget -= k;
		len += (c->text ? c->len : (size_t)k) + 1;
	}
	text = malloc(len + 1);
	v = ls_array_grow(m->files, fcap, m->nfiles, sizeof(*v), 256);
	if (!text || !v) {
		free(text);
		return -ENOMEM;
	}
	m->files = v;
	idx = (int)m->nfiles;
	nb = &m->files[idx];
	memset(nb, 0, sizeof(*nb));
	nb->id = -1;
	nb->kind = "notebook";
	nb->path = strdup(path);
	nb->cells = calloc(n, sizeof(*nb->cells));
	if (!nb->path || !nb->cells) {
		free(nb->path);
		free(nb->cells);
		free(text);
		return -ENOMEM;
	}
	slash = strrchr(nb->path, '/');
	nb->name = slash && slash[1] ? slash + 1 : nb->path;
	m->nfiles++;
	for (size_t i = 0; i < n; i++) {
		struct ls_mfile *c = &m->files[rows[i].file];
		struct ls_mcell *cell = &nb->cells[i];
		size_t clen = c->len;
		int nl;

		if (c->text) {
			/* a cell's last newline ends its last line; cells are joined by one */
			if (clen && c->text[clen - 1] == '\n')
				clen--;
			memcpy(text + at, c->text, clen);
			at += clen;
			nl = lsm_count_lines(c->text, clen);
			if (!nl)
				nl = 1;
		} else {
			/* never guessed: as many empty lines as the profile names */
			/* a hostile profile's thousand huge cells: past the budget, one line each
			 */
			nl = max[rows[i].file] <= pad ? max[rows[i].file] : 1;
			pad -= nl;
			memset(text + at, '\n', nl - 1);
			at += nl - 1;
			cell->unavailable = strdup(c->unavailable ? c->unavailable
								  : "notebook cell not verified");
		}
		text[at++] = '\n';
		cell->first = line;
		cell->nlines = nl;
		cell->number = rows[i].number;
		cell->how = rows[i].how;
		cell->file = rows[i].file;
		if (cell->how && cell->number > 0)
			snprintf(cell->label, sizeof(cell->label), "Cell %d", cell->number);
		else if (cell->how)
			snprintf(cell->label, sizeof(cell->label), "Cell ?");
		else
			snprintf(cell->label, sizeof(cell->label), "Unverified cell (%s)", c->name);
		line += nl;
		nb->ncells++;
		for (size_t f = 0; f < m->nfuncs; f++) {
			struct ls_mfunc *fn = &m->funcs[f];

			if (fn->file != rows[i].file)
				continue;
			L->func_shift[f] = cell->first - 1;
			fn->file = idx;
			fn->firstlineno += cell->first - 1;
		}
	}
	label_revisions(nb);
	if (at)
		at--; /* the last cell's line needs no newline */
	text[at] = 0;
	nb->text = text;
	nb->len = at;
	nb->nlines = line - 1;
	return 0;
}

static const char *how_of(const unsigned char *t)
{
	if (!t)
		return NULL;
	if (!strcmp((const char *)t, "history"))
		return "history";
	return !strcmp((const char *)t, "notebook") ? "notebook" : NULL;
}

/* Stored frames of cells moved into their notebooks (the functions are already) */
static void move_frames(struct loader *L)
{
	for (size_t s = 0; s < L->nstacks; s++)
		for (int i = 0; i < L->stacks[s].depth; i++) {
			int f = lsm_func_at(L, L->stacks[s].frames[2 * i]);

			if (f >= 0)
				L->stacks[s].frames[2 * i + 1] += L->func_shift[f];
		}
}

/* The model file of each notebook id (ids[i] -> files[idx[i]]) */
struct nb_files {
	int64_t *ids;
	int *idx;
	size_t n;
};

static int file_of(const struct nb_files *nf, int64_t id)
{
	for (size_t i = 0; i < nf->n; i++)
		if (nf->ids[i] == id)
			return nf->idx[i];
	return -1;
}

/* Notebooks run by a line of another (%run): the parent's line, moved into its numbering */
static int load_runs(struct loader *L, const struct nb_files *nf)
{
	struct ls_model *m = L->m;
	size_t cap = 0;
	sqlite3_stmt *st;
	int rc, err;

	err = lsm_prepare(
		L,
		"SELECT id, process_id, parent_id, parent_file_id, parent_line FROM notebooks"
		" WHERE parent_id IS NOT NULL ORDER BY id",
		&st);
	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		int child = file_of(nf, sqlite3_column_int64(st, 0)),
		    parent = file_of(nf, sqlite3_column_int64(st, 2)),
		    line = sqlite3_column_int(st, 4);
		const struct ls_mfile *pf = parent >= 0 ? &m->files[parent] : NULL;
		const struct ls_mcell *cell = NULL;
		struct ls_mnbrun *v;
		uint64_t proc, fi;

		if (child < 0 || !pf || line <= 0 ||
		    !ls_hashmap__get(&L->proc_idx, sqlite3_column_int64(st, 1), &proc) ||
		    !ls_hashmap__get(&L->file_idx, sqlite3_column_int64(st, 3), &fi))
			continue; /* a child with no sampled cell, or a parent line we do not hold
				   */
		for (size_t k = 0; k < pf->ncells && !cell; k++)
			if (pf->cells[k].file == (int)fi)
				cell = &pf->cells[k];
		if (!cell || line > cell->nlines)
			continue;
		v = ls_array_grow(m->nbruns, &cap, m->nnbruns, sizeof(*v), 4);
		if (!v) {
			err = -ENOMEM;
			break;
		}
		m->nbruns = v;
		v[m->nnbruns++] = (struct ls_mnbrun){.proc = (int)proc,
						     .src = parent,
						     .line = cell->first + line - 1,
						     .child = child};
	}
	sqlite3_finalize(st);
	return rc < 0 && !err ? rc : err;
}

int lsm_load_notebooks(struct loader *L)
{
	struct ls_model *m = L->m;
	struct nb_row *rows = NULL, *v;
	size_t n = 0, cap = 0, fcap = m->nfiles;
	char **paths = NULL;
	int *max = NULL;
	struct nb_files nf = {};
	sqlite3_stmt *st;
	int rc, err;

	if (L->schema < 4)
		return 0; /* recorded before notebooks were */
	err = lsm_prepare(L,
			  "SELECT c.notebook_id, c.file_id, c.number, c.how,"
			  " coalesce(n.path, 'kernel ' || n.pid) FROM cells c"
			  " JOIN notebooks n ON n.id = c.notebook_id ORDER BY c.notebook_id, c.seq",
			  &st);
	if (err)
		return err;
	while ((rc = lsm_step(L, st)) > 0) {
		uint64_t fi;
		char **pv;

		if (!ls_hashmap__get(&L->file_idx, sqlite3_column_int64(st, 1), &fi) ||
		    strcmp(m->files[fi].kind, "python"))
			continue; /* a cell file the profile does not hold, or named twice */
		v = ls_array_grow(rows, &cap, n, sizeof(*v), 16);
		pv = v ? realloc(paths, (cap > n ? cap : n + 1) * sizeof(*paths)) : NULL;
		if (v)
			rows = v;
		if (!v || !pv) {
			err = -ENOMEM;
			break;
		}
		paths = pv;
		rows[n].notebook = sqlite3_column_int64(st, 0);
		rows[n].file = (int)fi;
		rows[n].number = sqlite3_column_int(st, 2);
		rows[n].how = how_of(sqlite3_column_text(st, 3));
		paths[n] = lsm_col_dup(st, 4);
		m->files[fi].kind = "cell"; /* claimed: a second row naming it is skipped */
		n++;
	}
	sqlite3_finalize(st);
	if (rc < 0 && !err)
		err = rc;
	if (!err && n) {
		L->func_shift = calloc(m->nfuncs ? m->nfuncs : 1, sizeof(*L->func_shift));
		max = max_lines(L);
		nf.ids = calloc(n, sizeof(*nf.ids));
		nf.idx = calloc(n, sizeof(*nf.idx));
		if (!L->func_shift || !max || !nf.ids || !nf.idx)
			err = -ENOMEM;
	}
	for (size_t i = 0, start = 0; !err && i < n; i++) {
		if (i + 1 < n && rows[i + 1].notebook == rows[start].notebook)
			continue;
		err = add_notebook(L, paths[start] ? paths[start] : "notebook", rows + start,
				   i + 1 - start, max, &fcap);
		nf.ids[nf.n] = rows[start].notebook;
		nf.idx[nf.n++] = (int)m->nfiles - 1;
		start = i + 1;
	}
	if (!err && n)
		move_frames(L);
	if (!err && n)
		err = load_runs(L, &nf);
	free(nf.ids);
	free(nf.idx);
	for (size_t i = 0; i < n; i++)
		free(paths[i]);
	free(paths);
	free(rows);
	free(max);
	return err;
}
