// SPDX-License-Identifier: MIT
/* The flame graph's call tree: the model's stacks merged by path, capped, written as columns. */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "export.h"
#include "flame.h"
#include "json.h"

/* A (thread, stack) row of the model with the process it belongs to. */
struct path {
	int proc;
	const struct ls_mstack *stack;
	struct ls_export_row row;
};

static const struct ls_mframe native_frame = {.func = LS_FLAME_NATIVE, .line = 0};

/* Frames root first; a stack without a Python frame is the one frame [native]. */
static int path_len(const struct path *p)
{
	return p->stack->depth ? p->stack->depth : 1;
}

static const struct ls_mframe *path_frame(const struct path *p, int k)
{
	return p->stack->depth ? &p->stack->frames[p->stack->depth - 1 - k] : &native_frame;
}

static int cmp_int(int a, int b)
{
	return a < b ? -1 : a > b;
}

static int by_path(const void *a, const void *b)
{
	const struct path *x = a, *y = b;
	int nx = path_len(x), ny = path_len(y), c = cmp_int(x->proc, y->proc);

	for (int k = 0; !c && k < nx && k < ny; k++) {
		const struct ls_mframe *f = path_frame(x, k), *g = path_frame(y, k);

		c = cmp_int(f->func, g->func) ?: cmp_int(f->line, g->line);
	}
	return c ?: cmp_int(nx, ny);
}

static int add_node(struct ls_flame *f, size_t *cap, int parent, int proc, int func, int line)
{
	struct ls_flame_node *v = ls_array_grow(f->nodes, cap, f->n, sizeof(*v), 1024);

	if (!v)
		return -ENOMEM;
	f->nodes = v;
	if (f->n >= INT32_MAX)
		return -E2BIG;
	memset(&v[f->n], 0, sizeof(v[f->n]));
	v[f->n].parent = parent;
	v[f->n].proc = proc;
	v[f->n].func = func;
	v[f->n].line = line;
	return f->n++;
}

static void add_values(struct ls_flame_node *to, const struct ls_flame_node *from)
{
	to->count += from->count;
	for (int k = 0; k < 4; k++)
		to->ns[k] += from->ns[k];
}

/*
 * The whole tree: paths sorted root first, so that a path shares its nodes with the previous
 * one up to their first difference, and every node comes after its parent.
 */
static int build_full(const struct ls_model *m, struct ls_flame *f)
{
	const struct ls_mstacks *s = m->stacks;
	struct path *v = NULL;
	size_t n = 0, cap = 0, ncap = 0;
	struct ls_export_row r;
	int *cur = NULL, maxd = 1, err = 0;

	for (size_t i = 0; ls_export__next(s, &i, &r);) {
		struct path *p = ls_array_grow(v, &cap, n, sizeof(*v), 256);

		if (!p) {
			err = -ENOMEM;
			goto cleanup;
		}
		v = p;
		v[n].proc = s->threads[r.thread].proc;
		v[n].stack = &s->stacks[r.stack];
		v[n].row = r;
		if (v[n].stack->depth > maxd)
			maxd = v[n].stack->depth;
		n++;
	}
	if (n)
		qsort(v, n, sizeof(*v), by_path);
	cur = malloc(((size_t)maxd + 1) * sizeof(*cur));
	if (!cur) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (size_t i = 0; i < n; i++) {
		const struct path *p = &v[i], *q = i ? &v[i - 1] : NULL;
		int len = path_len(p), common = 0;
		struct ls_flame_node *leaf;

		if (!q || q->proc != p->proc) {
			cur[0] = add_node(f, &ncap, -1, p->proc, LS_FLAME_ROOT, 0);
			if (cur[0] < 0) {
				err = cur[0];
				goto cleanup;
			}
		} else {
			for (int lq = path_len(q); common < len && common < lq; common++) {
				const struct ls_mframe *a = path_frame(p, common),
						       *b = path_frame(q, common);

				if (a->func != b->func || a->line != b->line)
					break;
			}
		}
		/* cur[k + 1] is the node of frame k */
		for (int k = common; k < len; k++) {
			const struct ls_mframe *fr = path_frame(p, k);

			cur[k + 1] = add_node(f, &ncap, cur[k], p->proc, fr->func, fr->line);
			if (cur[k + 1] < 0) {
				err = cur[k + 1];
				goto cleanup;
			}
		}
		leaf = &f->nodes[cur[len]];
		leaf->count += p->row.count;
		for (int k = 0; k < 4; k++)
			leaf->ns[k] += p->row.ns[k];
	}
cleanup:
	free(cur);
	free(v);
	return err;
}

