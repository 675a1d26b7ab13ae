// SPDX-License-Identifier: MIT
/* Reads CPython objects out of a target process: code objects, str and bytes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
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

static void code_free(struct ls_pycode *code)
{
	if (!code)
		return;
	free(code->filename);
	free(code->qualname);
	free(code->linetable);
	if (code->lines_owned)
		free((int *)code->lines);
	free(code);
}

void ls_pycode_cache_release(struct ls_pycode_cache *c)
{
	uint64_t v;

	for (size_t it = 0; ls_hashmap__next(&c->map, &it, NULL, &v);)
		code_free((struct ls_pycode *)(uintptr_t)v);
	ls_hashmap_release(&c->map);
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
	uint8_t hdr[512];
	uint64_t fname, qname, ltab, ltlen;
	struct ls_pycode *code;
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

	code = calloc(1, sizeof(*code));
	if (!code)
		return -ENOMEM;
	code->addr = addr;
	code->fp = fp;
	code->firstlineno = (int)firstlineno;
	code->nunits = -1;
	code->filename = read_str_dup(c->pid, L, fname);
	code->qualname = read_str_dup(c->pid, L, qname);
	if (!code->filename || !code->qualname) {
		code_free(code);
		return -EFAULT;
	}
	if (ls_procfs__read_mem(c->pid, ltab + L->bytes_size, &ltlen, 8) == 0 &&
	    ltlen <= MAX_LINETABLE) {
		code->linetable = malloc(ltlen + 1);
		if (code->linetable &&
		    ls_procfs__read_mem(c->pid, ltab + L->bytes_data, code->linetable, ltlen) == 0)
			code->ltlen = ltlen;
	}
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
		code_free((struct ls_pycode *)(uintptr_t)v); /* key collision: newest wins */
	if (ls_hashmap__set(&c->map, key, (uintptr_t)code)) {
		code_free(code);
		return -ENOMEM;
	}
	*out = code;
	return 0;
}

/* Completes a field the walker had to cut, from the process if it is still there. */
static char *complete_name(struct ls_pycode_cache *c, const uint8_t *raw, uint32_t len,
			   unsigned kind, bool cut, uint64_t code, uint16_t field)
{
	char buf[LS_CODE_NAME_MAX * 4 + 16];
	uint64_t addr;

	if (cut && ls_procfs__read_mem(c->pid, code + field, &addr, 8) == 0) {
		char *full = read_str_dup(c->pid, &c->py->layout, addr);

		if (full)
			return full;
	}
	ls_pycode__raw_to_utf8(raw, len, kind, buf, sizeof(buf) - 4);
	if (cut)
		strcat(buf, "\xe2\x80\xa6"); /* an ellipsis marks the cut */
	return strdup(buf);
}

int ls_pycode_cache__add(struct ls_pycode_cache *c, const struct ls_code_rec *r)
{
	const struct ls_pylayout *L = &c->py->layout;
	uint64_t key = key_of(r->code, r->fp), v, ltab;
	struct ls_pycode *code;

	if (ls_hashmap__get(&c->map, key, &v)) {
		code = (struct ls_pycode *)(uintptr_t)v;
		if (code->addr == r->code && code->fp == r->fp)
			return 0; /* already known (the walker's LRU forgot it) */
	}
	code = calloc(1, sizeof(*code));
	if (!code)
		return -ENOMEM;
	code->addr = r->code;
	code->fp = r->fp;
	code->firstlineno = r->firstlineno;
	code->nunits = -1;
	code->filename = complete_name(c, r->data, r->fname_len, r->fname_kind,
				       r->flags & LS_CF_FNAME_CUT, r->code, L->code_filename);
	code->qualname = complete_name(c, r->data + r->fname_len, r->qname_len, r->qname_kind,
				       r->flags & LS_CF_QNAME_CUT, r->code, L->code_qualname);
	if ((r->flags & LS_CF_LTAB_CUT) && r->ltab_size <= MAX_LINETABLE &&
	    ls_procfs__read_mem(c->pid, r->code + L->code_linetable, &ltab, 8) == 0 &&
	    (code->linetable = malloc(r->ltab_size)) &&
	    ls_procfs__read_mem(c->pid, ltab + L->bytes_data, code->linetable, r->ltab_size) == 0) {
		code->ltlen = r->ltab_size;
	} else if (r->ltab_len) {
		/* a cut table still maps its first instructions; later ones get its last line */
		free(code->linetable);
		code->linetable = malloc(r->ltab_len);
		if (code->linetable) {
			memcpy(code->linetable, r->data + r->fname_len + r->qname_len, r->ltab_len);
			code->ltlen = r->ltab_len;
		}
	}
	if (!code->filename || !code->qualname) {
		code_free(code);
		return -ENOMEM;
	}
	if (ls_hashmap__get(&c->map, key, &v))
		code_free((struct ls_pycode *)(uintptr_t)v);
	if (ls_hashmap__set(&c->map, key, (uintptr_t)code)) {
		code_free(code);
		return -ENOMEM;
	}
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
	uint64_t h = ls_hash64(((uint64_t)code->ltlen << 32) ^ (uint32_t)code->firstlineno), *slot;
	struct ls_linetab *e, *v;

	for (uint32_t i = 0; i < code->ltlen; i++)
		h = (h ^ code->linetable[i]) * 0x100000001b3ULL; /* FNV-1a over the bytes */
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
	}
	if (unit >= code->nunits)
		return code->nunits ? code->lines[code->nunits - 1] : code->firstlineno;
	return code->lines[unit];
}
