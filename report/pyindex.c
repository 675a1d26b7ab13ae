// SPDX-License-Identifier: MIT
/*
 * Python symbol index (see pyindex.h): containers, interned strings, sources and the public
 * accessors. pyparse.c and pyexpr.c fill scopes, bindings and references; pyresolve.c links them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pyindex_int.h"

#define ARENA_CHUNK (64 * 1024)

struct arena_chunk {
	struct arena_chunk *next;
	char data[];
};

static const char *const predefined[N__PREDEFINED] = {
	[KW_FALSE] = "False",
	[KW_NONE] = "None",
	[KW_TRUE] = "True",
	[KW_AND] = "and",
	[KW_AS] = "as",
	[KW_ASSERT] = "assert",
	[KW_ASYNC] = "async",
	[KW_AWAIT] = "await",
	[KW_BREAK] = "break",
	[KW_CLASS] = "class",
	[KW_CONTINUE] = "continue",
	[KW_DEF] = "def",
	[KW_DEL] = "del",
	[KW_ELIF] = "elif",
	[KW_ELSE] = "else",
	[KW_EXCEPT] = "except",
	[KW_FINALLY] = "finally",
	[KW_FOR] = "for",
	[KW_FROM] = "from",
	[KW_GLOBAL] = "global",
	[KW_IF] = "if",
	[KW_IMPORT] = "import",
	[KW_IN] = "in",
	[KW_IS] = "is",
	[KW_LAMBDA] = "lambda",
	[KW_NONLOCAL] = "nonlocal",
	[KW_NOT] = "not",
	[KW_OR] = "or",
	[KW_PASS] = "pass",
	[KW_RAISE] = "raise",
	[KW_RETURN] = "return",
	[KW_TRY] = "try",
	[KW_WHILE] = "while",
	[KW_WITH] = "with",
	[KW_YIELD] = "yield",
	[KW_MATCH] = "match",
	[KW_CASE] = "case",
	[KW_TYPE] = "type",
	[KW_UNDERSCORE] = "_",
	[N_STATICMETHOD] = "staticmethod",
	[N_CLASSMETHOD] = "classmethod",
	[N_DATACLASS] = "dataclass",
	[N_TOTAL_ORDERING] = "total_ordering",
	[N_FINAL] = "final",
	[N_OBJECT] = "object",
	[N_NEW] = "__new__",
	[N_INIT_SUBCLASS] = "__init_subclass__",
	[N_CLASS_GETITEM] = "__class_getitem__",
};

/* ---- containers ----------------------------------------------------------------------------- */

int pyx_vec_reserve(void **v, size_t *cap, size_t need, size_t elsz)
{
	size_t nc = *cap ? *cap : 16;
	void *nv;

	if (need <= *cap)
		return 0;
	while (nc < need)
		nc *= 2;
	nv = realloc(*v, nc * elsz);
	if (!nv)
		return -ENOMEM;
	*v = nv;
	*cap = nc;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static int pyx_hmap_grow(struct pyx_hmap *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 64, i, j;
	struct pyx_hmap_slot *slots = calloc(ncap, sizeof(*slots));

	if (!slots)
		return -ENOMEM;
	for (i = 0; i < m->cap; i++) {
		if (!m->slots[i].key)
			continue;
		for (j = mix64(m->slots[i].key) & (ncap - 1); slots[j].key;
		     j = (j + 1) & (ncap - 1))
			;
		slots[j] = m->slots[i];
	}
	free(m->slots);
	m->slots = slots;
	m->cap = ncap;
	return 0;
}

int pyx_hmap_put(struct pyx_hmap *m, uint64_t key, uint32_t val)
{
	size_t j;

	key++;
	if ((m->n + 1) * 2 > m->cap && pyx_hmap_grow(m))
		return -ENOMEM;
	for (j = mix64(key) & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1)) {
		if (m->slots[j].key == key) {
			m->slots[j].val = val;
			return 0;
		}
	}
	m->slots[j].key = key;
	m->slots[j].val = val;
	m->n++;
	return 0;
}

uint32_t *pyx_hmap_get(const struct pyx_hmap *m, uint64_t key)
{
	size_t j;

	if (!m->cap)
		return NULL;
	key++;
	for (j = mix64(key) & (m->cap - 1); m->slots[j].key; j = (j + 1) & (m->cap - 1))
		if (m->slots[j].key == key)
			return &m->slots[j].val;
	return NULL;
}

