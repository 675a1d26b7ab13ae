// SPDX-License-Identifier: MIT
/* Builds the report data and the JSON output from the model. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include "diff_flame.h"
#include "escape.h"
#include "flame.h"
#include "jbuf.h"
#include "json.h"
#include "spark.h"
#include "json_diff.h"
#include "pyindex.h"

json_t *ls_json__strn(const char *text, size_t len)
{
	json_t *j;
	char *clean;

	if (!text)
		return json_null();
	j = json_stringn(text, len);
	if (j)
		return j;
	/* invalid UTF-8 (or NUL bytes): replace what is not text */
	if (ls_utf8_sanitize(text, len, &clean, &len) < 0)
		return json_string("");
	j = json_stringn(clean, len);
	free(clean);
	return j ? j : json_string("");
}

json_t *ls_json__str(const char *text)
{
	return text ? ls_json__strn(text, strlen(text)) : json_null();
}

json_t *ls_json__name(const char *name)
{
	char buf[4 * 4096 + 1];

	if (!name)
		return json_null();
	ls_escape__name(name, false, buf, sizeof(buf));
	return json_string(buf);
}

json_t *ls_json__secs(int64_t ns)
{
	return json_real(ns / 1e9);
}

static const char *meta_or(const struct ls_model *m, const char *key, const char *def)
{
	const char *v = ls_model__meta(m, key);

	return v ? v : def;
}

static json_t *exit_text(int status)
{
	char buf[64];

	if (status < 0)
		return json_null();
	if (WIFEXITED(status))
		snprintf(buf, sizeof(buf), "exit %d", WEXITSTATUS(status));
	else if (WIFSIGNALED(status))
		snprintf(buf, sizeof(buf), "signal %s", sigabbrev_np(WTERMSIG(status)) ?: "?");
	else
		snprintf(buf, sizeof(buf), "status %d", status);
	return json_string(buf);
}

/* Samples per second of the main process (the first one recorded). */
static json_t *main_rate(const struct ls_model *m)
{
	if (!m->nprocs || m->elapsed_s <= 0)
		return json_null();
	return json_real(m->procs[0].samples / m->elapsed_s);
}

static bool gpu_loaded(const struct ls_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].gpu_hello)
			return true;
	return false;
}

/* run.cost: our own BPF time per program and the collector's CPU; null when not recorded. */
static json_t *cost_json(const struct ls_model *m)
{
	json_t *progs = json_array();
	int64_t runs, ns = ls_model__bpf_ns(m, &runs);

	if (!m->ncost_progs) {
		json_decref(progs);
		return json_null();
	}
	for (size_t i = 0; i < m->ncost_progs; i++) {
		const struct ls_mcost_prog *c = &m->cost_progs[i];

		json_array_append_new(
			progs, json_pack("{s:s, s:I, s:f, s:o}", "name", c->name, "runs",
					 (json_int_t)c->runs, "time_s", c->ns / 1e9, "ns_per_run",
					 c->runs ? json_real((double)c->ns / c->runs) : json_null()));
	}
	return json_pack("{s:f, s:I, s:o, s:o, s:o, s:o, s:o}", "bpf_time_s", ns / 1e9, "bpf_runs",
			 (json_int_t)runs, "bpf_ns_per_run",
			 runs ? json_real((double)ns / runs) : json_null(), "programs", progs,
			 "collector_cpu_s",
			 m->collector_cpu_ns >= 0 ? json_real(m->collector_cpu_ns / 1e9) : json_null(),
			 "collector_share",
			 m->collector_cpu_ns >= 0 && m->elapsed_s > 0
				 ? json_real(m->collector_cpu_ns / 1e9 / m->elapsed_s)
				 : json_null(),
			 "collector_setup_cpu_s",
			 m->collector_setup_cpu_ns >= 0 ? json_real(m->collector_setup_cpu_ns / 1e9)
							: json_null());
}

