// SPDX-License-Identifier: MIT
/*
 * Spark event-log reader on the four real logs in tests/fixtures/spark/real (their counts
 * computed from the files with Python's json module, see its README) and on hand-written events
 * for what they lack: a failed job and execution, damage and hostile values.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "spark.h"

#define REAL	"tests/fixtures/spark/real/"
#define PYPI	REAL "eventlog_v2_spark-bcec39f6201b42b9925124595baad260"
#define TAXI	REAL "eventlog_v2_spark-110be3a8424d4a2789cb88134418217b"
#define SPARKPI REAL "eventlog_v2_local-1766844910796"
#define KAFKA	REAL "local-1596020211915"

static struct ls_spark *read_one(const char *path)
{
	struct ls_spark *s = ls_spark__new();

	assert_non_null(s);
	assert_int_equal(ls_spark__read_paths(s, &path, 1), 0);
	assert_int_equal(ls_spark__finish(s), 0);
	return s;
}

static size_t ran_stages(const struct ls_spark_app *a)
{
	size_t n = 0;

	for (size_t i = 0; i < a->nstages; i++)
		n += a->stages[i].submit_ms > 0;
	return n;
}

static int64_t tasks(const struct ls_spark_app *a)
{
	int64_t n = 0;

	for (size_t i = 0; i < a->nstages; i++)
		n += a->stages[i].cost.tasks;
	return n;
}

static void test_python_pi(void **state)
{
	struct ls_spark *s = read_one(PYPI);
	const struct ls_spark_app *a = &s->apps[0];
	const struct ls_spark_action *x = &s->actions[0];

	assert_int_equal(s->napps, 1);
	assert_string_equal(a->name, "PythonPi");
	assert_string_equal(a->version, "3.5.3");
	assert_string_equal(a->codec, "plain");
	assert_int_equal(a->status, LS_SPARK_SUCCEEDED);
	assert_int_equal(a->njobs, 1);
	assert_int_equal(ran_stages(a), 1);
	assert_int_equal(tasks(a), 2);
	assert_int_equal(a->nexecs, 0);
	assert_int_equal(a->bad_events, 0);
	assert_int_equal(s->nactions, 1);
	assert_string_equal(x->name, "reduce");
	assert_string_equal(x->call_site, "reduce at /opt/spark/examples/src/main/python/pi.py:42");
	assert_int_equal(x->exec_id, -1);
	assert_int_equal(x->status, LS_SPARK_SUCCEEDED);
	assert_int_equal(x->end_ms - x->start_ms, 1750896418574 - 1750896417033);
	assert_int_equal(x->cost.run_ms, 924);
	assert_int_equal(x->cost.cpu_ns, 79853525);
	assert_int_equal(x->nstages, 1);
	assert_int_equal(x->nskipped, 0);
	assert_int_equal(x->nsteps, 0); /* an RDD action has no SQL plan */
	ls_spark__free(s);
}

