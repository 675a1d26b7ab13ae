// SPDX-License-Identifier: MIT
/*
 * The GPU timeline section (report/gpu_idle.h) for both JSON documents: per device, its busy
 * and idle time, busy series, streams, and the lines its idle time went to.
 */
#include <math.h>
#include "gpu_idle.h"
#include "json_int.h"

#define SERIES_DIGITS 1000.0 /* busy shares kept to 0.1 % */

/* A line or stream's process: an index for the report data, else its pid and host. */
static void set_proc(json_t *o, const struct ls_model *m, int proc, bool data)
{
	if (data) {
		json_object_set_new(o, "proc", json_integer(proc));
		return;
	}
	json_object_set_new(o, "pid", json_integer(m->procs[proc].pid));
	json_object_set_new(o, "host", ls_json__name(ls_model__host(m, proc)));
}

/* A busy series: shares to 0.1 % */
static json_t *series(const float *v)
{
	json_t *a = json_array();

	for (int j = 0; j < LS_GPU_UTIL_BUCKETS; j++)
		json_array_append_new(a, json_real(round(v[j] * SERIES_DIGITS) / SERIES_DIGITS));
	return a;
}

/* A line and its idle time */
static json_t *line_ref(const struct ls_model *m, const struct ls_gpu_idle_line *l, bool data)
{
	json_t *o = json_object();

	set_proc(o, m, l->proc, data);
	if (data)
		json_object_set_new(o, "src", json_integer(l->file));
	else
		json_object_set_new(o, "path", ls_json__name(m->files[l->file].path));
	json_object_set_new(o, "line", json_integer(l->line));
	json_object_set_new(o, "idle_s", ls_json__secs(l->idle_ns));
	return o;
}

static json_t *idle_line(const struct ls_model *m, const struct ls_gpu_idle_line *l,
			 const struct ls_gpu_util *u, bool data)
{
	json_t *o = line_ref(m, l, data);
	int64_t idle = u->t1_ns - u->t0_ns - u->busy_ns;

	json_object_set_new(o, "idle_share",
			    json_real(idle > 0 ? (double)l->idle_ns / (double)idle : 0));
	json_object_set_new(o, "cpu_s", ls_json__secs(l->cpu_ns));
	json_object_set_new(o, "blocked_s", ls_json__secs(l->blocked_ns));
	return o;
}

static json_t *device(const struct ls_model *m, const struct ls_gpu_util *u, bool data)
{
	json_t *o = json_object(), *streams = json_array(), *lines = json_array(),
	       *lanes = json_array(), *gaps = json_array();
	int64_t active = u->t1_ns - u->t0_ns, idle = active - u->busy_ns;

	json_object_set_new(o, "index", json_integer(u->ordinal));
	json_object_set_new(o, "uuid", u->uuid ? ls_json__str(u->uuid) : json_null());
	/* the process that first used it: on a merged job's report, its host and rank */
	set_proc(o, m, u->proc, data);
	json_object_set_new(o, "rank",
			    m->procs[u->proc].rank >= 0 ? json_integer(m->procs[u->proc].rank)
							: json_null());
	json_object_set_new(o, "start_s", ls_json__secs(u->t0_ns));
	json_object_set_new(o, "end_s", ls_json__secs(u->t1_ns));
	json_object_set_new(o, "busy_s", ls_json__secs(u->busy_ns));
	json_object_set_new(o, "idle_s", ls_json__secs(idle));
	json_object_set_new(o, "utilization",
			    json_real(active > 0 ? (double)u->busy_ns / (double)active : 0));
	json_object_set_new(o, "kernel_s", ls_json__secs(u->kernel_ns));
	json_object_set_new(o, "copy_s", ls_json__secs(u->copy_ns));
	json_object_set_new(o, "set_s", ls_json__secs(u->set_ns));
	json_object_set_new(o, "nccl_s", ls_json__secs(u->nccl_ns));
	json_object_set_new(o, "spans", json_integer(u->spans));
	json_object_set_new(o, "gaps", json_integer(u->gaps));
	json_object_set_new(o, "longest_gap_s", ls_json__secs(u->longest_gap_ns));
	json_object_set_new(o, "launching_threads", json_integer(u->threads));
	json_object_set_new(o, "idle_explained_s", ls_json__secs(u->explained_ns));
	for (size_t i = 0; i < u->nstreams; i++) {
		json_t *s = json_object();

		set_proc(s, m, u->streams[i].proc, data);
		json_object_set_new(s, "stream", json_integer(u->streams[i].stream));
		json_object_set_new(s, "busy_s", ls_json__secs(u->streams[i].busy_ns));
		json_object_set_new(s, "spans", json_integer(u->streams[i].spans));
		json_array_append_new(streams, s);
	}
	json_object_set_new(o, "streams", streams);
	for (size_t i = 0; i < u->nlanes; i++) {
		json_t *l = json_object();

		set_proc(l, m, u->lanes[i].proc, data);
		json_object_set_new(l, "stream", json_integer(u->lanes[i].stream));
		json_object_set_new(l, "values", series(u->lanes[i].busy));
		json_array_append_new(lanes, l);
	}
	json_object_set_new(o, "busy_series",
			    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "start_s",
				      ls_json__secs(u->t0_ns), "step_s",
				      json_real((double)active / LS_GPU_UTIL_BUCKETS / NS_PER_S),
				      "values", series(u->busy), "kernels", series(u->kernels),
				      "copies", series(u->copies), "streams", lanes));
	for (size_t i = 0; i < u->nlines; i++)
		json_array_append_new(lines, idle_line(m, &u->lines[i], u, data));
	for (size_t i = 0; i < u->ntop_gaps; i++) {
		const struct ls_gpu_gap *g = &u->top_gaps[i];
		json_t *gl = json_array();

		for (size_t k = 0; k < g->nlines; k++)
			json_array_append_new(gl, line_ref(m, &g->lines[k], data));
		json_array_append_new(gaps, json_pack("{s:o, s:o, s:o}", "start_s",
						      ls_json__secs(g->t_ns), "idle_s",
						      ls_json__secs(g->dur_ns), "lines", gl));
	}
	json_object_set_new(o, "idle_lines", lines);
	json_object_set_new(o, "longest_gaps", gaps);
	return o;
}

json_t *lsj_gpu_timeline(const struct ls_model *m, bool data)
{
	json_t *a;

	if (!m->stacks || !m->stacks->timeline)
		return json_null();
	a = json_array();
	for (size_t i = 0; i < m->ngpu_util; i++)
		json_array_append_new(a, device(m, &m->gpu_util[i], data));
	return a;
}
