// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Process tracking: a target's children become targets at fork (inheriting its interpreter layout,
 * since fork copies the address space); exec names the new image from the kernel (path, inode,
 * arguments) and, for an interpreter executable already known, sets its entry at once; the exit
 * of a target's last thread reports its wait(2) status and keeps how it saw files.
 */
#include "emit.bpf.h"
#include "offcpu.bpf.h"
#include "track.bpf.h"
#include "view.bpf.h"

SEC("tp_btf/sched_process_fork")
int BPF_PROG(handle_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = BPF_CORE_READ(parent, tgid), ctgid = BPF_CORE_READ(child, tgid);
	struct ls_proc *p, *c;

	if (ptgid == ctgid)
		return 0; /* a new thread: covered by its process's entry */
	p = ls_current_target(ptgid, BPF_CORE_READ(parent, pid));
	if (!p)
		return 0;
	/* the forking thread's Python stack: which line started the child (we run in the parent) */
	if ((bpf_get_current_pid_tgid() >> 32) == ptgid)
		ls_emit_sample(p, LS_SAMPLE_SPAWN, 0, ctgid, 0, 0, false, LS_SLOT_ATOMIC);
	if (bpf_map_update_elem(&procs, &ctgid, p, BPF_ANY)) {
		LS_STAT_INC(procs_full);
		return 0;
	}
	__sync_fetch_and_add(&procs_changes, 1);
	c = bpf_map_lookup_elem(&procs, &ctgid);
	if (!c)
		return 0;
	/* clone(CLONE_NEWPID) puts the child one namespace deeper: its thread ids are counted there */
	c->pidns_level = ls_task_pidns_level(child);
	emit_proc_event_full(LS_PE_FORK, ctgid, ptgid, BPF_CORE_READ(child, pid), 0, 0, child,
			     c->gen);
	return 0;
}

/* The inode of the task's executable, as `images` keys it. */
static __always_inline void image_key(struct task_struct *task, struct ls_image_key *k)
{
	struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);

	k->dev = BPF_CORE_READ(inode, i_sb, s_dev);
	k->ino = BPF_CORE_READ(inode, i_ino);
	k->pad = 0;
	if (bpf_core_field_exists(inode->i_mtime_sec)) {
		k->mtime_sec = BPF_CORE_READ(inode, i_mtime_sec);
		k->mtime_nsec = BPF_CORE_READ(inode, i_mtime_nsec);
	} else {
		/* before 6.11 (6.7-6.10 call it __i_mtime): struct timespec64 i_mtime */
		struct inode___old {
			struct timespec64 i_mtime;
		} *old = (void *)inode;

		k->mtime_sec = BPF_CORE_READ(old, i_mtime.tv_sec);
		k->mtime_nsec = BPF_CORE_READ(old, i_mtime.tv_nsec);
	}
}

/*
 * The executable's inode change time, as stat() gives it. 6.11 split it into i_ctime_sec and
 * i_ctime_nsec, whose top bit multigrain timestamps use as a flag (I_CTIME_QUERIED); 6.6-6.10
 * call it __i_ctime, older kernels i_ctime. 0 where none of them is found.
 */
static __always_inline void exe_ctime(struct task_struct *task, struct ls_exec_event *e)
{
	struct inode *inode = BPF_CORE_READ(task, mm, exe_file, f_inode);
	struct inode___ctime_6_6 {
		struct timespec64 __i_ctime;
	} *mid = (void *)inode;
	struct inode___ctime_old {
		struct timespec64 i_ctime;
	} *old = (void *)inode;

	e->exe_ctime_sec = 0;
	e->exe_ctime_nsec = 0;
	if (bpf_core_field_exists(inode->i_ctime_nsec)) {
		e->exe_ctime_sec = BPF_CORE_READ(inode, i_ctime_sec);
		e->exe_ctime_nsec = BPF_CORE_READ(inode, i_ctime_nsec) & ~(1U << 31);
	} else if (bpf_core_field_exists(mid->__i_ctime)) {
		e->exe_ctime_sec = BPF_CORE_READ(mid, __i_ctime.tv_sec);
		e->exe_ctime_nsec = BPF_CORE_READ(mid, __i_ctime.tv_nsec);
	} else if (bpf_core_field_exists(old->i_ctime)) {
		e->exe_ctime_sec = BPF_CORE_READ(old, i_ctime.tv_sec);
		e->exe_ctime_nsec = BPF_CORE_READ(old, i_ctime.tv_nsec);
	}
}