static void test_taxi(void **state)
{
	struct ls_spark *s = read_one(TAXI);
	const struct ls_spark_app *a = &s->apps[0];
	const struct ls_spark_action *count = NULL, *write = NULL;
	size_t skipped = 0, execs_final = 0;

	assert_int_equal(a->njobs, 6);
	assert_int_equal(ran_stages(a), 6);
	assert_int_equal(tasks(a), 39);
	assert_int_equal(a->nexecs, 3);
	for (size_t i = 0; i < a->nexecs; i++)
		execs_final += a->execs[i].final_plan != NULL;
	assert_int_equal(execs_final, 2); /* executions 1 and 2 had AQE updates */
	/* job 0 (reading the parquet schema) has no execution: 1 + 3 actions */
	assert_int_equal(s->nactions, 4);
	for (size_t i = 0; i < s->nactions; i++) {
		skipped += s->actions[i].nskipped;
		if (s->actions[i].exec_id == 1)
			count = &s->actions[i];
		if (s->actions[i].exec_id == 2)
			write = &s->actions[i];
		assert_null(s->actions[i].match);
	}
	assert_int_equal(skipped, 2); /* stages 3 and 6 */
	assert_non_null(count);
	assert_string_equal(count->name, "count");
	assert_null(count->call_site); /* DataFrame actions carry none */
	assert_int_equal(count->njobs, 2);
	assert_int_equal(count->nskipped, 1);
	assert_int_equal(count->skipped[0], 3);
	/* the final plan: scan -> partial aggregate -> exchange -> final aggregate */
	assert_int_equal(count->nsteps, 4);
	assert_string_equal(count->steps[0].label, "Read data");
	assert_int_equal(count->steps[0].rows, 125660481);
	assert_int_equal(count->steps[0].time_ns, 14511000000LL);
	assert_int_equal(count->steps[0].nfrom, 0);
	assert_string_equal(count->steps[1].label, "Group and summarise");
	assert_int_equal(count->steps[1].rows, 17);
	assert_int_equal(count->steps[1].pipeline, 1);
	assert_int_equal(count->steps[1].pipeline_ns, 14794000000LL);
	assert_int_equal(count->steps[1].nfrom, 1);
	assert_int_equal(count->steps[1].from[0], 1);
	assert_string_equal(count->steps[2].label, "Move data between workers");
	assert_true(count->steps[2].rows_from_input);
	assert_int_equal(count->steps[2].rows, 17);
	assert_int_equal(count->steps[2].time_ns, 37000000); /* the largest of its timings */
	assert_int_equal(count->steps[2].pipeline, -1);
	assert_string_equal(count->steps[3].label, "Group and summarise");
	assert_int_equal(count->steps[3].rows, 1);
	assert_int_equal(count->steps[3].from[0], 3);
	assert_non_null(write);
	assert_string_equal(write->steps[write->nsteps - 1].label, "Write result");
	ls_spark__free(s);
}

static void test_spark_pi_and_kafka(void **state)
{
	struct ls_spark *s = read_one(SPARKPI);
	size_t with_jobs = 0;

	assert_string_equal(s->apps[0].name, "<script>alert('XSS')</script>");
	assert_string_equal(s->apps[0].version, "4.2.0-SNAPSHOT");
	assert_int_equal(s->apps[0].njobs, 1);
	assert_int_equal(tasks(&s->apps[0]), 2);
	assert_int_equal(s->nactions, 1);
	assert_string_equal(s->actions[0].call_site ?: "", "");
	assert_string_equal(s->actions[0].name, "job 0");
	ls_spark__free(s);

	s = read_one(KAFKA);
	assert_string_equal(s->apps[0].name, "StructuredKafkaWordCount");
	assert_int_equal(s->apps[0].njobs, 8);
	assert_int_equal(ran_stages(&s->apps[0]), 16);
	assert_int_equal(tasks(&s->apps[0]), 24);
	assert_int_equal(s->apps[0].nexecs, 24);
	assert_int_equal(s->nactions, 24); /* one per execution; the jobs go with theirs */
	for (size_t i = 0; i < s->nactions; i++) {
		const struct ls_spark_action *x = &s->actions[i];

		with_jobs += x->njobs > 0;
		if (x->njobs)
			assert_string_equal(x->call_site,
					    "start at StructuredKafkaWordCount.scala:86");
		assert_int_equal(x->status, LS_SPARK_SUCCEEDED);
		assert_true(x->nsteps > 0);
	}
	assert_int_equal(with_jobs, 8);
	ls_spark__free(s);
}

static void feed(struct ls_spark *s, int app, const char *line)
{
	assert_int_equal(ls_spark__event(s, app, line, strlen(line)), 0);
}

