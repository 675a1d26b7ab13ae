// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * USDT handlers for liblinescope_cupti.so (provider linescope_gpu; see gpu/gpu_records.h).
 * handle_gpu_api (linescope_gpu:api) runs in the thread that called CUDA and emits one
 * LS_REC_SAMPLE of kind LS_SAMPLE_GPULAUNCH with that thread's Python stack.
 * handle_gpu_record (linescope_gpu:record) runs in whichever thread CUPTI delivers records on: the
 * record is copied verbatim into `events` as LS_REC_GPU, after BPF fills the header fields the
 * library cannot know (host tgid and tid, ktime).
 *
 * Userspace attaches both with bpf_program__attach_usdt() to the library's path (pid -1 for
 * every process); the `procs` map decides which processes are targets.
 */
#include "offcpu.bpf.h" /* the shared maps (events, procs, stats), the walker, NR_FUTEX */
#include <bpf/usdt.bpf.h>
#include "gpu_records.h"

/* One record under copy per CPU: up to 4 KiB, too large for the BPF stack. */
struct gpu_rec_buf {
	__u8 data[LS_GPU_REC_MAX];
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct gpu_rec_buf);
} gpu_scratch SEC(".maps");

struct ls_gpu_bpf_stats gpu_stats;

#define GPU_STAT_INC(field) __sync_fetch_and_add(&gpu_stats.field, 1)

/*
 * Work handed to a native thread: the last Python thread of its own process that woke each
 * target thread (sched_waking, loaded with --gpu only). A launch from a thread with no Python
 * frame is charged to that Python thread while it is not running Python code (blocked, or, where
 * the interpreter says who holds the GIL, without it): autograd's Python thread wakes the device
 * thread with the backward pass's work and waits for it, the GIL released, and the device thread
 * launches the kernels. Wakeups between native threads are not followed: they are as often a
 * lock changing hands (two device threads meeting on the driver's lock) as a hand-off.
 */
struct gpu_waker {
	__u64 task; /* the waker's task_struct, read only through probe reads (it may be gone) */
	__u32 tid;
	__u32 pad;
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 65536);
	__type(key, __u32); /* the woken tid */
	__type(value, struct gpu_waker);
} gpu_wakers SEC(".maps");

/* The thread state of thread task (tid) of process p when it is in Python code, else 0 */
static __always_inline __u64 py_tstate(const struct ls_proc *p, const struct ls_pylayout *L,
				       struct task_struct *task, __u32 tid)
{
	__u64 tstate;

	if (!L || !(p->flags & LS_PF_PYTHON))
		return 0;
	tstate = ls_current_tstate(p, L, task, tid);
	if (!tstate)
		return 0;
	return ls_current_frame(L, tstate, task) ? tstate : 0;
}

static __always_inline const struct ls_pylayout *layout_of(const struct ls_proc *p)
{
	__u32 lid = p->layout_id;

	return bpf_map_lookup_elem(&pylayouts, &lid);
}

SEC("tp_btf/sched_waking")
int BPF_PROG(handle_gpu_waking, struct task_struct *wakee)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, wtid = BPF_CORE_READ(wakee, pid);
	struct task_struct *self = bpf_get_current_task_btf();
	struct gpu_waker w = {.task = (__u64)self, .tid = tid};
	struct pt_regs *regs;
	struct ls_proc *p;

	/* only wakeups inside one target process; the hot path is the procs lookup */
	if (BPF_CORE_READ(wakee, tgid) != tgid || wtid == tid ||
	    !(p = bpf_map_lookup_elem(&procs, &tgid)))
		return 0;
	/*
	 * made by the thread itself in a futex call (a condition variable signalled, a lock
	 * released): not by a timer or device interrupt, which wakes threads in whatever task it
	 * interrupted (that task is not in a futex call then, but in user mode or another call)
	 */
	regs = (struct pt_regs *)bpf_task_pt_regs(self);
	if (BPF_CORE_READ(regs, orig_ax) != NR_FUTEX)
		return 0;
	if (py_tstate(p, layout_of(p), self, tid))
		bpf_map_update_elem(&gpu_wakers, &wtid, &w, BPF_ANY);
	return 0;
}

/*
 * The Python thread the current thread (tid, no Python frame) launches for: the one that woke it
 * last, while that one is not running Python code; 0 when there is none. *task is set to it.
 */
static __always_inline __u32 waiting_waker(const struct ls_proc *p, __u32 tgid, __u32 tid,
					   struct task_struct **task)
{
	const struct ls_pylayout *L = layout_of(p);
	struct gpu_waker *w = bpf_map_lookup_elem(&gpu_wakers, &tid);
	struct task_struct *t;
	__u64 tstate;

	if (!w || !L)
		return 0;
	t = (struct task_struct *)w->task;
	/* the task may have exited and its memory been reused: it must still be that thread */
	if (BPF_CORE_READ(t, pid) != w->tid || BPF_CORE_READ(t, tgid) != tgid)
		return 0;
	tstate = py_tstate(p, L, t, w->tid);
	if (!tstate)
		return 0;
	/* running: only without the GIL (3.11 names its holder; elsewhere it must be blocked) */
	if (BPF_CORE_READ(t, __state) == 0 /* TASK_RUNNING */ &&
	    (L->runtime_gil_holder == LS_OFF_NONE ||
	     read_u64((void *)(p->runtime + L->runtime_gil_holder), t) == tstate))
		return 0;
	*task = t;
	return w->tid;
}

