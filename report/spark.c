// SPDX-License-Identifier: MIT
/*
 * Spark event logs -> applications: one JSON object per line (docs/spark.md). Core events carry
 * Title-Case keys (JsonProtocol), SQL events a fully-qualified class name and camelCase keys.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "spark.h"

/* Caps on what one log may make us hold: beyond them events are counted as dropped. */
#define SPARK_MAX_JOBS	    100000
#define SPARK_MAX_STAGES    200000
#define SPARK_MAX_EXECS	    100000
#define SPARK_MAX_ACCUMS    2000000
#define SPARK_MAX_DURS	    1000000 /* task durations kept per stage attempt */
#define SPARK_MAX_STAGE_IDS 10000   /* stages one job may list */
#define SPARK_NAME_MAX	    4096
#define SPARK_PLAN_MAX	    (1 << 20)
/* epoch milliseconds beyond this (the year 3084) are not times */
#define SPARK_MS_MAX (INT64_C(1) << 45)
/* a count or byte total beyond this is damage */
#define SPARK_NUM_MAX (INT64_C(1) << 62)

const char *ls_spark_status__name(int status)
{
	static const char *const names[] = {"running", "succeeded", "failed", "skipped"};

	return status >= 0 && status <= LS_SPARK_SKIPPED ? names[status] : "unknown";
}

struct ls_spark *ls_spark__new(void)
{
	return calloc(1, sizeof(struct ls_spark));
}

void ls_spark__note(struct ls_spark *s, const char *fmt, ...)
{
	char **v;
	char *t;
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(&t, fmt, ap) < 0)
		t = NULL;
	va_end(ap);
	v = t ? realloc(s->notes, (s->nnotes + 1) * sizeof(*v)) : NULL;
	if (!v) {
		free(t);
		return;
	}
	s->notes = v;
	v[s->nnotes++] = t;
}

int64_t ls_spark__num(json_t *v, int64_t dflt)
{
	const char *t;
	char *end;
	long long x;

	if (json_is_integer(v))
		return json_integer_value(v);
	if (json_is_real(v)) {
		double d = json_real_value(v);

		return d >= -9e18 && d <= 9e18 ? (int64_t)d : dflt;
	}
	if (!json_is_string(v))
		return dflt;
	t = json_string_value(v);
	errno = 0;
	x = strtoll(t, &end, 10);
	return errno || end == t || *end ? dflt : x;
}

/* A count, size or duration: 0 <= x < 2^62, else 0 (damage is not added). */
static int64_t num_pos(json_t *o, const char *key)
{
	int64_t x = ls_spark__num(json_object_get(o, key), 0);

	return x >= 0 && x < SPARK_NUM_MAX ? x : 0;
}

static int64_t time_ms(json_t *o, const char *key)
{
	int64_t x = ls_spark__num(json_object_get(o, key), -1);

	return x > 0 && x < SPARK_MS_MAX ? x : -1;
}

static int64_t id_of(json_t *o, const char *key)
{
	int64_t x = ls_spark__num(json_object_get(o, key), -1);

	return x >= 0 && x < (INT64_C(1) << 40) ? x : -1;
}

/* A string value, at most max bytes (cut at a character boundary); NULL when none. */
static char *str_of(json_t *o, const char *key, size_t max)
{
	json_t *v = json_object_get(o, key);
	size_t n;

	if (!json_is_string(v))
		return NULL;
	n = json_string_length(v);
	if (n > max) {
		const unsigned char *t = (const unsigned char *)json_string_value(v);

		n = max;
		while (n && (t[n] & 0xc0) == 0x80)
			n--;
	}
	return strndup(json_string_value(v), n);
}

static void note_time(struct ls_spark_app *a, int64_t ms)
{
	if (ms > a->last_ms)
		a->last_ms = ms;
}

