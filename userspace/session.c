// SPDX-License-Identifier: MIT
/*
 * One recording run in its phases: prepare, open the loader, profile and recorder, start the
 * targets, record (session_loop.c), then write the end and close the profile.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "asuser.h"
#include "launch_exe.h"
#include "log.h"
#include "outfile.h"
#include "session_int.h"
#include "status.h"

#define SPARK_LOG_SLACK_S  10  /* Spark logs started this long before the recording still count */
#define EXIT_SIGNALED_BASE 128 /* the shell's exit status for death by signal N: 128 + N */
#define EXIT_NOT_STARTED   127 /* the command could not be started, as the shell reports it */

/* The logs are read with the rights of the user who asked (under sudo), as our outputs are
 * written; in a directory, only logs written from the recording's start on (a little before:
 * the application may have started its log as we loaded). */
static int enable_spark(struct session *s)
{
	struct ls_creds c;
	bool as_user = s->uid > 0 && !ls_creds__of_user(s->uid, s->gid, &c);

	return ls_recorder__enable_spark(s->rec, s->o->spark_events, s->o->nspark_events,
					 (int64_t)time(NULL) - SPARK_LOG_SLACK_S,
					 as_user ? &c : NULL);
}

static int rec_set_proc(void *ctx, pid_t pid, const struct ls_proc *p)
{
	return ls_loader__set_proc(ctx, pid, p);
}

static int rec_set_pending(void *ctx, pid_t pid, uint32_t gen)
{
	return ls_loader__set_pending(ctx, pid, gen);
}

static int rec_set_image(void *ctx, const struct ls_image_key *k, const struct ls_image *img)
{
	return ls_loader__set_image(ctx, k, img);
}

static int rec_proc_gen(void *ctx, pid_t pid, uint32_t *gen)
{
	return ls_loader__proc_gen(ctx, pid, gen);
}

static int rec_set_lib(void *ctx, uint32_t slot, const char *path, uint64_t offset,
		       const struct ls_lib_image *lib)
{
	return ls_loader__set_lib(ctx, slot, path, offset, lib);
}

static int rec_exit_view(void *ctx, pid_t pid, struct ls_task_view *v)
{
	return ls_loader__exit_view(ctx, pid, v);
}

static int rec_set_layout(void *ctx, uint32_t id, const struct ls_pylayout *L)
{
	return ls_loader__set_layout(ctx, id, L);
}

static void rec_forget_stack(void *ctx, const struct ls_known_key *k)
{
	ls_loader__forget_stack(ctx, k);
}

static const struct ls_recorder_ops rec_ops = {
	.set_proc = rec_set_proc,
	.set_pending = rec_set_pending,
	.set_layout = rec_set_layout,
	.set_image = rec_set_image,
	.proc_gen = rec_proc_gen,
	.exit_view = rec_exit_view,
	.set_lib = rec_set_lib,
	.forget_stack = rec_forget_stack,
};

static void add_target_cb(void *ctx, pid_t pid, pid_t ppid)
{
	struct session *s = ctx;

	if (pid != getpid())
		ls_recorder__add_target(s->rec, pid, ppid);
}

/* At the end of every run that lost anything: how much, of what, and where it went. */
static void warn_lost(struct session *s)
{
	struct ls_stats bs;
	struct ls_recorder_stats rs;
	uint64_t lost = lss_lost_count(s), taken;

	ls_loader__stats(s->loader, &bs);
	ls_recorder__stats(s->rec, &rs);
	taken = bs.taken;
	if (lost)
		ls_warn(0,
			"lost %llu of %llu samples (%.1f%%): %llu to a full ring buffer, %llu of "
			"processes whose interpreter was not known yet",
			(unsigned long long)lost, (unsigned long long)taken,
			taken ? 100.0 * lost / taken : 100.0, (unsigned long long)bs.sample_drops,
			(unsigned long long)rs.unresolved_samples);
	if (bs.ringbuf_drops > bs.sample_drops || bs.scratch_busy)
		ls_warn(0, "lost %llu other records (off-CPU intervals, traces, GPU records)",
			(unsigned long long)(bs.ringbuf_drops - bs.sample_drops + bs.scratch_busy));
	if (bs.long_wait_drops)
		ls_warn(0,
			"%llu long waits lost their time to a full ring buffer: a child started by a "
			"library's thread may not be linked to the line that waited for it",
			(unsigned long long)bs.long_wait_drops);
	if (bs.timeline_drops || rs.timeline_lost)
		ls_warn(0,
			"%llu samples are in the totals but not on the timeline (a full ring buffer, "
			"or no memory)",
			(unsigned long long)(bs.timeline_drops + rs.timeline_lost));
}

