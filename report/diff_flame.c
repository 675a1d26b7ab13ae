// SPDX-License-Identifier: MIT
/*
 * The differential flame graph of `report --diff`: both profiles' call trees (flame.c) merged
 * over processes into one tree whose nodes carry the new and the base profile's self values. A
 * frame is the same in both when its file path and qualified name are and the base's line is
 * where ls_diff__line_in_new() finds it in the new file, as the line tables match lines. Nodes
 * only in the base are kept (with nothing of the new profile), so that every base total
 * includes them.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "diff_flame.h"
#include "flame.h"
#include "hashmap.h"
#include "json.h"

/* A function of either profile, by file path and qualified name. */
struct dfunc {
	const char *path, *name;
	int def_line; /* the new profile's when it has the function, else the base's */
	int src;      /* the new profile's file index, -1 when only the base has the function */
	int end_line; /* the new profile's last line of it; 0 when unknown */
};

struct dnode {
	int parent;	      /* merged index, -1 for the root */
	int func;	      /* index into funcs, or enum ls_flame_special */
	int off;	      /* line - def_line in the new profile: where in its function it is */
	bool gone;	      /* a line the new file does not have (off is then the base's) */
	int64_t count, ns[4]; /* new self values */
	int64_t bcount, bns[4];
};

struct merge {
	const struct ls_model *m; /* the new profile */
	struct dnode *v;
	size_t n, cap;
	struct dfunc *f;
	size_t nf, fcap;
	struct ls_hashmap idx, fidx;
	struct ls_hashmap lines; /* (base file, line) -> its new line + 1, 0 when gone */
	const void *want;	 /* the node or function sought by same_node() and same_func() */
};

