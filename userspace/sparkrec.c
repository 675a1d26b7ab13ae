// SPDX-License-Identifier: MIT
/* --spark-events while recording: event lines queued between flushes, then stored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "array.h"
#include "spark_follow.h"
#include "sparkrec.h"
#include "store.h"

/* Events the report does not read: counted, not stored (Spark writes "Event" first). */
static const char *const skip_events[] = {
	"SparkListenerTaskStart",	    "SparkListenerBlockManagerAdded",
	"SparkListenerBlockManagerRemoved", "SparkListenerExecutorMetricsUpdate",
	"SparkListenerEnvironmentUpdate",   "SparkListenerStageExecutorMetrics",
	"SparkListenerBlockUpdated",	    "SparkListenerTaskGettingResult",
};
#define STORE_MAX_EVENTS 4000000 /* per log; beyond, events are counted as dropped */
#define STORE_MAX_BYTES	 (2ull << 30)

struct pending {
	int log;
	int64_t seq;
	char *line;
	size_t len;
};

struct slog {
	char *path;
	const char *codec;
	char *note;  /* why it could not be read on, or NULL */
	bool stored; /* its spark_logs row is in the file */
	bool dirty;  /* the row changed since */
	int64_t seq, events, bytes, dropped;
};

struct ls_sparkrec {
	struct ls_spark_follow *follow;
	struct slog *logs;
	size_t nlogs;
	struct pending *q;
	size_t nq, capq, flushed; /* q[0, flushed) went into the open transaction */
	uint64_t skipped, dropped;
};

int ls_sparkrec__new(const char *const *paths, int n, int64_t since_s, const struct ls_creds *creds,
		     struct ls_sparkrec **out)
{
	struct ls_sparkrec *sr = calloc(1, sizeof(*sr));
	int err;

	if (!sr)
		return -ENOMEM;
	err = ls_spark_follow__new(paths, (size_t)n, since_s, creds, &sr->follow);
	if (err) {
		free(sr);
		return err;
	}
	*out = sr;
	return 0;
}

void ls_sparkrec__free(struct ls_sparkrec *sr)
{
	if (!sr)
		return;
	ls_spark_follow__free(sr->follow);
	for (size_t i = 0; i < sr->nlogs; i++) {
		free(sr->logs[i].path);
		free(sr->logs[i].note);
	}
	for (size_t i = 0; i < sr->nq; i++)
		free(sr->q[i].line);
	free(sr->logs);
	free(sr->q);
	free(sr);
}

static int on_app(void *ctx, int app, const char *path, const char *codec)
{
	struct ls_sparkrec *sr = ctx;
	struct slog *v = realloc(sr->logs, (sr->nlogs + 1) * sizeof(*v));

	if (!v)
		return -ENOMEM;
	sr->logs = v;
	if ((size_t)app != sr->nlogs)
		return -EINVAL; /* the follower numbers logs in order */
	memset(&v[app], 0, sizeof(*v));
	v[app].path = strdup(path);
	v[app].codec = codec;
	v[app].dirty = true;
	sr->nlogs++;
	return v[app].path ? 0 : -ENOMEM;
}

static bool skipped(const char *line, size_t len)
{
	static const char head[] = "{\"Event\":\"";

	if (len < sizeof(head) || memcmp(line, head, sizeof(head) - 1))
		return false;
	line += sizeof(head) - 1;
	len -= sizeof(head) - 1;
	for (size_t i = 0; i < sizeof(skip_events) / sizeof(skip_events[0]); i++) {
		size_t n = strlen(skip_events[i]);

		if (len > n && !memcmp(line, skip_events[i], n) && line[n] == '"')
			return true;
	}
	return false;
}

static int on_line(void *ctx, int app, const char *line, size_t len)
{
	struct ls_sparkrec *sr = ctx;
	struct slog *l = &sr->logs[app];
	struct pending *v;

	if (skipped(line, len)) {
		sr->skipped++;
		return 0;
	}
	if (l->events >= STORE_MAX_EVENTS || (uint64_t)l->bytes + len > STORE_MAX_BYTES) {
		sr->dropped++;
		l->dropped++;
		l->dirty = true;
		return 0;
	}
	v = ls_array_grow(sr->q, &sr->capq, sr->nq, sizeof(*v), 256);
	if (!v)
		return -ENOMEM;
	sr->q = v;
	v += sr->nq;
	v->line = malloc(len ?: 1);
	if (!v->line)
		return -ENOMEM;
	memcpy(v->line, line, len);
	v->len = len;
	v->log = app;
	v->seq = l->seq++;
	l->events++;
	l->bytes += (int64_t)len;
	sr->nq++;
	return 0;
}

static void on_failed(void *ctx, int app, const char *why)
{
	struct ls_sparkrec *sr = ctx;
	struct slog *l = &sr->logs[app];

	free(l->note);
	l->note = strdup(why);
	l->dirty = true;
}

static void on_renamed(void *ctx, int app, const char *path)
{
	struct ls_sparkrec *sr = ctx;
	struct slog *l = &sr->logs[app];
	char *p = strdup(path);

	if (!p)
		return; /* the old name stays */
	free(l->path);
	l->path = p;
	l->dirty = true;
}

int ls_sparkrec__poll(struct ls_sparkrec *sr, bool last)
{
	static const struct ls_spark_follow_ops ops = {on_app, on_line, on_failed, on_renamed};

	return ls_spark_follow__poll(sr->follow, &ops, sr, last);
}

int ls_sparkrec__flush(struct ls_sparkrec *sr, struct ls_store *store)
{
	int err = 0;

	for (size_t i = 0; !err && i < sr->nlogs; i++) {
		struct slog *l = &sr->logs[i];
		char note[160];
		const char *n = l->note;

		if (!l->dirty)
			continue;
		if (!n && l->dropped) {
			snprintf(note, sizeof(note),
				 "%lld events over the profile's limits were dropped",
				 (long long)l->dropped);
			n = note;
		}
		err = ls_store__put_spark_log(store, (int64_t)i + 1, l->path, l->codec, n);
	}
	for (sr->flushed = 0; !err && sr->flushed < sr->nq; sr->flushed++) {
		const struct pending *p = &sr->q[sr->flushed];

		err = ls_store__put_spark_event(store, p->log + 1, p->seq, p->line, p->len);
	}
	return err;
}

void ls_sparkrec__committed(struct ls_sparkrec *sr, bool ok)
{
	if (!ok)
		return; /* all of it again at the next flush */
	if (!sr->q)
		return; /* nothing was ever read: no queue to move */
	for (size_t i = 0; i < sr->nlogs; i++)
		sr->logs[i].dirty = false;
	for (size_t i = 0; i < sr->flushed; i++)
		free(sr->q[i].line);
	memmove(sr->q, sr->q + sr->flushed, (sr->nq - sr->flushed) * sizeof(*sr->q));
	sr->nq -= sr->flushed;
	sr->flushed = 0;
}

void ls_sparkrec__stats(const struct ls_sparkrec *sr, struct ls_sparkrec_stats *st)
{
	uint64_t lines;

	ls_spark_follow__counts(sr->follow, &st->bytes, &lines);
	st->logs = sr->nlogs;
	st->events = lines - sr->skipped - sr->dropped;
	st->skipped = sr->skipped;
	st->dropped = sr->dropped;
}
