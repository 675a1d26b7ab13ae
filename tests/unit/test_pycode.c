// SPDX-License-Identifier: MIT
/*
 * Reading CPython objects from a process: strings of each kind, and code objects with
 * fingerprint checks, laid out in this process's own memory and read back through
 * process_vm_readv exactly as from a target.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "fingerprint.h"
#include "pycode.h"

static struct ls_pyinfo py;

static int setup(void **state)
{
	memset(&py, 0, sizeof(py));
	assert_int_equal(ls_pyversions__resolve(0x030b02f0, NULL, 0, 0, &py.layout, &py.ver), 0);
	py.proc.code_type = 0x1234;
	return 0;
}

/* A compact str object of `kind` holding the code points cps, in the 3.11 layout. */
static uint8_t *make_str(const uint32_t *cps, size_t n, unsigned kind, bool ascii)
{
	const struct ls_pylayout *L = &py.layout;
	uint8_t *o = calloc(1, 128 + n * 4);
	uint64_t len = n;
	uint32_t state = (kind << L->unicode_kind_shift) | (1u << L->unicode_compact_bit) |
			 ((ascii ? 1u : 0u) << L->unicode_ascii_bit);
	uint8_t *data = o + (ascii ? L->unicode_ascii_data : L->unicode_compact_data);

	memcpy(o + L->unicode_length, &len, 8);
	memcpy(o + L->unicode_state, &state, 4);
	for (size_t i = 0; i < n; i++) {
		if (kind == 1)
			data[i] = cps[i];
		else if (kind == 2)
			((uint16_t *)data)[i] = cps[i];
		else
			((uint32_t *)data)[i] = cps[i];
	}
	return o;
}

static void test_strings(void **state)
{
	const uint32_t ascii[] = {'a', 'p', 'p', '.', 'p', 'y'};
	const uint32_t latin1[] = {'c', 0xe9};		  /* "cé" */
	const uint32_t ucs2[] = {0x4e2d, 0x6587, 0xd800}; /* "中文" + a lone surrogate */
	const uint32_t ucs4[] = {'x', 0x1f600};		  /* "x😀" */
	char buf[64];
	uint8_t *o;

	o = make_str(ascii, 6, 1, true);
	assert_int_equal(ls_pycode__read_str(getpid(), &py.layout, (uintptr_t)o, buf, sizeof(buf)),
			 6);
	assert_string_equal(buf, "app.py");
	free(o);
	o = make_str(latin1, 2, 1, false);
	ls_pycode__read_str(getpid(), &py.layout, (uintptr_t)o, buf, sizeof(buf));
	assert_string_equal(buf, "c\xc3\xa9");
	free(o);
	o = make_str(ucs2, 3, 2, false);
	ls_pycode__read_str(getpid(), &py.layout, (uintptr_t)o, buf, sizeof(buf));
	assert_string_equal(buf, "\xe4\xb8\xad\xe6\x96\x87\xef\xbf\xbd");
	free(o);
	o = make_str(ucs4, 2, 4, false);
	ls_pycode__read_str(getpid(), &py.layout, (uintptr_t)o, buf, sizeof(buf));
	assert_string_equal(buf, "x\xf0\x9f\x98\x80");
	free(o);
	/* unmapped memory is an error, not a crash */
	assert_true(ls_pycode__read_str(getpid(), &py.layout, 8, buf, sizeof(buf)) < 0);
}

struct fake_code {
	uint8_t *code, *fname, *qname, *ltab;
	uint32_t fp;
};

