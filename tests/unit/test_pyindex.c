// SPDX-License-Identifier: MIT
/*
 * Tests for report/pyindex.c: links on an annotated multi-root fixture project (every link on
 * every line is declared in a trailing "# =>" comment), CRLF and tab variants, the API, fuzzed
 * input, and a differential run of definitions against CPython's ast and code objects over the
 * whole standard library.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pyindex.h"
#include "pytok.h"
#include "../lib/read_file.h"

#define FIXTURES "tests/fixtures/pysyms/"

static const char *const fixture_files[] = {
	"proj/main.py",
	"proj/util.py",
	"proj/tricky.py",
	"proj/star.py",
	"proj/pkg/__init__.py",
	"proj/pkg/mod.py",
	"proj/pkg/sub/deep.py",
	"other/util.py",
	"third/use.py",
	"extents.py",
	"crlf.py",
};
#define NFIX	  (sizeof(fixture_files) / sizeof(fixture_files[0]))
#define FIX_ID(i) (100 + 7 * (int)(i)) /* ids are the caller's, not indexes */

struct fixture {
	char path[256];
	char *text;
	size_t len;
};

static struct fixture fx[NFIX];

static int setup_fixtures(void **state)
{
	size_t i;

	for (i = 0; i < NFIX; i++) {
		snprintf(fx[i].path, sizeof(fx[i].path), FIXTURES "%s", fixture_files[i]);
		fx[i].text = ls_test_read_file(fx[i].path, &fx[i].len);
		if (!fx[i].text) {
			fprintf(stderr, "cannot read %s (run from the repository root)\n",
				fx[i].path);
			return -1;
		}
	}
	return 0;
}

static int teardown_fixtures(void **state)
{
	size_t i;

	for (i = 0; i < NFIX; i++)
		free(fx[i].text);
	return 0;
}

/* The fixture text with every line break ("\n" or "\r\n") replaced by sep. */
static char *convert_newlines(const char *text, size_t len, const char *sep, size_t *out_len)
{
	size_t i, o = 0, sl = strlen(sep);
	char *out = malloc(len * sl + 1);

	assert_non_null(out);
	for (i = 0; i < len; i++) {
		if (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')
			continue;
		if (text[i] == '\n') {
			memcpy(out + o, sep, sl);
			o += sl;
		} else {
			out[o++] = text[i];
		}
	}
	*out_len = o;
	return out;
}

static struct ls_pyindex *index_fixtures(const char *newline)
{
	struct ls_pyindex *ix;
	size_t i;
	int n;

	assert_int_equal(ls_pyindex__new(&ix), 0);
	for (i = 0; i < NFIX; i++) {
		size_t len;
		char *text = newline ? convert_newlines(fx[i].text, fx[i].len, newline, &len)
				     : fx[i].text;

		assert_int_equal(ls_pyindex__add_source(ix, FIX_ID(i), fx[i].path, text,
							newline ? len : fx[i].len),
				 0);
		if (newline)
			free(text);
	}
	n = ls_pyindex__resolve(ix);
	assert_true(n > 0);
	return ix;
}

static int fixture_by_name(const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < NFIX; i++)
		if (strlen(fixture_files[i]) == len + 3 && !strncmp(fixture_files[i], name, len))
			return i;
	return -1;
}

static bool ident_byte(unsigned char c)
{
	return c == '_' || c >= 0x80 || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9');
}

/* Byte column of the nth (1-based) whole-word occurrence of name in line[0..len), or -1. */
static int occurrence(const char *line, size_t len, const char *name, size_t nl, int nth)
{
	size_t i;

	for (i = 0; i + nl <= len; i++) {
		if (memcmp(line + i, name, nl) || (i > 0 && ident_byte(line[i - 1])) ||
		    (i + nl < len && ident_byte(line[i + nl])))
			continue;
		if (--nth == 0)
			return i;
	}
	return -1;
}

struct check_stats {
	size_t lines, expected, unlinked, links;
};

/*
 * Checks one fixture: every "# =>" entry holds, and each line's links are exactly the declared
 * ones (with byte and UTF-16 columns of the name and the right target definition).
 */
