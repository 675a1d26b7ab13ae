/* SPDX-License-Identifier: MIT */
/* Emitting a sample record with a thread's Python stack, shared by every program. */
#ifndef __LS_EMIT_BPF_H
#define __LS_EMIT_BPF_H

#include "pywalk.bpf.h"

/*
 * Builds a sample of thread `task` (tid of process pid) with kind, weight, aux and xflags, walks
 * its Python stack when the process runs a known interpreter, and writes it to the ring buffer.
 * ip: the user-mode instruction pointer when known (0 otherwise); kernel: sampled in kernel mode;
 * slot: the scratch buffer of the calling context (enum ls_scratch_slot). Outside
 * LS_WALK_REMOTE, task must be the current task.
 */
static __always_inline int ls_emit_task_sample(const struct ls_proc *p, struct task_struct *task,
					       __u32 pid, __u32 tid, __u8 kind, __u64 weight,
					       __u64 aux, __u16 xflags, __u64 ip, bool kernel,
					       __u32 slot)
{
	struct ls_sample_buf *b;
	__u32 n = 0, *busy = NULL;
	int err = 0;

	if (slot == LS_SLOT_TASK && !(busy = ls_task_scratch_take()))
		return -1;
	b = bpf_map_lookup_elem(&scratch, &slot);
	if (!b) {
		err = -1;
		goto out;
	}
	b->hdr.type = kind == LS_SAMPLE_OFFCPU ? LS_REC_OFFCPU : LS_REC_SAMPLE;
	b->hdr.pid = pid;
	b->hdr.tid = tid;
	b->hdr.cpu = bpf_get_smp_processor_id();
	b->hdr.kind = kind;
	b->hdr.flags = kernel ? LS_SF_KERNEL : 0;
	b->hdr.ts = bpf_ktime_get_ns();
	b->hdr.user_ip = ip;
	b->hdr.weight_ns = weight;
	b->hdr.aux = aux;
	b->hdr.xflags = xflags;
	b->hdr.pad1 = 0;
#ifdef LS_WALK_REMOTE
	BPF_CORE_READ_STR_INTO(&b->hdr.comm, task, comm);
#else
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
#endif
	if (p->flags & LS_PF_PYTHON)
		n = ls_walk_python(b, p, task, pid, tid);
	else
		b->hdr.flags |= LS_SF_NOT_PYTHON;
	if (n > LS_MAX_FRAMES)
		n = LS_MAX_FRAMES;
	b->hdr.nframes = n;
	if (bpf_ringbuf_output(&events, b, sizeof(struct ls_sample) + n * sizeof(struct ls_frame),
			       ls_rb_flags())) {
		LS_STAT_INC(ringbuf_drops);
		err = -1;
	}
out:
	if (busy)
		ls_task_scratch_put(busy);
	return err;
}

#ifndef LS_WALK_REMOTE
/* ls_emit_task_sample() of the current thread. */
static __always_inline int ls_emit_sample(const struct ls_proc *p, __u8 kind, __u64 weight,
					  __u64 aux, __u16 xflags, __u64 ip, bool kernel,
					  __u32 slot)
{
	__u64 id = bpf_get_current_pid_tgid();

	return ls_emit_task_sample(p, bpf_get_current_task_btf(), id >> 32, (__u32)id, kind, weight,
				   aux, xflags, ip, kernel, slot);
}
#endif

#endif /* __LS_EMIT_BPF_H */
