// SPDX-License-Identifier: MIT
/*
 * The statement parser behind the Python symbol index (see pyindex.h). It is shallow on purpose:
 * statements are split on NEWLINE/INDENT/DEDENT and expressions are walked as token runs with
 * bracket groups, which is all that scoping needs: what binds a name where (def, class, import,
 * parameters, targets, global/nonlocal), which name spans are loads (with their attribute chains),
 * and where each def's body ends. Recursion is bounded, so any token soup terminates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyparse_int.h"

/* ---- statements ----------------------------------------------------------------------------- */

static void parse_block(struct parser *p, int scope, bool in_match);

/* Skips a block we will not descend into (too deep), keeping INDENT/DEDENT balance. */
static void skip_block(struct parser *p)
{
	int level = 1;

	while (p->i < p->n && level > 0) {
		int k = p->t[p->i].kind;

		if (k == LS_PYTOK_ENDMARKER)
			return;
		level += k == LS_PYTOK_INDENT;
		level -= k == LS_PYTOK_DEDENT;
		p->i++;
	}
}

/* Simple statements up to and including the NEWLINE. */
static void parse_simple_line(struct parser *p, int scope);

/* After a compound header's ':' at colon; returns the index of the body's last real token. */
static size_t parse_suite(struct parser *p, int scope, size_t colon, bool in_match)
{
	size_t i = colon + 1, last;

	if (i < p->n && p->t[i].kind == LS_PYTOK_NEWLINE) {
		i++;
		if (i < p->n && p->t[i].kind == LS_PYTOK_INDENT) {
			p->i = i + 1;
			if (++p->depth > MAX_DEPTH)
				skip_block(p);
			else
				parse_block(p, scope, in_match);
			p->depth--;
		} else {
			p->i = i;
			return colon;
		}
	} else {
		p->i = i;
		parse_simple_line(p, scope);
	}
	last = p->i > 0 ? p->i - 1 : 0;
	while (last > colon && (is_boundary(p, last) || p->t[last].kind == LS_PYTOK_ERRORTOKEN))
		last--;
	return last;
}

static void parse_import(struct parser *p, int scope, size_t a, size_t b)
{
	struct ls_pyindex *ix = p->ix;
	size_t s = a, e, k, j;
	char buf[1024];

	while (s < b && !p->err) {
		size_t len = 0, as;
		int64_t key;

		e = pyx_find_top(p, s, b, F_COMMA);
		as = pyx_find_top(p, s, e, F_AS);
		if (!is_ident(p, s)) {
			s = e + 1;
			continue;
		}
		k = chain_end(p, s, as);
		for (j = s; j < k; j += 2) {
			const char *nm = ix->strs.v[p->t[j].name];
			size_t nl = ix->str_len.v[p->t[j].name];

			if (len + nl + 2 >= sizeof(buf))
				break;
			if (j > s)
				buf[len++] = '.';
			memcpy(buf + len, nm, nl);
			len += nl;
			if (as == e)
				break; /* `import a.b.c` binds a: the module key of a alone */
		}
		key = pyx_intern(ix, buf, len);
		if (key < 0) {
			p->err = key;
			return;
		}
		if (as < e && is_ident(p, as + 1))
			pyx_add_binding(p, scope, as + 1, B_IMPORT_MOD, key, 0);
		else if (as == e)
			pyx_add_binding(p, scope, s, B_IMPORT_MOD, key, 0);
		s = e + 1;
	}
}

/* The module key of `from <dots><name> import`: dotted for absolute, "@dir/name" for relative. */
static int64_t from_key(struct parser *p, size_t a, size_t imp)
{
	struct ls_pyindex *ix = p->ix;
	const char *path = ix->srcs.v[p->src].path;
	size_t i = a, len = 0, dlen;
	int level = 0;
	bool rel;
	char buf[4096];

	for (; i < imp && p->t[i].kind == LS_PYTOK_OP; i++) {
		if (p->t[i].op == '.')
			level++;
		else if (p->t[i].op == LS_PYOP3('.', '.', '.'))
			level += 3;
		else
			break;
	}
	if (level) {
		const char *slash = strrchr(path, '/');

		dlen = slash ? (size_t)(slash - path) : 0;
		while (--level > 0) {
			while (dlen > 0 && path[dlen - 1] != '/')
				dlen--;
			if (dlen > 0)
				dlen--;
		}
		if (dlen + 2 >= sizeof(buf))
			return -ENAMETOOLONG;
		buf[len++] = '@';
		memcpy(buf + len, path, dlen);
		len += dlen;
	}
	rel = len > 0;
	for (; i < imp; i++) {
		const struct ptok *t = &p->t[i];
		size_t nl;

		if (t->kind == LS_PYTOK_NAME) {
			nl = ix->str_len.v[t->name];
			if (len + nl + 2 >= sizeof(buf))
				return -ENAMETOOLONG;
			if (rel && len > 1)
				buf[len++] = '/';
			memcpy(buf + len, ix->strs.v[t->name], nl);
			len += nl;
		} else if (is_op(p, i, '.') && !rel) {
			buf[len++] = '.';
		}
	}
	return pyx_intern(ix, buf, len);
}