int ls_spark__begin_app(struct ls_spark *s, const char *log, const char *codec)
{
	struct ls_spark_app *v = realloc(s->apps, (s->napps + 1) * sizeof(*v)), *a;

	if (!v)
		return -ENOMEM;
	s->apps = v;
	a = &v[s->napps];
	memset(a, 0, sizeof(*a));
	a->log = log ? strdup(log) : NULL;
	a->codec = codec;
	a->start_ms = a->end_ms = a->last_ms = -1;
	ls_hashmap_init(&a->job_ix);
	ls_hashmap_init(&a->stage_ix);
	ls_hashmap_init(&a->exec_ix);
	ls_hashmap_init(&a->accum_ix);
	return (int)s->napps++;
}

/* The entry of id in a table (ix: id -> index), added zeroed when new; NULL over cap/-ENOMEM. */
static void *entry(struct ls_hashmap *ix, uint64_t key, void **items, size_t *n, size_t *cap,
		   size_t elem, size_t max, bool add, bool *fresh)
{
	uint64_t i;
	void *v;

	*fresh = false;
	if (ls_hashmap__get(ix, key, &i))
		return (char *)*items + i * elem;
	if (!add || *n >= max)
		return NULL;
	v = ls_array_grow(*items, cap, *n, elem, 16);
	if (!v)
		return NULL;
	*items = v;
	if (ls_hashmap__set(ix, key, *n))
		return NULL;
	v = (char *)v + *n * elem;
	memset(v, 0, elem);
	(*n)++;
	*fresh = true;
	return v;
}

static struct ls_spark_job *job_of(struct ls_spark_app *a, int64_t id, bool add)
{
	bool fresh;
	struct ls_spark_job *j = entry(&a->job_ix, id, (void **)&a->jobs, &a->njobs, &a->capjobs,
				       sizeof(*j), SPARK_MAX_JOBS, add, &fresh);

	if (j && fresh) {
		j->id = id;
		j->submit_ms = j->done_ms = -1;
		j->exec_id = -1;
	}
	return j;
}

static struct ls_spark_stage *stage_of(struct ls_spark_app *a, int64_t id, int64_t attempt,
				       bool add)
{
	bool fresh;
	struct ls_spark_stage *st;

	if (id < 0 || attempt < 0 || attempt >= 1024)
		return NULL;
	st = entry(&a->stage_ix, (uint64_t)id << 10 | (uint64_t)attempt, (void **)&a->stages,
		   &a->nstages, &a->capstages, sizeof(*st), SPARK_MAX_STAGES, add, &fresh);
	if (st && fresh) {
		st->id = id;
		st->attempt = attempt;
		st->submit_ms = st->done_ms = -1;
	}
	return st;
}

static struct ls_spark_exec *exec_of(struct ls_spark_app *a, int64_t id, bool add)
{
	bool fresh;
	struct ls_spark_exec *x = entry(&a->exec_ix, id, (void **)&a->execs, &a->nexecs,
					&a->capexecs, sizeof(*x), SPARK_MAX_EXECS, add, &fresh);

	if (x && fresh) {
		x->id = x->root_id = id;
		x->start_ms = x->end_ms = -1;
	}
	return x;
}

static int accum_add(struct ls_spark_app *a, int64_t id, int64_t v)
{
	bool fresh;
	struct ls_spark_accum *x;

	if (id < 0 || v < 0 || v >= SPARK_NUM_MAX)
		return 0;
	x = entry(&a->accum_ix, id, (void **)&a->accums, &a->naccums, &a->capaccums, sizeof(*x),
		  SPARK_MAX_ACCUMS, true, &fresh);
	if (!x)
		return -ENOSPC;
	if (x->sum < SPARK_NUM_MAX - v)
		x->sum += v;
	if (v > x->max)
		x->max = v;
	return 0;
}

static void set_str(char **dst, char *s)
{
	if (!s)
		return;
	free(*dst);
	*dst = s;
}

