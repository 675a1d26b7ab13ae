// SPDX-License-Identifier: MIT
/*
 * --sampler remote: the profiler's own thread samples, at the frequency, every target thread
 * that is on a CPU (bpf/remote.bpf.c), as py-spy and Tachyon do from their process. No timer
 * interrupt lands on the targets' CPUs: on a virtual machine each one costs the interrupted
 * program tens of microseconds (docs/overhead.md). The thread's own wake-ups land on whichever
 * CPU it runs on.
 *
 * A pass reads a task iterator, whose program skips all but the targets' running threads. While
 * there are at most REMOTE_LINKS processes in the target set, each has an iterator of its own,
 * over its threads alone; with more, one iterator visits every task of the machine (one read
 * instead of one per process), and a pass costs about 60 ns a task here. The set is read again
 * (its keys) whenever its change count moves: a new process is sampled from the next pass on.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "loader_jitter.h"
#include "loader_remote.h"
#include "monoclock.h"

#define REMOTE_STACK (64 * 1024)
#define REMOTE_LINKS 8 /* processes with an iterator of their own; more: one over every task */

struct remote_link {
	__u32 pid;
	int link;
};

struct ls_remote {
	pthread_t thread;
	struct ls_remote_cfg cfg;
	int stop_fd; /* an eventfd: readable once the thread is to end */
	uint64_t passes, late_ns;
	/* the thread's own: the set as last read */
	uint64_t seen_changes;
	struct remote_link links[REMOTE_LINKS];
	int nlinks; /* -1: the set is larger, every task is visited */
};

int ls_remote__read_iter(int link)
{
	char buf[64];
	ssize_t n;
	int fd = bpf_iter_create(link), err;

	if (fd < 0)
		return -errno;
	/* the programs write nothing: the read only runs them */
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	err = n < 0 ? -errno : 0;
	close(fd);
	return err;
}

/* An iterator over process pid's threads; -1 when it is gone. */
static int pid_link(const struct ls_remote *r, __u32 pid)
{
	union bpf_iter_link_info info = {.task.pid = pid};
	LIBBPF_OPTS(bpf_link_create_opts, opts, .iter_info = &info, .iter_info_len = sizeof(info));

	return bpf_link_create(r->cfg.prog_fd, 0, BPF_TRACE_ITER, &opts);
}

static void close_links(struct ls_remote *r)
{
	for (int i = 0; i < r->nlinks; i++)
		if (r->links[i].link >= 0)
			close(r->links[i].link);
	r->nlinks = 0;
}

/* Reads the target set's keys again: an iterator per process, kept for those still there. */
static void read_set(struct ls_remote *r)
{
	struct remote_link next[REMOTE_LINKS];
	__u32 key, *prev = NULL;
	int n = 0;

	while (!bpf_map_get_next_key(r->cfg.procs_fd, prev, &key)) {
		bool dup = false;

		prev = &key;
		/* a key deleted under the walk starts it again from the first */
		for (int i = 0; i < n; i++)
			dup |= next[i].pid == key;
		if (dup)
			continue;
		if (n == REMOTE_LINKS) {
			/* too many: the iterator over every task, one read a pass */
			for (int i = 0; i < n; i++)
				if (next[i].link >= 0)
					close(next[i].link);
			close_links(r);
			r->nlinks = -1;
			return;
		}
		next[n].pid = key;
		next[n].link = -1;
		for (int i = 0; i < r->nlinks; i++)
			if (r->links[i].pid == key) {
				next[n].link = r->links[i].link;
				r->links[i].link = -1; /* moved */
			}
		n++;
	}
	close_links(r);
	for (int i = 0; i < n; i++) {
		if (next[i].link < 0)
			next[i].link = pid_link(r, next[i].pid);
		if (next[i].link >= 0)
			r->links[r->nlinks++] = next[i];
	}
}

