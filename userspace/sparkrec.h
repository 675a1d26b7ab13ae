/* SPDX-License-Identifier: MIT */
/*
 * --spark-events while recording: the logs' new events, read at each flush and stored in the
 * profile's spark_logs and spark_events tables (docs/profile-schema.md) as Spark wrote them,
 * less the events the report never reads (task starts, block managers, executor heartbeats,
 * the environment), which are counted instead. `report` folds them into actions.
 */
#ifndef LS_SPARKREC_H
#define LS_SPARKREC_H

#include <stdbool.h>
#include <stdint.h>

struct ls_creds;
struct ls_store;
struct ls_sparkrec;

/* since_s: in a directory, logs modified from then on (the recording's start, CLOCK_REALTIME). */
int ls_sparkrec__new(const char *const *paths, int n, int64_t since_s, const struct ls_creds *creds,
		     struct ls_sparkrec **out);
void ls_sparkrec__free(struct ls_sparkrec *sr);

/* Reads what the logs gained (last: to their ends). 0 or -ENOMEM. */
int ls_sparkrec__poll(struct ls_sparkrec *sr, bool last);
/* Writes what was read since the last committed flush, inside the store's transaction. */
int ls_sparkrec__flush(struct ls_sparkrec *sr, struct ls_store *store);
/* The transaction committed (ok) or was rolled back: what it held is forgotten, or kept. */
void ls_sparkrec__committed(struct ls_sparkrec *sr, bool ok);

struct ls_sparkrec_stats {
	uint64_t logs, bytes, events, skipped, dropped;
};
void ls_sparkrec__stats(const struct ls_sparkrec *sr, struct ls_sparkrec_stats *st);

#endif
