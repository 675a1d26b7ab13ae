/* SPDX-License-Identifier: MIT */
/* The differential flame graph of `report --diff` (diff_flame.c; docs/report-data.md). */
#ifndef LS_DIFF_FLAME_H
#define LS_DIFF_FLAME_H

#include "diff.h"
#include "jbuf.h"

/*
 * The report data's "diff_flame" object: both profiles' call trees merged over processes, with
 * the base's values beside the new ones. null without a diff or without stacks on both sides.
 */
void ls_diff_flame__json(struct ls_jbuf *b, const struct ls_diff *d);

#endif
