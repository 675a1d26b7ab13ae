/* SPDX-License-Identifier: MIT */
/* --sampler remote: a thread that runs the remote sampler's task iterator at the frequency. */
#ifndef LS_LOADER_REMOTE_H
#define LS_LOADER_REMOTE_H

#include <stdint.h>

struct ls_remote;

/* Runs a task iterator once (its link's program over every task it visits). 0 or -errno. */
int ls_remote__read_iter(int link);

/* What the thread borrows until ls_remote__stop(). */
struct ls_remote_cfg {
	int prog_fd;		 /* the sampler's task iterator program */
	int all_link;		 /* its link over every task of the machine */
	int procs_fd;		 /* the target set: `procs`, keyed by tgid */
	const uint64_t *changes; /* BPF .bss: bumped at each change of the set */
	uint64_t *weight_ns;	 /* BPF .bss: what the samples of a pass stand for */
	uint32_t *sampler_tid;	 /* BPF .bss: the thread's id goes there */
	uint64_t period_ns;
};

/*
 * Starts the thread: every period_ns on average (each interval drawn within +/-25%, so that the
 * passes do not lock onto the scheduler's tick), it writes the time since its last pass to
 * *weight_ns and runs the sampler over the target threads: one iterator per target process
 * while there are few, else the one over every task. 0 or -errno.
 */
int ls_remote__start(struct ls_remote **out, const struct ls_remote_cfg *cfg);

/* Ends and joins the thread after its pass in progress, then frees r (NULL: nothing). */
void ls_remote__stop(struct ls_remote *r);

/*
 * Passes run, and the time no pass stood for: a pass later than two periods stands for two, the
 * rest of its interval (the thread was not scheduled, or a pass ran long) is counted here.
 */
void ls_remote__stats(const struct ls_remote *r, uint64_t *passes, uint64_t *late_ns);

#endif
