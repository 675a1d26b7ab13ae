// SPDX-License-Identifier: MIT
/*
 * Kernel launches from Python threads are not probed: each thread collects them in
 * LS_GPU_LAUNCHES records (gpu/gpu_records.h). A launch from a Python location the thread
 * launched from lately goes in under that location's reference launch; a launch from a new
 * location goes in with the frames the library walked in process (gpu/pyloc.c) and becomes the
 * reference for it. A thread's first
 * launch, and one every REF_SPAN launches, is probed, so that the collector learns which thread
 * the records are (the probe carries the host's tid) and references never leave its window; so
 * is a launch whose frames cannot be told. Records go out before the thread's next probe, when
 * full or a few ms old, before any activity record (so a launch's entry always precedes its
 * device work), at thread exit and at process exit. Every launch is still attributed, exactly,
 * for the cost of a frame-chain read instead of a uprobe trap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "inject_int.h"
#include "pyloc.h"

#define MAX_AGE_NS (5 * 1000000ull) /* a batch older than this goes out at the next launch */
#define REF_SPAN   (1u << 16)	    /* launches after which a launch is probed again */
#define DATA_MAX   (LS_GPU_REC_MAX - sizeof(struct ls_gpu_launches))
#define NLOCS	   256 /* locations a thread remembers (a training step launches from a few dozen) */