struct rank {
	int64_t ns, count; /* the subtree's total */
	int node;
};

static int by_weight(const void *a, const void *b)
{
	const struct rank *x = a, *y = b;

	if (x->ns != y->ns)
		return x->ns > y->ns ? -1 : 1;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return cmp_int(x->node, y->node);
}

/*
 * Keeps the heaviest nodes (a parent is never lighter than its child, and comes first on a tie,
 * so what is kept stays connected), room reserved for an "(other)" node below every kept node
 * with children; what is left out is summed into its kept parent's "(other)".
 */
static int cap_tree(struct ls_flame *f, size_t max)
{
	struct ls_flame_node *tot = NULL, *out = NULL;
	int *nkids = NULL, *map = NULL, *other = NULL;
	struct rank *rk = NULL;
	size_t n = f->n, used = 0, nr = 0, k = 0;
	int err = -ENOMEM;

	tot = malloc(n * sizeof(*tot));
	nkids = calloc(n, sizeof(*nkids));
	map = malloc(n * sizeof(*map));
	other = malloc(n * sizeof(*other));
	rk = malloc(n * sizeof(*rk));
	if (!tot || !nkids || !map || !other || !rk)
		goto cleanup;
	memcpy(tot, f->nodes, n * sizeof(*tot));
	for (size_t i = n; i-- > 0;) {
		int p = f->nodes[i].parent;

		map[i] = -1;
		other[i] = -1;
		if (p < 0) {
			used += 2; /* a root is always kept, with room for its "(other)" */
			continue;
		}
		add_values(&tot[p], &tot[i]);
		nkids[p]++;
	}
	for (size_t i = 0; i < n; i++) {
		if (f->nodes[i].parent < 0)
			continue;
		rk[nr].ns = tot[i].ns[0] + tot[i].ns[1] + tot[i].ns[2] + tot[i].ns[3];
		rk[nr].count = tot[i].count;
		rk[nr++].node = i;
	}
	qsort(rk, nr, sizeof(*rk), by_weight);
	for (size_t i = 0; i < n; i++)
		if (f->nodes[i].parent < 0)
			map[i] = 0;
	for (size_t i = 0; i < nr; i++) {
		int x = rk[i].node;
		size_t need = 1 + (nkids[x] > 0);

		if (map[f->nodes[x].parent] < 0 || used + need > max)
			continue;
		map[x] = 0;
		used += need;
	}
	/* the kept nodes in their order, then an "(other)" for each parent that lost children */
	out = malloc((used ? used : 1) * sizeof(*out));
	if (!out)
		goto cleanup;
	for (size_t i = 0; i < n; i++) {
		if (map[i] < 0)
			continue;
		map[i] = k;
		out[k] = f->nodes[i];
		if (out[k].parent >= 0)
			out[k].parent = map[out[k].parent];
		k++;
	}
	f->folded = 0;
	for (size_t i = 0; i < n; i++) {
		int p = f->nodes[i].parent;
		struct ls_flame_node *o;

		if (map[i] >= 0 || p < 0 || map[p] < 0)
			continue;
		/* map[] holds new indices now: kept nodes were all numbered above */
		if (other[p] < 0) {
			o = &out[k];
			memset(o, 0, sizeof(*o));
			o->parent = map[p];
			o->proc = f->nodes[p].proc;
			o->func = LS_FLAME_OTHER;
			other[p] = k++;
		}
		add_values(&out[other[p]], &tot[i]);
	}
	for (size_t i = 0; i < n; i++)
		f->folded += map[i] < 0;
	free(f->nodes);
	f->nodes = out;
	f->n = k;
	out = NULL;
	err = 0;
cleanup:
	free(out);
	free(rk);
	free(other);
	free(map);
	free(nkids);
	free(tot);
	return err;
}

