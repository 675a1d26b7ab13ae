// SPDX-License-Identifier: GPL-2.0 OR MIT
/* On-CPU sampler: a cpu-clock perf event on every CPU; target threads get their Python stack
 * walked. */
#include "emit.bpf.h"
#include "mem.bpf.h"
#include "offcpu.bpf.h"
#include "track.bpf.h"

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip = ctx->regs.ip, aux = 0;
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
	if (!ls_emit_sample(p, LS_SAMPLE_ONCPU, ctx->sample_period, aux, xflags, ip, kernel,
			    LS_SLOT_IRQ))
		LS_STAT_INC(samples);
	else
		LS_STAT_INC(sample_drops);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