static int on_job_start(struct ls_spark_app *a, json_t *e)
{
	json_t *props = json_object_get(e, "Properties"), *ids = json_object_get(e, "Stage IDs");
	struct ls_spark_job *j = job_of(a, id_of(e, "Job ID"), true);
	size_t n = json_array_size(ids);

	if (!j)
		return -ENOSPC;
	j->submit_ms = time_ms(e, "Submission Time");
	note_time(a, j->submit_ms);
	set_str(&j->call_site, str_of(props, "callSite.short", SPARK_NAME_MAX));
	set_str(&j->description, str_of(props, "spark.job.description", SPARK_NAME_MAX));
	j->exec_id = ls_spark__num(json_object_get(props, "spark.sql.execution.id"), -1);
	if (j->exec_id < -1 || j->exec_id >= (INT64_C(1) << 40))
		j->exec_id = -1;
	if (n > SPARK_MAX_STAGE_IDS)
		n = SPARK_MAX_STAGE_IDS;
	free(j->stage_ids);
	j->stage_ids = n ? calloc(n, sizeof(*j->stage_ids)) : NULL;
	j->nstage_ids = 0;
	for (size_t i = 0; i < n && j->stage_ids; i++) {
		int64_t id = ls_spark__num(json_array_get(ids, i), -1);

		if (id >= 0 && id < (INT64_C(1) << 40))
			j->stage_ids[j->nstage_ids++] = id;
	}
	return 0;
}

static int on_job_end(struct ls_spark_app *a, json_t *e)
{
	struct ls_spark_job *j = job_of(a, id_of(e, "Job ID"), true);
	json_t *res = json_object_get(e, "Job Result");
	const char *r = json_string_value(json_object_get(res, "Result"));

	if (!j)
		return -ENOSPC;
	j->done_ms = time_ms(e, "Completion Time");
	note_time(a, j->done_ms);
	j->status = r && !strcmp(r, "JobSucceeded") ? LS_SPARK_SUCCEEDED : LS_SPARK_FAILED;
	if (j->status == LS_SPARK_FAILED)
		set_str(&j->error,
			str_of(json_object_get(res, "Exception"), "Message", SPARK_NAME_MAX)
				?: strdup(r ? r : "the job failed"));
	return 0;
}

static int on_stage(struct ls_spark_app *a, json_t *e, bool done)
{
	json_t *info = json_object_get(e, "Stage Info");
	struct ls_spark_stage *st =
		stage_of(a, id_of(info, "Stage ID"), id_of(info, "Stage Attempt ID"), true);

	if (!st)
		return -ENOSPC;
	set_str(&st->name, str_of(info, "Stage Name", SPARK_NAME_MAX));
	if (st->submit_ms < 0)
		st->submit_ms = time_ms(info, "Submission Time");
	note_time(a, st->submit_ms);
	if (!done)
		return 0;
	st->done_ms = time_ms(info, "Completion Time");
	note_time(a, st->done_ms);
	set_str(&st->failure, str_of(info, "Failure Reason", SPARK_NAME_MAX));
	st->status = st->failure ? LS_SPARK_FAILED : LS_SPARK_SUCCEEDED;
	return 0;
}

static void add_pos(int64_t *dst, int64_t v)
{
	if (*dst < SPARK_NUM_MAX - v)
		*dst += v;
}

