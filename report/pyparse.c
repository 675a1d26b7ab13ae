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

#include "pyindex_int.h"

#define MAX_DEPTH 200 /* nested blocks, brackets and lambdas we follow (CPython stops at 200) */

struct ptok {
	uint8_t kind;
	uint16_t flags;
	uint32_t op;
	uint32_t name; /* NAME: interned id */
	int line, end_line, col, end_col, col16, end_col16;
};

struct parser {
	struct ls_pyindex *ix;
	int src;
	struct ptok *t;
	size_t n;
	uint32_t *close; /* open bracket -> its closer, or the NEWLINE/DEDENT that cut it off */
	size_t i;
	int depth;
	int err;
	struct hmap decls; /* (scope, name) -> B_GLOBAL / B_NONLOCAL */
	size_t bind0;
};

#define OP1(a)	  LS_PYOP1(a)
#define OP2(a, b) LS_PYOP2(a, b)

static uint64_t sn_key(int scope, uint32_t name)
{
	return (uint64_t)(uint32_t)scope << 32 | name;
}

static bool is_op(const struct parser *p, size_t i, uint32_t op)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_OP && p->t[i].op == op;
}

static bool is_kw(const struct parser *p, size_t i, uint32_t kw)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_NAME && p->t[i].name == kw;
}

/* An identifier that can be bound or loaded: not a hard keyword. */
static bool is_ident(const struct parser *p, size_t i)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_NAME && p->t[i].name >= KW__HARD_END;
}

static bool is_open(const struct parser *p, size_t i)
{
	const struct ptok *t = &p->t[i];

	return t->kind == LS_PYTOK_FSTRING_START ||
	       (t->kind == LS_PYTOK_OP && (t->op == '(' || t->op == '[' || t->op == '{'));
}

static bool is_close(const struct parser *p, size_t i)
{
	const struct ptok *t = &p->t[i];

	return i < p->n && (t->kind == LS_PYTOK_FSTRING_END ||
			    (t->kind == LS_PYTOK_OP && (t->op == ')' || t->op == ']' || t->op == '}')));
}

static bool is_boundary(const struct parser *p, size_t i)
{
	int k = p->t[i].kind;

	return k == LS_PYTOK_NEWLINE || k == LS_PYTOK_INDENT || k == LS_PYTOK_DEDENT ||
	       k == LS_PYTOK_ENDMARKER;
}

/* Index after token i, a whole bracket group if i opens one. */
static size_t skip(const struct parser *p, size_t i)
{
	size_t c;

	if (!is_open(p, i))
		return i + 1;
	c = p->close[i];
	if (c <= i)
		return i + 1;
	return is_close(p, c) ? c + 1 : c;
}

static size_t stmt_end(const struct parser *p, size_t i)
{
	while (i < p->n && !is_boundary(p, i))
		i++;
	return i < p->n ? i : p->n - 1;
}

/* After token i of a lambda: the index of its parameters' ':' (or b). */
static size_t lambda_colon(const struct parser *p, size_t i, size_t b)
{
	for (i++; i < b;) {
		if (is_op(p, i, ':'))
			return i;
		i = skip(p, i);
	}
	return b;
}

enum find_what { F_COLON, F_COMMA, F_ASSIGN, F_SEMI, F_FOR, F_IN, F_AS, F_IF, F_AUG, F_CLAUSE };