struct tbatch {
	struct tbatch *prev, *next; /* all threads' batches, under reg_lock */
	_Atomic int busy;	    /* the owner appends, any thread may send */
	__u32 epoch;		    /* attach epoch of key, ref and ident */
	/* written by the owner only (ident, n and used under busy) */
	__u32 ident; /* the thread's last probed launch: names the thread; 0: none yet */
	__u32 pad;
	__u32 n, used;	/* entries held, and their bytes in out.data */
	__u64 first_ns; /* API exit of the oldest entry */
	struct {
		struct ls_gpu_launches r;
		__u8 data[DATA_MAX];
	} out;
	struct ls_frame frames[LS_MAX_FRAMES]; /* the owner's walk, before it takes busy */
	/* the reference launch of each location seen lately (by key; key 0: empty) */
	struct {
		__u64 key;
		__u32 corr;
		__u32 pad;
	} locs[NLOCS];
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tbatch *reg;
static pthread_key_t exit_key;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static int exit_key_ok;
static __thread struct tbatch *t_batch;

static void take(struct tbatch *b)
{
	while (atomic_exchange_explicit(&b->busy, 1, memory_order_acquire))
		;
}

static void give(struct tbatch *b)
{
	atomic_store_explicit(&b->busy, 0, memory_order_release);
}

/* Sends what b holds. Caller holds b. */
static void send(struct tbatch *b)
{
	__u32 n = b->n, used = b->used;

	if (!n)
		return;
	b->n = b->used = 0;
	if (b->epoch != atomic_load_explicit(&L.epoch, memory_order_relaxed))
		return; /* the tracer that saw its thread's probes is gone */
	b->out.r.ident_corr = b->ident;
	b->out.r.mono = mono_ns();
	emit(&b->out.r.hdr, LS_GPU_LAUNCHES, (__u16)n, sizeof(b->out.r) + used);
}

static void unlink_batch(struct tbatch *b)
{
	if (b->prev)
		b->prev->next = b->next;
	else
		reg = b->next;
	if (b->next)
		b->next->prev = b->prev;
}

/* Thread exit: what the thread still holds goes out. */
static void on_thread_exit(void *arg)
{
	struct tbatch *b = arg;

	pthread_mutex_lock(&reg_lock);
	take(b);
	send(b);
	unlink_batch(b);
	pthread_mutex_unlock(&reg_lock);
	t_batch = NULL;
	free(b);
}

static void make_exit_key(void)
{
	exit_key_ok = pthread_key_create(&exit_key, on_thread_exit) == 0;
}

static __attribute__((noinline, cold)) struct tbatch *new_batch(void)
{
	struct tbatch *b;

	pthread_once(&exit_once, make_exit_key);
	if (!exit_key_ok)
		return NULL;
	b = calloc(1, sizeof(*b));
	if (!b)
		return NULL;
	if (pthread_setspecific(exit_key, b)) {
		free(b);
		return NULL;
	}
	pthread_mutex_lock(&reg_lock);
	b->next = reg;
	if (reg)
		reg->prev = b;
	reg = b;
	pthread_mutex_unlock(&reg_lock);
	t_batch = b;
	return b;
}

/* The slot of location key among those the thread remembers. */
static inline __u32 loc_of(__u64 key)
{
	return (__u32)(key ^ key >> 32) & (NLOCS - 1);
}

/*
 * A launch that is probed, from location key: the reference for it, and it names the thread
 * (not without a location: BPF may charge such a launch to a waiting thread).
 */
static int probed(struct tbatch *b, __u64 key, __u32 corr)
{
	send(b);
	if (key) {
		b->locs[loc_of(key)].key = key;
		b->locs[loc_of(key)].corr = corr;
		b->ident = corr;
	}
	give(b);
	return 0;
}

int launches_add(__u32 corr, __u64 api_ns, __u64 now)
{
	__u64 key = ls_pyloc__key();
	struct tbatch *b = t_batch;
	struct ls_gpu_launch_ent *e;
	__u32 epoch, size, loc;
	int walk, nf = 0;

	if (!key) {
		/* no location (a native thread): probed, and it ends the thread's batch */
		if (!b)
			return 0;
		take(b);
		return probed(b, 0, corr);
	}
	if (!b && !(b = new_batch()))
		return 0;
	loc = loc_of(key);
	/* a location seen lately: under its reference; else walked, and the reference for it */
	walk = b->locs[loc].key != key || corr - b->locs[loc].corr >= REF_SPAN;
	if (walk)
		nf = ls_pyloc__frames(b->frames, LS_MAX_FRAMES);
	epoch = atomic_load_explicit(&L.epoch, memory_order_relaxed);
	take(b);
	if (b->epoch != epoch) {
		b->n = b->used = 0;
		b->ident = 0;
		memset(b->locs, 0, sizeof(b->locs));
		b->epoch = epoch;
	}
	if (!b->ident || corr - b->ident >= REF_SPAN || nf < 0)
		return probed(b, key, corr);
	size = sizeof(*e) + (walk ? (__u32)nf * sizeof(struct ls_frame) : 0);
	if (b->n == LS_GPU_LAUNCHES_MAX || b->used + size > DATA_MAX ||
	    (b->n && now - b->first_ns >= MAX_AGE_NS))
		send(b);
	if (!b->n)
		b->first_ns = now;
	e = (struct ls_gpu_launch_ent *)(b->out.data + b->used);
	e->corr = corr;
	e->api_ns = api_ns > 0xffffffffull ? 0xffffffffu : (__u32)api_ns;
	e->t_mono = now;
	e->ref = walk ? 0 : b->locs[loc].corr;
	e->nframes = walk ? (__u16)nf : 0;
	e->pad = 0;
	if (walk) {
		memcpy(e + 1, b->frames, (size_t)nf * sizeof(struct ls_frame));
		b->locs[loc].key = key;
		b->locs[loc].corr = corr;
	}
	b->used += size;
	b->n++;
	give(b);
	return 1;
}

void launches_send_mine(void)
{
	struct tbatch *b = t_batch;

	if (!b)
		return;
	take(b);
	send(b);
	give(b);
}

void launches_send_all(void)
{
	struct tbatch *b;

	pthread_mutex_lock(&reg_lock);
	for (b = reg; b; b = b->next) {
		take(b);
		send(b);
		give(b);
	}
	pthread_mutex_unlock(&reg_lock);
}

static void before_fork(void)
{
	pthread_mutex_lock(&reg_lock);
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&reg_lock);
}

static void after_fork_child(void)
{
	struct tbatch *b, *next;

	/* only the forking thread lives on; the others' batches are the parent's */
	for (b = reg; b; b = next) {
		next = b->next;
		if (b != t_batch)
			free(b);
	}
	reg = t_batch;
	if (t_batch) {
		t_batch->prev = t_batch->next = NULL;
		t_batch->busy = 0;
		t_batch->n = t_batch->used = 0;
		t_batch->ident = 0;
		memset(t_batch->locs, 0, sizeof(t_batch->locs));
	}
	pthread_mutex_unlock(&reg_lock);
	ls_pyloc__forked();
}

int launches_init(void)
{
	return -pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
