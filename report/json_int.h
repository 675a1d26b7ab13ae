/* SPDX-License-Identifier: MIT */
/*
 * The JSON views' insides, shared by json.c (the report-data document), json_lines.c
 * (`--format json`), json_values.c (values), json_run.c (the run object), json_procs.c
 * (processes and children), json_sources.c (sources and symbols), json_tables.c (the column
 * tables), json_memory.c, json_gpu.c and json_gpu_timeline.c (their sections). Not an API. Every json_t * returned
 * is a new reference owned by the caller.
 */
#ifndef LS_JSON_INT_H
#define LS_JSON_INT_H

#include <stdbool.h>
#include "jbuf.h"
#include "json.h"
#include "model.h"

#define NS_PER_S 1e9 /* the model counts ns; JSON shows seconds */

/* json_run.c */
json_t *lsj_run_object(const struct ls_model *m);
bool lsj_gpu_loaded(const struct ls_model *m); /* some process loaded liblinescope_cupti.so */

/* json_procs.c */
json_t *lsj_process_object(const struct ls_model *m, const struct ls_mproc *p);
json_t *lsj_children_array(const struct ls_model *m);

/* json_sources.c */
json_t *lsj_source_object(const struct ls_mfile *f);
json_t *lsj_symbols_object(const struct ls_model *m, int src);

/* json_tables.c: each writes one table object into b */
void lsj_lines_table(struct ls_jbuf *b, const struct ls_model *m);
void lsj_functions_table(struct ls_jbuf *b, const struct ls_model *m);
void lsj_edges_table(struct ls_jbuf *b, const struct ls_model *m);

/* json_memory.c, json_gpu.c */
json_t *lsj_memory_object(const struct ls_model *m);
json_t *lsj_gpu_object(const struct ls_model *m);
/* json_gpu_timeline.c: per device (--timeline --gpu), else null; data: model indices for the
 * report's data, else pids and paths */
json_t *lsj_gpu_timeline(const struct ls_model *m, bool data);

#endif
