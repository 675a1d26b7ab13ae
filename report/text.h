/* SPDX-License-Identifier: MIT */
/* The text report: hottest lines first, like `perf report --stdio`. */
#ifndef LS_TEXT_H
#define LS_TEXT_H

#include <stdio.h>
#include "model.h"

/* Writes the header and the top `top` lines by own time. 0 or -EIO. */
int ls_text__write(FILE *out, const struct ls_model *m, int top);

/* User text on one line, escaped as in every output, cut or padded to width bytes (-1: as is). */
void ls_text__put_clean(FILE *out, const char *s, int width);
/* Line `line` of f (1-based), trimmed of leading blanks, at most width bytes; nothing if none. */
void ls_text__put_source(FILE *out, const struct ls_mfile *f, int line, int width);

#endif
