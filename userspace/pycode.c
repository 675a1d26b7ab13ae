// SPDX-License-Identifier: MIT
/* Reads CPython objects out of a target process: code objects, str and bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>
#include "array.h"
#include "fingerprint.h"
#include "linetable.h"
#include "procfs.h"
#include "pycode.h"

#define MAX_LINETABLE (1 << 20)
#define MAX_NAME      4096

static uint64_t key_of(uint64_t addr, uint32_t fp)
{
	return addr ^ ((uint64_t)fp << 32) ^ fp;
}

void ls_pycode_cache_init(struct ls_pycode_cache *c, pid_t pid, const struct ls_pyinfo *py,
			  struct ls_linetables *lines)
{
	memset(c, 0, sizeof(*c));
	c->pid = pid;
	c->py = py;
	c->lines = lines;
	ls_hashmap_init(&c->map);
}

/*
 * Code objects, each in one block with its names and line table, carved from the cache's chunks:
 * a job's processes describe tens of thousands, and an allocation each (and as many frees at
 * each exit) were 5-9% of the collector's CPU with 500 processes starting and ending.
 */
struct ls_pycode_chunk {
	struct ls_pycode_chunk *next;
	size_t used, cap;
	_Alignas(8) unsigned char data[];
};

#define CHUNK_FIRST 4096	/* a process that describes a few code objects */
#define CHUNK_MAX   (64 * 1024) /* chunks double up to this */

static void *cache_alloc(struct ls_pycode_cache *c, size_t size)
{
	struct ls_pycode_chunk *k = c->chunks;
	size_t cap;

	size = (size + 7) & ~(size_t)7;
	if (!k || k->cap - k->used < size) {
		cap = !k ? CHUNK_FIRST : k->cap < CHUNK_MAX ? 2 * k->cap : CHUNK_MAX;
		if (cap < size)
			cap = size;
		k = malloc(sizeof(*k) + cap);
		if (!k)
			return NULL;
		k->next = c->chunks;
		k->used = 0;
		k->cap = cap;
		c->chunks = k;
	}
	k->used += size;
	return k->data + k->used - size;
}

static struct ls_pycode *code_new(struct ls_pycode_cache *c, uint64_t addr, uint32_t fp,
				  int firstlineno, const char *fname, const char *qname,
				  const uint8_t *ltab, uint32_t ltlen)
{
	size_t nf = strlen(fname) + 1, nq = strlen(qname) + 1;
	struct ls_pycode *code = cache_alloc(c, sizeof(*code) + nf + nq + ltlen);
	char *tail;

	if (!code)
		return NULL;
	memset(code, 0, sizeof(*code));
	tail = (char *)(code + 1);
	code->addr = addr;
	code->fp = fp;
	code->firstlineno = firstlineno;
	code->nunits = -1;
	code->filename = memcpy(tail, fname, nf);
	code->qualname = memcpy(tail + nf, qname, nq);
	if (ltab && ltlen) {
		code->linetable = memcpy(tail + nf + nq, ltab, ltlen);
		code->ltlen = ltlen;
	}
	return code;
}

/* What a code object holds beyond its block (its block goes with the cache's chunks). */
static void code_drop(struct ls_pycode_cache *c, struct ls_pycode *code)
{
	if (!code || !code->lines_owned)
		return;
	free((int *)code->lines);
	code->lines = NULL;
	code->lines_owned = false;
	c->owned_lines--;
}

void ls_pycode_cache_release(struct ls_pycode_cache *c)
{
	struct ls_pycode_chunk *k, *next;
	uint64_t v;

	for (size_t it = 0; c->owned_lines && ls_hashmap__next(&c->map, &it, NULL, &v);)
		code_drop(c, (struct ls_pycode *)(uintptr_t)v);
	ls_hashmap_release(&c->map);
	for (k = c->chunks; k; k = next) {
		next = k->next;
		free(k);
	}
	c->chunks = NULL;
}

