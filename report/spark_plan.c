// SPDX-License-Identifier: MIT
/*
 * A Spark SQL plan (sparkPlanInfo) -> its main steps in data-flow order, each with a plain label,
 * the steps it reads from, its rows and its time. A node's time is its largest timing metric,
 * never a sum (metrics of one node overlap); the operators of a WholeStageCodegen pipeline run
 * fused, so the pipeline's duration is shown beside them as measured together. Wrappers that
 * only adapt data between operators are left out unless they were timed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "spark.h"

#define PLAN_MAX_DEPTH 200
#define PLAN_MAX_STEPS 2000
#define DETAIL_MAX     240

struct plan_ctx {
	const struct ls_spark_app *app;
	struct ls_spark_step *steps;
	size_t n, cap;
	int err;
};

static const struct {
	const char *prefix, *label;
} labels[] = {
	{"Scan", "Read data"},
	{"FileScan", "Read data"},
	{"BatchScan", "Read data"},
	{"LocalTableScan", "Read data"},
	{"InMemoryTableScan", "Read data"},
	{"HiveTableScan", "Read data"},
	{"MicroBatchScan", "Read data"},
	{"ContinuousScan", "Read data"},
	{"RowDataSourceScan", "Read data"},
	{"Range", "Generate rows"},
	{"Generate", "Generate rows"},
	{"Filter", "Keep matching rows"},
	{"BroadcastHashJoin", "Combine tables"},
	{"SortMergeJoin", "Combine tables"},
	{"ShuffledHashJoin", "Combine tables"},
	{"BroadcastNestedLoopJoin", "Combine tables"},
	{"CartesianProduct", "Combine tables"},
	{"HashAggregate", "Group and summarise"},
	{"SortAggregate", "Group and summarise"},
	{"ObjectHashAggregate", "Group and summarise"},
	{"TakeOrderedAndProject", "Take a limited result"},
	{"Sort", "Sort rows"},
	{"BroadcastExchange", "Share a table with workers"},
	{"Exchange", "Move data between workers"},
	{"ShuffleExchange", "Move data between workers"},
	{"ReusedExchange", "Reuse data moved earlier"},
	{"BatchEvalPython", "Run Python code"},
	{"ArrowEvalPython", "Run Python code"},
	{"FlatMapGroupsInPandas", "Run Python code"},
	{"MapInPandas", "Run Python code"},
	{"MapInArrow", "Run Python code"},
	{"PythonMapInArrow", "Run Python code"},
	{"Window", "Calculate over related rows"},
	{"Union", "Combine input rows"},
	{"CollectLimit", "Take a limited result"},
	{"GlobalLimit", "Take a limited result"},
	{"LocalLimit", "Take a limited result"},
	{"Execute ", "Write result"},
	{"WriteFiles", "Write result"},
	{"WriteToDataSourceV2", "Write result"},
	{"AppendData", "Write result"},
	{"OverwriteByExpression", "Write result"},
	{"Project", "Calculate columns"},
	{"Expand", "Process rows"},
};

/* Nodes that adapt data between operators: left out unless they were timed. */
static const char *const wrappers[] = {
	"AdaptiveSparkPlan",	"InputAdapter",	    "ShuffleQueryStage", "BroadcastQueryStage",
	"TableCacheQueryStage", "ResultQueryStage", "AQEShuffleRead",	 "CustomShuffleReader",
	"ColumnarToRow",	"RowToColumnar",    "Project",		 "WholeStageCodegen",
};

/* Steps whose output has the rows of their only input. */
static const char *const row_keeping[] = {
	"Project",	     "Sort",	       "Exchange",
	"ColumnarToRow",     "AQEShuffleRead", "CustomShuffleReader",
	"BroadcastExchange", "WriteFiles",     "Window",
};

static bool starts(const char *s, const char *p)
{
	return !strncmp(s, p, strlen(p));
}

static bool in_list(const char *name, const char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (starts(name, v[i]))
			return true;
	return false;
}

static const char *label_of(const char *name)
{
	for (size_t i = 0; i < sizeof(labels) / sizeof(labels[0]); i++)
		if (starts(name, labels[i].prefix))
			return labels[i].label;
	return "Process rows";
}

/* The summed value of an accumulator; -1 when no task or driver update reached it. */
static int64_t accum(const struct ls_spark_app *a, json_t *metric, bool peak)
{
	int64_t id = ls_spark__num(json_object_get(metric, "accumulatorId"), -1);
	uint64_t ix;

	if (id < 0 || !ls_hashmap__get(&a->accum_ix, (uint64_t)id, &ix))
		return -1;
	return peak ? a->accums[ix].max : a->accums[ix].sum;
}

struct node_metrics {
	int64_t rows, time_ns, peak;
};

static struct node_metrics metrics_of(const struct ls_spark_app *a, json_t *node)
{
	struct node_metrics r = {-1, -1, -1};
	json_t *m;
	size_t i;

