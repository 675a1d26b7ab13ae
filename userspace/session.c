// SPDX-License-Identifier: MIT
/*
 * The recording loop. Records are consumed as they arrive so that code objects are read while
 * their process is alive; the profile is flushed every second so that a killed profiler leaves
 * a readable file.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <bpf/libbpf.h>
#include "asuser.h"
#include "loader.h"
#include "log.h"
#include "outfile.h"
#include "procfs.h"
#include "python.h"
#include "remote_exec.h"
#include "recorder.h"
#include "render.h"
#include "rotate.h"
#include "session.h"
#include "status.h"
#include "store.h"
#include "targets.h"

#define FLUSH_NS  1000000000ULL
#define STATUS_NS 250000000ULL
#define TICK_NS	  20000000ULL
#define REAP_NS	  500000000ULL
#define JITTER_NS 100000000ULL
#define POLL_MS	  50 /* longest sleep on the ring buffer: frequent records do not wake us */

static volatile sig_atomic_t stop_signal;    /* the first signal that stopped us */
static volatile sig_atomic_t stop_count;     /* how many arrived: a second one kills the command */
static volatile sig_atomic_t stop_from_user; /* sent with kill(), not by the terminal */

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	if (!stop_signal) {
		stop_signal = sig;
		stop_from_user = si && (si->si_code == SI_USER || si->si_code == SI_QUEUE);
	}
	stop_count++;
}

#define GRACE_NS  3000000000ULL /* for a launched command to exit once asked */
#define KILLED_NS 1000000000ULL /* for its killed tree to be reaped */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

struct cost_sum {
	struct ls_store *store; /* NULL: only sum */
	uint64_t runs, ns;
	/* --rotate: subtracted per program (NULL: none), and the counts now kept in last */
	uint64_t *base_runs, *base_ns, *last_runs, *last_ns;
	unsigned nprogs;
};

struct session {
	const struct ls_opts *o;
	struct cost_sum cost;	   /* BPF run time as last stored in the profile */
	bool costed;		   /* ... and the kernel counted it */
	char trace_site[PATH_MAX]; /* --trace: python-usdt's site directory */
	char load_dir[64];	   /* -p --trace, 3.14+: our own directory of loader scripts */
	pid_t native_pids[64];	   /* -p --trace: processes counted with CPython's own probes */
	int nnative;
	struct ls_loader *loader;
	struct ls_recorder *rec;
	struct ls_store *store;
	struct ring_buffer *rb;
	struct ls_cgroup cg;
	struct ls_launch launch;
	bool launched, child_reaped, cg_seen;
	bool timed_out; /* -d ran out (a launched command was asked to stop) */
	int child_status;
	uint64_t t0;
	uint64_t attached_ns;  /* when threads already blocked began to count, after t0 (0: none) */
	uint64_t setup_cpu_ns; /* our CPU time before the recording: loading and verifying BPF */
	int uid, gid;
	int argc;
	char **argv;
	char path[PATH_MAX]; /* the profile being written: --profile, or its interval's */
	/* --rotate: the interval's start, and the counters as they were then */
	struct ls_rotate rot;
	uint64_t interval_start; /* CLOCK_MONOTONIC; t0 without --rotate */
	uint64_t next_rotate;	 /* when the interval is due to end */
	struct ls_stats bs_base;
	uint64_t cpu_base; /* our CPU time then */
	uint64_t prog_runs_base[64], prog_ns_base[64];
	/* the same, as the last flush stored them: the next interval's base */
	struct ls_stats bs_last;
	uint64_t cpu_last;
	uint64_t prog_runs_last[64], prog_ns_last[64];
};

/* --spark-events matches actions without a call site on the timeline */
static bool want_timeline(const struct ls_opts *o)
{
	return o->timeline || o->nspark_events;
}

/* The logs are read with the rights of the user who asked (under sudo), as our outputs are
 * written; in a directory, only logs written from the recording's start on (a little before:
 * the application may have started its log as we loaded). */
static int enable_spark(struct session *s)
{
	struct ls_creds c;
	bool as_user = s->uid > 0 && !ls_creds__of_user(s->uid, s->gid, &c);

	return ls_recorder__enable_spark(s->rec, s->o->spark_events, s->o->nspark_events,
					 (int64_t)time(NULL) - 10, as_user ? &c : NULL);
}

static int rec_set_proc(void *ctx, pid_t pid, const struct ls_proc *p)
{
	return ls_loader__set_proc(ctx, pid, p);
}

static int rec_set_image(void *ctx, const struct ls_image_key *k, const struct ls_image *img)
{
	return ls_loader__set_image(ctx, k, img);
}

static int rec_proc_gen(void *ctx, pid_t pid, uint32_t *gen)
{
	return ls_loader__proc_gen(ctx, pid, gen);
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
	.set_layout = rec_set_layout,
	.set_image = rec_set_image,
	.proc_gen = rec_proc_gen,
	.forget_stack = rec_forget_stack,
};

static void add_target_cb(void *ctx, pid_t pid, pid_t ppid)
{
	struct session *s = ctx;

	if (pid != getpid())
		ls_recorder__add_target(s->rec, pid, ppid);
}

