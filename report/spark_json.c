// SPDX-License-Identifier: MIT
/*
 * The `spark` object: in the HTML's report data (docs/report-data.md, "Spark") and in
 * `report --format json` (docs/json-output.md), which names files by path instead of index.
 */
#include <stdlib.h>
#include <string.h>
#include "json.h"
#include "model.h"
#include "spark.h"
#include "profile.h"

static json_t *ms_secs(int64_t ms)
{
	return ms >= 0 ? json_real((double)ms / 1000.0) : json_null();
}

static json_t *ns_secs(int64_t ns)
{
	return ns >= 0 ? ls_json__secs(ns) : json_null();
}

/* Epoch ms as seconds from the profile's start; null when either is unknown. */
static json_t *rel_secs(int64_t ms, int64_t wall0)
{
	return ms > 0 && wall0 > 0 ? json_real(((double)ms * 1e6 - (double)wall0) / 1e9)
				   : json_null();
}

static json_t *int_or_null(int64_t v)
{
	return v >= 0 ? json_integer(v) : json_null();
}

static json_t *app_object(const struct ls_spark_app *a, int64_t wall0)
{
	json_t *o = json_object();

	json_object_set_new(o, "name", ls_json__str(a->name));
	json_object_set_new(o, "id", ls_json__str(a->id));
	json_object_set_new(o, "spark_version", ls_json__str(a->version));
	json_object_set_new(o, "start_s", rel_secs(a->start_ms, wall0));
	json_object_set_new(o, "end_s", rel_secs(a->end_ms, wall0));
	json_object_set_new(o, "start_ms", int_or_null(a->start_ms));
	json_object_set_new(o, "end_ms", int_or_null(a->end_ms));
	json_object_set_new(o, "status", json_string(ls_spark_status__name(a->status)));
	json_object_set_new(o, "log", ls_json__str(a->log));
	json_object_set_new(o, "codec", ls_json__str(a->codec));
	json_object_set_new(o, "events", json_integer(a->events));
	json_object_set_new(o, "bad_events", json_integer(a->bad_events));
	json_object_set_new(o, "dropped_events", json_integer(a->dropped));
	return o;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Task duration quantile q (percent) of a stage, nearest rank; null without tasks. */
static json_t *quantile(const struct ls_spark_stage *st, int q)
{
	size_t k;

	if (!st->ndur)
		return json_null();
	k = (st->ndur * (size_t)q + 99) / 100;
	return ms_secs(st->dur_ms[k ? k - 1 : 0]);
}

static void cost_fields(json_t *o, const struct ls_spark_cost *c)
{
	json_object_set_new(o, "input_bytes", json_integer(c->input_bytes));
	json_object_set_new(o, "output_bytes", json_integer(c->output_bytes));
	json_object_set_new(o, "shuffle_read_bytes", json_integer(c->shuffle_read_bytes));
	json_object_set_new(o, "shuffle_write_bytes", json_integer(c->shuffle_write_bytes));
	json_object_set_new(o, "spill_bytes", json_integer(c->disk_spill));
	json_object_set_new(o, "memory_spill_bytes", json_integer(c->mem_spill));
	json_object_set_new(o, "peak_mem", json_integer(c->peak_mem));
}

static json_t *stage_object(struct ls_spark_stage *st)
{
	json_t *o = json_object();

	/* durations sorted once, here: the reader keeps them in arrival order */
	if (st->ndur > 1)
		qsort(st->dur_ms, st->ndur, sizeof(*st->dur_ms), cmp_i64);
	json_object_set_new(o, "id", json_integer(st->id));
	json_object_set_new(o, "attempt", json_integer(st->attempt));
	json_object_set_new(o, "name", ls_json__str(st->name));
	json_object_set_new(o, "status", json_string(ls_spark_status__name(st->status)));
	json_object_set_new(o, "failure", ls_json__str(st->failure));
	json_object_set_new(o, "tasks", json_integer(st->cost.tasks));
	json_object_set_new(o, "failed_tasks", json_integer(st->cost.failed_tasks));
	json_object_set_new(o, "wall_s",
			    st->submit_ms > 0 && st->done_ms >= st->submit_ms
				    ? ms_secs(st->done_ms - st->submit_ms)
				    : json_null());
	json_object_set_new(o, "executor_s", ms_secs(st->cost.run_ms));
	json_object_set_new(o, "cpu_s", ns_secs(st->cost.cpu_ns));
	json_object_set_new(o, "gc_s", ms_secs(st->cost.gc_ms));
	cost_fields(o, &st->cost);
	json_object_set_new(o, "task_p50_s", quantile(st, 50));
	json_object_set_new(o, "task_p95_s", quantile(st, 95));
	json_object_set_new(o, "task_max_s", quantile(st, 100));
	return o;
}

static json_t *skipped_object(int64_t id)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(id));
	json_object_set_new(o, "attempt", json_null());
	json_object_set_new(o, "name", json_null());
	json_object_set_new(o, "status", json_string("skipped"));
	json_object_set_new(o, "tasks", json_integer(0));
	json_object_set_new(o, "failed_tasks", json_integer(0));
	json_object_set_new(o, "wall_s", json_null());
	return o;
}

