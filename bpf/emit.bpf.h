/* SPDX-License-Identifier: MIT */
/* Emitting a sample record with a thread's Python stack, shared by every program. */
#ifndef __LS_EMIT_BPF_H
#define __LS_EMIT_BPF_H

#include "agg.bpf.h"
#include "pywalk.bpf.h"
#include "view.bpf.h"

#ifndef LS_WALK_REMOTE
/*
 * task is inside execve(). A sample taken there after the new image's mm (exec_mmap()) hashes
 * with the new executable, and its record comes before the exec's (or is the tick that
 * interrupted handle_exec after it bumped the generation), so userspace counts its stack for the
 * old image. The new image's samples that hash the same (no frames yet, the generation bumped;
 * or rolled back by a late push of the old image's entry) would be added up under that
 * description and count for the old image too: a `sleep` exec'd by Python had its whole 1 s
 * wait put on Python's image. Such a sample goes whole, and marks no stack known.
 */
static __always_inline bool in_execve(struct task_struct *task)
{
	return bpf_core_field_exists(task->in_execve) &&
	       BPF_CORE_READ_BITFIELD_PROBED(task, in_execve);
}

/*
 * On-CPU samples (without an RSS reading) and off-CPU intervals (but waits for a child, whose
 * target each record names) are added up in the kernel, unless their walk failed midway or they
 * were taken inside execve().
 */
static __always_inline bool agg_eligible(__u8 kind, __u16 xflags, __u8 flags,
					 struct task_struct *task)
{
	if (!agg_enabled || (flags & (LS_SF_READ_FAIL | LS_SF_BAD_FRAME)))
		return false;
	if (kind == LS_SAMPLE_ONCPU ? xflags & LS_XF_RSS
				    : kind != LS_SAMPLE_OFFCPU || (xflags & LS_XF_WAITPID))
		return false;
	if (in_execve(task)) {
		LS_STAT_INC(agg_in_exec);
		return false;
	}
	return true;
}

#endif

/*
 * Builds a sample of thread `task` (tid of process pid) with kind, weight, aux and xflags, walks
 * its Python stack when the process runs a known interpreter, and writes it to the ring buffer.
 * ip: the user-mode instruction pointer when known (0 otherwise); kernel: sampled in kernel mode;
 * slot: the scratch buffer of the calling context (enum ls_scratch_slot). Outside
 * LS_WALK_REMOTE, task must be the current task or another thread of its process (reads go to
 * the current address space), and a sample that can be added up in the kernel
 * (agg.bpf.h) is, once its thread's first one with that stack has gone whole.
 */
static __always_inline int ls_emit_task_sample(const struct ls_proc *p, struct task_struct *task,
					       __u32 pid, __u32 tid, __u8 kind, __u64 weight,
					       __u64 aux, __u16 xflags, __u64 ip, bool kernel,
					       __u32 slot, __u64 ts)
{
	struct ls_sample_buf *b;
	__u32 n = 0, *busy = NULL;
	int err = 0;
#ifndef LS_WALK_REMOTE
	struct ls_known_key kk = {.pid = pid, .tid = tid};
	bool first = false;
#endif

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
	b->hdr.ts = ts ?: bpf_ktime_get_ns();
	b->hdr.user_ip = ip;
	b->hdr.weight_ns = weight;
	b->hdr.aux = aux;
	b->hdr.xflags = xflags;
	b->hdr.pad1 = 0;
	b->hdr.stack = 0;
	b->hdr.view = 0;
	if (p->flags & LS_PF_PYTHON)
		n = ls_walk_python(b, p, task, pid, tid);
	else
		b->hdr.flags |= LS_SF_NOT_PYTHON;
	if (n > LS_MAX_FRAMES)
		n = LS_MAX_FRAMES;
	b->hdr.nframes = n;
#ifndef LS_WALK_REMOTE
	if (agg_eligible(kind, xflags, b->hdr.flags, task)) {
		/*
		 * the executable too, not only the exec count: userspace can push an entry of the
		 * previous image over an exec's (its generation rolled back, ls_loader__set_proc),
		 * and a stack of one image must never be counted under another's description
		 */
		struct ls_agg_req q = {
			.pstart = BPF_CORE_READ(task, group_leader, start_time),
			.exe = BPF_CORE_READ(task, mm, exe_file, f_inode, i_ino),
			.ip = ip,
			.text_lo = p->text_lo,
			.text_hi = p->text_hi,
			.weight = weight,
			.ts = b->hdr.ts,
			.pid = pid,
			.tid = tid,
			.gen = p->gen,
			.n = n,
			.xflags = xflags,
			.kind = kind,
			.kernel = kernel,
		};
		int r = ls_agg_sample(b, &q);

		if (r == LS_AGG_ADDED)
			goto out;
		if (r == LS_AGG_FIRST) {
			kk.stack = b->hdr.stack = q.stack;
			first = true;
		}
	}
#endif
#ifdef LS_WALK_REMOTE
	BPF_CORE_READ_STR_INTO(&b->hdr.comm, task, comm);
#else
	/* another thread of the current process (a GPU launch charged to its waiter) */
	if (tid != (__u32)bpf_get_current_pid_tgid()) {
		BPF_CORE_READ_STR_INTO(&b->hdr.comm, task, comm);
	} else {
		bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
		/* its frames name files: userspace reads them as the thread saw files here */
		if (n)
			b->hdr.view = ls_task_view_key(bpf_get_current_task(), &b->view);
	}
#endif
	if (bpf_ringbuf_output(&events, b, sizeof(struct ls_sample) + n * sizeof(struct ls_frame),
			       ls_rb_flags())) {
		LS_STAT_INC(ringbuf_drops);
		err = -1;
		goto out;
	}
#ifndef LS_WALK_REMOTE
	if (first) {
		__u8 one = 1;

		/* only once userspace has it: a dropped description is made again */
		bpf_map_update_elem(&agg_known, &kk, &one, BPF_ANY);
		LS_STAT_INC(agg_first);
	}
#endif
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
				   aux, xflags, ip, kernel, slot, 0);
}
#endif

#endif /* __LS_EMIT_BPF_H */