void pyx_hmap_release(struct pyx_hmap *m)
{
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

void pyx_hmap_clear(struct pyx_hmap *m)
{
	if (m->cap)
		memset(m->slots, 0, m->cap * sizeof(*m->slots));
	m->n = 0;
}

/* ---- strings -------------------------------------------------------------------------------- */

char *pyx_strdup(struct ls_pyindex *ix, const char *s, size_t len)
{
	char *r;

	if (len + 1 > ix->arena_left) {
		size_t sz = len + 1 > ARENA_CHUNK ? len + 1 : ARENA_CHUNK;
		struct arena_chunk *c = malloc(sizeof(*c) + sz);

		if (!c)
			return NULL;
		c->next = ix->arena;
		ix->arena = c;
		ix->arena_p = c->data;
		ix->arena_left = sz;
	}
	r = ix->arena_p;
	ix->arena_p += len + 1;
	ix->arena_left -= len + 1;
	if (s)
		memcpy(r, s, len);
	r[len] = 0;
	return r;
}

static uint64_t str_hash(const char *s, size_t len)
{
	uint64_t h = 0xCBF29CE484222325ull;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (uint8_t)s[i]) * 0x100000001B3ull;
	return h;
}

int64_t pyx_intern(struct ls_pyindex *ix, const char *s, size_t len)
{
	uint64_t h = str_hash(s, len) >> 1; /* keep clear of the +1 key shift */
	uint32_t *head = pyx_hmap_get(&ix->str_ids, h), id;
	char *copy;

	for (id = head ? *head : UINT32_MAX; id != UINT32_MAX; id = ix->str_next.v[id])
		if (ix->str_len.v[id] == len && !memcmp(ix->strs.v[id], s, len))
			return id;
	copy = pyx_strdup(ix, s, len);
	if (!copy || VEC_PUSH(ix->strs, copy) || VEC_PUSH(ix->str_len, (uint32_t)len) ||
	    VEC_PUSH(ix->str_next, head ? *head : UINT32_MAX))
		return -ENOMEM;
	id = ix->strs.n - 1;
	if (pyx_hmap_put(&ix->str_ids, h, id))
		return -ENOMEM;
	return id;
}

/* Lexical normalization: no "." segments, no doubled '/', ".." folded where it can be. */
static char *normalize_path(const char *path)
{
	size_t len = strlen(path), o = 0, i = 0;
	char *out = malloc(len + 1);
	bool abs = path[0] == '/';

	if (!out)
		return NULL;
	if (abs)
		out[o++] = '/';
	while (i < len) {
		size_t s = i, n;

		while (i < len && path[i] != '/')
			i++;
		n = i - s;
		i++;
		if (!n || (n == 1 && path[s] == '.'))
			continue;
		if (n == 2 && path[s] == '.' && path[s + 1] == '.') {
			size_t base = abs ? 1 : 0, k = o;

			while (k > base && out[k - 1] == '/')
				k--;
			while (k > base && out[k - 1] != '/')
				k--;
			if (o > base && !(o - k == 3 && !memcmp(out + k, "../", 3)) &&
			    !(o - k == 2 && !memcmp(out + k, "..", 2))) {
				o = k;
				continue;
			}
			if (abs && o == 1)
				continue; /* "/.." is "/" */
		}
		if (o > (abs ? 1u : 0u) && out[o - 1] != '/')
			out[o++] = '/';
		memcpy(out + o, path + s, n);
		o += n;
	}
	while (o > 1 && out[o - 1] == '/')
		o--;
	out[o] = 0;
	return out;
}

/* ---- lifecycle ------------------------------------------------------------------------------ */

int ls_pyindex__new(struct ls_pyindex **out)
{
	struct ls_pyindex *ix = calloc(1, sizeof(*ix));
	int i;

	if (!ix)
		return -ENOMEM;
	for (i = 0; i < N__PREDEFINED; i++) {
		if (pyx_intern(ix, predefined[i], strlen(predefined[i])) != i) {
			ls_pyindex__free(ix);
			return -ENOMEM;
		}
	}
	*out = ix;
	return 0;
}

void ls_pyindex__free(struct ls_pyindex *ix)
{
	struct arena_chunk *c, *next;
	size_t i;

	if (!ix)
		return;
	for (i = 0; i < ix->srcs.n; i++) {
		free(ix->srcs.v[i].path);
		free(ix->srcs.v[i].defs.v);
		free(ix->srcs.v[i].links.v);
	}
	for (c = ix->arena; c; c = next) {
		next = c->next;
		free(c);
	}
	free(ix->strs.v);
	free(ix->str_len.v);
	free(ix->str_next.v);
	pyx_hmap_release(&ix->str_ids);
	free(ix->srcs.v);
	pyx_hmap_release(&ix->src_by_id);
	free(ix->scopes.v);
	free(ix->binds.v);
	free(ix->refs.v);
	free(ix->attrs.v);
	free(ix->defs.v);
	free(ix->bases.v);
	free(ix->stores.v);
	pyx_hmap_release(&ix->stored_attrs);
	pyx_hmap_release(&ix->class_stores);
	pyx_hmap_release(&ix->mod_stores);
	pyx_hmap_release(&ix->mod_path);
	pyx_hmap_release(&ix->mod_dotted);
	pyx_hmap_release(&ix->mod_ns);
	free(ix->mod_entries.v);
	pyx_hmap_release(&ix->mod_memo);
	pyx_hmap_release(&ix->attr_memo);
	pyx_hmap_release(&ix->mro_memo);
	pyx_hmap_release(&ix->stored_memo);
	free(ix->rbases.v);
	free(ix->children.v);
	free(ix);
}

