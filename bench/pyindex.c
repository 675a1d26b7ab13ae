// SPDX-License-Identifier: MIT
/*
 * Benchmark of report/pyindex.c: indexes a synthetic project (default 2,000 files of 100 lines,
 * cross-file imports, classes, methods, f-strings) or the *.py files under a directory, and prints
 * the time to tokenize alone (the baseline), to parse all sources, and to resolve, with ratios.
 *
 *   .output/bench/pyindex [--files N] [--lines N] [--dir PATH] [--repeat N]
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pyindex.h"
#include "pytok.h"
#include "../tests/lib/read_file.h"

struct src {
	char *path;
	char *text;
	size_t len;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* CPU time of this process: what the work costs when other jobs share the cores */
static double cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct buf {
	char *p;
	size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->p + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		if (n >= 0 && b->n + n < b->cap)
			break;
		b->cap = b->cap * 2 + n + 64;
		b->p = realloc(b->p, b->cap);
		if (!b->p) {
			fprintf(stderr, "pyindex bench: out of memory\n");
			exit(1);
		}
	}
	b->n += n;
}

/* One synthetic module of about `lines` lines: imports from two other modules, a class with
 * methods calling each other and functions of other modules, and module-level functions. */
static void make_module(struct src *s, int i, int nfiles, int lines)
{
	struct buf b = {0};
	int j = (i * 7 + 3) % nfiles, k = (i * 13 + 5) % nfiles, n = 0, line = 0;
	char path[128];

	snprintf(path, sizeof(path), "/srv/bench/app/pkg%d/mod%d.py", i / 100, i);
	put(&b, "# generated module %d\nimport os\nimport json as _json\n", i);
	put(&b, "from pkg%d.mod%d import func_%d_0, Klass%d\n", j / 100, j, j, j);
	put(&b, "import pkg%d.mod%d as other\n\nCONST_%d = %d\n\n\n", k / 100, k, i, i);
	put(&b,
	    "class Klass%d:\n    \"\"\"A class.\"\"\"\n\n    def __init__(self, x):\n"
	    "        self.x = x\n\n",
	    i);
	line = 14;
	while (line < lines / 2) {
		put(&b,
		    "    def method_%d(self, y):\n"
		    "        # calls a sibling method and a function of another module\n"
		    "        z = self.method_%d(y) if y else f\"{y!r:>{self.x}} {CONST_%d}\"\n"
		    "        return [func_%d_0(v) for v in range(y)], z, _json.dumps(z)\n\n",
		    n, n + 1, i, j);
		n++;
		line += 5;
	}
	put(&b, "    def method_%d(self, y):\n        return y\n\n\n", n);
	line += 4;
	n = 0;
	while (line < lines - 8) {
		put(&b,
		    "def func_%d_%d(a, b=None, *args, **kw):\n"
		    "    obj = Klass%d(a)\n"
		    "    total = obj.method_0(a) + other.func_%d_0(b)\n"
		    "    return Klass%d(total).method_1(lambda q: q + 1), func_%d_%d(b)\n\n\n",
		    i, n, i, k, j, i, n ? n - 1 : 0);
		n++;
		line += 6;
	}
	put(&b, "if __name__ == \"__main__\":\n    print(func_%d_0(1), os.getcwd())\n", i);
	s->path = strdup(path);
	s->text = b.p;
	s->len = b.n;
}

static int read_tree(const char *dir, struct src **out, int *n)
{
	char cmd[4200], path[4096];
	FILE *list;
	int cap = 0;

	snprintf(cmd, sizeof(cmd), "find '%s' -name '*.py' -type f | sort", dir);
	list = popen(cmd, "r");
	if (!list)
		return -errno;
	while (fgets(path, sizeof(path), list)) {
		struct src *s;
		size_t len;
		char *text;

		path[strcspn(path, "\n")] = 0;
		text = ls_test_read_file(path, &len);
		if (!text)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			*out = realloc(*out, cap * sizeof(**out));
			if (!*out)
				return -ENOMEM;
		}
		s = &(*out)[(*n)++];
		s->path = strdup(path);
		s->text = text;
		s->len = len;
	}
	pclose(list);
	return 0;
}

