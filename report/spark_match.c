// SPDX-License-Identifier: MIT
/*
 * Anchoring Spark actions to driver lines. PySpark names the user's line in the job's call site
 * ("collect at /app/job.py:42", the path as the driver saw it); without one (DataFrame actions
 * report "count at NativeMethodAccessorImpl.java:0") the line is the one the driver's thread
 * spent the action's window on, from the profile's timeline: Spark's epoch milliseconds are put
 * on the profile's clock through the wall clock it read at its start (meta wall_start_ns).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "linescope.h"
#include "model.h"
#include "spark.h"
#include "profile.h"

/* A time match needs the line to cover this share of the window (percent). */
#define TIME_MATCH_PCT 50
/*
 * Spark's times are milliseconds, put on the profile's clock through two clocks read a moment
 * apart: a window shorter than this cannot be placed on the timeline, so it is not matched by time
 */
#define TIME_MATCH_MIN_NS (10 * 1000000LL)

/* "fn at FILE:LINE" -> FILE (malloc'd) and LINE; NULL when it names no line. */
static char *parse_site(const char *site, int *line)
{
	const char *at = site ? strstr(site, " at ") : NULL, *colon;
	char *end;
	long v;

	if (!at)
		return NULL;
	at += 4;
	colon = strrchr(at, ':');
	if (!colon || colon == at)
		return NULL;
	v = strtol(colon + 1, &end, 10);
	if (*end || end == colon + 1 || v <= 0 || v > 10000000)
		return NULL;
	*line = (int)v;
	return strndup(at, colon - at);
}

/* The notebook line of line of a cell's own file (index f), or -1. */
static int notebook_line(const struct ls_model *m, int f, int line, int *nb)
{
	for (size_t i = 0; i < m->nfiles; i++)
		for (size_t k = 0; k < m->files[i].ncells; k++) {
			const struct ls_mcell *c = &m->files[i].cells[k];

			if (c->file == f && line <= c->nlines) {
				*nb = (int)i;
				return c->first + line - 1;
			}
		}
	return -1;
}

/* The file of path (a sampled one first), with line mapped into its notebook for a cell. */
static int find_file(const struct ls_model *m, const char *path, int *line)
{
	int best = -1;

	for (size_t i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].path, path) && (best < 0 || m->files[i].used))
			best = (int)i;
	if (best >= 0 && !strcmp(m->files[best].kind, "cell")) {
		int nb, l = notebook_line(m, best, *line, &nb);

		if (l < 0)
			return -1;
		*line = l;
		best = nb;
	}
	return best;
}

/* The process that spent the most time on the line; else one with a line of the file. */
static int proc_of(const struct ls_model *m, int file, int line)
{
	int64_t best_ns = -1;
	int best = -1;

	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];

		if (l->file != file)
			continue;
		if (l->line == line && l->own_ns > best_ns) {
			best_ns = l->own_ns;
			best = l->proc;
		} else if (best < 0) {
			best = l->proc;
		}
	}
	return best;
}

typedef void (*tick_fn)(void *ctx, const struct ls_mtick *t, int file, int line, int64_t ns);

/*
 * Calls fn for each tick with a project line inside [t0, t1), with the part of it inside not
 * covered by its thread's earlier ticks: an on-CPU tick stands for one period ending at its
 * sample, and timer jitter makes neighbours overlap, so counted once a thread's ticks never add
 * up to more than the window. Each thread's first tick ending after t0 is found by bisection.
 */
static void window_ticks(const struct ls_model *m, const struct ls_mruns *r, int64_t t0, int64_t t1,
			 tick_fn fn, void *ctx)
{
	const struct ls_mstacks *S = m->stacks;

	for (size_t k = 0; k < r->n; k++) {
		size_t lo = r->begin[k], hi = r->begin[k + 1];
		int64_t until = INT64_MIN;

		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (S->ticks[mid].t_ns <= t0)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (size_t i = lo; i < r->begin[k + 1]; i++) {
			const struct ls_mtick *t = &S->ticks[i];
			int64_t a = t->t_ns - t->dur_ns, b = t->t_ns;
			int file, line;

			if (a >= t1)
				break;
			if (a < until)
				a = until;
			if (b > until)
				until = b;
			if (a < t0)
				a = t0;
			if (b > t1)
				b = t1;
			if (b > a && ls_model__own_line(m, &S->stacks[t->stack], &file, &line))
				fn(ctx, t, file, line, b - a);
		}
	}
}

struct by_line {
	struct ls_hashmap acc; /* (thread, file, line) -> ns */
};

static void add_by_line(void *ctx, const struct ls_mtick *t, int file, int line, int64_t ns)
{
	struct by_line *c = ctx;
	uint64_t *slot;

	if (line >= (1 << 21) || file >= (1 << 21))
		return;
	slot = ls_hashmap__slot(
		&c->acc, (uint64_t)t->thread << 42 | (uint64_t)file << 21 | (uint64_t)line, 0);
	if (slot)
		*slot += (uint64_t)ns;
}