static json_t *run_object(const struct ls_model *m)
{
	/* read errors and truncated stacks are kept samples with a partial stack: not lost */
	int64_t lost = ls_model__lost(m);
	const char *status = ls_model__status(m);
	json_t *run = json_object(), *notes = json_array(), *caps = json_object();
	char buf[256];

	json_object_set_new(run, "tool", json_string(meta_or(m, "tool", "linescope-bpf")));
	if (!status) {
		status = "Failed";
		json_array_append_new(notes, json_string("the recording was interrupted before it "
							 "finished; measurements up to the last "
							 "flush are shown"));
	} else if (!strcmp(status, "Running")) {
		json_array_append_new(notes,
				      json_string("the recording is still running; "
						  "measurements up to its last flush (once a "
						  "second) are shown"));
	}
	json_object_set_new(run, "status", json_string(status));
	json_object_set_new(run, "status_detail", ls_json__str(ls_model__meta(m, "status_detail")));
	json_object_set_new(run, "method", json_string(meta_or(m, "method", "Sampling")));
	json_object_set_new(run, "collector", json_string(meta_or(m, "collector", "bpf-sampling")));
	json_object_set_new(run, "mode", json_string(meta_or(m, "mode", "cpu")));
	json_object_set_new(run, "scope",
			    json_pack("{s:s, s:o}", "kind", meta_or(m, "scope_kind", "pid"), "text",
				      ls_json__str(meta_or(m, "scope", ""))));
	json_object_set_new(run, "started_at", ls_json__str(ls_model__meta(m, "started_at")));
	json_object_set_new(run, "elapsed_s", json_real(m->elapsed_s));
	json_object_set_new(run, "frequency_hz",
			    json_integer(strtol(meta_or(m, "frequency_hz", "0"), NULL, 10)));
	json_object_set_new(run, "samples", json_integer(ls_model__kept(m)));
	json_object_set_new(run, "taken", m->taken >= 0 ? json_integer(m->taken) : json_null());
	json_object_set_new(run, "samples_per_s", main_rate(m));
	json_object_set_new(run, "lost",
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "total", (json_int_t)lost,
				      "ringbuf", (json_int_t)m->lost_ringbuf, "unresolved",
				      (json_int_t)m->lost_unresolved, "read_errors",
				      (json_int_t)m->lost_read, "truncated_stacks",
				      (json_int_t)m->lost_truncated, "unresolved_frames",
				      (json_int_t)m->unresolved_frames, "other_records",
				      (json_int_t)m->lost_records, "trace_batches",
				      (json_int_t)m->lost_trace_batches));
	json_object_set_new(run, "damaged_rows", json_integer(m->damaged_rows));
	json_object_set_new(run, "cost", cost_json(m));
	json_object_set_new(run, "processes", json_integer(m->nprocs));
	json_object_set_new(run, "threads", json_integer(m->threads));
	json_object_set_new(caps, "samples", json_boolean(m->sampled));
	json_object_set_new(caps, "hits", json_boolean(m->traced));
	json_object_set_new(caps, "calls", json_boolean(m->traced));
	json_object_set_new(caps, "cpu_split", json_true());
	json_object_set_new(caps, "wait", json_boolean(m->wall));
	json_object_set_new(caps, "memory", json_boolean(m->memory));
	json_object_set_new(caps, "gpu", json_boolean(m->gpu || m->gpu_requested));
	json_object_set_new(caps, "spark", json_boolean(m->spark && m->spark->napps));
	json_object_set_new(run, "capabilities", caps);
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].trace && strncmp(m->procs[i].trace, "on", 2) &&
		    strcmp(m->procs[i].trace, "off"))
			json_array_append_new(notes,
					      json_sprintf("pid %d: %s; its samples still count",
							   m->procs[i].pid, m->procs[i].trace));
	if (m->gpu_requested && !gpu_loaded(m))
		json_array_append_new(
			notes, json_string("GPU collection was requested but no process loaded "
					   "liblinescope_cupti.so: start the job with "
					   "CUDA_INJECTION64_PATH set (see docs/gpu.md)"));
	if (m->lost_truncated) {
		snprintf(buf, sizeof(buf),
			 "%lld samples had Python stacks deeper than %s frames; their outermost "
			 "frames are missing",
			 (long long)m->lost_truncated, meta_or(m, "max_frames", "the maximum"));
		json_array_append_new(notes, json_string(buf));
	}
	json_object_set_new(run, "notes", notes);
	return run;
}

static json_t *python_text(const char *python, const char *build)
{
	char buf[128];

	if (!python)
		return json_null();
	snprintf(buf, sizeof(buf), "%s (%s)", python, build ?: "");
	return json_string(buf);
}

/* A process's images in order: the one it was first seen with, then each exec. */
static json_t *execs_array(const struct ls_model *m, const struct ls_mproc *p)
{
	json_t *a = json_array();

	for (size_t k = 0; k < p->nexecs; k++) {
		const struct ls_mexec *x = &p->execs[k];
		json_t *o = json_object();

		json_object_set_new(o, "how", ls_json__str(x->how));
		json_object_set_new(o, "argv", ls_json__name(x->argv ? x->argv : x->comm));
		json_object_set_new(o, "exe", ls_json__name(x->exe));
		json_object_set_new(o, "comm", ls_json__str(x->comm));
		json_object_set_new(o, "start_s", ls_json__secs(x->start_ns));
		json_object_set_new(o, "end_s",
				    x->end_ns >= 0 ? ls_json__secs(x->end_ns) : json_null());
		json_object_set_new(o, "python", python_text(x->python, x->python_build));
		json_object_set_new(o, "note", ls_json__str(x->note));
		json_object_set_new(o, "samples", json_integer(x->samples));
		json_object_set_new(o, "cpu_s", ls_json__secs(x->cpu_ns));
		json_object_set_new(o, "wait_s", m->wall ? ls_json__secs(x->wait_ns) : json_null());
		json_object_set_new(o, "unresolved", json_integer(x->unresolved));
		json_object_set_new(o, "first_line_s",
				    x->first_line_ns >= 0 ? ls_json__secs(x->first_line_ns)
							  : json_null());
		json_array_append_new(a, o);
	}
	return a;
}