int main(int argc, char **argv)
{
	int files = 2000, lines = 100, repeat = 3, i, r, n = 0, err;
	const char *dir = NULL;
	struct src *srcs = NULL;
	double t_tok = 1e9, t_add = 1e9, t_res = 1e9, c_tok = 1e9, c_idx = 1e9;
	size_t total_lines = 0, links = 0, bytes = 0;

	for (i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--files") && i + 1 < argc)
			files = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--lines") && i + 1 < argc)
			lines = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dir") && i + 1 < argc)
			dir = argv[++i];
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = atoi(argv[++i]);
		else {
			fprintf(stderr,
				"usage: %s [--files N] [--lines N] [--dir PATH] "
				"[--repeat N]\n",
				argv[0]);
			return 64;
		}
	}
	if (files < 1 || lines < 30 || repeat < 1) {
		fprintf(stderr, "pyindex bench: --files >= 1, --lines >= 30, --repeat >= 1\n");
		return 64;
	}
	if (dir) {
		err = read_tree(dir, &srcs, &n);
		if (err || !n) {
			fprintf(stderr, "pyindex bench: no *.py files under %s\n", dir);
			return 1;
		}
	} else {
		srcs = calloc(files, sizeof(*srcs));
		for (n = 0; n < files; n++)
			make_module(&srcs[n], n, files, lines);
	}
	for (i = 0; i < n; i++)
		bytes += srcs[i].len;

	for (r = 0; r < repeat; r++) {
		struct ls_pyindex *ix;
		struct ls_pyindex_stats st;
		double t0, t1, t2, t3, c0, c1, c2;

		c0 = cpu();
		t0 = now();
		for (i = 0; i < n; i++) { /* baseline: the tokenizer alone */
			struct ls_pytok *toks;
			size_t nt;

			if (ls_pytok__all(srcs[i].text, srcs[i].len, &toks, &nt))
				return 1;
			free(toks);
		}
		t1 = now();
		c1 = cpu();
		if (ls_pyindex__new(&ix))
			return 1;
		for (i = 0; i < n; i++) {
			err = ls_pyindex__add_source(ix, i, srcs[i].path, srcs[i].text,
						     srcs[i].len);
			if (err) {
				fprintf(stderr, "pyindex bench: add_source failed: %s\n",
					strerror(-err));
				return 1;
			}
		}
		t2 = now();
		if (ls_pyindex__resolve(ix) < 0)
			return 1;
		t3 = now();
		c2 = cpu();
		ls_pyindex__stats(ix, &st);
		total_lines = st.lines;
		links = st.links;
		ls_pyindex__free(ix);
		t_tok = t1 - t0 < t_tok ? t1 - t0 : t_tok;
		t_add = t2 - t1 < t_add ? t2 - t1 : t_add;
		t_res = t3 - t2 < t_res ? t3 - t2 : t_res;
		c_tok = c1 - c0 < c_tok ? c1 - c0 : c_tok;
		c_idx = c2 - c1 < c_idx ? c2 - c1 : c_idx;
	}
	printf("pyindex: %d files, %zu lines, %.1f MiB, %zu links (best of %d)\n", n, total_lines,
	       bytes / 1048576.0, links, repeat);
	printf("  tokenize only (baseline) %8.1f ms\n", t_tok * 1e3);
	printf("  add_source (tok+parse)   %8.1f ms  %.2fx baseline\n", t_add * 1e3, t_add / t_tok);
	printf("  resolve                  %8.1f ms  %.2fx baseline\n", t_res * 1e3, t_res / t_tok);
	printf("  index total              %8.1f ms  %.2fx baseline, %.2f M lines/s\n",
	       (t_add + t_res) * 1e3, (t_add + t_res) / t_tok, total_lines / (t_add + t_res) / 1e6);
	printf("  CPU time: tokenize %.1f ms, index %.1f ms (%.2fx)\n", c_tok * 1e3, c_idx * 1e3,
	       c_idx / c_tok);
	for (i = 0; i < n; i++) {
		free(srcs[i].path);
		free(srcs[i].text);
	}
	free(srcs);
	return 0;
}
