// SPDX-License-Identifier: MIT
/*
 * Expression walking for the Python symbol index: which names an expression loads (with their
 * attribute chains), which a target binds, and the scopes of lambdas and comprehensions.
 * Recursion is bounded by MAX_DEPTH, so any token soup terminates.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyparse_int.h"

static size_t lambda_colon(const struct parser *p, size_t i, size_t b)
{
	for (i++; i < b;) {
		if (is_op(p, i, ':'))
			return i;
		i = skip(p, i);
	}
	return b;
}

bool pyx_matches(const struct parser *p, size_t i, enum find_what w)
{
	const struct ptok *t = &p->t[i];

	switch (w) {
	case F_COLON:
		return is_op(p, i, ':');
	case F_COMMA:
		return is_op(p, i, ',');
	case F_ASSIGN:
		return is_op(p, i, '=');
	case F_SEMI:
		return is_op(p, i, ';');
	case F_FOR:
		return is_kw(p, i, KW_FOR) || (is_kw(p, i, KW_ASYNC) && is_kw(p, i + 1, KW_FOR));
	case F_IN:
		return is_kw(p, i, KW_IN);
	case F_AS:
		return is_kw(p, i, KW_AS);
	case F_IF:
		return is_kw(p, i, KW_IF);
	case F_CLAUSE:
		return pyx_matches(p, i, F_FOR) || is_kw(p, i, KW_IF);
	case F_AUG:
		if (t->kind != LS_PYTOK_OP || t->op < 0x100)
			return false;
		/* two- or three-character operators ending in '=' that are not comparisons */
		{
			uint32_t last = t->op > 0xFFFF ? t->op >> 16 : t->op >> 8;
			uint32_t first = t->op & 0xFF;

			return last == '=' && first != '=' && first != '!' &&
			       !(t->op == OP2('<', '=') || t->op == OP2('>', '=') ||
				 t->op == OP2(':', '='));
		}
	}
	return false;
}

/* First top-level token in [i, b) matching w; b if none. Lambda parameter lists are skipped. */
size_t pyx_find_top(const struct parser *p, size_t i, size_t b, enum find_what w)
{
	while (i < b) {
		if (pyx_matches(p, i, w))
			return i;
		if (is_kw(p, i, KW_LAMBDA)) {
			i = lambda_colon(p, i, b) + 1;
			continue;
		}
		i = skip(p, i);
	}
	return b;
}

/* ---- recording ------------------------------------------------------------------------------ */

int pyx_new_scope(struct parser *p, int kind, int parent, int def)
{
	struct ls_pyindex *ix = p->ix;
	struct scope sc = {.kind = kind, .parent = parent, .src = p->src, .def = def};

	if (VEC_PUSH(ix->scopes, sc)) {
		p->err = -ENOMEM;
		return parent;
	}
	return ix->scopes.n - 1;
}

int pyx_add_binding(struct parser *p, int scope, size_t tok, int kind, int a, uint32_t attr)
{
	struct binding b = {
		.scope = scope,
		.name = p->t[tok].name,
		.kind = kind,
		.line = p->t[tok].line,
		.col = p->t[tok].col,
		.a = a,
		.attr = attr,
	};

	if (kind == B_GLOBAL || kind == B_NONLOCAL) {
		if (pyx_hmap_put(&p->decls, sn_key(scope, b.name), kind))
			p->err = -ENOMEM;
	}
	if (VEC_PUSH(p->ix->binds, b)) {
		p->err = -ENOMEM;
		return -1;
	}
	return p->ix->binds.n - 1;
}

/* Walrus targets bind in the nearest scope that is not a comprehension (PEP 572). */
static int non_comp(const struct parser *p, int scope)
{
	while (p->ix->scopes.v[scope].kind == SC_COMP)
		scope = p->ix->scopes.v[scope].parent;
	return scope;
}

