/* SPDX-License-Identifier: MIT */
/*
 * BPF lifecycle: open the skeleton, write settings, load, attach the tracepoints and one cpu-clock
 * perf event per online CPU, and expose the maps the recorder updates. One per run.
 */
#ifndef LS_LOADER_H
#define LS_LOADER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include "linescope.h"

struct ls_loader;
struct ring_buffer;

struct ls_loader_opts {
	unsigned frequency_hz;
	int cgroup_fd;	/* -1 unless profiling a cgroup */
	pid_t self_pid; /* never sampled */
};

/* Loads and attaches everything; one-line errors are logged. */
int ls_loader__new(const struct ls_loader_opts *opts, struct ls_loader **out);
void ls_loader__free(struct ls_loader *l);

int ls_loader__set_proc(struct ls_loader *l, pid_t pid, const struct ls_proc *p);
int ls_loader__set_layout(struct ls_loader *l, uint32_t id, const struct ls_pylayout *L);

/* The events ring buffer; sample_cb(ctx, data, len) is called for each record on poll. */
int ls_loader__ring(struct ls_loader *l, int (*cb)(void *ctx, void *data, size_t len), void *ctx,
		    struct ring_buffer **out);

/* Copy of the BPF counters. */
void ls_loader__stats(const struct ls_loader *l, struct ls_stats *st);

/* The sampling period in ns actually configured. */
uint64_t ls_loader__period_ns(const struct ls_loader *l);

#endif
