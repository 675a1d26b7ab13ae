/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU intervals of target threads. sched_switch notes when a thread leaves the CPU (and, from
 * its syscall, whether it waits for the GIL or for a child); when it runs again, in its own
 * context (on its way back to user space, offcpu.bpf.c, or at its next sample), its Python stack
 * is the one it blocked on and the interval is emitted. Intervals shorter than the sampling period
 * are kept with probability d/period at weight period, so wait time stays unbiased while costing at
 * most one walk per period per thread, like on-CPU sampling.
 */
#ifndef __LS_OFFCPU_BPF_H
#define __LS_OFFCPU_BPF_H

#include "emit.bpf.h"

const volatile bool offcpu_enabled __weak = false;
/* rseq without task works: an interval its thread's exit ends is reported there (proc.bpf.c) */
const volatile bool offcpu_exit_report __weak = false;
/*
 * sys_exit path: a thread preempted in user mode returns there without a syscall, so its samples
 * report its interval (sample.bpf.c); rseq_update and task works see that return themselves
 */
const volatile bool offcpu_sample_report __weak = false;
const volatile __u64 offcpu_period_ns __weak = 1001001;

struct ls_pending {
	__u64 start;  /* left the CPU */
	__u64 end;    /* got it back (0: still off) */
	__s32 waited; /* wait4/waitid target */
	__u16 xflags;
	__u16 drawn; /* a short one was drawn at its end (with a task work): kept at the period */
};

/*
 * One per target thread that left the CPU, by tid. Whoever reports an interval first claims it
 * by swapping `start` to 0 (the thread itself when it runs again, or the stop-time iterator of
 * edges.bpf.c on another CPU), so it is counted once.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct ls_pending);
} offcpu_pending SEC(".maps") __weak;

struct ls_resume {
	struct bpf_task_work tw;
};

/* A target thread's task work (offcpu.bpf.c), by tid; deleted when the thread exits. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 65536);
	__type(key, __u32);
	__type(value, struct ls_resume);
} offcpu_resume SEC(".maps") __weak;

#define LS_EBUSY 16

#define NR_FUTEX  202
#define NR_WAIT4  61
#define NR_WAITID 247

/*
 * What a thread that is off the CPU waits for, from the syscall it is in: the GIL (a futex in
 * the interpreter's GIL), a child (wait4/waitid and its target), else voluntary when it went to
 * sleep rather than was preempted. Fills w's xflags and waited.
 */
static __always_inline void ls_offcpu_classify(const struct ls_proc *p, struct task_struct *t,
					       bool voluntary, struct ls_pending *w)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(t);
	long nr = BPF_CORE_READ(regs, orig_ax);
	__u64 arg0 = BPF_CORE_READ(regs, di);

	w->waited = -1;
	if (voluntary)
		w->xflags |= LS_XF_VOLUNTARY;
	if (nr == NR_FUTEX && arg0 >= p->gil_lo && arg0 < p->gil_hi)
		w->xflags |= LS_XF_GIL_WAIT;
	if (nr == NR_WAIT4 || nr == NR_WAITID) {
		w->xflags |= LS_XF_WAITPID;
		/* wait4(pid, ...) or waitid(P_PID, pid, ...) */
		w->waited = nr == NR_WAIT4 ? (__s32)arg0
			    : arg0 == 1	   ? (__s32)BPF_CORE_READ(regs, si)
					   : -1;
	}
}

/* Claims a pending interval: false when another reporter has it already. */
static __always_inline bool ls_offcpu_claim(struct ls_pending *w, __u64 *start)
{
	__u64 s = w->start;

	*start = s;
	return s && __sync_val_compare_and_swap(&w->start, s, 0) == s;
}

/* Whether an interval of d ns is kept: shorter than the period, with probability d/period. */
static __always_inline bool ls_offcpu_draw(__u64 d)
{
	if (d >= offcpu_period_ns ||
	    (__u64)bpf_get_prandom_u32() * offcpu_period_ns < d * 0x100000000ULL)
		return true;
	LS_STAT_INC(offcpu_dropped);
	return false;
}

/*
 * Emits an interval of d ns of thread `task` (tid of process pid) that ended at end, sampled like
 * on-CPU time: shorter than the period, it is kept with probability d/period at weight period
 * (drawn: that was decided already). Its time is its end, not when it is reported: a report at
 * the thread's next switch or sample would put it later on the timeline than it was.
 */
static __always_inline void ls_offcpu_emit(const struct ls_proc *p, struct task_struct *task,
					   __u32 pid, __u32 tid, __u64 d, __u64 end, __s32 waited,
					   __u16 xflags, bool drawn, __u32 slot)
{
	__u64 weight;

	if (!drawn && !ls_offcpu_draw(d))
		return;
	weight = d >= offcpu_period_ns ? d : offcpu_period_ns;
	if (!ls_emit_task_sample(p, task, pid, tid, LS_SAMPLE_OFFCPU, weight, (__u64)(__s64)waited,
				 xflags, 0, false, slot, end))
		LS_STAT_INC(offcpu);
}

#ifndef LS_WALK_REMOTE
/*
 * Emits the current thread's pending interval, if any. Call in the thread's context: it runs, so
 * an interval still open is one whose switch back in no tracepoint showed (on our test VMs'
 * 6.18.44-fc kernel, no switch away from the init process's threads is traced, in ftrace
 * either: docs/wall-time.md). It ends now, when the thread is first seen running again, rather
 * than being lost when its next switch overwrites it: a few microseconds late at the return to
 * user space (rseq, task work), later by the thread's time in the kernel since at a switch or
 * an exit that comes first. Counted in unseen_in.
 */
static __always_inline void ls_offcpu_resume(const struct ls_proc *p, __u32 tid, __u32 slot)
{
	struct ls_pending *w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	__u64 start, end;
	__u16 xflags;
	__s32 waited;
	bool drawn;

	if (!w)
		return;
	end = w->end;
	xflags = w->xflags;
	waited = w->waited;
	drawn = w->drawn;
	if (!ls_offcpu_claim(w, &start))
		return;
	bpf_map_delete_elem(&offcpu_pending, &tid);
	if (!end) {
		end = bpf_ktime_get_ns();
		LS_STAT_INC(unseen_in);
	}
	ls_offcpu_emit(p, bpf_get_current_task_btf(), bpf_get_current_pid_tgid() >> 32, tid,
		       end > start ? end - start : 0, end, waited, xflags, drawn, slot);
}
#endif

#endif /* __LS_OFFCPU_BPF_H */
