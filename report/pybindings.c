// SPDX-License-Identifier: MIT
/*
 * A parsed source's bindings settled (see pyparse_int.h): those under `global`/`nonlocal` moved to
 * the scope they name, then all of them grouped by scope and name for bind_first().
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyparse_int.h"

static int cmp_binding(const void *a, const void *b, void *arg)
{
	const struct binding *binds = arg;
	const struct binding *x = &binds[*(const uint32_t *)a], *y = &binds[*(const uint32_t *)b];

	if (x->scope != y->scope)
		return x->scope < y->scope ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	return *(const uint32_t *)a < *(const uint32_t *)b ? -1 : 1;
}

/* Regroups this source's bindings by scope and name (bind_first's binary search), keeping
 * the references of `from m import x` pointing at their binding. */
static int sort_bindings(struct parser *p, size_t scope0, size_t ref0)
{
	struct ls_pyindex *ix = p->ix;
	size_t n = ix->binds.n - p->bind0, i;
	uint32_t *order = malloc((n + 1) * sizeof(*order)),
		 *where = malloc((n + 1) * sizeof(*where));
	struct binding *copy = malloc((n + 1) * sizeof(*copy));

	if (!order || !where || !copy) {
		free(order);
		free(where);
		free(copy);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		order[i] = p->bind0 + i;
	qsort_r(order, n, sizeof(*order), cmp_binding, ix->binds.v);
	for (i = 0; i < n; i++) {
		copy[i] = ix->binds.v[order[i]];
		where[order[i] - p->bind0] = p->bind0 + i;
	}
	if (n)
		memcpy(ix->binds.v + p->bind0, copy, n * sizeof(*copy));
	for (i = ref0; i < ix->refs.n; i++)
		if (ix->refs.v[i].binding >= 0)
			ix->refs.v[i].binding = where[ix->refs.v[i].binding - p->bind0];
	for (i = scope0; i < ix->scopes.n; i++)
		ix->scopes.v[i].bcount = 0;
	for (i = n; i-- > 0;) {
		struct scope *sc = &ix->scopes.v[ix->binds.v[p->bind0 + i].scope];

		sc->bfirst = p->bind0 + i;
		sc->bcount++;
	}
	free(order);
	free(where);
	free(copy);
	return 0;
}

/*
 * Bindings under `global x` belong to the module and those under `nonlocal x` to the enclosing
 * function that binds x; then every scope's bindings are grouped for lookups.
 */
int pyx_finish_bindings(struct parser *p, size_t scope0, size_t ref0)
{
	struct ls_pyindex *ix = p->ix;
	int module = ix->srcs.v[p->src].module_scope, err;
	bool moved = false;
	size_t b;

	for (b = p->bind0; b < ix->binds.n; b++) {
		struct binding *bd = &ix->binds.v[b];
		uint32_t *decl = pyx_hmap_get(&p->decls, sn_key(bd->scope, bd->name));

		if (decl && *decl == B_GLOBAL && bd->kind != B_GLOBAL)
			bd->scope = module;
	}
	err = sort_bindings(p, scope0, ref0);
	for (b = p->bind0; !err && b < ix->binds.n; b++) {
		struct binding *bd = &ix->binds.v[b];
		uint32_t *decl = pyx_hmap_get(&p->decls, sn_key(bd->scope, bd->name));
		int s;

		if (!decl || *decl != B_NONLOCAL || bd->kind == B_NONLOCAL)
			continue;
		s = ix->scopes.v[bd->scope].parent;
		while (s >= 0 && ix->scopes.v[s].kind != SC_MODULE &&
		       (ix->scopes.v[s].kind == SC_CLASS || bind_first(ix, s, bd->name) < 0))
			s = ix->scopes.v[s].parent;
		if (s >= 0 && ix->scopes.v[s].kind != SC_MODULE) {
			bd->scope = s;
			moved = true;
		}
	}
	if (!err && moved)
		err = sort_bindings(p, scope0, ref0);
	return err;
}
