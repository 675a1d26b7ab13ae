/* SPDX-License-Identifier: MIT */
/*
 * Spark applications read from their event logs (docs/spark.md): jobs, stages, tasks and SQL
 * executions, folded into the actions the driver triggered, each with its plan steps and
 * executor cost. spark.c parses the events, spark_plan.c turns a plan into steps,
 * spark_match.c anchors each action to a driver line of the profile, spark_json.c writes them.
 * Every value from a log is untrusted: numbers are range-checked, strings capped.
 */
#ifndef LS_SPARK_H
#define LS_SPARK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <jansson.h>
#include "hashmap.h"

struct ls_model;

enum ls_spark_status {
	LS_SPARK_RUNNING, /* no end event (yet) */
	LS_SPARK_SUCCEEDED,
	LS_SPARK_FAILED,
	LS_SPARK_SKIPPED, /* a stage its job listed but never ran (its output was reused) */
};

const char *ls_spark_status__name(int status);

/* Task metrics summed over the tasks of a stage attempt (or of an action's stages). */
struct ls_spark_cost {
	int64_t tasks, failed_tasks;
	int64_t run_ms, cpu_ns, gc_ms;
	int64_t input_bytes, output_bytes, shuffle_read_bytes, shuffle_write_bytes;
	int64_t disk_spill, mem_spill;
	int64_t peak_mem; /* the largest task's peak execution memory */
};

struct ls_spark_stage {
	int64_t id, attempt;
	char *name;
	int64_t submit_ms, done_ms; /* epoch ms; -1 unknown */
	int status;
	char *failure;
	struct ls_spark_cost cost;
	int64_t *dur_ms; /* task durations (finish - launch) */
	size_t ndur, capdur;
};

struct ls_spark_job {
	int64_t id, submit_ms, done_ms;
	int status;
	char *error;
	char *call_site;   /* Properties callSite.short, or NULL */
	char *description; /* spark.job.description, or NULL */
	int64_t exec_id;   /* spark.sql.execution.id, -1: none */
	int64_t *stage_ids;
	size_t nstage_ids;
};

struct ls_spark_exec {
	int64_t id, root_id;
	int64_t start_ms, end_ms;
	char *description, *plan_text, *final_text;
	json_t *plan, *final_plan; /* sparkPlanInfo trees: as started; the last AQE update */
	char *error;		   /* errorMessage, when not empty */
	bool ended;
};

struct ls_spark_accum {
	int64_t sum, max; /* over task updates and driver updates */
};

struct ls_spark_app {
	char *name, *id, *version;
	char *log;		  /* where it was read */
	const char *codec;	  /* static */
	int64_t start_ms, end_ms; /* -1 unknown */
	int64_t last_ms;	  /* the latest time any event gave */
	int status;
	struct ls_spark_job *jobs;
	size_t njobs, capjobs;
	struct ls_spark_stage *stages;
	size_t nstages, capstages;
	struct ls_spark_exec *execs;
	size_t nexecs, capexecs;
	struct ls_hashmap job_ix, stage_ix, exec_ix, accum_ix; /* id -> index */
	struct ls_spark_accum *accums;
	size_t naccums, capaccums;
	int64_t events, bad_events; /* lines read; lines that were not an event we could read */
	int64_t dropped;	    /* events over the caps (counted, not kept) */
};

struct ls_spark_step {
	char *label, *detail;
	int *from; /* 1-based numbers of the steps feeding it */
	size_t nfrom;
	int64_t rows;	      /* -1: not measured */
	bool rows_from_input; /* not measured: carried from its only input */
	int64_t time_ns;      /* its largest timing metric; -1 none */
	int64_t peak_mem;     /* -1 none */
	int64_t pipeline;     /* WholeStageCodegen id, -1 none */
	int64_t pipeline_ns;  /* that pipeline's duration; -1 unknown */
};

struct ls_spark_action {
	int app;
	char *name, *call_site, *description, *error;
	int64_t exec_id; /* -1: a job outside SQL */
	int64_t start_ms, end_ms;
	int status;
	size_t *jobs; /* indices into the app's jobs */
	size_t njobs;
	size_t *stages; /* indices into the app's stages (attempts that ran) */
	size_t nstages;
	int64_t *skipped; /* ids of stages listed but never run */
	size_t nskipped;
	struct ls_spark_cost cost;
	bool has_cost; /* some stage attempt of it completed */
	struct ls_spark_step *steps;
	size_t nsteps;
	/* spark_match.c: the driver line */
	int proc, file, line;		   /* -1 unknown */
	const char *match;		   /* "call site" | "time" | NULL */
	int64_t driver_ns, driver_wait_ns; /* its sampled time inside the window; -1 unknown */
};

struct ls_spark {
	struct ls_spark_app *apps;
	size_t napps;
	struct ls_spark_action *actions;
	size_t nactions;
	char **notes;
	size_t nnotes;
};

struct ls_spark *ls_spark__new(void);
void ls_spark__free(struct ls_spark *s);
void ls_spark__free_app(struct ls_spark_app *a);
/* A note shown under the actions (printf format). */
void ls_spark__note(struct ls_spark *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A new application read from log (its path) with codec; its index, or -ENOMEM. */
int ls_spark__begin_app(struct ls_spark *s, const char *log, const char *codec);
/* One line of its log (one event). A line we cannot read is counted, not fatal: 0 or -ENOMEM. */
int ls_spark__event(struct ls_spark *s, int app, const char *line, size_t len);
/* Folds what was read into actions with their steps and cost. 0 or -ENOMEM. */
int ls_spark__finish(struct ls_spark *s);

/* The events of the logs at paths (files or directories), read now: 0 or a negative errno. */
int ls_spark__read_paths(struct ls_spark *s, const char *const *paths, size_t n);

/* spark_plan.c: the steps of a plan tree, in data-flow order. 0 or -ENOMEM. */
int ls_spark__plan_steps(const struct ls_spark_app *app, json_t *plan, struct ls_spark_step **out,
			 size_t *n);
void ls_spark__free_steps(struct ls_spark_step *steps, size_t n);

/* spark_match.c: anchors each action to a driver line of m (the profile the logs go with). */
void ls_spark__match(struct ls_spark *s, const struct ls_model *m);

/* spark_json.c: the `spark` object; data: the HTML's report data (src indices), else the JSON
 * report (paths). */
json_t *ls_spark__json(const struct ls_spark *s, const struct ls_model *m, bool data);

/* A number from an event: an integer, or a string of one (SQL metrics); dflt otherwise. */
int64_t ls_spark__num(json_t *v, int64_t dflt);

#endif
