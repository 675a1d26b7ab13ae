/* SPDX-License-Identifier: MIT */
/*
 * Notebooks run by IPython kernels: each kernel process is one notebook, its sampled cells the
 * files named by ls_ipycell. A cell's text is recovered, in this order, from what python-usdt
 * announced in the kernel, from the kernel's history database or from the .ipynb on its launcher's command line (nbconvert, nbclient, papermill) or
 * in its Jupyter server's sessions, each read with the kernel's rights, and
 * kept only when it hashes to the cell's name; a cell not found yet is tried again at later flushes
 * and otherwise stays without text, with the reason. Cells that a verified cell's `%run X.ipynb`
 * ran (same kernel, no history) belong to a notebook of their own, X read with the kernel's rights.
 * Not thread-safe.
 */
#ifndef LS_NOTEBOOKS_H
#define LS_NOTEBOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"
#include "ipyhistory.h"
#include "ipynb.h"
#include "nbusdt.h"
#include "sources.h"

#define LS_NBCELL_TRIES	   10	/* flushes (seconds) a cell is looked for after its first sample */
#define LS_NB_MAX_CHILDREN 64	/* notebooks a kernel's cells %run that are looked in */
#define LS_NB_MAX_NOTE	   4096 /* bytes of notes per notebook */
#define LS_NB_REFRESH_NS   10000000ull /* a new cell reads a notebook again this long after */

struct ls_nbcell {
	int64_t file_id;
	size_t notebook; /* index into notebooks */
	int seq;	 /* 1-based capture order in its notebook */
	int number; /* execution count (history) or code-cell index (notebook file); 0 unknown */
	const char *how; /* "python-usdt", "history", "notebook", or NULL when not verified */
	char *name;	 /* its compile name (owned) */
	/* the notebook cell it is a text of (owned): "index:N" (N-th code cell of the notebook file),
	 * "id:ID" (the front end's cell id); NULL when unknown. Texts of one key are revisions. */
	char *key;
	uint32_t hash;
	int input; /* <ipython-input-N-HASH> (an IPython shell): N, and HASH in sha48 */
	uint64_t sha48;
	int tries;
	int file_tries;	  /* python-usdt gave its text: times the notebook file lacked it */
	int quick;	  /* ls_notebooks__retry_soon() tries so far */
	uint64_t next_ns; /* ... and when the next may be */
	bool dirty;
};

struct ls_notebook {
	pid_t pid;	 /* the kernel */
	int64_t proc_id; /* its process row */
	char *path;	 /* the .ipynb (absolute when its launcher's cwd is known), or NULL */
	char *history;	 /* the history database as the kernel names it, or NULL */
	int hist_fd;  /* it, as last opened with the kernel's rights (-1 none): read at its exit */
	int ipynb_fd; /* path, the same way */
	bool hist_refused, ipynb_refused; /* a read failed, noted (not for the kernel's end) */
	char *note;			  /* why a way to find cells was unavailable, or NULL */
	pid_t launcher;	  /* the process that names path (its argv, or a server's sessions) */
	pid_t by_kernel;  /* the kernel that started it (nbclient in a notebook), or 0 */
	int cwd_scans;	  /* by_kernel: times its working directory's notebooks were tried */
	char *nb_relpath; /* path as it names it; the file is read with the kernel's rights */
	int ncells;
	bool dirty;
	/* a notebook another one runs with %run: its parent (index + 1; 0 none) and that line */
	size_t parent;
	int64_t parent_file;
	int parent_line;
	struct ls_ipyhist hist;
	struct ls_ipynb ipynb;
	/* (source << 32 | murmur2) -> index << 8 | newlines added; source 0 hist, 1 ipynb */
	struct ls_hashmap by_hash;
	unsigned loaded_round; /* hist and ipynb as of this retry round */
	uint64_t loaded_ns,
		load_cost_ns; /* when they were read (CLOCK_MONOTONIC), how long it took */
};

struct ls_notebooks {
	struct ls_notebook *nbs;
	size_t n, cap;
	struct ls_nbcell *cells;
	size_t ncells, ccap;
	unsigned round;
	bool refresh; /* a new cell not in what was read: read again unless that was just done */
	struct ls_nbusdt usdt; /* cells the kernels announced (python-usdt) */
};

void ls_notebooks_init(struct ls_notebooks *n);
void ls_notebooks_release(struct ls_notebooks *n);

/*
 * The file id of the cell path (ls_ipycell__parse() is true) that kernel pid (process row proc_id)
 * ran, its text looked for now; any other path is ls_sources__lookup_in's in view. The id, or
 * -ENOMEM.
 */
int64_t ls_notebooks__cell(struct ls_notebooks *n, struct ls_sources *s, pid_t pid, int64_t proc_id,
			   const struct ls_source_view *view, const char *path);
/* A cell that kernel proc_id announced (an LS_TM_CELL message). 0, 1 when refused, or -ENOMEM. */
int ls_notebooks__announced(struct ls_notebooks *n, int64_t proc_id, const void *msg, size_t len);
/* Looks again for the cells not found yet (once per flush). 0 or -ENOMEM. */
int ls_notebooks__retry(struct ls_notebooks *n, struct ls_sources *s);
/*
 * Between flushes (now: CLOCK_MONOTONIC): a cell just seen is looked for again soon, three times
 * in its first ~0.3 s, because a kernel writes its history a moment after a cell starts and may
 * be gone (with the rights to read its files) before the next flush.
 */
int ls_notebooks__retry_soon(struct ls_notebooks *n, struct ls_sources *s, uint64_t now);
/*
 * nbcwd.c: for a kernel nb that another kernel started, the first notebook of its working
 * directory with a code cell hashing to hash becomes nb's (at most three scans; never for an
 * IPython shell's cell, input). 1 when one did, 0 when not, -ENOMEM.
 */
int ls_notebooks__adopt_from_cwd(struct ls_notebook *nb, uint32_t hash, bool input);
/* Appends a reason to nb->note ("; "-separated) unless it has it or has LS_NB_MAX_NOTE bytes. */
void ls_notebook__note(struct ls_notebook *nb, const char *why);
/*
 * nbfind.c: kernel nb's history database (--HistoryManager.hist_file, else $IPYTHONDIR or
 * ~/.ipython) and its notebook file (the first .ipynb argument of the nbconvert, nbclient or
 * papermill above it, else its Jupyter server's session). What is not found becomes a note: 0,
 * or -ENOMEM.
 */
int ls_nbfind__history(struct ls_notebook *nb);
int ls_nbfind__notebook_file(struct ls_notebook *nb);
/* path as process pid names it, made absolute from its cwd when that is known (owned), or NULL */
char *ls_nbfind__from_cwd(pid_t pid, const char *path);
/* Marks everything to be written again (a flush that failed). */
void ls_notebooks__unflush(struct ls_notebooks *n);

#endif