static int on_task_end(struct ls_spark_app *a, json_t *e)
{
	json_t *info = json_object_get(e, "Task Info"), *tm = json_object_get(e, "Task Metrics");
	json_t *acc = json_object_get(info, "Accumulables"), *sr, *sw, *v;
	struct ls_spark_stage *st =
		stage_of(a, id_of(e, "Stage ID"), id_of(e, "Stage Attempt ID"), true);
	struct ls_spark_cost *c;
	const char *reason =
		json_string_value(json_object_get(json_object_get(e, "Task End Reason"), "Reason"));
	int64_t launch = time_ms(info, "Launch Time"), finish = time_ms(info, "Finish Time");
	size_t i;

	if (!st)
		return -ENOSPC;
	note_time(a, finish);
	c = &st->cost;
	c->tasks++;
	if ((reason && strcmp(reason, "Success")) || json_is_true(json_object_get(info, "Failed")))
		c->failed_tasks++;
	if (launch > 0 && finish >= launch && st->ndur < SPARK_MAX_DURS) {
		int64_t *d = ls_array_grow(st->dur_ms, &st->capdur, st->ndur, sizeof(*d), 16);

		if (!d)
			return -ENOMEM;
		st->dur_ms = d;
		d[st->ndur++] = finish - launch;
	}
	add_pos(&c->run_ms, num_pos(tm, "Executor Run Time"));
	add_pos(&c->cpu_ns, num_pos(tm, "Executor CPU Time"));
	add_pos(&c->gc_ms, num_pos(tm, "JVM GC Time"));
	add_pos(&c->disk_spill, num_pos(tm, "Disk Bytes Spilled"));
	add_pos(&c->mem_spill, num_pos(tm, "Memory Bytes Spilled"));
	if (num_pos(tm, "Peak Execution Memory") > c->peak_mem)
		c->peak_mem = num_pos(tm, "Peak Execution Memory");
	add_pos(&c->input_bytes, num_pos(json_object_get(tm, "Input Metrics"), "Bytes Read"));
	add_pos(&c->output_bytes, num_pos(json_object_get(tm, "Output Metrics"), "Bytes Written"));
	sr = json_object_get(tm, "Shuffle Read Metrics");
	add_pos(&c->shuffle_read_bytes, num_pos(sr, "Remote Bytes Read"));
	add_pos(&c->shuffle_read_bytes, num_pos(sr, "Local Bytes Read"));
	sw = json_object_get(tm, "Shuffle Write Metrics");
	add_pos(&c->shuffle_write_bytes, num_pos(sw, "Shuffle Bytes Written"));
	/* SQL metrics: the task's update of each accumulator (internal.metrics.* are above) */
	json_array_foreach(acc, i, v)
	{
		const char *name = json_string_value(json_object_get(v, "Name"));
		int err;

		if (name && !strncmp(name, "internal.metrics.", 17))
			continue;
		err = accum_add(a, id_of(v, "ID"), ls_spark__num(json_object_get(v, "Update"), -1));
		if (err)
			return err;
	}
	return 0;
}

static int on_driver_accums(struct ls_spark_app *a, json_t *e)
{
	json_t *u = json_object_get(e, "accumUpdates"), *p;
	size_t i;

	json_array_foreach(u, i, p)
	{
		int err = accum_add(a, ls_spark__num(json_array_get(p, 0), -1),
				    ls_spark__num(json_array_get(p, 1), -1));

		if (err)
			return err;
	}
	return 0;
}

static void set_plan(json_t **dst, json_t *plan)
{
	if (!json_is_object(plan))
		return;
	json_decref(*dst);
	*dst = json_incref(plan);
}

static int on_sql(struct ls_spark_app *a, const char *ev, json_t *e)
{
	struct ls_spark_exec *x;
	int64_t root;

	if (!strcmp(ev, "SparkListenerDriverAccumUpdates"))
		return on_driver_accums(a, e);
	x = exec_of(a, id_of(e, "executionId"), true);
	if (!x)
		return -ENOSPC;
	if (!strcmp(ev, "SparkListenerSQLExecutionStart")) {
		x->start_ms = time_ms(e, "time");
		note_time(a, x->start_ms);
		root = id_of(e, "rootExecutionId");
		x->root_id = root >= 0 ? root : x->id;
		set_str(&x->description, str_of(e, "description", SPARK_NAME_MAX));
		set_str(&x->plan_text, str_of(e, "physicalPlanDescription", SPARK_PLAN_MAX));
		set_plan(&x->plan, json_object_get(e, "sparkPlanInfo"));
	} else if (!strcmp(ev, "SparkListenerSQLAdaptiveExecutionUpdate")) {
		set_str(&x->final_text, str_of(e, "physicalPlanDescription", SPARK_PLAN_MAX));
		set_plan(&x->final_plan, json_object_get(e, "sparkPlanInfo"));
	} else if (!strcmp(ev, "SparkListenerSQLExecutionEnd")) {
		x->end_ms = time_ms(e, "time");
		note_time(a, x->end_ms);
		x->ended = true;
		set_str(&x->error, str_of(e, "errorMessage", SPARK_NAME_MAX));
		if (x->error && !*x->error) {
			free(x->error);
			x->error = NULL; /* "" is success in newer versions */
		}
	}
	return 0;
}

