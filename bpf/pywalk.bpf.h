/* SPDX-License-Identifier: MIT */
/*
 * The CPython frame walker: finds a thread's PyThreadState and records, innermost first, each
 * interpreter frame's code object, instruction offset and code fingerprint. Layout offsets come
 * from `pylayouts`; nothing here is specific to one CPython version.
 *
 * Every program but one runs in the context of the thread it walks (perf_event, sched_switch,
 * USDT), so user reads hit its address space. The stop-time iterator (edges.bpf.c) walks other
 * tasks from a sleepable program: its file defines LS_WALK_REMOTE, and reads go through
 * bpf_copy_from_user_task (allowed only there, so each file gets its own copy of the walker).
 */
#ifndef __LS_PYWALK_BPF_H
#define __LS_PYWALK_BPF_H

#include "maps.bpf.h"
#include "fingerprint.h"

#define LS_THREAD_LIST_MAX 256 /* threads scanned per lookup in LS_TS_THREAD_LIST mode */

#ifdef LS_WALK_REMOTE
#define ls_read_user(dst, size, src, task) bpf_copy_from_user_task(dst, size, src, task, 0)
#else
#define ls_read_user(dst, size, src, task) bpf_probe_read_user(dst, size, src)
#endif

static __always_inline __u64 read_u64(const void *uaddr, struct task_struct *task)
{
	__u64 v = 0;

	if (ls_read_user(&v, sizeof(v), uaddr, task)) {
		LS_STAT_INC(read_fail);
		return 0;
	}
	return v;
}

/* Loads a u64 at a layout offset inside a window; offsets are bounded by userspace and here. */
#define WIN_U64(win, off, winsz) ((off) <= (winsz)-8 ? *(__u64 *)&(win)[(off)&0xff] : 0)

struct tl_ctx {
	struct task_struct *task;
	__u64 ts;
	__u64 found;
	__u32 tid;
	__u16 next_off;
	__u16 tid_off;
};

static long thread_list_step(__u32 i, void *data)
{
	struct tl_ctx *c = data;
	__u64 tid;

	if (!c->ts)
		return 1;
	tid = read_u64((void *)(c->ts + c->tid_off), c->task);
	if ((__u32)tid == c->tid) {
		c->found = c->ts;
		return 1;
	}
	c->ts = read_u64((void *)(c->ts + c->next_off), c->task);
	return 0;
}

/* The thread's id in the pid namespace `level` levels below the host's (0: the host id). */
static __always_inline __u32 ns_tid(struct task_struct *task, __u32 level, __u32 tid)
{
	struct pid *pid;
	struct upid up;

	if (!level)
		return tid;
	pid = BPF_CORE_READ(task, thread_pid);
	if (!pid || bpf_probe_read_kernel(&up, sizeof(up),
					  (void *)pid + bpf_core_field_offset(struct pid, numbers) +
						  (level & 31) * sizeof(struct upid)))
		return tid;
	return up.nr;
}

/* Returns the PyThreadState of thread `task` (tid), or 0 when it has none. */
static __always_inline __u64 ls_current_tstate(const struct ls_proc *p, const struct ls_pylayout *L,
					       struct task_struct *task, __u32 tid)
{
	if (p->tsd_mode == LS_TS_GLIBC_TSD) {
		struct {
			__s32 initialized;
			__u32 key;
		} tss;
		__u64 fsbase, slot;

		if (ls_read_user(&tss, sizeof(tss), (void *)p->tss_addr, task)) {
			LS_STAT_INC(read_fail);
			return 0;
		}
		if (!tss.initialized)
			return 0;
		fsbase = BPF_CORE_READ(task, thread.fsbase);
		if (!fsbase)
			return 0;
		if (tss.key < 32) {
			slot = fsbase + p->tsd_base + (__u64)tss.key * p->tsd_stride;
		} else {
			/* glibc's second-level table: specific[key / 32][key % 32] */
			__u64 blk =
				read_u64((void *)(fsbase + p->tsd_2nd + (tss.key / 32) * 8), task);

			if (!blk)
				return 0;
			slot = blk + (__u64)(tss.key % 32) * p->tsd_stride;
		}
		return read_u64((void *)(slot + p->tsd_data), task);
	}
	if (p->tsd_mode == LS_TS_THREAD_LIST) {
		struct tl_ctx c = {
			.task = task,
			/* native_thread_id holds the tid as the target's own namespace sees it */
			.tid = ns_tid(task, p->pidns_level, tid),
			.next_off = L->tstate_next,
			.tid_off = L->tstate_native_tid,
		};
		__u64 interp = read_u64((void *)(p->runtime + L->runtime_interp_head), task);

		if (!interp)
			return 0;
		c.ts = read_u64((void *)(interp + L->interp_threads_head), task);
		bpf_loop(LS_THREAD_LIST_MAX, thread_list_step, &c, 0);
		return c.found;
	}
	return 0;
}

