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
/*
 * A period whose rate is drawn uniformly in [0.75, 1.25] of 1/period_ns, so that samples taken
 * at it, and their cost, average the nominal rate (a uniform period would sample 2.2% more
 * often, E[1/p]). seed: a xorshift state, never 0.
 */
uint64_t ls_jitter__draw(uint64_t *seed, uint64_t period_ns);

int ls_jitter__start(struct ls_jitter **out, const int *pfds, int ncpus, uint64_t period_ns,
		     struct ls_cpu_clock *clocks);

/* Ends and joins the threads, then frees j (NULL: nothing). */
void ls_jitter__stop(struct ls_jitter *j);

#endif
