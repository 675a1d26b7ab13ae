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
	char *key; /* the notebook cell it is a text of (owned), or NULL */
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
 * Texts of the same notebook cell (edited and run again while recorded): each is kept, labelled
 * "revision K of N" in capture order. A cell is known by its key: its code-cell index in the
 * notebook file, or the id the front end sent with it (python-usdt); history rows say nothing of
 * which cell they were, so a text found only there is linked to none.
 */
static void label_revisions(struct ls_mfile *nb, const struct nb_row *rows)
{
	for (size_t i = 0; i < nb->ncells; i++) {
		struct ls_mcell *c = &nb->cells[i];
		int k = 0, total = 0;

		if (!c->how || !rows[i].key)
			continue;
		for (size_t j = 0; j < nb->ncells; j++) {
			const struct ls_mcell *o = &nb->cells[j];

			if (o->how && rows[j].key && !strcmp(rows[j].key, rows[i].key)) {
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
	label_revisions(nb, rows);
	if (at)
		at--; /* the last cell's line needs no newline */
	text[at] = 0;
	nb->text = text;
	nb->len = at;
	nb->nlines = line - 1;
	return 0;
}

static const char *how_of(const char *t)
{
	if (!t)
		return NULL;
	if (!strcmp(t, "history"))
		return "history";
	if (!strcmp(t, "python-usdt"))
		return "python-usdt";
	return !strcmp(t, "notebook") ? "notebook" : NULL;
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

/* The code IPython's %time and %%time compile from a cell: its lines are the cell's. */
static bool timed_code(const struct ls_mfile *f)
{
	return !strcmp(f->path, "<timed exec>") || !strcmp(f->path, "<timed eval>");
}

/*
 * Where a line of %time/%%time's code is in its cell: the magic's line n of the notebook calls
 * it; `%%time` (n is the cell's first line) runs the rest of the cell, so its line k is n + k;
 * `%time STMT` runs the rest of line n. 0 when line n is neither.
 */
static int timed_line(const struct ls_mfile *nb, int n, int k)
{
	const struct ls_mcell *c = ls_mfile__cell_at(nb, n);
	const char *t;
	size_t len;

	t = c ? ls_mfile__line(nb, n, &len) : NULL;
	while (t && len && (*t == ' ' || *t == '\t'))
		t++, len--;
	if (!t || len < 5 || t[0] != '%')
		return 0;
	if (len >= 6 && !strncmp(t, "%%time", 6) && (len == 6 || t[6] == ' ') && n == c->first)
		return k >= 1 && k < c->nlines ? n + k : 0;
	if (!strncmp(t, "%time", 5) && (len == 5 || t[5] == ' '))
		return k == 1 ? n : 0;
	return 0;
}

/*
 * Frames of %time/%%time's code (<timed exec>, a file of its own with no text) moved onto the
 * notebook cell that ran the magic: the nearest outer frame in a notebook, through IPython's
 * own frames, names the cell and the magic's line.
 */
static void fold_timed_frames(struct loader *L)
{
	struct ls_model *m = L->m;

	for (size_t s = 0; s < L->nstacks; s++) {
		uint32_t *fr = L->stacks[s].frames;

		for (int i = 0; i < L->stacks[s].depth; i++) {
			int f = lsm_func_at(L, fr[2 * i]), line = 0, j = i + 1, g = -1;

			if (f < 0 || !timed_code(&m->files[m->funcs[f].file]))
				continue;
			for (; j < L->stacks[s].depth; j++) {
				g = lsm_func_at(L, fr[2 * j]);
				if (g >= 0 && ls_mfile__project(&m->files[m->funcs[g].file]))
					break;
			}
			if (j < L->stacks[s].depth &&
			    !strcmp(m->files[m->funcs[g].file].kind, "notebook"))
				line = timed_line(&m->files[m->funcs[g].file], (int)fr[2 * j + 1],
						  (int)fr[2 * i + 1]);
			if (line > 0) {
				fr[2 * i] = fr[2 * j];
				fr[2 * i + 1] = line;
			}
		}
	}
}

struct runs_load {
	struct loader *L;
	const struct nb_files *nf;
	size_t cap;
};

static int run_row(void *ctx, const struct ls_prow_nbrun *r)
{
	struct runs_load *c = ctx;
	struct ls_model *m = c->L->m;
	int child = file_of(c->nf, r->id), parent = file_of(c->nf, r->parent_id);
	const struct ls_mfile *pf = parent >= 0 ? &m->files[parent] : NULL;
	const struct ls_mcell *cell = NULL;
	struct ls_mnbrun *v;
	uint64_t proc, fi;

	if (child < 0 || !pf || r->parent_line <= 0 ||
	    !ls_hashmap__get(&c->L->proc_idx, r->proc_id, &proc) ||
	    !ls_hashmap__get(&c->L->file_idx, r->parent_file_id, &fi))
		return 0; /* a child with no sampled cell, or a parent line we do not hold */
	for (size_t k = 0; k < pf->ncells && !cell; k++)
		if (pf->cells[k].file == (int)fi)
			cell = &pf->cells[k];
	if (!cell || r->parent_line > cell->nlines)
		return 0;
	v = ls_array_grow(m->nbruns, &c->cap, m->nnbruns, sizeof(*v), 4);
	if (!v)
		return -ENOMEM;
	m->nbruns = v;
	v[m->nnbruns++] = (struct ls_mnbrun){.proc = (int)proc,
					     .src = parent,
					     .line = cell->first + r->parent_line - 1,
					     .child = child};
	return 0;
}

/* Notebooks run by a line of another (%run): the parent's line, moved into its numbering */
static int load_runs(struct loader *L, const struct nb_files *nf)
{
	struct runs_load c = {L, nf, 0};

	return ls_profile__nbruns(L->prof, run_row, &c);
}

/*
 * The notebook cell a row is a text of, checked (it comes from a profile): "index:N" or "id:" and
 * at most 127 printable characters; a notebook-file cell of an older profile is its index
 */
static char *key_of(const struct ls_prow_cell *r)
{
	const char *k = r->key;
	char *out;

	if (k && !strncmp(k, "index:", 6) && strspn(k + 6, "0123456789") == strlen(k + 6) &&
	    strlen(k + 6) > 0 && strlen(k + 6) < 10)
		return lsm_dup(k);
	if (k && !strncmp(k, "id:", 3) && strlen(k) > 3 && strlen(k) < 3 + 128) {
		for (const char *p = k + 3; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return NULL;
		return lsm_dup(k);
	}
	if (!k && r->how && !strcmp(r->how, "notebook") && r->number > 0 &&
	    asprintf(&out, "index:%d", r->number) >= 0)
		return out;
	return NULL;
}

/* the sampled cells, in capture order, each claiming its file */
struct cells_load {
	struct loader *L;
	struct nb_row *rows;
	char **paths;
	size_t n, cap;
};

static int cell_row(void *ctx, const struct ls_prow_cell *r)
{
	struct cells_load *c = ctx;
	struct ls_model *m = c->L->m;
	struct nb_row *v;
	uint64_t fi;
	char **pv;

	if (!ls_hashmap__get(&c->L->file_idx, r->file_id, &fi) ||
	    strcmp(m->files[fi].kind, "python"))
		return 0; /* a cell file the profile does not hold, or named twice */
	v = ls_array_grow(c->rows, &c->cap, c->n, sizeof(*v), 16);
	if (!v)
		return -ENOMEM;
	c->rows = v;
	pv = realloc(c->paths, (c->cap > c->n ? c->cap : c->n + 1) * sizeof(*pv));
	if (!pv)
		return -ENOMEM;
	c->paths = pv;
	c->rows[c->n].notebook = r->notebook_id;
	c->rows[c->n].file = (int)fi;
	c->rows[c->n].number = r->number;
	c->rows[c->n].how = how_of(r->how);
	c->rows[c->n].key = key_of(r);
	c->paths[c->n] = lsm_dup(r->notebook);
	m->files[fi].kind = "cell"; /* claimed: a second row naming it is skipped */
	c->n++;
	return 0;
}

int lsm_load_notebooks(struct loader *L)
{
	struct ls_model *m = L->m;
	struct cells_load c = {.L = L};
	struct nb_row *rows;
	size_t n, fcap = m->nfiles;
	char **paths;
	int *max = NULL;
	struct nb_files nf = {};
	int err;

	err = ls_profile__cells(L->prof, cell_row, &c);
	rows = c.rows;
	paths = c.paths;
	n = c.n;
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
	if (!err && n) {
		move_frames(L);
		fold_timed_frames(L);
	}
	if (!err && n)
		err = load_runs(L, &nf);
	free(nf.ids);
	free(nf.idx);
	for (size_t i = 0; i < n; i++) {
		free(paths[i]);
		free(rows[i].key);
	}
	free(paths);
	free(rows);
	free(max);
	return err;
}
