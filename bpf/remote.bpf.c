// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * --sampler remote: the on-CPU sampler run from the profiler's own thread (loader_remote.c) at
 * the frequency, the way py-spy and Tachyon sample, instead of from a timer interrupt on every
 * CPU. Each pass walks every target thread that is on a CPU at that moment, reading its memory
 * from here: no interrupt lands on a target's CPU. What that costs: the interrupted context is
 * not there, so whether the thread was in the interpreter, native code or the kernel is not
 * known (LS_XF_REMOTE), and its stack can change while it is read (a torn stack stops where a
 * frame fails its checks, as any walk's would).
 *
 * Our thread runs on some CPU too: on a machine whose CPUs are all busy, waking it preempts
 * whatever ran there, and that thread is off the CPU during the very pass that would see it (on
 * 2 CPUs, half of 12 busy processes' time went unseen). remote_switch notes, per CPU, the thread
 * our sampler displaced; the pass counts it as running.
 */
#define LS_WALK_REMOTE
#include "offcpu.bpf.h"
#include "track.bpf.h"
#include "mem.bpf.h"

/* Set by userspace before each pass: the time since the previous one, what each sample stands for. */
__u64 remote_weight_ns;
/* Set by userspace: our sampling thread; and per CPU, the thread it last preempted there (0: none) */
__u32 remote_sampler_tid;
__u32 remote_displaced[LS_CLOCK_CPUS];

SEC("tp_btf/sched_switch")
int BPF_PROG(remote_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 cpu = bpf_get_smp_processor_id();

	if (!remote_sampler_tid || next->pid != remote_sampler_tid || cpu >= LS_CLOCK_CPUS)
		return 0;
	/* still runnable (TASK_RUNNING), so taken off for us: `preempt` is false for a thread
	 * that yields at its return to user space, as a busy one does */
	remote_displaced[cpu] = prev_state == 0 ? prev->pid : 0;
	return 0;
}

SEC("iter.s/task")
int sample_remote(struct bpf_iter__task *ctx)
{
	struct task_struct *t = ctx->task;
	__u64 weight = remote_weight_ns, aux = 0;
	__u32 tgid, tid, cpu = bpf_get_smp_processor_id();
	__u16 xflags = LS_XF_REMOTE;
	struct ls_proc *p;

	p = ls_remote_target(t, &tgid, &tid);
	if (!p || !weight)
		return 0;
	/*
	 * running, or it would be had our thread not taken its CPU for this pass: still runnable (a
	 * pass that began without a sleep, when behind, finds the note of an earlier wake-up)
	 */
	if (!t->on_cpu && !(cpu < LS_CLOCK_CPUS && remote_displaced[cpu] == tid && t->__state == 0))
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
