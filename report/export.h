/* SPDX-License-Identifier: MIT */
/*
 * Exporters: a model loaded with LS_MODEL_STACKS written in formats that other profilers' tools
 * read (docs/exports.md): pprof (export_pprof.c), folded stacks (export_collapsed.c),
 * speedscope (export_speedscope.c) and Chrome's Trace Event JSON (export_chrome.c). Each writes
 * the whole document to out and returns 0, -ENOMEM or -EIO, logging nothing: ls_render__file()
 * names the file. The helpers below are what they share, so that a stack reads the same in every
 * format.
 */
#ifndef LS_EXPORT_H
#define LS_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "model.h"

enum ls_export_weight {
	LS_EXPORT_SAMPLES, /* on-CPU samples */
	LS_EXPORT_TIME,	   /* time in microseconds: on-CPU, and off-CPU in wall mode */
};

int ls_export__pprof(FILE *out, const struct ls_model *m);
int ls_export__collapsed(FILE *out, const struct ls_model *m, enum ls_export_weight weight);
int ls_export__speedscope(FILE *out, const struct ls_model *m);
/* Trace Event JSON; needs LS_MODEL_TIMELINE too (export_chrome.c) */
int ls_export__chrome(FILE *out, const struct ls_model *m);

/* One (thread, stack) of the model's samples, with its kinds side by side. */
struct ls_export_row {
	int thread, stack; /* indices into m->stacks->threads and ->stacks */
	int64_t count;	   /* on-CPU samples */
	int64_t ns[4];	   /* time by enum ls_sample_class: on-CPU, wait, GIL wait, CPU wait */
};

/*
 * Reads the row that starts at sample *i and moves *i past it; false after the last one. Rows
 * come by thread (all of one thread together) in the model's order.
 */
bool ls_export__next(const struct ls_mstacks *s, size_t *i, struct ls_export_row *row);

/* All the time of a row: on-CPU, and off-CPU in wall mode. */
int64_t ls_export__row_ns(const struct ls_export_row *row);

/*
 * The frame that stands for samples of process proc without a Python frame (the stack the
 * recorder stores for native code, or before the interpreter is known): "[native] COMM (pid N)",
 * COMM escaped as ls_escape__name() does with control characters. Truncated to len.
 */
void ls_export__native_name(const struct ls_model *m, int proc, char *buf, size_t len);

/* ls_escape__name() into a new string (NULL on -ENOMEM); the caller frees it. */
char *ls_export__name(const char *name, bool controls);

#endif