static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp >= 0xdc80 && cp < 0xdd00) {
		/* surrogateescape: Python's way of keeping a byte of a name that is not UTF-8; the
		 * byte itself is the name the file has (os.fsencode() does the same) */
		out[0] = cp - 0xdc00;
		return 1;
	}
	if (cp >= 0xd800 && cp < 0xe000)
		cp = 0xfffd; /* any other lone surrogate */
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | (cp >> 6);
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | (cp >> 12);
		out[1] = 0x80 | ((cp >> 6) & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	if (cp > 0x10ffff)
		return put_utf8(out, 0xfffd);
	out[0] = 0xf0 | (cp >> 18);
	out[1] = 0x80 | ((cp >> 12) & 0x3f);
	out[2] = 0x80 | ((cp >> 6) & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

size_t ls_pycode__raw_to_utf8(const uint8_t *raw, size_t bytes, unsigned kind, char *buf,
			      size_t len)
{
	size_t o = 0;

	if (kind != 1 && kind != 2 && kind != 4)
		kind = 1;
	for (size_t i = 0; i + kind <= bytes && o + 5 < len; i += kind) {
		uint32_t cp;

		if (kind == 1) {
			cp = raw[i];
		} else if (kind == 2) {
			uint16_t v;

			memcpy(&v, raw + i, 2);
			cp = v;
		} else {
			memcpy(&cp, raw + i, 4);
		}
		o += put_utf8(buf + o, cp);
	}
	buf[o] = 0;
	return o;
}

int ls_pycode__read_str(pid_t pid, const struct ls_pylayout *L, uint64_t addr, char *buf,
			size_t len)
{
	uint64_t length;
	uint32_t state;
	unsigned kind, compact, ascii;
	uint8_t *raw;
	int err, n;

	if (len < 5)
		return -EINVAL;
	if ((err = ls_procfs__read_mem(pid, addr + L->unicode_length, &length, 8)) ||
	    (err = ls_procfs__read_mem(pid, addr + L->unicode_state, &state, 4)))
		return err;
	kind = (state >> L->unicode_kind_shift) & 7;
	compact = (state >> L->unicode_compact_bit) & 1;
	ascii = (state >> L->unicode_ascii_bit) & 1;
	if (!compact || (kind != 1 && kind != 2 && kind != 4) || length > MAX_NAME)
		return -EINVAL;
	raw = malloc(length * kind + 1);
	if (!raw)
		return -ENOMEM;
	err = ls_procfs__read_mem(pid,
				  addr + (ascii ? L->unicode_ascii_data : L->unicode_compact_data),
				  raw, length * kind);
	if (err) {
		free(raw);
		return err;
	}
	n = ls_pycode__raw_to_utf8(raw, length * kind, kind, buf, len);
	free(raw);
	return n;
}

static char *read_str_dup(pid_t pid, const struct ls_pylayout *L, uint64_t addr)
{
	char buf[MAX_NAME * 4 + 8];
	int n = ls_pycode__read_str(pid, L, addr, buf, sizeof(buf));

	return n < 0 ? NULL : strdup(buf);
}

static int read_code(struct ls_pycode_cache *c, uint64_t addr, uint32_t fp, struct ls_pycode **out)
{
	const struct ls_pylayout *L = &c->py->layout;
	uint32_t header = c->py->ver.code_adaptive;
	uint8_t hdr[512], *table = NULL;
	uint64_t fname, qname, ltab, ltlen = 0;
	struct ls_pycode *code;
	char *fn, *qn;
	uint32_t firstlineno;
	int err;

	/* a layout from a target's _Py_DebugOffsets: every field read must lie in what is read */
	if (header > sizeof(hdr) || header < 16 || L->code_filename + 8u > header ||
	    L->code_qualname + 8u > header || L->code_linetable + 8u > header ||
	    L->code_firstlineno + 4u > header)
		return -EINVAL;
	err = ls_procfs__read_mem(c->pid, addr, hdr, header);
	if (err)
		return err;
	if (*(uint64_t *)&hdr[8] != c->py->proc.code_type)
		return -ESTALE;
	memcpy(&fname, hdr + L->code_filename, 8);
	memcpy(&qname, hdr + L->code_qualname, 8);
	memcpy(&ltab, hdr + L->code_linetable, 8);
	memcpy(&firstlineno, hdr + L->code_firstlineno, 4);
	/* the walker saw these fields; if they differ, the address holds another code object now */
	if (ls_code_fp(fname, qname, ltab, firstlineno) != fp)
		return -ESTALE;

	fn = read_str_dup(c->pid, L, fname);
	qn = read_str_dup(c->pid, L, qname);
	if (fn && qn && ls_procfs__read_mem(c->pid, ltab + L->bytes_size, &ltlen, 8) == 0 &&
	    ltlen <= MAX_LINETABLE && (table = malloc(ltlen + 1)) &&
	    ls_procfs__read_mem(c->pid, ltab + L->bytes_data, table, ltlen))
		ltlen = 0;
	code = fn && qn ? code_new(c, addr, fp, (int)firstlineno, fn, qn, table, table ? ltlen : 0)
			: NULL;
	err = !fn || !qn ? -EFAULT : code ? 0 : -ENOMEM;
	free(fn);
	free(qn);
	free(table);
	if (err)
		return err;
	*out = code;
	return 0;
}

int ls_pycode_cache__get(struct ls_pycode_cache *c, uint64_t addr, uint32_t fp,
			 struct ls_pycode **out)
{
	uint64_t key = key_of(addr, fp), v;
	struct ls_pycode *code;
	int err;

	if (ls_hashmap__get(&c->map, key, &v)) {
		code = (struct ls_pycode *)(uintptr_t)v;
		if (code->addr == addr && code->fp == fp) {
			*out = code;
			return 0;
		}
	}
	c->reads++;
	err = read_code(c, addr, fp, &code);
	if (err) {
		if (err == -ESTALE)
			c->stale++;
		else
			c->failed++;
		return err;
	}
	if (ls_hashmap__get(&c->map, key, &v))
		code_drop(c, (struct ls_pycode *)(uintptr_t)v); /* key collision: newest wins */
	if (ls_hashmap__set(&c->map, key, (uintptr_t)code))
		return -ENOMEM; /* its block stays in the chunks till the cache goes */
	*out = code;
	return 0;
}

/* A field as the walker read it into buf (size bytes), completed from the process if it had to
 * cut it and the process is still there. */
static const char *complete_name(struct ls_pycode_cache *c, const uint8_t *raw, uint32_t len,
				 unsigned kind, bool cut, uint64_t code, uint16_t field, char *buf,
				 size_t size)
{
	uint64_t addr;

	if (cut && ls_procfs__read_mem(c->pid, code + field, &addr, 8) == 0 &&
	    ls_pycode__read_str(c->pid, &c->py->layout, addr, buf, size) >= 0)
		return buf;
	ls_pycode__raw_to_utf8(raw, len, kind, buf, size - 4);
	if (cut)
		strcat(buf, "\xe2\x80\xa6"); /* an ellipsis marks the cut */
	return buf;
}

int ls_pycode_cache__add(struct ls_pycode_cache *c, const struct ls_code_rec *r)
{
	const struct ls_pylayout *L = &c->py->layout;
	uint64_t key = key_of(r->code, r->fp), v, ltab;
	const uint8_t *table;
	uint8_t *full = NULL;
	struct ls_pycode *code;
	char fbuf[MAX_NAME * 4 + 8], qbuf[MAX_NAME * 4 + 8];
	const char *fn, *qn;
	uint32_t ltlen;

	if (ls_hashmap__get(&c->map, key, &v)) {
		code = (struct ls_pycode *)(uintptr_t)v;
		if (code->addr == r->code && code->fp == r->fp)
			return 0; /* already known (the walker's LRU forgot it) */
	}
	fn = complete_name(c, r->data, r->fname_len, r->fname_kind, r->flags & LS_CF_FNAME_CUT,
			   r->code, L->code_filename, fbuf, sizeof(fbuf));
	qn = complete_name(c, r->data + r->fname_len, r->qname_len, r->qname_kind,
			   r->flags & LS_CF_QNAME_CUT, r->code, L->code_qualname, qbuf,
			   sizeof(qbuf));
	if ((r->flags & LS_CF_LTAB_CUT) && r->ltab_size <= MAX_LINETABLE &&
	    ls_procfs__read_mem(c->pid, r->code + L->code_linetable, &ltab, 8) == 0 &&
	    (full = malloc(r->ltab_size)) &&
	    ls_procfs__read_mem(c->pid, ltab + L->bytes_data, full, r->ltab_size) == 0) {
		table = full;
		ltlen = r->ltab_size;
	} else {
		/* a cut table still maps its first instructions; later ones get its last line */
		table = r->data + r->fname_len + r->qname_len;
		ltlen = r->ltab_len;
	}
	code = code_new(c, r->code, r->fp, r->firstlineno, fn, qn, table, ltlen);
	free(full);
	if (!code)
		return -ENOMEM;
	if (ls_hashmap__get(&c->map, key, &v))
		code_drop(c, (struct ls_pycode *)(uintptr_t)v);
	if (ls_hashmap__set(&c->map, key, (uintptr_t)code))
		return -ENOMEM;
	c->described++;
	return 0;
}

/*
 * The nearest line of each code unit of a table, into *out (malloc'd): the number of units, or 0
 * when the table cannot be decoded. A table cut by the walker may end mid-entry: its complete
 * entries are kept.
 */
static int decode_lines(const uint8_t *table, uint32_t len, int first, int **out)
{
	int n = ls_linetable__decode(table, len, first, NULL, 0), running = first;
	int *lines;

	for (uint32_t cut = len; n < 0 && cut > 1 && len - cut < 32;) {
		while (--cut > 0 && !(table[cut] & 0x80))
			;
		n = ls_linetable__decode(table, cut, first, NULL, 0);
		if (n > 0)
			len = cut;
	}
	*out = NULL;
	if (n <= 0 || !(lines = malloc(n * sizeof(int))))
		return 0;
	ls_linetable__decode(table, len, first, lines, n);
	/* entries without a location take the line before them */
	for (int i = 0; i < n; i++) {
		if (lines[i] < 0)
			lines[i] = running;
		else
			running = lines[i];
	}
	*out = lines;
	return n;
}

struct ls_linetab {
	uint8_t *table; /* the encoded table (a copy), its length and first line: the key */
	uint32_t len;
	int first;
	int nunits;
	int *lines;
};

void ls_linetables_init(struct ls_linetables *t)
{
	memset(t, 0, sizeof(*t));
	ls_hashmap_init(&t->map);
}

void ls_linetables_release(struct ls_linetables *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].table);
		free(t->v[i].lines);
	}
	free(t->v);
	ls_hashmap_release(&t->map);
}

