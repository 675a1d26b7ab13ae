/* SPDX-License-Identifier: MIT */
/*
 * Static symbol index over the Python sources of one report: definitions (functions, methods,
 * classes with CPython's qualnames and line extents) and links from name spans to definitions.
 *
 * Resolution is conservative: a name links only when every binding of it in its scope leads to
 * the same definition among the added sources. Parameters, assignments, loop/with/except targets,
 * `del`, star imports, dynamic classes (metaclass=, unknown class decorators), methods overridden
 * in a subclass (for self./cls.), attributes assigned on the class's instances or on objects of
 * unknown type (`x.meth = ...`), and imports of modules that are not among the added sources
 * (stdlib, third-party: add only the sources whose definitions may be link targets) all leave
 * the name unlinked. Methods resolve through self/cls and through names bound once to
 * `Class(...)`.
 *
 * Usage: __new, __add_source for every source, __resolve once, then read __links/__defs and call
 * __find_def. Adding sources after __resolve is allowed; call __resolve again before reading links.
 * Not thread-safe; distinct indexes are independent. Nothing here logs; errors are returned.
 */
#ifndef LS_PYINDEX_H
#define LS_PYINDEX_H

#include <stddef.h>

enum ls_pydef_kind {
	LS_PYDEF_FUNCTION = 0,	 /* def outside a class body */
	LS_PYDEF_ASYNC_FUNCTION, /* async def outside a class body */
	LS_PYDEF_CLASS,
	LS_PYDEF_METHOD,       /* def directly in a class body */
	LS_PYDEF_ASYNC_METHOD, /* async def directly in a class body */
};

struct ls_pyindex_def {
	int kind;	      /* enum ls_pydef_kind */
	const char *qualname; /* as co_qualname: "C.meth", "f.<locals>.g" */
	const char *name;     /* as co_name */
	int def_line;	      /* line of the def/async def/class keyword (ast lineno) */
	int first_line;	      /* first decorator's line, else def_line (= co_firstlineno) */
	int end_line;	      /* last line of the body's last statement (ast end_lineno); the
			       * report's Lines count is end_line - def_line + 1 */
	int name_line;	      /* the defined name's span: line, byte and UTF-16 columns */
	int name_col, name_end_col;
	int name_col16, name_end_col16;
	int parent; /* index of the enclosing definition in the same source, or -1 */
};

struct ls_pyindex_link {
	int line;	      /* 1-based line of the linked name */
	int col, end_col;     /* byte columns of the name within its line */
	int col16, end_col16; /* UTF-16 columns: what JS String indexes count */
	int target_src;	      /* src_id of the source that holds the definition */
	int target_def;	      /* index into that source's __defs() array */
	int target_line;      /* the definition's def_line */
};

struct ls_pyindex_stats {
	size_t sources, lines, tokens, defs, refs, links;
};

struct ls_pyindex;

int ls_pyindex__new(struct ls_pyindex **out);
void ls_pyindex__free(struct ls_pyindex *idx);

/*
 * Tokenizes and parses one source. src_id is the caller's id (unique per index; -EEXIST if reused),
 * path the file name as the profiled process saw it (absolute or relative; used for module names
 * and relative imports), text UTF-8 (a BOM is allowed; other encodings should be transcoded
 * first). Lines are split at "\r\n", "\r" and "\n". text and path are copied where needed and
 * may be freed on return. Malformed Python is indexed as far as it can be; never fails for it.
 * Returns 0, -EEXIST, -EFBIG (text of 4 GiB or more), -EINVAL or -ENOMEM; after -ENOMEM the
 * index is only good for __free.
 */
int ls_pyindex__add_source(struct ls_pyindex *idx, int src_id, const char *path, const char *text,
			   size_t len);

/* Cross-file resolution: fills every source's links. Returns the number of links or -ENOMEM. */
int ls_pyindex__resolve(struct ls_pyindex *idx);

/*
 * Links of one source, sorted by (line, col16); at most one per name span. *out stays valid until
 * the next __add_source, __resolve or __free. Returns the count, or -ENOENT for an unknown src_id.
 */
int ls_pyindex__links(const struct ls_pyindex *idx, int src_id, const struct ls_pyindex_link **out);

/*
 * Definitions of one source in source order (sorted by first_line). Pointers inside stay valid
 * until __free. Returns the count, or -ENOENT for an unknown src_id.
 */
int ls_pyindex__defs(const struct ls_pyindex *idx, int src_id, const struct ls_pyindex_def **out);

/*
 * Maps a runtime code object to its definition: the definition of src_id whose first_line equals
 * co_firstlineno and whose qualname equals qualname. A qualname without a match still finds a
 * definition at that line whose name equals qualname's last dotted part (co_name, as older
 * Pythons give). qualname NULL matches any name; co_firstlineno <= 0 matches the unique
 * definition with that qualname. Returns the index into __defs(), or -ENOENT.
 */
int ls_pyindex__find_def(const struct ls_pyindex *idx, int src_id, const char *qualname,
			 int co_firstlineno);

/* Counters for benchmarks and diagnostics. */
void ls_pyindex__stats(const struct ls_pyindex *idx, struct ls_pyindex_stats *st);

#endif