static void run_pass(struct ls_remote *r)
{
	uint64_t changes = __atomic_load_n(r->cfg.changes, __ATOMIC_ACQUIRE);

	if (changes != r->seen_changes) {
		r->seen_changes = changes;
		read_set(r);
	}
	if (r->nlinks < 0) {
		ls_remote__read_iter(r->cfg.all_link);
		return;
	}
	for (int i = 0; i < r->nlinks; i++)
		ls_remote__read_iter(r->links[i].link);
}

static void *sample_loop(void *arg)
{
	struct ls_remote *r = arg;
	uint64_t seed = ls_mono_ns() ^ ((uint64_t)getpid() << 32), last = ls_mono_ns(), next, now;
	struct pollfd stop = {.fd = r->stop_fd, .events = POLLIN};
	uint64_t period = r->cfg.period_ns;
	struct timespec in;
	int n;

	pthread_setname_np(pthread_self(), "ls-remote");
	/* the thread it preempts is noted for the pass (bpf/remote.bpf.c) */
	__atomic_store_n(r->cfg.sampler_tid, (uint32_t)gettid(), __ATOMIC_RELEASE);
	r->seen_changes = __atomic_load_n(r->cfg.changes, __ATOMIC_ACQUIRE);
	read_set(r);
	next = last;
	for (;;) {
		/* the rate drawn as the timer's is */
		next += ls_jitter__draw(&seed, period);
		now = ls_mono_ns();
		in.tv_sec = next > now ? (next - now) / 1000000000 : 0;
		in.tv_nsec = next > now ? (next - now) % 1000000000 : 0;
		/* a stop ends the wait at once, however long the period */
		while ((n = ppoll(&stop, 1, &in, NULL)) < 0 && errno == EINTR)
			;
		if (n)
			break;
		now = ls_mono_ns();
		if (now - last > 2 * period) {
			__atomic_fetch_add(&r->late_ns, now - last - 2 * period, __ATOMIC_RELAXED);
			__atomic_store_n(r->cfg.weight_ns, 2 * period, __ATOMIC_RELEASE);
			next = now; /* the passes missed are not run in a burst */
		} else {
			__atomic_store_n(r->cfg.weight_ns, now - last, __ATOMIC_RELEASE);
		}
		last = now;
		run_pass(r);
		__atomic_fetch_add(&r->passes, 1, __ATOMIC_RELAXED);
	}
	close_links(r);
	return NULL;
}

int ls_remote__start(struct ls_remote **out, const struct ls_remote_cfg *cfg)
{
	struct ls_remote *r = calloc(1, sizeof(*r));
	pthread_attr_t attr;
	sigset_t all, old;
	int err;

	*out = NULL;
	if (!r)
		return -ENOMEM;
	r->cfg = *cfg;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0 || pthread_attr_init(&attr)) {
		err = r->stop_fd < 0 ? -errno : -ENOMEM;
		if (r->stop_fd >= 0)
			close(r->stop_fd);
		free(r);
		return err;
	}
	pthread_attr_setstacksize(&attr, REMOTE_STACK);
	/* signals are the main thread's (Ctrl-C, the launched command's end) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&r->thread, &attr, sample_loop, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	pthread_attr_destroy(&attr);
	if (err) {
		close(r->stop_fd);
		free(r);
		return -err;
	}
	*out = r;
	return 0;
}

void ls_remote__stop(struct ls_remote *r)
{
	uint64_t one = 1;

	if (!r)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
		return; /* cannot happen with an eventfd; leaked rather than a join that hangs */
	pthread_join(r->thread, NULL);
	close(r->stop_fd);
	free(r);
}

void ls_remote__stats(const struct ls_remote *r, uint64_t *passes, uint64_t *late_ns)
{
	*passes = r ? __atomic_load_n(&r->passes, __ATOMIC_RELAXED) : 0;
	*late_ns = r ? __atomic_load_n(&r->late_ns, __ATOMIC_RELAXED) : 0;
}