static int on_event(struct ls_spark_app *a, const char *ev, json_t *e)
{
	const char *dot = strrchr(ev, '.');

	if (!strcmp(ev, "SparkListenerLogStart")) {
		set_str(&a->version, str_of(e, "Spark Version", 64));
	} else if (!strcmp(ev, "SparkListenerApplicationStart")) {
		set_str(&a->name, str_of(e, "App Name", SPARK_NAME_MAX));
		set_str(&a->id, str_of(e, "App ID", SPARK_NAME_MAX));
		a->start_ms = time_ms(e, "Timestamp");
		note_time(a, a->start_ms);
	} else if (!strcmp(ev, "SparkListenerApplicationEnd")) {
		a->end_ms = time_ms(e, "Timestamp");
		note_time(a, a->end_ms);
		a->status = ls_spark__num(json_object_get(e, "ExitCode"), 0) ? LS_SPARK_FAILED
									     : LS_SPARK_SUCCEEDED;
	} else if (!strcmp(ev, "SparkListenerJobStart")) {
		return on_job_start(a, e);
	} else if (!strcmp(ev, "SparkListenerJobEnd")) {
		return on_job_end(a, e);
	} else if (!strcmp(ev, "SparkListenerStageSubmitted")) {
		return on_stage(a, e, false);
	} else if (!strcmp(ev, "SparkListenerStageCompleted")) {
		return on_stage(a, e, true);
	} else if (!strcmp(ev, "SparkListenerTaskEnd")) {
		return on_task_end(a, e);
	} else if (dot && !strncmp(ev, "org.apache.spark.sql.execution.ui.", 34)) {
		return on_sql(a, dot + 1, e);
	}
	return 0;
}

int ls_spark__event(struct ls_spark *s, int app, const char *line, size_t len)
{
	struct ls_spark_app *a = &s->apps[app];
	json_error_t jerr;
	json_t *e;
	const char *ev;
	int err = 0;

	while (len && (line[len - 1] == '\n' || line[len - 1] == '\r'))
		len--;
	if (!len)
		return 0;
	a->events++;
	e = json_loadb(line, len, JSON_REJECT_DUPLICATES, &jerr);
	ev = json_string_value(json_object_get(e, "Event"));
	if (!ev) {
		a->bad_events++;
	} else {
		err = on_event(a, ev, e);
		if (err == -ENOSPC) {
			a->dropped++; /* over a cap, or memory ran out growing a table */
			err = 0;
		}
	}
	json_decref(e);
	return err;
}

void ls_spark__free_app(struct ls_spark_app *a)
{
	for (size_t i = 0; i < a->njobs; i++) {
		free(a->jobs[i].error);
		free(a->jobs[i].call_site);
		free(a->jobs[i].description);
		free(a->jobs[i].stage_ids);
	}
	for (size_t i = 0; i < a->nstages; i++) {
		free(a->stages[i].name);
		free(a->stages[i].failure);
		free(a->stages[i].dur_ms);
	}
	for (size_t i = 0; i < a->nexecs; i++) {
		struct ls_spark_exec *x = &a->execs[i];

		free(x->description);
		free(x->plan_text);
		free(x->final_text);
		free(x->error);
		json_decref(x->plan);
		json_decref(x->final_plan);
	}
	free(a->jobs);
	free(a->stages);
	free(a->execs);
	free(a->accums);
	ls_hashmap_release(&a->job_ix);
	ls_hashmap_release(&a->stage_ix);
	ls_hashmap_release(&a->exec_ix);
	ls_hashmap_release(&a->accum_ix);
	free(a->name);
	free(a->id);
	free(a->version);
	free(a->log);
}

static void free_action(struct ls_spark_action *x)
{
	free(x->name);
	free(x->call_site);
	free(x->description);
	free(x->error);
	free(x->jobs);
	free(x->stages);
	free(x->skipped);
	ls_spark__free_steps(x->steps, x->nsteps);
}

void ls_spark__free(struct ls_spark *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->napps; i++)
		ls_spark__free_app(&s->apps[i]);
	for (size_t i = 0; i < s->nactions; i++)
		free_action(&s->actions[i]);
	for (size_t i = 0; i < s->nnotes; i++)
		free(s->notes[i]);
	free(s->apps);
	free(s->actions);
	free(s->notes);
	free(s);
}
