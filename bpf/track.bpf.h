/* SPDX-License-Identifier: MIT */
/* Target-set membership: is the current process profiled, and adding processes found in the cgroup.
 */
#ifndef __LS_TRACK_BPF_H
#define __LS_TRACK_BPF_H

#include "maps.bpf.h"

static __always_inline void emit_proc_event_cpu(__u32 kind, __u32 pid, __u32 ppid, __u32 tid,
						__s32 exit_code, __u64 cpu_ns)
{
	struct ls_proc_event *e;

	e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
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
	bpf_ringbuf_submit(e, 0);
	LS_STAT_INC(proc_events);
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

	if (!tgid || tgid == self_tgid)
		return NULL;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p || !filter_cgroup)
		return p;
	if (bpf_current_task_under_cgroup(&cgroup_filter, 0) != 1)
		return NULL;
	if (bpf_map_update_elem(&procs, &tgid, &fresh, BPF_NOEXIST) == 0)
		emit_proc_event(LS_PE_SEEN, tgid, 0, tid, 0);
	else if (!bpf_map_lookup_elem(&procs, &tgid))
		LS_STAT_INC(procs_full);
	return bpf_map_lookup_elem(&procs, &tgid);
}

#endif /* __LS_TRACK_BPF_H */
