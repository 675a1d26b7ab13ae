// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Process tracking: a target's children become targets at fork (inheriting its interpreter layout,
 * since fork copies the address space), exec asks userspace to re-discover the interpreter, and the
 * exit of a target's last thread reports its wait(2) status.
 */
#include "emit.bpf.h"
#include "track.bpf.h"

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct ls_proc *p;

	if (ptgid == ctgid)
		return 0; /* a new thread: covered by its process's entry */
	p = ls_current_target(ptgid, BPF_CORE_READ(parent, pid));
	if (!p)
		return 0;
	/* the forking thread's Python stack: which line started the child (we run in the parent) */
	if ((bpf_get_current_pid_tgid() >> 32) == ptgid)
		ls_emit_sample(p, LS_SAMPLE_SPAWN, 0, ctgid, 0, 0, false, LS_SLOT_TASK);
	if (bpf_map_update_elem(&procs, &ctgid, p, BPF_ANY)) {
		LS_STAT_INC(procs_full);
		return 0;
	}
	emit_proc_event(LS_PE_FORK, ctgid, ptgid, BPF_CORE_READ(child, pid), 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct ls_proc *p = ls_current_target(tgid, BPF_CORE_READ(task, pid));

	if (!p)
		return 0;
	/* new image: nothing about the old interpreter holds */
	p->flags = LS_PF_PENDING;
	p->gen++;
	emit_proc_event(LS_PE_EXEC, tgid, BPF_CORE_READ(task, real_parent, tgid), old_pid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);

	if (!bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	/*
	 * Every thread's CPU time as the scheduler accounted it (up to one tick stale): userspace
	 * scales the thread's samples to it, so that timer and scheduling noise cancels out.
	 */
	emit_proc_event_cpu(LS_PE_THREAD_EXIT, tgid, 0, tid, 0,
			    BPF_CORE_READ(task, se.sum_exec_runtime));
	if (!group_dead)
		return 0;
	emit_proc_event(LS_PE_EXIT, tgid, BPF_CORE_READ(task, real_parent, tgid),
			BPF_CORE_READ(task, pid), BPF_CORE_READ(task, exit_code));
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
