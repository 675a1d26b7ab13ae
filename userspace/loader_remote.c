// SPDX-License-Identifier: MIT
/*
 * --sampler remote: the profiler's own thread samples, at the frequency, every target thread
 * that is on a CPU (bpf/remote.bpf.c), as py-spy and Tachyon do from their process. No timer
 * interrupt lands on the targets' CPUs: on a virtual machine each one costs the interrupted
 * program tens of microseconds (docs/overhead.md). The thread's own wake-ups land on whichever
 * CPU it runs on.
 *
 * A pass is a read of the iterator, which visits every task of the machine (the program skips
 * all but the targets' running threads): its cost grows with the tasks the machine runs.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "loader_remote.h"
#include "monoclock.h"

#define REMOTE_STACK (64 * 1024)

struct ls_remote {
	pthread_t thread;
	int iter_link;
	uint64_t period_ns;
	uint64_t *weight_ns; /* borrowed: the BPF .bss's remote_weight_ns */
	bool stop;	     /* set by ls_remote__stop, read by the thread (atomics) */
	uint64_t passes, late_ns;
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

/* One read of the iterator: its program walks the running target threads. */
static void run_pass(int link)
{
	char buf[64];
	ssize_t n;
	int fd = bpf_iter_create(link);

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	close(fd);
}

static void *sample_loop(void *arg)
{
	struct ls_remote *r = arg;
	uint64_t seed = ls_mono_ns() ^ ((uint64_t)getpid() << 32), last = ls_mono_ns(), next, now;
	struct timespec at;

	pthread_setname_np(pthread_self(), "ls-remote");
	next = last;
	while (!__atomic_load_n(&r->stop, __ATOMIC_ACQUIRE)) {
		/* the rate drawn uniformly in [0.75, 1.25] of the nominal, as the timer's is */
		next += r->period_ns * 4000 / (3000 + xorshift(&seed) % 2001);
		at.tv_sec = next / 1000000000;
		at.tv_nsec = next % 1000000000;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &at, NULL) == EINTR)
			;
		now = ls_mono_ns();
		if (now - last > 2 * r->period_ns) {
			__atomic_fetch_add(&r->late_ns, now - last - 2 * r->period_ns,
					   __ATOMIC_RELAXED);
			__atomic_store_n(r->weight_ns, 2 * r->period_ns, __ATOMIC_RELEASE);
			next = now; /* the passes missed are not run in a burst */
		} else {
			__atomic_store_n(r->weight_ns, now - last, __ATOMIC_RELEASE);
		}
		last = now;
		run_pass(r->iter_link);
		__atomic_fetch_add(&r->passes, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

int ls_remote__start(struct ls_remote **out, int iter_link, uint64_t period_ns, uint64_t *weight_ns)
{
	struct ls_remote *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->iter_link = iter_link;
	r->period_ns = period_ns;
	r->weight_ns = weight_ns;
	if (pthread_attr_init(&attr)) {
		free(r);
		return -ENOMEM;
	}
	pthread_attr_setstacksize(&attr, REMOTE_STACK);
	/* signals are the main thread's (Ctrl-C, the launched command's end) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, &attr, sample_loop, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		free(r);
		return -err;
	}
	*out = r;
	return 0;
}

void ls_remote__stop(struct ls_remote *r)
{
	if (!r)
		return;
	__atomic_store_n(&r->stop, true, __ATOMIC_RELEASE);
	pthread_join(r->thread, NULL);
	free(r);
}

void ls_remote__stats(const struct ls_remote *r, uint64_t *passes, uint64_t *late_ns)
{
	*passes = r ? __atomic_load_n(&r->passes, __ATOMIC_RELAXED) : 0;
	*late_ns = r ? __atomic_load_n(&r->late_ns, __ATOMIC_RELAXED) : 0;
}
