// SPDX-License-Identifier: GPL-2.0 OR MIT
/* On-CPU sampler: a cpu-clock perf event on every CPU; target threads get their Python stack
 * walked. */
#include "emit.bpf.h"
#include "mem.bpf.h"
#include "offcpu.bpf.h"
#include "track.bpf.h"

/*
 * The time a tick stands for. The kernel reports the event's first period with every tick
 * (ctx->sample_period), whatever userspace drew since: `cpu_clocks` has the one in force. And a
 * new period restarts the CPU's timer, so the part of the old one already run had no tick: half
 * a period a draw (5% of all time at 99 Hz with ten draws a second). The tick after a change
 * carries it, from this CPU's last tick to the draw, at most two periods: a longer gap also holds
 * time the (virtual) CPU was not running.
 */
static __always_inline __u64 tick_weight(__u64 first)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns(), last, changed, period, cut;
	struct ls_cpu_clock *t;

	if (cpu >= LS_CLOCK_CPUS)
		return first;
	t = &cpu_clocks[cpu];
	period = t->period_ns ?: first;
	last = t->last_ns;
	changed = t->changed_ns;
	t->last_ns = now;
	if (!last || changed <= last || changed >= now)
		return period;
	cut = changed - last;
	if (cut > 2 * period)
		cut = 2 * period;
	/* a tick between the draw and its ioctl ended the old period: the gap, not more */
	return now - last < cut + period ? now - last : cut + period;
}

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip = ctx->regs.ip, aux = 0;
	__u64 weight = tick_weight(ctx->sample_period); /* every tick: the next one's start */
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct ls_proc *p;
	__u16 xflags = 0;
	bool kernel;

	p = ls_current_target(tgid, tid);
	if (!p)
		return 0;
	LS_STAT_INC(taken);
	task = bpf_get_current_task_btf();
	/*
	 * sys_exit path: preempted threads resume without a syscall exit, their wait ends here
	 * (elsewhere the walk is not even verified: half of this program's load)
	 */
	if (offcpu_enabled && offcpu_sample_report)
		ls_offcpu_resume(p, tid, LS_SLOT_IRQ);
	/* x86-64: kernel addresses have the top bit set (ctx->regs.cs is not readable here) */
	kernel = ip >> 63;
	if (kernel)
		/* in a syscall or fault: the Python line is still the thread's current one */
		ip = BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), ip);
	if (mem_enabled) {
		aux = ls_mm_rss(task->mm);
		xflags |= LS_XF_RSS;
	}
	if (!ls_emit_sample(p, LS_SAMPLE_ONCPU, weight, aux, xflags, ip, kernel, LS_SLOT_IRQ))
		LS_STAT_INC(samples);
	else
		LS_STAT_INC(sample_drops);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