/* A load of the dotted chain at [i, k): base name then attributes. skip_last drops the last
 * attribute (an assignment target's stored attribute, which names no definition). */
int pyx_add_ref(struct parser *p, int scope, size_t i, size_t k, bool skip_last)
{
	struct ls_pyindex *ix = p->ix;
	const struct ptok *t = &p->t[i];
	struct ref r = {
		.scope = scope,
		.name = t->name,
		.binding = -1,
		.line = t->line,
		.col = t->col,
		.end_col = t->end_col,
		.col16 = t->col16,
		.end_col16 = t->end_col16,
		.attr0 = ix->attrs.n,
	};
	size_t j;

	for (j = i + 2; j < k && r.nattr < UINT16_MAX; j += 2) {
		const struct ptok *a = &p->t[j];
		struct attr at = {a->name, a->line, a->col, a->end_col, a->col16, a->end_col16};

		if (skip_last && j + 2 >= k)
			break;
		if (VEC_PUSH(ix->attrs, at)) {
			p->err = -ENOMEM;
			return -1;
		}
		r.nattr++;
	}
	if (VEC_PUSH(ix->refs, r)) {
		p->err = -ENOMEM;
		return -1;
	}
	return ix->refs.n - 1;
}

/* The attribute target ending at k-1; base_tok is the chain's base name when it is `name.attr`. */
static void add_store(struct parser *p, int scope, size_t base_tok, size_t attr_tok, bool simple)
{
	const struct ptok *t = &p->t[base_tok];
	struct store st = {
		.scope = scope,
		.base = t->name,
		.attr = p->t[attr_tok].name,
		.line = t->line,
		.col = t->col,
		.simple = simple,
	};

	if (VEC_PUSH(p->ix->stores, st))
		p->err = -ENOMEM;
}

/* ---- expressions ---------------------------------------------------------------------------- */

/* End of the lambda at i: its body stops at a top-level ',', ':', ';', '=', or a clause. */
static size_t lambda_end(struct parser *p, size_t i, size_t b)
{
	size_t j = lambda_colon(p, i, b);

	if (j >= b)
		return b;
	if (++p->depth > MAX_DEPTH) {
		p->depth--;
		return b;
	}
	for (j++; j < b;) {
		const struct ptok *t = &p->t[j];

		if (is_kw(p, j, KW_LAMBDA)) {
			j = lambda_end(p, j, b);
			continue;
		}
		if (t->kind == LS_PYTOK_OP &&
		    (t->op == ',' || t->op == ':' || t->op == ';' || t->op == '=' ||
		     (t->flags & LS_PYTOK_F_CONVERSION) || is_close(p, j)))
			break;
		if (pyx_matches(p, j, F_FOR))
			break;
		j = skip(p, j);
	}
	p->depth--;
	return j < b ? j : b;
}

/* Parameters of a def or lambda in [a, b): names bind in fscope, annotations and defaults are
 * evaluated in the enclosing scope. The first plain parameter may be a method's self or cls. */
void pyx_walk_params(struct parser *p, int outer, int fscope, size_t a, size_t b, int first_kind,
		     int cls_def)
{
	size_t s = a, e, k;
	int item = 0;

	while (s < b) {
		bool star = false;

		e = pyx_find_top(p, s, b, F_COMMA);
		k = s;
		while (k < e &&
		       (is_op(p, k, '*') || is_op(p, k, OP2('*', '*')) || is_op(p, k, '/'))) {
			star = true;
			k++;
		}
		if (k < e && is_ident(p, k)) {
			int kind = (item == 0 && !star) ? first_kind : B_OTHER;

			pyx_add_binding(p, fscope, k, kind, kind == B_OTHER ? -1 : cls_def, 0);
			k++;
		}
		pyx_walk(p, outer, k, e, false);
		item++;
		s = e + 1;
	}
}

