/* SPDX-License-Identifier: MIT */
/*
 * IPython's history database (history.sqlite, table history): the raw text of the cells a kernel
 * ran, read with the kernel's rights from a private copy (never the live file, never through a
 * symlink). Not thread-safe.
 */
#ifndef LS_IPYHISTORY_H
#define LS_IPYHISTORY_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define LS_IPYHIST_MAX_BYTES (64 << 20)
#define LS_IPYHIST_MAX_ROWS  50000 /* the newest: a kernel's own cells are the last ones */

struct ls_ipyhist_cell {
	char *text; /* source_raw, trailing newlines stripped (as IPython stores it) */
	size_t len;
	char *source; /* source, the transformed text, when it differs from text; else NULL */
	size_t slen;
	int64_t session, line; /* line is the cell's execution count */
};

struct ls_ipyhist {
	struct ls_ipyhist_cell *cells; /* newest first */
	size_t n;
};

/*
 * The history database at path (as process pid names it), read with pid's rights. 0, or -errno with
 * a one-line reason in why (not there, a symlink, too large, not an IPython history database).
 * *kept: ls_procfs__read_file_kept()'s, so that the cells a shell writes as it exits are read.
 */
int ls_ipyhistory__load(pid_t pid, const char *path, int *kept, struct ls_ipyhist *h, char *why,
			size_t whylen);
/* The same from a database image in memory (len bytes; buf is modified). */
int ls_ipyhistory__parse(char *buf, size_t len, struct ls_ipyhist *h, char *why, size_t whylen);
void ls_ipyhist_release(struct ls_ipyhist *h);

#endif
