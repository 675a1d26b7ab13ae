// SPDX-License-Identifier: MIT
/*
 * Cross-file resolution for the Python symbol index (see pyindex.h): module names from paths,
 * Python's scoping rules over the parsed bindings, attribute lookups on modules, classes and
 * known instances, and the links. Every uncertain step gives V_NONE: no link beats a wrong one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyindex_int.h"

#define MAX_RESOLVE_DEPTH 48   /* import chains, inheritance, instance bindings */
#define MAX_CLASS_DEPTH	  1000 /* memoized class walks; deeper is answered conservatively */

enum { LOOKUP_NOT_FOUND = -1, LOOKUP_UNKNOWN = -2 };

static int64_t intern_concat(struct ls_pyindex *ix, uint32_t a, char sep, uint32_t b)
{
	size_t la = ix->str_len.v[a], lb = ix->str_len.v[b], n = 0;
	char stack[512], *buf = la + lb + 1 <= sizeof(stack) ? stack : malloc(la + lb + 1);
	int64_t id;

	if (!buf)
		return -ENOMEM;
	memcpy(buf, ix->strs.v[a], la);
	n = la;
	if (!(sep == '/' && la == 1)) /* "@" + name: a relative module at the importer's top */
		buf[n++] = sep;
	memcpy(buf + n, ix->strs.v[b], lb);
	id = pyx_intern(ix, buf, n + lb);
	if (buf != stack)
		free(buf);
	return id;
}

/* ---- modules -------------------------------------------------------------------------------- */

