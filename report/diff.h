/* SPDX-License-Identifier: MIT */
/*
 * Two profiles compared: the report's Time of every line, function and file of a new profile
 * against a base profile, summed over processes (pids differ between runs).
 *
 * Lines are matched by path and line number when their text is the same in both (or either text
 * was not captured); else within the same function (path and qualified name) where its text is
 * now: at the same offset from the def line, or the nearest line with that text when code was
 * added or removed above it (moved); else at the same offset from the def line whatever its text
 * (edited). What is left is present in one profile only. Functions match by path and qualified
 * name, files by path.
 */
#ifndef LS_DIFF_H
#define LS_DIFF_H

#include <stddef.h>
#include <stdint.h>
#include "model.h"

enum ls_diff_match {
	LS_DIFF_SAME,	/* same path, line and text (or a text was not captured) */
	LS_DIFF_MOVED,	/* the same text in the same function, at another line */
	LS_DIFF_EDITED, /* the same place in the same function; the text changed */
	LS_DIFF_NEW,	/* only in the new profile */
	LS_DIFF_GONE,	/* only in the base profile */
};

/* One line, function or file of either profile; the indices are -1 on the side it is absent. */
struct ls_drow {
	const char *path;     /* the new profile's, else the base's */
	const char *function; /* qualified name; NULL for a file, or a line without one */
	int line, base_line;  /* lines: 1-based; functions: their def lines; files: 0 */
	int file, base_file;  /* index into each model's files (lines: the one with most time) */
	int func, base_func;  /* index into each model's funcs */
	int64_t ns, base_ns;  /* Time (own time) in each, summed over processes */
	int64_t count, base_count; /* its samples */
	enum ls_diff_match match;
};

struct ls_diff {
	const struct ls_model *m, *base;
	/* ordered by ns - base_ns, largest regression first; ties by path, then line */
	struct ls_drow *lines, *funcs, *files;
	size_t nlines, nfuncs, nfiles;
	int64_t ns, base_ns;		  /* total Time of each profile's lines */
	size_t matched[LS_DIFF_GONE + 1]; /* lines by how they were matched */
};

/* Compares m against base (both outlive the diff). Returns 0 or -ENOMEM. */
int ls_diff__build(const struct ls_model *m, const struct ls_model *base, struct ls_diff **out);
void ls_diff__free(struct ls_diff *d);

/* "same", "moved", "edited", "new", "gone" */
const char *ls_diff__match_name(enum ls_diff_match how);

/* A row's change in share of its profile's total: ns/ns_total - base_ns/base_total (0 if none). */
double ls_diff__share_delta(const struct ls_diff *d, const struct ls_drow *r);

/*
 * Where line `line` of base file bf, in a function defined at bdef, is in new file nf whose
 * function is defined at ndef: the same line with the same text, else the same offset from the
 * def line with the same text, else the nearest line with that text; -1 when the new file does not
 * have it. When either text was not captured, the same offset from the def line.
 */
int ls_diff__line_in_new(const struct ls_mfile *nf, int ndef, const struct ls_mfile *bf, int bdef,
			 int line);

/* What makes the comparison less meaningful, as sentences (at most max). Returns how many. */
#define LS_DIFF_MAX_NOTES 4
size_t ls_diff__notes(const struct ls_diff *d, const char **notes, size_t max);

#endif
