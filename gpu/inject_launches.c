// SPDX-License-Identifier: MIT
/*
 * Launches made from the Python location of their thread's last probed launch are not probed:
 * each thread collects them (LS_GPU_LAUNCHES records, gpu/gpu_records.h) under that launch, its
 * reference, and sends them before its next probe, when the record is full or a few ms old, and
 * before any activity record goes out (so a launch's entry always precedes its device work), at
 * thread exit and at process exit. The collector gives every entry the reference's stack, so
 * every launch is still attributed, exactly, for the cost of a frame-chain read instead of a
 * uprobe trap.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

#include "inject_int.h"
#include "pyloc.h"

#define MAX_AGE_NS (5 * 1000000ull) /* a batch older than this goes out at the next launch */
#define REF_SPAN   (1u << 16)	    /* launches after which a reference is probed again */

struct tbatch {
	struct tbatch *prev, *next; /* all threads' batches, under reg_lock */
	_Atomic int busy;	    /* the owner appends, any thread may send */
	__u32 epoch;		    /* attach epoch of key and ref */
	__u64 key;		    /* location of the reference launch; 0: none */
	__u32 ref;
	__u32 n;	/* entries held */
	__u64 first_ns; /* API exit of the oldest entry */
	struct {
		struct ls_gpu_launches r;
		struct ls_gpu_launch_ent ent[LS_GPU_LAUNCHES_MAX];
	} out;
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
	__u32 n = b->n;

	if (!n)
		return;
	b->n = 0;
	if (b->epoch != atomic_load_explicit(&L.epoch, memory_order_relaxed))
		return; /* the tracer that saw the reference is gone */
	b->out.r.ref_corr = b->ref;
	b->out.r.mono = mono_ns();
	emit(&b->out.r.hdr, LS_GPU_LAUNCHES, (__u16)n,
	     sizeof(b->out.r) + n * sizeof(struct ls_gpu_launch_ent));
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

int launches_add(__u32 corr, __u64 api_ns, __u64 now)
{
	__u64 key = ls_pyloc__key();
	struct tbatch *b = t_batch;
	struct ls_gpu_launch_ent *e;
	__u32 epoch, n;

	if (!key && (!b || !b->key))
		return 0;
	if (!b && !(b = new_batch()))
		return 0;
	epoch = atomic_load_explicit(&L.epoch, memory_order_relaxed);
	take(b);
	if (b->epoch != epoch) {
		b->n = 0;
		b->key = 0;
		b->epoch = epoch;
	}
	if (!key || key != b->key || corr - b->ref >= REF_SPAN) {
		/* a new location (or none): this launch is probed and becomes the reference */
		send(b);
		b->key = key;
		b->ref = corr;
		give(b);
		return 0;
	}
	n = b->n;
	if (n == LS_GPU_LAUNCHES_MAX || (n && now - b->first_ns >= MAX_AGE_NS)) {
		send(b);
		n = 0;
	}
	if (!n)
		b->first_ns = now;
	e = &b->out.ent[n];
	e->corr = corr;
	e->api_ns = api_ns > 0xffffffffull ? 0xffffffffu : (__u32)api_ns;
	e->t_mono = now;
	b->n = n + 1;
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
		t_batch->n = 0;
		t_batch->key = 0;
	}
	pthread_mutex_unlock(&reg_lock);
	ls_pyloc__forked();
}

int launches_init(void)
{
	return -pthread_atfork(before_fork, after_fork_parent, after_fork_child);
}