static json_t *process_object(const struct ls_model *m, const struct ls_mproc *p)
{
	json_t *o = json_object();

	json_object_set_new(o, "pid", json_integer(p->pid));
	json_object_set_new(o, "ppid", json_integer(p->ppid));
	json_object_set_new(o, "nspid",
			    p->nspid && p->nspid != p->pid ? json_integer(p->nspid) : json_null());
	json_object_set_new(o, "comm", ls_json__str(p->comm));
	json_object_set_new(o, "argv", ls_json__name(p->argv ? p->argv : p->comm));
	json_object_set_new(o, "start_s", ls_json__secs(p->start_ns));
	json_object_set_new(o, "end_s", p->end_ns >= 0 ? ls_json__secs(p->end_ns) : json_null());
	json_object_set_new(o, "exit", exit_text(p->exit_code));
	json_object_set_new(o, "python", python_text(p->python, p->python_build));
	json_object_set_new(o, "note", ls_json__str(p->note));
	json_object_set_new(o, "execs", execs_array(m, p));
	json_object_set_new(o, "cgroup", ls_json__str(p->cgroup));
	json_object_set_new(o, "cgroup_id",
			    p->cgroup_id >= 0 ? json_integer(p->cgroup_id) : json_null());
	json_object_set_new(o, "host", ls_json__name(ls_model__host(m, (int)(p - m->procs))));
	json_object_set_new(o, "rank", p->rank >= 0 ? json_integer(p->rank) : json_null());
	json_object_set_new(o, "local_rank",
			    p->local_rank >= 0 ? json_integer(p->local_rank) : json_null());
	json_object_set_new(o, "world_size",
			    p->world_size >= 0 ? json_integer(p->world_size) : json_null());
	json_object_set_new(o, "master_addr", ls_json__name(p->master_addr));
	json_object_set_new(o, "trace", ls_json__str(p->trace));
	json_object_set_new(o, "threads", json_integer(p->threads));
	json_object_set_new(o, "samples", json_integer(p->samples));
	json_object_set_new(o, "native_samples", json_integer(p->native_samples));
	json_object_set_new(o, "wait_s", m->wall ? ls_json__secs(p->wait_ns) : json_null());
	json_object_set_new(o, "runq_s", m->wall ? ls_json__secs(p->runq_ns) : json_null());
	json_object_set_new(o, "gil_wait_s", m->wall ? ls_json__secs(p->gil_ns) : json_null());
	json_object_set_new(o, "idle_wait_s",
			    m->wall ? ls_json__secs(p->idle_wait_ns) : json_null());
	if (p->parent >= 0 && p->spawn_file >= 0)
		json_object_set_new(
			o, "parent",
			json_pack("{s:i, s:i, s:i, s:o}", "proc", p->parent, "src", p->spawn_file,
				  "line", p->spawn_line, "wait_s",
				  m->wall ? ls_json__secs(p->parent_wait_ns) : json_null()));
	else
		json_object_set_new(o, "parent", json_null());
	return o;
}

/* A notebook's cells (docs/report-data.md, "Notebook cells") */
static json_t *cells_array(const struct ls_mfile *f)
{
	json_t *a = json_array();

	for (size_t i = 0; i < f->ncells; i++) {
		const struct ls_mcell *c = &f->cells[i];

		json_array_append_new(
			a,
			json_pack("{s:s, s:i, s:i, s:o, s:o, s:o, s:o}", "label", c->label, "first",
				  c->first, "nlines", c->nlines, "revision",
				  c->revision[0] ? json_string(c->revision) : json_null(), "number",
				  c->number > 0 ? json_integer(c->number) : json_null(), "found",
				  c->how ? json_string(c->how) : json_null(), "unavailable",
				  ls_json__str(c->unavailable)));
	}
	return a;
}

static json_t *source_object(const struct ls_mfile *f)
{
	/* a cell folded into its notebook: its text is there, and only once in the page */
	bool folded = !strcmp(f->kind, "cell");
	json_t *o = json_object();

	json_object_set_new(o, "path", ls_json__name(f->path));
	json_object_set_new(o, "name", ls_json__name(f->name));
	json_object_set_new(o, "kind", json_string(f->kind));
	json_object_set_new(o, "text",
			    f->text && !folded ? ls_json__strn(f->text, f->len) : json_null());
	json_object_set_new(
		o, "unavailable",
		folded	  ? json_string("folded into its notebook")
		: f->text ? json_null()
			  : ls_json__str(f->unavailable ? f->unavailable : "source not captured"));
	json_object_set_new(o, "stale", ls_json__str(f->stale));
	json_object_set_new(o, "nlines", json_integer(f->nlines));
	json_object_set_new(o, "cells", f->ncells ? cells_array(f) : json_null());
	return o;
}

