/* SPDX-License-Identifier: MIT */
/*
 * Maps, settings and counters shared by every BPF source file. Maps and settings are __weak
 * definitions, which bpftool's static linker merges into one object and one skeleton; the
 * counters are defined in globals.bpf.c.
 */
#ifndef __LS_MAPS_BPF_H
#define __LS_MAPS_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "linescope.h"

/* Every record for userspace, tagged by a leading enum ls_rec_type. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, LS_RINGBUF_SIZE);
} events SEC(".maps") __weak;

/* The target set: tgid -> how to walk its interpreter. Userspace and fork tracking add entries. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct ls_proc);
} procs SEC(".maps") __weak;

/* Interpreter layouts, indexed by ls_proc.layout_id. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LS_MAX_LAYOUTS);
	__type(key, __u32);
	__type(value, struct ls_pylayout);
} pylayouts SEC(".maps") __weak;

/*
 * Interpreter executables already discovered, by inode: exec of one sets its `procs` entry in
 * the kernel, so that a process of a known image has lines from its first sample.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 256);
	__type(key, struct ls_image_key);
	__type(value, struct ls_image);
} images SEC(".maps") __weak;

/* Shared builds whose start is probed (struct ls_lib_image), by the probe's cookie. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, LS_LIB_IMAGES);
	__type(key, __u32);
	__type(value, struct ls_lib_image);
} lib_images SEC(".maps") __weak;

/* Targets' views at their exit (struct ls_task_view): the oldest go first. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 4096);
	__type(key, __u32);
	__type(value, struct ls_task_view);
} exit_views SEC(".maps") __weak;

/* One exec record under construction per CPU (too large for the BPF stack). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct ls_exec_event);
} exec_scratch SEC(".maps") __weak;

/* The target cgroup (v2) when profiling with --cgroup; descendants match too. */
struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} cgroup_filter SEC(".maps") __weak;

/* One sample record under construction per CPU; too large for the BPF stack. */
struct ls_sample_buf {
	struct ls_sample hdr;
	struct ls_frame frames[LS_MAX_FRAMES];
	__u8 fwin[LS_FRAME_WIN];  /* the frame being walked */
	__u8 cwin[LS_CODE_WIN];	  /* its code object */
	struct ls_code_rec code;  /* a code object being described */
	struct ls_task_view view; /* the sampled thread's view, read for its key */
};

/*
 * Per CPU, one buffer per context that can run at once. The cpu-clock sampler runs in hard-IRQ
 * context and can interrupt any other program mid-record. Tracepoints that run with preemption
 * off (sched_switch, fork, rss_stat) cannot interrupt one another, but can run while a task
 * context program is preempted: uprobes and sys_exit (syscall tracepoints may fault) run with
 * only migration disabled, so another task's program may run on this CPU before they finish.
 * Those take their buffers through ls_task_scratch_take().
 */
enum ls_scratch_slot {
	LS_SLOT_IRQ = 0,    /* perf_event programs */
	LS_SLOT_ATOMIC = 1, /* tracepoints that run with preemption off */
	LS_SLOT_TASK = 2,   /* preemptible programs: uprobes, sys_exit */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 3);
	__type(key, __u32);
	__type(value, struct ls_sample_buf);
} scratch SEC(".maps") __weak;

/* Set while a preemptible program on this CPU holds a task-context scratch buffer. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u32);
} task_scratch_busy SEC(".maps") __weak;

/* Code objects already described to userspace (LS_REC_CODE), per process image. */
struct ls_code_key {
	__u64 code;
	__u32 tgid;
	__u32 fp;
	__u32 gen;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, struct ls_code_key);
	__type(value, __u8);
} codes_seen SEC(".maps") __weak;

const volatile bool filter_cgroup __weak = false;
/*
 * Defined once, in globals.bpf.c, not __weak here: the linker merges __weak copies into one
 * symbol but keeps the space of every copy (8 files x 33 KB of .bss, reset at every start).
 * self_tgid: the profiler's own process, never a target; in .bss, not .rodata, so that a kept
 * load (userspace/loader_keep.c) serves every run.
 */
extern __u32 self_tgid;
/* bumped at every entry `procs` gains or loses: --sampler remote's thread then reads its keys */
extern __u64 procs_changes;
extern struct ls_cpu_clock cpu_clocks[LS_CLOCK_CPUS];
extern struct ls_stats stats;

#define LS_STAT_INC(field) __sync_fetch_and_add(&stats.field, 1)

/*
 * Takes this CPU's task-context scratch buffers (LS_SLOT_TASK, the trace, GPU and native-probe
 * buffers), or NULL when a preempted program holds them: the caller drops its record, counted in
 * scratch_busy, rather than write into one half built. Release with ls_task_scratch_put().
 */
static __always_inline __u32 *ls_task_scratch_take(void)
{
	__u32 zero = 0, *busy = bpf_map_lookup_elem(&task_scratch_busy, &zero);

	if (!busy)
		return NULL;
	if (__sync_val_compare_and_swap(busy, 0, 1) != 0) {
		LS_STAT_INC(scratch_busy);
		return NULL;
	}
	return busy;
}

static __always_inline void ls_task_scratch_put(__u32 *busy)
{
	__sync_val_compare_and_swap(busy, 1, 0);
}

/*
 * Wake-up policy for frequent records: waking the consumer costs an inter-processor interrupt
 * per record (dear in a VM, at 1,000 samples per second per CPU). The consumer polls every
 * 50 ms anyway, so frequent records only wake it once the buffer is a quarter full.
 */
static __always_inline __u64 ls_rb_flags(void)
{
	return bpf_ringbuf_query(&events, BPF_RB_AVAIL_DATA) > LS_RINGBUF_BEHIND
		       ? BPF_RB_FORCE_WAKEUP
		       : BPF_RB_NO_WAKEUP;
}

#endif /* __LS_MAPS_BPF_H */
