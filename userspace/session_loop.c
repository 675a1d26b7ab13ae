// SPDX-License-Identifier: MIT
/*
 * The recording loop. Records are consumed as they arrive so that code objects are read while
 * their process is alive; the profile is flushed every second (less often when flushing would
 * cost more than 1/FLUSH_SHARE of a core) so that a killed profiler leaves a readable file. A
 * stop (signal or -d) asks a launched command to exit, then makes it.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include "log.h"
#include "session_int.h"
#include "status.h"

#define FLUSH_NS NSEC_PER_SEC
/*
 * A flush writes a row per (thread, stack) seen since the last one and scans the kernel's
 * aggregate whole: at 10,000 threads 5-22 ms a flush (reads of records included, measured so).
 * The rows grow with the interval, so flushing less often saves little (500 x 20 threads: 8
 * flushes cost 199-222 ms, 24 flushes 224-264 ms); the interval grows anyway so that flushing,
 * its reads apart, takes at most 1/FLUSH_SHARE of a core, up to FLUSH_MAX_NS of data a SIGKILL
 * could lose.
 */
#define FLUSH_SHARE  200
#define FLUSH_MAX_NS (5 * NSEC_PER_SEC)
#define STATUS_NS    250000000ULL
#define TICK_NS	     20000000ULL
#define REAP_NS	     500000000ULL
#define POLL_MS	     50 /* longest sleep on the ring buffer: frequent records do not wake us */

#define GRACE_NS  3000000000ULL /* for a launched command to exit once asked */
#define KILLED_NS 1000000000ULL /* for its killed tree to be reaped */

/* When each periodic job last ran, and how far the stopping has gone. */
struct loop {
	uint64_t last_flush, last_status, last_tick, last_reap;
	uint64_t flush_every; /* the flush interval, from what the last flush cost */
	uint64_t deadline, grace_end, kill_end;
	bool stopping, killed;
	int signals_seen;
};

void lss_reap_child(struct session *s)
{
	int status;

	if (!s->launched || s->child_reaped)
		return;
	if (waitpid(s->launch.pid, &status, WNOHANG) == s->launch.pid) {
		s->child_reaped = true;
		s->child_status = status;
		if (s->child_fd >= 0)
			close(s->child_fd); /* it would stay readable */
		s->child_fd = -1;
	}
}

static bool targets_gone(struct session *s)
{
	struct ls_recorder_stats rs;

	if (s->o->cgroup) {
		bool pop = ls_cgroup__populated(&s->cg);

		if (pop)
			s->cg_seen = true;
		return s->cg_seen && !pop;
	}
	ls_recorder__stats(s->rec, &rs);
	if (s->launched && !s->child_reaped)
		return false;
	return rs.live == 0;
}

uint64_t lss_lost_count(struct session *s)
{
	struct ls_stats bs;
	struct ls_recorder_stats rs;

	ls_loader__stats(s->loader, &bs);
	ls_recorder__stats(s->rec, &rs);
	return bs.sample_drops + rs.unresolved_samples;
}

static void kill_one(void *ctx, pid_t pid, pid_t ppid)
{
	kill(pid, SIGKILL);
}

/* The launched command and everything it started: it ignored its chance to exit. */
static void kill_command(struct session *s)
{
	ls_warn(0, "pid %d did not exit; killing it and its children", s->launch.pid);
	/* the descendants first: once the command is gone they are no longer its children */
	ls_targets__descendants(s->launch.pid, kill_one, NULL);
	kill(s->launch.pid, SIGKILL);
}

/*
 * Waits for records (not when the last read left some, less when the recorder has a retry due)
 * and reads them for a slice: 0 or -errno.
 */
static int poll_records(struct session *s)
{
	uint64_t now = ls_mono_ns(), next_try = ls_recorder__retry(s->rec, now);
	int wait_ms = POLL_MS;

	if (s->read_behind || next_try <= now)
		wait_ms = 0;
	else if (next_try - now < POLL_MS * NSEC_PER_MSEC)
		wait_ms = (int)((next_try - now + NSEC_PER_MSEC - 1) / NSEC_PER_MSEC);
	return lss_read(s, wait_ms);
}