static void check_fixture(struct ls_pyindex *ix, size_t f, struct check_stats *st)
{
	const struct ls_pyindex_link *links;
	const char *text = fx[f].text, *line = text, *end = text + fx[f].len;
	int nlinks = ls_pyindex__links(ix, FIX_ID(f), &links), lineno = 0, li = 0;

	assert_true(nlinks >= 0);
	while (line < end) {
		const char *eol = memchr(line, '\n', end - line), *ann;
		size_t code_len, matched = 0, on_line = 0;
		int k;

		const char *next;

		eol = eol ? eol : end;
		next = eol + 1;
		if (eol > line && eol[-1] == '\r') /* CRLF */
			eol--;
		lineno++;
		ann = memmem(line, eol - line, "# =>", 4);
		code_len = ann ? (size_t)(ann - line) : (size_t)(eol - line);
		for (k = li; k < nlinks && links[k].line == lineno; k++)
			on_line++;
		if (ann)
			ann += 4;
		for (; ann && ann < eol;) {
			const char *w = ann, *we, *eq, *hash, *colon;
			char name[128];
			int nth = 1, col, want_src = -1, j;
			bool neg;
			size_t nl;

			while (w < eol && *w == ' ')
				w++;
			if (w >= eol)
				break;
			we = w;
			while (we < eol && *we != ' ')
				we++;
			ann = we;
			neg = *w == '!';
			if (neg)
				w++;
			eq = memchr(w, '=', we - w);
			nl = (eq ? eq : we) - w;
			hash = memchr(w, '#', nl);
			if (hash) {
				nth = atoi(hash + 1);
				nl = hash - w;
			}
			assert_true(nl < sizeof(name));
			memcpy(name, w, nl);
			name[nl] = 0;
			col = occurrence(line, code_len, name, nl, nth);
			if (col < 0) {
				print_error("%s:%d: no occurrence %d of '%s'\n", fx[f].path, lineno,
					    nth, name);
				fail();
			}
			for (j = li; j < li + (int)on_line; j++)
				if (links[j].col == col)
					break;
			if (neg) {
				if (j < li + (int)on_line) {
					print_error("%s:%d: '%s' must stay unlinked\n", fx[f].path,
						    lineno, name);
					fail();
				}
				st->unlinked++;
				continue;
			}
			assert_non_null(eq);
			colon = memchr(eq, ':', we - eq);
			assert_non_null(colon);
			want_src = fixture_by_name(eq + 1, colon - eq - 1);
			assert_true(want_src >= 0);
			if (j == li + (int)on_line) {
				print_error("%s:%d: '%s' is not linked\n", fx[f].path, lineno,
					    name);
				fail();
			} else {
				const struct ls_pyindex_def *defs;
				int nd = ls_pyindex__defs(ix, links[j].target_src, &defs);
				const struct ls_pyindex_link *l = &links[j];

				assert_int_equal(l->end_col, col + nl);
				assert_int_equal(l->col16, ls_pytok__utf16_len(line, col));
				assert_int_equal(l->end_col16, ls_pytok__utf16_len(line, col + nl));
				if (l->target_src != FIX_ID(want_src) || l->target_def < 0 ||
				    l->target_def >= nd ||
				    strncmp(defs[l->target_def].qualname, colon + 1,
					    we - colon - 1) ||
				    defs[l->target_def].qualname[we - colon - 1]) {
					print_error(
						"%s:%d: '%s' links to src %d def %s, want %.*s\n",
						fx[f].path, lineno, name, l->target_src,
						l->target_def >= 0 && l->target_def < nd
							? defs[l->target_def].qualname
							: "?",
						(int)(we - eq - 1), eq + 1);
					fail();
				}
				assert_int_equal(l->target_line, defs[l->target_def].def_line);
				matched++;
				st->expected++;
			}
		}
		if (matched != on_line) {
			for (k = li; k < li + (int)on_line; k++)
				print_error("%s:%d: link at col %d-%d to src %d def %d\n",
					    fx[f].path, lineno, links[k].col, links[k].end_col,
					    links[k].target_src, links[k].target_def);
			print_error("%s:%d: %zu links, %zu declared\n", fx[f].path, lineno, on_line,
				    matched);
			fail();
		}
		li += on_line;
		st->links += on_line;
		st->lines++;
		line = next;
	}
	assert_int_equal(li, nlinks); /* no link past the last line */
}