static bool matches(const struct parser *p, size_t i, enum find_what w)
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
		return matches(p, i, F_FOR) || is_kw(p, i, KW_IF);
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
static size_t find_top(const struct parser *p, size_t i, size_t b, enum find_what w)
{
	while (i < b) {
		if (matches(p, i, w))
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

static int new_scope(struct parser *p, int kind, int parent, int def)
{
	struct ls_pyindex *ix = p->ix;
	struct scope sc = { .kind = kind, .parent = parent, .src = p->src, .def = def };

	if (VEC_PUSH(ix->scopes, sc)) {
		p->err = -ENOMEM;
		return parent;
	}
	return ix->scopes.n - 1;
}

static int add_binding(struct parser *p, int scope, size_t tok, int kind, int a, uint32_t attr)
{
	struct binding b = {
		.scope = scope,
		.name = p->t[tok].name,
		.kind = kind,
		.line = p->t[tok].line,
		.col = p->t[tok].col,
		.a = a,
		.attr = attr,
		.next = -1,
	};

	if (kind == B_GLOBAL || kind == B_NONLOCAL) {
		if (hmap_put(&p->decls, sn_key(scope, b.name), kind))
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

static size_t chain_end(const struct parser *p, size_t i, size_t b)
{
	size_t k = i + 1;

	while (k + 1 < b && is_op(p, k, '.') && p->t[k + 1].kind == LS_PYTOK_NAME)
		k += 2;
	return k;
}

/* A load of the dotted chain at [i, k): base name then attributes. skip_last drops the last
 * attribute (an assignment target's stored attribute, which names no definition). */
static int add_ref(struct parser *p, int scope, size_t i, size_t k, bool skip_last)
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
		struct attr at = { a->name, a->line, a->col, a->end_col, a->col16, a->end_col16 };

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

static void walk(struct parser *p, int scope, size_t a, size_t b, bool in_call);
static void walk_target(struct parser *p, int scope, size_t a, size_t b, int kind, int inst);

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
		if (matches(p, j, F_FOR))
			break;
		j = skip(p, j);
	}
	p->depth--;
	return j < b ? j : b;
}

/* Parameters of a def or lambda in [a, b): names bind in fscope, annotations and defaults are
 * evaluated in the enclosing scope. The first plain parameter may be a method's self or cls. */
static void walk_params(struct parser *p, int outer, int fscope, size_t a, size_t b,
			int first_kind, int cls_def)
{
	size_t s = a, e, k;
	int item = 0;

	while (s < b) {
		bool star = false;

		e = find_top(p, s, b, F_COMMA);
		k = s;
		while (k < e && (is_op(p, k, '*') || is_op(p, k, OP2('*', '*')) || is_op(p, k, '/'))) {
			star = true;
			k++;
		}
		if (k < e && is_ident(p, k)) {
			int kind = (item == 0 && !star) ? first_kind : B_OTHER;

			add_binding(p, fscope, k, kind, kind == B_OTHER ? -1 : cls_def, 0);
			k++;
		}
		walk(p, outer, k, e, false);
		item++;
		s = e + 1;
	}
}

static void walk_lambda(struct parser *p, int scope, size_t i, size_t end)
{
	size_t colon = lambda_colon(p, i, end);
	int ls = new_scope(p, SC_LAMBDA, scope, -1);

	walk_params(p, scope, ls, i + 1, colon, B_OTHER, -1);
	if (colon < end)
		walk(p, ls, colon + 1, end, false);
}

/* [elt for target in iter if cond ...]: the first iterable belongs to the enclosing scope. */
static void walk_comp(struct parser *p, int scope, size_t open, size_t close)
{
	size_t first = find_top(p, open + 1, close, F_FOR), c = first, next, in;
	int cs = new_scope(p, SC_COMP, scope, -1);
	bool first_for = true;

	while (c < close) {
		size_t kw = is_kw(p, c, KW_ASYNC) ? c + 1 : c;

		next = find_top(p, kw + 1, close, F_CLAUSE);
		if (is_kw(p, kw, KW_FOR)) {
			in = find_top(p, kw + 1, next, F_IN);
			walk_target(p, cs, kw + 1, in, B_OTHER, -1);
			if (in < next)
				walk(p, first_for ? scope : cs, in + 1, next, false);
			first_for = false;
		} else {
			walk(p, cs, kw + 1, next, false);
		}
		c = next;
	}
	walk(p, cs, open + 1, first, false);
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

static void walk(struct parser *p, int scope, size_t a, size_t b, bool in_call)
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
				add_binding(p, non_comp(p, scope), i, B_OTHER, -1, 0);
				i++;
				continue;
			}
			k = chain_end(p, i, b);
			add_ref(p, scope, i, k, false);
			i = k;
			continue;
		}
		if (is_open(p, i)) {
			c = p->close[i];
			if (c > b)
				c = b;
			if (t->kind == LS_PYTOK_OP && !(t->flags & LS_PYTOK_F_FIELD) &&
			    find_top(p, i + 1, c, F_FOR) < c)
				walk_comp(p, scope, i, c);
			else
				walk(p, scope, i + 1, c,
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
static void walk_target(struct parser *p, int scope, size_t a, size_t b, int kind, int inst)
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

				add_binding(p, scope, i, whole ? kind : B_OTHER,
					    whole && kind == B_INSTANCE ? inst : -1, 0);
				i = k;
				continue;
			}
			if (k > i + 1 && !(k < b && (is_op(p, k, '(') || is_op(p, k, '[')))) {
				add_store(p, scope, i, k - 1, k == i + 3);
				add_ref(p, scope, i, k, true);
			} else {
				add_ref(p, scope, i, k, false);
			}
			i = k;
			continue;
		}
		if (is_open(p, i)) {
			size_t c = p->close[i] > b ? b : p->close[i];
			bool subscript = i > a && (p->t[i - 1].kind == LS_PYTOK_NAME ||
						   is_close(p, i - 1) ||
						   p->t[i - 1].kind == LS_PYTOK_STRING);

			if (subscript || t->kind != LS_PYTOK_OP || t->op == '{')
				walk(p, scope, i + 1, c, t->op == '(');
			else
				walk_target(p, scope, i + 1, c, B_OTHER, -1);
			i = skip(p, i);
			continue;
		}
		if (is_kw(p, i, KW_LAMBDA)) { /* not a target; stay correct about its scope anyway */
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
static void walk_pattern(struct parser *p, int scope, size_t a, size_t b)
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
				add_ref(p, scope, i, k, false);
				i = k;
			} else {
				if (p->t[i].name != KW_UNDERSCORE)
					add_binding(p, scope, i, B_OTHER, -1, 0);
				i = k;
			}
			continue;
		}
		if (is_kw(p, i, KW_AS) && is_ident(p, i + 1)) {
			add_binding(p, scope, i + 1, B_OTHER, -1, 0);
			i += 2;
			continue;
		}
		if (is_open(p, i) && p->t[i].kind == LS_PYTOK_OP) {
			walk_pattern(p, scope, i + 1, p->close[i] > b ? b : p->close[i]);
			i = skip(p, i);
			continue;
		}
		i = skip(p, i);
	}
	p->depth--;
}