int ls_flame__new(const struct ls_model *m, size_t max_nodes, struct ls_flame **out)
{
	struct ls_flame *f;
	int err;

	if (!m->stacks)
		return -EINVAL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	err = build_full(m, f);
	if (!err && f->n > max_nodes)
		err = cap_tree(f, max_nodes);
	if (err) {
		ls_flame__free(f);
		return err;
	}
	*out = f;
	return 0;
}

void ls_flame__free(struct ls_flame *f)
{
	if (!f)
		return;
	free(f->nodes);
	free(f);
}

void ls_flame__json(struct ls_jbuf *b, const struct ls_model *m, const struct ls_flame *f)
{
	const struct ls_flame_node *N;
	size_t n, nf = 0;
	int *fidx, *funcs;

	if (!f) {
		ls_jbuf__str(b, "null");
		return;
	}
	N = f->nodes;
	n = f->n;
	/* the functions the tree uses, numbered in order of first use */
	fidx = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof(*fidx));
	funcs = malloc((m->nfuncs ? m->nfuncs : 1) * sizeof(*funcs));
	if (!fidx || !funcs) {
		free(fidx);
		free(funcs);
		b->failed = true;
		return;
	}
	for (size_t i = 0; i < m->nfuncs; i++)
		fidx[i] = -1;
	for (size_t i = 0; i < n; i++) {
		if (N[i].func >= 0 && fidx[N[i].func] < 0) {
			fidx[N[i].func] = nf;
			funcs[nf++] = N[i].func;
		}
	}
	ls_jbuf__str(b, "{\"max_nodes\":");
	ls_jbuf__int(b, LS_FLAME_MAX_NODES);
	ls_jbuf__str(b, ",\"folded\":");
	ls_jbuf__int(b, f->folded);
	ls_jbuf__str(b, ",\"funcs\":");
	FIRST_COL(b, "name", nf, i, ls_jbuf__json(b, ls_json__str(m->funcs[funcs[i]].qualname)));
	COL(b, "src", nf, i, ls_jbuf__int(b, m->funcs[funcs[i]].file));
	COL(b, "def_line", nf, i, ls_jbuf__int(b, m->funcs[funcs[i]].def_line));
	ls_jbuf__str(b, "},\"nodes\":");
	FIRST_COL(b, "parent", n, i, ls_jbuf__int(b, N[i].parent));
	COL(b, "func", n, i, ls_jbuf__int(b, N[i].func >= 0 ? fidx[N[i].func] : N[i].func));
	COL(b, "proc", n, i, ls_jbuf__int(b, N[i].proc));
	COL(b, "line", n, i, ls_jbuf__int(b, N[i].line));
	if (m->sampled)
		COL(b, "samples", n, i, ls_jbuf__int(b, N[i].count));
	else
		ls_jbuf__null_col(b, "samples");
	COL(b, "cpu_s", n, i, ls_jbuf__secs(b, N[i].ns[0]));
	if (m->wall) {
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, N[i].ns[1]));
		COL(b, "gil_wait_s", n, i, ls_jbuf__secs(b, N[i].ns[2]));
		COL(b, "runq_s", n, i, ls_jbuf__secs(b, N[i].ns[3]));
	} else {
		ls_jbuf__null_col(b, "wait_s");
		ls_jbuf__null_col(b, "gil_wait_s");
		ls_jbuf__null_col(b, "runq_s");
	}
	ls_jbuf__str(b, "}}");
	free(fidx);
	free(funcs);
}