static void lines_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_mline *L = m->lines;
	size_t n = m->nlines;
	bool gpu = m->gpu || m->gpu_requested;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, L[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, L[i].file));
	COL(b, "line", n, i, ls_jbuf__int(b, L[i].line));
	COL(b, "time_s", n, i, ls_jbuf__secs(b, L[i].own_ns));
	COL(b, "total_s", n, i, ls_jbuf__secs(b, L[i].total_ns));
	if (m->sampled) {
		COL(b, "samples", n, i, ls_jbuf__int(b, L[i].own_count));
		COL(b, "samples_total", n, i, ls_jbuf__int(b, L[i].total_count));
	} else {
		ls_jbuf__null_col(b, "samples"); /* tracing omits the sample column */
		ls_jbuf__null_col(b, "samples_total");
	}
	COL(b, "python_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[0]));
	COL(b, "native_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[1]));
	COL(b, "kernel_s", n, i, ls_jbuf__secs(b, L[i].mode_ns[2]));
	if (m->wall) {
		COL(b, "cpu_s", n, i, ls_jbuf__secs(b, LS_LINE_CPU_NS(&L[i])));
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, L[i].wait_ns));
		COL(b, "gil_wait_s", n, i, ls_jbuf__secs(b, L[i].gil_ns));
		COL(b, "runq_s", n, i, ls_jbuf__secs(b, L[i].runq_ns));
	} else {
		ls_jbuf__null_col(b, "cpu_s");
		ls_jbuf__null_col(b, "wait_s");
		ls_jbuf__null_col(b, "gil_wait_s");
		ls_jbuf__null_col(b, "runq_s");
	}
	if (gpu) {
		/* GPU time is device time: never added to Time */
		COL(b, "gpu_s", n, i, ls_jbuf__secs(b, L[i].gpu_ns));
		COL(b, "gpu_peak_mem", n, i,
		    L[i].gpu_peak >= 0 ? ls_jbuf__int(b, L[i].gpu_peak) : ls_jbuf__str(b, "null"));
		COL(b, "driver_s", n, i, ls_jbuf__secs(b, L[i].driver_ns));
	} else {
		ls_jbuf__null_col(b, "gpu_s");
		ls_jbuf__null_col(b, "gpu_peak_mem");
		ls_jbuf__null_col(b, "driver_s");
	}
	if (m->memory) {
		COL(b, "mem_change", n, i,
		    L[i].peak_mem >= 0 ? ls_jbuf__int(b, L[i].mem_change)
				       : ls_jbuf__str(b, "null"));
		COL(b, "peak_mem", n, i,
		    L[i].peak_mem >= 0 ? ls_jbuf__int(b, L[i].peak_mem) : ls_jbuf__str(b, "null"));
	} else {
		ls_jbuf__null_col(b, "mem_change");
		ls_jbuf__null_col(b, "peak_mem");
	}
	if (m->traced) {
		COL(b, "hits", n, i,
		    L[i].hits >= 0 ? ls_jbuf__int(b, L[i].hits) : ls_jbuf__str(b, "null"));
		/* Avg / hit: Time divided by hits, when both exist */
		COL(b, "avg_hit_s", n, i,
		    L[i].hits > 0 ? ls_jbuf__secs(b, L[i].own_ns / L[i].hits)
				  : ls_jbuf__str(b, "null"));
	} else {
		ls_jbuf__null_col(b, "hits");
		ls_jbuf__null_col(b, "avg_hit_s");
	}
	ls_jbuf__raw(b, "}", 1);
}

static void functions_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_mfstat *F = m->fstats;
	const struct ls_mfunc *fn = m->funcs;
	size_t n = m->nfstats;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, F[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, fn[F[i].func].file));
	COL(b, "name", n, i, ls_jbuf__json(b, ls_json__str(fn[F[i].func].qualname)));
	COL(b, "def_line", n, i, ls_jbuf__int(b, fn[F[i].func].def_line));
	COL(b, "end_line", n, i,
	    fn[F[i].func].end_line ? ls_jbuf__int(b, fn[F[i].func].end_line)
				   : ls_jbuf__str(b, "null"));
	COL(b, "lines", n, i,
	    fn[F[i].func].end_line
		    ? ls_jbuf__int(b, fn[F[i].func].end_line - fn[F[i].func].def_line + 1)
		    : ls_jbuf__str(b, "null"));
	COL(b, "time_s", n, i, ls_jbuf__secs(b, F[i].own_ns));
	COL(b, "total_s", n, i, ls_jbuf__secs(b, F[i].total_ns));
	if (m->sampled)
		COL(b, "samples", n, i, ls_jbuf__int(b, F[i].own_count));
	else
		ls_jbuf__null_col(b, "samples");
	if (m->wall) {
		COL(b, "cpu_s", n, i, ls_jbuf__secs(b, F[i].cpu_ns));
		COL(b, "wait_s", n, i, ls_jbuf__secs(b, F[i].wait_ns + F[i].gil_ns + F[i].runq_ns));
	} else {
		ls_jbuf__null_col(b, "cpu_s");
		ls_jbuf__null_col(b, "wait_s");
	}
	if (m->traced)
		COL(b, "calls", n, i,
		    F[i].calls >= 0 ? ls_jbuf__int(b, F[i].calls) : ls_jbuf__str(b, "null"));
	else
		ls_jbuf__null_col(b, "calls");
	ls_jbuf__raw(b, "}", 1);
}

static void edges_table(struct ls_jbuf *b, const struct ls_model *m)
{
	const struct ls_medge *E = m->edges;
	size_t n = m->nedges;

	FIRST_COL(b, "proc", n, i, ls_jbuf__int(b, E[i].proc));
	COL(b, "src", n, i, ls_jbuf__int(b, E[i].file));
	COL(b, "line", n, i, ls_jbuf__int(b, E[i].line));
	COL(b, "callee_src", n, i, ls_jbuf__int(b, m->funcs[E[i].callee].file));
	COL(b, "callee_line", n, i, ls_jbuf__int(b, m->funcs[E[i].callee].def_line));
	COL(b, "samples", n, i, ls_jbuf__int(b, E[i].count));
	ls_jbuf__raw(b, "}", 1);
}

