/* SPDX-License-Identifier: MIT */
/* Target-set membership: is the current process profiled, and adding processes found in the cgroup.
 */
#ifndef __LS_TRACK_BPF_H
#define __LS_TRACK_BPF_H

#include "maps.bpf.h"

#define LS_PF_EXITING 0x00000004 /* task->flags: getting shut down (include/linux/sched.h) */

/* The pid of task in its own (innermost) pid namespace. */
static __always_inline __u32 ls_task_nspid(struct task_struct *task)
{
	struct pid *pid = BPF_CORE_READ(task, thread_pid);
	unsigned int level = BPF_CORE_READ(pid, level);
	int nr = 0;

	bpf_core_read(&nr, sizeof(nr), &pid->numbers[level & 31].nr);
	return nr;
}

/* Depth of task's pid namespace (0: the host's). */
static __always_inline __u32 ls_task_pidns_level(struct task_struct *task)
{
	return BPF_CORE_READ(task, thread_pid, level);
}

/*
 * A process event; subject (the new or newly seen process, or NULL) gives its start time and
 * namespace pid, gen its `procs` entry's generation.
 */
static __always_inline void emit_proc_event_full(__u32 kind, __u32 pid, __u32 ppid, __u32 tid,
						 __s32 exit_code, __u64 cpu_ns,
						 struct task_struct *subject, __u32 gen)
{
	struct ls_proc_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);

	if (!e) {
		LS_STAT_INC(ringbuf_drops);
		return;
	}
	e->type = LS_REC_PROC;
	e->kind = kind;
	e->pid = pid;
	e->ppid = ppid;
	e->tid = tid;
	e->exit_code = exit_code;
	e->ts = bpf_ktime_get_ns();
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->cpu_ns = cpu_ns;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	e->start_ns = subject ? BPF_CORE_READ(subject, group_leader, start_time) : 0;
	e->nspid = subject ? ls_task_nspid(subject) : 0;
	e->gen = gen;
	/*
	 * Process events wake the consumer at once (unlike samples): identity and interpreter must
	 * be read while a process lives, and short-lived ones live for milliseconds. A thread's
	 * exit is frequent and needs no prompt reply.
	 */
	bpf_ringbuf_submit(e, kind == LS_PE_THREAD_EXIT ? ls_rb_flags() : BPF_RB_FORCE_WAKEUP);
	LS_STAT_INC(proc_events);
}

static __always_inline void emit_proc_event_cpu(__u32 kind, __u32 pid, __u32 ppid, __u32 tid,
						__s32 exit_code, __u64 cpu_ns)
{
	emit_proc_event_full(kind, pid, ppid, tid, exit_code, cpu_ns, NULL, 0);
}

static __always_inline void emit_proc_event(__u32 kind, __u32 pid, __u32 ppid, __u32 tid,
					    __s32 exit_code)
{
	emit_proc_event_cpu(kind, pid, ppid, tid, exit_code, 0);
}

/*
 * Returns the target entry of the current process, adding a pending one (and telling userspace)
 * when --cgroup is set and the process is in the group but not yet known. NULL: not a target.
 */
static __always_inline struct ls_proc *ls_current_target(__u32 tgid, __u32 tid)
{
	struct ls_proc *p, fresh = {.flags = LS_PF_PENDING};
	struct task_struct *task;

	if (!tgid || tgid == self_tgid)
		return NULL;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p || !filter_cgroup)
		return p;
	if (bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return NULL;
	/* a process past its exit record is gone for us: do not bring it back as a new one */
	task = bpf_get_current_task_btf();
	if (BPF_CORE_READ(task, flags) & LS_PF_EXITING)
		return NULL;
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) == 0) {
		__sync_fetch_and_add(&procs_changes, 1);
		emit_proc_event_full(LS_PE_SEEN, tgid, BPF_CORE_READ(task, real_parent, tgid), tid,
				     0, 0, task, 0);
	} else if (!bpf_map_lookup_elem(&procs, &tgid)) {
		LS_STAT_INC(procs_full);
	}
	return bpf_map_lookup_elem(&procs, &tgid);
}

/*
 * The target entry of thread t's process, seen from another thread's context (a task
 * iterator): ls_current_target() of a task that is not the current one, with no cgroup check.
 * NULL: not a target.
 */
static __always_inline struct ls_proc *ls_remote_target(struct task_struct *t, __u32 *tgid,
							__u32 *tid)
{
	if (!t || (t->flags & LS_PF_EXITING))
		return NULL;
	*tgid = t->tgid;
	*tid = t->pid;
	if (!*tgid || *tgid == self_tgid)
		return NULL;
	return bpf_map_lookup_elem(&procs, tgid);
}

#endif /* __LS_TRACK_BPF_H */
