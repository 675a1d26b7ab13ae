// SPDX-License-Identifier: MIT
/*
 * The profile's description of its run (meta rows): what was recorded, how and where at the
 * start, and how it ended at the finish.
 */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "procfs.h"
#include "session_int.h"

/* The wall clock, in ns since the epoch, when CLOCK_MONOTONIC read mono. */
static int64_t wall_at(uint64_t mono)
{
	struct timespec w;

	clock_gettime(CLOCK_REALTIME, &w);
	return (int64_t)w.tv_sec * (int64_t)NSEC_PER_SEC + w.tv_nsec -
	       (int64_t)(ls_mono_ns() - mono);
}

void lss_write_meta(struct session *s, int argc, char **argv)
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
	/* --sampler remote: read by our thread, not from the targets' timer interrupts */
	ls_store__put_meta(s->store, "collector",
			   o->trace && !o->sample ? "usdt-tracing"
			   : o->remote_sampler	  ? (o->trace ? "bpf-remote-sampling+usdt-tracing"
							      : "bpf-remote-sampling")
			   : o->trace		  ? "bpf-sampling+usdt-tracing"
						  : "bpf-sampling");
	ls_store__put_meta(s->store, "trace", o->trace ? "1" : "0");
	ls_store__put_meta(s->store, "mode", o->mode == LS_TIME_WALL ? "wall" : "cpu");
	ls_store__put_meta(s->store, "memory", o->memory ? "1" : "0");
	ls_store__put_meta(s->store, "gpu", o->gpu ? "1" : "0");
	ls_store__put_meta(s->store, "timeline", want_timeline(o) ? "1" : "0");
	ls_store__put_meta_int(s->store, "frequency_hz", o->frequency);
	ls_store__put_meta_int(s->store, "period_ns", ls_loader__period_ns(s->loader));
	if (ls_loader__resume_path(s->loader))
		ls_store__put_meta(s->store, "offcpu_resume", ls_loader__resume_path(s->loader));
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

void lss_finish_meta(struct session *s, uint64_t end)
{
	const char *status = "Success";
	int stop_signal = lss_stop_signal();
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
