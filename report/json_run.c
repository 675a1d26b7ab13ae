// SPDX-License-Identifier: MIT
/* The `run` object: how the profile was recorded, what it holds and what it lost. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "json_int.h"
#include "spark.h"

static const char *meta_or(const struct ls_model *m, const char *key, const char *def)
{
	const char *v = ls_model__meta(m, key);

	return v ? v : def;
}

/* Samples per second of the main process (the first one recorded). */
static json_t *main_rate(const struct ls_model *m)
{
	if (!m->nprocs || m->elapsed_s <= 0)
		return json_null();
	return json_real(m->procs[0].samples / m->elapsed_s);
}

bool lsj_gpu_loaded(const struct ls_model *m)
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
			progs,
			json_pack("{s:s, s:I, s:f, s:o}", "name", c->name, "runs",
				  (json_int_t)c->runs, "time_s", c->ns / NS_PER_S, "ns_per_run",
				  c->runs ? json_real((double)c->ns / c->runs) : json_null()));
	}
	return json_pack(
		"{s:f, s:I, s:o, s:o, s:o, s:o, s:o}", "bpf_time_s", ns / NS_PER_S, "bpf_runs",
		(json_int_t)runs, "bpf_ns_per_run",
		runs ? json_real((double)ns / runs) : json_null(), "programs", progs,
		"collector_cpu_s",
		m->collector_cpu_ns >= 0 ? json_real(m->collector_cpu_ns / NS_PER_S) : json_null(),
		"collector_share",
		m->collector_cpu_ns >= 0 && m->elapsed_s > 0
			? json_real(m->collector_cpu_ns / NS_PER_S / m->elapsed_s)
			: json_null(),
		"collector_setup_cpu_s",
		m->collector_setup_cpu_ns >= 0 ? json_real(m->collector_setup_cpu_ns / NS_PER_S)
					       : json_null());
}

json_t *lsj_run_object(const struct ls_model *m)
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
			    json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "total",
				      (json_int_t)lost, "ringbuf", (json_int_t)m->lost_ringbuf,
				      "unresolved", (json_int_t)m->lost_unresolved, "read_errors",
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
	if (m->gpu_requested && !lsj_gpu_loaded(m))
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

json_t *ls_json__run(const struct ls_model *m)
{
	json_t *run = lsj_run_object(m);

	json_object_set_new(run, "schema", json_integer(1));
	json_object_del(run, "capabilities");
	return run;
}
