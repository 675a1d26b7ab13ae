// SPDX-License-Identifier: MIT
/* The report data's memory section: each process's RSS timeline and the line that grew most. */
#include <stdlib.h>
#include "json_int.h"

#define LS_MAX_READINGS 4096
#define RSS_INTERVAL_S	0.01 /* the collector's background RSS sampling period (informative) */

/*
 * Readings kept for a timeline of at most LS_MAX_READINGS points: all of them when they fit,
 * else the first and last and, per time bucket, its lowest and highest reading in time order,
 * so that every peak and trough survives.
 */
static size_t pick_readings(const struct ls_mrss *r, size_t *keep)
{
	size_t n = 0, buckets = (LS_MAX_READINGS - 2) / 2;

	if (r->n <= LS_MAX_READINGS) {
		for (size_t i = 0; i < r->n; i++)
			keep[n++] = i;
		return n;
	}
	keep[n++] = 0;
	for (size_t b = 0; b < buckets; b++) {
		size_t lo = 1 + b * (r->n - 2) / buckets, hi = 1 + (b + 1) * (r->n - 2) / buckets;
		size_t mn = lo, mx = lo;

		for (size_t i = lo; i < hi; i++) {
			if (r->rss[i] < r->rss[mn])
				mn = i;
			if (r->rss[i] > r->rss[mx])
				mx = i;
		}
		if (lo >= hi)
			continue;
		keep[n++] = mn < mx ? mn : mx;
		if (mn != mx)
			keep[n++] = mn < mx ? mx : mn;
	}
	keep[n++] = r->n - 1;
	return n;
}

json_t *lsj_memory_object(const struct ls_model *m)
{
	json_t *o = json_object(), *procs = json_array(), *largest = json_null();
	const struct ls_mline *best = NULL;
	size_t *keep;

	for (size_t i = 0; i < m->nlines; i++) {
		const struct ls_mline *l = &m->lines[i];

		if (l->peak_mem >= 0 && l->mem_change > 0 &&
		    (!best || l->mem_change > best->mem_change))
			best = l;
	}
	if (best)
		largest = json_pack("{s:i, s:i, s:i, s:I}", "proc", best->proc, "src", best->file,
				    "line", best->line, "bytes", (json_int_t)best->mem_change);
	keep = malloc(LS_MAX_READINGS * sizeof(*keep));
	for (size_t k = 0; keep && k < m->nrss; k++) {
		const struct ls_mrss *r = &m->rss[k];
		json_t *p = json_object(), *t = json_array(), *rss = json_array(),
		       *src = json_array(), *line = json_array();
		size_t n = pick_readings(r, keep);

		for (size_t j = 0; j < n; j++) {
			size_t i = keep[j];

			json_array_append_new(t, ls_json__secs(r->t_ns[i]));
			json_array_append_new(rss, json_integer(r->rss[i]));
			json_array_append_new(src, r->file[i] >= 0 ? json_integer(r->file[i])
								   : json_null());
			json_array_append_new(line, r->file[i] >= 0 ? json_integer(r->line[i])
								    : json_null());
		}
		json_object_set_new(p, "proc", json_integer(r->proc));
		json_object_set_new(p, "peak", json_integer(r->peak));
		json_object_set_new(p, "readings", json_integer(r->n));
		json_object_set_new(p, "merged", json_boolean(n < r->n));
		json_object_set_new(p, "t", t);
		json_object_set_new(p, "rss", rss);
		json_object_set_new(p, "src", src);
		json_object_set_new(p, "line", line);
		json_array_append_new(procs, p);
	}
	free(keep);
	json_object_set_new(o, "interval_s", json_real(RSS_INTERVAL_S));
	json_object_set_new(o, "procs", procs);
	json_object_set_new(o, "largest", largest);
	return o;
}
