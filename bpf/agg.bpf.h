/* SPDX-License-Identifier: MIT */
/*
 * Samples added up in the kernel, so that ring-buffer traffic grows with distinct stacks rather
 * than with events (a thousand threads switching a hundred times a second would otherwise send
 * a hundred thousand stacks a second). The first sample of a (process, thread, stack) goes to
 * userspace whole, carrying its stack hash; the ones after it only add count and weight under
 * that hash. Userspace swaps the active map at each flush (replacing the `agg_maps` slot waits
 * for every running program, so the retired map has no writer) and drains the retired one. The
 * first map is set only once the targets run (that wait would hold up their start): until then
 * every sample goes whole.
 */
#ifndef __LS_AGG_BPF_H
#define __LS_AGG_BPF_H

#include "maps.bpf.h"

#define LS_AGG_MAX   262144 /* distinct keys per flush interval */
#define LS_KNOWN_MAX 131072 /* (process, thread, stack) already described */

const volatile bool agg_enabled __weak = false;
/* --timeline: each added sample also goes as a tick, and off-CPU intervals longer than this */
const volatile bool timeline_enabled __weak = false;
const volatile __u64 timeline_min_wait_ns __weak = 0;
/*
 * Wall mode without --timeline: a wait at least this long still goes as a tick, so that the
 * time of a thread blocked across a child's start is known even when its stack is added up
 * (userspace links a child a library's thread started to the line that waited for it)
 */
const volatile __u64 long_wait_ns __weak = 0;

struct ls_agg_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, LS_AGG_MAX);
	__type(key, struct ls_agg_key);
	__type(value, struct ls_agg_val);
} agg_a SEC(".maps") __weak, agg_b SEC(".maps") __weak;

/*
 * agg_a and agg_b are made once by a load that is kept for the next runs (loader_keep.c), else by
 * userspace once the targets run (loader.c create_agg_maps): the programs reach them through
 * agg_maps, whose inner map is this template of their kind, small (a hash's inner maps need not
 * match its size).
 */
struct ls_agg_inner {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__uint(max_entries, 1);
	__type(key, struct ls_agg_key);
	__type(value, struct ls_agg_val);
};

/* Slot 0: the map being filled (set by userspace once the targets run). */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 1);
	__type(key, __u32);
	__array(values, struct ls_agg_inner);
} agg_maps SEC(".maps") __weak;

/* Stacks userspace has been told about, per thread. Evicted: described once more. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, LS_KNOWN_MAX);
	__type(key, struct ls_known_key);
	__type(value, __u8);
} agg_known SEC(".maps") __weak;

struct hash_ctx {
	const struct ls_frame *frames;
	__u32 n;
	__u64 h;
};

static __always_inline __u64 mix64(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 29);
}

static long hash_step(__u32 i, void *data)
{
	struct hash_ctx *c = data;

	if (i >= c->n || i >= LS_MAX_FRAMES)
		return 1;
	c->h = mix64(c->h, c->frames[i].code);
	c->h = mix64(c->h, ((__u64)(__u32)c->frames[i].instr << 32) | c->frames[i].fp);
	return 0;
}

/*
 * The stack's identity: its frames, its walk flags (GIL state, truncation, no thread state, not
 * walked), the process's start time, its executable's inode and the image generation; never 0.
 */
static __always_inline __u64 ls_agg_stack_hash(const struct ls_frame *frames, __u32 n, __u8 flags,
					       __u64 pstart, __u64 image, __u32 gen)
{
	struct hash_ctx c = {.frames = frames, .n = n};

	c.h = mix64(0x6c696e6573636f70ULL, pstart);
	c.h = mix64(c.h, image);
	c.h = mix64(c.h, ((__u64)gen << 32) | ((__u64)(flags & ~LS_SF_KERNEL) << 16) | n);
	bpf_loop(LS_MAX_FRAMES, hash_step, &c, 0);
	return c.h ?: 1;
}

/*
 * Adds one sample of weight to key k in the active map. 0; -1 when the map is full; -2 before
 * userspace set the first one (just after the start: it does so once the targets run).
 */
static __always_inline int ls_agg_add(const struct ls_agg_key *k, __u64 weight)
{
	struct ls_agg_val *v, zero = {};
	__u32 slot = 0;
	void *m = bpf_map_lookup_elem(&agg_maps, &slot);

	if (!m)
		return -2;
	v = bpf_map_lookup_elem(m, k);
	if (!v) {
		/* another CPU may insert it first: then ours fails and the lookup finds its */
		bpf_map_update_elem(m, k, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(m, k);
		if (!v)
			return -1;
	}
	__sync_fetch_and_add(&v->count, 1);
	__sync_fetch_and_add(&v->weight_ns, weight);
	return 0;
}

/* What ls_agg_sample() needs of a sample besides its frames; the stack's hash comes back. */
struct ls_agg_req {
	__u64 pstart;  /* the process's start time */
	__u64 exe;     /* its executable's inode */
	__u64 ip;      /* user-mode instruction pointer, or 0 */
	__u64 text_lo; /* the interpreter's text: ip there is Python mode */
	__u64 text_hi;
	__u64 weight;
	__u64 ts;
	__u64 stack; /* out: the stack's hash */
	__u32 pid;
	__u32 tid;
	__u32 gen; /* the image generation */
	__u32 n;   /* frames in b->frames */
	__u16 xflags;
	__u8 kind;
	__u8 kernel;
	__u32 pad;
};

enum ls_agg_result {
	LS_AGG_ADDED = 0, /* added up: nothing to send */
	/* the thread's first with this stack: send it whole, then mark it known */
	LS_AGG_FIRST = 1,
	LS_AGG_WHOLE = 2, /* not added (no map yet, or full): send it whole */
};

/*
 * Adds the sample in b (its frames; q the rest) up in the kernel, or says why it goes whole.
 * A global function (bpf/agg.bpf.c): the verifier checks it once per program, on its own,
 * instead of once more along every path of its caller's walk (half of each sampling program's
 * verification). b and q must not be NULL.
 */
int ls_agg_sample(struct ls_sample_buf *b, struct ls_agg_req *q);

#endif /* __LS_AGG_BPF_H */