static void count_python_cb(void *ctx, pid_t pid, pid_t ppid)
{
	struct ls_pyinfo *pi = malloc(sizeof(*pi));
	char why[256];

	if (pi && ls_python__discover(pid, pi, why, sizeof(why)) == 0)
		(*(int *)ctx)++;
	free(pi);
}

/* -p: each pid must exist, and it or a descendant must run a CPython we can walk. */
static int check_pids(const struct ls_opts *o)
{
	for (int i = 0; i < o->npids; i++) {
		int found = 0;
		struct ls_procstat st;
		struct ls_pyinfo *pi;
		char why[256];
		pid_t pid = o->pids[i];
		int err;

		if (pid == getpid())
			return ls_err(-EINVAL, "pid %d is linescope-bpf itself", pid);
		if (ls_procfs__stat(pid, &st) || st.state == 'Z')
			return ls_err(-ESRCH, "pid %d: no such process", pid);
		pi = malloc(sizeof(*pi));
		if (!pi)
			return -ENOMEM;
		err = ls_python__discover(pid, pi, why, sizeof(why));
		free(pi);
		if (err == 0 || err == -EAGAIN)
			continue;
		if (err == -ENOTSUP)
			return ls_err(err, "pid %d (%s): %s", pid, st.comm, why);
		if (err == -ESRCH)
			return ls_err(err, "pid %d: no such process", pid);
		/* not Python itself: fine when it runs Python children (a shell, a launcher) */
		if (!ls_targets__descendants(pid, count_python_cb, &found) || !found)
			return ls_err(-ENOENT, "pid %d (%s) is not a Python process: %s", pid,
				      st.comm, why);
	}
	return 0;
}

/* The wall clock, in ns since the epoch, when CLOCK_MONOTONIC read mono. */
static int64_t wall_at(uint64_t mono)
{
	struct timespec w;

	clock_gettime(CLOCK_REALTIME, &w);
	return (int64_t)w.tv_sec * 1000000000LL + w.tv_nsec - (int64_t)(mono_ns() - mono);
}

static void write_meta(struct session *s, int argc, char **argv)
{
	const struct ls_opts *o = s->o;
	char buf[4096] = "", host[256] = "";
	struct ls_procstat self;
	struct utsname u;
	time_t now = time(NULL);
	size_t n = 0;
	FILE *f;

	for (int i = 0; i < argc && n < sizeof(buf) - 2; i++)
		n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "", argv[i]);
	ls_store__put_meta(s->store, "tool", "linescope-bpf " LS_VERSION);
	/* a reader of the profile sees "Running" while this process (this pid, this start) lives */
	if (!ls_procfs__stat(getpid(), &self)) {
		ls_store__put_meta_int(s->store, "writer_pid", getpid());
		ls_store__put_meta_int(s->store, "writer_start", (int64_t)self.start_ticks);
	}
	ls_store__put_meta(s->store, "profiler_command", buf);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	ls_store__put_meta(s->store, "started_at", buf);
	ls_store__put_meta(s->store, "method",
			   !o->trace   ? "Sampling"
			   : o->sample ? "Mixed collection"
				       : "Tracing");
	ls_store__put_meta(s->store, "collector",
			   !o->trace   ? "bpf-sampling"
			   : o->sample ? "bpf-sampling+usdt-tracing"
				       : "usdt-tracing");
	ls_store__put_meta(s->store, "trace", o->trace ? "1" : "0");
	ls_store__put_meta(s->store, "mode", o->mode == LS_TIME_WALL ? "wall" : "cpu");
	ls_store__put_meta(s->store, "memory", o->memory ? "1" : "0");
	ls_store__put_meta(s->store, "gpu", o->gpu ? "1" : "0");
	ls_store__put_meta(s->store, "timeline", want_timeline(o) ? "1" : "0");
	ls_store__put_meta_int(s->store, "frequency_hz", o->frequency);
	ls_store__put_meta_int(s->store, "period_ns", ls_loader__period_ns(s->loader));
	ls_store__put_meta_int(s->store, "max_frames", LS_MAX_FRAMES);
	/* CLOCK_MONOTONIC at the start, the clock of every *_ns time in the profile */
	ls_store__put_meta_int(s->store, "clock_start_ns", (int64_t)s->t0);
	if (o->rotate) { /* times count from the run's start, this profile from its interval's */
		ls_store__put_meta_int(s->store, "rotate_s", o->rotate);
		ls_store__put_meta_int(s->store, "interval_start_ns",
				       (int64_t)(s->interval_start - s->t0));
	}
	/* and the wall clock then, which puts profiles of several hosts on one clock (merge) */
	ls_store__put_meta_int(s->store, "wall_start_ns", wall_at(s->t0));
	f = fopen("/proc/sys/kernel/random/boot_id", "re");
	if (f && fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = 0;
		ls_store__put_meta(s->store, "boot_id", buf);
	}
	if (f)
		fclose(f);
	if (o->command) {
		n = 0;
		buf[0] = 0;
		for (int i = 0; o->command[i] && n < sizeof(buf) - 2; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%s", i ? " " : "",
				      o->command[i]);
		ls_store__put_meta(s->store, "scope_kind", "command");
		ls_store__put_meta(s->store, "scope", buf);
	} else if (o->cgroup) {
		ls_store__put_meta(s->store, "scope_kind", "cgroup");
		ls_store__put_meta(s->store, "scope", s->cg.rel);
	} else {
		n = 0;
		for (int i = 0; i < o->npids && n < sizeof(buf) - 2; i++)
			n += snprintf(buf + n, sizeof(buf) - n, "%s%d", i ? "," : "", o->pids[i]);
		ls_store__put_meta(s->store, "scope_kind", "pid");
		ls_store__put_meta(s->store, "scope", buf);
	}
	gethostname(host, sizeof(host) - 1);
	ls_store__put_meta(s->store, "host", host);
	if (uname(&u) == 0)
		ls_store__put_meta(s->store, "kernel", u.release);
}

