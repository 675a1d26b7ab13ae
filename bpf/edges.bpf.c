// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Wall-clock time at the edges of a recording. A thread already off the CPU when we attach never
 * passes through sched_switch before it runs again, and a thread still off the CPU when we stop
 * never runs again while we look: both intervals would be lost. Userspace runs open_blocked once
 * the targets are known (their intervals start then) and close_blocked just before it stops
 * (every interval still pending is reported with the thread's stack, walked from here).
 */
#define LS_WALK_REMOTE
#include "offcpu.bpf.h"
#include "track.bpf.h"

/* Opens an interval, from now, for every target thread that is not on a CPU. */
SEC("iter/task")
int open_blocked(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct ls_pending fresh = {};
	struct ls_proc *p;
	__u32 tgid, tid;

	p = ls_remote_target(t, &tgid, &tid);
	if (!p || !offcpu_enabled || t->on_cpu)
		return 0;
	fresh.start = bpf_ktime_get_ns();
	/* TASK_RUNNING off a CPU: preempted, waiting for one */
	ls_offcpu_classify(p, t, t->__state != 0, &fresh);
	/* one sched_switch made since we attached knows better */
	if (!bpf_map_update_elem(&offcpu_pending, &tid, &fresh, BPF_NOEXIST))
		LS_STAT_INC(offcpu_opened);
	return 0;
}

/* Reports every pending interval of a live target thread, ending now if it has not ended. */
SEC("iter.s/task")
int close_blocked(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	struct ls_pending *w;
	struct ls_proc *p;
	__u64 start, end, now;
	__u32 tgid, tid;
	__u16 xflags;
	__s32 waited;
	bool drawn;

	p = ls_remote_target(t, &tgid, &tid);
	if (!p || !offcpu_enabled)
		return 0;
	w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (!w)
		return 0;
	now = bpf_ktime_get_ns();
	end = w->end ?: now;
	xflags = w->xflags;
	waited = w->waited;
	drawn = w->drawn;
	if (!ls_offcpu_claim(w, &start))
		return 0;
	LS_STAT_INC(offcpu_closed);
	ls_offcpu_emit(p, t, tgid, tid, end > start ? end - start : 0, end, waited, xflags, drawn,
		       LS_SLOT_TASK);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