static void test_fixture_links(void **state)
{
	struct ls_pyindex *ix = index_fixtures(NULL);
	struct check_stats st = {0};
	size_t f;

	for (f = 0; f < NFIX; f++)
		check_fixture(ix, f, &st);
	print_message("fixture links: %zu lines, %zu links, %zu declared links, %zu declared "
		      "unlinked names\n",
		      st.lines, st.links, st.expected, st.unlinked);
	assert_true(st.expected >= 80);
	assert_true(st.unlinked >= 25);
	assert_int_equal(st.expected, st.links);
	ls_pyindex__free(ix);
}

/* CRLF, lone CR and LF sources give the same lines, columns and targets. */
static void test_line_endings_equivalent(void **state)
{
	static const char *const seps[] = {"\r\n", "\r"};
	struct ls_pyindex *base = index_fixtures(NULL);
	size_t s, f;

	for (s = 0; s < 2; s++) {
		struct ls_pyindex *ix = index_fixtures(seps[s]);

		for (f = 0; f < NFIX; f++) {
			const struct ls_pyindex_link *a, *b;
			const struct ls_pyindex_def *da, *db;
			int na = ls_pyindex__links(base, FIX_ID(f), &a);
			int nb = ls_pyindex__links(ix, FIX_ID(f), &b), k;

			assert_int_equal(na, nb);
			for (k = 0; k < na; k++)
				assert_memory_equal(&a[k], &b[k], sizeof(a[k]));
			na = ls_pyindex__defs(base, FIX_ID(f), &da);
			nb = ls_pyindex__defs(ix, FIX_ID(f), &db);
			assert_int_equal(na, nb);
			for (k = 0; k < na; k++) {
				assert_string_equal(da[k].qualname, db[k].qualname);
				assert_int_equal(da[k].first_line, db[k].first_line);
				assert_int_equal(da[k].end_line, db[k].end_line);
				assert_int_equal(da[k].name_col16, db[k].name_col16);
			}
		}
		ls_pyindex__free(ix);
	}
	ls_pyindex__free(base);
}

/* UTF-16 columns after astral characters, spelled out rather than computed. */
static void test_utf16_link_columns(void **state)
{
	const char *src = "def g():\n    pass\n"
			  "x = '\xF0\x9F\x98\x80\xC3\xA9' + g() + f'\xF0\x9D\x90\x80{g()}'\n";
	const struct ls_pyindex_link *l;
	struct ls_pyindex *ix;

	assert_int_equal(ls_pyindex__new(&ix), 0);
	assert_int_equal(ls_pyindex__add_source(ix, 1, "u.py", src, strlen(src)), 0);
	assert_int_equal(ls_pyindex__resolve(ix), 2);
	assert_int_equal(ls_pyindex__links(ix, 1, &l), 2);
	assert_int_equal(l[0].line, 3);
	assert_int_equal(l[0].col, 15);
	assert_int_equal(l[0].col16, 12);
	assert_int_equal(l[0].end_col16, 13);
	assert_int_equal(l[1].col, 28);
	assert_int_equal(l[1].col16, 23);
	assert_int_equal(l[1].target_line, 1);
	ls_pyindex__free(ix);
}

