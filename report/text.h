/* SPDX-License-Identifier: MIT */
/* The text report: hottest lines first, like `perf report --stdio`. */
#ifndef LS_TEXT_H
#define LS_TEXT_H

#include <stdio.h>
#include "model.h"

/* Writes the header and the top `top` lines by own time. 0 or -EIO. */
int ls_text__write(FILE *out, const struct ls_model *m, int top);

#endif
