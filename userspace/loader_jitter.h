/* SPDX-License-Identifier: MIT */
/* The sampling period's jitter: a thread per sampled CPU draws that CPU's period (loader_jitter.c). */
#ifndef LS_LOADER_JITTER_H
#define LS_LOADER_JITTER_H

#include <stdint.h>

struct ls_jitter;
struct ls_cpu_clock;

/*
 * Starts a thread for each CPU c with a sampler (pfds[c] >= 0; c < LS_CLOCK_CPUS) that draws its
 * period again every 250 ms, its rate uniformly within +/-25% of 1/period_ns, noting it in
 * clocks[c] for the ticks' weights. pfds and clocks are borrowed until ls_jitter__stop().
 * 0 or -errno.
 */
int ls_jitter__start(struct ls_jitter **out, const int *pfds, int ncpus, uint64_t period_ns,
		     struct ls_cpu_clock *clocks);

/* Ends and joins the threads, then frees j (NULL: nothing). */
void ls_jitter__stop(struct ls_jitter *j);

#endif