/* A known interpreter image: its entry with the addresses moved by this process's load bias. */
static __always_inline void set_from_image(struct ls_proc *p, const struct ls_image *img,
					   __u64 start_code, struct task_struct *task)
{
	__u32 gen = p->gen;

	__builtin_memcpy(p, &img->proc, sizeof(*p));
	ls_proc_move(p, img->dyn ? start_code - img->x_vaddr : 0);
	p->gen = gen;
	p->pidns_level = ls_task_pidns_level(task);
	p->flags = LS_PF_PYTHON;
}

/* ls_read_view(), verified once per program that calls it, not along each of its paths */
static __noinline bool read_view(struct task_struct *task, struct ls_task_view *v)
{
	return ls_read_view(task, v);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *task, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), zero = 0;
	struct ls_proc *p = ls_current_target(tgid, BPF_CORE_READ(task, pid));
	struct ls_exec_event *e;
	struct ls_image_key key;
	struct ls_image *img;
	__u64 args, args_end, n, start_code;

	if (!p)
		return 0;
	image_key(task, &key);
	start_code = BPF_CORE_READ(task, mm, start_code);
	img = bpf_map_lookup_elem(&images, &key);
	/*
	 * New image: nothing about the old interpreter holds. A known image's entry is set at once,
	 * before the rest of this program (15-20 us): a tick can interrupt it, and one that finds
	 * the entry pending is a sample no image walks, its record before the exec's (bench/scale
	 * 500 x 20, 999 Hz: 0-6 a run while the entry was set last).
	 */
	p->flags = LS_PF_PENDING;
	p->gen++;
	if (img)
		set_from_image(p, img, start_code, task);
	LS_STAT_INC(exec_events);
	e = bpf_map_lookup_elem(&exec_scratch, &zero);
	if (!e)
		return 0;
	e->image = key;
	e->start_code = start_code;
	e->type = LS_REC_EXEC;
	e->pid = tgid;
	e->ppid = BPF_CORE_READ(task, real_parent, tgid);
	e->old_tid = old_pid;
	e->nspid = ls_task_nspid(task);
	e->pidns_level = ls_task_pidns_level(task);
	exe_ctime(task, e);
	e->flags = 0;
	e->ts = bpf_ktime_get_ns();
	e->start_ns = BPF_CORE_READ(task, group_leader, start_time);
	e->cgroup_id = bpf_get_current_cgroup_id();
	e->env_start = BPF_CORE_READ(task, mm, env_start);
	e->env_end = BPF_CORE_READ(task, mm, env_end);
	/* its credentials are the new image's here: begin_new_exec() committed them */
	read_view(task, &e->view);
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	/* a script's interpreter, else the file given to execve */
	n = bpf_probe_read_kernel_str(e->path, sizeof(e->path), BPF_CORE_READ(bprm, interp));
	e->path_len = n > 0 ? n - 1 : 0;
	/* the new image's arguments were just copied onto its stack: resident, readable here */
	args = BPF_CORE_READ(task, mm, arg_start);
	args_end = BPF_CORE_READ(task, mm, arg_end);
	n = args_end > args ? args_end - args : 0;
	if (n > LS_EXEC_ARGS_MAX) {
		n = LS_EXEC_ARGS_MAX;
		e->flags |= LS_EF_ARGS_CUT;
	}
	e->args_len = 0;
	if (n && bpf_probe_read_user(e->args, n & (LS_EXEC_ARGS_MAX - 1) ?: LS_EXEC_ARGS_MAX,
				     (void *)args) == 0)
		e->args_len = n;
	else if (n)
		e->flags |= LS_EF_ARGS_FAIL;
	if (img) {
		e->flags |= LS_EF_KNOWN_IMAGE;
		LS_STAT_INC(images_known);
	}
	e->gen = p->gen;
	if (bpf_ringbuf_output(&events, e, sizeof(*e), BPF_RB_FORCE_WAKEUP))
		LS_STAT_INC(ringbuf_drops);
	else
		LS_STAT_INC(proc_events);
	return 0;
}