static int start_targets(struct session *s)
{
	const struct ls_opts *o = s->o;
	int err;

	if (o->command) {
		char exe[LS_LAUNCH_EXES][PATH_MAX];
		int n;

		err = ls_recorder__add_target(s->rec, s->launch.pid, getpid());
		if (err)
			return ls_err(err, "cannot register the launched command");
		/* its interpreter known at its exec: none of its first samples goes unwalked */
		n = ls_launch_exes(o->command, exe);
		for (int i = 0; i < n; i++)
			ls_recorder__learn_exe(s->rec, exe[i]);
		err = ls_launch__go(&s->launch, o->command[0]);
		if (err)
			return err;
		return 0;
	}
	if (o->cgroup) {
		int n = ls_cgroup__procs(&s->cg, add_target_cb, s);

		if (n > 0)
			s->cg_seen = true;
		ls_info("cgroup %s: %d processes at start", s->cg.rel, n);
		return 0;
	}
	for (int i = 0; i < o->npids; i++) {
		err = ls_recorder__add_target(s->rec, o->pids[i], 0);
		if (err == -ESRCH)
			return ls_err(err, "pid %d: no such process", o->pids[i]);
		ls_targets__descendants(o->pids[i], add_target_cb, s);
	}
	return 0;
}

/* The command's status; else 128 + the signal that stopped us (SIGHUP 129, SIGINT 130). */
static int exit_status(const struct session *s)
{
	if (s->launched && s->child_reaped) {
		if (WIFEXITED(s->child_status))
			return WEXITSTATUS(s->child_status);
		if (WIFSIGNALED(s->child_status))
			return EXIT_SIGNALED_BASE + WTERMSIG(s->child_status);
		return 1;
	}
	return lss_stop_signal() ? EXIT_SIGNALED_BASE + lss_stop_signal() : 0;
}

static void cleanup(struct session *s)
{
	ring_buffer__free(s->rb);
	if (s->child_fd >= 0)
		close(s->child_fd);
	ls_recorder__free(s->rec);
	ls_loader__free(s->loader);
	ls_store__free(s->store);
	ls_cgroup__close(&s->cg);
	ls_rotate__reap(&s->rot, true);
	ls_rotate__release(&s->rot);
	lss_remove_loaders(s);
	if (s->launched && s->launch.go_fd >= 0) {
		/* never started: let the child run into exec failure-free exit */
		kill(s->launch.pid, SIGKILL);
		close(s->launch.go_fd);
		waitpid(s->launch.pid, NULL, 0);
	}
}

/* The profile, created while the loader sets BPF up (the other CPU is idle when its programs
 * are kept): its result in s->store_err */
static void *create_store(void *arg)
{
	struct session *s = arg;
	const struct ls_opts *o = s->o;
	int err;

	err = ls_rotate__init(&s->rot, o->profile, o->push, o->name, o->tenant, o->keep);
	if (!err && o->rotate)
		err = ls_rotate__path(&s->rot, s->path, sizeof(s->path));
	else if (!err)
		err = snprintf(s->path, sizeof(s->path), "%s", o->profile) >= (int)sizeof(s->path)
			      ? ls_err(-ENAMETOOLONG, "--profile %s: name too long", o->profile)
			      : 0;
	if (!err)
		err = ls_store__create(s->path, s->uid, s->gid, &s->store);
	s->store_err = err;
	return NULL;
}

