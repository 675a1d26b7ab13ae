// SPDX-License-Identifier: GPL-2.0 OR MIT
/* On-CPU sampler: a cpu-clock perf event on every CPU; target threads get their Python stack
 * walked. */
#include "emit.bpf.h"
#include "mem.bpf.h"
#include "offcpu.bpf.h"
#include "track.bpf.h"

/*
 * The time this CPU has not run its tasks since boot: taken by the hypervisor (steal) and, where
 * the kernel accounts it, by interrupts. The scheduler's task clock, which every thread's CPU
 * time (time.thread_time(), getrusage) is counted on, leaves both out; a tick's wall-clock span
 * holds them. As of the runqueue's last clock update: a later tick leaves out the rest. The
 * runqueue is the interrupted task's (`runqueues` is a per-CPU variable kallsyms may not list);
 * none: 0, which the caller never takes for a reading.
 */
static __always_inline __u64 cpu_lost_ns(__u32 cpu)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 clock, task_clock;
	struct rq *rq;

	if (!bpf_core_field_exists(struct cfs_rq, rq))
		return 0;
	rq = BPF_CORE_READ(task, se.cfs_rq, rq);
	if (!rq || BPF_CORE_READ(rq, cpu) != cpu)
		return 0;
	/*
	 * clock first: an update between the two reads (another CPU's, under the runqueue's lock)
	 * then makes the difference smaller, which the caller ignores, never larger
	 */
	clock = BPF_CORE_READ(rq, clock);
	task_clock = BPF_CORE_READ(rq, clock_task);
	return clock > task_clock ? clock - task_clock : 0;
}

/*
 * The time a tick stands for: the period in force on this CPU, plus the part of the previous one
 * a change cut off, less the time the CPU did not run its tasks since its last tick
 * (cpu_lost_ns()). The kernel reports the event's first period with every tick
 * (ctx->sample_period), whatever userspace drew since: `cpu_clocks` has the one in force. A new
 * period restarts the CPU's timer, so the part of the old one already run had no tick: half a
 * period a draw (5% of all time at 99 Hz with ten draws a second); the tick after a change
 * carries it, from this CPU's last tick to the draw, at most two periods. Never more than that:
 * a longer gap holds time the (virtual) CPU was not running, which the task clock does not count
 * either (the whole gap was tried: 11% over a child's own CPU time under CI load). Stolen time
 * longer than the weight had its ticks skipped (the timer moves past the periods missed): only
 * what the weight holds comes off. *lost: what came off.
 */
static __always_inline __u64 tick_weight(__u64 first, __u64 *lost)
{
	__u32 cpu = bpf_get_smp_processor_id();
	__u64 now = bpf_ktime_get_ns(), off, was_off, last, changed, period, w, cut;
	struct ls_cpu_clock *t;

	*lost = 0;
	if (cpu >= LS_CLOCK_CPUS)
		return first;
	t = &cpu_clocks[cpu];
	period = t->period_ns ?: first;
	last = t->last_ns;
	changed = t->changed_ns;
	was_off = t->off_ns;
	off = cpu_lost_ns(cpu);
	t->last_ns = now;
	w = period;
	if (last && changed > last && changed < now) {
		cut = changed - last;
		if (cut > 2 * period)
			cut = 2 * period;
		/* a tick between the draw and its ioctl ended the old period: the gap, not more */
		w = now - last < cut + period ? now - last : cut + period;
	}
	/* never back: a smaller reading was an update read half-done (or none) */
	if (off > was_off) {
		t->off_ns = off;
		if (was_off) /* the first reading: nothing to compare with */
			*lost = off - was_off < w ? off - was_off : w;
	}
	return w - *lost;
}

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip = ctx->regs.ip, aux = 0, lost;
	__u64 weight =
		tick_weight(ctx->sample_period, &lost); /* every tick: the next one's start */
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct task_struct *task;
	struct ls_proc *p;
	__u16 xflags = 0;
	bool kernel;

	p = ls_current_target(tgid, tid);
	if (!p)
		return 0;
	LS_STAT_INC(taken);
	if (lost)
		__sync_fetch_and_add(&stats.tick_lost_ns, lost);
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