static void parse_from(struct parser *p, int scope, size_t a, size_t b)
{
	size_t imp = a + 1, s, e, as;
	int64_t key;

	while (imp < b && !is_kw(p, imp, KW_IMPORT))
		imp++;
	if (imp >= b)
		return;
	key = from_key(p, a + 1, imp);
	if (key == -ENOMEM) {
		p->err = -ENOMEM;
		return;
	}
	if (key < 0)
		return;
	s = imp + 1;
	if (is_op(p, s, '(') && p->close[s] < b) {
		b = p->close[s];
		s++;
	}
	if (is_op(p, s, '*')) {
		p->ix->scopes.v[scope].star_line = p->t[s].line;
		return;
	}
	while (s < b && !p->err) {
		e = pyx_find_top(p, s, b, F_COMMA);
		as = pyx_find_top(p, s, e, F_AS);
		if (is_ident(p, s)) {
			size_t bt = (as < e && is_ident(p, as + 1)) ? as + 1 : s;
			int bi = pyx_add_binding(p, scope, bt, B_IMPORT_FROM, key, p->t[s].name);
			int ri = pyx_add_ref(p, scope, s, s + 1, false);

			if (ri >= 0) {
				p->ix->refs.v[ri].flags |= R_IMPORT;
				p->ix->refs.v[ri].binding = bi;
			}
		}
		s = e + 1;
	}
}

static void parse_simple(struct parser *p, int scope, size_t a, size_t b)
{
	size_t eq, colon, aug, prev;
	const struct ptok *t = &p->t[a];

	if (a >= b)
		return;
	if (t->kind == LS_PYTOK_NAME) {
		switch (t->name) {
		case KW_IMPORT:
			parse_import(p, scope, a + 1, b);
			return;
		case KW_FROM:
			parse_from(p, scope, a, b);
			return;
		case KW_GLOBAL:
		case KW_NONLOCAL:
			for (eq = a + 1; eq < b; eq++)
				if (is_ident(p, eq))
					pyx_add_binding(p, scope, eq,
							t->name == KW_GLOBAL ? B_GLOBAL
									     : B_NONLOCAL,
							-1, 0);
			return;
		case KW_DEL:
			pyx_walk_target(p, scope, a + 1, b, B_OTHER, -1);
			return;
		case KW_TYPE: /* type X[T] = ... (3.12) */
			if (is_ident(p, a + 1) && (is_op(p, a + 2, '=') || is_op(p, a + 2, '['))) {
				pyx_add_binding(p, scope, a + 1, B_OTHER, -1, 0);
				pyx_walk(p, scope, a + 2, b, false);
				return;
			}
			break;
		}
	}
	eq = pyx_find_top(p, a, b, F_ASSIGN);
	colon = pyx_find_top(p, a, eq, F_COLON);
	if (colon < eq) { /* annotated assignment */
		bool inst = eq < b && pyx_is_ctor_call(p, eq + 1, b);
		int r0 = p->ix->refs.n;

		if (eq < b)
			pyx_walk(p, scope, eq + 1, b, false);
		pyx_walk(p, scope, colon + 1, eq, false);
		pyx_walk_target(p, scope, a, colon, inst ? B_INSTANCE : B_OTHER, inst ? r0 : -1);
		return;
	}
	aug = pyx_find_top(p, a, b, F_AUG);
	if (aug < b && aug < eq) {
		pyx_walk_target(p, scope, a, aug, B_OTHER, -1);
		pyx_walk(p, scope, aug + 1, b, false);
		return;
	}
	if (eq < b) {
		size_t last = eq, v0;
		int r0;
		bool inst;

		while ((prev = pyx_find_top(p, last + 1, b, F_ASSIGN)) < b)
			last = prev;
		v0 = last + 1;
		inst = pyx_is_ctor_call(p, v0, b);
		r0 = p->ix->refs.n;
		pyx_walk(p, scope, v0, b, false);
		for (prev = a; prev < v0;) {
			size_t e = pyx_find_top(p, prev, v0, F_ASSIGN);

			pyx_walk_target(p, scope, prev, e, inst ? B_INSTANCE : B_OTHER,
					inst ? r0 : -1);
			prev = e + 1;
		}
		return;
	}
	pyx_walk(p, scope, a, b, false);
}

