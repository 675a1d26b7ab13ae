// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Test-only stand-in for the collector's process tracking: a child forked by a target becomes a
 * target, so that the GPU probes of child processes reach the ring buffer.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "linescope.h"

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_MAX_PROCS);
	__type(key, __u32);
	__type(value, struct ls_proc);
} procs SEC(".maps") __weak;

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
