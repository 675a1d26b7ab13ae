// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Memory growth attribution (--memory): when a target's RSS has moved by mem_threshold since the
 * last event, the thread that moved it (the current one, when it is the mm's owner) reports the
 * new RSS with its Python stack.
 */
#include "emit.bpf.h"
#include "mem.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_MAX_PROCS);
	__type(key, __u32);   /* tgid */
	__type(value, __u64); /* RSS at the last event */
} rss_last SEC(".maps");

SEC("tp_btf/rss_stat")
int BPF_PROG(handle_rss, struct mm_struct *mm, int member)
{
	__u64 id = bpf_get_current_pid_tgid(), rss, *last, delta;
	__u32 tgid = id >> 32;
	struct task_struct *task;
	struct ls_proc *p;

	if (!mem_enabled || !tgid || tgid == self_tgid || member == MM_SWAPENTS)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	task = bpf_get_current_task_btf();
	if (task->mm != mm)
		return 0; /* someone else's memory (reclaim, remote access): not ours to attribute
			   */
	rss = ls_mm_rss(mm);
	last = bpf_map_lookup_elem(&rss_last, &tgid);
	if (last) {
		delta = rss > *last ? rss - *last : *last - rss;
		if (delta < mem_threshold)
			return 0;
		*last = rss;
	} else {
		bpf_map_update_elem(&rss_last, &tgid, &rss, BPF_ANY);
	}
	if (!ls_emit_sample(p, LS_SAMPLE_RSS, 0, rss, 0, 0, false, LS_SLOT_ATOMIC))
		LS_STAT_INC(rss_events);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