/* The collector's own CPU time: every thread of ours, user and system. */
static uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ULL +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

static void put_prog_cost(void *ctx, const char *prog, uint64_t runs, uint64_t run_ns)
{
	struct cost_sum *c = ctx;
	char key[96];

	/* the programs come in the object's order: the interval's share is past their base */
	if (c->base_runs && c->nprogs < 64) {
		uint64_t r0 = c->base_runs[c->nprogs], n0 = c->base_ns[c->nprogs];

		c->last_runs[c->nprogs] = runs;
		c->last_ns[c->nprogs] = run_ns;
		runs -= runs >= r0 ? r0 : runs;
		run_ns -= run_ns >= n0 ? n0 : run_ns;
	}
	c->nprogs++;
	c->runs += runs;
	c->ns += run_ns;
	if (!c->store)
		return;
	snprintf(key, sizeof(key), "bpf_runs:%s", prog);
	ls_store__put_stat(c->store, key, (int64_t)runs);
	snprintf(key, sizeof(key), "bpf_run_ns:%s", prog);
	ls_store__put_stat(c->store, key, (int64_t)run_ns);
}

/* The loader's counters since the interval began (all of them are counts). */
static void interval_stats(struct session *s, struct ls_stats *bs)
{
	__u64 *v = (__u64 *)bs;
	const __u64 *b = (const __u64 *)&s->bs_base;

	ls_loader__stats(s->loader, bs);
	s->bs_last = *bs;
	for (size_t i = 0; i < sizeof(*bs) / sizeof(*v); i++)
		v[i] -= v[i] >= b[i] ? b[i] : v[i];
}

static void write_progress(struct session *s, uint64_t now)
{
	struct cost_sum cost = {.store = s->store};
	struct ls_stats bs;
	struct ls_recorder_stats rs, base;

	if (s->o->rotate) {
		cost.base_runs = s->prog_runs_base;
		cost.base_ns = s->prog_ns_base;
		cost.last_runs = s->prog_runs_last;
		cost.last_ns = s->prog_ns_last;
	}
	interval_stats(s, &bs);
	ls_recorder__stats(s->rec, &rs);
	ls_recorder__interval_base(s->rec, &base);
	rs.read_fail -= base.read_fail;
	rs.truncated -= base.truncated;
	rs.agg_orphans -= base.agg_orphans;
	rs.timeline_lost -= base.timeline_lost;
	ls_store__put_meta_int(s->store, "elapsed_ns", now - s->interval_start);
	if (s->attached_ns)
		ls_store__put_meta_int(s->store, "attached_ns", s->attached_ns);
	ls_store__put_stat(s->store, "bpf_samples", bs.samples);
	ls_store__put_stat(s->store, "taken", bs.taken);
	ls_store__put_stat(s->store, "sample_drops", bs.sample_drops);
	ls_store__put_stat(s->store, "exec_events", bs.exec_events);
	ls_store__put_stat(s->store, "ringbuf_drops", bs.ringbuf_drops);
	ls_store__put_stat(s->store, "scratch_busy", bs.scratch_busy);
	ls_store__put_stat(s->store, "read_fail", rs.read_fail);
	ls_store__put_stat(s->store, "truncated_stacks", rs.truncated);
	ls_store__put_stat(s->store, "procs_full", bs.procs_full);
	ls_store__put_stat(s->store, "no_tstate", bs.no_tstate);
	ls_store__put_stat(s->store, "offcpu_intervals", bs.offcpu);
	ls_store__put_stat(s->store, "offcpu_short_skipped", bs.offcpu_dropped);
	ls_store__put_stat(s->store, "offcpu_pending_full", bs.pending_full);
	ls_store__put_stat(s->store, "offcpu_resume_late", bs.resume_late);
	ls_store__put_stat(s->store, "offcpu_task_works", bs.task_works);
	ls_store__put_stat(s->store, "offcpu_lost_at_exit", bs.lost_at_exit);
	ls_store__put_stat(s->store, "offcpu_open_at_start", bs.offcpu_opened);
	ls_store__put_stat(s->store, "offcpu_open_at_stop", bs.offcpu_closed);
	ls_store__put_stat(s->store, "agg_added", bs.agg_added);
	ls_store__put_stat(s->store, "agg_full", bs.agg_full);
	ls_store__put_stat(s->store, "agg_first", bs.agg_first);
	ls_store__put_stat(s->store, "agg_unset", bs.agg_unset);
	ls_store__put_stat(s->store, "agg_orphans", rs.agg_orphans);
	if (s->o->timeline) {
		ls_store__put_stat(s->store, "timeline_drops", bs.timeline_drops);
		ls_store__put_stat(s->store, "timeline_lost", rs.timeline_lost);
	}
	ls_store__put_stat(s->store, "collector_setup_cpu_ns", (int64_t)s->setup_cpu_ns);
	s->cpu_last = self_cpu_ns();
	ls_store__put_stat(s->store, "collector_cpu_ns", (int64_t)(s->cpu_last - s->cpu_base));
	s->costed = !ls_loader__cost(s->loader, put_prog_cost, &cost);
	s->cost = cost;
	ls_store__put_stat(s->store, "code_records", bs.code_records);
	ls_store__put_stat(s->store, "rss_events", bs.rss_events);
}