static void walk_lambda(struct parser *p, int scope, size_t i, size_t end)
{
	size_t colon = lambda_colon(p, i, end);
	int ls = pyx_new_scope(p, SC_LAMBDA, scope, -1);

	pyx_walk_params(p, scope, ls, i + 1, colon, B_OTHER, -1);
	if (colon < end)
		pyx_walk(p, ls, colon + 1, end, false);
}

/* [elt for target in iter if cond ...]: the first iterable belongs to the enclosing scope. */
static void walk_comp(struct parser *p, int scope, size_t open, size_t close)
{
	size_t first = pyx_find_top(p, open + 1, close, F_FOR), c = first, next, in;
	int cs = pyx_new_scope(p, SC_COMP, scope, -1);
	bool first_for = true;

	while (c < close) {
		size_t kw = is_kw(p, c, KW_ASYNC) ? c + 1 : c;

		next = pyx_find_top(p, kw + 1, close, F_CLAUSE);
		if (is_kw(p, kw, KW_FOR)) {
			in = pyx_find_top(p, kw + 1, next, F_IN);
			pyx_walk_target(p, cs, kw + 1, in, B_OTHER, -1);
			if (in < next)
				pyx_walk(p, first_for ? scope : cs, in + 1, next, false);
			first_for = false;
		} else {
			pyx_walk(p, cs, kw + 1, next, false);
		}
		c = next;
	}
	pyx_walk(p, cs, open + 1, first, false);
}

static bool no_name_here(const struct parser *p, size_t i)
{
	const struct ptok *prev;

	if (!i)
		return false;
	prev = &p->t[i - 1];
	/* an attribute of something that is not a plain chain, a conversion (!r), or a name glued
	 * to a literal or a closing bracket (only keywords may follow those) */
	return (prev->kind == LS_PYTOK_OP &&
		(prev->op == '.' || (prev->flags & LS_PYTOK_F_CONVERSION) || is_close(p, i - 1))) ||
	       prev->kind == LS_PYTOK_NUMBER || prev->kind == LS_PYTOK_STRING ||
	       prev->kind == LS_PYTOK_FSTRING_END;
}

void pyx_walk(struct parser *p, int scope, size_t a, size_t b, bool in_call)
{
	size_t i = a, k, c;

	if (++p->depth > MAX_DEPTH) {
		p->depth--;
		return;
	}
	while (i < b && !p->err) {
		const struct ptok *t = &p->t[i];

		if (t->kind == LS_PYTOK_NAME) {
			if (t->name < KW__HARD_END) {
				if (t->name == KW_LAMBDA) {
					k = lambda_end(p, i, b);
					walk_lambda(p, scope, i, k);
					i = k > i ? k : i + 1;
					continue;
				}
				i++;
				continue;
			}
			if (no_name_here(p, i) || (in_call && is_op(p, i + 1, '='))) {
				i++;
				continue;
			}
			if (is_op(p, i + 1, OP2(':', '='))) {
				pyx_add_binding(p, non_comp(p, scope), i, B_OTHER, -1, 0);
				i++;
				continue;
			}
			k = chain_end(p, i, b);
			pyx_add_ref(p, scope, i, k, false);
			i = k;
			continue;
		}
		if (is_open(p, i)) {
			c = p->close[i];
			if (c > b)
				c = b;
			if (t->kind == LS_PYTOK_OP && !(t->flags & LS_PYTOK_F_FIELD) &&
			    pyx_find_top(p, i + 1, c, F_FOR) < c)
				walk_comp(p, scope, i, c);
			else
				pyx_walk(p, scope, i + 1, c,
					 t->kind == LS_PYTOK_OP && t->op == '(');
			i = skip(p, i);
			continue;
		}
		i++;
	}
	p->depth--;
}

/*
 * Assignment-like targets in [a, b): bare names bind (kind; inst for a lone name bound to
 * `Callee(...)`), attribute targets load their base and mark the stored attribute, subscripts
 * and calls inside are loads, nested tuples and lists are targets again.
 */