static void make_code(struct fake_code *fc, int firstlineno)
{
	const struct ls_pylayout *L = &py.layout;
	const uint32_t f[] = {'/', 'a', '.', 'p', 'y'}, q[] = {'C', '.', 'm'};
	/* two entries: line firstlineno+1 for 2 units (one-line form), then +1 for 1 unit */
	const uint8_t table[] = {0x80 | (11 << 3) | 1, 0, 1, 0x80 | (11 << 3) | 0, 0, 1};
	uint64_t fname, qname, ltab, tsize = sizeof(table), type = 0x1234;
	uint32_t fl = firstlineno;

	fc->fname = make_str(f, 5, 1, true);
	fc->qname = make_str(q, 3, 1, true);
	fc->ltab = calloc(1, 64);
	memcpy(fc->ltab + py.layout.bytes_size, &tsize, 8);
	memcpy(fc->ltab + py.layout.bytes_data, table, sizeof(table));
	fc->code = calloc(1, 512);
	fname = (uintptr_t)fc->fname;
	qname = (uintptr_t)fc->qname;
	ltab = (uintptr_t)fc->ltab;
	memcpy(fc->code + 8, &type, 8);
	memcpy(fc->code + L->code_filename, &fname, 8);
	memcpy(fc->code + L->code_qualname, &qname, 8);
	memcpy(fc->code + L->code_linetable, &ltab, 8);
	memcpy(fc->code + L->code_firstlineno, &fl, 4);
	fc->fp = ls_code_fp(fname, qname, ltab, fl);
}

static void free_code(struct fake_code *fc)
{
	free(fc->code);
	free(fc->fname);
	free(fc->qname);
	free(fc->ltab);
}

static void test_code_objects(void **state)
{
	struct ls_pycode_cache c;
	struct fake_code fc;
	struct ls_pycode *code, *again;
	uint32_t other = 77;

	make_code(&fc, 10);
	ls_pycode_cache_init(&c, getpid(), &py, NULL);
	assert_int_equal(ls_pycode_cache__get(&c, (uintptr_t)fc.code, fc.fp, &code), 0);
	assert_string_equal(code->filename, "/a.py");
	assert_string_equal(code->qualname, "C.m");
	assert_int_equal(code->firstlineno, 10);
	/* units 0-1: line 11, unit 2: line 12; before the first unit: the def line */
	assert_int_equal(ls_pycode__line(&c, code, 0), 11);
	assert_int_equal(ls_pycode__line(&c, code, 2), 11);
	assert_int_equal(ls_pycode__line(&c, code, 4), 12);
	assert_int_equal(ls_pycode__line(&c, code, -2), 10);
	assert_int_equal(ls_pycode_cache__get(&c, (uintptr_t)fc.code, fc.fp, &again), 0);
	assert_ptr_equal(code, again);
	assert_int_equal(c.reads, 1);
	/* the address now holds another code object: the walker's fingerprint no longer matches */
	memcpy(fc.code + py.layout.code_firstlineno, &other, 4);
	assert_int_equal(
		ls_pycode_cache__get(&c, (uintptr_t)fc.code, ls_code_fp(1, 2, 3, 4), &code),
		-ESTALE);
	/* not a code object at all */
	memset(fc.code + 8, 0, 8);
	assert_int_equal(ls_pycode_cache__get(&c, (uintptr_t)fc.code, 99, &code), -ESTALE);
	ls_pycode_cache_release(&c);
	free_code(&fc);
}

/*
 * Two processes' caches sharing decoded line tables: the same table and first line is decoded
 * once, and both codes give its lines; another first line is a table of its own. The codes'
 * caches are released before the tables they borrow.
 */
static void test_shared_lines(void **state)
{
	struct ls_pycode_cache a, b, d;
	struct ls_linetables t;
	struct fake_code fa, fb, fd;
	struct ls_pycode *ca, *cb, *cd;

	ls_linetables_init(&t);
	make_code(&fa, 10);
	make_code(&fb, 10);
	make_code(&fd, 20);
	ls_pycode_cache_init(&a, getpid(), &py, &t);
	ls_pycode_cache_init(&b, getpid(), &py, &t);
	ls_pycode_cache_init(&d, getpid(), &py, &t);
	assert_int_equal(ls_pycode_cache__get(&a, (uintptr_t)fa.code, fa.fp, &ca), 0);
	assert_int_equal(ls_pycode_cache__get(&b, (uintptr_t)fb.code, fb.fp, &cb), 0);
	assert_int_equal(ls_pycode_cache__get(&d, (uintptr_t)fd.code, fd.fp, &cd), 0);
	assert_int_equal(ls_pycode__line(&a, ca, 4), 12);
	assert_int_equal(ls_pycode__line(&b, cb, 4), 12);
	assert_int_equal(ls_pycode__line(&b, cb, 0), 11);
	assert_ptr_equal(ca->lines, cb->lines);
	assert_int_equal(t.n, 1);
	assert_int_equal(ls_pycode__line(&d, cd, 4), 22);
	assert_int_equal(t.n, 2);
	assert_ptr_not_equal(cd->lines, ca->lines);
	ls_pycode_cache_release(&a);
	ls_pycode_cache_release(&b);
	ls_pycode_cache_release(&d);
	ls_linetables_release(&t);
	free_code(&fa);
	free_code(&fb);
	free_code(&fd);
}