/* cut: the interval ends here (--rotate): each running thread's CPU time so far goes with it */
static int flush_cut(struct session *s, uint64_t now, bool cut)
{
	int err;

	/*
	 * The targets run and are sampled: only now may the profile replace the one at its path.
	 * At the first flush, not at the start: closing and reopening the database there would
	 * hold up the first records, and with them the discovery of the interpreters.
	 */
	err = ls_store__publish(s->store);
	if (err)
		return err;
	/*
	 * What the kernel added up since the last flush: retire its map, read the records that
	 * describe its stacks (all emitted before the swap returned), then add it.
	 */
	if (ls_loader__agg_on(s->loader) && !ls_loader__agg_swap(s->loader)) {
		ring_buffer__consume(s->rb);
		/* a failed read is logged there; what it left is read when retired again */
		ls_loader__agg_drain(s->loader, ls_recorder__add_agg, s->rec);
	}
	for (int i = 0; i < s->nnative; i++)
		ls_loader__native_drain(s->loader, s->native_pids[i], ls_recorder__native_count,
					s->rec);
	if (cut)
		ls_recorder__cut(s->rec);
	err = ls_recorder__flush(s->rec);

	if (err)
		return err;
	/* progress goes in its own small transaction after the data it describes */
	err = ls_store__begin(s->store);
	if (err)
		return err;
	write_progress(s, now);
	return ls_store__commit(s->store);
}

static int flush(struct session *s, uint64_t now)
{
	return flush_cut(s, now, false);
}

static uint64_t lost_count(struct session *s)
{
	struct ls_stats bs;
	struct ls_recorder_stats rs;

	ls_loader__stats(s->loader, &bs);
	ls_recorder__stats(s->rec, &rs);
	return bs.sample_drops + rs.unresolved_samples;
}

/* At the end of every run that lost anything: how much, of what, and where it went. */
static void warn_lost(struct session *s)
{
	struct ls_stats bs;
	struct ls_recorder_stats rs;
	uint64_t lost = lost_count(s), taken;

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
	if (bs.timeline_drops || rs.timeline_lost)
		ls_warn(0,
			"%llu samples are in the totals but not on the timeline (a full ring buffer, "
			"or no memory)",
			(unsigned long long)(bs.timeline_drops + rs.timeline_lost));
}