void pyx_walk_target(struct parser *p, int scope, size_t a, size_t b, int kind, int inst)
{
	size_t i = a, k;

	if (++p->depth > MAX_DEPTH) {
		p->depth--;
		return;
	}
	while (i < b && !p->err) {
		const struct ptok *t = &p->t[i];

		if (is_ident(p, i) && i > 0 && is_op(p, i - 1, '.')) { /* a[0].attr = ... */
			add_store(p, scope, i, i, false);
			i++;
			continue;
		}
		if (is_ident(p, i) && !no_name_here(p, i)) {
			k = chain_end(p, i, b);
			if (k == i + 1 && !(k < b && (is_op(p, k, '(') || is_op(p, k, '[')))) {
				bool whole = i == a && k == b;

				pyx_add_binding(p, scope, i, whole ? kind : B_OTHER,
						whole && kind == B_INSTANCE ? inst : -1, 0);
				i = k;
				continue;
			}
			if (k > i + 1 && !(k < b && (is_op(p, k, '(') || is_op(p, k, '[')))) {
				add_store(p, scope, i, k - 1, k == i + 3);
				pyx_add_ref(p, scope, i, k, true);
			} else {
				pyx_add_ref(p, scope, i, k, false);
			}
			i = k;
			continue;
		}
		if (is_open(p, i)) {
			size_t c = p->close[i] > b ? b : p->close[i];
			bool subscript =
				i > a && (p->t[i - 1].kind == LS_PYTOK_NAME || is_close(p, i - 1) ||
					  p->t[i - 1].kind == LS_PYTOK_STRING);

			if (subscript || t->kind != LS_PYTOK_OP || t->op == '{')
				pyx_walk(p, scope, i + 1, c, t->op == '(');
			else
				pyx_walk_target(p, scope, i + 1, c, B_OTHER, -1);
			i = skip(p, i);
			continue;
		}
		if (is_kw(p, i,
			  KW_LAMBDA)) { /* not a target; stay correct about its scope anyway */
			k = lambda_end(p, i, b);
			walk_lambda(p, scope, i, k);
			i = k > i ? k : i + 1;
			continue;
		}
		i++;
	}
	p->depth--;
}

/* case patterns: bare names capture, dotted names and class patterns load, kw= keys skip. */
void pyx_walk_pattern(struct parser *p, int scope, size_t a, size_t b)
{
	size_t i = a, k;

	if (++p->depth > MAX_DEPTH) {
		p->depth--;
		return;
	}
	while (i < b && !p->err) {
		if (is_ident(p, i) && !no_name_here(p, i)) {
			k = chain_end(p, i, b);
			if (k == i + 1 && is_op(p, k, '=')) {
				i = k + 1;
			} else if (k > i + 1 || is_op(p, k, '(')) {
				pyx_add_ref(p, scope, i, k, false);
				i = k;
			} else {
				if (p->t[i].name != KW_UNDERSCORE)
					pyx_add_binding(p, scope, i, B_OTHER, -1, 0);
				i = k;
			}
			continue;
		}
		if (is_kw(p, i, KW_AS) && is_ident(p, i + 1)) {
			pyx_add_binding(p, scope, i + 1, B_OTHER, -1, 0);
			i += 2;
			continue;
		}
		if (is_open(p, i) && p->t[i].kind == LS_PYTOK_OP) {
			pyx_walk_pattern(p, scope, i + 1, p->close[i] > b ? b : p->close[i]);
			i = skip(p, i);
			continue;
		}
		i = skip(p, i);
	}
	p->depth--;
}

/* `x = Callee(...)` with nothing after the call: the value an instance binding can use. */
bool pyx_is_ctor_call(const struct parser *p, size_t a, size_t b)
{
	size_t k;

	if (a >= b || !is_ident(p, a))
		return false;
	k = chain_end(p, a, b);
	return is_op(p, k, '(') && p->close[k] == b - 1 && is_close(p, b - 1);
}
