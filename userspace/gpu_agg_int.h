/* SPDX-License-Identifier: MIT */
/*
 * The GPU join's insides, shared by gpu_agg.c (processes, the launch <-> activity join, records,
 * queries) and gpu_agg_mem.c (each process's memory timeline). Not an API: see gpu_agg.h.
 */
#ifndef LS_GPU_AGG_INT_H
#define LS_GPU_AGG_INT_H

#include "gpu_agg.h"

#define MEM_EVENTS_MAX (1u << 16) /* allocation events kept per process; older ones fold away */
#define SERIES_MAX     (1u << 15) /* memory-series points per process before halving */

struct launch_slot {
	__u32 corr;
	__u32 tid;
	__u64 cookie;
	__u8 cls;
	__u8 valid;
	__u8 shift; /* log2 of the launches this one stands for */
	__u8 pad[5];
};

struct pend_slot {
	int used;
	struct ls_gpu_attr a;
};

struct mem_ev {
	__u64 t;     /* CUPTI time */
	__s64 delta; /* bytes */
	__u64 level; /* allocated bytes after this event */
};

struct nv_ev {
	__u64 t;
	__u64 total;
};

struct series_pt {
	__u64 bucket;
	__u64 alloc;
	__u64 nvml;
};

/* device address -> bytes of live allocations; linear probing, backward-shift deletion */
struct addr_map {
	__u64 *keys; /* 0: empty */
	__u64 *vals;
	__u32 cap, n;
};

struct proc {
	__u32 pid, lib_pid;
	struct launch_slot *ring; /* window slots, indexed by corr & mask */
	struct pend_slot *pend;	  /* pending slots, indexed by corr & pmask */
	char **names;		  /* id -> name */
	__u32 nnames;
	struct ls_gpu_hello hello;
	int has_hello;
	struct ls_gpu_status status;
	int has_status, exited;
	struct ls_gpu_device *devs;
	__u32 ndevs;
	__s64 clk_off; /* bpf ktime - CUPTI time */
	int has_clk;
	struct mem_ev *mev;
	__u32 nmev, capmev;
	__u64 mev_base; /* level before mev[0] */
	__u64 cur_alloc;
	struct addr_map live;
	struct nv_ev *nev;
	__u32 nnev, capnev;
	struct series_pt *ser;
	__u32 nser, capser;
	__u64 bucket_ns; /* current series resolution (doubles when the series is halved) */
	__u64 peak_alloc, peak_nvml;
	__u32 nvml_samples, nvml_not_listed;
	__u64 launches, activities, orphans;
	__u64 same_loc; /* launches of LS_GPU_LAUNCHES records */
	__u64 gpu_ns, api_ns;
	__u32 seq_min, seq_max;
	__u64 seq_count;
};

struct ls_gpu_agg {
	ls_gpu_attr_fn fn;
	void *ctx;
	ls_gpu_stack_fn stack;
	void *stack_ctx;
	__u32 window, pending;
	__u64 bucket_ns;
	struct proc **procs; /* by first appearance */
	__u32 nprocs, capprocs;
	__u32 *index; /* open addressing on pid: procs index + 1, 0 empty */
	__u32 capindex;
	struct ls_gpu_agg_stats st;
};

static inline __u32 hash32(__u32 v)
{
	v ^= v >> 16;
	v *= 0x7feb352d;
	v ^= v >> 15;
	v *= 0x846ca68b;
	return v ^ (v >> 16);
}

static inline __u64 to_mono(const struct proc *p, __u64 t)
{
	if (!p->has_clk || !t)
		return 0;
	/* modular: both come from the target's library and may be anything */
	return t + (__u64)p->clk_off;
}

/*
 * A device allocation or release (LS_GPU_ACT_ALLOC/FREE of device memory) into the timeline;
 * -ERANGE for a size over LS_GPU_BYTES_MAX, -ENOMEM.
 */
int gpu_mem_event(struct proc *p, const struct ls_gpu_act *act);
/* Highest allocated level over [start, end] (CUPTI clock); the current level when start is 0. */
__u64 gpu_mem_alloc_max(const struct proc *p, __u64 start, __u64 end);
__u64 gpu_mem_nvml_at(const struct proc *p, __u64 t);
/* An NVML reading (LS_GPU_MEMSAMPLE) into the timeline. */
int gpu_mem_sample(struct proc *p, const struct ls_gpu_memsample *m);

#endif /* LS_GPU_AGG_INT_H */
