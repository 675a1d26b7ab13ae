/* SPDX-License-Identifier: MIT */
/* The differential flame graph of `report --diff` (diff_flame.c; docs/report-data.md). */
#ifndef LS_DIFF_FLAME_H
#define LS_DIFF_FLAME_H

#include "diff.h"
#include "flame.h"
#include "jbuf.h"

/*
 * The report data's "diff_flame" object: both profiles' call trees merged over processes, with
 * the base's values beside the new ones. f: the new profile's tree (ls_flame__new of d->m), built
 * once for the report's own flame graph too. null without a diff, f or the base's stacks.
 */
void ls_diff_flame__json(struct ls_jbuf *b, const struct ls_diff *d, const struct ls_flame *f);

#endif