static int src_index(const struct ls_pyindex *ix, int src_id)
{
	uint32_t *v = pyx_hmap_get(&ix->src_by_id, (uint32_t)src_id);

	return v ? (int)*v : -1;
}

int ls_pyindex__add_source(struct ls_pyindex *ix, int src_id, const char *path, const char *text,
			   size_t len)
{
	struct source s = {.id = src_id};
	struct ls_pytok *toks = NULL;
	size_t ntoks = 0;
	int err, si;

	if (!ix || !path || (!text && len))
		return -EINVAL;
	if (src_index(ix, src_id) >= 0)
		return -EEXIST;
	if (len >= UINT32_MAX)
		return -EFBIG;
	s.path = normalize_path(path);
	if (!s.path)
		return -ENOMEM;
	s.def0 = ix->defs.n;
	if (VEC_PUSH(ix->srcs, s)) {
		free(s.path);
		return -ENOMEM;
	}
	si = ix->srcs.n - 1;
	if (pyx_hmap_put(&ix->src_by_id, (uint32_t)src_id, si))
		return -ENOMEM;
	ix->resolved = false;
	err = ls_pytok__all(text ? text : "", len, &toks, &ntoks);
	if (err)
		return err;
	ix->srcs.v[si].tokens = ntoks;
	ix->srcs.v[si].lines = ntoks ? (int)toks[ntoks - 1].line - 1 : 0;
	err = pyx_parse_source(ix, si, toks, ntoks, text ? text : "");
	free(toks);
	return err;
}

/* ---- accessors ------------------------------------------------------------------------------ */

int ls_pyindex__links(const struct ls_pyindex *ix, int src_id, const struct ls_pyindex_link **out)
{
	int si = src_index(ix, src_id);

	if (si < 0)
		return -ENOENT;
	*out = ix->srcs.v[si].links.v;
	return ix->resolved ? (int)ix->srcs.v[si].links.n : 0;
}

int ls_pyindex__defs(const struct ls_pyindex *ix, int src_id, const struct ls_pyindex_def **out)
{
	int si = src_index(ix, src_id);

	if (si < 0)
		return -ENOENT;
	*out = ix->srcs.v[si].defs.v;
	return ix->srcs.v[si].defs.n;
}

static bool name_is_last_part(const char *qualname, const char *name)
{
	const char *dot = strrchr(qualname, '.');

	return !strcmp(dot ? dot + 1 : qualname, name);
}

int ls_pyindex__find_def(const struct ls_pyindex *ix, int src_id, const char *qualname,
			 int co_firstlineno)
{
	int si = src_index(ix, src_id), lo, hi, i, found = -ENOENT, by_name = -ENOENT, n;
	const struct ls_pyindex_def *d;

	if (si < 0)
		return -ENOENT;
	d = ix->srcs.v[si].defs.v;
	n = ix->srcs.v[si].defs.n;
	if (co_firstlineno <= 0) { /* by qualname alone: must be unique */
		for (i = 0; i < n && qualname; i++) {
			if (strcmp(d[i].qualname, qualname))
				continue;
			if (found >= 0)
				return -ENOENT;
			found = i;
		}
		return found;
	}
	lo = 0;
	hi = n;
	while (lo < hi) { /* first def with first_line >= co_firstlineno */
		int mid = lo + (hi - lo) / 2;

		if (d[mid].first_line < co_firstlineno)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (i = lo; i < n && d[i].first_line == co_firstlineno; i++) {
		if (!qualname || !strcmp(d[i].qualname, qualname))
			return i;
		if (by_name == -ENOENT && name_is_last_part(qualname, d[i].name))
			by_name = i;
	}
	return by_name;
}

void ls_pyindex__stats(const struct ls_pyindex *ix, struct ls_pyindex_stats *st)
{
	size_t i;

	memset(st, 0, sizeof(*st));
	st->sources = ix->srcs.n;
	st->defs = ix->defs.n;
	st->refs = ix->refs.n;
	st->links = ix->nlinks;
	for (i = 0; i < ix->srcs.n; i++) {
		st->lines += ix->srcs.v[i].lines;
		st->tokens += ix->srcs.v[i].tokens;
	}
}
