// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Exact line tracing.
 *
 * python-usdt's probes (linescope:state, linescope:code, linescope:batch) hand over a message the
 * traced process built in its own memory, (pointer, length); it is copied into `events` behind
 * an ls_trace_rec header. The process's own counters are the data, so BPF only filters and copies.
 *
 * CPython's native probes (python:line, python:function__entry, python:function__return, on a
 * 3.11 built --with-dtrace) are counted here instead, per (pid, tid, file, function, line) in
 * `native_lines`, with the wall time to the thread's next native event in own_ns; a small
 * per-thread stack gives the time after a return back to the calling line. Names are read on
 * every event and keyed by a hash of their text, since CPython reuses the buffers they live in.
 */
#include "track.bpf.h" /* maps, and targets found in the --cgroup group */
#include <bpf/usdt.bpf.h>

#ifndef LS_NATIVE_MAX_LINES
#define LS_NATIVE_MAX_LINES 65536
#endif
#define LS_NATIVE_STACK 16 /* calling lines remembered per thread; deeper returns lose theirs */

struct ls_trace_stats trace_stats;

#define TRACE_STAT_INC(field) __sync_fetch_and_add(&trace_stats.field, 1)

struct trace_buf {
	struct ls_trace_rec hdr;
	__u8 msg[LS_TRACE_MAX_MSG];
};

/* A message is assembled here before it goes to the ring buffer: too large for the stack. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct trace_buf);
} trace_scratch SEC(".maps");

static __always_inline int copy_msg(const void *msg, long len)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32, zero = 0, size, *busy;
	struct trace_buf *b;

	if (!ls_current_target(tgid, (__u32)id)) {
		TRACE_STAT_INC(not_target);
		return 0;
	}
	if (len < 4 || len > LS_TRACE_MAX_MSG) {
		TRACE_STAT_INC(bad_size);
		return 0;
	}
	size = len;
	busy = ls_task_scratch_take();
	if (!busy)
		return 0;
	b = bpf_map_lookup_elem(&trace_scratch, &zero);
	if (!b)
		goto out;
	if (bpf_probe_read_user(b->msg, size, msg)) {
		TRACE_STAT_INC(read_fail);
		goto out;
	}
	b->hdr.type = LS_REC_TRACE;
	b->hdr.pid = tgid;
	b->hdr.tid = (__u32)id;
	b->hdr.size = size;
	b->hdr.ts = bpf_ktime_get_ns();
	if (bpf_ringbuf_output(&events, b, sizeof(b->hdr) + size, 0))
		TRACE_STAT_INC(ringbuf_drops);
	else
		TRACE_STAT_INC(msgs);
out:
	ls_task_scratch_put(busy);
	return 0;
}

SEC("usdt")
int BPF_USDT(handle_pyusdt_state, const void *msg, long len)
{
	return copy_msg(msg, len);
}

SEC("usdt")
int BPF_USDT(handle_pyusdt_code, const void *msg, long len)
{
	return copy_msg(msg, len);
}

SEC("usdt")
int BPF_USDT(handle_pyusdt_batch, const void *msg, long len)
{
	return copy_msg(msg, len);
}

/* ---- native CPython probes ---- */

struct native_thread {
	__u64 ts;    /* time of the thread's previous native event */
	__u32 depth; /* function__entry minus function__return */
	__u32 pad;
	struct ls_native_key cur; /* the line being executed (pid 0: none yet) */
	struct ls_native_key stack[LS_NATIVE_STACK];
};

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, 16384);
	__type(key, __u32); /* tid */
	__type(value, struct native_thread);
} native_threads SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, LS_NATIVE_MAX_LINES);
	__type(key, struct ls_native_key);
	__type(value, struct ls_native_val);
} native_lines SEC(".maps");

struct native_str {
	char s[LS_NATIVE_STR];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, struct ls_native_str_key);
	__type(value, struct native_str);
} native_strs SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct native_thread);
} native_scratch SEC(".maps");

/* The two names of the current event, read on every event (they are hashed into the key). */
struct native_names {
	struct native_str file;
	struct native_str func;
	long file_len; /* bpf_probe_read_user_str(): bytes with the NUL, or < 0 */
	long func_len;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct native_names);
} native_names_scratch SEC(".maps");