/* `x = Callee(...)` with nothing after the call: the value an instance binding can use. */
static bool is_ctor_call(const struct parser *p, size_t a, size_t b)
{
	size_t k;

	if (a >= b || !is_ident(p, a))
		return false;
	k = chain_end(p, a, b);
	return is_op(p, k, '(') && p->close[k] == b - 1 && is_close(p, b - 1);
}

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

		e = find_top(p, s, b, F_COMMA);
		as = find_top(p, s, e, F_AS);
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
			add_binding(p, scope, as + 1, B_IMPORT_MOD, key, 0);
		else if (as == e)
			add_binding(p, scope, s, B_IMPORT_MOD, key, 0);
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
		e = find_top(p, s, b, F_COMMA);
		as = find_top(p, s, e, F_AS);
		if (is_ident(p, s)) {
			size_t bt = (as < e && is_ident(p, as + 1)) ? as + 1 : s;
			int bi = add_binding(p, scope, bt, B_IMPORT_FROM, key, p->t[s].name);
			int ri = add_ref(p, scope, s, s + 1, false);

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
					add_binding(p, scope, eq,
						    t->name == KW_GLOBAL ? B_GLOBAL : B_NONLOCAL, -1, 0);
			return;
		case KW_DEL:
			walk_target(p, scope, a + 1, b, B_OTHER, -1);
			return;
		case KW_TYPE: /* type X[T] = ... (3.12) */
			if (is_ident(p, a + 1) && (is_op(p, a + 2, '=') || is_op(p, a + 2, '['))) {
				add_binding(p, scope, a + 1, B_OTHER, -1, 0);
				walk(p, scope, a + 2, b, false);
				return;
			}
			break;
		}
	}
	eq = find_top(p, a, b, F_ASSIGN);
	colon = find_top(p, a, eq, F_COLON);
	if (colon < eq) { /* annotated assignment */
		bool inst = eq < b && is_ctor_call(p, eq + 1, b);
		int r0 = p->ix->refs.n;

		if (eq < b)
			walk(p, scope, eq + 1, b, false);
		walk(p, scope, colon + 1, eq, false);
		walk_target(p, scope, a, colon, inst ? B_INSTANCE : B_OTHER, inst ? r0 : -1);
		return;
	}
	aug = find_top(p, a, b, F_AUG);
	if (aug < b && aug < eq) {
		walk_target(p, scope, a, aug, B_OTHER, -1);
		walk(p, scope, aug + 1, b, false);
		return;
	}
	if (eq < b) {
		size_t last = eq, v0;
		int r0;
		bool inst;

		while ((prev = find_top(p, last + 1, b, F_ASSIGN)) < b)
			last = prev;
		v0 = last + 1;
		inst = is_ctor_call(p, v0, b);
		r0 = p->ix->refs.n;
		walk(p, scope, v0, b, false);
		for (prev = a; prev < v0;) {
			size_t e = find_top(p, prev, v0, F_ASSIGN);

			walk_target(p, scope, prev, e, inst ? B_INSTANCE : B_OTHER, inst ? r0 : -1);
			prev = e + 1;
		}
		return;
	}
	walk(p, scope, a, b, false);
}

