/* SPDX-License-Identifier: MIT */
/*
 * Command line: `linescope-bpf [OPTIONS] [-- COMMAND ARGS...]` records; `linescope-bpf report
 * PROFILE [-o FILE] [--format FORMAT] [--weight samples|time]` re-renders (or exports: pprof,
 * collapsed, speedscope); `linescope-bpf merge PROFILE... -o OUT` merges. Usage errors exit
 * with status 64.
 */
#ifndef LS_CLI_H
#define LS_CLI_H

#include <stdbool.h>
#include <sys/types.h>
#include "render.h" /* enum ls_format */

#define LS_EXIT_USAGE  64
#define LS_EXIT_REPORT 74 /* EX_IOERR: the report of a recording could not be written */
#define LS_EXIT_PUSH   75 /* EX_TEMPFAIL: --push could not deliver the profile */

enum ls_weight { LS_WEIGHT_DEFAULT, LS_WEIGHT_SAMPLES, LS_WEIGHT_TIME };
enum ls_time_mode { LS_TIME_WALL, LS_TIME_CPU };

struct ls_opts {
	bool report;	     /* the `report` subcommand */
	bool merge;	     /* the `merge` subcommand */
	bool push_only;	     /* the `push` subcommand: profile to push */
	const char **inputs; /* merge's profiles */
	int ninputs;
	const char *profile;   /* --profile FILE.lsprof, or report's PROFILE */
	const char *output;    /* -o FILE; NULL: default (record) or stdout (report) */
	const char *diff_base; /* report --diff BASE */
	enum ls_format format;
	/* --weight as given: time makes format LS_FMT_COLLAPSED_TIME */
	enum ls_weight weight;
	pid_t *pids; /* -p */
	int npids;
	const char *cgroup; /* -c */
	char **command;	    /* after --, NULL-terminated */
	double duration;    /* -d, seconds; 0 = until the targets are gone */
	unsigned frequency; /* -F */
	enum ls_time_mode mode;
	bool memory, trace, sample, gpu;
	bool timeline;		   /* --timeline: when each sample happened, too */
	bool remote_sampler;	   /* --sampler remote (loader_remote.c) */
	bool unload;		   /* --unload: nothing kept in bpffs for the next run */
	const char **spark_events; /* --spark-events PATH (repeatable), record and report */
	int nspark_events;
	const char *push;   /* --push URL: a Pyroscope-compatible server */
	const char *name;   /* --name APP, for --push */
	const char *tenant; /* --tenant ID, for --push: X-Scope-OrgID */
	unsigned rotate;    /* --rotate SECONDS: a profile per interval (0: one profile) */
	unsigned keep;	    /* --keep N interval profiles (0: all) */
	bool quiet;
	int verbose;
	int top; /* text report: lines shown */
};

/* Parses argv into opts; exits with a one-line message on a usage error. */
void ls_cli__parse(int argc, char **argv, struct ls_opts *opts);
void ls_cli__release(struct ls_opts *opts);

#endif
