/* SPDX-License-Identifier: MIT */
/*
 * Off-CPU intervals of target threads. sched_switch notes when a thread leaves the CPU (and, from
 * its syscall, whether it waits for the GIL or for a child); when it runs again, in its own
 * context (its syscall's exit or its next sample), its Python stack is the one it blocked on and
 * the interval is emitted. Intervals shorter than the sampling period are kept with probability
 * d/period at weight period, so wait time stays unbiased while costing at most one walk per
 * period per thread, like on-CPU sampling.
 */
#ifndef __LS_OFFCPU_BPF_H
#define __LS_OFFCPU_BPF_H

#include "emit.bpf.h"

const volatile bool offcpu_enabled __weak = false;
const volatile __u64 offcpu_period_ns __weak = 1001001;

struct ls_pending {
	__u64 start;  /* left the CPU */
	__u64 end;    /* got it back (0: still off) */
	__s32 waited; /* wait4/waitid target */
	__u16 xflags;
	__u16 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* tid */
	__type(value, struct ls_pending);
} offcpu_pending SEC(".maps") __weak;

/* Emits the interval that ended for the current thread, if any. Call in the thread's context. */
static __always_inline void ls_offcpu_resume(const struct ls_proc *p, __u32 tid, __u32 slot)
{
	struct ls_pending *w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	__u64 d, weight;
	__u16 xflags;
	__s32 waited;

	if (!w || !w->end)
		return;
	d = w->end > w->start ? w->end - w->start : 0;
	xflags = w->xflags;
	waited = w->waited;
	bpf_map_delete_elem(&offcpu_pending, &tid);
	if (d >= offcpu_period_ns) {
		weight = d;
	} else if ((__u64)bpf_get_prandom_u32() * offcpu_period_ns < d * 0x100000000ULL) {
		weight = offcpu_period_ns;
	} else {
		LS_STAT_INC(offcpu_dropped);
		return;
	}
	if (!ls_emit_sample(p, LS_SAMPLE_OFFCPU, weight, (__u64)(__s64)waited, xflags, 0, false,
			    slot))
		LS_STAT_INC(offcpu);
}

#endif /* __LS_OFFCPU_BPF_H */
