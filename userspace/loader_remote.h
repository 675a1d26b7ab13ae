/* SPDX-License-Identifier: MIT */
/* --sampler remote: a thread that runs the remote sampler's task iterator at the frequency. */
#ifndef LS_LOADER_REMOTE_H
#define LS_LOADER_REMOTE_H

#include <stdint.h>

struct ls_remote;

/*
 * Starts the thread: every period_ns on average (each interval drawn within +/-25%, so that the
 * passes do not lock onto the scheduler's tick), it writes the time since its last pass to
 * *weight_ns (the BPF .bss, borrowed until ls_remote__stop()) and runs the iterator of link
 * iter_link, which walks every target thread on a CPU. 0 or -errno.
 */
int ls_remote__start(struct ls_remote **out, int iter_link, uint64_t period_ns,
		     uint64_t *weight_ns);

/* Ends and joins the thread after its pass in progress, then frees r (NULL: nothing). */
void ls_remote__stop(struct ls_remote *r);

/*
 * Passes run, and the time no pass stood for: a pass later than two periods stands for two, the
 * rest of its interval (the thread was not scheduled, or a pass ran long) is counted here.
 */
void ls_remote__stats(const struct ls_remote *r, uint64_t *passes, uint64_t *late_ns);

#endif