static void parse_simple_line(struct parser *p, int scope)
{
	size_t e = stmt_end(p, p->i), s;

	while (p->i < e && !p->err) {
		s = pyx_find_top(p, p->i, e, F_SEMI);
		parse_simple(p, scope, p->i, s);
		p->i = s < e ? s + 1 : e;
	}
	p->i = p->t[e].kind == LS_PYTOK_NEWLINE ? e + 1 : (e > p->i ? e : p->i);
}

static void parse_with_items(struct parser *p, int scope, size_t a, size_t b)
{
	size_t s, e, as;

	if (is_op(p, a, '(') && p->close[a] == b - 1 && b - 1 > a) {
		a++;
		b--;
	}
	for (s = a; s < b; s = e + 1) {
		e = pyx_find_top(p, s, b, F_COMMA);
		as = pyx_find_top(p, s, e, F_AS);
		pyx_walk(p, scope, s, as, false);
		if (as < e)
			pyx_walk_target(p, scope, as + 1, e, B_OTHER, -1);
	}
}

static const char *def_qualname(struct parser *p, int scope, uint32_t name, size_t *len)
{
	struct ls_pyindex *ix = p->ix;
	const struct scope *sc = &ix->scopes.v[scope];
	const char *nm = ix->strs.v[name], *pq;
	size_t nl = ix->str_len.v[name], pl;
	const struct defi *pd;
	uint32_t *decl;
	char *q;

	*len = nl;
	decl = pyx_hmap_get(&p->decls, sn_key(scope, name));
	if (sc->kind == SC_MODULE || sc->def < 0 || (decl && *decl == B_GLOBAL))
		return pyx_strdup(ix, nm, nl); /* CPython: a name declared global gets no prefix */
	pd = &ix->defs.v[sc->def];
	pq = ix->srcs.v[pd->src].defs.v[pd->local].qualname;
	pl = strlen(pq);
	q = pyx_strdup(ix, NULL, pl + nl + (sc->kind == SC_CLASS ? 1 : 10));
	if (!q)
		return NULL;
	memcpy(q, pq, pl);
	if (sc->kind == SC_CLASS) {
		q[pl++] = '.';
	} else {
		memcpy(q + pl, ".<locals>.", 10);
		pl += 10;
	}
	memcpy(q + pl, nm, nl);
	q[pl + nl] = 0;
	*len = pl + nl;
	return q;
}

/* co_firstlineno of a decorated def: the first decorator expression's line. */
static int decorator_line(const struct parser *p, size_t at)
{
	size_t i = at + 1;

	while (is_op(p, i, '('))
		i++;
	return i < p->n && !is_boundary(p, i) ? p->t[i].line : p->t[at].line;
}

enum deco_bits { D_STATIC = 1, D_CLASSM = 2, D_UNSAFE = 4 };

static int classify_decorator(const struct parser *p, size_t a, size_t b)
{
	size_t k;
	uint32_t last;

	if (!is_ident(p, a))
		return D_UNSAFE;
	k = chain_end(p, a, b);
	last = p->t[k - 1].name;
	if (k == a + 1 && k == b && last == N_STATICMETHOD)
		return D_STATIC;
	if (k == a + 1 && k == b && last == N_CLASSMETHOD)
		return D_CLASSM;
	/* class decorators that return the class itself, without replacing methods */
	if ((k == b || (is_op(p, k, '(') && p->close[k] == b - 1)) &&
	    (last == N_DATACLASS || last == N_TOTAL_ORDERING || last == N_FINAL))
		return 0;
	return D_UNSAFE;
}

