/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by pyindex.c (tables, module mapping, resolution, API) and pyparse.c (the
 * statement parser that fills scopes, bindings and references). Not a public header.
 */
#ifndef LS_PYINDEX_INT_H
#define LS_PYINDEX_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pyindex.h"
#include "pytok.h"

/* Names interned first, so that their ids are these constants. */
enum {
	/* hard keywords: every id below KW__HARD_END is a keyword */
	KW_FALSE,
	KW_NONE,
	KW_TRUE,
	KW_AND,
	KW_AS,
	KW_ASSERT,
	KW_ASYNC,
	KW_AWAIT,
	KW_BREAK,
	KW_CLASS,
	KW_CONTINUE,
	KW_DEF,
	KW_DEL,
	KW_ELIF,
	KW_ELSE,
	KW_EXCEPT,
	KW_FINALLY,
	KW_FOR,
	KW_FROM,
	KW_GLOBAL,
	KW_IF,
	KW_IMPORT,
	KW_IN,
	KW_IS,
	KW_LAMBDA,
	KW_NONLOCAL,
	KW_NOT,
	KW_OR,
	KW_PASS,
	KW_RAISE,
	KW_RETURN,
	KW_TRY,
	KW_WHILE,
	KW_WITH,
	KW_YIELD,
	KW__HARD_END,
	/* soft keywords and names the resolver treats specially */
	KW_MATCH = KW__HARD_END,
	KW_CASE,
	KW_TYPE,
	KW_UNDERSCORE,
	N_STATICMETHOD,
	N_CLASSMETHOD,
	N_DATACLASS,
	N_TOTAL_ORDERING,
	N_FINAL,
	N_OBJECT,
	N_NEW,
	N_INIT_SUBCLASS,
	N_CLASS_GETITEM,
	N__PREDEFINED,
};

#define VEC(T)                 \
	struct {               \
		T *v;          \
		size_t n, cap; \
	}

/* Makes room for one more element; returns 0 or -ENOMEM. */
int pyx_vec_reserve(void **v, size_t *cap, size_t need, size_t elsz);
#define VEC_PUSH(vec, ...)                                                             \
	(pyx_vec_reserve((void **)&(vec).v, &(vec).cap, (vec).n + 1, sizeof(*(vec).v)) \
		 ? -ENOMEM                                                             \
		 : ((vec).v[(vec).n++] = (__VA_ARGS__), 0))

/* u64 -> u32 open-addressing map; keys are stored +1 so that 0 marks an empty slot. */
struct pyx_hmap_slot {
	uint64_t key;
	uint32_t val;
};

struct pyx_hmap {
	struct pyx_hmap_slot *slots;
	size_t cap, n;
};
int pyx_hmap_put(struct pyx_hmap *m, uint64_t key, uint32_t val);
uint32_t *pyx_hmap_get(const struct pyx_hmap *m, uint64_t key);
void pyx_hmap_release(struct pyx_hmap *m);
void pyx_hmap_clear(struct pyx_hmap *m);

enum scope_kind { SC_MODULE, SC_CLASS, SC_FUNCTION, SC_LAMBDA, SC_COMP };

struct scope {
	uint8_t kind;
	int parent; /* -1 for a module */
	int src;
	int def;       /* global def index for SC_CLASS/SC_FUNCTION, else -1 */
	int star_line; /* last `from m import *` in this scope, 0 if none */
	int bfirst;    /* its bindings: binds[bfirst .. bfirst + bcount), sorted by name */
	int bcount;
};

enum bind_kind {
	B_DEF,	       /* def/class statement: a = global def */
	B_IMPORT_MOD,  /* import a.b [as c]: a = module key */
	B_IMPORT_FROM, /* from m import x [as y]: a = module key, attr = x */
	B_INSTANCE,    /* x = Callee(...): a = ref of the callee chain */
	B_SELF,	       /* first parameter of a method: a = class def */
	B_CLS,	       /* first parameter of a classmethod / __new__: a = class def */
	B_OTHER,       /* anything else that binds: parameters, assignments, targets, del */
	B_GLOBAL,      /* `global` declaration (redirects, binds nothing) */
	B_NONLOCAL,    /* `nonlocal` declaration */
};

enum val_kind { V_NONE, V_DEF, V_MOD, V_INST, V_SELF, V_CLS };

struct val {
	uint8_t kind;
	int a; /* V_DEF/V_INST/V_SELF/V_CLS: def; V_MOD: module key */
	int b; /* V_MOD: the importing source */
};

struct binding {
	int scope;
	uint32_t name;
	uint8_t kind;
	uint8_t memo; /* 0 unresolved, 1 resolving, 2 resolved */
	int line, col;
	int a;
	uint32_t attr;
	struct val v;
};

enum ref_flags {
	R_IMPORT = 1, /* the imported name of `from m import name`: resolves as binding `a` */
};