static void test_api(void **state)
{
	const char *a = "import b\n\n@b.deco\ndef f():\n    def g():\n        pass\n    return g\n";
	const char *b = "def deco(fn):\n    return fn\n";
	const struct ls_pyindex_link *l;
	const struct ls_pyindex_def *d;
	struct ls_pyindex_stats st;
	struct ls_pyindex *ix;

	ls_pyindex__free(NULL);
	assert_int_equal(ls_pyindex__new(&ix), 0);
	assert_int_equal(ls_pyindex__add_source(ix, 5, "/srv/app/a.py", a, strlen(a)), 0);
	assert_int_equal(ls_pyindex__add_source(ix, 5, "/srv/app/x.py", b, strlen(b)), -EEXIST);
	assert_int_equal(ls_pyindex__add_source(ix, 9, NULL, b, strlen(b)), -EINVAL);
	assert_int_equal(ls_pyindex__links(ix, 6, &l), -ENOENT);
	assert_int_equal(ls_pyindex__defs(ix, 6, &d), -ENOENT);
	assert_int_equal(ls_pyindex__resolve(ix), 1); /* b is not indexed yet: only g links */
	assert_int_equal(ls_pyindex__add_source(ix, 6, "/srv/app/./lib/../b.py", b, strlen(b)), 0);
	assert_int_equal(ls_pyindex__resolve(ix), 2);
	assert_int_equal(ls_pyindex__links(ix, 5, &l), 2);
	assert_int_equal(l[0].line, 3);
	assert_int_equal(l[0].col, 3);
	assert_int_equal(l[0].target_src, 6);
	assert_int_equal(l[0].target_line, 1);
	assert_int_equal(l[1].line, 7);
	assert_int_equal(l[1].target_src, 5);
	assert_int_equal(l[1].target_def, 1);
	assert_int_equal(l[1].target_line, 5);
	assert_int_equal(ls_pyindex__defs(ix, 5, &d), 2);
	assert_string_equal(d[0].qualname, "f");
	assert_int_equal(d[0].first_line, 3);
	assert_int_equal(d[0].def_line, 4);
	assert_int_equal(d[0].end_line, 7);
	assert_int_equal(d[0].kind, LS_PYDEF_FUNCTION);
	assert_int_equal(d[0].parent, -1);
	assert_string_equal(d[1].qualname, "f.<locals>.g");
	assert_int_equal(d[1].parent, 0);
	assert_int_equal(d[1].name_col, 8);
	/* runtime code objects to definitions */
	assert_int_equal(ls_pyindex__find_def(ix, 5, "f", 3), 0);
	assert_int_equal(ls_pyindex__find_def(ix, 5, "f", 4), -ENOENT); /* co_firstlineno: 3 */
	assert_int_equal(ls_pyindex__find_def(ix, 5, "f.<locals>.g", 5), 1);
	assert_int_equal(ls_pyindex__find_def(ix, 5, "g", 5), 1); /* co_name only */
	assert_int_equal(ls_pyindex__find_def(ix, 5, "h", 5), -ENOENT);
	assert_int_equal(ls_pyindex__find_def(ix, 5, NULL, 5), 1);
	assert_int_equal(ls_pyindex__find_def(ix, 5, "f.<locals>.g", 0), 1);
	assert_int_equal(ls_pyindex__find_def(ix, 5, "<lambda>", 3), -ENOENT);
	assert_int_equal(ls_pyindex__find_def(ix, 7, "f", 3), -ENOENT);
	ls_pyindex__stats(ix, &st);
	assert_int_equal(st.sources, 2);
	assert_int_equal(st.lines, 9);
	assert_int_equal(st.defs, 3);
	assert_int_equal(st.links, 2);
	ls_pyindex__free(ix);
}

static uint64_t rng = 0x2545F4914F6CDD1Dull;

static uint32_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)rng;
}

static void check_index_sane(struct ls_pyindex *ix, int nsrc)
{
	int s, k;

	assert_true(ls_pyindex__resolve(ix) >= 0);
	for (s = 0; s < nsrc; s++) {
		const struct ls_pyindex_link *l;
		const struct ls_pyindex_def *d, *td;
		int nl = ls_pyindex__links(ix, s, &l), nd = ls_pyindex__defs(ix, s, &d);

		assert_true(nl >= 0 && nd >= 0);
		for (k = 0; k < nl; k++) {
			int ntd = ls_pyindex__defs(ix, l[k].target_src, &td);

			assert_true(l[k].target_def >= 0 && l[k].target_def < ntd);
			assert_true(l[k].col < l[k].end_col && l[k].col16 < l[k].end_col16);
			assert_int_equal(l[k].target_line, td[l[k].target_def].def_line);
		}
		for (k = 0; k < nd; k++) {
			assert_true(d[k].first_line <= d[k].def_line);
			assert_true(d[k].def_line <= d[k].end_line);
			assert_true(d[k].parent < k);
			assert_true(!k || d[k - 1].first_line <= d[k].first_line);
		}
	}
}