static json_t *children_array(const struct ls_model *m)
{
	json_t *a = json_array();

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];
		json_t *o;

		if (p->parent < 0 || p->spawn_file < 0)
			continue;
		o = json_object();
		json_object_set_new(o, "proc", json_integer(i));
		json_object_set_new(o, "parent_proc", json_integer(p->parent));
		json_object_set_new(o, "src", json_integer(p->spawn_file));
		json_object_set_new(o, "line", json_integer(p->spawn_line));
		json_object_set_new(o, "pid", json_integer(p->pid));
		json_object_set_new(o, "kind", json_string("process"));
		json_object_set_new(o, "status",
				    json_string(p->exit_code > 0 || (p->exit_code >= 0 &&
								     WIFSIGNALED(p->exit_code))
							? "Failed"
							: "Success"));
		json_object_set_new(o, "source", json_null());
		json_object_set_new(o, "cmd", ls_json__name(p->argv ? p->argv : p->comm));
		json_object_set_new(o, "wait_s",
				    m->wall ? ls_json__secs(p->parent_wait_ns) : json_null());
		json_object_set_new(o, "duration_s",
				    p->end_ns >= 0 ? ls_json__secs(p->end_ns - p->start_ns)
						   : json_null());
		json_object_set_new(o, "exit", exit_text(p->exit_code));
		json_array_append_new(a, o);
	}
	for (size_t i = 0; i < m->nnbruns; i++) {
		const struct ls_mnbrun *r = &m->nbruns[i];
		int64_t total = 0;
		json_t *o;

		/* the %run line waited for the child notebook: its time on the stack is the child's
		 */
		for (size_t k = 0; k < m->nlines; k++)
			if (m->lines[k].proc == r->proc && m->lines[k].file == r->src &&
			    m->lines[k].line == r->line)
				total += m->lines[k].total_ns;
		o = json_pack("{s:i, s:i, s:i, s:i, s:n, s:s, s:s, s:o, s:o, s:o, s:n, s:i}",
			      "proc", r->proc, "parent_proc", r->proc, "src", r->src, "line",
			      r->line, "pid", "kind", "notebook", "status", "Reference", "cmd",
			      ls_json__line_text(&m->files[r->src], r->line), "wait_s",
			      ls_json__secs(total), "duration_s", ls_json__secs(total), "exit",
			      "source", r->child);
		json_array_append_new(a, o);
	}
	return a;
}

#define LS_MAX_READINGS 4096

/*
 * Readings kept for a timeline of at most LS_MAX_READINGS points: all of them when they fit,
 * else the first and last and, per time bucket, its lowest and highest reading in time order,
 * so that every peak and trough survives.
 */
static size_t pick_readings(const struct ls_mrss *r, size_t *keep)
{
	size_t n = 0, buckets = (LS_MAX_READINGS - 2) / 2;

	if (r->n <= LS_MAX_READINGS) {
		for (size_t i = 0; i < r->n; i++)
			keep[n++] = i;
		return n;
	}
	keep[n++] = 0;
	for (size_t b = 0; b < buckets; b++) {
		size_t lo = 1 + b * (r->n - 2) / buckets, hi = 1 + (b + 1) * (r->n - 2) / buckets;
		size_t mn = lo, mx = lo;

		for (size_t i = lo; i < hi; i++) {
			if (r->rss[i] < r->rss[mn])
				mn = i;
			if (r->rss[i] > r->rss[mx])
				mx = i;
		}
		if (lo >= hi)
			continue;
		keep[n++] = mn < mx ? mn : mx;
		if (mn != mx)
			keep[n++] = mn < mx ? mx : mn;
	}
	keep[n++] = r->n - 1;
	return n;
}

static json_t *memory_object(const struct ls_model *m)
{
	json_t *o = json_object(), *procs = json_array(), *largest = json_null();
	const struct ls_mline *best = NULL;
	size_t *keep;

	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];

		if (l->peak_mem >= 0 && l->mem_change > 0 &&
		    (!best || l->mem_change > best->mem_change))
			best = l;
	}
	if (best)
		largest = json_pack("{s:i, s:i, s:i, s:I}", "proc", best->proc, "src", best->file,
				    "line", best->line, "bytes", (json_int_t)best->mem_change);
	keep = malloc(LS_MAX_READINGS * sizeof(*keep));
	for (size_t k = 0; keep && k < m->nrss; k++) {
		const struct ls_mrss *r = &m->rss[k];
		json_t *p = json_object(), *t = json_array(), *rss = json_array(),
		       *src = json_array(), *line = json_array();
		size_t n = pick_readings(r, keep);

		for (size_t j = 0; j < n; j++) {
			size_t i = keep[j];

			json_array_append_new(t, ls_json__secs(r->t_ns[i]));
			json_array_append_new(rss, json_integer(r->rss[i]));
			json_array_append_new(src, r->file[i] >= 0 ? json_integer(r->file[i])
								   : json_null());
			json_array_append_new(line, r->file[i] >= 0 ? json_integer(r->line[i])
								    : json_null());
		}
		json_object_set_new(p, "proc", json_integer(r->proc));
		json_object_set_new(p, "peak", json_integer(r->peak));
		json_object_set_new(p, "readings", json_integer(r->n));
		json_object_set_new(p, "merged", json_boolean(n < r->n));
		json_object_set_new(p, "t", t);
		json_object_set_new(p, "rss", rss);
		json_object_set_new(p, "src", src);
		json_object_set_new(p, "line", line);
		json_array_append_new(procs, p);
	}
	free(keep);
	json_object_set_new(o, "interval_s", json_real(0.01));
	json_object_set_new(o, "procs", procs);
	json_object_set_new(o, "largest", largest);
	return o;
}