static void run_timers(struct session *s, struct loop *L, uint64_t now)
{
	if (now - L->last_tick >= TICK_NS) {
		ls_recorder__tick(s->rec);
		L->last_tick = now;
	}
	if (now - L->last_reap >= REAP_NS) {
		ls_recorder__reap(s->rec, now, ls_loader__ring_written(s->loader),
				  ls_loader__ring_read(s->loader));
		L->last_reap = now;
	}
	if (s->o->rotate && !L->stopping && now >= s->next_rotate) {
		lss_rotate_now(s, now);
		L->last_flush = now;
	}
	if (s->o->rotate)
		ls_rotate__reap(&s->rot, false);
	if (now - L->last_flush >= L->flush_every) {
		/* a failed flush is retried a second later, as it always was */
		uint64_t cpu = 0;

		if (lss_flush(s, now, false))
			ls_warn(0, "could not write the profile; will retry");
		else
			cpu = s->flush_cost_ns * FLUSH_SHARE;
		L->flush_every = cpu < FLUSH_NS	      ? FLUSH_NS
				 : cpu > FLUSH_MAX_NS ? FLUSH_MAX_NS
						      : cpu;
		L->last_flush = now;
	}
	if (now - L->last_status >= STATUS_NS) {
		struct ls_recorder_stats rs;

		ls_recorder__stats(s->rec, &rs);
		ls_status__update((now - s->t0) / (double)NSEC_PER_SEC, rs.live, rs.threads,
				  rs.samples, lss_lost_count(s));
		L->last_status = now;
	}
}

/* Whether the recording is over; a stop asks a launched command to exit, then makes it. */
static bool should_end(struct session *s, struct loop *L, uint64_t now)
{
	int sig = lss_stop_signal();

	if (sig && !L->stopping) {
		L->stopping = true;
		L->signals_seen = lss_stop_count();
		/* the terminal signals the whole process group; a kill() only reaches us */
		if (s->launched && !s->child_reaped && (lss_stop_from_user() || sig != SIGINT))
			kill(s->launch.pid, sig == SIGINT ? SIGINT : SIGTERM);
		L->grace_end = now + GRACE_NS;
	}
	if (L->deadline && now >= L->deadline && !L->stopping) {
		/* -d: a launched command is asked to stop, then made to */
		L->stopping = s->timed_out = true;
		if (s->launched && !s->child_reaped)
			kill(s->launch.pid, SIGTERM);
		L->grace_end = now + GRACE_NS;
	}
	if (L->stopping && (!s->launched || s->child_reaped))
		return true;
	if (L->stopping && !L->killed &&
	    (now >= L->grace_end || lss_stop_count() > L->signals_seen)) {
		/* it ignored SIGINT/SIGTERM for 3 s, or a second Ctrl-C came */
		kill_command(s);
		L->killed = true;
		L->kill_end = now + KILLED_NS;
	}
	if (L->killed && now >= L->kill_end)
		return true;
	if (targets_gone(s)) {
		/* drain what the last processes emitted */
		lss_read_all(s);
		return true;
	}
	return false;
}

void lss_loop(struct session *s)
{
	struct loop L = {0};

	ls_status__init(!s->o->quiet);
	lss_reader_init(s);
	srandom(s->t0 ^ getpid());
	L.last_flush = ls_mono_ns();
	L.flush_every = FLUSH_NS;
	if (s->o->duration > 0)
		L.deadline = s->t0 + (uint64_t)(s->o->duration * NSEC_PER_SEC);

	for (;;) {
		uint64_t now;

		if (poll_records(s))
			break;
		now = ls_mono_ns();
		lss_reap_child(s);
		lss_agg_settle(s);
		run_timers(s, &L, now);
		if (should_end(s, &L, now))
			break;
	}
}
