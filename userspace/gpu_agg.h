/* SPDX-License-Identifier: MIT */
/*
 * Joins what the GPU probes send into per-launch attributions, in the collector.
 *
 * Input, in ring-buffer order:
 *   ls_gpu_agg__launch()  for every LS_SAMPLE_GPULAUNCH sample (the api probe): the launching
 *                         thread, its stack (an opaque cookie of the caller's), the correlation id
 *                         and the CPU time inside the API call;
 *   ls_gpu_agg__record()  for every LS_REC_GPU record (activity batches, names, devices, NVML
 *                         memory samples, status, and the launches the library did not probe:
 *                         each a launch of its own, with the stack of the launch before it from
 *                         the same Python location, or with the frames the library walked,
 *                         which opts.stack turns into a cookie).
 * Output: the callback given to ls_gpu_agg__new() receives struct ls_gpu_attr contributions:
 *   - one per launch at once, carrying the driver time (LS_GPU_ATTR_API, api_ns);
 *   - one per kernel, copy, set, allocation or release record, carrying its device time and the
 *     process's device-memory level while it ran, attributed to the launch with the same
 *     (pid, correlation id); a graph launch gets one contribution per kernel.
 * Activity whose launch was not seen (the tracer attached later, a lost sample) is held back and
 * given out with LS_GPU_ATTR_NO_LAUNCH and cookie 0 by ls_gpu_agg__finish_pid()/__finish(), or
 * when newer correlation ids push it out of the window. Summing contributions per cookie gives
 * GPU time and driver time per stack; the maximum of mem_peak gives the peak per stack.
 * GPU time is device time: it is never wall time and must not be added to it.
 * With sampled launches (the library's LINESCOPE_GPU_SAMPLE=N) a probed launch stands for N:
 * count, gpu_ns, api_ns and bytes are already multiplied by weight = N (LS_GPU_ATTR_SAMPLED).
 *
 * Memory: mem_alloc is device memory allocated through CUDA and seen in allocation records (with
 * PyTorch, the caching allocator's reserved segments, not live tensors); mem_nvml is what NVML
 * charged to the process at that time (context, NCCL and caches included); mem_peak is the larger.
 *
 * Times: CUPTI timestamps are CLOCK_REALTIME; each record header pairs one with bpf_ktime_get_ns()
 * so start_mono is on the clock of ls_sample.ts.
 *
 * Not thread-safe: one consumer thread. Strings and structs returned stay valid until __free().
 */
#ifndef LS_GPU_AGG_H
#define LS_GPU_AGG_H

#include <stddef.h>
#include <linux/types.h>

#include "linescope.h"
#include "gpu_records.h"

/* A device allocation's size no device holds (1 PiB): its record is refused (bad_records). */
#define LS_GPU_BYTES_MAX (1ULL << 50)

struct ls_gpu_agg;

enum ls_gpu_attr_flags {
	LS_GPU_ATTR_API = 1 << 0,	/* the launch's own contribution: api_ns, no device work */
	LS_GPU_ATTR_NO_LAUNCH = 1 << 1, /* device work whose launch was never seen (cookie 0) */
	LS_GPU_ATTR_NCCL = 1 << 2,	/* an NCCL kernel: communication (includes waiting) */
	LS_GPU_ATTR_GRAPH = 1 << 3,	/* part of a graph launch */
	LS_GPU_ATTR_NO_TIMING = 1 << 4, /* CUPTI gave no timestamps: gpu_ns is 0 */
	LS_GPU_ATTR_SAMPLED = 1 << 5,	/* launches were sampled: counts and times are estimates */
};

struct ls_gpu_attr {
	__u32 pid;	 /* host tgid */
	__u32 tid;	 /* launching thread; 0 with NO_LAUNCH */
	__u64 cookie;	 /* the caller's, from ls_gpu_agg__launch(); 0 with NO_LAUNCH */
	__u32 corr;	 /* CUPTI correlation id */
	__u32 api_class; /* enum ls_gpu_api_class of the launch; 0 when unknown */
	__u32 flags;	 /* enum ls_gpu_attr_flags */
	__u32 count;	 /* activity records folded into this contribution (times weight) */
	__u8 kind;	 /* enum ls_gpu_act_kind; 0 on the API contribution */
	__u8 pad[3];
	__u32 device;	  /* CUDA ordinal */
	__u32 stream;	  /* CUDA stream (CUPTI's id); 0 on the API contribution */
	__u32 name_id;	  /* kernel name (ls_gpu_agg__name()); 0 when none */
	__u32 weight;	  /* launches this one stands for (LINESCOPE_GPU_SAMPLE); 1 when exact */
	__u64 gpu_ns;	  /* device time (end - start) */
	__u64 api_ns;	  /* CPU time inside the CUDA API call */
	__u64 bytes;	  /* copied, set, allocated or released */
	__u64 mem_peak;	  /* max(mem_alloc, mem_nvml) */
	__u64 mem_alloc;  /* highest allocated device memory while the work ran */
	__u64 mem_nvml;	  /* NVML's count for the process when the work ended; 0 unknown */
	__u64 start_mono; /* device start (or API exit) on the bpf_ktime_get_ns clock; 0 unknown */
};