static json_t *step_object(const struct ls_spark_step *st)
{
	json_t *o = json_object(), *from = json_array();

	for (size_t i = 0; i < st->nfrom; i++)
		json_array_append_new(from, json_integer(st->from[i]));
	json_object_set_new(o, "label", json_string(st->label));
	json_object_set_new(o, "detail", ls_json__str(st->detail));
	json_object_set_new(o, "from", from);
	json_object_set_new(o, "rows", int_or_null(st->rows));
	json_object_set_new(o, "rows_from_input", json_boolean(st->rows_from_input));
	json_object_set_new(o, "time_s", ns_secs(st->time_ns));
	json_object_set_new(o, "peak_mem", int_or_null(st->peak_mem));
	json_object_set_new(o, "pipeline", int_or_null(st->pipeline));
	json_object_set_new(o, "pipeline_time_s", ns_secs(st->pipeline_ns));
	return o;
}

static const struct ls_spark_exec *exec_of(const struct ls_spark_app *a, int64_t id)
{
	uint64_t ix;

	return id >= 0 && ls_hashmap__get(&a->exec_ix, (uint64_t)id, &ix) ? &a->execs[ix] : NULL;
}

static json_t *how_array(const struct ls_spark_action *x, const struct ls_spark_exec *e)
{
	json_t *h = json_array();

	json_array_append_new(
		h, json_string(e ? "Wall time: from the SQL execution's start to its end event"
				 : "Wall time: from the first job's submission to the last job's "
				   "completion"));
	json_array_append_new(h, json_sprintf("Executor time, CPU, bytes and spill: the task "
					      "metrics of the %zu stage attempts its jobs ran, "
					      "summed over their tasks; skipped stages add nothing",
					      x->nstages));
	json_array_append_new(h, json_string("Peak memory: the largest task's peak execution "
					     "memory"));
	if (x->nsteps)
		json_array_append_new(
			h,
			json_string("Steps: the final adaptive plan when there is one, else the "
				    "plan as the execution started; rows and times are each "
				    "node's SQL metrics summed over its tasks, a step's time the "
				    "largest of its timing metrics, never a sum"));
	if (x->match && !strcmp(x->match, "time"))
		json_array_append_new(
			h,
			json_string("Trigger line: matched by time, the driver line that covered "
				    "most of the action's window in the profile's timeline"));
	else if (x->match)
		json_array_append_new(
			h, json_string("Trigger line: the job's call site (callSite.short)"));
	if (x->driver_ns >= 0)
		json_array_append_new(
			h, json_string("Driver line: its sampled time inside the action's window, "
				       "with Spark's clock put on the profile's through the wall "
				       "clock both read; never added to executor time"));
	return h;
}