/* Token soup and mangled real code: the index must neither crash nor produce bad links. */
static void test_fuzz(void **state)
{
	static const char *const words[] = {
		"def ",	      "class ",	   "async ", "lambda ", "import ",  "from ", " as ",
		"global ",    "nonlocal ", "for ",   " in ",	"if ",	    "else",  "match ",
		"case ",      "with ",	   "del ",   "return ", "self",	    ".",     "f",
		"g",	      "(",	   ")",	     "[",	"]",	    "{",     "}",
		":",	      "=",	   ",",	     "@",	"*",	    "\n",    "\n    ",
		"\n        ", "'",	   "\"\"\"", "f'{",	"#",	    "\\\n",  ";",
		":=",	      "->",	   "x",	     "pkg",	"import *",
	};
	char buf[2048];
	int round, s;

	for (round = 0; round < 400; round++) {
		struct ls_pyindex *ix;

		assert_int_equal(ls_pyindex__new(&ix), 0);
		for (s = 0; s < 4; s++) {
			size_t len = 0, n = rnd() % 300;
			char path[32];

			while (n-- && len < sizeof(buf) - 16) {
				const char *w = words[rnd() % (sizeof(words) / sizeof(words[0]))];

				memcpy(buf + len, w, strlen(w));
				len += strlen(w);
			}
			snprintf(path, sizeof(path), "pkg/m%d.py", s);
			assert_int_equal(ls_pyindex__add_source(ix, s, path, buf, len), 0);
		}
		check_index_sane(ix, 4);
		ls_pyindex__free(ix);
	}
	/* the fixtures cut at random points and with random bytes flipped */
	for (round = 0; round < 300; round++) {
		struct ls_pyindex *ix;

		assert_int_equal(ls_pyindex__new(&ix), 0);
		for (s = 0; s < (int)NFIX; s++) {
			size_t len = rnd() % (fx[s].len + 1), k;
			char *t = malloc(len + 1);

			assert_non_null(t);
			memcpy(t, fx[s].text, len);
			for (k = 0; k < 3 && len; k++)
				t[rnd() % len] = (char)rnd();
			assert_int_equal(ls_pyindex__add_source(ix, s, fx[s].path, t, len), 0);
			free(t);
		}
		check_index_sane(ix, NFIX);
		ls_pyindex__free(ix);
	}
}

static void test_deep_nesting(void **state)
{
	size_t n = 50000, i, len = 0;
	char *buf = malloc(32 * n + 65536);
	struct ls_pyindex *ix;

	assert_non_null(buf);
	assert_int_equal(ls_pyindex__new(&ix), 0);
	len += sprintf(buf, "x = ");
	for (i = 0; i < n; i++)
		len += sprintf(buf + len, "lambda: (");
	buf[len++] = '\n';
	assert_int_equal(ls_pyindex__add_source(ix, 0, "a.py", buf, len), 0);
	len = 0;
	for (i = 0; i < 300; i++) {
		memset(buf + len, ' ', i);
		len += i;
		len += sprintf(buf + len, "def f%zu():\n", i);
	}
	assert_int_equal(ls_pyindex__add_source(ix, 1, "b.py", buf, len), 0);
	len = 0;
	for (i = 0; i < n; i++)
		len += sprintf(buf + len, "%s", i % 2 ? "[" : "f(");
	assert_int_equal(ls_pyindex__add_source(ix, 2, "c.py", buf, len), 0);
	/* a ladder of 300 diamonds (2^300 paths to the top), a 300-class chain and a cycle:
	 * lookups must be memoized, and still answer */
	len = sprintf(buf, "class A0:\n    def m(self):\n        return self.n()\n"
			   "    def n(self):\n        pass\n");
	for (i = 0; i < 300; i++)
		len += sprintf(
			buf + len,
			"class B%zu(A%zu):\n    pass\nclass C%zu(A%zu):\n    pass\n"
			"class A%zu(B%zu, C%zu):\n    def k(self):\n        return self.m()\n",
			i, i, i, i, i + 1, i, i);
	for (i = 0; i < 300; i++)
		len += sprintf(buf + len, "class D%zu(%s%zu):\n    pass\n", i + 1, i ? "D" : "A",
			       i ? i : 300);
	len += sprintf(buf + len, "class X(Y):\n    pass\nclass Y(X):\n    def m(self):\n"
				  "        return self.m()\nx = D300()\nx.m()\nx.n()\n");
	assert_int_equal(ls_pyindex__add_source(ix, 3, "d.py", buf, len), 0);
	check_index_sane(ix, 4);
	{
		const struct ls_pyindex_link *l;
		const struct ls_pyindex_def *d;
		int nl = ls_pyindex__links(ix, 3, &l), nd = ls_pyindex__defs(ix, 3, &d), k;
		bool m_linked = false;

		assert_true(nd > 1000);
		for (k = 0; k < nl; k++) /* x.m() on the exact instance reaches A0.m */
			if (l[k].target_src == 3 && !strcmp(d[l[k].target_def].qualname, "A0.m"))
				m_linked = true;
		assert_true(m_linked);
	}
	ls_pyindex__free(ix);
	free(buf);
}

/* ---- differential test of definitions against CPython ------------------------------------- */

