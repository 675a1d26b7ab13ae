// SPDX-License-Identifier: MIT
/*
 * Spark applications -> the actions their drivers triggered. An action is a root SQL execution
 * with every job of it and of its nested executions, or a job outside SQL (an RDD action); its
 * cost is that of the stage attempts its jobs ran, and a stage a job listed but never ran
 * (its shuffle output was reused) is skipped.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "spark.h"

static struct ls_spark_action *new_action(struct ls_spark *s, size_t *cap, int app)
{
	struct ls_spark_action *v = ls_array_grow(s->actions, cap, s->nactions, sizeof(*v), 16);

	if (!v)
		return NULL;
	s->actions = v;
	v += s->nactions++;
	memset(v, 0, sizeof(*v));
	v->app = app;
	v->exec_id = -1;
	v->start_ms = v->end_ms = -1;
	v->proc = v->file = v->line = -1;
	v->driver_ns = v->driver_wait_ns = -1;
	return v;
}

static int add_job(struct ls_spark_action *x, size_t j)
{
	size_t *v = realloc(x->jobs, (x->njobs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	x->jobs = v;
	v[x->njobs++] = j;
	return 0;
}

/* The name of an action from a call site or description: "collect at x.py:3" -> "collect". */
static char *name_of(const char *site)
{
	const char *at = site ? strstr(site, " at ") : NULL;

	if (!site || !*site)
		return NULL;
	return strndup(site, at ? (size_t)(at - site) : strlen(site));
}

static void add_cost(struct ls_spark_cost *dst, const struct ls_spark_cost *c)
{
	dst->tasks += c->tasks;
	dst->failed_tasks += c->failed_tasks;
	dst->run_ms += c->run_ms;
	dst->cpu_ns += c->cpu_ns;
	dst->gc_ms += c->gc_ms;
	dst->input_bytes += c->input_bytes;
	dst->output_bytes += c->output_bytes;
	dst->shuffle_read_bytes += c->shuffle_read_bytes;
	dst->shuffle_write_bytes += c->shuffle_write_bytes;
	dst->disk_spill += c->disk_spill;
	dst->mem_spill += c->mem_spill;
	if (c->peak_mem > dst->peak_mem)
		dst->peak_mem = c->peak_mem;
}

static bool has_id(const int64_t *v, size_t n, int64_t id)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == id)
			return true;
	return false;
}

/* The stage attempts of x's jobs (each once), the stages they skipped, and their cost. */
static int collect_stages(const struct ls_spark_app *a, struct ls_spark_action *x)
{
	for (size_t k = 0; k < x->njobs; k++) {
		const struct ls_spark_job *j = &a->jobs[x->jobs[k]];

		for (size_t i = 0; i < j->nstage_ids; i++) {
			int64_t id = j->stage_ids[i];
			bool ran = false;

			if (has_id(x->skipped, x->nskipped, id))
				continue;
			for (int64_t att = 0; att < 1024; att++) {
				uint64_t ix;
				size_t *v;

				if (!ls_hashmap__get(&a->stage_ix, (uint64_t)id << 10 | att, &ix))
					break;
				ran = true;
				bool dup = false;

				for (size_t q = 0; q < x->nstages; q++)
					dup |= x->stages[q] == ix;
				if (dup)
					continue;
				v = realloc(x->stages, (x->nstages + 1) * sizeof(*v));
				if (!v)
					return -ENOMEM;
				x->stages = v;
				v[x->nstages++] = ix;
				add_cost(&x->cost, &a->stages[ix].cost);
				x->has_cost |= a->stages[ix].done_ms >= 0;
			}
			if (!ran) {
				int64_t *v = realloc(x->skipped, (x->nskipped + 1) * sizeof(*v));

				if (!v)
					return -ENOMEM;
				x->skipped = v;
				v[x->nskipped++] = id;
			}
		}
	}
	return 0;
}

/* Window, status, name and call site of x from its execution (NULL: none) and jobs. */
static int describe(const struct ls_spark_app *a, struct ls_spark_action *x,
		    const struct ls_spark_exec *e)
{
	const char *site = NULL, *err = NULL;
	bool running = e && !e->ended, failed = e && e->error;

	for (size_t k = 0; k < x->njobs; k++) {
		const struct ls_spark_job *j = &a->jobs[x->jobs[k]];

		if (!site)
			site = j->call_site;
		if (!e && (x->start_ms < 0 || (j->submit_ms >= 0 && j->submit_ms < x->start_ms)))
			x->start_ms = j->submit_ms;
		if (!e && j->done_ms > x->end_ms)
			x->end_ms = j->done_ms;
		running |= j->status == LS_SPARK_RUNNING;
		if (j->status == LS_SPARK_FAILED) {
			failed = true;
			err = err ?: j->error;
		}
	}
	if (e) {
		x->start_ms = e->start_ms;
		x->end_ms = e->ended ? e->end_ms : -1;
		err = e->error ?: err;
	}
	x->status = failed ? LS_SPARK_FAILED : running ? LS_SPARK_RUNNING : LS_SPARK_SUCCEEDED;
	if (running && !failed)
		x->end_ms = -1;
	x->call_site = site ? strdup(site) : NULL;
	if (e && e->description)
		x->description = strdup(e->description);
	else if (x->njobs && a->jobs[x->jobs[0]].description)
		x->description = strdup(a->jobs[x->jobs[0]].description);
	x->name = name_of(site) ?: name_of(e ? e->description : NULL);
	if (!x->name && asprintf(&x->name, e ? "execution %lld" : "job %lld",
				 (long long)(e		? e->id
					     : x->njobs ? a->jobs[x->jobs[0]].id
							: 0)) < 0)
		x->name = NULL;
	if (err) {
		size_t n = strcspn(err, "\n");

		x->error = strndup(err, n);
	}
	return x->name ? 0 : -ENOMEM;
}