static void test_failed_and_hostile(void **state)
{
	struct ls_spark *s = ls_spark__new();
	int app = ls_spark__begin_app(s, "fixture", "plain");
	const struct ls_spark_action *x;

	assert_int_equal(app, 0);
	feed(s, app,
	     "{\"Event\":\"SparkListenerApplicationStart\",\"App Name\":\"a\",\"Timestamp\":1000}");
	feed(s, app,
	     "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionStart\","
	     "\"executionId\":5,\"description\":\"collect at /x/job.py:7\",\"time\":2000,"
	     "\"physicalPlanDescription\":\"== Physical Plan ==\",\"sparkPlanInfo\":"
	     "{\"nodeName\":\"Filter\",\"simpleString\":\"Filter (a > 1)\",\"children\":[],"
	     "\"metrics\":[{\"name\":\"number of output rows\",\"accumulatorId\":9,"
	     "\"metricType\":\"sum\"}]}}");
	feed(s, app,
	     "{\"Event\":\"SparkListenerJobStart\",\"Job ID\":1,\"Submission Time\":2100,"
	     "\"Stage IDs\":[1, -4, \"x\"],\"Properties\":{\"spark.sql.execution.id\":\"5\","
	     "\"callSite.short\":\"collect at /x/job.py:7\"}}");
	feed(s, app,
	     "{\"Event\":\"SparkListenerStageSubmitted\",\"Stage Info\":{\"Stage ID\":1,"
	     "\"Stage Attempt ID\":0,\"Stage Name\":\"collect\",\"Submission Time\":2200}}");
	/* a task with hostile metrics: negative and absurd values are not added */
	feed(s, app,
	     "{\"Event\":\"SparkListenerTaskEnd\",\"Stage ID\":1,\"Stage Attempt ID\":0,"
	     "\"Task End Reason\":{\"Reason\":\"ExceptionFailure\"},\"Task Info\":{"
	     "\"Launch Time\":2300,\"Finish Time\":2400,\"Failed\":true,\"Accumulables\":"
	     "[{\"ID\":9,\"Update\":\"12\"},{\"ID\":9,\"Update\":-5}]},\"Task Metrics\":{"
	     "\"Executor Run Time\":-100,\"Executor CPU Time\":9223372036854775807,"
	     "\"Disk Bytes Spilled\":\"7\"}}");
	feed(s, app,
	     "{\"Event\":\"SparkListenerStageCompleted\",\"Stage Info\":{\"Stage ID\":1,"
	     "\"Stage Attempt ID\":0,\"Completion Time\":2500,\"Failure Reason\":\"boom\"}}");
	feed(s, app,
	     "{\"Event\":\"SparkListenerJobEnd\",\"Job ID\":1,\"Completion Time\":2600,"
	     "\"Job Result\":{\"Result\":\"JobFailed\",\"Exception\":{\"Message\":"
	     "\"Job aborted\\nat stack\"}}}");
	feed(s, app,
	     "{\"Event\":\"org.apache.spark.sql.execution.ui.SparkListenerSQLExecutionEnd\","
	     "\"executionId\":5,\"time\":2700,\"errorMessage\":\"\"}");
	/* damage: not JSON, no Event, duplicate keys, a deep plan */
	feed(s, app, "{\"Event\":");
	feed(s, app, "[1,2,3]");
	feed(s, app, "{\"Event\":\"SparkListenerJobEnd\",\"Event\":\"x\"}");
	assert_int_equal(ls_spark__finish(s), 0);
	assert_int_equal(s->apps[0].bad_events, 3);
	assert_int_equal(s->nactions, 1);
	x = &s->actions[0];
	assert_int_equal(x->status, LS_SPARK_FAILED);
	assert_string_equal(x->error, "Job aborted"); /* its first line */
	assert_int_equal(x->end_ms - x->start_ms, 700);
	assert_int_equal(x->cost.tasks, 1);
	assert_int_equal(x->cost.failed_tasks, 1);
	assert_int_equal(x->cost.run_ms, 0);
	assert_int_equal(x->cost.cpu_ns, 0);
	assert_int_equal(x->cost.disk_spill, 7);
	assert_int_equal(x->nsteps, 1);
	assert_string_equal(x->steps[0].label, "Keep matching rows");
	assert_int_equal(x->steps[0].rows, 12);
	assert_int_equal(s->apps[0].stages[0].status, LS_SPARK_FAILED);
	ls_spark__free(s);
}