static void reap_child(struct session *s)
{
	int status;

	if (!s->launched || s->child_reaped)
		return;
	if (waitpid(s->launch.pid, &status, WNOHANG) == s->launch.pid) {
		s->child_reaped = true;
		s->child_status = status;
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

static int start_targets(struct session *s)
{
	const struct ls_opts *o = s->o;
	int err;

	if (o->command) {
		err = ls_recorder__add_target(s->rec, s->launch.pid, getpid());
		if (err)
			return ls_err(err, "cannot register the launched command");
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

/*
 * A file this tool ships: $env, else in the build tree beside the binary (.output/<built>), else
 * where `make install` puts it (PREFIX/lib/linescope-bpf/<installed>).
 */
static int find_asset(const char *env_name, const char *built, const char *installed,
		      const char *what, char *buf, size_t len)
{
	const char *env = getenv(env_name);
	char exe[PATH_MAX - 64], real[PATH_MAX], *slash;
	ssize_t n;

	if (env) {
		if (access(env, R_OK))
			return ls_err(-errno, "%s=%s: %s", env_name, env, strerror(errno));
		snprintf(buf, len, "%s", env);
		return 0;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return -errno;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(buf, len, "%s/.output/%s", exe, built);
	if (!access(buf, R_OK))
		return 0;
	snprintf(buf, len, "%s/../lib/linescope-bpf/%s", exe, installed);
	if (!access(buf, R_OK)) {
		if (realpath(buf, real))
			snprintf(buf, len, "%s", real);
		return 0;
	}
	return ls_err(-ENOENT, "%s not found beside %s; build it (make) or set %s", what, exe,
		      env_name);
}

static int find_gpu_lib(char *buf, size_t len)
{
	return find_asset("LINESCOPE_CUPTI_LIB", "gpu/liblinescope_cupti.so",
			  "liblinescope_cupti.so", "--gpu: liblinescope_cupti.so", buf, len);
}

static int find_trace_site(char *buf, size_t len)
{
	return find_asset("LINESCOPE_PYUSDT_SITE", "python-usdt/site", "python",
			  "--trace: the python-usdt site directory", buf, len);
}

/* Whether the site holds linescope_usdt for this CPython minor version (the loader imports it). */
static bool has_build(const struct session *s, uint32_t version_hex)
{
	char want[64];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(want, sizeof(want), "linescope_usdt.cpython-%u%u", version_hex >> 24,
		 (version_hex >> 16) & 0xff);
	dir = opendir(s->trace_site);
	while (dir && !found && (d = readdir(dir)))
		found = !strncmp(d->d_name, want, strlen(want)) &&
			(d->d_name[strlen(want)] == '-' || d->d_name[strlen(want)] == 't');
	if (dir)
		closedir(dir);
	return found;
}

static void remove_loaders(struct session *s)
{
	struct dirent *d;
	DIR *dir;

	if (!s->load_dir[0])
		return;
	dir = opendir(s->load_dir);
	while (dir && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			unlinkat(dirfd(dir), d->d_name, 0);
	if (dir)
		closedir(dir);
	rmdir(s->load_dir);
	s->load_dir[0] = 0;
}

/*
 * The script sys.remote_exec() has process pid run: in a directory of our own under /tmp (root's,
 * mode 711, so a target of any user can read a file whose name it is given and nobody can plant
 * one), never in a tree a user owns. Removed with the directory at the end of the session.
 */
static int write_loader(struct session *s, pid_t pid, char *path, size_t len)
{
	char src[8192];
	int fd, err;
	ssize_t n;

	err = ls_remote_exec__loader_source(s->trace_site, src, sizeof(src));
	if (err)
		return err;
	if (!s->load_dir[0]) {
		snprintf(s->load_dir, sizeof(s->load_dir), "/tmp/linescope-load-XXXXXX");
		if (!mkdtemp(s->load_dir)) {
			s->load_dir[0] = 0;
			return -errno;
		}
		if (chmod(s->load_dir, 0711)) {
			err = -errno;
			remove_loaders(s);
			return err;
		}
	}
	snprintf(path, len, "%s/load-%d.py", s->load_dir, pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, src, strlen(src));
	err = n == (ssize_t)strlen(src) ? 0 : n < 0 ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * -p --trace: a running process cannot be restarted with python-usdt on its path. 3.14+ loads it
 * through PEP 768 remote execution; a CPython with its own SDT probes (Debian's) is counted with
 * those; anything else is profiled by sampling, with a note saying why it has no hits.
 */
static void trace_running(struct session *s, pid_t pid)
{
	const struct ls_pyinfo *pi = ls_recorder__python(s->rec, pid);
	char note[256], path[PATH_MAX + 64];
	int err;

	if (!pi)
		return;
	if (pi->version_hex >= 0x030e0000 && !has_build(s, pi->version_hex)) {
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable: %.100s has no linescope_usdt build for "
			 "CPython %u.%u (make pyusdt PYUSDT_PYTHONS=...)",
			 s->trace_site, pi->version_hex >> 24, (pi->version_hex >> 16) & 0xff);
	} else if (pi->version_hex >= 0x030e0000) {
		char script[128];

		err = write_loader(s, pid, script, sizeof(script));
		if (!err)
			err = ls_remote_exec__send(pid, script);
		if (!err)
			return; /* its state message says whether it took */
		snprintf(
			note, sizeof(note),
			"exact line tracing unavailable: remote loading into CPython %s failed (%s)",
			pi->version, strerror(err < 0 ? -err : EIO));
	} else if (pi->usdt && s->nnative < (int)(sizeof(s->native_pids) / sizeof(pid_t))) {
		ls_procfs__resolve(pid, pi->path, path, sizeof(path));
		if (!ls_loader__attach_native_trace(s->loader, pid, path)) {
			s->native_pids[s->nnative++] = pid;
			ls_info("pid %d: exact line counts from CPython's own probes (slow)", pid);
			return;
		}
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable: cannot attach to "
			 "CPython's probes");
	} else {
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable for a running CPython %s without SDT "
			 "probes: start it under linescope-bpf --trace -- or import linescope_usdt",
			 pi->version);
	}
	ls_warn(0, "pid %d: %s; its samples still count", pid, note);
	ls_recorder__trace_note(s->rec, pid, note);
}

static void trace_running_cb(void *ctx, pid_t pid, pid_t ppid)
{
	trace_running(ctx, pid);
}

static void finish_meta(struct session *s, uint64_t end)
{
	const char *status = "Success";
	char detail[128] = "";

	if (s->launched) {
		if (!s->child_reaped) {
			status = "Failed";
			snprintf(detail, sizeof(detail),
				 "command still running when recording stopped");
		} else if (WIFEXITED(s->child_status) && WEXITSTATUS(s->child_status)) {
			status = "Failed";
			snprintf(detail, sizeof(detail), "exit status %d",
				 WEXITSTATUS(s->child_status));
		} else if (WIFSIGNALED(s->child_status)) {
			status = "Failed";
			snprintf(detail, sizeof(detail), "killed by signal %d (%s)",
				 WTERMSIG(s->child_status), strsignal(WTERMSIG(s->child_status)));
		}
		if (s->child_reaped)
			ls_store__put_meta_int(s->store, "command_status", s->child_status);
	}
	if (stop_signal)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
			 "%sstopped by %s", detail[0] ? "; " : "", strsignal(stop_signal));
	else if (s->timed_out)
		snprintf(detail + strlen(detail), sizeof(detail) - strlen(detail),
			 "%sstopped at -d %gs", detail[0] ? "; " : "", s->o->duration);
	ls_store__put_meta(s->store, "status", status);
	if (detail[0])
		ls_store__put_meta(s->store, "status_detail", detail);
	ls_store__put_meta_int(s->store, "elapsed_ns", end - s->interval_start);
	ls_store__put_meta(s->store, "finished", "1");
}

/*
 * --rotate: the interval's profile is finished and closed, and the next one begins. Its file is
 * made first: when it cannot be, the current one goes on (and the next interval tries again).
 */
static void rotate_now(struct session *s, uint64_t now)
{
	struct ls_store *next = NULL;
	char path[PATH_MAX];
	int err;

	s->next_rotate = now + s->o->rotate * 1000000000ULL;
	if (ls_rotate__path(&s->rot, path, sizeof(path)) ||
	    ls_store__create(path, s->uid, s->gid, &next)) {
		ls_warn(0, "--rotate: %s goes on into the next interval", s->path);
		return;
	}
	/*
	 * Everything up to now first, then the cut (the threads' CPU time, read now) in a second,
	 * small flush: a failure of either leaves the interval going on, nothing lost
	 */
	err = flush(s, now);
	if (!err)
		err = flush_cut(s, now, true);
	if (!err && !(err = ls_store__begin(s->store))) {
		ls_store__put_meta(s->store, "status", "Success");
		ls_store__put_meta(s->store, "status_detail", "an interval of a rotated recording");
		ls_store__put_meta_int(s->store, "elapsed_ns", now - s->interval_start);
		ls_store__put_meta(s->store, "finished", "1");
		err = ls_store__commit(s->store);
	}
	if (err) {
		ls_recorder__uncut(s->rec);
		ls_warn(0, "--rotate: %s could not be finished; it goes on into the next interval",
			s->path);
		ls_store__free(next); /* never published: nothing left behind */
		return;
	}
	ls_store__free(s->store);
	ls_rotate__closed(&s->rot, s->path);
	s->store = next;
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->interval_start = now;
	/*
	 * From what the last flush stored on, the counters count for the new profile: what the
	 * kernel counted after it, with its samples, is the new interval's.
	 */
	s->bs_base = s->bs_last;
	s->cpu_base = s->cpu_last;
	memcpy(s->prog_runs_base, s->prog_runs_last, sizeof(s->prog_runs_base));
	memcpy(s->prog_ns_base, s->prog_ns_last, sizeof(s->prog_ns_base));
	ls_recorder__rotate(s->rec, s->store);
	if (!ls_store__begin(s->store)) {
		write_meta(s, s->argc, s->argv);
		ls_store__commit(s->store);
	}
}

/* The command's status; else 128 + the signal that stopped us (SIGHUP 129, SIGINT 130). */
static int exit_status(const struct session *s)
{
	if (s->launched && s->child_reaped) {
		if (WIFEXITED(s->child_status))
			return WEXITSTATUS(s->child_status);
		if (WIFSIGNALED(s->child_status))
			return 128 + WTERMSIG(s->child_status);
		return 1;
	}
	return stop_signal ? 128 + stop_signal : 0;
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

static void cleanup(struct session *s)
{
	ring_buffer__free(s->rb);
	ls_recorder__free(s->rec);
	ls_loader__free(s->loader);
	ls_store__free(s->store);
	ls_cgroup__close(&s->cg);
	ls_rotate__reap(&s->rot, true);
	ls_rotate__release(&s->rot);
	remove_loaders(s);
	if (s->launched && s->launch.go_fd >= 0) {
		/* never started: let the child run into exec failure-free exit */
		kill(s->launch.pid, SIGKILL);
		close(s->launch.go_fd);
		waitpid(s->launch.pid, NULL, 0);
	}
}

int ls_session__run(const struct ls_opts *o, int argc, char **argv, struct ls_session_result *res)
{
	struct session s = {.o = o,
			    .cg = {.fd = -1},
			    .launch = {.go_fd = -1, .err_fd = -1},
			    .rot = {.dirfd = -1}};
	struct ls_loader_opts lo = {
		.frequency_hz = o->frequency,
		.cgroup_fd = -1,
		.self_pid = getpid(),
		.offcpu = o->mode == LS_TIME_WALL,
		.memory = o->memory,
		.timeline = want_timeline(o),
		/* LINESCOPE_NO_AGG=1: the ring-buffer path alone, the baseline of bench/scale */
		.no_agg = getenv("LINESCOPE_NO_AGG") && !strcmp(getenv("LINESCOPE_NO_AGG"), "1"),
	};
	struct sigaction sa = {.sa_sigaction = on_signal, .sa_flags = SA_SIGINFO};
	uint64_t last_flush, last_status = 0, last_tick = 0, last_reap = 0, last_jitter = 0;
	uint64_t next_try;
	uint64_t deadline = 0, grace_end = 0, kill_end = 0, now;
	bool stopping = false, killed = false;
	int signals_seen = 0;
	char gpu_lib[PATH_MAX];
	int err, rc = 1;

	*res = (struct ls_session_result){0};
	ls_outfile__owner(&s.uid, &s.gid);
	if (o->npids && check_pids(o))
		return 1;
	/* before anything runs: a job must not run for an hour and then have nowhere to go */
	if (ls_outfile__check(o->output, LS_OUT_ANY) ||
	    ls_outfile__check(o->profile, LS_OUT_REGULAR))
		return 1;
	if (o->trace) {
		char pp[PATH_MAX * 2];
		const char *old = getenv("PYTHONPATH");

		if (find_trace_site(s.trace_site, sizeof(s.trace_site)))
			return 1;
		lo.trace_site = s.trace_site;
		lo.no_sampling = !o->sample;
		lo.offcpu = lo.offcpu && o->sample;
		/* the launched command imports linescope_usdt through the site's sitecustomize */
		snprintf(pp, sizeof(pp), "%s%s%s", s.trace_site, old && *old ? ":" : "",
			 old ? old : "");
		if (o->command)
			setenv("PYTHONPATH", pp, 1);
	}
	if (o->gpu) {
		if (find_gpu_lib(gpu_lib, sizeof(gpu_lib)))
			return 1;
		lo.gpu_lib = gpu_lib;
		/* the launched command and its children load it: CUDA reads this at cuInit */
		if (o->command)
			setenv("CUDA_INJECTION64_PATH", gpu_lib, 1);
	}
	if (o->cgroup) {
		if (ls_cgroup__open(o->cgroup, &s.cg))
			return 1;
		lo.cgroup_fd = s.cg.fd;
		if (!strcmp(s.cg.rel, "/"))
			ls_info("-c %s is the root cgroup: every process of the machine, until -d or "
				"Ctrl-C",
				o->cgroup);
	}
	if (geteuid() != 0)
		ls_warn(0,
			"not running as root; loading BPF programs needs CAP_BPF and CAP_PERFMON");

	err = ls_loader__new(&lo, &s.loader);
	if (err)
		goto out;
	s.argc = argc;
	s.argv = argv;
	err = ls_rotate__init(&s.rot, o->profile, o->push, o->name, o->tenant, o->keep);
	if (err)
		goto out;
	if (o->rotate)
		err = ls_rotate__path(&s.rot, s.path, sizeof(s.path));
	else
		err = snprintf(s.path, sizeof(s.path), "%s", o->profile) >= (int)sizeof(s.path)
			      ? ls_err(-ENAMETOOLONG, "--profile %s: name too long", o->profile)
			      : 0;
	if (err || (err = ls_store__create(s.path, s.uid, s.gid, &s.store)))
		goto out;
	s.t0 = s.interval_start = mono_ns();
	s.next_rotate = s.t0 + o->rotate * 1000000000ULL;
	s.setup_cpu_ns = s.cpu_base = self_cpu_ns();
	err = ls_recorder__new(s.store, &rec_ops, s.loader, s.t0, &s.rec);
	if (err)
		goto out;
	if (o->gpu && (err = ls_recorder__enable_gpu(s.rec)))
		goto out;
	if (want_timeline(o))
		ls_recorder__enable_timeline(s.rec, ls_loader__period_ns(s.loader));
	if (o->nspark_events && (err = enable_spark(&s)))
		goto out;
	if (o->trace && (err = ls_recorder__enable_trace(s.rec)))
		goto out;
	err = ls_loader__ring(s.loader, ls_recorder__handle, s.rec, &s.rb);
	if (err)
		goto out;
	if (o->command) {
		/* forked before signals are caught: the child starts with default handlers */
		err = ls_launch__start(o->command, &s.launch);
		if (err)
			goto out;
		s.launched = true;
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);

	err = ls_store__begin(s.store);
	if (!err) {
		write_meta(&s, argc, argv);
		err = ls_store__commit(s.store);
	}
	if (err)
		goto out;
	err = start_targets(&s);
	if (err) {
		if (s.launched) {
			waitpid(s.launch.pid, &s.child_status, 0);
			s.child_reaped = true;
			rc = 127;
			s.launched = false;
		}
		goto out;
	}
	/*
	 * Only now that the targets run, and off this thread: the first aggregate map costs a
	 * grace period (up to tens of ms); their first samples go whole meanwhile.
	 */
	if (ls_loader__agg_on(s.loader))
		ls_loader__agg_start(s.loader); /* a failure is logged: samples then go whole */
	if (o->trace && o->npids)
		for (int i = 0; i < o->npids; i++) {
			trace_running(&s, o->pids[i]);
			ls_targets__descendants(o->pids[i], trace_running_cb, &s);
		}
	/* threads already blocked: their wait counts from now (a launched command has none) */
	now = mono_ns();
	if (!o->command && !ls_loader__open_blocked(s.loader)) {
		struct ls_stats bs;

		s.attached_ns = now - s.t0; /* every interval it opened starts after this */
		ls_loader__stats(s.loader, &bs);
		if (lo.offcpu)
			ls_info("%llu target threads off the CPU at the start: their wait counts "
				"from now",
				(unsigned long long)bs.offcpu_opened);
	}
	ls_status__init(!o->quiet);
	srandom(s.t0 ^ getpid());
	last_flush = mono_ns();
	if (o->duration > 0)
		deadline = s.t0 + (uint64_t)(o->duration * 1e9);

	for (;;) {
		int wait_ms = POLL_MS;

		now = mono_ns();
		next_try = ls_recorder__retry(s.rec, now);
		if (next_try <= now)
			wait_ms = 0;
		else if (next_try - now < POLL_MS * 1000000ULL)
			wait_ms = (int)((next_try - now + 999999) / 1000000);
		err = ring_buffer__poll(s.rb, wait_ms);
		/* frequent records do not wake us (maps.bpf.h): read what arrived since, too */
		if (err >= 0)
			err = ring_buffer__consume(s.rb);
		if (err < 0 && err != -EINTR) {
			ls_err(err, "reading the ring buffer: %s", strerror(-err));
			break;
		}
		now = mono_ns();
		reap_child(&s);
		if (now - last_jitter >= JITTER_NS) {
			ls_loader__jitter(s.loader);
			last_jitter = now;
		}
		if (now - last_tick >= TICK_NS) {
			ls_recorder__tick(s.rec);
			last_tick = now;
		}
		if (now - last_reap >= REAP_NS) {
			ls_recorder__reap(s.rec, now);
			last_reap = now;
		}
		if (o->rotate && !stopping && now >= s.next_rotate) {
			rotate_now(&s, now);
			last_flush = now;
		}
		if (o->rotate)
			ls_rotate__reap(&s.rot, false);
		if (now - last_flush >= FLUSH_NS) {
			if (flush(&s, now))
				ls_warn(0, "could not write the profile; will retry");
			last_flush = now;
		}
		if (now - last_status >= STATUS_NS) {
			struct ls_recorder_stats rs;

			ls_recorder__stats(s.rec, &rs);
			ls_status__update((now - s.t0) / 1e9, rs.live, rs.threads, rs.samples,
					  lost_count(&s));
			last_status = now;
		}
		if (stop_signal && !stopping) {
			stopping = true;
			signals_seen = stop_count;
			/* the terminal signals the whole process group; a kill() only reaches us */
			if (s.launched && !s.child_reaped &&
			    (stop_from_user || stop_signal != SIGINT))
				kill(s.launch.pid, stop_signal == SIGINT ? SIGINT : SIGTERM);
			grace_end = now + GRACE_NS;
		}
		if (deadline && now >= deadline && !stopping) {
			/* -d: a launched command is asked to stop, then made to */
			stopping = s.timed_out = true;
			if (s.launched && !s.child_reaped)
				kill(s.launch.pid, SIGTERM);
			grace_end = now + GRACE_NS;
		}
		if (stopping && (!s.launched || s.child_reaped))
			break;
		if (stopping && !killed && (now >= grace_end || stop_count > signals_seen)) {
			/* it ignored SIGINT/SIGTERM for 3 s, or a second Ctrl-C came */
			kill_command(&s);
			killed = true;
			kill_end = now + KILLED_NS;
		}
		if (killed && now >= kill_end)
			break;
		if (targets_gone(&s)) {
			/* drain what the last processes emitted */
			ring_buffer__consume(s.rb);
			break;
		}
	}
	/* threads still blocked: their wait ends now, on the line they block in */
	ls_loader__close_blocked(s.loader);
	/* no more samples: what the kernel took is now either in the ring buffer or dropped */
	ls_loader__stop_sampling(s.loader);
	ring_buffer__consume(s.rb);
	reap_child(&s);
	ls_recorder__finish(s.rec);
	ls_status__clear();
	now = mono_ns();
	err = flush(&s, now);
	if (!err) {
		err = ls_store__begin(s.store);
		if (!err) {
			finish_meta(&s, now);
			err = ls_store__commit(s.store);
		}
	}
	if (err)
		goto out;
	{
		struct ls_recorder_stats rs;
		/* the numbers the profile holds, so that -v and the report agree */
		const struct cost_sum cost = s.cost;
		double el = (now - s.t0) / 1e9;

		ls_recorder__stats(s.rec, &rs);
		ls_store__free(s.store);
		s.store = NULL;
		if (o->rotate) {
			/* the last interval is pushed and kept like the others */
			ls_rotate__closed(&s.rot, s.path);
			ls_rotate__reap(&s.rot, true);
			if (s.rot.push_failed)
				ls_warn(0, "--push: %u of %u interval profiles not delivered",
					s.rot.push_failed, s.rot.push_failed + s.rot.pushed);
			if (s.rot.removed)
				ls_info("--keep %u: %u older interval profiles removed", o->keep,
					s.rot.removed);
		}
		warn_lost(&s);
		/* detached before rendering: nothing of ours runs in the machine's tasks any more
		 */
		ls_loader__free(s.loader);
		s.loader = NULL;
		if (s.costed) {
			double cpu = (self_cpu_ns() - s.setup_cpu_ns) / 1e9;

			ls_info("cost: BPF %.3f s in %llu program runs (%.0f ns each); collector "
				"%.3f s CPU recording (%.2f%% of one core over %.1f s), %.3f s "
				"setting up",
				cost.ns / 1e9, (unsigned long long)cost.runs,
				cost.runs ? (double)cost.ns / cost.runs : 0.0, cpu,
				el > 0 ? cpu / el * 100 : 0.0, el, s.setup_cpu_ns / 1e9);
		}
		*res = (struct ls_session_result){
			.recorded = true,
			.command_failed = s.launched && s.child_reaped && exit_status(&s),
			.uid = s.uid,
			.gid = s.gid,
			.samples = rs.samples,
			.processes = rs.processes,
			.elapsed_s = el,
			.push_failed = o->rotate ? s.rot.push_failed : 0,
			.pushed = o->rotate,
		};
		snprintf(res->profile, sizeof(res->profile), "%s", s.path);
	}
	rc = exit_status(&s);
out:
	cleanup(&s);
	return rc;
}