/* The line a thread spent most of [t0, t1) on, if it covers TIME_MATCH_PCT of it. */
static bool match_time(const struct ls_model *m, const struct ls_mruns *r, int64_t t0, int64_t t1,
		       struct ls_spark_action *x)
{
	struct by_line c;
	uint64_t key, v, best_key = 0, best = 0;

	ls_hashmap_init(&c.acc);
	window_ticks(m, r, t0, t1, add_by_line, &c);
	for (size_t it = 0; ls_hashmap__next(&c.acc, &it, &key, &v);)
		if (v > best) {
			best = v;
			best_key = key;
		}
	ls_hashmap_release(&c.acc);
	if (!best || best * 100 < (uint64_t)(t1 - t0) * TIME_MATCH_PCT)
		return false;
	x->proc = m->stacks->threads[best_key >> 42].proc;
	x->file = (int)(best_key >> 21 & ((1 << 21) - 1));
	x->line = (int)(best_key & ((1 << 21) - 1));
	x->match = "time";
	return true;
}

struct on_line {
	const struct ls_model *m;
	struct ls_spark_action *x;
};

static void add_driver(void *ctx, const struct ls_mtick *t, int file, int line, int64_t ns)
{
	struct on_line *c = ctx;

	if (c->m->stacks->threads[t->thread].proc != c->x->proc || file != c->x->file ||
	    line != c->x->line)
		return;
	c->x->driver_ns += ns;
	/* blocked (Py4J, sockets, sleeps, the GIL): waiting for a CPU is the machine's load */
	if (t->kind == LS_CLASS_WAIT || t->kind == LS_CLASS_GIL_WAIT)
		c->x->driver_wait_ns += ns;
}

/* The matched line's sampled time inside [t0, t1) in its process, and the part it was blocked. */
static void driver_time(const struct ls_model *m, const struct ls_mruns *r, int64_t t0, int64_t t1,
			struct ls_spark_action *x)
{
	struct on_line c = {m, x};

	x->driver_ns = x->driver_wait_ns = 0;
	window_ticks(m, r, t0, t1, add_driver, &c);
}

void ls_spark__match(struct ls_spark *s, const struct ls_model *m)
{
	int64_t wall0 =
		ls_profile__meta_num(ls_model__meta(m, "wall_start_ns"), -1, LS_META_WALL_MAX);
	bool timeline = m->stacks && m->stacks->timeline;
	size_t by_time = 0, untimed = 0, outside = 0, brief = 0;
	struct ls_mruns r = {0};

	if (timeline && ls_mstacks__runs(m->stacks, &r))
		timeline = false; /* out of memory: matched by call site only */

	for (size_t i = 0; i < s->nactions; i++) {
		struct ls_spark_action *x = &s->actions[i];
		const struct ls_spark_app *a = &s->apps[x->app];
		int64_t end = x->end_ms >= 0 ? x->end_ms : a->last_ms, t0 = -1, t1 = -1;
		int line = 0;
		char *path = parse_site(x->call_site, &line);

		if (path && (x->file = find_file(m, path, &line)) >= 0) {
			x->line = line;
			x->match = "call site";
			x->proc = proc_of(m, x->file, line);
		}
		free(path);
		if (wall0 > 0 && x->start_ms > 0 && end >= x->start_ms) {
			t0 = x->start_ms * 1000000 - wall0;
			t1 = end * 1000000 - wall0;
		}
		if (t1 < 0 || t0 > (int64_t)(m->elapsed_s * 1e9)) {
			outside++; /* the log is of another run than the profile */
			t0 = t1 = -1;
		}
		if (t0 < t1 && timeline) {
			if (!x->match && t1 - t0 < TIME_MATCH_MIN_NS)
				brief++;
			else if (!x->match && match_time(m, &r, t0, t1, x))
				by_time++;
			if (x->proc >= 0)
				driver_time(m, &r, t0, t1, x);
		} else if (!x->match) {
			untimed++;
		}
	}
	free(r.begin);
	if (by_time)
		ls_spark__note(
			s,
			"%zu action%s had no call site naming a profiled line and %s matched "
			"by time: the driver line that covered most of the window",
			by_time, by_time == 1 ? "" : "s", by_time == 1 ? "was" : "were");
	if (brief)
		ls_spark__note(
			s,
			"%zu action%s without a call site naming a profiled line lasted under "
			"10 ms, too short to place on the profile's clock: not matched by time",
			brief, brief == 1 ? "" : "s");
	if (outside)
		ls_spark__note(
			s,
			"%zu action%s ran outside the recording (the logs' clock against the "
			"profile's): not matched by time, driver time unknown",
			outside, outside == 1 ? "" : "s");
	if (untimed && !timeline)
		ls_spark__note(
			s,
			"%zu action%s could not be matched by time: the profile was recorded "
			"without --timeline (record with --spark-events, which keeps it)",
			untimed, untimed == 1 ? "" : "s");
}
