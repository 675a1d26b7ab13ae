/* SPDX-License-Identifier: MIT */
/*
 * The recording session's insides, shared by session.c (the run's phases), session_setup.c
 * (checks and environment before anything loads), session_loop.c (the poll loop, its timers and
 * stopping), session_read.c (the ring buffer, read in slices), session_signal.c (the stop
 * signals), session_flush.c (writing the profile while recording, --rotate), session_meta.c
 * (the run's description) and session_trace.c (-p --trace).
 * Not an API.
 */
#ifndef LS_SESSION_INT_H
#define LS_SESSION_INT_H

#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/types.h>
#include <time.h>
#include <bpf/libbpf.h>
#include "monoclock.h"
#include "loader.h"
#include "recorder.h"
#include "rotate.h"
#include "session.h"
#include "store.h"
#include "targets.h"

#define NSEC_PER_SEC  1000000000ULL
#define NSEC_PER_MSEC 1000000ULL
#define NSEC_PER_USEC 1000ULL

#define LSS_MAX_PROGS  64 /* BPF programs whose run counts --rotate keeps per interval */
#define LSS_MAX_NATIVE 64 /* -p --trace processes counted with CPython's own probes */

/* BPF run time summed over the programs, and stored per program when store is set. */
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
	char gpu_lib[PATH_MAX];	   /* --gpu: liblinescope_cupti.so */
	char load_dir[64];	   /* -p --trace, 3.14+: our own directory of loader scripts */
	pid_t native_pids[LSS_MAX_NATIVE]; /* -p --trace: processes counted with CPython's probes */
	int nnative;
	struct ls_loader *loader;
	struct ls_recorder *rec;
	struct ls_store *store;
	struct ring_buffer *rb;
	struct ls_cgroup cg;
	struct ls_launch launch;
	bool launched, child_reaped, cg_seen;
	int child_fd;	/* a pidfd of the launched command until it is reaped, else -1 */
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
	uint64_t prog_runs_base[LSS_MAX_PROGS], prog_ns_base[LSS_MAX_PROGS];
	/* the same, as the last flush stored them: the next interval's base */
	struct ls_stats bs_last;
	uint64_t cpu_last;
	/* the last flush's CPU, its reads of records apart: what flushing less often saves */
	uint64_t flush_cost_ns;
	uint64_t prog_runs_last[LSS_MAX_PROGS], prog_ns_last[LSS_MAX_PROGS];
	/* session_read.c: when the current read's slice ends (0: no record yet), and whether the
	 * last read ended with records left */
	uint64_t slice_end;
	bool read_behind;
	/* session_read.c: the reader's priority, raised while the ring buffer is behind */
	int base_nice;		   /* ours before any raise */
	uint64_t behind_bytes;	   /* LINESCOPE_FAULT_BEHIND_KB (tests): raised past this backlog */
	bool raised, cannot_raise; /* now; setpriority refused */
	uint64_t raised_since;	   /* CLOCK_MONOTONIC, while raised */
	uint64_t raises, raised_ns;	      /* how often and how long, closed raises only */
	uint64_t raises_base, raised_ns_base; /* --rotate: as they were when the interval began */
	uint64_t raises_last, raised_ns_last; /* ... and as the last flush stored them */
	unsigned fault_record_us; /* LINESCOPE_FAULT_RECORD_US (tests): a reader this slow */
	int store_err;		  /* create_store's result */
	bool undescribed;	  /* the start's metadata is not written yet */
};

/* The collector's own CPU time: every thread of ours, user and system. */
static inline uint64_t self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * NSEC_PER_SEC +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * NSEC_PER_USEC;
}

/* The calling thread's CPU time. */
static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* --spark-events matches actions without a call site on the timeline */
static inline bool want_timeline(const struct ls_opts *o)
{
	return o->timeline || o->nspark_events;
}

/* session_setup.c: 0, or -errno logged (the run then exits 1 at once) */
int lss_prepare(struct session *s, struct ls_loader_opts *lo);

/* session_signal.c */
void lss_catch_signals(void);
int lss_stop_signal(void); /* the first signal that stopped us, or 0 */
int lss_stop_count(void);  /* how many arrived: a second one kills the command */
bool lss_stop_from_user(void);

/* session_loop.c: consumes records until the targets are gone, -d passes or a signal stops us */
void lss_loop(struct session *s);
void lss_reap_child(struct session *s);
uint64_t lss_lost_count(struct session *s);

/*
 * session_read.c: the ring buffer read in slices. lss_on_record is its callback. lss_read waits
 * up to wait_ms for records and reads for one slice (read_behind: it left some). lss_read_to
 * reads every record that began before pos; lss_read_all, every one written so far. 0 or
 * -errno logged. lss_agg_settle adds the kernel's aggregates kept for want of their stacks'
 * descriptions, once the reader is past them.
 */
int lss_on_record(void *ctx, void *data, size_t len);
int lss_read(struct session *s, int wait_ms);
int lss_read_to(struct session *s, uint64_t pos);
int lss_read_all(struct session *s);
void lss_agg_settle(struct session *s);
/* The reader's raises so far, the one going on counted up to now. */
void lss_reader_raised(const struct session *s, uint64_t now, uint64_t *raises,
		       uint64_t *raised_ns);
/* Before the loop: the priority to come back to. After it: lowered again. */
void lss_reader_init(struct session *s);
void lss_reader_lower(struct session *s);

/* session_flush.c: all: the kernel's aggregates up to now too, however long the reading takes
 * (a stop, a --rotate cut); else those the reader is already past */
int lss_flush(struct session *s, uint64_t now, bool all);
void lss_rotate_now(struct session *s, uint64_t now);

/* session_meta.c */
void lss_write_meta(struct session *s, int argc, char **argv);
void lss_finish_meta(struct session *s, uint64_t end);

/* session_trace.c */
void lss_trace_running(struct session *s, pid_t pid);
void lss_trace_running_cb(void *ctx, pid_t pid, pid_t ppid);
void lss_remove_loaders(struct session *s);

#endif
