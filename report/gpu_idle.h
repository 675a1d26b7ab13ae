/* SPDX-License-Identifier: MIT */
/*
 * The GPU timeline of a profile recorded with --timeline --gpu: for each device, when it was
 * busy (kernels, copies, sets, per stream) and when idle, and for its idle time the lines the
 * threads that launch work on it were at, from their own timeline ticks: why the GPU was idle.
 * Everything comes from our records (CUPTI's activity spans), never from NVML's counter.
 */
#ifndef LS_GPU_IDLE_H
#define LS_GPU_IDLE_H

#include <stddef.h>
#include <stdint.h>

struct ls_model;

#define LS_GPU_UTIL_BUCKETS	200  /* equal parts of a device's active window */
#define LS_GPU_UTIL_MAX_DEVICES 1024 /* more in one profile is damage: their spans are skipped */

/* A line that a launching thread was at while the device was idle. */
struct ls_gpu_idle_line {
	int proc, file, line; /* model indices: the line Time names (innermost project frame) */
	int64_t idle_ns;      /* device idle time while a launching thread was at it */
	int64_t cpu_ns;	      /* part of it the thread ran on a CPU */
	int64_t blocked_ns;   /* part of it the thread was blocked (sleep, I/O, a lock, the GIL) */
};

#define LS_GPU_TOP_GAPS	 10 /* a device's longest gaps, kept with their lines */
#define LS_GPU_GAP_LINES 3  /* lines kept for each, most of it first */

/* One of a device's longest idle gaps. */
struct ls_gpu_gap {
	int64_t t_ns, dur_ns;
	struct ls_gpu_idle_line lines[LS_GPU_GAP_LINES];
	size_t nlines;
};

/* One stream's work on a device: the union of its spans. */
struct ls_gpu_stream_busy {
	int proc, stream;
	int64_t busy_ns, spans;
};

#define LS_GPU_LANES 16 /* streams drawn over time: the busiest */

/* A stream's busy share of each part of its device's window. */
struct ls_gpu_lane {
	int proc, stream;
	float busy[LS_GPU_UTIL_BUCKETS];
};

struct ls_gpu_util {
	int ordinal;	      /* CUDA ordinal in the first process that used it */
	int proc;	      /* that process: its host, its rank */
	const char *uuid;     /* owned by the model; NULL when not known */
	int64_t t0_ns, t1_ns; /* its active window: first work's start, last work's end */
	int64_t busy_ns;      /* time any of its work ran (the union of its spans) */
	int64_t kernel_ns, copy_ns, set_ns, nccl_ns; /* the union of each kind's spans */
	int64_t spans, gaps, longest_gap_ns;	     /* gaps: idle stretches inside the window */
	int64_t explained_ns; /* idle time during which some launching thread was at a line */
	int threads;	      /* launching threads on the timeline */
	float busy[LS_GPU_UTIL_BUCKETS]; /* busy share of each part of the window, 0..1 */
	float kernels[LS_GPU_UTIL_BUCKETS],
		copies[LS_GPU_UTIL_BUCKETS]; /* of kernels; copies, sets */
	struct ls_gpu_stream_busy *streams;  /* by process and stream */
	size_t nstreams;
	struct ls_gpu_lane lanes[LS_GPU_LANES]; /* the busiest streams, by process and stream */
	size_t nlanes;
	struct ls_gpu_idle_line *lines; /* most idle time first */
	size_t nlines;
	struct ls_gpu_gap top_gaps[LS_GPU_TOP_GAPS]; /* longest first */
	size_t ntop_gaps;
};

/*
 * The devices of m's GPU timeline (m loaded with LS_MODEL_TIMELINE), in the order they first
 * appear; *n = 0 when m has no spans. *skipped: spans of devices beyond
 * LS_GPU_UTIL_MAX_DEVICES. -ENOMEM.
 */
int ls_gpu_util__build(const struct ls_model *m, struct ls_gpu_util **out, size_t *n,
		       int64_t *skipped);
void ls_gpu_util__free(struct ls_gpu_util *u, size_t n);

#endif
