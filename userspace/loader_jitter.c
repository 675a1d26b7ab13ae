// SPDX-License-Identifier: MIT
/*
 * The sampling period's jitter: a thread per sampled CPU, pinned to it, draws that CPU's period
 * again every 250 ms, so that samples do not lock onto the scheduler tick (a fixed period aliases
 * with time slices under CPU contention).
 *
 * Each CPU draws its own because changing another CPU's event is a call run on that CPU which
 * the caller waits for: 12 us on an idle VM, and up to tens of milliseconds while that virtual
 * CPU is not running. Drawn by the collector for every CPU ten times a second, it was a quarter
 * of the collector's CPU at 10,000 threads. Here each change is a local call.
 *
 * A change restarts the CPU's timer, cutting off the part of the period run since its last
 * tick; the next tick carries it (tick_weight() in bpf/sample.bpf.c). That part must not hold
 * this thread's own run, or it would go to whichever target the next tick finds: the thread
 * draws only after sleeping longer than the longest period.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "linescope.h"
#include "loader_jitter.h"
#include "monoclock.h"

#define JITTER_MS    250
#define JITTER_STACK (64 * 1024)

struct jitter_cpu {
	struct ls_jitter *j;
	pthread_t thread;
	int cpu;
	bool started;
};

struct ls_jitter {
	int stop_fd; /* an eventfd: readable once the threads are to end */
	uint64_t period_ns;
	const int *pfds;	     /* borrowed: the loader's perf events, by CPU */
	struct ls_cpu_clock *clocks; /* borrowed: the BPF .bss's, by CPU */
	int ncpus;
	struct jitter_cpu cpus[];
};

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

uint64_t ls_jitter__draw(uint64_t *seed, uint64_t period_ns)
{
	return period_ns * 4000 / (3000 + xorshift(seed) % 2001);
}

/* Sets CPU c's period, noting it and when for its ticks' weights (tick_weight()). */
static void set_period(struct ls_jitter *j, int c, uint64_t period)
{
	struct ls_cpu_clock *t = &j->clocks[c];

	__atomic_store_n(&t->period_ns, period, __ATOMIC_RELAXED);
	__atomic_store_n(&t->changed_ns, ls_mono_ns(), __ATOMIC_RELEASE);
	ioctl(j->pfds[c], PERF_EVENT_IOC_PERIOD, &period);
}

static void *draw_periods(void *arg)
{
	struct jitter_cpu *jc = arg;
	struct ls_jitter *j = jc->j;
	struct pollfd stop = {.fd = j->stop_fd, .events = POLLIN};
	uint64_t seed = ls_mono_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)(jc->cpu + 1) << 48;
	/* a sleep longer than the longest period drawn (4/3 of the nominal), whatever the rate */
	int longest_ms = (int)(j->period_ns * 4 / 3 / 1000000) + 1;
	int wait_ms = JITTER_MS > longest_ms ? JITTER_MS : longest_ms;
	char name[16];

	snprintf(name, sizeof(name), "ls-jitter/%d", jc->cpu);
	pthread_setname_np(pthread_self(), name);

	for (;;) {
		/* a quarter of the wait drawn too: the CPUs do not all wake at once */
		int n = poll(&stop, 1, wait_ms + (int)(xorshift(&seed) % (wait_ms / 4 + 1)));

		if (n > 0 || (n < 0 && errno != EINTR))
			break;
		if (n < 0)
			continue;
		set_period(j, jc->cpu, ls_jitter__draw(&seed, j->period_ns));
	}
	return NULL;
}

/* A thread for CPU c, pinned to it when the cpuset allows (else it changes the CPU remotely). */
static int start_cpu(struct jitter_cpu *jc)
{
	pthread_attr_t attr;
	cpu_set_t set;
	int err;

	if (pthread_attr_init(&attr))
		return -ENOMEM;
	pthread_attr_setstacksize(&attr, JITTER_STACK);
	CPU_ZERO(&set);
	CPU_SET(jc->cpu, &set);
	pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
	err = pthread_create(&jc->thread, &attr, draw_periods, jc);
	if (err == EINVAL) {
		/* not in our cpuset */
		CPU_ZERO(&set);
		if (!sched_getaffinity(0, sizeof(set), &set))
			pthread_attr_setaffinity_np(&attr, sizeof(set), &set);
		err = pthread_create(&jc->thread, &attr, draw_periods, jc);
	}
	pthread_attr_destroy(&attr);
	jc->started = !err;
	return -err;
}

int ls_jitter__start(struct ls_jitter **out, const int *pfds, int ncpus, uint64_t period_ns,
		     struct ls_cpu_clock *clocks)
{
	struct ls_jitter *j = calloc(1, sizeof(*j) + ncpus * sizeof(j->cpus[0]));
	sigset_t all, old;
	int err = 0;

	*out = NULL;
	if (!j)
		return -ENOMEM;
	j->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (j->stop_fd < 0) {
		err = -errno;
		free(j);
		return err;
	}
	j->period_ns = period_ns;
	j->pfds = pfds;
	j->clocks = clocks;
	j->ncpus = ncpus;
	/* the collector's signals (Ctrl-C) go to its main thread */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	for (int c = 0; c < ncpus && !err; c++) {
		j->cpus[c] = (struct jitter_cpu){.j = j, .cpu = c};
		/* a CPU past cpu_clocks keeps its first period: the one its ticks report */
		if (pfds[c] >= 0 && c < LS_CLOCK_CPUS)
			err = start_cpu(&j->cpus[c]);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		ls_jitter__stop(j);
		return err;
	}
	*out = j;
	return 0;
}

void ls_jitter__stop(struct ls_jitter *j)
{
	uint64_t one = 1;

	if (!j)
		return;
	/* cannot fail: a new eventfd's count is far below its limit */
	(void)!write(j->stop_fd, &one, sizeof(one));
	for (int c = 0; c < j->ncpus; c++)
		if (j->cpus[c].started)
			pthread_join(j->cpus[c].thread, NULL);
	close(j->stop_fd);
	free(j);
}