/* Links [line, col16, end_col16, target src, target line] and definitions [line, name]. */
static json_t *symbols_object(const struct ls_model *m, int src)
{
	const struct ls_pyindex_link *links;
	const struct ls_pyindex_def *defs;
	json_t *l = json_array(), *d = json_array();
	int n;

	n = m->index ? ls_pyindex__links(m->index, src, &links) : 0;
	for (int i = 0; i < n; i++)
		json_array_append_new(l, json_pack("[i, i, i, i, i]", links[i].line, links[i].col16,
						   links[i].end_col16, links[i].target_src,
						   links[i].target_line));
	n = m->index ? ls_pyindex__defs(m->index, src, &defs) : 0;
	for (int i = 0; i < n; i++)
		json_array_append_new(
			d, json_pack("[i, o]", defs[i].def_line, ls_json__str(defs[i].qualname)));
	return json_pack("{s:o, s:o}", "links", l, "defs", d);
}

static json_t *str_or_null(const char *s)
{
	return s && *s ? ls_json__str(s) : json_null();
}

/*
 * Device cards (one per device, over the processes that used it), per-process GPU totals, and
 * the reasons collection was partial.
 */
static json_t *gpu_object(const struct ls_model *m)
{
	json_t *o = json_object(), *devs = json_array(), *procs = json_array(),
	       *notes = json_array();
	int64_t peak = -1;
	const char *mem_note = NULL;

	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];

		if (!p->gpu_hello && !p->gpu_ns)
			continue;
		if (p->gpu_peak > peak)
			peak = p->gpu_peak;
		if (p->gpu_nvml_note && *p->gpu_nvml_note && !mem_note)
			mem_note = p->gpu_nvml_note;
		json_array_append_new(
			procs,
			json_pack("{s:i, s:b, s:i, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:I, "
				  "s:I, s:I}",
				  "proc", (int)i, "loaded", p->gpu_hello, "status", p->gpu_status,
				  "message", str_or_null(p->gpu_message), "nvml_note",
				  str_or_null(p->gpu_nvml_note), "gpu_s", ls_json__secs(p->gpu_ns),
				  "driver_s", ls_json__secs(p->driver_ns), "no_python_gpu_s",
				  ls_json__secs(p->gpu_nopy_ns), "unseen_gpu_s",
				  ls_json__secs(p->gpu_unseen_ns), "peak_mem",
				  p->gpu_peak > 0 ? json_integer(p->gpu_peak) : json_null(),
				  "launches", (json_int_t)p->gpu_launches, "dropped",
				  (json_int_t)p->gpu_dropped, "lost", (json_int_t)p->gpu_lost));
		if (p->gpu_message && *p->gpu_message)
			json_array_append_new(notes, ls_json__str(p->gpu_message));
		if (p->gpu_nopy_ns)
			json_array_append_new(
				notes, json_sprintf("pid %d: %.3f s of device time was launched by "
						    "threads with no Python frame",
						    p->pid, p->gpu_nopy_ns / 1e9));
		if (p->gpu_unseen_ns)
			json_array_append_new(
				notes,
				json_sprintf("pid %d: %.3f s of device time came from launches "
					     "made before profiling started",
					     p->pid, p->gpu_unseen_ns / 1e9));
	}
	for (size_t i = 0; i < m->ngpu_devs; i++) {
		const struct ls_mgpu_dev *d = &m->gpu_devs[i];
		bool seen = false;
		char cuda[48];

		/* a device used by several processes gets one card */
		for (size_t k = 0; k < i && !seen; k++)
			seen = m->gpu_devs[k].ordinal == d->ordinal &&
			       !strcmp(m->gpu_devs[k].uuid ?: "", d->uuid ?: "");
		if (seen)
			continue;
		snprintf(cuda, sizeof(cuda), "%lld.%lld", (long long)d->cuda_driver / 1000,
			 (long long)(d->cuda_driver % 1000) / 10);
		json_array_append_new(
			devs,
			json_pack("{s:I, s:o, s:o, s:o, s:o, s:o, s:o}", "index",
				  (json_int_t)d->ordinal, "name", str_or_null(d->name),
				  "memory_total",
				  d->mem_total ? json_integer(d->mem_total) : json_null(), "driver",
				  str_or_null(d->driver), "cuda",
				  d->cuda_driver ? json_string(cuda) : json_null(), "peak_mem",
				  peak > 0 ? json_integer(peak) : json_null(), "memory_note",
				  peak > 0 ? json_null() : str_or_null(mem_note)));
	}
	if (m->gpu_requested && !gpu_loaded(m))
		json_array_append_new(notes, json_string("GPU collection was requested but no "
							 "process loaded liblinescope_cupti.so"));
	json_object_set_new(o, "devices", devs);
	json_object_set_new(o, "procs", procs);
	json_object_set_new(o, "notes", notes);
	return o;
}

char *ls_json__report_text(const struct ls_model *m, size_t *len)
{
	return ls_json__report_text_diff(m, NULL, NULL, len);
}