struct tab_probe {
	const struct ls_linetables *t;
	const struct ls_pycode *code;
};

static bool same_tab(const void *ctx, uint64_t idx)
{
	const struct tab_probe *q = ctx;
	const struct ls_linetab *e = &q->t->v[idx];

	return e->len == q->code->ltlen && e->first == q->code->firstlineno &&
	       !memcmp(e->table, q->code->linetable, e->len);
}

/* Decodes code's table once per distinct table: false when it could not be shared. */
static bool shared_lines(struct ls_linetables *t, struct ls_pycode *code)
{
	struct tab_probe q = {t, code};
	uint64_t seed = ((uint64_t)code->ltlen << 32) ^ (uint32_t)code->firstlineno, *slot;
	uint64_t h = XXH3_64bits_withSeed(code->linetable, code->ltlen, seed);
	struct ls_linetab *e, *v;

	slot = ls_hashmap__intern(&t->map, h, same_tab, &q);
	if (!slot)
		return false;
	if (*slot == LS_HASHMAP_EMPTY) {
		v = ls_array_grow(t->v, &t->cap, t->n, sizeof(*v), 256);
		if (!v)
			return false;
		t->v = v;
		e = &t->v[t->n];
		memset(e, 0, sizeof(*e));
		e->table = malloc(code->ltlen);
		if (!e->table)
			return false;
		memcpy(e->table, code->linetable, code->ltlen);
		e->len = code->ltlen;
		e->first = code->firstlineno;
		e->nunits =
			decode_lines(code->linetable, code->ltlen, code->firstlineno, &e->lines);
		*slot = t->n++;
	}
	e = &t->v[*slot];
	code->lines = e->lines;
	code->nunits = e->nunits;
	code->lines_owned = false;
	return true;
}

int ls_pycode__line(struct ls_pycode_cache *c, struct ls_pycode *code, int32_t instr)
{
	int unit = instr < 0 ? -1 : instr / 2;

	if (unit < 0 || !code->linetable)
		return code->firstlineno;
	if (code->nunits < 0 && !(c->lines && shared_lines(c->lines, code))) {
		int *lines;

		code->nunits =
			decode_lines(code->linetable, code->ltlen, code->firstlineno, &lines);
		code->lines = lines;
		code->lines_owned = true;
		c->owned_lines++;
	}
	if (unit >= code->nunits)
		return code->nunits ? code->lines[code->nunits - 1] : code->firstlineno;
	return code->lines[unit];
}