static void parse_class_bases(struct parser *p, int scope, int def, size_t a, size_t b)
{
	struct ls_pyindex *ix = p->ix;
	size_t s, e;

	ix->defs.v[def].base0 = ix->bases.n;
	for (s = a; s < b; s = e + 1) {
		int r0 = ix->refs.n, base = -1;

		e = pyx_find_top(p, s, b, F_COMMA);
		if (s == e)
			continue;
		if (is_ident(p, s) && is_op(p, s + 1, '=')) {
			ix->defs.v[def].dynamic = 1; /* metaclass= and other class keywords */
			pyx_walk(p, scope, s + 2, e, false);
			continue;
		}
		if (is_op(p, s, '*') || is_op(p, s, OP2('*', '*'))) {
			ix->defs.v[def].dynamic = 1; /* bases unknown until run time */
			pyx_walk(p, scope, s, e, false);
			continue;
		}
		pyx_walk(p, scope, s, e, false);
		if (is_ident(p, s) && chain_end(p, s, e) == e && ix->refs.n > (size_t)r0)
			base = r0;
		if (VEC_PUSH(ix->bases, base)) {
			p->err = -ENOMEM;
			return;
		}
		ix->defs.v[def].nbase++;
	}
}

static void parse_def(struct parser *p, int scope, size_t dec0, int ndec, size_t i)
{
	struct ls_pyindex *ix = p->ix;
	struct source *src = &ix->srcs.v[p->src];
	bool is_async = is_kw(p, i, KW_ASYNC);
	size_t kw = is_async ? i + 1 : i, nm = kw + 1, e = stmt_end(p, kw), j, d, de, colon, last;
	bool is_class = is_kw(p, kw, KW_CLASS), in_class = ix->scopes.v[scope].kind == SC_CLASS;
	int deco = 0, def, body, first_kind = B_OTHER;
	struct ls_pyindex_def pub = {0};
	struct defi di = {.src = p->src, .base0 = -1, .child0 = -1, .rbase0 = -1};
	const struct ptok *nt = &p->t[nm];
	size_t qlen;

	for (d = dec0; d < i;) {
		de = stmt_end(p, d);
		pyx_walk(p, scope, d + 1, de, false);
		deco |= classify_decorator(p, d + 1, de);
		d = p->t[de].kind == LS_PYTOK_NEWLINE ? de + 1 : de + (de == d);
	}
	if (nm >= e || !is_ident(p, nm)) {
		p->i = i;
		parse_simple_line(p, scope);
		return;
	}
	pub.kind = is_class   ? LS_PYDEF_CLASS
		   : in_class ? (is_async ? LS_PYDEF_ASYNC_METHOD : LS_PYDEF_METHOD)
		   : is_async ? LS_PYDEF_ASYNC_FUNCTION
			      : LS_PYDEF_FUNCTION;
	pub.qualname = def_qualname(p, scope, nt->name, &qlen);
	pub.name = ix->strs.v[nt->name];
	pub.def_line = p->t[i].line;
	pub.first_line = ndec ? decorator_line(p, dec0) : pub.def_line;
	pub.end_line = nt->end_line;
	pub.name_line = nt->line;
	pub.name_col = nt->col;
	pub.name_end_col = nt->end_col;
	pub.name_col16 = nt->col16;
	pub.name_end_col16 = nt->end_col16;
	pub.parent =
		ix->scopes.v[scope].def >= 0 && ix->defs.v[ix->scopes.v[scope].def].src == p->src
			? ix->defs.v[ix->scopes.v[scope].def].local
			: -1;
	if (!pub.qualname) {
		p->err = -ENOMEM;
		return;
	}
	di.local = src->defs.n;
	di.is_class = is_class;
	di.dynamic = is_class && (deco & D_UNSAFE);
	if (VEC_PUSH(src->defs, pub) || VEC_PUSH(ix->defs, di)) {
		p->err = -ENOMEM;
		return;
	}
	def = ix->defs.n - 1;
	pyx_add_binding(p, scope, nm, B_DEF, def, 0);
	body = pyx_new_scope(p, is_class ? SC_CLASS : SC_FUNCTION, scope, def);
	ix->defs.v[def].scope = body;

	j = nm + 1;
	if (is_op(p, j, '[')) { /* PEP 695 type parameters */
		pyx_walk_params(p, scope, body, j + 1, p->close[j] < e ? p->close[j] : e, B_OTHER,
				-1);
		j = skip(p, j);
	}
	if (is_class) {
		if (is_op(p, j, '(')) {
			parse_class_bases(p, scope, def, j + 1, p->close[j] < e ? p->close[j] : e);
			j = skip(p, j);
		}
	} else {
		if (in_class && !(deco & D_STATIC)) {
			uint32_t n = nt->name;

			first_kind = (deco & D_CLASSM) || n == N_NEW || n == N_INIT_SUBCLASS ||
						     n == N_CLASS_GETITEM
					     ? B_CLS
					     : B_SELF;
		}
		if (is_op(p, j, '(')) {
			pyx_walk_params(p, scope, body, j + 1, p->close[j] < e ? p->close[j] : e,
					first_kind, ix->scopes.v[scope].def);
			j = skip(p, j);
		}
	}
	colon = pyx_find_top(p, j, e, F_COLON);
	pyx_walk(p, scope, j, colon, false); /* return annotation, or stray tokens */
	if (colon >= e) {
		p->i = p->t[e].kind == LS_PYTOK_NEWLINE ? e + 1 : (e > i ? e : i + 1);
		return;
	}
	last = parse_suite(p, body, colon, false);
	src = &ix->srcs.v[p->src];
	src->defs.v[ix->defs.v[def].local].end_line = p->t[last].end_line;
}