	json_array_foreach(json_object_get(node, "metrics"), i, m)
	{
		const char *name = json_string_value(json_object_get(m, "name"));
		const char *type = json_string_value(json_object_get(m, "metricType"));
		int64_t v;

		if (!name || !type)
			continue;
		if (!strcmp(name, "number of output rows") && (v = accum(a, m, false)) >= 0)
			r.rows = v;
		else if (!strcmp(name, "peak memory") && (v = accum(a, m, true)) >= 0)
			r.peak = v;
		else if (!strcmp(type, "timing") && (v = accum(a, m, false)) >= 0 &&
			 v < INT64_MAX / 1000000)
			r.time_ns = v * 1000000 > r.time_ns ? v * 1000000 : r.time_ns;
		else if (!strcmp(type, "nsTiming") && (v = accum(a, m, false)) > r.time_ns)
			r.time_ns = v;
	}
	return r;
}

/* A node's name without trailing spaces ("Scan parquet " is how Spark names one). */
static char *name_of(json_t *node)
{
	const char *s = json_string_value(json_object_get(node, "nodeName"));
	size_t n = s ? strlen(s) : 0;

	while (n && s[n - 1] == ' ')
		n--;
	return n ? strndup(s, n > 200 ? 200 : n) : strdup("?");
}

static int64_t pipeline_id(const char *name)
{
	const char *p = strchr(name, '(');

	return p ? strtoll(p + 1, NULL, 10) : 0;
}

struct outs {
	int *v;
	size_t n;
};

static void outs_add(struct plan_ctx *c, struct outs *o, const int *v, size_t n)
{
	int *w = n ? realloc(o->v, (o->n + n) * sizeof(*w)) : o->v;

	if (n && !w) {
		c->err = -ENOMEM;
		return;
	}
	if (n)
		memcpy(w + o->n, v, n * sizeof(*w));
	o->v = w;
	o->n += n;
}

static void add_step(struct plan_ctx *c, json_t *node, const char *name,
		     const struct node_metrics *nm, struct outs *in, int64_t pipe, int64_t pipe_ns,
		     struct outs *out)
{
	struct ls_spark_step *v, *st;
	const char *simple = json_string_value(json_object_get(node, "simpleString"));
	int me;

	if (c->n >= PLAN_MAX_STEPS) {
		outs_add(c, out, in->v, in->n);
		return;
	}
	v = ls_array_grow(c->steps, &c->cap, c->n, sizeof(*v), 16);
	if (!v) {
		c->err = -ENOMEM;
		return;
	}
	c->steps = v;
	st = &v[c->n];
	memset(st, 0, sizeof(*st));
	st->label = strdup(label_of(name));
	st->detail = strndup(simple ? simple : name, DETAIL_MAX);
	st->rows = nm->rows;
	st->time_ns = nm->time_ns;
	st->peak_mem = nm->peak;
	st->pipeline = pipe;
	st->pipeline_ns = pipe_ns;
	st->from = in->v; /* it takes the inputs' numbers */
	st->nfrom = in->n;
	in->v = NULL;
	in->n = 0;
	if (st->rows < 0 && st->nfrom == 1 &&
	    in_list(name, row_keeping, sizeof(row_keeping) / sizeof(row_keeping[0])) &&
	    v[st->from[0] - 1].rows >= 0) {
		st->rows = v[st->from[0] - 1].rows;
		st->rows_from_input = true;
	}
	if (!st->label || !st->detail)
		c->err = -ENOMEM;
	me = (int)++c->n;
	outs_add(c, out, &me, 1);
}

/* Walks node's inputs first; out gets the numbers of the steps that stand for its output. */
static void walk(struct plan_ctx *c, json_t *node, int depth, int64_t pipe, int64_t pipe_ns,
		 struct outs *out)
{
	struct outs in = {0};
	struct node_metrics nm;
	json_t *child;
	char *name;
	size_t i;

	if (depth > PLAN_MAX_DEPTH || !json_is_object(node) || c->err)
		return;
	name = name_of(node);
	if (!name) {
		c->err = -ENOMEM;
		return;
	}
	nm = metrics_of(c->app, node);
	if (starts(name, "WholeStageCodegen")) {
		pipe = pipeline_id(name);
		pipe_ns = nm.time_ns;
	} else if (starts(name, "InputAdapter")) {
		pipe = pipe_ns = -1; /* the pipeline's input: computed outside it */
	}
	json_array_foreach(json_object_get(node, "children"), i, child)
	{
		struct outs o = {0};

		walk(c, child, depth + 1, pipe, pipe_ns, &o);
		outs_add(c, &in, o.v, o.n);
		free(o.v);
	}
	if (starts(name, "WholeStageCodegen") ||
	    (in_list(name, wrappers, sizeof(wrappers) / sizeof(wrappers[0])) && nm.time_ns <= 0))
		outs_add(c, out, in.v, in.n);
	else
		add_step(c, node, name, &nm, &in, pipe, pipe_ns, out);
	free(in.v);
	free(name);
}

int ls_spark__plan_steps(const struct ls_spark_app *app, json_t *plan, struct ls_spark_step **out,
			 size_t *n)
{
	struct plan_ctx c = {.app = app};
	struct outs o = {0};

	walk(&c, plan, 0, -1, -1, &o);
	free(o.v);
	if (c.err) {
		ls_spark__free_steps(c.steps, c.n);
		return c.err;
	}
	*out = c.steps;
	*n = c.n;
	return 0;
}

void ls_spark__free_steps(struct ls_spark_step *steps, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(steps[i].label);
		free(steps[i].detail);
		free(steps[i].from);
	}
	free(steps);
}