/* FNV-1a over 8-byte words of the first `len` bytes (bytes past the NUL are stale). */
static __always_inline __u64 str_hash(const struct native_str *s, long len)
{
	__u64 h = 0xcbf29ce484222325ull;

	for (int i = 0; i < LS_NATIVE_STR / 8; i++) {
		long off = i * 8, left = len - off;
		__u64 w;

		if (left <= 0)
			break;
		w = *(const __u64 *)&s->s[off];
		if (left < 8)
			w &= (1ull << (left * 8)) - 1;
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h ^ (__u64)len;
}

static __always_inline __u64 read_name(struct native_str *s, long *len, const void *p)
{
	*len = bpf_probe_read_user_str(s->s, sizeof(s->s), p);
	if (*len <= 0) {
		TRACE_STAT_INC(native_str_fail);
		s->s[0] = '?';
		s->s[1] = 0;
		*len = 2;
	}
	return str_hash(s, *len);
}

/* Keep the text of a name once per process, so userspace can name keys after exit. */
static __always_inline void keep_name(__u32 pid, __u64 hash, const struct native_str *s)
{
	struct ls_native_str_key k = {.pid = pid, .hash = hash};

	if (bpf_map_lookup_elem(&native_strs, &k))
		return;
	if (bpf_map_update_elem(&native_strs, &k, s, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&native_strs, &k))
		TRACE_STAT_INC(native_full);
}

static __always_inline struct ls_native_val *native_val(struct ls_native_key *k,
							const struct native_names *n)
{
	static const struct ls_native_val zero;
	struct ls_native_val *v = bpf_map_lookup_elem(&native_lines, k);

	if (v)
		return v;
	if (bpf_map_update_elem(&native_lines, k, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&native_lines, k)) {
		TRACE_STAT_INC(native_full);
		return NULL;
	}
	keep_name(k->pid, k->file, &n->file);
	keep_name(k->pid, k->func, &n->func);
	return bpf_map_lookup_elem(&native_lines, k);
}

static __always_inline struct native_thread *native_thread(__u32 tid, __u32 tgid)
{
	struct native_thread *th = bpf_map_lookup_elem(&native_threads, &tid);
	__u32 zero = 0;

	if (th && th->cur.pid == tgid)
		return th;
	/* new thread, or a recycled tid of another process: start clean */
	th = bpf_map_lookup_elem(&native_scratch, &zero);
	if (!th)
		return NULL;
	__builtin_memset(th, 0, sizeof(*th));
	th->cur.pid = tgid;
	th->cur.kind = LS_NK_LINE;
	th->cur.line = -1; /* no line yet: nothing to charge */
	if (bpf_map_update_elem(&native_threads, &tid, th, BPF_ANY)) {
		TRACE_STAT_INC(native_full);
		return NULL;
	}
	return bpf_map_lookup_elem(&native_threads, &tid);
}

/* Charge the time since the thread's previous event to the line it was executing. */
static __always_inline void native_close(struct native_thread *th, __u64 now)
{
	struct ls_native_val *v;

	if (th->cur.line >= 0 && th->ts) {
		v = bpf_map_lookup_elem(&native_lines, &th->cur);
		if (v)
			v->own_ns += now - th->ts;
	}
	th->ts = now;
}

enum native_ev { NATIVE_LINE, NATIVE_ENTRY, NATIVE_RETURN };

static __always_inline int native_event(enum native_ev ev, const void *file, const void *func,
					int line)
{
	__u64 id = bpf_get_current_pid_tgid(), now = bpf_ktime_get_ns();
	__u32 tgid = id >> 32, tid = (__u32)id, zero = 0, *busy;
	struct ls_native_key key = {};
	struct native_names *n;
	struct ls_native_val *v;
	struct native_thread *th;

	if (!bpf_map_lookup_elem(&procs, &tgid)) {
		TRACE_STAT_INC(not_target);
		return 0;
	}
	TRACE_STAT_INC(native_events);
	busy = ls_task_scratch_take();
	if (!busy)
		return 0;
	n = bpf_map_lookup_elem(&native_names_scratch, &zero);
	th = native_thread(tid, tgid);
	if (!n || !th)
		goto out;
	native_close(th, now);
	key.pid = tgid;
	key.tid = tid;
	key.file = read_name(&n->file, &n->file_len, file);
	key.func = read_name(&n->func, &n->func_len, func);
	key.line = line;
	switch (ev) {
	case NATIVE_LINE:
		key.kind = LS_NK_LINE;
		v = native_val(&key, n);
		if (v)
			v->hits++; /* the key holds the tid: only this thread writes it */
		th->cur = key;
		break;
	case NATIVE_ENTRY:
		key.kind = LS_NK_CALL;
		v = native_val(&key, n);
		if (v)
			v->hits++;
		if (th->depth < LS_NATIVE_STACK)
			th->stack[th->depth & (LS_NATIVE_STACK - 1)] = th->cur;
		th->depth++;
		th->cur.line = -1; /* until the callee's first line */
		break;
	case NATIVE_RETURN:
		if (th->depth == 0)
			break;
		th->depth--;
		if (th->depth < LS_NATIVE_STACK)
			th->cur = th->stack[th->depth & (LS_NATIVE_STACK - 1)];
		else
			th->cur.line = -1;
		break;
	}
out:
	ls_task_scratch_put(busy);
	return 0;
}

SEC("usdt")
int BPF_USDT(handle_py_line, const void *file, const void *func, int line)
{
	return native_event(NATIVE_LINE, file, func, line);
}

SEC("usdt")
int BPF_USDT(handle_py_entry, const void *file, const void *func, int line)
{
	return native_event(NATIVE_ENTRY, file, func, line);
}

SEC("usdt")
int BPF_USDT(handle_py_return, const void *file, const void *func, int line)
{
	return native_event(NATIVE_RETURN, file, func, line);
}

char LICENSE[] SEC("license") = "Dual MIT/GPL";