static uint64_t str_hash(uint64_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static uint64_t func_hash(const struct dfunc *f)
{
	return ls_hash64(str_hash(str_hash(0, f->path), f->name));
}

static bool same_func(const void *ctx, uint64_t i)
{
	const struct merge *M = ctx;
	const struct dfunc *a = &M->f[i], *b = M->want;

	return !strcmp(a->path, b->path) && !strcmp(a->name, b->name);
}

static bool same_node(const void *ctx, uint64_t i)
{
	const struct merge *M = ctx;
	const struct dnode *a = &M->v[i], *b = M->want;

	return a->parent == b->parent && a->func == b->func && a->off == b->off &&
	       a->gone == b->gone;
}

/* The merged function of m's function fi, added when new. */
static int func_at(struct merge *M, const struct ls_model *m, int fi, bool is_new)
{
	const struct ls_mfunc *mf = &m->funcs[fi];
	struct dfunc key = {.path = m->files[mf->file].path ?: "",
			    .name = mf->qualname ?: "",
			    .def_line = mf->def_line,
			    .src = is_new ? mf->file : -1,
			    .end_line = is_new ? mf->end_line : 0};
	uint64_t *slot;

	M->want = &key;
	slot = ls_hashmap__intern(&M->fidx, func_hash(&key), same_func, M);
	if (!slot)
		return -ENOMEM;
	if (*slot == LS_HASHMAP_EMPTY) {
		struct dfunc *v = ls_array_grow(M->f, &M->fcap, M->nf, sizeof(*v), 256);

		if (!v)
			return -ENOMEM;
		M->f = v;
		v[M->nf] = key;
		*slot = M->nf++;
	}
	return (int)*slot;
}

/*
 * Where line `line` of base function mf is in the new profile (ls_diff__line_in_new), -1 when it
 * is not there (or the new profile lacks the function), -ENOMEM. Cached by (file, line): a line is
 * on many stacks.
 */
static int base_line_in_new(struct merge *M, const struct ls_model *base, const struct ls_mfunc *mf,
			    int line)
{
	struct dfunc key = {.path = base->files[mf->file].path ?: "", .name = mf->qualname ?: ""};
	uint64_t ck = (uint64_t)(uint32_t)mf->file << 32 | (uint32_t)line, *slot, f;
	int at = -1;

	slot = ls_hashmap__slot(&M->lines, ck, UINT64_MAX);
	if (!slot)
		return -ENOMEM;
	if (*slot != UINT64_MAX)
		return (int)*slot - 1;
	M->want = &key;
	if (ls_hashmap__find(&M->fidx, func_hash(&key), same_func, M, &f) && M->f[f].src >= 0) {
		const struct dfunc *nf = &M->f[f];
		int64_t same_place = (int64_t)line + nf->def_line - mf->def_line;

		at = ls_diff__line_in_new(&M->m->files[nf->src], nf->def_line,
					  &base->files[mf->file], mf->def_line, line);
		/* its text is nowhere: edited in place, while that place is still in the function
		 */
		if (at < 0 && same_place >= nf->def_line && same_place <= nf->end_line)
			at = (int)same_place;
	}
	*slot = (uint64_t)(at + 1);
	return at;
}

/* The merged node of (parent, the frame of fn in model m), added when new. */
static int merged_at(struct merge *M, int parent, const struct ls_model *m,
		     const struct ls_flame_node *fn, bool is_new)
{
	/* every process root is the one root: processes differ from run to run */
	struct dnode key = {.parent = fn->func == LS_FLAME_ROOT ? -1 : parent, .func = fn->func};
	uint64_t *slot;

	if (fn->func >= 0) {
		const struct ls_mfunc *mf = &m->funcs[fn->func];
		int line = fn->line;

		key.func = func_at(M, m, fn->func, is_new);
		if (key.func < 0)
			return key.func;
		if (!is_new) {
			line = base_line_in_new(M, m, mf, fn->line);
			if (line == -ENOMEM)
				return line;
			key.gone = line < 0;
		}
		key.off = key.gone ? fn->line - mf->def_line : line - M->f[key.func].def_line;
	}
	M->want = &key;
	slot = ls_hashmap__intern(
		&M->idx,
		ls_hash64(((uint64_t)(uint32_t)key.parent << 32 | (uint32_t)key.func) ^
			  ls_hash64((uint32_t)key.off)),
		same_node, M);
	if (!slot)
		return -ENOMEM;
	if (*slot == LS_HASHMAP_EMPTY) {
		struct dnode *v = ls_array_grow(M->v, &M->cap, M->n, sizeof(*v), 1024);

		if (!v)
			return -ENOMEM;
		M->v = v;
		if (M->n >= INT32_MAX)
			return -E2BIG;
		v[M->n] = key;
		*slot = M->n++;
	}
	return (int)*slot;
}

/* Adds every node of f (parents first, as flame.c orders them) with its self values. */
static int add_tree(struct merge *M, const struct ls_model *m, const struct ls_flame *f,
		    bool is_new)
{
	int *at = malloc((f->n ? f->n : 1) * sizeof(*at));

	if (!at)
		return -ENOMEM;
	for (size_t i = 0; i < f->n; i++) {
		const struct ls_flame_node *fn = &f->nodes[i];
		int p = fn->parent >= 0 && (size_t)fn->parent < i ? at[fn->parent] : -1;
		int k = merged_at(M, p, m, fn, is_new);
		struct dnode *d;

		if (k < 0) {
			free(at);
			return k;
		}
		at[i] = k;
		d = &M->v[k];
		*(is_new ? &d->count : &d->bcount) += fn->count;
		for (int j = 0; j < 4; j++)
			(is_new ? d->ns : d->bns)[j] += fn->ns[j];
	}
	free(at);
	return 0;
}

/* The merged nodes as the report data's columns: the flame object's, plus the base's. */
static void write_json(struct ls_jbuf *b, const struct merge *M, bool wall)
{
	const struct dnode *V = M->v;
	const struct dfunc *F = M->f;
	size_t n = M->n;

	ls_jbuf__str(b, "{\"funcs\":");
	FIRST_COL(b, "name", M->nf, i, ls_jbuf__json(b, ls_json__str(F[i].name)));
	COL(b, "path", M->nf, i, ls_jbuf__json(b, ls_json__name(F[i].path)));
	COL(b, "src", M->nf, i, ls_jbuf__int(b, F[i].src));
	COL(b, "def_line", M->nf, i, ls_jbuf__int(b, F[i].def_line));
	ls_jbuf__str(b, "},\"nodes\":");
	FIRST_COL(b, "parent", n, i, ls_jbuf__int(b, V[i].parent));
	COL(b, "func", n, i, ls_jbuf__int(b, V[i].func));
	COL(b, "proc", n, i, ls_jbuf__int(b, 0));
	/* in the new profile's numbering: a frame only the base ran is shown where it is now */
	COL(b, "line", n, i,
	    ls_jbuf__int(b, V[i].func >= 0 ? (int64_t)F[V[i].func].def_line + V[i].off : 0));
	COL(b, "samples", n, i, ls_jbuf__int(b, V[i].count));
	COL(b, "cpu_s", n, i, ls_jbuf__secs(b, V[i].ns[0]));
	COL(b, "base_samples", n, i, ls_jbuf__int(b, V[i].bcount));
	COL(b, "base_cpu_s", n, i, ls_jbuf__secs(b, V[i].bns[0]));
	if (wall) {
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, V[i].ns[1]));
		COL(b, "gil_wait_s", n, i, ls_jbuf__secs(b, V[i].ns[2]));
		COL(b, "runq_s", n, i, ls_jbuf__secs(b, V[i].ns[3]));
		COL(b, "base_wait_s", n, i, ls_jbuf__secs(b, V[i].bns[1]));
		COL(b, "base_gil_wait_s", n, i, ls_jbuf__secs(b, V[i].bns[2]));
		COL(b, "base_runq_s", n, i, ls_jbuf__secs(b, V[i].bns[3]));
	}
	ls_jbuf__str(b, "}}");
}

void ls_diff_flame__json(struct ls_jbuf *b, const struct ls_diff *d, const struct ls_flame *f)
{
	struct ls_flame *bf = NULL;
	struct merge M = {0};
	int err;

	if (!d || !f || !d->base->stacks) {
		ls_jbuf__str(b, "null");
		return;
	}
	ls_hashmap_init(&M.idx);
	ls_hashmap_init(&M.fidx);
	ls_hashmap_init(&M.lines);
	M.m = d->m;
	err = ls_flame__new(d->base, LS_FLAME_MAX_NODES, &bf) ?:
	      add_tree(&M, d->m, f, true) ?: add_tree(&M, d->base, bf, false);
	if (err)
		b->failed = true;
	else
		write_json(b, &M, d->m->wall || d->base->wall);
	ls_flame__free(bf);
	ls_hashmap_release(&M.idx);
	ls_hashmap_release(&M.fidx);
	ls_hashmap_release(&M.lines);
	free(M.v);
	free(M.f);
}