typedef void (*ls_gpu_attr_fn)(void *ctx, const struct ls_gpu_attr *attr);

/*
 * The cookie of a launch whose frames the library walked (LS_GPU_LAUNCHES): frames[0..n) as an
 * LS_SAMPLE_GPULAUNCH sample of thread tid of process pid would carry them. Called in record order.
 */
typedef __u64 (*ls_gpu_stack_fn)(void *ctx, __u32 pid, __u32 tid, const struct ls_frame *frames,
				 __u32 n);

struct ls_gpu_agg_opts {
	size_t sz;	 /* sizeof(struct ls_gpu_agg_opts) */
	__u32 window;	 /* launches remembered per process (power of two); 0: 1 << 18 */
	__u32 pending;	 /* unmatched correlation ids held per process (power of two); 0: 4096 */
	__u64 bucket_ns; /* memory series resolution; 0: 100 ms */
	ls_gpu_stack_fn stack; /* NULL: such launches get cookie 0 */
	void *stack_ctx;
};

int ls_gpu_agg__new(const struct ls_gpu_agg_opts *opts, ls_gpu_attr_fn fn, void *ctx,
		    struct ls_gpu_agg **out);
void ls_gpu_agg__free(struct ls_gpu_agg *agg);

/*
 * A launch sample (ls_sample kind LS_SAMPLE_GPULAUNCH): aux and weight_ns as the sample carries
 * them (LS_GPU_AUX(), API time), ts its bpf_ktime_get_ns(). Returns 0 or -ENOMEM.
 */
int ls_gpu_agg__launch(struct ls_gpu_agg *agg, __u32 pid, __u32 tid, __u64 ts, __u64 aux,
		       __u64 api_ns, __u64 cookie);

/* One LS_REC_GPU ring-buffer record. Returns 0, -EINVAL for a malformed record (counted). */
int ls_gpu_agg__record(struct ls_gpu_agg *agg, const void *data, size_t len);

/* The process is gone (or the run ends): gives out its held-back activity as NO_LAUNCH. */
void ls_gpu_agg__finish_pid(struct ls_gpu_agg *agg, __u32 pid);
void ls_gpu_agg__finish(struct ls_gpu_agg *agg);

/* A kernel name sent by pid, or NULL. */
const char *ls_gpu_agg__name(const struct ls_gpu_agg *agg, __u32 pid, __u32 name_id);

struct ls_gpu_proc_info {
	__u32 pid;
	__u32 lib_pid;			    /* pid inside the process's namespace */
	const struct ls_gpu_hello *hello;   /* NULL: the library never said hello */
	const struct ls_gpu_status *status; /* latest STATUS or EXIT; NULL if none */
	int exited;			    /* an EXIT record arrived: everything was flushed */
	__u32 ndevices;
	const struct ls_gpu_device *devices; /* [ndevices], by arrival */
	__u64 peak_alloc;		     /* highest allocated device memory seen */
	__u64 peak_nvml; /* highest NVML sample; 0 when NVML never listed the process */
	__u32 nvml_samples;
	__u32 nvml_not_listed; /* samples in which NVML did not list the pid */
	__u64 launches, activities, orphans;
	__u64 same_loc;	      /* launches of those that came batched, not probed */
	__u64 lost_records;   /* gaps in ls_gpu_hdr.seq: records lost on the way */
	__u64 gpu_ns, api_ns; /* totals over all contributions */
};

/* --rotate: the peaks count again from the levels held now. */
void ls_gpu_agg__new_interval(struct ls_gpu_agg *agg);

/* Processes seen so far; index is 0..count-1 in order of first record. */
__u32 ls_gpu_agg__proc_count(const struct ls_gpu_agg *agg);
int ls_gpu_agg__proc_info(const struct ls_gpu_agg *agg, __u32 index, struct ls_gpu_proc_info *out);

/*
 * The process's device-memory series: one point per bucket_ns that saw a change or an NVML
 * sample, with the highest levels in it. Times are bpf_ktime_get_ns. Returns the points given.
 */
typedef void (*ls_gpu_mem_fn)(void *ctx, __u64 t_mono, __u64 alloc, __u64 nvml);
int ls_gpu_agg__mem_series(const struct ls_gpu_agg *agg, __u32 pid, ls_gpu_mem_fn fn, void *ctx);

struct ls_gpu_agg_stats {
	__u64 records;	   /* LS_REC_GPU records accepted */
	__u64 bad_records; /* malformed (length, sub) */
	__u64 launches;
	__u64 same_loc;	     /* launches that came in LS_GPU_LAUNCHES records (not probed) */
	__u64 walked;	     /* of those, from a new location, with the frames the library walked */
	__u64 same_loc_lost; /* batched launches whose thread or reference launch was never seen */
	__u64 activities;    /* activity entries */
	__u64 attributed;    /* activity entries joined to their launch */
	__u64 orphans;	     /* given out with NO_LAUNCH */
	__u64 evicted;	     /* NO_LAUNCH given out early because the pending table was full */
	__u64 lost_records;  /* seq gaps over all processes */
};

void ls_gpu_agg__stats(const struct ls_gpu_agg *agg, struct ls_gpu_agg_stats *out);

#endif