char *ls_json__report_text_diff(const struct ls_model *m, const struct ls_diff *d,
				const char *base_path, size_t *len)
{
	json_t *procs = json_array(), *srcs = json_array(), *syms = json_array();
	struct ls_flame *f = NULL;
	struct ls_jbuf b;

	for (size_t i = 0; i < m->nprocs; i++)
		json_array_append_new(procs, process_object(m, &m->procs[i]));
	for (size_t i = 0; i < m->nfiles; i++) {
		json_array_append_new(srcs, source_object(&m->files[i]));
		json_array_append_new(syms, symbols_object(m, i));
	}
	ls_jbuf_init(&b);
	/* the call tree, when the model has its stacks (the HTML report loads them): also the new
	 * side of a diff's */
	if (m->stacks && m->sampled && ls_flame__new(m, LS_FLAME_MAX_NODES, &f))
		b.failed = true;
	ls_jbuf__str(&b, "{\"version\":1,\"run\":");
	ls_jbuf__json(&b, run_object(m));
	ls_jbuf__str(&b, ",\"processes\":");
	ls_jbuf__json(&b, procs);
	ls_jbuf__str(&b, ",\"sources\":");
	ls_jbuf__json(&b, srcs);
	ls_jbuf__str(&b, ",\"lines\":");
	lines_table(&b, m);
	ls_jbuf__str(&b, ",\"functions\":");
	functions_table(&b, m);
	ls_jbuf__str(&b, ",\"edges\":");
	edges_table(&b, m);
	ls_jbuf__str(&b, ",\"symbols\":");
	ls_jbuf__json(&b, syms);
	ls_jbuf__str(&b, ",\"children\":");
	ls_jbuf__json(&b, children_array(m));
	ls_jbuf__str(&b, ",\"memory\":");
	ls_jbuf__json(&b, m->memory ? memory_object(m) : NULL);
	ls_jbuf__str(&b, ",\"gpu\":");
	ls_jbuf__json(&b, m->gpu || m->gpu_requested ? gpu_object(m) : NULL);
	ls_jbuf__str(&b, ",\"diff\":");
	ls_jbuf__json(&b, d ? ls_json__diff_data(d, base_path) : NULL);
	ls_jbuf__str(&b, ",\"diff_flame\":");
	ls_diff_flame__json(&b, d, f);
	ls_jbuf__str(&b, ",\"flame\":");
	ls_flame__json(&b, m, f);
	ls_flame__free(f);
	ls_jbuf__str(&b, ",\"spark\":");
	ls_jbuf__json(&b, m->spark ? ls_spark__json(m->spark, m, true) : NULL);
	ls_jbuf__str(&b, "}");
	return ls_jbuf__detach(&b, len);
}

/* Source text of one line (1-based) of a file, or NULL. */
json_t *ls_json__line_text(const struct ls_mfile *f, int line)
{
	size_t len;
	const char *p = ls_mfile__line(f, line, &len);

	return p ? ls_json__strn(p, len) : json_null();
}

/* Per process and file: own time and samples of its lines (a file's share of Time). */
static json_t *files_array(const struct ls_model *m)
{
	json_t *a = json_array();
	int64_t *ns, *cnt;
	size_t n = m->nprocs * m->nfiles;

	ns = calloc(n ? n : 1, sizeof(*ns));
	cnt = calloc(n ? n : 1, sizeof(*cnt));
	if (!ns || !cnt) {
		free(ns);
		free(cnt);
		return a;
	}
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];
		size_t k = (size_t)l->proc * m->nfiles + l->file;

		ns[k] += l->own_ns;
		cnt[k] += l->own_count;
	}
	for (size_t p = 0; p < m->nprocs; p++) {
		for (size_t f = 0; f < m->nfiles; f++) {
			size_t k = p * m->nfiles + f;
			json_t *o;

			if (!cnt[k])
				continue;
			o = json_object();
			json_object_set_new(o, "pid", json_integer(m->procs[p].pid));
			json_object_set_new(o, "host", ls_json__name(ls_model__host(m, (int)p)));
			json_object_set_new(o, "path", ls_json__name(m->files[f].path));
			json_object_set_new(o, "kind", json_string(m->files[f].kind));
			json_object_set_new(o, "lines",
					    m->files[f].text ? json_integer(m->files[f].nlines)
							     : json_null());
			json_object_set_new(o, "samples", json_integer(cnt[k]));
			json_object_set_new(o, "time_s", ls_json__secs(ns[k]));
			json_object_set_new(o, "stale", ls_json__str(m->files[f].stale));
			json_object_set_new(
				o, "unavailable",
				m->files[f].text ? json_null()
						 : ls_json__str(m->files[f].unavailable
									? m->files[f].unavailable
									: "source not captured"));
			json_array_append_new(a, o);
		}
	}
	free(ns);
	free(cnt);
	return a;
}

json_t *ls_json__run(const struct ls_model *m)
{
	json_t *run = run_object(m);

	json_object_set_new(run, "schema", json_integer(1));
	json_object_del(run, "capabilities");
	return run;
}

