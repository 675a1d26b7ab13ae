/* SPDX-License-Identifier: MIT */
/*
 * Internals of the Python statement parser, shared by pyparse.c (statements, imports, defs),
 * pyexpr.c (expressions: loads, targets, lambdas, comprehensions, patterns) and pybindings.c
 * (where bindings end up). Not a public header.
 */
#ifndef LS_PYPARSE_INT_H
#define LS_PYPARSE_INT_H

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
	struct pyx_hmap decls; /* (scope, name) -> B_GLOBAL / B_NONLOCAL */
	size_t bind0;
};

#define OP1(a)	  LS_PYOP1(a)
#define OP2(a, b) LS_PYOP2(a, b)

static inline uint64_t sn_key(int scope, uint32_t name)
{
	return (uint64_t)(uint32_t)scope << 32 | name;
}

static inline bool is_op(const struct parser *p, size_t i, uint32_t op)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_OP && p->t[i].op == op;
}

static inline bool is_kw(const struct parser *p, size_t i, uint32_t kw)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_NAME && p->t[i].name == kw;
}

/* An identifier that can be bound or loaded: not a hard keyword. */
static inline bool is_ident(const struct parser *p, size_t i)
{
	return i < p->n && p->t[i].kind == LS_PYTOK_NAME && p->t[i].name >= KW__HARD_END;
}

static inline bool is_open(const struct parser *p, size_t i)
{
	const struct ptok *t = &p->t[i];

	return t->kind == LS_PYTOK_FSTRING_START ||
	       (t->kind == LS_PYTOK_OP && (t->op == '(' || t->op == '[' || t->op == '{'));
}

static inline bool is_close(const struct parser *p, size_t i)
{
	const struct ptok *t = &p->t[i];

	return i < p->n &&
	       (t->kind == LS_PYTOK_FSTRING_END ||
		(t->kind == LS_PYTOK_OP && (t->op == ')' || t->op == ']' || t->op == '}')));
}

static inline bool is_boundary(const struct parser *p, size_t i)
{
	int k = p->t[i].kind;

	return k == LS_PYTOK_NEWLINE || k == LS_PYTOK_INDENT || k == LS_PYTOK_DEDENT ||
	       k == LS_PYTOK_ENDMARKER;
}

/* Index after token i, a whole bracket group if i opens one. */
static inline size_t skip(const struct parser *p, size_t i)
{
	size_t c;

	if (!is_open(p, i))
		return i + 1;
	c = p->close[i];
	if (c <= i)
		return i + 1;
	return is_close(p, c) ? c + 1 : c;
}

static inline size_t stmt_end(const struct parser *p, size_t i)
{
	while (i < p->n && !is_boundary(p, i))
		i++;
	return i < p->n ? i : p->n - 1;
}

static inline size_t chain_end(const struct parser *p, size_t i, size_t b)
{
	size_t k = i + 1;

	while (k + 1 < b && is_op(p, k, '.') && p->t[k + 1].kind == LS_PYTOK_NAME)
		k += 2;
	return k;
}

enum find_what { F_COLON, F_COMMA, F_ASSIGN, F_SEMI, F_FOR, F_IN, F_AS, F_IF, F_AUG, F_CLAUSE };

/* Token classes and the first top-level match in a range (bracket groups and lambda parameter
 * lists skipped): pyexpr.c. */
bool pyx_matches(const struct parser *p, size_t i, enum find_what w);
size_t pyx_find_top(const struct parser *p, size_t i, size_t b, enum find_what w);
/* Recording scopes, bindings and loads; errors stick in p->err. */
int pyx_new_scope(struct parser *p, int kind, int parent, int def);
int pyx_add_binding(struct parser *p, int scope, size_t tok, int kind, int a, uint32_t attr);
int pyx_add_ref(struct parser *p, int scope, size_t i, size_t k, bool skip_last);
/* Walkers: loads in [a, b), targets that bind, def/lambda parameters, case patterns. */
void pyx_walk_params(struct parser *p, int outer, int fscope, size_t a, size_t b, int first_kind,
		     int cls_def);
void pyx_walk(struct parser *p, int scope, size_t a, size_t b, bool in_call);
void pyx_walk_target(struct parser *p, int scope, size_t a, size_t b, int kind, int inst);
void pyx_walk_pattern(struct parser *p, int scope, size_t a, size_t b);
bool pyx_is_ctor_call(const struct parser *p, size_t a, size_t b);
/* Settles the bindings of the source parsed into p (those from p->bind0 on): pybindings.c. */
int pyx_finish_bindings(struct parser *p, size_t scope0, size_t ref0);

#endif