static char *cpython_expect(const char *python, const char *mode, const char *paths)
{
	char tmpl[] = "/tmp/ls-pyindex-XXXXXX", cmd[1024];
	char *out;
	size_t len;
	int fd = mkstemp(tmpl), rc;

	assert_true(fd >= 0);
	close(fd);
	if (access(python, X_OK)) {
		print_error("%s is missing; the differential test needs it (see setup.sh)\n",
			    python);
		fail();
	}
	snprintf(cmd, sizeof(cmd), "%s " FIXTURES "cpython_expect.py %s %s %s", python, mode, tmpl,
		 paths);
	rc = system(cmd);
	if (rc) {
		print_error("'%s' failed with %d\n", cmd, rc);
		fail();
	}
	out = ls_test_read_file(tmpl, &len);
	unlink(tmpl);
	assert_non_null(out);
	return out;
}

struct def_stats {
	size_t files, excluded, excluded_other, defs, quals, diffs;
};

static const char kind_letter[] = {'F', 'A', 'C', 'M', 'N'};

static int cmp_def_pos(const void *a, const void *b)
{
	const struct ls_pyindex_def *x = *(const struct ls_pyindex_def *const *)a;
	const struct ls_pyindex_def *y = *(const struct ls_pyindex_def *const *)b;

	if (x->def_line != y->def_line)
		return x->def_line < y->def_line ? -1 : 1;
	return x->name_col < y->name_col ? -1 : x->name_col > y->name_col;
}

static void diff(struct def_stats *st, const char *path, const char *fmt, ...)
{
	va_list ap;

	if (st->diffs++ < 12) {
		char msg[512];

		va_start(ap, fmt);
		vsnprintf(msg, sizeof(msg), fmt, ap);
		va_end(ap);
		print_message("%s: %s\n", path, msg);
	}
}

/*
 * For each file: ast's FunctionDef/AsyncFunctionDef/ClassDef (lineno, first decorator line,
 * end_lineno, kind, name) must equal our definitions in order, and every function and class
 * code object must map back through find_def(co_qualname, co_firstlineno) to a definition with
 * exactly that qualname.
 */
static void compare_defs(char *expect, struct def_stats *st)
{
	char *line = expect, *next, path[4096] = "";
	struct ls_pyindex *ix = NULL;
	const struct ls_pyindex_def *defs = NULL, **sorted = NULL;
	int ndefs = 0, k = 0;

	for (; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		if (line[0] == 'X') {
			/* CPython's own compile refuses these (bad_coding*.py, badsyntax_*.py, lib2to3's
			 * Python 2 data): nothing to compare with; any other reason is a broken oracle */
			st->excluded++;
			if (!strstr(line + 2, " SyntaxError") &&
			    !strstr(line + 2, " IndentationError") &&
			    !strstr(line + 2, " TabError") &&
			    !strstr(line + 2, " UnicodeDecodeError"))
				st->excluded_other++;
			print_message("excluded (CPython rejects it): %s\n", line + 2);
		} else if (line[0] == 'F') {
			size_t len;
			char *src;
			int i;

			snprintf(path, sizeof(path), "%s", line + 2);
			src = ls_test_read_file(path, &len);
			assert_non_null(src);
			assert_int_equal(ls_pyindex__new(&ix), 0);
			assert_int_equal(ls_pyindex__add_source(ix, 1, path, src, len), 0);
			free(src);
			assert_true(ls_pyindex__resolve(ix) >= 0);
			ndefs = ls_pyindex__defs(ix, 1, &defs);
			sorted = realloc(sorted, (ndefs + 1) * sizeof(*sorted));
			for (i = 0; i < ndefs; i++)
				sorted[i] = &defs[i];
			qsort(sorted, ndefs, sizeof(*sorted), cmp_def_pos);
			k = 0;
			st->files++;
		} else if (line[0] == 'D') {
			int def_line, first, end;
			char kind, name[512];

			assert_int_equal(sscanf(line + 2, "%d %d %d %c %511s", &def_line, &first,
						&end, &kind, name),
					 5);
			st->defs++;
			if (k >= ndefs) {
				diff(st, path, "missing def %s at %d", name, def_line);
				continue;
			}
			if (sorted[k]->def_line != def_line || sorted[k]->first_line != first ||
			    sorted[k]->end_line != end || kind_letter[sorted[k]->kind] != kind ||
			    strcmp(sorted[k]->name, name))
				diff(st, path,
				     "want %c %s %d-%d (first %d), got %c %s %d-%d (first %d)",
				     kind, name, def_line, end, first, kind_letter[sorted[k]->kind],
				     sorted[k]->name, sorted[k]->def_line, sorted[k]->end_line,
				     sorted[k]->first_line);
			k++;
		} else if (line[0] == 'Q') {
			int first, i;
			char qual[1024];

			assert_int_equal(sscanf(line + 2, "%d %1023s", &first, qual), 2);
			st->quals++;
			i = ls_pyindex__find_def(ix, 1, qual, first);
			if (i < 0 || strcmp(defs[i].qualname, qual))
				diff(st, path, "code object %s (line %d) has no definition", qual,
				     first);
		} else if (line[0] == 'E') {
			if (k != ndefs)
				diff(st, path, "%d definitions of ours left over", ndefs - k);
			ls_pyindex__free(ix);
			ix = NULL;
		}
	}
	free(sorted);
	ls_pyindex__free(ix);
}