static json_t *action_object(const struct ls_spark *s, const struct ls_spark_action *x,
			     const struct ls_model *m, bool data, int64_t wall0)
{
	const struct ls_spark_app *a = &s->apps[x->app];
	const struct ls_spark_exec *e = exec_of(a, x->exec_id);
	json_t *o = json_object(), *ids = json_array(), *stages = json_array(),
	       *steps = json_array(), *plans = json_object();
	int64_t max_op = -1;

	json_object_set_new(o, "name", ls_json__str(x->name));
	json_object_set_new(o, "app", json_integer(x->app));
	if (data) {
		json_object_set_new(o, "proc", x->proc >= 0 ? json_integer(x->proc) : json_null());
		json_object_set_new(o, "src", x->file >= 0 ? json_integer(x->file) : json_null());
	} else {
		json_object_set_new(
			o, "pid", x->proc >= 0 ? json_integer(m->procs[x->proc].pid) : json_null());
		json_object_set_new(o, "path",
				    x->file >= 0 ? ls_json__name(m->files[x->file].path)
						 : json_null());
	}
	json_object_set_new(o, "line", x->file >= 0 ? json_integer(x->line) : json_null());
	json_object_set_new(o, "match", x->match ? json_string(x->match) : json_null());
	json_object_set_new(o, "call_site", ls_json__str(x->call_site));
	json_object_set_new(o, "execution", int_or_null(x->exec_id));
	json_object_set_new(o, "description", ls_json__str(x->description));
	json_object_set_new(o, "status", json_string(ls_spark_status__name(x->status)));
	json_object_set_new(o, "error", ls_json__str(x->error));
	for (size_t i = 0; i < x->njobs; i++)
		json_array_append_new(ids, json_integer(a->jobs[x->jobs[i]].id));
	json_object_set_new(o, "jobs", json_integer(x->njobs));
	json_object_set_new(o, "job_ids", ids);
	json_object_set_new(o, "stages", json_integer(x->nstages));
	json_object_set_new(o, "skipped_stages", json_integer(x->nskipped));
	json_object_set_new(o, "tasks", json_integer(x->cost.tasks));
	json_object_set_new(o, "failed_tasks", json_integer(x->cost.failed_tasks));
	json_object_set_new(o, "start_s", rel_secs(x->start_ms, wall0));
	json_object_set_new(o, "wall_s",
			    x->start_ms > 0 && x->end_ms >= x->start_ms
				    ? ms_secs(x->end_ms - x->start_ms)
				    : json_null());
	json_object_set_new(o, "driver_s", ns_secs(x->driver_ns));
	json_object_set_new(o, "driver_wait_s", m->wall ? ns_secs(x->driver_wait_ns) : json_null());
	json_object_set_new(o, "executor_s", x->has_cost ? ms_secs(x->cost.run_ms) : json_null());
	json_object_set_new(o, "executor_cpu_s",
			    x->has_cost ? ns_secs(x->cost.cpu_ns) : json_null());
	for (size_t i = 0; i < x->nsteps; i++) {
		if (x->steps[i].time_ns > max_op)
			max_op = x->steps[i].time_ns;
		json_array_append_new(steps, step_object(&x->steps[i]));
	}
	json_object_set_new(o, "max_op_s", ns_secs(max_op));
	json_object_set_new(o, "peak_mem",
			    x->has_cost ? json_integer(x->cost.peak_mem) : json_null());
	json_object_set_new(o, "spill",
			    x->has_cost ? json_integer(x->cost.disk_spill) : json_null());
	json_object_set_new(o, "steps", steps);
	for (size_t i = 0; i < x->nstages; i++)
		json_array_append_new(stages, stage_object(&a->stages[x->stages[i]]));
	for (size_t i = 0; i < x->nskipped; i++)
		json_array_append_new(stages, skipped_object(x->skipped[i]));
	json_object_set_new(o, "stage_details", stages);
	json_object_set_new(plans, "physical", ls_json__str(e ? e->plan_text : NULL));
	json_object_set_new(plans, "final", ls_json__str(e ? e->final_text : NULL));
	json_object_set_new(o, "plans", plans);
	json_object_set_new(o, "how", how_array(x, e));
	return o;
}

json_t *ls_spark__json(const struct ls_spark *s, const struct ls_model *m, bool data)
{
	int64_t wall0 =
		ls_profile__meta_num(ls_model__meta(m, "wall_start_ns"), -1, LS_META_WALL_MAX);
	json_t *o = json_object(), *apps = json_array(), *acts = json_array(),
	       *notes = json_array();

	for (size_t i = 0; i < s->napps; i++)
		json_array_append_new(apps, app_object(&s->apps[i], wall0));
	for (size_t i = 0; i < s->nactions; i++)
		json_array_append_new(acts, action_object(s, &s->actions[i], m, data, wall0));
	for (size_t i = 0; i < s->nnotes; i++)
		json_array_append_new(notes, ls_json__str(s->notes[i]));
	json_object_set_new(o, "applications", apps);
	json_object_set_new(o, "actions", acts);
	json_object_set_new(o, "notes", notes);
	return o;
}