json_t *ls_json__lines(const struct ls_model *m)
{
	json_t *o = json_object(), *lines = json_array(), *procs = json_array(),
	       *funcs = json_array();

	json_object_set_new(o, "run", ls_json__run(m));
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ls_mproc *p = &m->procs[i];
		json_t *po = process_object(m, p);

		json_object_del(po, "parent");
		json_object_set_new(po, "parent_pid",
				    p->parent >= 0 ? json_integer(m->procs[p->parent].pid)
						   : json_null());
		json_array_append_new(procs, po);
	}
	json_object_set_new(o, "processes", procs);
	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];
		const struct ls_mfile *f = &m->files[l->file];
		json_t *r = json_object();

		json_object_set_new(r, "pid", json_integer(m->procs[l->proc].pid));
		json_object_set_new(r, "host", ls_json__name(ls_model__host(m, l->proc)));
		json_object_set_new(r, "path", ls_json__name(f->path));
		json_object_set_new(r, "line", json_integer(l->line));
		if (f->ncells) {
			const struct ls_mcell *c = ls_mfile__cell_at(f, l->line);

			json_object_set_new(r, "cell",
					    c ? json_integer(c - f->cells + 1) : json_null());
			json_object_set_new(r, "cell_line",
					    c ? json_integer(l->line - c->first + 1) : json_null());
		}
		json_object_set_new(r, "function",
				    l->func >= 0 ? ls_json__str(m->funcs[l->func].qualname)
						 : json_null());
		json_object_set_new(r, "kind", json_string(f->kind));
		json_object_set_new(r, "samples",
				    m->sampled ? json_integer(l->self_count) : json_null());
		json_object_set_new(r, "self_time_s", ls_json__secs(l->self_ns));
		json_object_set_new(r, "total_time_s", ls_json__secs(l->total_ns));
		json_object_set_new(r, "time_s", ls_json__secs(l->own_ns));
		json_object_set_new(r, "own_samples", json_integer(l->own_count));
		json_object_set_new(r, "python_time_s", ls_json__secs(l->mode_ns[0]));
		json_object_set_new(r, "native_time_s", ls_json__secs(l->mode_ns[1]));
		json_object_set_new(r, "kernel_time_s", ls_json__secs(l->mode_ns[2]));
		json_object_set_new(r, "cpu_time_s",
				    m->wall ? ls_json__secs(LS_LINE_CPU_NS(l)) : json_null());
		json_object_set_new(r, "wait_time_s",
				    m->wall ? ls_json__secs(l->wait_ns) : json_null());
		json_object_set_new(r, "gil_wait_time_s",
				    m->wall ? ls_json__secs(l->gil_ns) : json_null());
		json_object_set_new(r, "runq_time_s",
				    m->wall ? ls_json__secs(l->runq_ns) : json_null());
		json_object_set_new(r, "hits", l->hits >= 0 ? json_integer(l->hits) : json_null());
		json_object_set_new(r, "avg_hit_s",
				    l->hits > 0 ? ls_json__secs(l->own_ns / l->hits) : json_null());
		json_object_set_new(r, "traced_time_s",
				    l->hits >= 0 ? ls_json__secs(l->trace_own_ns) : json_null());
		json_object_set_new(r, "mem_change_bytes",
				    m->memory && l->peak_mem >= 0 ? json_integer(l->mem_change)
								  : json_null());
		json_object_set_new(r, "peak_mem_bytes",
				    m->memory && l->peak_mem >= 0 ? json_integer(l->peak_mem)
								  : json_null());
		json_object_set_new(r, "gpu_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->gpu_ns)
							       : json_null());
		json_object_set_new(r, "gpu_peak_mem_bytes",
				    l->gpu_peak >= 0 ? json_integer(l->gpu_peak) : json_null());
		json_object_set_new(r, "driver_time_s",
				    m->gpu || m->gpu_requested ? ls_json__secs(l->driver_ns)
							       : json_null());
		json_object_set_new(r, "source", ls_json__line_text(f, l->line));
		json_array_append_new(lines, r);
	}
	json_object_set_new(o, "lines", lines);
	for (size_t i = 0; i < m->nfstats; i++) {
		const struct ls_mfstat *fs = &m->fstats[i];
		const struct ls_mfunc *f = &m->funcs[fs->func];

		json_t *fo = json_object();

		json_object_set_new(fo, "pid", json_integer(m->procs[fs->proc].pid));
		json_object_set_new(fo, "host", ls_json__name(ls_model__host(m, fs->proc)));
		json_object_set_new(fo, "path", ls_json__name(m->files[f->file].path));
		json_object_set_new(fo, "function", ls_json__str(f->qualname));
		json_object_set_new(fo, "first_line", json_integer(f->def_line));
		json_object_set_new(fo, "lines",
				    f->end_line ? json_integer(f->end_line - f->def_line + 1)
						: json_null());
		json_object_set_new(fo, "samples",
				    m->sampled ? json_integer(fs->own_count) : json_null());
		json_object_set_new(fo, "time_s", ls_json__secs(fs->own_ns));
		json_object_set_new(fo, "total_time_s", ls_json__secs(fs->total_ns));
		json_object_set_new(fo, "cpu_time_s",
				    m->wall ? ls_json__secs(fs->cpu_ns) : json_null());
		json_object_set_new(fo, "wait_time_s",
				    m->wall ? ls_json__secs(fs->wait_ns + fs->gil_ns + fs->runq_ns)
					    : json_null());
		json_object_set_new(fo, "calls",
				    fs->calls >= 0 ? json_integer(fs->calls) : json_null());
		json_array_append_new(funcs, fo);
	}
	json_object_set_new(o, "functions", funcs);
	json_object_set_new(o, "files", files_array(m));
	json_object_set_new(o, "spark",
			    m->spark ? ls_spark__json(m->spark, m, false) : json_null());
	return o;
}
