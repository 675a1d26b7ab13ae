// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Process tracking: a target's children become targets at fork (inheriting its interpreter layout,
 * since fork copies the address space), exec asks userspace to re-discover the interpreter, and the
 * exit of a target's last thread reports its wait(2) status.
 */
#include "pywalk.bpf.h"
#include "track.bpf.h"

/* The forking thread's Python stack: which line started the child. Runs in the parent. */
static __always_inline void emit_spawn_stack(const struct ls_proc *p, __u32 ptgid, __u32 ctgid)
{
	struct task_struct *task = bpf_get_current_task_btf();
	__u64 id = bpf_get_current_pid_tgid();
	struct ls_sample_buf *b;
	__u32 zero = 0, n;

	if (!(p->flags & LS_PF_PYTHON) || (id >> 32) != ptgid)
		return;
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return;
	__builtin_memset(&b->hdr, 0, sizeof(b->hdr));
	b->hdr.type = LS_REC_SAMPLE;
	b->hdr.pid = ptgid;
	b->hdr.tid = (__u32)id;
	b->hdr.kind = LS_SAMPLE_SPAWN;
	b->hdr.ts = bpf_ktime_get_ns();
	b->hdr.aux = ctgid;
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	n = ls_walk_python(b, p, task, (__u32)id);
	if (n > LS_MAX_FRAMES)
		n = LS_MAX_FRAMES;
	b->hdr.nframes = n;
	if (bpf_ringbuf_output(&events, b, sizeof(struct ls_sample) + n * sizeof(struct ls_frame),
			       0))
		LS_STAT_INC(ringbuf_drops);
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct ls_proc *p;

	if (ptgid == ctgid)
		return 0; /* a new thread: covered by its process's entry */
	p = ls_current_target(ptgid, BPF_CORE_READ(parent, pid));
	if (!p)
		return 0;
	emit_spawn_stack(p, ptgid, ctgid);
	if (bpf_map_update_elem(&procs, &ctgid, p, BPF_ANY)) {
		LS_STAT_INC(procs_full);
		return 0;
	}
	emit_proc_event(LS_PE_FORK, ctgid, ptgid, BPF_CORE_READ(child, pid), 0);
	return 0;
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);
	struct ls_proc *p = ls_current_target(tgid, BPF_CORE_READ(task, pid));

	if (!p)
		return 0;
	/* new image: nothing about the old interpreter holds */
	p->flags = LS_PF_PENDING;
	p->gen++;
	emit_proc_event(LS_PE_EXEC, tgid, BPF_CORE_READ(task, real_parent, tgid), old_pid, 0);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(task, tgid);

	if (!group_dead)
		return 0;
	if (!bpf_map_lookup_elem(&procs, &tgid))
		return 0;
	emit_proc_event(LS_PE_EXIT, tgid, BPF_CORE_READ(task, real_parent, tgid),
			BPF_CORE_READ(task, pid), BPF_CORE_READ(task, exit_code));
	bpf_map_delete_elem(&procs, &tgid);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