/* A code_adaptive smaller than the fields it must cover is refused, not read past. */
static void test_short_header(void **state)
{
	struct ls_pycode_cache c;
	struct fake_code fc;
	struct ls_pycode *code;

	make_code(&fc, 10);
	py.ver.code_adaptive = py.layout.code_firstlineno; /* the line number would lie past it */
	ls_pycode_cache_init(&c, getpid(), &py, NULL);
	assert_int_equal(ls_pycode_cache__get(&c, (uintptr_t)fc.code, fc.fp, &code), -EINVAL);
	ls_pycode_cache_release(&c);
	free_code(&fc);
}

/*
 * Code objects described by the walker (ls_pycode_cache__add): 3,000 of them, with names long
 * enough to fill many of the cache's chunks, each still whole after the others came; one
 * described again under a key that collides (another fingerprint at the same address) replaces
 * it, and the one it replaced is no longer found. Run under valgrind or ASan, nothing leaks.
 */
static void test_many_described(void **state)
{
	static struct ls_code_rec r;
	struct ls_pycode_cache c;
	struct ls_pycode *code;
	char name[64];
	int n;

	ls_pycode_cache_init(&c, getpid(), &py, NULL);
	for (uint32_t i = 0; i < 3000; i++) {
		memset(&r, 0, sizeof(r));
		r.type = LS_REC_CODE;
		r.code = 0x100000 + 64 * (uint64_t)i;
		r.fp = i + 1;
		r.firstlineno = (int)i;
		n = snprintf(name, sizeof(name), "/src/module_%u/with/a/longer/path.py", i);
		r.fname_len = (uint32_t)n;
		r.fname_kind = 1;
		memcpy(r.data, name, n);
		n = snprintf(name, sizeof(name), "Class%u.method", i);
		r.qname_len = (uint32_t)n;
		r.qname_kind = 1;
		memcpy(r.data + r.fname_len, name, n);
		assert_int_equal(ls_pycode_cache__add(&c, &r), 0);
	}
	for (uint32_t i = 0; i < 3000; i += 7) {
		assert_int_equal(
			ls_pycode_cache__get(&c, 0x100000 + 64 * (uint64_t)i, i + 1, &code), 0);
		snprintf(name, sizeof(name), "/src/module_%u/with/a/longer/path.py", i);
		assert_string_equal(code->filename, name);
		snprintf(name, sizeof(name), "Class%u.method", i);
		assert_string_equal(code->qualname, name);
		assert_int_equal(code->firstlineno, (int)i);
	}
	/* the same key, another code object: fp ^ (fp << 32) equal, address moved to match */
	r.code = 0x100000 ^ ((uint64_t)1 << 32) ^ 1 ^ ((uint64_t)2 << 32) ^ 2;
	r.fp = 2;
	assert_int_equal(ls_pycode_cache__add(&c, &r), 0);
	assert_int_equal(ls_pycode_cache__get(&c, r.code, 2, &code), 0);
	assert_string_equal(code->qualname, "Class2999.method");
	/* the replaced one is read again from (our) memory, where no code object lies */
	assert_int_not_equal(ls_pycode_cache__get(&c, 0x100000, 1, &code), 0);
	assert_int_equal(c.described, 3001);
	ls_pycode_cache_release(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_strings, setup),
		cmocka_unit_test_setup(test_code_objects, setup),
		cmocka_unit_test_setup(test_shared_lines, setup),
		cmocka_unit_test_setup(test_short_header, setup),
		cmocka_unit_test_setup(test_many_described, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