struct ref {
	int scope;
	uint32_t name;
	uint8_t flags;
	uint16_t nattr;
	int binding; /* R_IMPORT */
	int line, col, end_col, col16, end_col16;
	uint32_t attr0; /* first of nattr entries in attrs */
};

struct attr {
	uint32_t name;
	int line, col, end_col, col16, end_col16;
};

/* An attribute assignment or deletion `base.attr = ...`: simple when base is a bare name. */
struct store {
	int scope;
	uint32_t base;
	uint32_t attr;
	int line, col;
	bool simple;
};

struct defi {
	int src;
	int local; /* index into the source's public defs */
	int scope; /* the body's scope */
	uint8_t is_class;
	uint8_t dynamic;  /* class: metaclass=, class keywords, *bases or unknown decorators */
	uint8_t dyn;	  /* memo of class_dynamic() during resolve */
	int base0, nbase; /* class: entries in bases (a ref index, or -1 for an opaque base) */
	/* filled by resolve */
	int rbase0, nrbase; /* resolved bases in rbases (class def, or -1 for unknown) */
	int child0;	    /* first subclass link in children, -1 for none */
};

struct source {
	int id;
	char *path; /* normalized */
	int module_scope;
	int def0; /* global index of its first def; its defs are contiguous */
	VEC(struct ls_pyindex_def) defs;
	VEC(struct ls_pyindex_link) links;
	int lines;
	size_t tokens;
};

struct arena_chunk;

struct ls_pyindex {
	/* strings: interned names and module keys, and def qualnames */
	struct arena_chunk *arena;
	char *arena_p;
	size_t arena_left;
	VEC(const char *) strs;
	VEC(uint32_t) str_len;
	struct pyx_hmap
		str_ids; /* string hash -> first id with that hash; chained through str_next */
	VEC(uint32_t) str_next;

	VEC(struct source) srcs;
	struct pyx_hmap src_by_id;
	VEC(struct scope) scopes;
	VEC(struct binding) binds; /* grouped by scope, then sorted by name (see bind_first) */
	VEC(struct ref) refs;
	VEC(struct attr) attrs;
	VEC(struct defi) defs;
	VEC(int) bases;
	VEC(struct store) stores;
	/* filled by resolve from stores */
	struct pyx_hmap stored_attrs; /* attr names assigned on objects we cannot identify */
	struct pyx_hmap class_stores; /* (class def, attr) assigned on its instances or itself */
	struct pyx_hmap mod_stores;   /* (source, attr) assigned on a module from outside */

	/* module mapping, rebuilt by resolve */
	struct pyx_hmap mod_path;    /* "@path" key -> source */
	struct pyx_hmap mod_dotted;  /* dotted suffix key -> first entry in mod_entries */
	struct pyx_hmap mod_ns;	     /* package keys (dotted or "@dir") that hold indexed modules */
	VEC(int) mod_entries;	     /* pairs (source, next entry) */
	struct pyx_hmap mod_memo;    /* (key, importer) -> source + 1, or 0 */
	struct pyx_hmap attr_memo;   /* (class def, name) -> override verdict */
	struct pyx_hmap mro_memo;    /* (class def, name) -> lookup along the bases */
	struct pyx_hmap stored_memo; /* (class def, name) -> assigned on it or a base */
	VEC(int) rbases;
	VEC(int) children; /* pairs (subclass def, next) */
	bool resolved;
	size_t nlinks;
};

/* First binding of name in scope, or -1; bind_next() walks the others of that name. */
static inline int bind_first(const struct ls_pyindex *ix, int scope, uint32_t name)
{
	const struct scope *sc = &ix->scopes.v[scope];
	int lo = sc->bfirst, hi = sc->bfirst + sc->bcount;

	while (lo < hi) {
		int mid = lo + (hi - lo) / 2;

		if (ix->binds.v[mid].name < name)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < sc->bfirst + sc->bcount && ix->binds.v[lo].name == name ? lo : -1;
}

static inline int bind_next(const struct ls_pyindex *ix, int b)
{
	const struct binding *x = &ix->binds.v[b];
	const struct scope *sc = &ix->scopes.v[x->scope];

	return b + 1 < sc->bfirst + sc->bcount && ix->binds.v[b + 1].name == x->name ? b + 1 : -1;
}

/* Interns s[0..len) and returns its id, or -ENOMEM. */
int64_t pyx_intern(struct ls_pyindex *ix, const char *s, size_t len);
/* Copies a string into the arena; NULL on failure. */
char *pyx_strdup(struct ls_pyindex *ix, const char *s, size_t len);

/* pyparse.c: parses one source's tokens into scopes, bindings, refs and defs. */
int pyx_parse_source(struct ls_pyindex *ix, int src, const struct ls_pytok *toks, size_t n,
		     const char *text);

#endif
