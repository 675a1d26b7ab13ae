/* SPDX-License-Identifier: MIT */
/*
 * `linescope-bpf merge IN... -o OUT`: profiles of several hosts or ranks of one job become one.
 * Every process keeps its host (a `hosts` row per input), ids move past those already merged,
 * sources are shared by content, and times are put on the earliest profile's clock.
 */
#ifndef LS_MERGE_H
#define LS_MERGE_H

/* Writes out (owned by uid:gid unless -1) from the n profiles in; 0 or -errno after one message. */
int ls_merge__run(const char *const *in, int n, const char *out, int uid, int gid);

#endif
