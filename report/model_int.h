/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by report/model.c (profile loading, sample attribution) and
 * report/model_aux.c (memory, GPU and tracing data). Not part of the model's API.
 */
#ifndef LS_MODEL_INT_H
#define LS_MODEL_INT_H

#include <stdint.h>
#include "array.h"
#include "hashmap.h"
#include "model.h"
#include "profile.h"

struct stack {
	uint32_t *frames; /* function id, line; innermost first */
	int depth;
};

struct loader {
	struct ls_model *m;
	struct ls_profile *prof;
	size_t cap; /* of the table being loaded */
	struct ls_hashmap file_idx, func_idx, proc_idx, line_idx, fstat_idx, edge_idx;
	struct stack *stacks;
	size_t nstacks;
	size_t lcap, fcap, ecap;
	int *func_shift; /* per model function: lines added to move a cell's into its notebook */
	/* scratch for one stack */
	int *own_line;
	size_t scratch;
};

/* strdup() of a column that may be NULL */
char *lsm_dup(const char *t);
/* The model line (proc, file, line), created on first use; NULL on -ENOMEM. */
struct ls_mline *lsm_line_slot(struct loader *L, int proc, int file, int line);
struct ls_mfstat *lsm_fstat_slot(struct loader *L, int proc, int func);
/*
 * Adds a row of summed samples of one stored stack (kind: enum ls_sample_class) to the lines,
 * functions and edges of process proc (model_attr.c); a stack without a Python frame stays on
 * the process. -ENOMEM.
 */
int lsm_add_row(struct loader *L, int proc, int64_t stack_id, int kind, int mode, int64_t count,
		int64_t weight);
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
/* stored: ls_profile__has_spark(), asked once by the loader */
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