/*
 * The launch's sample, in the thread that made the CUDA API call, right after the call returned:
 *   ctx     the USDT probe's pt_regs (user registers of that thread);
 *   tgid    host tgid, already known to be in `procs`;
 *   aux     LS_GPU_AUX(correlation id, api class, callback id, driver?) for ls_sample.aux;
 *   dur_ns  CPU time spent inside the API call, for ls_sample.weight_ns.
 * It emits exactly one record into `events`: struct ls_sample with type LS_REC_SAMPLE,
 * kind LS_SAMPLE_GPULAUNCH, pid/tid/cpu/ts/comm as for a CPU sample, aux and weight_ns as
 * given, followed by the thread's Python frames (nframes of them, innermost first). A thread with
 * no Python frame still gets its record, with nframes 0: its kernels are charged to the
 * process's "no Python frame" entry. Returns 0, or a negative value on failure (counted).
 */
static __always_inline int gpu_launch_sample(struct pt_regs *ctx, __u32 tgid, __u32 tid, __u64 aux,
					     __u64 dur_ns)
{
	struct ls_proc *p = bpf_map_lookup_elem(&procs, &tgid);
	struct task_struct *waiter = NULL;
	__u32 wtid = 0;

	if (!p)
		return -1;
	if (!py_tstate(p, layout_of(p), bpf_get_current_task_btf(), tid))
		wtid = waiting_waker(p, tgid, tid, &waiter);
	if (wtid && waiter) {
		/* the waiting thread's stack (same address space: read as our own) */
		if (!ls_emit_task_sample(p, waiter, tgid, wtid, LS_SAMPLE_GPULAUNCH, dur_ns, aux,
					 LS_XF_FOR_WAITER, 0, false, LS_SLOT_TASK, 0)) {
			GPU_STAT_INC(for_waiter);
			return 0;
		}
		GPU_STAT_INC(rb_drops);
		return -1;
	}
	/* the launching thread's Python stack; a thread without one is emitted with no frames */
	if (ls_emit_sample(p, LS_SAMPLE_GPULAUNCH, dur_ns, aux, 0, PT_REGS_IP(ctx), false,
			   LS_SLOT_TASK)) {
		GPU_STAT_INC(rb_drops);
		return -1;
	}
	return 0;
}
/* ==== end of the launch-stack hook ========================================================== */

/* The probe's fifth argument (the kernel or function name) is not read: it costs a fetch. */
SEC("usdt")
int BPF_USDT(handle_gpu_api, __u32 corr, __s32 cbid, __u32 cls, __u64 dur_ns)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, ucbid = cbid < 0 ? (__u32)-cbid : (__u32)cbid;

	if (!bpf_map_lookup_elem(&procs, &tgid)) {
		GPU_STAT_INC(not_target);
		return 0;
	}
	GPU_STAT_INC(api_calls);
	/* aux carries the sampling period from cls (LS_GPU_CLS_SHIFT) */
	if (gpu_launch_sample(ctx, tgid, (__u32)id, LS_GPU_AUX(corr, cls, ucbid, cbid < 0),
			      dur_ns) < 0)
		GPU_STAT_INC(launch_fail);
	return 0;
}

SEC("usdt")
int BPF_USDT(handle_gpu_record, const void *rec, __u32 len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, *busy;
	struct gpu_rec_buf *b;
	struct ls_gpu_hdr *h;

	if (!bpf_map_lookup_elem(&procs, &tgid)) {
		GPU_STAT_INC(not_target);
		return 0;
	}
	/* two tests with a barrier: merged into one, the verifier loses the bound on len */
	if (len < sizeof(struct ls_gpu_hdr)) {
		GPU_STAT_INC(bad_len);
		return 0;
	}
	barrier_var(len);
	if (len > LS_GPU_REC_MAX) {
		GPU_STAT_INC(bad_len);
		return 0;
	}
	busy = ls_task_scratch_take();
	if (!busy)
		return 0; /* in stats.scratch_busy; userspace sees the gap in seq */
	b = bpf_map_lookup_elem(&gpu_scratch, &zero);
	if (!b)
		goto out;
	if (bpf_probe_read_user(b->data, len, rec)) {
		__sync_fetch_and_add(&stats.read_fail, 1);
		GPU_STAT_INC(read_fail);
		goto out;
	}
	h = (struct ls_gpu_hdr *)b->data;
	if (h->sub < LS_GPU_HELLO || h->sub > LS_GPU_LAUNCHES) {
		GPU_STAT_INC(bad_sub);
		goto out;
	}
	h->type = LS_REC_GPU;
	h->pid = tgid;
	h->tid = (__u32)id;
	h->ts = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&events, b, len, 0)) {
		__sync_fetch_and_add(&stats.ringbuf_drops, 1);
		GPU_STAT_INC(rb_drops);
		goto out;
	}
	__sync_fetch_and_add(&stats.gpu_records, 1);
	GPU_STAT_INC(records);
out:
	ls_task_scratch_put(busy);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