/* The root execution of e (nested executions fold into it), or e when it has none here. */
static const struct ls_spark_exec *root_of(const struct ls_spark_app *a,
					   const struct ls_spark_exec *e)
{
	uint64_t ix;

	for (int hops = 0; hops < 16 && e->root_id != e->id; hops++) {
		if (!ls_hashmap__get(&a->exec_ix, e->root_id, &ix))
			break;
		e = &a->execs[ix];
	}
	return e;
}

static int app_actions(struct ls_spark *s, size_t *cap, int app)
{
	const struct ls_spark_app *a = &s->apps[app];
	size_t first = s->nactions;
	uint64_t ix;
	int err = 0;

	/* a root execution is an action, whether or not it ran jobs */
	for (size_t i = 0; i < a->nexecs; i++) {
		struct ls_spark_action *x;

		if (root_of(a, &a->execs[i]) != &a->execs[i])
			continue;
		x = new_action(s, cap, app);
		if (!x)
			return -ENOMEM;
		x->exec_id = a->execs[i].id;
	}
	for (size_t j = 0; j < a->njobs && !err; j++) {
		const struct ls_spark_job *job = &a->jobs[j];
		struct ls_spark_action *x = NULL;

		if (job->exec_id >= 0 && ls_hashmap__get(&a->exec_ix, job->exec_id, &ix)) {
			int64_t root = root_of(a, &a->execs[ix])->id;

			for (size_t k = first; k < s->nactions && !x; k++)
				if (s->actions[k].exec_id == root)
					x = &s->actions[k];
		}
		if (!x && !(x = new_action(s, cap, app)))
			return -ENOMEM;
		err = add_job(x, j);
	}
	for (size_t k = first; k < s->nactions && !err; k++) {
		struct ls_spark_action *x = &s->actions[k];
		const struct ls_spark_exec *e = NULL;
		json_t *plan;

		if (x->exec_id >= 0 && ls_hashmap__get(&a->exec_ix, x->exec_id, &ix))
			e = &a->execs[ix];
		err = describe(a, x, e) ?: collect_stages(a, x);
		plan = e ? (e->final_plan ?: e->plan) : NULL;
		if (!err && plan)
			err = ls_spark__plan_steps(a, plan, &x->steps, &x->nsteps);
	}
	return err;
}

static int by_start(const void *pa, const void *pb)
{
	const struct ls_spark_action *a = pa, *b = pb;

	if (a->app != b->app)
		return a->app < b->app ? -1 : 1;
	if (a->start_ms != b->start_ms)
		return a->start_ms < b->start_ms ? -1 : 1;
	return a->exec_id < b->exec_id ? -1 : a->exec_id > b->exec_id;
}

/* Files that had no event at all (a README beside the logs) are not applications. */
static void drop_non_logs(struct ls_spark *s)
{
	size_t k = 0;

	for (size_t i = 0; i < s->napps; i++) {
		struct ls_spark_app *a = &s->apps[i];

		if (a->events && a->events == a->bad_events) {
			ls_spark__note(s,
				       "%s is not a Spark event log: none of its %lld lines is an "
				       "event",
				       a->log ? a->log : "a file", (long long)a->events);
			ls_spark__free_app(a);
			continue;
		}
		if (k != i)
			s->apps[k] = *a;
		k++;
	}
	s->napps = k;
}

int ls_spark__finish(struct ls_spark *s)
{
	size_t cap = s->nactions;
	int err = 0;

	drop_non_logs(s);

	for (size_t i = 0; i < s->napps && !err; i++) {
		struct ls_spark_app *a = &s->apps[i];

		if (a->end_ms < 0)
			a->status = LS_SPARK_RUNNING;
		err = app_actions(s, &cap, (int)i);
		if (a->bad_events)
			ls_spark__note(s, "%s: %lld lines were not Spark events and were skipped",
				       a->log ? a->log : "log", (long long)a->bad_events);
		if (a->dropped)
			ls_spark__note(s, "%s: %lld events over the reader's limits were dropped",
				       a->log ? a->log : "log", (long long)a->dropped);
	}
	if (s->nactions > 1)
		qsort(s->actions, s->nactions, sizeof(*s->actions), by_start);
	return err;
}
