// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Wall-clock time: off-CPU intervals of target threads (see offcpu.bpf.h). */
#include "offcpu.bpf.h"

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tgid = BPF_CORE_READ(prev, tgid), tid = BPF_CORE_READ(prev, pid);
	struct ls_pending *w, fresh = {};
	struct ls_proc *p;

	if (!offcpu_enabled)
		return 0;
	p = tgid && tgid != self_tgid ? bpf_map_lookup_elem(&procs, &tgid) : NULL;
	if (p) {
		/*
		 * An interval that ended but was not reported yet (preempted again before its
		 * syscall returned): report it now, we run in its thread's context.
		 */
		ls_offcpu_resume(p, tid, LS_SLOT_ATOMIC);
		fresh.start = bpf_ktime_get_ns();
		/* prev is current: its syscall says what it waits for */
		ls_offcpu_classify(p, prev, !preempt && prev_state, &fresh);
		if (bpf_map_update_elem(&offcpu_pending, &tid, &fresh, BPF_ANY))
			LS_STAT_INC(pending_full);
	}
	tid = BPF_CORE_READ(next, pid);
	w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (w && !w->end)
		w->end = bpf_ktime_get_ns();
	return 0;
}

/* A blocking syscall returns: the thread is back in its own context with the same Python stack. */
SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ls_proc *p;

	if (!offcpu_enabled || !tgid || tgid == self_tgid)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		ls_offcpu_resume(p, tid, LS_SLOT_TASK);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
