/* SPDX-License-Identifier: MIT */
/*
 * Jupyter notebook files (.ipynb, nbformat 4): the code cells a kernel may have run, read with the
 * rights of the process that names the notebook. Not thread-safe.
 */
#ifndef LS_IPYNB_H
#define LS_IPYNB_H

#include <stddef.h>
#include <sys/types.h>

#define LS_IPYNB_MAX_BYTES (64 << 20)
#define LS_IPYNB_MAX_CELLS 100000

struct ls_ipynb_cell {
	char *text; /* the joined source, as the kernel receives it */
	size_t len;
	int index; /* 1-based among the code cells */
	char *id;  /* nbformat 4.5's cell id (a front end sends it with the cell), or NULL */
};

struct ls_ipynb {
	struct ls_ipynb_cell *cells;
	size_t n;
};

/*
 * Parses the notebook process pid names path into nb. 0, or -errno with a one-line reason in why
 * (not a notebook, too large, unreadable by pid, invalid JSON). With kept (NULL: none), the file as
 * last opened with pid's rights stays open there (-1 none), and is read once pid has gone.
 */
int ls_ipynb__load(pid_t pid, const char *path, int *kept, struct ls_ipynb *nb, char *why,
		   size_t whylen);
/* The same from text in memory (len bytes). */
int ls_ipynb__parse(const char *text, size_t len, struct ls_ipynb *nb, char *why, size_t whylen);
void ls_ipynb_release(struct ls_ipynb *nb);

#endif
