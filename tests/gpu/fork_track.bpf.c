// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test-only stand-in for the collector's process tracking: a child forked by a target becomes a
 * target, so that the GPU probes of child processes reach the ring buffer.
 */
#include "maps.bpf.h" /* procs, merged with gpu.bpf.c's copy */

SEC("tp_btf/sched_process_fork")
int BPF_PROG(gpu_test_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	struct ls_proc *p;

	if (ptgid == ctgid)
		return 0;
	p = bpf_map_lookup_elem(&procs, &ptgid);
	if (p)
		bpf_map_update_elem(&procs, &ctgid, p, BPF_NOEXIST);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