static bool is_identifier(const char *s, size_t n)
{
	size_t i;

	if (!n || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];

		if (!(c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9')))
			return false;
	}
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t k = strlen(suf);

	return n >= k && !memcmp(s + n - k, suf, k);
}

/* "@path" keys for relative imports and every dotted suffix for absolute ones. */
static int build_module_tables(struct ls_pyindex *ix)
{
	char *buf = NULL;
	size_t cap = 0, si;

	pyx_hmap_clear(&ix->mod_path);
	pyx_hmap_clear(&ix->mod_dotted);
	pyx_hmap_clear(&ix->mod_ns);
	pyx_hmap_clear(&ix->mod_memo);
	ix->mod_entries.n = 0;
	for (si = 0; si < ix->srcs.n; si++) {
		const char *p = ix->srcs.v[si].path;
		size_t n = strlen(p), base = n, end, start;
		int64_t key;
		uint32_t *prev;

		if (ends_with(p, n, "/__init__.py"))
			base = n - 12;
		else if (!strcmp(p, "__init__.py"))
			base = 0;
		else if (ends_with(p, n, ".py"))
			base = n - 3;
		if (pyx_vec_reserve((void **)&buf, &cap, n + 2, 1))
			return -ENOMEM;
		buf[0] = '@';
		memcpy(buf + 1, p, base);
		key = pyx_intern(ix, buf, base + 1);
		if (key < 0)
			return -ENOMEM;
		prev = pyx_hmap_get(&ix->mod_path, key);
		if (pyx_hmap_put(&ix->mod_path, key, prev ? UINT32_MAX : si))
			return -ENOMEM;
		/* directories above it are (namespace) packages for relative imports */
		for (end = base; end > 0; end--) {
			if (p[end - 1] != '/')
				continue;
			key = pyx_intern(ix, buf, end);
			if (key < 0 || pyx_hmap_put(&ix->mod_ns, key, 1))
				return -ENOMEM;
		}
		/* dotted suffixes: c, b.c, a.b.c for a/b/c.py while each part is an identifier */
		for (end = base; end > 0;) {
			size_t k, o = 0;
			uint32_t *head;

			start = end;
			while (start > 0 && p[start - 1] != '/')
				start--;
			if (!is_identifier(p + start, end - start))
				break;
			for (k = start; k < base; k++)
				buf[o++] = p[k] == '/' ? '.' : p[k];
			key = pyx_intern(ix, buf, o);
			if (key < 0)
				return -ENOMEM;
			head = pyx_hmap_get(&ix->mod_dotted, key);
			/* entries are triples: source, root length, next */
			if (VEC_PUSH(ix->mod_entries, (int)si) ||
			    VEC_PUSH(ix->mod_entries, (int)start) ||
			    VEC_PUSH(ix->mod_entries, head ? (int)*head : -1))
				return -ENOMEM;
			if (pyx_hmap_put(&ix->mod_dotted, key, ix->mod_entries.n - 3))
				return -ENOMEM;
			/* and its dotted prefixes are packages, with or without __init__.py */
			for (k = 0; k < o; k++) {
				if (buf[k] != '.')
					continue;
				key = pyx_intern(ix, buf, k);
				if (key < 0 || pyx_hmap_put(&ix->mod_ns, key, 1))
					return -ENOMEM;
			}
			if (start == 0)
				break;
			end = start - 1;
		}
	}
	free(buf);
	return 0;
}

/*
 * The source that module key means to importer, or -1. Dotted names match path suffixes; when
 * several sources match, the one whose root directory holds the importer (the longest such root)
 * wins, as sys.path[0] and the package root would have it; otherwise it stays unresolved.
 */
static int module_src(struct ls_pyindex *ix, uint32_t key, int importer)
{
	uint64_t mk = (uint64_t)key << 32 | (uint32_t)importer;
	uint32_t *memo = pyx_hmap_get(&ix->mod_memo, mk), *v;
	const char *ipath = ix->srcs.v[importer].path;
	int found = -1, best_root = -1, e, count = 0;
	bool tie = false;

	if (memo)
		return (int)*memo - 1;
	if (ix->strs.v[key][0] == '@') {
		v = pyx_hmap_get(&ix->mod_path, key);
		found = v && *v != UINT32_MAX ? (int)*v : -1;
	} else if ((v = pyx_hmap_get(&ix->mod_dotted, key))) {
		for (e = *v; e >= 0; e = ix->mod_entries.v[e + 2]) {
			int s = ix->mod_entries.v[e], root = ix->mod_entries.v[e + 1];

			count++;
			if (count == 1)
				found = s;
			if (!strncmp(ipath, ix->srcs.v[s].path, root) &&
			    (root == 0 || ipath[root - 1] == '/')) {
				if (root > best_root) {
					best_root = root;
					found = s;
					tie = false;
				} else if (root == best_root) {
					tie = true;
				}
			}
		}
		if (count > 1 && (best_root < 0 || tie))
			found = -1;
	}
	if (pyx_hmap_put(&ix->mod_memo, mk, found + 1))
		return -1;
	return found;
}

/* ---- resolution ----------------------------------------------------------------------------- */

static struct val resolve_name(struct ls_pyindex *ix, int scope, uint32_t name, int line, int col,
			       int depth);
static struct val binding_val(struct ls_pyindex *ix, int b, int depth);

static const struct val NONE = {V_NONE, 0, 0};

static bool val_eq(struct ls_pyindex *ix, struct val x, struct val y)
{
	if (x.kind != y.kind)
		return false;
	if (x.kind == V_MOD) {
		int sx = module_src(ix, x.a, x.b), sy = module_src(ix, y.a, y.b);

		return (sx >= 0 && sx == sy) || (x.a == y.a && x.b == y.b);
	}
	return x.a == y.a;
}

/* All bindings of a chain must agree, or the name is ambiguous. */
static struct val combine(struct ls_pyindex *ix, int head, int depth)
{
	struct val acc = NONE;
	bool any = false;
	int b;

	for (b = head; b >= 0; b = bind_next(ix, b)) {
		struct val v;

		if (ix->binds.v[b].kind == B_GLOBAL || ix->binds.v[b].kind == B_NONLOCAL)
			continue;
		v = binding_val(ix, b, depth);
		if (v.kind == V_NONE)
			return NONE;
		if (any && !val_eq(ix, acc, v))
			return NONE;
		acc = v;
		any = true;
	}
	return acc;
}

/* A module's binding of name, with `import *` making earlier bindings untrustworthy. */
static struct val module_binding(struct ls_pyindex *ix, int scope, uint32_t name, int depth,
				 bool *bound)
{
	int head = bind_first(ix, scope, name), b;
	int star = ix->scopes.v[scope].star_line;

	*bound = false;
	for (b = head; b >= 0; b = bind_next(ix, b)) {
		if (ix->binds.v[b].kind == B_GLOBAL || ix->binds.v[b].kind == B_NONLOCAL)
			continue;
		*bound = true;
		if (star && ix->binds.v[b].line <= star)
			return NONE;
	}
	if (!*bound)
		return NONE;
	return combine(ix, head, depth);
}

/* `from . import sub` in a package's __init__ binds sub to its own submodule, not to itself. */
static bool self_submodule_import(struct ls_pyindex *ix, int b, int s, uint32_t attr)
{
	const struct binding *bd = &ix->binds.v[b];

	return bd->kind == B_IMPORT_FROM && bd->attr == attr &&
	       module_src(ix, bd->a, ix->scopes.v[bd->scope].src) == s;
}

static struct val module_attr(struct ls_pyindex *ix, uint32_t key, int importer, uint32_t attr,
			      int depth)
{
	int s = module_src(ix, key, importer), b;
	int64_t sub;

	if (s >= 0 && pyx_hmap_get(&ix->mod_stores, (uint64_t)(uint32_t)s << 32 | attr))
		return NONE; /* monkeypatched from outside */
	if (s >= 0) {
		int scope = ix->srcs.v[s].module_scope;
		bool bound = false, self_only = true;

		for (b = bind_first(ix, scope, attr); b >= 0; b = bind_next(ix, b)) {
			bound = true;
			if (!self_submodule_import(ix, b, s, attr))
				self_only = false;
		}
		if (bound && !self_only)
			return module_binding(ix, scope, attr, depth, &bound);
		if (!bound && ix->scopes.v[scope].star_line)
			return NONE;
	}
	sub = intern_concat(ix, key, ix->strs.v[key][0] == '@' ? '/' : '.', attr);
	if (sub >= 0 && (module_src(ix, sub, importer) >= 0 || pyx_hmap_get(&ix->mod_ns, sub)))
		return (struct val){V_MOD, (int)sub, importer};
	return NONE;
}

/* Memoized per class: d->dyn is 0 unknown, 1 in progress (a cycle: treat as dynamic), 2 no,
 * 3 yes; so shared bases are visited once however the hierarchy branches. */
static bool class_dynamic(struct ls_pyindex *ix, int c, int depth)
{
	struct defi *d = &ix->defs.v[c];
	bool dyn = d->dynamic;
	int i;

	if (d->dyn)
		return d->dyn != 2;
	if (depth > MAX_CLASS_DEPTH)
		return true;
	d->dyn = 1;
	for (i = 0; i < d->nrbase && !dyn; i++) {
		int b = ix->rbases.v[d->rbase0 + i];

		dyn = b >= 0 && class_dynamic(ix, b, depth + 1);
	}
	ix->defs.v[c].dyn = dyn ? 3 : 2;
	return dyn;
}

/* attr along the bases: a def, LOOKUP_NOT_FOUND, or LOOKUP_UNKNOWN (unknown base, ambiguous
 * multiple inheritance, a non-def class attribute, or an inheritance cycle). Memoized per
 * (class, attr): 0 while in progress, else the result + 3. */
static int lookup_mro(struct ls_pyindex *ix, int c, uint32_t attr, int depth, int level)
{
	uint64_t key = (uint64_t)(uint32_t)c << 32 | attr;
	uint32_t *memo = pyx_hmap_get(&ix->mro_memo, key);
	const struct defi *d = &ix->defs.v[c];
	int head, res = LOOKUP_NOT_FOUND, i;

	if (memo)
		return *memo ? (int)*memo - 3 : LOOKUP_UNKNOWN;
	if (depth > MAX_RESOLVE_DEPTH || level > MAX_CLASS_DEPTH)
		return LOOKUP_UNKNOWN;
	pyx_hmap_put(&ix->mro_memo, key, 0);
	head = bind_first(ix, d->scope, attr);
	if (head >= 0) {
		struct val v = combine(ix, head, depth + 1);

		res = v.kind == V_DEF ? v.a : LOOKUP_UNKNOWN;
	}
	for (i = 0; head < 0 && i < ix->defs.v[c].nrbase; i++) {
		int b = ix->rbases.v[ix->defs.v[c].rbase0 + i], r;

		r = b < 0 ? LOOKUP_UNKNOWN : lookup_mro(ix, b, attr, depth, level + 1);
		if (r == LOOKUP_UNKNOWN || (r >= 0 && res >= 0 && r != res)) {
			res = LOOKUP_UNKNOWN;
			break;
		}
		if (r >= 0)
			res = r;
	}
	pyx_hmap_put(&ix->mro_memo, key, res + 3);
	return res;
}

static bool class_stored(const struct ls_pyindex *ix, int c, uint32_t attr)
{
	return pyx_hmap_get(&ix->class_stores, (uint64_t)(uint32_t)c << 32 | attr) != NULL;
}

/* Whether c or a base of it has attr assigned on instances (or on itself) somewhere.
 * Memoized per (class, attr): 1 no, 2 yes, 3 in progress (a cycle: yes). */
static bool stored_above(struct ls_pyindex *ix, int c, uint32_t attr, int depth)
{
	uint64_t key = (uint64_t)(uint32_t)c << 32 | attr;
	uint32_t *memo = pyx_hmap_get(&ix->stored_memo, key);
	bool r = class_stored(ix, c, attr);
	int i;

	if (memo)
		return *memo != 1;
	if (depth > MAX_CLASS_DEPTH)
		return true;
	pyx_hmap_put(&ix->stored_memo, key, 3);
	for (i = 0; i < ix->defs.v[c].nrbase && !r; i++) {
		int b = ix->rbases.v[ix->defs.v[c].rbase0 + i];

		r = b >= 0 && stored_above(ix, b, attr, depth + 1);
	}
	pyx_hmap_put(&ix->stored_memo, key, r ? 2 : 1);
	return r;
}

/* Whether a project subclass of c (at any depth) binds or assigns attr itself. Memoized per
 * (class, attr): 1 no, 2 yes, 3 in progress (a cycle: yes). */
static bool overridden_below(struct ls_pyindex *ix, int c, uint32_t attr, int depth)
{
	uint64_t key = (uint64_t)(uint32_t)c << 32 | attr;
	uint32_t *memo = pyx_hmap_get(&ix->attr_memo, key);
	bool r = false;
	int e;

	if (memo)
		return *memo != 1;
	if (depth > MAX_CLASS_DEPTH)
		return true;
	pyx_hmap_put(&ix->attr_memo, key, 3);
	for (e = ix->defs.v[c].child0; e >= 0 && !r; e = ix->children.v[e + 1]) {
		int ch = ix->children.v[e];

		r = bind_first(ix, ix->defs.v[ch].scope, attr) >= 0 || class_stored(ix, ch, attr) ||
		    overridden_below(ix, ch, attr, depth + 1);
	}
	pyx_hmap_put(&ix->attr_memo, key, r ? 2 : 1);
	return r;
}

/*
 * attr on class c (maybe_sub: on an object that may be of a subclass, as self and cls are).
 * Links only a def found along the bases when nothing can shadow it: no metaclass or unknown
 * class decorator, no assignment of attr on instances, no override in a project subclass.
 */
static struct val class_attr(struct ls_pyindex *ix, int c, uint32_t attr, bool maybe_sub, int depth)
{
	int r;

	if (class_dynamic(ix, c, 0) || pyx_hmap_get(&ix->stored_attrs, attr) ||
	    stored_above(ix, c, attr, 0))
		return NONE;
	r = lookup_mro(ix, c, attr, depth, 0);
	if (r < 0)
		return NONE;
	if (maybe_sub && overridden_below(ix, c, attr, 0))
		return NONE;
	return (struct val){V_DEF, r, 0};
}

static struct val getattr_val(struct ls_pyindex *ix, struct val v, uint32_t attr, int depth)
{
	switch (v.kind) {
	case V_MOD:
		return module_attr(ix, v.a, v.b, attr, depth);
	case V_DEF:
		if (!ix->defs.v[v.a].is_class)
			return NONE;
		return class_attr(ix, v.a, attr, false, depth);
	case V_INST:
		return class_attr(ix, v.a, attr, false, depth);
	case V_SELF:
	case V_CLS:
		return class_attr(ix, v.a, attr, true, depth);
	}
	return NONE;
}

static struct val ref_val(struct ls_pyindex *ix, int r, int depth)
{
	const struct ref *rf = &ix->refs.v[r];
	struct val v = resolve_name(ix, rf->scope, rf->name, rf->line, rf->col, depth);
	uint32_t i;

	for (i = 0; i < rf->nattr && v.kind != V_NONE; i++)
		v = getattr_val(ix, v, ix->attrs.v[rf->attr0 + i].name, depth);
	return v;
}

/* A class whose call surely makes an instance of exactly that class. */
static bool instantiable(struct ls_pyindex *ix, int c)
{
	return ix->defs.v[c].is_class && !class_dynamic(ix, c, 0) &&
	       lookup_mro(ix, c, N_NEW, 0, 0) == LOOKUP_NOT_FOUND;
}

static struct val binding_val(struct ls_pyindex *ix, int b, int depth)
{
	struct binding *bd = &ix->binds.v[b];
	struct val v = NONE;

	if (bd->memo == 2)
		return bd->v;
	if (bd->memo == 1 || depth > MAX_RESOLVE_DEPTH)
		return NONE; /* a cycle (a = b; b = a across modules) or too deep to trust */
	bd->memo = 1;
	switch (bd->kind) {
	case B_DEF:
		v = (struct val){V_DEF, bd->a, 0};
		break;
	case B_IMPORT_MOD:
		v = (struct val){V_MOD, bd->a, ix->scopes.v[bd->scope].src};
		break;
	case B_IMPORT_FROM:
		v = module_attr(ix, bd->a, ix->scopes.v[bd->scope].src, bd->attr, depth + 1);
		break;
	case B_INSTANCE:
		if (bd->a >= 0) {
			struct val c = ref_val(ix, bd->a, depth + 1);

			if (c.kind == V_DEF && instantiable(ix, c.a))
				v = (struct val){V_INST, c.a, 0};
		}
		break;
	case B_SELF:
	case B_CLS:
		if (bd->a >= 0)
			v = (struct val){bd->kind == B_SELF ? V_SELF : V_CLS, bd->a, 0};
		break;
	}
	bd = &ix->binds.v[b];
	bd->v = v;
	bd->memo = 2;
	return v;
}

static int module_of(const struct ls_pyindex *ix, int scope)
{
	return ix->srcs.v[ix->scopes.v[scope].src].module_scope;
}

/* Python's scoping: the scope itself, then enclosing function scopes (class bodies are skipped),
 * then the module; global and nonlocal redirect. Builtins and unknown names are V_NONE. */
static struct val resolve_name(struct ls_pyindex *ix, int scope, uint32_t name, int line, int col,
			       int depth)
{
	int s = scope, hops = 0;

	while (s >= 0 && hops++ < 4 * MAX_RESOLVE_DEPTH) {
		const struct scope *sc = &ix->scopes.v[s];
		int head = bind_first(ix, s, name), b;
		bool decl_global = false, decl_nonlocal = false, any = false, later = false;

		if (sc->kind == SC_MODULE) {
			bool bound;

			return module_binding(ix, s, name, depth, &bound);
		}
		for (b = head; b >= 0; b = bind_next(ix, b)) {
			const struct binding *bd = &ix->binds.v[b];

			if (bd->kind == B_GLOBAL)
				decl_global = true;
			else if (bd->kind == B_NONLOCAL)
				decl_nonlocal = true;
			else
				any = true;
			if (bd->line > line || (bd->line == line && bd->col > col))
				later = true;
		}
		if (decl_global) {
			s = module_of(ix, s);
			continue;
		}
		if (any && !decl_nonlocal) {
			/* a class body runs top to bottom: a name bound only further down is
			 * still the enclosing one where it is read; do not guess */
			if (sc->kind == SC_CLASS && later)
				return NONE;
			return combine(ix, head, depth);
		}
		do
			s = ix->scopes.v[s].parent;
		while (s >= 0 && ix->scopes.v[s].kind == SC_CLASS);
	}
	return NONE;
}

/* Bases of every class, resolved once all sources are known, and the subclass lists. */
static int resolve_classes(struct ls_pyindex *ix)
{
	size_t c;
	int i;

	ix->rbases.n = 0;
	ix->children.n = 0;
	for (c = 0; c < ix->defs.n; c++)
		ix->defs.v[c].child0 = -1;
	for (c = 0; c < ix->defs.n; c++) {
		struct defi *d = &ix->defs.v[c];

		d->rbase0 = ix->rbases.n;
		d->nrbase = 0;
		if (!d->is_class)
			continue;
		for (i = 0; i < d->nbase; i++) {
			int r = ix->bases.v[d->base0 + i], b = -1;

			if (r >= 0) {
				const struct ref *rf = &ix->refs.v[r];
				struct val v = ref_val(ix, r, 0);

				if (v.kind == V_DEF && ix->defs.v[v.a].is_class && (size_t)v.a != c)
					b = v.a;
				else if (v.kind == V_NONE && !rf->nattr && rf->name == N_OBJECT)
					continue; /* `class C(object)`: no base worth a lookup */
			}
			if (VEC_PUSH(ix->rbases, b))
				return -ENOMEM;
			d = &ix->defs.v[c];
			d->nrbase++;
			if (b >= 0) {
				if (VEC_PUSH(ix->children, (int)c) ||
				    VEC_PUSH(ix->children, ix->defs.v[b].child0))
					return -ENOMEM;
				ix->defs.v[b].child0 = ix->children.n - 2;
			}
		}
	}
	return 0;
}

/* Who each `base.attr = ...` can shadow: a class (and its relatives), a module, or anything. */
static int resolve_stores(struct ls_pyindex *ix)
{
	size_t i;

	pyx_hmap_clear(&ix->stored_attrs);
	pyx_hmap_clear(&ix->class_stores);
	pyx_hmap_clear(&ix->mod_stores);
	for (i = 0; i < ix->stores.n; i++) {
		const struct store *st = &ix->stores.v[i];
		struct val v = NONE;
		int err, s;

		if (st->simple)
			v = resolve_name(ix, st->scope, st->base, st->line, st->col, 0);
		if (v.kind == V_SELF || v.kind == V_CLS || v.kind == V_INST ||
		    (v.kind == V_DEF && ix->defs.v[v.a].is_class))
			err = pyx_hmap_put(&ix->class_stores,
					   (uint64_t)(uint32_t)v.a << 32 | st->attr, 1);
		else if (v.kind == V_MOD && (s = module_src(ix, v.a, v.b)) >= 0)
			err = pyx_hmap_put(&ix->mod_stores, (uint64_t)(uint32_t)s << 32 | st->attr,
					   1);
		else if (v.kind == V_DEF || v.kind == V_MOD)
			err = 0; /* a function attribute, or a module outside the index */
		else
			err = pyx_hmap_put(&ix->stored_attrs, st->attr, 1);
		if (err)
			return err;
	}
	return 0;
}

static int add_link(struct ls_pyindex *ix, int scope, int line, int col, int end_col, int col16,
		    int end_col16, int def)
{
	struct source *from = &ix->srcs.v[ix->scopes.v[scope].src];
	const struct defi *d = &ix->defs.v[def];
	const struct source *to = &ix->srcs.v[d->src];
	struct ls_pyindex_link l = {
		.line = line,
		.col = col,
		.end_col = end_col,
		.col16 = col16,
		.end_col16 = end_col16,
		.target_src = to->id,
		.target_def = d->local,
		.target_line = to->defs.v[d->local].def_line,
	};

	if (VEC_PUSH(from->links, l))
		return -ENOMEM;
	ix->nlinks++;
	return 0;
}

static int cmp_link(const void *a, const void *b)
{
	const struct ls_pyindex_link *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return 0;
}

/* Forgets every memoized answer: needed whenever the facts they rest on (bases, stores) grow. */
static void forget(struct ls_pyindex *ix)
{
	size_t i;

	for (i = 0; i < ix->binds.n; i++)
		ix->binds.v[i].memo = 0;
	for (i = 0; i < ix->defs.n; i++)
		ix->defs.v[i].dyn = 0;
	pyx_hmap_clear(&ix->attr_memo);
	pyx_hmap_clear(&ix->mro_memo);
	pyx_hmap_clear(&ix->stored_memo);
}

int ls_pyindex__resolve(struct ls_pyindex *ix)
{
	size_t i;
	int err;

	for (i = 0; i < ix->srcs.n; i++)
		ix->srcs.v[i].links.n = 0;
	ix->nlinks = 0;
	ix->resolved = false;
	/* bases first, then who assigns what, then links: each step sees the previous one whole */
	forget(ix);
	err = build_module_tables(ix);
	if (!err)
		err = resolve_classes(ix);
	forget(ix);
	if (!err)
		err = resolve_stores(ix);
	forget(ix);
	if (err)
		return err;
	for (i = 0; i < ix->refs.n; i++) {
		const struct ref *rf = &ix->refs.v[i];
		struct val v;
		uint32_t k;

		if (rf->flags & R_IMPORT) {
			v = rf->binding >= 0 ? binding_val(ix, rf->binding, 0) : NONE;
			if (v.kind == V_DEF && add_link(ix, rf->scope, rf->line, rf->col,
							rf->end_col, rf->col16, rf->end_col16, v.a))
				return -ENOMEM;
			continue;
		}
		v = resolve_name(ix, rf->scope, rf->name, rf->line, rf->col, 0);
		if (v.kind == V_DEF && add_link(ix, rf->scope, rf->line, rf->col, rf->end_col,
						rf->col16, rf->end_col16, v.a))
			return -ENOMEM;
		for (k = 0; k < rf->nattr && v.kind != V_NONE; k++) {
			const struct attr *at = &ix->attrs.v[rf->attr0 + k];

			v = getattr_val(ix, v, at->name, 0);
			if (v.kind == V_DEF && add_link(ix, rf->scope, at->line, at->col,
							at->end_col, at->col16, at->end_col16, v.a))
				return -ENOMEM;
			rf = &ix->refs.v[i];
		}
	}
	for (i = 0; i < ix->srcs.n; i++)
		if (ix->srcs.v[i].links.n > 1)
			qsort(ix->srcs.v[i].links.v, ix->srcs.v[i].links.n,
			      sizeof(*ix->srcs.v[i].links.v), cmp_link);
	ix->resolved = true;
	return ix->nlinks > INT32_MAX ? INT32_MAX : (int)ix->nlinks;
}