static const char *python(const char *env, const char *dflt)
{
	const char *p = getenv(env);

	return p && *p ? p : dflt;
}

static void test_diff_defs_cpython311_stdlib(void **state)
{
	char *expect = cpython_expect(python("PYTHON311", "/usr/bin/python3.11"), "defs",
				      "/usr/lib/python3.11");
	struct def_stats st = {0};

	compare_defs(expect, &st);
	free(expect);
	print_message("pyindex vs CPython 3.11 ast/code objects: %zu files, %zu definitions, "
		      "%zu code objects, %zu differences, %zu files excluded\n",
		      st.files, st.defs, st.quals, st.diffs, st.excluded);
	assert_true(st.files > 500);
	assert_true(st.defs > 15000);
	assert_true(st.quals > 15000);
	assert_int_equal(st.excluded_other, 0);
	assert_true(st.excluded * 50 < st.files); /* CPython's own test data, a few per cent */
	assert_int_equal(st.diffs, 0);
}

static void test_diff_defs_cpython312_fixtures(void **state)
{
	char *expect =
		cpython_expect(python("PYTHON312", "/root/.pyenv/versions/3.12.1/bin/python3.12"),
			       "defs", FIXTURES);
	struct def_stats st = {0};

	compare_defs(expect, &st);
	free(expect);
	print_message("pyindex vs CPython 3.12 on fixtures: %zu files, %zu definitions, "
		      "%zu code objects, %zu differences\n",
		      st.files, st.defs, st.quals, st.diffs);
	assert_true(st.files >= NFIX + 2);
	assert_true(st.defs > 60);
	assert_int_equal(st.excluded, 0);
	assert_int_equal(st.diffs, 0);
}

/* The standard library as one project: resolution terminates and every link is well formed. */
static void test_stdlib_as_project(void **state)
{
	FILE *list = popen("find /usr/lib/python3.11 -name '*.py' | sort", "r");
	struct ls_pyindex *ix;
	struct ls_pyindex_stats st;
	char path[4096];
	int n = 0;

	assert_non_null(list);
	assert_int_equal(ls_pyindex__new(&ix), 0);
	while (fgets(path, sizeof(path), list)) {
		size_t len;
		char *src;

		path[strcspn(path, "\n")] = 0;
		src = ls_test_read_file(path, &len);
		assert_non_null(src);
		assert_int_equal(ls_pyindex__add_source(ix, n++, path, src, len), 0);
		free(src);
	}
	pclose(list);
	check_index_sane(ix, n);
	ls_pyindex__stats(ix, &st);
	print_message("stdlib as one project: %zu sources, %zu lines, %zu definitions, %zu refs, "
		      "%zu links\n",
		      st.sources, st.lines, st.defs, st.refs, st.links);
	assert_true(st.links > 10000);
	ls_pyindex__free(ix);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_fixture_links),
		cmocka_unit_test(test_line_endings_equivalent),
		cmocka_unit_test(test_utf16_link_columns),
		cmocka_unit_test(test_api),
		cmocka_unit_test(test_fuzz),
		cmocka_unit_test(test_deep_nesting),
		cmocka_unit_test(test_diff_defs_cpython311_stdlib),
		cmocka_unit_test(test_diff_defs_cpython312_fixtures),
		cmocka_unit_test(test_stdlib_as_project),
	};

	return cmocka_run_group_tests(tests, setup_fixtures, teardown_fixtures);
}