/*
 * A target of a shared build starts its interpreter: its entry from the library's template, moved
 * by the bias this very call shows, so that its samples have lines before /proc is read (a short
 * process may be gone by then). Only an entry still pending: discovery may have been first.
 */
SEC("uprobe")
int handle_lib_start(struct pt_regs *ctx)
{
	__u64 id = bpf_get_current_pid_tgid(), ip = bpf_get_func_ip(ctx), bias;
	__u32 tgid = id >> 32, slot = bpf_get_attach_cookie(ctx), gen;
	struct task_struct *task = bpf_get_current_task_btf();
	struct ls_lib_image *img;
	struct ls_proc *p;

	p = bpf_map_lookup_elem(&procs, &tgid);
	img = bpf_map_lookup_elem(&lib_images, &slot);
	/* ip 0: a kernel before 6.6 does not say where a uprobe hit; discovery finds it then */
	if (!p || !img || !img->start_vaddr || !ip || (p->flags & LS_PF_PYTHON) ||
	    !(p->flags & LS_PF_PENDING))
		return 0;
	bias = ip - img->start_vaddr;
	gen = p->gen;
	__builtin_memcpy(p, &img->proc, sizeof(*p));
	ls_proc_move(p, bias);
	p->gen = gen;
	p->pidns_level = ls_task_pidns_level(task);
	p->flags = LS_PF_PYTHON;
	emit_proc_event_full(LS_PE_LIB, tgid, 0, (__u32)id, slot, bias, task, gen);
	return 0;
}

/*
 * The ended process's view: its last thread, still holding its namespaces, root and credentials
 * here (exit_fs() and exit_task_namespaces() come later in do_exit()). A function of its own: its
 * 184-byte value stays off the walker's stack.
 */
static __noinline int note_exit_view(struct task_struct *task, __u32 tgid)
{
	struct ls_task_view v = {};

	if (read_view(task, &v))
		bpf_map_update_elem(&exit_views, &tgid, &v, BPF_ANY);
	return 0;
}

SEC("tp_btf/sched_process_exit")
int BPF_PROG(handle_exit, struct task_struct *task, bool group_dead)
{
	__u32 tgid = BPF_CORE_READ(task, tgid), tid = BPF_CORE_READ(task, pid);
	bool is_current = task == bpf_get_current_task_btf();
	struct ls_pending *w;
	struct ls_proc *p;
	__u64 start;

	p = bpf_map_lookup_elem(&procs, &tgid);
	if (!p)
		return 0;
	/*
	 * Every thread's CPU time as the scheduler accounted it (up to one tick stale): userspace
	 * scales the thread's samples to it, so that timer and scheduling noise cancels out.
	 */
	emit_proc_event_cpu(LS_PE_THREAD_EXIT, tgid, 0, tid, 0,
			    BPF_CORE_READ(task, se.sum_exec_runtime));
	bpf_map_delete_elem(&offcpu_resume, &tid); /* its task work, if any */
	w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	/*
	 * It ran again, so its interval ended, unreported: a fatal signal came after it got the
	 * CPU (or it has no rseq and the kernel refuses task works). This tracepoint runs in the
	 * exiting thread before exit_mm() (Linux 6.16+, the one with group_dead), so its memory
	 * still holds the Python stack it blocked on (killed in the wait, it never ran Python
	 * since): reported here, on the rseq-only path (offcpu_exit_report); a task work or sys_exit
	 * reports it before the exit on the others, and the walker costs this program's load
	 * 25,000 verified instructions. Without the memory, it is lost, and counted.
	 */
	/* still open when the exiting thread is current: its switch back in went unseen */
	if (w && (w->end || is_current)) {
		if (offcpu_exit_report && is_current && BPF_CORE_READ(task, mm))
			ls_offcpu_resume(p, tid, LS_SLOT_TASK);
		else if (ls_offcpu_claim(w, &start)) {
			LS_STAT_INC(lost_at_exit);
			bpf_map_delete_elem(&offcpu_pending, &tid);
		}
	}
	if (!group_dead)
		return 0;
	note_exit_view(task, tgid);
	emit_proc_event(LS_PE_EXIT, tgid, BPF_CORE_READ(task, real_parent, tgid),
			BPF_CORE_READ(task, pid), BPF_CORE_READ(task, exit_code));
	if (!bpf_map_delete_elem(&procs, &tgid))
		__sync_fetch_and_add(&procs_changes, 1);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
