// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test-only process tracking for trace_loader: a target's child processes become targets at fork
 * (the collector's bpf/proc.bpf.c does this, and more, for linescope-bpf itself).
 */
#include "maps.bpf.h"

__u64 trace_forks;

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_trace_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct ls_proc *p;

	if (ptgid == ctgid)
		return 0; /* a new thread */
	p = bpf_map_lookup_elem(&procs, &ptgid);
	if (!p)
		return 0;
	if (bpf_map_update_elem(&procs, &ctgid, p, BPF_ANY) == 0)
		__sync_fetch_and_add(&trace_forks, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
