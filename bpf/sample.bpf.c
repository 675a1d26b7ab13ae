// SPDX-License-Identifier: GPL-2.0 OR MIT
/* On-CPU sampler: a cpu-clock perf event on every CPU; target threads get their Python stack
 * walked. */
#include "pywalk.bpf.h"
#include "track.bpf.h"

SEC("perf_event")
int handle_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, n = 0, size;
	struct task_struct *task;
	struct ls_sample_buf *b;
	struct ls_proc *p;

	p = ls_current_target(tgid, tid);
	if (!p)
		return 0;
	b = bpf_map_lookup_elem(&scratch, &zero);
	if (!b)
		return 0;
	task = bpf_get_current_task_btf();

	b->hdr.type = LS_REC_SAMPLE;
	b->hdr.pid = tgid;
	b->hdr.tid = tid;
	b->hdr.cpu = bpf_get_smp_processor_id();
	b->hdr.kind = LS_SAMPLE_ONCPU;
	b->hdr.flags = 0;
	b->hdr.ts = bpf_ktime_get_ns();
	b->hdr.weight_ns = ctx->sample_period;
	b->hdr.aux = 0;
	b->hdr.pad0 = 0;
	b->hdr.pad1 = 0;
	bpf_get_current_comm(b->hdr.comm, sizeof(b->hdr.comm));
	/* x86-64: kernel addresses have the top bit set (ctx->regs.cs is not readable here) */
	if (!(ctx->regs.ip >> 63)) {
		b->hdr.user_ip = ctx->regs.ip;
	} else {
		/* kernel mode (syscall, fault): the Python line is still the thread's current one
		 */
		b->hdr.flags |= LS_SF_KERNEL;
		b->hdr.user_ip = BPF_CORE_READ((struct pt_regs *)bpf_task_pt_regs(task), ip);
	}

	if (p->flags & LS_PF_PYTHON)
		n = ls_walk_python(b, p, task, tid);
	else
		b->hdr.flags |= LS_SF_NOT_PYTHON;
	b->hdr.nframes = n;

	if (n > LS_MAX_FRAMES)
		n = LS_MAX_FRAMES;
	size = sizeof(struct ls_sample) + n * sizeof(struct ls_frame);
	if (bpf_ringbuf_output(&events, b, size, 0)) {
		LS_STAT_INC(ringbuf_drops);
		return 0;
	}
	LS_STAT_INC(samples);
	return 0;
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
