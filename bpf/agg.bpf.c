// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A sample added up in the kernel (agg.bpf.h): hashed, looked up among the stacks its thread
 * described already, and counted under (process, thread, stack, class, mode). A global
 * function, so that each program verifies it once and apart from its caller's walk.
 */
#include "agg.bpf.h"

static __always_inline void agg_key_of(const struct ls_agg_req *q, struct ls_agg_key *k)
{
	if (q->kind == LS_SAMPLE_OFFCPU) {
		k->cls = (q->xflags & LS_XF_GIL_WAIT)	 ? LS_CLASS_GIL_WAIT
			 : (q->xflags & LS_XF_VOLUNTARY) ? LS_CLASS_WAIT
							 : LS_CLASS_RUNQ;
		k->mode = LS_MODE_UNKNOWN;
	} else {
		k->cls = LS_CLASS_CPU;
		k->mode = q->kernel				      ? LS_MODE_KERNEL
			  : q->ip >= q->text_lo && q->ip < q->text_hi ? LS_MODE_PYTHON
								      : LS_MODE_NATIVE;
	}
}

/* --timeline: when a sample added up under k happened (ts), unless it is a short wait. */
static __always_inline void emit_tick(const struct ls_agg_key *k, __u64 ts, __u64 weight)
{
	struct ls_tick t = {
		.type = LS_REC_TICK,
		.pid = k->pid,
		.tid = k->tid,
		.cls = k->cls,
		.mode = k->mode,
		.ts = ts,
		.weight_ns = weight,
		.stack = k->stack,
	};

	bool timeline =
		timeline_enabled && (k->cls == LS_CLASS_CPU || weight > timeline_min_wait_ns);

	if (!timeline && !(long_wait_ns && k->cls == LS_CLASS_WAIT && weight >= long_wait_ns))
		return;
	if (!bpf_ringbuf_output(&events, &t, sizeof(t), ls_rb_flags()))
		return;
	if (timeline)
		LS_STAT_INC(timeline_drops);
	else
		LS_STAT_INC(long_wait_drops);
}

__noinline int ls_agg_sample(struct ls_sample_buf *b, struct ls_agg_req *q)
{
	struct ls_agg_key k = {};
	struct ls_known_key kk = {};
	__u32 n;
	int added;

	if (!b || !q)
		return LS_AGG_WHOLE;
	n = q->n < LS_MAX_FRAMES ? q->n : LS_MAX_FRAMES;
	k.pid = kk.pid = q->pid;
	k.tid = kk.tid = q->tid;
	k.stack = kk.stack = q->stack =
		ls_agg_stack_hash(b->frames, n, b->hdr.flags, q->pstart, q->exe, q->gen);
	if (!bpf_map_lookup_elem(&agg_known, &kk))
		return LS_AGG_FIRST;
	agg_key_of(q, &k);
	added = ls_agg_add(&k, q->weight);
	if (!added) {
		LS_STAT_INC(agg_added);
		emit_tick(&k, q->ts, q->weight);
		return LS_AGG_ADDED;
	}
	if (added == -2)
		LS_STAT_INC(agg_unset);
	else
		LS_STAT_INC(agg_full);
	return LS_AGG_WHOLE;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
