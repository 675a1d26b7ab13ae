/* SPDX-License-Identifier: MIT */
/*
 * Following Spark event logs (--spark-events PATH) while a job runs, or reading them once for
 * `report`: PATH is a log file, a rolling log's `eventlog_v2_<app>` directory, or a directory of
 * them (spark.eventLog.dir). A log is kept open from its first sight, so an `.inprogress` file
 * renamed when its application ends is read on to its end; a rolling log's parts are read in
 * their order as they appear. Files are opened with the given user's rights.
 */
#ifndef LS_SPARK_FOLLOW_H
#define LS_SPARK_FOLLOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ls_creds;
struct ls_spark_follow;

struct ls_spark_follow_ops {
	/* A new application's log (the file, or the rolling log's directory): its index app. */
	int (*app)(void *ctx, int app, const char *path, const char *codec);
	/* One complete line (one event) of it, without its newline. */
	int (*line)(void *ctx, int app, const char *line, size_t len);
	/* A log that cannot be read on (damaged, or a codec we do not decode): one line why. */
	void (*failed)(void *ctx, int app, const char *why);
	/* A single-file log renamed (`.inprogress` dropped when its application ended); or NULL. */
	void (*renamed)(void *ctx, int app, const char *path);
};

/*
 * since_s: in a directory, only logs modified at or after this time (CLOCK_REALTIME seconds;
 * -1: all of them); a path named itself is always read. creds NULL: our own rights.
 */
int ls_spark_follow__new(const char *const *paths, size_t n, int64_t since_s,
			 const struct ls_creds *creds, struct ls_spark_follow **out);
void ls_spark_follow__free(struct ls_spark_follow *f);

/*
 * Reads what the logs gained since the last call. last: the logs are complete (or the recording
 * ends): a last line without its newline is passed too. 0, or what an op returned (non-zero
 * stops the poll); a path that cannot be read is reported once through ls_warn.
 */
int ls_spark_follow__poll(struct ls_spark_follow *f, const struct ls_spark_follow_ops *ops,
			  void *ctx, bool last);

/* Bytes read from the logs so far; lines passed on. */
void ls_spark_follow__counts(const struct ls_spark_follow *f, uint64_t *bytes, uint64_t *lines);

#endif
