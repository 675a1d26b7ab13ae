/* SPDX-License-Identifier: MIT */
/* The text report of `report NEW --diff BASE`: regressions first. */
#ifndef LS_TEXT_DIFF_H
#define LS_TEXT_DIFF_H

#include <stdio.h>
#include "diff.h"

/* path, base_path: the two profiles' names as given. 0 or -EIO. */
int ls_text__write_diff(FILE *out, const struct ls_diff *d, const char *path, const char *base_path,
			int top);

#endif