static void test_deep_plan(void **state)
{
	struct ls_spark *s = ls_spark__new();
	int app = ls_spark__begin_app(s, "deep", "plain");
	size_t depth = 1000, cap = depth * 64 + 256, n;
	char *line = malloc(cap);

	assert_non_null(line);
	n = (size_t)snprintf(line, cap,
			     "{\"Event\":\"org.apache.spark.sql.execution.ui."
			     "SparkListenerSQLExecutionStart\",\"executionId\":1,\"time\":5,"
			     "\"sparkPlanInfo\":");
	for (size_t i = 0; i < depth; i++)
		n += (size_t)snprintf(line + n, cap - n,
				      "{\"nodeName\":\"Filter\",\"metrics\":[],\"children\":[");
	for (size_t i = 0; i < depth; i++)
		n += (size_t)snprintf(line + n, cap - n, "]}");
	snprintf(line + n, cap - n, "}");
	feed(s, app, line);
	assert_int_equal(ls_spark__finish(s), 0);
	assert_int_equal(s->nactions, 1);
	assert_true(s->actions[0].nsteps > 0 && s->actions[0].nsteps <= 201);
	free(line);
	ls_spark__free(s);
}

static void test_directory(void **state)
{
	const char *dir = REAL;
	struct ls_spark *s = ls_spark__new();
	size_t names = 0;

	assert_int_equal(ls_spark__read_paths(s, &dir, 1), 0);
	assert_int_equal(ls_spark__finish(s), 0);
	/* the four logs; the README beside them is not one */
	assert_int_equal(s->napps, 4);
	for (size_t i = 0; i < s->napps; i++)
		names += s->apps[i].name != NULL;
	assert_int_equal(names, 4);
	assert_int_equal(s->nactions, 1 + 4 + 1 + 24);
	ls_spark__free(s);
}

/* A log in a codec we do not decode, and a path that is not there: refused, one line each. */
static void test_refused(void **state)
{
	const char *readme = "tests/fixtures/spark/real/README.md",
		   *none = "/nonexistent/spark.log";
	struct ls_spark *s = ls_spark__new();

	assert_int_equal(ls_spark__read_paths(s, &none, 1), -ENOENT);
	assert_int_equal(ls_spark__read_paths(s, &readme, 1), -EINVAL); /* "codec md" */
	ls_spark__free(s);

	/* in a directory: an lzf log is refused too; a file that is no log is skipped */
	{
		char dir[] = "/tmp/ls-spark-XXXXXX", path[64];
		const char *d = dir;
		FILE *f;

		assert_non_null(mkdtemp(dir));
		snprintf(path, sizeof(path), "%s/app-1.lzf", dir);
		assert_non_null(f = fopen(path, "w"));
		fputs("ZV\1", f);
		fclose(f);
		snprintf(path, sizeof(path), "%s/notes.txt", dir);
		assert_non_null(f = fopen(path, "w"));
		fclose(f);
		s = ls_spark__new();
		assert_int_equal(ls_spark__read_paths(s, &d, 1), -EINVAL);
		ls_spark__free(s);
		snprintf(path, sizeof(path), "%s/app-1.lzf", dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/notes.txt", dir);
		unlink(path);
		rmdir(dir);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_python_pi),
		cmocka_unit_test(test_taxi),
		cmocka_unit_test(test_spark_pi_and_kafka),
		cmocka_unit_test(test_failed_and_hostile),
		cmocka_unit_test(test_deep_plan),
		cmocka_unit_test(test_directory),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
