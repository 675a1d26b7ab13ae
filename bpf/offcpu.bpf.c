// SPDX-License-Identifier: GPL-2.0 OR MIT
/* Wall-clock time: off-CPU intervals of target threads (see offcpu.bpf.h). */
#include "offcpu.bpf.h"

/*
 * An interval is reported when its thread returns to user space, in its context (the loader
 * chooses; docs/wall-time.md, "Where an interval is reported"):
 * - rseq_update, which the kernel fires on that return after every context switch of a thread
 *   with restartable sequences registered (glibc 2.35+ registers every thread): nothing for a
 *   syscall that did not block; not when a signal is pending (a task work then);
 * - for a thread without rseq, a task work scheduled when it gets the CPU back (6.18's
 *   bpf_task_work; it costs an IPI, so only for intervals that are kept); a kernel that refuses
 *   task works here (6.18.y stable) reports it at the thread's next switch (late) or its exit;
 * - on a kernel without rseq_update, handle_sys_exit, which every syscall of the machine pays
 *   for: the syscall tracepoint puts every task on the slow syscall path, about 2x on a
 *   syscall-bound process that is not even a target (bench/syscalls).
 */
const volatile bool offcpu_rseq __weak = false;
const volatile bool offcpu_task_work __weak = false;
/* tests (LINESCOPE_FAULT_UNSEEN_IN=N): one switch in of N unseen, as on some kernels */
const volatile __u32 fault_unseen_in __weak = 0;
static __u32 fault_switches_in;

extern int bpf_task_work_schedule_resume_impl(struct task_struct *task, struct bpf_task_work *tw,
					      void *map__map, bpf_task_work_callback_t callback,
					      void *aux__prog) __ksym __weak;

/* The current thread is back in its own context, with the Python stack it blocked on. */
static __always_inline int resume_current(void)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id;
	struct ls_proc *p;

	if (!offcpu_enabled || !tgid || tgid == self_tgid)
		return 0;
	p = bpf_map_lookup_elem(&procs, &tgid);
	if (p)
		ls_offcpu_resume(p, tid, LS_SLOT_TASK);
	return 0;
}

/* In the thread's context, on its way back to user space after its interval. */
static int resume_work(struct bpf_map *map, void *key, void *value)
{
	return resume_current();
}

static __always_inline void schedule_resume(struct task_struct *t, __u32 tid)
{
	static const struct ls_resume fresh = {};
	struct ls_resume *r;
	int err;

	if (!bpf_task_work_schedule_resume_impl) /* a kernel before 6.18: never called */
		return;
	r = bpf_map_lookup_elem(&offcpu_resume, &tid);
	if (!r) {
		bpf_map_update_elem(&offcpu_resume, &tid, &fresh, BPF_NOEXIST);
		r = bpf_map_lookup_elem(&offcpu_resume, &tid);
	}
	if (!r) {
		LS_STAT_INC(resume_late);
		return;
	}
	err = bpf_task_work_schedule_resume_impl(t, &r->tw, &offcpu_resume, resume_work, NULL);
	/* -EBUSY: one is scheduled already (the thread has not run since), and reports this one */
	if (!err)
		LS_STAT_INC(task_works);
	else if (err != -LS_EBUSY)
		LS_STAT_INC(resume_late);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	__u32 tgid = BPF_CORE_READ(prev, tgid), tid = BPF_CORE_READ(prev, pid);
	struct ls_pending *w, fresh = {};
	struct ls_proc *p;

	if (!offcpu_enabled)
		return 0;
	p = tgid && tgid != self_tgid ? bpf_map_lookup_elem(&procs, &tgid) : NULL;
	if (p) {
		/*
		 * An interval that ended but was not reported yet (preempted again before its
		 * syscall returned): report it now, we run in its thread's context.
		 */
		ls_offcpu_resume(p, tid, LS_SLOT_ATOMIC);
		fresh.start = bpf_ktime_get_ns();
		/* prev is current: its syscall says what it waits for */
		ls_offcpu_classify(p, prev, !preempt && prev_state, &fresh);
		if (bpf_map_update_elem(&offcpu_pending, &tid, &fresh, BPF_ANY))
			LS_STAT_INC(pending_full);
	}
	tid = BPF_CORE_READ(next, pid);
	w = bpf_map_lookup_elem(&offcpu_pending, &tid);
	if (w && !w->end) {
		__u64 now = bpf_ktime_get_ns(), start = w->start;

		if (fault_unseen_in &&
		    __sync_fetch_and_add(&fault_switches_in, 1) % fault_unseen_in == 0)
			return 0;
		w->end = now;
		if (!start || (!offcpu_task_work && !offcpu_rseq)) /* sys_exit reports it */
			return 0;
		/*
		 * rseq_update reports it, unless a signal is pending: signals are handled first on
		 * the way out, and a fatal one never gets there (get_signal() runs task works
		 * first). Without task works, rseq even then: a fatal signal's interval is reported
		 * at the exit (proc.bpf.c).
		 */
		if (offcpu_rseq && bpf_core_field_exists(next->rseq) && BPF_CORE_READ(next, rseq) &&
		    (!offcpu_task_work ||
		     (!BPF_CORE_READ(next, pending.signal.sig[0]) &&
		      !BPF_CORE_READ(next, signal, shared_pending.signal.sig[0]))))
			return 0;
		/* no rseq, and a kernel that refuses task works: at its next switch or its exit */
		if (!offcpu_task_work) {
			LS_STAT_INC(resume_late);
			return 0;
		}
		/*
		 * A task work costs microseconds (an IPI): one only for an interval that is kept.
		 * Here, not when it left: an interval opened at the attach (edges.bpf.c) gets one
		 * too.
		 */
		if (ls_offcpu_draw(now > start ? now - start : 0)) {
			w->drawn = 1;
			schedule_resume(next, tid);
		} else if (ls_offcpu_claim(w, &start)) {
			bpf_map_delete_elem(&offcpu_pending, &tid);
		}
	}
	return 0;
}

/* On the way back to user space after a context switch (threads with rseq registered). */
SEC("tp_btf/rseq_update")
int BPF_PROG(handle_rseq, struct task_struct *t)
{
	return resume_current();
}

/* A syscall returns (the fallback: the kernel has neither rseq_update nor task works). */
SEC("tp_btf/sys_exit")
int BPF_PROG(handle_sys_exit, struct pt_regs *regs, long ret)
{
	return resume_current();
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
