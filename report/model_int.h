/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by report/model.c (profile loading, sample attribution) and
 * report/model_aux.c (memory, GPU and tracing data). Not part of the model's API.
 */
#ifndef LS_MODEL_INT_H
#define LS_MODEL_INT_H

#include <sqlite3.h>
#include <stdint.h>
#include "array.h"
#include "hashmap.h"
#include "model.h"

struct stack {
	uint32_t *frames; /* function id, line; innermost first */
	int depth;
};

struct loader {
	struct ls_model *m;
	sqlite3 *db;
	int schema; /* the profile's schema version */
	struct ls_hashmap file_idx, func_idx, proc_idx, line_idx, fstat_idx, edge_idx;
	struct stack *stacks;
	size_t nstacks;
	size_t lcap, fcap, ecap;
	int *func_shift; /* per model function: lines added to move a cell's into its notebook */
	/* scratch for one stack */
	int *own_line;
	size_t scratch;
};

/*
 * On-CPU samples of a thread are scaled to the CPU time the scheduler accounted for it during the
 * recording, when the profile has it: the timer sample count carries noise at every preemption,
 * GIL hand-off and vCPU stall, the kernel's accounting does not. Lines keep their shares of the
 * thread's samples. Left as sampled: threads under 100 ms (the exit value can be one scheduler
 * tick stale) and factors outside [0.5, 2] (something does not match, e.g. a reused tid).
 * Columns c_proc, c_tid and f (the factor); LSM_SCALED_WEIGHT is a samples row's weight with it.
 */
#define LSM_CPU_SCALE_SQL                                                                \
	"SELECT t.process_id AS c_proc, t.tid AS c_tid, t.cpu_ns * 1.0 / w.w AS f"       \
	" FROM threads t JOIN (SELECT process_id, tid, sum(weight_ns) AS w FROM samples" \
	" WHERE kind = 0 GROUP BY process_id, tid) w"                                    \
	" ON w.process_id = t.process_id AND w.tid = t.tid"                              \
	" WHERE t.cpu_ns >= 100000000 AND w.w >= 100000000"                              \
	" AND t.cpu_ns BETWEEN w.w / 2 AND w.w * 2"
#define LSM_SCALED_WEIGHT                          \
	"CASE WHEN s.kind = 0 AND c.f IS NOT NULL" \
	" THEN CAST(round(s.weight_ns * c.f) AS INTEGER) ELSE s.weight_ns END"

char *lsm_col_dup(sqlite3_stmt *st, int i);
/* sqlite3_step(): 1 for a row, 0 at the end, -EIO (logged) when the profile is corrupt. */
int lsm_step(struct loader *L, sqlite3_stmt *st);
int64_t lsm_col_id(sqlite3_stmt *st, int i);
int lsm_prepare(struct loader *L, const char *sql, sqlite3_stmt **st);
/* The model line (proc, file, line), created on first use; NULL on -ENOMEM. */
struct ls_mline *lsm_line_slot(struct loader *L, int proc, int file, int line);
struct ls_mfstat *lsm_fstat_slot(struct loader *L, int proc, int func);
/* Model index of a function id, or -1. */
int lsm_func_at(struct loader *L, uint32_t id);
/* Index of a stack's own frame: innermost in project code, else the innermost. */
int lsm_own_frame(struct loader *L, const struct stack *s);

/* Lines of text (a last line without a newline counts). */
int lsm_count_lines(const char *t, size_t len);
/*
 * Notebooks (model_nb.c): each notebook's cell files become one source of kind "notebook", every
 * function and stored frame of a cell moved to its lines there (after load_stacks).
 */
int lsm_load_notebooks(struct loader *L);
/* A function's line as the model numbers it (a notebook cell's lines are moved). */
static inline int lsm_line_of(const struct loader *L, int func, int line)
{
	return L->func_shift && func >= 0 ? line + L->func_shift[func] : line;
}

int lsm_load_rss(struct loader *L);
bool lsm_has_spark(struct loader *L);
/* stored: lsm_has_spark(), asked once by the loader */
int lsm_load_spark(struct loader *L, bool stored, const char *const *paths, size_t n);
int lsm_load_gpu(struct loader *L);
int lsm_load_trace(struct loader *L);
int lsm_load_execs(struct loader *L);
int lsm_load_cost(struct loader *L);
void lsm_free_execs(struct ls_mproc *p);
/* LS_MODEL_STACKS: the samples by (thread, stack, kind) into m->stacks (model_stacks.c). */
/* LS_MODEL_STACKS; with timeline, LS_MODEL_TIMELINE too */
int lsm_load_stacks(struct loader *L, bool timeline);
void lsm_free_stacks(struct ls_mstacks *s);

#endif