static bool is_soft_stmt(const struct parser *p, size_t i, size_t e, size_t *colon, bool need_nl)
{
	const struct ptok *n = &p->t[i + 1];

	if (i + 1 >= e || (n->kind == LS_PYTOK_OP &&
			   (n->op == '=' || n->op == '.' || n->op == ':' || n->op == ',' ||
			    n->op == ')' || pyx_matches(p, i + 1, F_AUG))))
		return false;
	*colon = pyx_find_top(p, i + 1, e, F_COLON);
	return *colon < e && (!need_nl || *colon + 1 == e);
}

static void parse_statement(struct parser *p, int scope, bool in_match)
{
	size_t i = p->i, dec0 = i, e, colon, x;
	int ndec = 0;
	uint32_t kw;

	while (is_op(p, i, '@')) {
		e = stmt_end(p, i);
		ndec++;
		i = p->t[e].kind == LS_PYTOK_NEWLINE ? e + 1 : e + (e == i);
	}
	if (is_kw(p, i, KW_DEF) || is_kw(p, i, KW_CLASS) ||
	    (is_kw(p, i, KW_ASYNC) && is_kw(p, i + 1, KW_DEF))) {
		parse_def(p, scope, dec0, ndec, i);
		return;
	}
	for (x = dec0; x < i;) { /* decorators without a def: still loads */
		e = stmt_end(p, x);
		pyx_walk(p, scope, x + 1, e, false);
		x = p->t[e].kind == LS_PYTOK_NEWLINE ? e + 1 : e + (e == x);
	}
	p->i = i;
	if (ndec)
		return;
	e = stmt_end(p, i);
	kw = p->t[i].kind == LS_PYTOK_NAME ? p->t[i].name : UINT32_MAX;
	if (kw == KW_ASYNC && (is_kw(p, i + 1, KW_FOR) || is_kw(p, i + 1, KW_WITH)))
		kw = p->t[++i].name;
	switch (kw) {
	case KW_IF:
	case KW_ELIF:
	case KW_WHILE:
	case KW_FOR:
	case KW_WITH:
	case KW_EXCEPT:
	case KW_ELSE:
	case KW_TRY:
	case KW_FINALLY:
		colon = pyx_find_top(p, i + 1, e, F_COLON);
		if (colon >= e)
			break;
		if (kw == KW_FOR) {
			x = pyx_find_top(p, i + 1, colon, F_IN);
			pyx_walk_target(p, scope, i + 1, x, B_OTHER, -1);
			if (x < colon)
				pyx_walk(p, scope, x + 1, colon, false);
		} else if (kw == KW_WITH) {
			parse_with_items(p, scope, i + 1, colon);
		} else if (kw == KW_EXCEPT) {
			x = pyx_find_top(p, i + 1, colon, F_AS);
			pyx_walk(p, scope, i + 1, x, false);
			if (x < colon)
				pyx_walk_target(p, scope, x + 1, colon, B_OTHER, -1);
		} else {
			pyx_walk(p, scope, i + 1, colon, false);
		}
		parse_suite(p, scope, colon, false);
		return;
	case KW_MATCH:
		if (!is_soft_stmt(p, i, e, &colon, true))
			break;
		pyx_walk(p, scope, i + 1, colon, false);
		parse_suite(p, scope, colon, true);
		return;
	case KW_CASE:
		if (!in_match || !is_soft_stmt(p, i, e, &colon, false))
			break;
		x = pyx_find_top(p, i + 1, colon, F_IF);
		pyx_walk_pattern(p, scope, i + 1, x);
		if (x < colon)
			pyx_walk(p, scope, x + 1, colon, false);
		parse_suite(p, scope, colon, false);
		return;
	}
	parse_simple_line(p, scope);
}