/* The command forked, held; the loader, the profile and the recorder. */
static int open_recording(struct session *s, const struct ls_loader_opts *lo)
{
	const struct ls_opts *o = s->o;
	pthread_t store_thread;
	bool threaded;
	int err;

	if (o->command) {
		/* forked first, while this process is small (a fork and the exec that replaces it
		 * cost with its size); before signals are caught: it starts with default handlers */
		err = ls_launch__start(o->command, &s->launch);
		if (err)
			return err;
		s->launched = true;
		/* the loop wakes when it exits, not at its next poll (-1 when refused: it polls) */
		s->child_fd = (int)syscall(SYS_pidfd_open, s->launch.pid, 0);
	}
	threaded = !pthread_create(&store_thread, NULL, create_store, s);
	if (!threaded)
		create_store(s);
	err = ls_loader__new(lo, &s->loader);
	if (threaded)
		pthread_join(store_thread, NULL);
	if (err)
		return err;
	if (s->store_err)
		return s->store_err;
	s->t0 = s->interval_start = ls_mono_ns();
	s->next_rotate = s->t0 + o->rotate * NSEC_PER_SEC;
	s->setup_cpu_ns = s->cpu_base = self_cpu_ns();
	err = ls_recorder__new(s->store, &rec_ops, s->loader, s->t0, &s->rec);
	if (err)
		return err;
	if (o->gpu && (err = ls_recorder__enable_gpu(s->rec)))
		return err;
	if (want_timeline(o))
		ls_recorder__enable_timeline(s->rec, ls_loader__period_ns(s->loader));
	if (o->nspark_events && (err = enable_spark(s)))
		return err;
	if (o->trace && (err = ls_recorder__enable_trace(s->rec)))
		return err;
	lss_catch_signals();
	return 0;
}

/* The profile's start described: after the command was let go, which need not wait for it. */
static int describe_start(struct session *s)
{
	int err = ls_store__begin(s->store);

	if (!err) {
		lss_write_meta(s, s->argc, s->argv);
		err = ls_store__commit(s->store);
	}
	return err;
}

/* The targets run: what starts only now, before the loop. */
static void targets_started(struct session *s, const struct ls_loader_opts *lo)
{
	const struct ls_opts *o = s->o;
	uint64_t now;

	/*
	 * Only now that the targets run, and off this thread: the first aggregate map costs a
	 * grace period (up to tens of ms); their first samples go whole meanwhile.
	 */
	if (ls_loader__agg_on(s->loader))
		ls_loader__agg_start(s->loader); /* a failure is logged: samples then go whole */
	if (o->trace && o->npids)
		for (int i = 0; i < o->npids; i++) {
			lss_trace_running(s, o->pids[i]);
			ls_targets__descendants(o->pids[i], lss_trace_running_cb, s);
		}
	/* threads already blocked: their wait counts from now (a launched command has none) */
	now = ls_mono_ns();
	if (!o->command && !ls_loader__open_blocked(s->loader)) {
		struct ls_stats bs;

		s->attached_ns = now - s->t0; /* every interval it opened starts after this */
		ls_loader__stats(s->loader, &bs);
		if (lo->offcpu)
			ls_info("%llu target threads off the CPU at the start: their wait counts "
				"from now",
				(unsigned long long)bs.offcpu_opened);
	}
}

/* Sampling stops, the last records are read, and the profile's end is written at *end. */
static int stop_recording(struct session *s, uint64_t *end)
{
	int err;

	/* the remote sampler's passes would take the stop iterator's scratch buffers (a CPU's
	 * task-context buffer is one): they end first */
	if (s->o->remote_sampler)
		ls_loader__stop_sampling(s->loader);
	/* threads still blocked: their wait ends now, on the line they block in */
	ls_loader__close_blocked(s->loader);
	/* no more samples: what the kernel took is now either in the ring buffer or dropped */
	ls_loader__stop_sampling(s->loader);
	lss_read_all(s);
	lss_reap_child(s);
	ls_recorder__finish(s->rec);
	lss_reader_lower(s);
	ls_status__clear();
	*end = ls_mono_ns();
	err = s->undescribed ? describe_start(s) : 0;
	if (!err)
		err = lss_flush(s, *end, true);
	if (!err) {
		err = ls_store__begin(s->store);
		if (!err) {
			lss_finish_meta(s, *end);
			err = ls_store__commit(s->store);
		}
	}
	return err;
}

