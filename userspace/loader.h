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
	bool offcpu;		/* wall mode: off-CPU intervals */
	bool memory;		/* --memory: RSS readings and growth events */
	uint64_t mem_threshold; /* bytes of RSS change per growth event */
	const char *gpu_lib;	/* --gpu: liblinescope_cupti.so whose probes to attach, or NULL */
	const char *trace_site; /* --trace: python-usdt site directory whose builds to attach */
	bool no_sampling;	/* --trace without --sample: no cpu-clock sampler */
	bool remote;		/* --sampler remote: sampled from our thread, no cpu-clock events */
	bool no_agg;		/* every sample whole through the ring buffer (benchmarks) */
	bool timeline;		/* --timeline: a tick for each sample added up in the kernel */
	int cgroup_fd;		/* -1 unless profiling a cgroup */
	pid_t self_pid;		/* never sampled */
	bool unload;		/* --unload: no kept programs used, kept or left (loader_keep.c) */
};

/* Loads and attaches everything; one-line errors are logged. */
int ls_loader__new(const struct ls_loader_opts *opts, struct ls_loader **out);
void ls_loader__free(struct ls_loader *l);
/* Wall mode's report path ("rseq, task works", "rseq", "task works", "sys_exit"); NULL in cpu mode. */
const char *ls_loader__resume_path(const struct ls_loader *l);

/*
 * Sets (p != NULL) or deletes the `procs` entry of pid. A set names the entry's generation
 * (p->gen): when the kernel's entry has another one, the process exec'd since userspace looked,
 * and the update is skipped (-ESTALE): its exec record will follow.
 */
int ls_loader__set_proc(struct ls_loader *l, pid_t pid, const struct ls_proc *p);
/*
 * pid's entry pending for its exec of generation gen, unless the kernel has made that exec's
 * entry Python since (a known image at the exec, a shared build's start: -EEXIST) or has a newer
 * one (-ESTALE).
 */
int ls_loader__set_pending(struct ls_loader *l, pid_t pid, uint32_t gen);
int ls_loader__set_layout(struct ls_loader *l, uint32_t id, const struct ls_pylayout *L);
/* The generation of pid's `procs` entry (each exec bumps it); 0 or -ENOENT. */
int ls_loader__proc_gen(struct ls_loader *l, pid_t pid, uint32_t *gen);
/*
 * Probes the start of a shared build's interpreter (LS_LIB_START, at offset in the libpython at
 * path, as /proc/PID/maps shows it to us) in every process: lib_images[slot] = lib. 0 or -errno.
 */
int ls_loader__set_lib(struct ls_loader *l, uint32_t slot, const char *path, uint64_t offset,
		       const struct ls_lib_image *lib);
/* How pid saw files at its exit (`exit_views`); 0 or -ENOENT. */
int ls_loader__exit_view(struct ls_loader *l, pid_t pid, struct ls_task_view *v);

/* Install (img != NULL) or forget a known interpreter executable in `images` (an exec of one is
 * then walked at once). */
int ls_loader__set_image(struct ls_loader *l, const struct ls_image_key *k,
			 const struct ls_image *img);
/*
 * Stops the cpu-clock sampler (before the last drain), so that the kernel's count of samples
 * taken is final and every one of them is either in the ring buffer or counted as dropped.
 */
/*
 * Samples added up in the kernel (bpf/agg.bpf.h): swap makes the other map the active one and
 * returns once no program writes the retired one; drain then reads and empties it, calling cb
 * for each key. Consume the ring buffer between the two: the descriptions of the retired map's
 * stacks are in it. drain returns the number of keys or a negative errno.
 */
int ls_loader__agg_swap(struct ls_loader *l);
/*
 * Sets the first active map, once the targets run, on a thread of its own (the update waits for
 * an RCU grace period): until it is set every sample goes whole (stats.agg_unset). agg_swap
 * joins it, starts it when it was not, and returns -EAGAIN until it is set.
 */
int ls_loader__agg_start(struct ls_loader *l);
/* false under LINESCOPE_NO_AGG=1: nothing is added in the kernel, so there is nothing to swap */
bool ls_loader__agg_on(const struct ls_loader *l);
int ls_loader__agg_drain(struct ls_loader *l,
			 void (*cb)(void *ctx, const struct ls_agg_key *k,
				    const struct ls_agg_val *v),
			 void *ctx);
/*
 * Our own cost so far: for each loaded program, its runs and the kernel-measured time in them.
 * -ENOTSUP when the kernel would not count (bpf_enable_stats refused).
 */
int ls_loader__cost(const struct ls_loader *l,
		    void (*cb)(void *ctx, const char *prog, uint64_t runs, uint64_t run_ns),
		    void *ctx);

/* Makes BPF send this (process, thread, stack) whole again. */
void ls_loader__forget_stack(struct ls_loader *l, const struct ls_known_key *k);

/*
 * Wall mode's edges: open_blocked starts an interval, from now, for every target thread off the
 * CPU (call once the targets are known); close_blocked reports every interval still pending,
 * with its thread's stack (call before stopping). No-ops in CPU mode. 0 or a negative errno.
 */
int ls_loader__open_blocked(struct ls_loader *l);
int ls_loader__close_blocked(struct ls_loader *l);
void ls_loader__stop_sampling(struct ls_loader *l);
/* --sampler remote: its passes so far and the time they left out (loader_remote.h); else 0. */
void ls_loader__remote_stats(const struct ls_loader *l, uint64_t *passes, uint64_t *late_ns);

/* The events ring buffer; sample_cb(ctx, data, len) is called for each record on poll. */
int ls_loader__ring(struct ls_loader *l, int (*cb)(void *ctx, void *data, size_t len), void *ctx,
		    struct ring_buffer **out);
/*
 * Its positions, in bytes since the start (they only grow): every record that begins before
 * ring_read has been handled; every record reserved so far begins before ring_written (the
 * reader waits at one reserved and not yet submitted).
 */
uint64_t ls_loader__ring_read(const struct ls_loader *l);
uint64_t ls_loader__ring_written(const struct ls_loader *l);

/*
 * Counts CPython's own line and function probes in pid (Debian-style builds with SDT probes,
 * for a running process that cannot load python-usdt). Drain with ls_loader__native_drain().
 */
int ls_loader__attach_native_trace(struct ls_loader *l, pid_t pid, const char *binary);

/* Hands every native-probe count of pid (cumulative totals) to cb; returns how many. */
struct ls_native_key;
struct ls_native_val;
int ls_loader__native_drain(struct ls_loader *l, pid_t pid,
			    void (*cb)(void *ctx, const struct ls_native_key *k,
				       const struct ls_native_val *v, const char *file,
				       const char *func),
			    void *ctx);

/* Copy of the BPF counters. */
void ls_loader__stats(const struct ls_loader *l, struct ls_stats *st);

/* The mean sampling period in ns. */
uint64_t ls_loader__period_ns(const struct ls_loader *l);

#endif