static void parse_block(struct parser *p, int scope, bool in_match)
{
	while (p->i < p->n && !p->err) {
		int k = p->t[p->i].kind;
		size_t before = p->i;

		if (k == LS_PYTOK_DEDENT) {
			p->i++;
			return;
		}
		if (k == LS_PYTOK_ENDMARKER)
			return;
		if (k == LS_PYTOK_NEWLINE || k == LS_PYTOK_ERRORTOKEN) {
			p->i++;
			continue;
		}
		if (k ==
		    LS_PYTOK_INDENT) { /* unexpected indent: a nested block of the same scope */
			p->i++;
			if (++p->depth > MAX_DEPTH)
				skip_block(p);
			else
				parse_block(p, scope, false);
			p->depth--;
			continue;
		}
		parse_statement(p, scope, in_match);
		if (p->i <= before)
			p->i = before + 1;
	}
}

/* ---- per-source driver ---------------------------------------------------------------------- */

static int compute_close(struct parser *p)
{
	uint32_t *stack = malloc((p->n + 1) * sizeof(*stack));
	size_t sp = 0, i;

	if (!stack)
		return -ENOMEM;
	for (i = 0; i < p->n; i++) {
		p->close[i] = i;
		if (is_open(p, i)) {
			stack[sp++] = i;
		} else if (is_close(p, i)) {
			if (sp)
				p->close[stack[--sp]] = i;
		} else if (is_boundary(p, i)) {
			while (sp)
				p->close[stack[--sp]] = i;
		}
	}
	while (sp)
		p->close[stack[--sp]] = p->n - 1;
	free(stack);
	return 0;
}

int pyx_parse_source(struct ls_pyindex *ix, int src, const struct ls_pytok *toks, size_t n,
		     const char *text)
{
	struct parser p = {.ix = ix, .src = src, .bind0 = ix->binds.n};
	size_t i, k = 0, scope0 = ix->scopes.n, ref0 = ix->refs.n;
	int module, err = 0;

	p.t = malloc((n + 1) * sizeof(*p.t));
	p.close = malloc((n + 1) * sizeof(*p.close));
	if (!p.t || !p.close) {
		err = -ENOMEM;
		goto cleanup;
	}
	for (i = 0; i < n; i++) {
		const struct ls_pytok *t = &toks[i];
		struct ptok *o = &p.t[k];

		if (t->kind == LS_PYTOK_COMMENT || t->kind == LS_PYTOK_NL ||
		    t->kind == LS_PYTOK_FSTRING_MIDDLE)
			continue;
		*o = (struct ptok){
			.kind = t->kind,
			.flags = t->flags,
			.op = t->op,
			.line = t->line,
			.end_line = t->end_line,
			.col = t->col,
			.end_col = t->end_col,
			.col16 = t->col16,
			.end_col16 = t->end_col16,
		};
		if (t->kind == LS_PYTOK_NAME) {
			int64_t id = pyx_intern(ix, text + t->start, t->end - t->start);

			if (id < 0) {
				err = id;
				goto cleanup;
			}
			o->name = id;
		}
		k++;
	}
	p.n = k;
	if (!p.n || p.t[p.n - 1].kind != LS_PYTOK_ENDMARKER) {
		err = -EINVAL;
		goto cleanup;
	}
	err = compute_close(&p);
	if (err)
		goto cleanup;
	module = pyx_new_scope(&p, SC_MODULE, -1, -1);
	ix->srcs.v[src].module_scope = module;
	while (p.i < p.n && !p.err) {
		parse_block(&p, module, false);
		if (p.i < p.n && p.t[p.i].kind == LS_PYTOK_ENDMARKER)
			break;
	}
	err = p.err;
	if (!err)
		err = pyx_finish_bindings(&p, scope0, ref0);
cleanup:
	pyx_hmap_release(&p.decls);
	free(p.t);
	free(p.close);
	return err;
}