static void parse_simple_line(struct parser *p, int scope)
{
	size_t e = stmt_end(p, p->i), s;

	while (p->i < e && !p->err) {
		s = find_top(p, p->i, e, F_SEMI);
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
		e = find_top(p, s, b, F_COMMA);
		as = find_top(p, s, e, F_AS);
		walk(p, scope, s, as, false);
		if (as < e)
			walk_target(p, scope, as + 1, e, B_OTHER, -1);
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
	decl = hmap_get(&p->decls, sn_key(scope, name));
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

		e = find_top(p, s, b, F_COMMA);
		if (s == e)
			continue;
		if (is_ident(p, s) && is_op(p, s + 1, '=')) {
			ix->defs.v[def].dynamic = 1; /* metaclass= and other class keywords */
			walk(p, scope, s + 2, e, false);
			continue;
		}
		if (is_op(p, s, '*') || is_op(p, s, OP2('*', '*'))) {
			ix->defs.v[def].dynamic = 1; /* bases unknown until run time */
			walk(p, scope, s, e, false);
			continue;
		}
		walk(p, scope, s, e, false);
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
	struct ls_pyindex_def pub = { 0 };
	struct defi di = { .src = p->src, .base0 = -1, .child0 = -1, .rbase0 = -1 };
	const struct ptok *nt = &p->t[nm];
	size_t qlen;

	for (d = dec0; d < i;) {
		de = stmt_end(p, d);
		walk(p, scope, d + 1, de, false);
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
	pub.parent = ix->scopes.v[scope].def >= 0 && ix->defs.v[ix->scopes.v[scope].def].src == p->src
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
	add_binding(p, scope, nm, B_DEF, def, 0);
	body = new_scope(p, is_class ? SC_CLASS : SC_FUNCTION, scope, def);
	ix->defs.v[def].scope = body;

	j = nm + 1;
	if (is_op(p, j, '[')) { /* PEP 695 type parameters */
		walk_params(p, scope, body, j + 1, p->close[j] < e ? p->close[j] : e, B_OTHER, -1);
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
			walk_params(p, scope, body, j + 1, p->close[j] < e ? p->close[j] : e,
				    first_kind, ix->scopes.v[scope].def);
			j = skip(p, j);
		}
	}
	colon = find_top(p, j, e, F_COLON);
	walk(p, scope, j, colon, false); /* return annotation, or stray tokens */
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

	if (i + 1 >= e || (n->kind == LS_PYTOK_OP && (n->op == '=' || n->op == '.' ||
						       n->op == ':' || n->op == ',' ||
						       n->op == ')' || matches(p, i + 1, F_AUG))))
		return false;
	*colon = find_top(p, i + 1, e, F_COLON);
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
		walk(p, scope, x + 1, e, false);
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
		colon = find_top(p, i + 1, e, F_COLON);
		if (colon >= e)
			break;
		if (kw == KW_FOR) {
			x = find_top(p, i + 1, colon, F_IN);
			walk_target(p, scope, i + 1, x, B_OTHER, -1);
			if (x < colon)
				walk(p, scope, x + 1, colon, false);
		} else if (kw == KW_WITH) {
			parse_with_items(p, scope, i + 1, colon);
		} else if (kw == KW_EXCEPT) {
			x = find_top(p, i + 1, colon, F_AS);
			walk(p, scope, i + 1, x, false);
			if (x < colon)
				walk_target(p, scope, x + 1, colon, B_OTHER, -1);
		} else {
			walk(p, scope, i + 1, colon, false);
		}
		parse_suite(p, scope, colon, false);
		return;
	case KW_MATCH:
		if (!is_soft_stmt(p, i, e, &colon, true))
			break;
		walk(p, scope, i + 1, colon, false);
		parse_suite(p, scope, colon, true);
		return;
	case KW_CASE:
		if (!in_match || !is_soft_stmt(p, i, e, &colon, false))
			break;
		x = find_top(p, i + 1, colon, F_IF);
		walk_pattern(p, scope, i + 1, x);
		if (x < colon)
			walk(p, scope, x + 1, colon, false);
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
		if (k == LS_PYTOK_INDENT) { /* unexpected indent: a nested block of the same scope */
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

/*
 * Bindings under `global x` belong to the module and those under `nonlocal x` to the enclosing
 * function that binds x; every binding then joins its (scope, name) chain.
 */
static int link_bindings(struct parser *p)
{
	struct ls_pyindex *ix = p->ix;
	int module = ix->srcs.v[p->src].module_scope, pass;
	size_t b;

	for (pass = 0; pass < 2; pass++) {
		for (b = p->bind0; b < ix->binds.n; b++) {
			struct binding *bd = &ix->binds.v[b];
			uint32_t *decl = bd->kind == B_GLOBAL || bd->kind == B_NONLOCAL
						 ? NULL
						 : hmap_get(&p->decls, sn_key(bd->scope, bd->name));
			uint32_t *head;

			if ((decl && *decl == B_NONLOCAL) != (pass == 1))
				continue;
			if (decl && *decl == B_GLOBAL) {
				bd->scope = module;
			} else if (decl) {
				int s = ix->scopes.v[bd->scope].parent;

				while (s >= 0 && ix->scopes.v[s].kind != SC_MODULE &&
				       (ix->scopes.v[s].kind == SC_CLASS ||
					!hmap_get(&ix->bind_head, sn_key(s, bd->name))))
					s = ix->scopes.v[s].parent;
				if (s >= 0 && ix->scopes.v[s].kind != SC_MODULE)
					bd->scope = s;
			}
			head = hmap_get(&ix->bind_head, sn_key(bd->scope, bd->name));
			bd->next = head ? (int)*head : -1;
			if (hmap_put(&ix->bind_head, sn_key(bd->scope, bd->name), b))
				return -ENOMEM;
		}
	}
	return 0;
}

int pyx_parse_source(struct ls_pyindex *ix, int src, const struct ls_pytok *toks, size_t n,
		     const char *text)
{
	struct parser p = { .ix = ix, .src = src, .bind0 = ix->binds.n };
	size_t i, k = 0;
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
	module = new_scope(&p, SC_MODULE, -1, -1);
	ix->srcs.v[src].module_scope = module;
	while (p.i < p.n && !p.err) {
		parse_block(&p, module, false);
		if (p.i < p.n && p.t[p.i].kind == LS_PYTOK_ENDMARKER)
			break;
	}
	err = p.err;
	if (!err)
		err = link_bindings(&p);
cleanup:
	hmap_release(&p.decls);
	free(p.t);
	free(p.close);
	return err;
}