/* The profile is closed and BPF detached; what the recording leaves for the report. */
static void hand_over(struct session *s, uint64_t end, struct ls_session_result *res)
{
	const struct ls_opts *o = s->o;
	struct ls_recorder_stats rs;
	/* the numbers the profile holds, so that -v and the report agree */
	const struct cost_sum cost = s->cost;
	double el = (end - s->t0) / (double)NSEC_PER_SEC;

	ls_recorder__stats(s->rec, &rs);
	ls_store__free(s->store);
	s->store = NULL;
	if (o->rotate) {
		/* the last interval is pushed and kept like the others */
		ls_rotate__closed(&s->rot, s->path);
		ls_rotate__reap(&s->rot, true);
		if (s->rot.push_failed)
			ls_warn(0, "--push: %u of %u interval profiles not delivered",
				s->rot.push_failed, s->rot.push_failed + s->rot.pushed);
		if (s->rot.removed)
			ls_info("--keep %u: %u older interval profiles removed", o->keep,
				s->rot.removed);
	}
	warn_lost(s);
	/* detached before rendering: nothing of ours runs in the machine's tasks any more */
	ls_loader__free(s->loader);
	s->loader = NULL;
	if (s->costed) {
		double cpu = (self_cpu_ns() - s->setup_cpu_ns) / (double)NSEC_PER_SEC;

		ls_info("cost: BPF %.3f s in %llu program runs (%.0f ns each); collector "
			"%.3f s CPU recording (%.2f%% of one core over %.1f s), %.3f s "
			"setting up",
			cost.ns / (double)NSEC_PER_SEC, (unsigned long long)cost.runs,
			cost.runs ? (double)cost.ns / cost.runs : 0.0, cpu,
			el > 0 ? cpu / el * 100 : 0.0, el, s->setup_cpu_ns / (double)NSEC_PER_SEC);
	}
	if (s->raises)
		ls_info("the reader fell behind the ring buffer %llu time%s: its priority was raised "
			"for %.3f s",
			(unsigned long long)s->raises, s->raises == 1 ? "" : "s",
			s->raised_ns / (double)NSEC_PER_SEC);
	*res = (struct ls_session_result){
		.recorded = true,
		.command_failed = s->launched && s->child_reaped && exit_status(s),
		.uid = s->uid,
		.gid = s->gid,
		.samples = rs.samples,
		.processes = rs.processes,
		.elapsed_s = el,
		.push_failed = o->rotate ? s->rot.push_failed : 0,
		.pushed = o->rotate,
	};
	snprintf(res->profile, sizeof(res->profile), "%s", s->path);
}

int ls_session__run(const struct ls_opts *o, int argc, char **argv, struct ls_session_result *res)
{
	struct session s = {.o = o,
			    .cg = {.fd = -1},
			    .launch = {.go_fd = -1, .err_fd = -1},
			    .rot = {.dirfd = -1},
			    .child_fd = -1,
			    .argc = argc,
			    .argv = argv};
	struct ls_loader_opts lo = {
		.frequency_hz = o->frequency,
		.cgroup_fd = -1,
		.self_pid = getpid(),
		.offcpu = o->mode == LS_TIME_WALL,
		.memory = o->memory,
		.remote = o->remote_sampler,
		.timeline = want_timeline(o),
		.unload = o->unload,
		/* LINESCOPE_NO_AGG=1: the ring-buffer path alone, the baseline of bench/scale */
		.no_agg = getenv("LINESCOPE_NO_AGG") && !strcmp(getenv("LINESCOPE_NO_AGG"), "1"),
	};
	uint64_t end;
	int err, rc = 1;

	*res = (struct ls_session_result){0};
	if (getenv("LINESCOPE_FAULT_RECORD_US")) /* tests: a reader starved of CPU */
		s.fault_record_us =
			(unsigned)strtoul(getenv("LINESCOPE_FAULT_RECORD_US"), NULL, 10) % 1000000;
	if (getenv("LINESCOPE_FAULT_BEHIND_KB")) /* tests: raised at a backlog this small */
		s.behind_bytes =
			(strtoull(getenv("LINESCOPE_FAULT_BEHIND_KB"), NULL, 10) % (1ULL << 20))
			<< 10;
	ls_outfile__owner(&s.uid, &s.gid);
	if (lss_prepare(&s, &lo))
		return 1;
	err = open_recording(&s, &lo);
	if (err)
		goto out;
	err = start_targets(&s);
	if (err) {
		if (s.launched) {
			waitpid(s.launch.pid, &s.child_status, 0);
			s.child_reaped = true;
			rc = EXIT_NOT_STARTED;
			s.launched = false;
		}
		goto out;
	}
	/* the kernel keeps what BPF writes meanwhile: read only once the command was let go */
	err = ls_loader__ring(s.loader, lss_on_record, &s, &s.rb);
	if (err)
		goto out;
	/* the command runs: a write that fails now is tried again at the stop, as a flush is */
	s.undescribed = describe_start(&s) != 0;
	if (s.undescribed)
		ls_warn(0, "could not write the profile's start; will retry");
	targets_started(&s, &lo);
	lss_loop(&s);
	err = stop_recording(&s, &end);
	if (err)
		goto out;
	hand_over(&s, end, res);
	rc = exit_status(&s);
out:
	cleanup(&s);
	return rc;
}
