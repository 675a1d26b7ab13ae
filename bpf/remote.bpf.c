// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * --sampler remote: the on-CPU sampler run from the profiler's own thread (loader_remote.c) at
 * the frequency, the way py-spy and Tachyon sample, instead of from a timer interrupt on every
 * CPU. Each pass walks every target thread that is on a CPU at that moment, reading its memory
 * from here: no interrupt lands on a target's CPU. What that costs: the interrupted context is
 * not there, so whether the thread was in the interpreter, native code or the kernel is not
 * known (LS_XF_REMOTE), and its stack can change while it is read (a torn stack stops where a
 * frame fails its checks, as any walk's would).
 */
#define LS_WALK_REMOTE
#include "offcpu.bpf.h"
#include "mem.bpf.h"

/* Set by userspace before each pass: the time since the previous one, what each sample stands for. */
__u64 remote_weight_ns;

SEC("iter.s/task")
int sample_remote(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u64 weight = remote_weight_ns, aux = 0;
	__u16 xflags = LS_XF_REMOTE;
	struct ls_proc *p;
	__u32 tgid, tid;

	p = ls_remote_target(t, &tgid, &tid);
	if (!p || !t->on_cpu || !weight)
		return 0;
	LS_STAT_INC(taken);
	if (mem_enabled) {
		aux = ls_mm_rss(t->mm);
		xflags |= LS_XF_RSS;
	}
	if (!ls_emit_task_sample(p, t, tgid, tid, LS_SAMPLE_ONCPU, weight, aux, xflags, 0, false,
				 LS_SLOT_TASK, 0))
		LS_STAT_INC(samples);
	else
		LS_STAT_INC(sample_drops);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