/* The innermost interpreter frame of thread state tstate (through 3.11's cframe), or 0 */
static __always_inline __u64 ls_current_frame(const struct ls_pylayout *L, __u64 tstate,
					      struct task_struct *task)
{
	__u64 frame = read_u64((void *)(tstate + L->tstate_frame), task);

	if (frame && L->cframe_current != LS_OFF_NONE)
		frame = read_u64((void *)(frame + L->cframe_current), task);
	return frame;
}

struct walk_ctx {
	struct task_struct *task;
	struct ls_sample_buf *b;
	const struct ls_pylayout *L;
	__u64 frame;
	__u64 code_type;
	__u32 n;
	__u32 tgid;
	__u32 gen;
	__u8 flags;
};

/* Copies a str object's raw data (kind bytes per code point); returns the kind, 0 on failure. */
static __always_inline __u8 read_str(const struct ls_pylayout *L, __u64 addr, __u8 *dst, __u32 *len,
				     bool *cut, struct task_struct *task)
{
	__u8 hdr[48];
	__u64 length;
	__u32 state, kind, bytes;

	if (!addr || ls_read_user(hdr, sizeof(hdr), (void *)addr, task))
		return 0;
	if (L->unicode_length > sizeof(hdr) - 8 || L->unicode_state > sizeof(hdr) - 4)
		return 0;
	length = *(__u64 *)&hdr[L->unicode_length & 0x3f];
	state = *(__u32 *)&hdr[L->unicode_state & 0x3f];
	kind = (state >> L->unicode_kind_shift) & 7;
	if (kind != 1 && kind != 2 && kind != 4)
		return 0;
	if (length * kind > LS_CODE_NAME_MAX) {
		bytes = LS_CODE_NAME_MAX;
		*cut = true;
	} else {
		bytes = length * kind;
	}
	/* keep the verifier's bound on the very register passed as the size */
	barrier_var(bytes);
	if (bytes > LS_CODE_NAME_MAX)
		return 0;
	addr += (state >> L->unicode_ascii_bit) & 1 ? L->unicode_ascii_data
						    : L->unicode_compact_data;
	if (ls_read_user(dst, bytes, (void *)addr, task))
		return 0;
	*len = bytes;
	return kind;
}

/*
 * Describes a code object to userspace the first time this process image's walks meet it, in a
 * record as long as what it holds (names and table packed, in the walk's scratch buffer).
 */
static __always_inline void describe_code(struct walk_ctx *c, __u64 code, __u32 fp, __u64 fname,
					  __u64 qname, __u64 ltab, __u32 firstlineno)
{
	struct ls_code_key k = {.code = code, .tgid = c->tgid, .fp = fp, .gen = c->gen};
	const struct ls_pylayout *L = c->L;
	struct ls_code_rec *r = &c->b->code;
	bool fcut = false, qcut = false;
	__u64 size = 0, rec;
	__u32 n, off;
	__u8 one = 1;

	if (bpf_map_lookup_elem(&codes_seen, &k))
		return;
	r->type = LS_REC_CODE;
	r->pid = c->tgid;
	r->code = code;
	r->fp = fp;
	r->firstlineno = firstlineno;
	r->flags = 0;
	r->pad0 = 0;
	r->pad1 = 0;
	r->fname_len = r->qname_len = r->ltab_len = 0;
	r->fname_kind = read_str(L, fname, r->data, &r->fname_len, &fcut, c->task);
	off = r->fname_len;
	barrier_var(off);
	if (off > LS_CODE_NAME_MAX)
		return;
	r->qname_kind = read_str(L, qname, r->data + off, &r->qname_len, &qcut, c->task);
	off += r->qname_len;
	barrier_var(off);
	if (off > 2 * LS_CODE_NAME_MAX)
		return;
	if (fcut)
		r->flags |= LS_CF_FNAME_CUT;
	if (qcut)
		r->flags |= LS_CF_QNAME_CUT;
	if (!r->fname_kind || !r->qname_kind)
		r->flags |= LS_CF_READ_FAIL;
	if (ltab && !ls_read_user(&size, sizeof(size), (void *)(ltab + L->bytes_size), c->task)) {
		if (size > LS_CODE_LTAB_MAX) {
			n = LS_CODE_LTAB_MAX;
			r->flags |= LS_CF_LTAB_CUT;
		} else {
			n = size;
		}
		barrier_var(n);
		if (n <= LS_CODE_LTAB_MAX &&
		    !ls_read_user(r->data + off, n, (void *)(ltab + L->bytes_data), c->task))
			r->ltab_len = n;
		else
			r->flags |= LS_CF_READ_FAIL;
	} else {
		r->flags |= LS_CF_READ_FAIL;
	}
	r->ltab_size = size;
	rec = LS_CODE_REC_HDR + off + r->ltab_len;
	barrier_var(rec);
	if (rec > sizeof(*r))
		return;
	if (bpf_ringbuf_output(&events, r, rec, ls_rb_flags())) {
		/* not marked seen: the next walk tries again */
		LS_STAT_INC(ringbuf_drops);
		return;
	}
	bpf_map_update_elem(&codes_seen, &k, &one, BPF_ANY);
	LS_STAT_INC(code_records);
}

static long walk_step(__u32 i, void *data)
{
	struct walk_ctx *c = data;
	struct ls_sample_buf *b = c->b;
	const struct ls_pylayout *L = c->L;
	__u64 code, instr, ltab, fname, qname;
	__u32 firstlineno, n;
	__u8 owner;

	if (!c->frame)
		return 1;
	if (c->n >= LS_MAX_FRAMES) {
		c->flags |= LS_SF_TRUNCATED;
		LS_STAT_INC(truncated);
		return 1;
	}
	if (ls_read_user(b->fwin, LS_FRAME_WIN, (void *)c->frame, c->task)) {
		c->flags |= LS_SF_READ_FAIL;
		LS_STAT_INC(read_fail);
		return 1;
	}
	code = WIN_U64(b->fwin, L->frame_code, LS_FRAME_WIN) & ~(__u64)L->code_tag_mask;
	instr = WIN_U64(b->fwin, L->frame_instr, LS_FRAME_WIN);
	owner = L->frame_owner < LS_FRAME_WIN ? b->fwin[L->frame_owner & 0x7f] : 0;
	c->frame = WIN_U64(b->fwin, L->frame_previous, LS_FRAME_WIN);

	/* shim frames owned by the C stack or the interpreter (3.12+) carry no user code */
	if (owner >= L->owner_cstack)
		return 0;
	if (!code || ls_read_user(b->cwin, LS_CODE_WIN, (void *)code, c->task)) {
		c->flags |= LS_SF_READ_FAIL;
		LS_STAT_INC(read_fail);
		return 1;
	}
	/* ob_type follows ob_refcnt; a frame whose executable is not a code object is skipped */
	if (*(__u64 *)&b->cwin[8] != c->code_type)
		return 0;
	fname = WIN_U64(b->cwin, L->code_filename, LS_CODE_WIN);
	qname = WIN_U64(b->cwin, L->code_qualname, LS_CODE_WIN);
	ltab = WIN_U64(b->cwin, L->code_linetable, LS_CODE_WIN);
	firstlineno = L->code_firstlineno <= LS_CODE_WIN - 4
			      ? *(__u32 *)&b->cwin[L->code_firstlineno & 0xff]
			      : 0;

	n = c->n;
	if (n >= LS_MAX_FRAMES)
		return 1;
	b->frames[n].code = code;
	b->frames[n].instr = instr ? (__s32)(instr - (code + L->code_adaptive)) : -2;
	b->frames[n].fp = ls_code_fp(fname, qname, ltab, firstlineno);
	describe_code(c, code, b->frames[n].fp, fname, qname, ltab, firstlineno);
	c->n = n + 1;
	return 0;
}

/*
 * Fills b->frames for thread `task` (tid of process tgid) and returns how many; sets LS_SF_*
 * flags in b->hdr. b->hdr.flags must be initialised by the caller.
 */
static __always_inline __u32 ls_walk_python(struct ls_sample_buf *b, const struct ls_proc *p,
					    struct task_struct *task, __u32 tgid, __u32 tid)
{
	const struct ls_pylayout *L;
	struct walk_ctx c = {};
	__u32 lid = p->layout_id;
	__u64 tstate, frame;

	L = bpf_map_lookup_elem(&pylayouts, &lid);
	if (!L) {
		b->hdr.flags |= LS_SF_NOT_PYTHON;
		return 0;
	}
	tstate = ls_current_tstate(p, L, task, tid);
	if (!tstate) {
		b->hdr.flags |= LS_SF_NO_TSTATE;
		LS_STAT_INC(no_tstate);
		return 0;
	}
	if (L->runtime_gil_holder != LS_OFF_NONE) {
		b->hdr.flags |= LS_SF_GIL_KNOWN;
		if (read_u64((void *)(p->runtime + L->runtime_gil_holder), task) == tstate)
			b->hdr.flags |= LS_SF_GIL_HELD;
	}
	frame = ls_current_frame(L, tstate, task);

	c.task = task;
	c.b = b;
	c.L = L;
	c.frame = frame;
	c.code_type = p->code_type;
	c.tgid = tgid;
	c.gen = p->gen;
	bpf_loop(LS_MAX_FRAMES + 1, walk_step, &c, 0);
	if (c.frame && !(c.flags & (LS_SF_TRUNCATED | LS_SF_READ_FAIL))) {
		/* skipped shim frames used up the iterations */
		c.flags |= LS_SF_TRUNCATED;
		LS_STAT_INC(truncated);
	}
	b->hdr.flags |= c.flags;
	return c.n;
}

#endif /* __LS_PYWALK_BPF_H */
