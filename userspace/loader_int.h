/* SPDX-License-Identifier: MIT */
/* The loader's state, shared by loader.c (set-up, maps) and loader_attach.c (attaching). */
#ifndef LS_LOADER_INT_H
#define LS_LOADER_INT_H

#include <pthread.h>
#include <semaphore.h>
#include <stdbool.h>
#include <stdint.h>

struct bpf_link;
struct ls_jitter;
struct ls_remote;
struct ls_keep;
struct linescope_bpf;

struct ls_loader {
	struct linescope_bpf *skel;
	struct linescope_bpf *skel2; /* the programs verified beside skel's (loader_split.c) */
	struct ls_keep *keep;	     /* or the kept load skel is bound to (loader_keep.c) */
	uint64_t key;		     /* the configuration's key in the kept loads */
	bool keepable;		     /* no USDT programs (they need libbpf's own attach) */
	bool unload;		     /* --unload: and no kept load left behind */
	bool may_keep;		     /* neither --unload nor LINESCOPE_KEEP=0 */
	bool offcpu;		     /* wall mode */
	bool loaded;		     /* loaded and attached: worth keeping */
	int *links;		     /* the sampler's link on each CPU (-1: none) */
	int *pfds;
	struct ls_jitter *jitter;  /* the threads that draw each CPU's period (loader_jitter.c) */
	bool remote;		   /* --sampler remote: no perf events, this thread instead: */
	struct ls_remote *sampler; /* loader_remote.c, stopped by ls_loader__stop_sampling */
	uint64_t remote_passes, remote_late_ns; /* its counts, once stopped */
	int *tp_links;				/* the tracepoint programs' links */
	int ntp;
	int iter_open, iter_close; /* the task iterators' links (-1 in cpu mode) */
	int iter_sample;	   /* the remote sampler's (-1 unless --sampler remote) */
	int *prog_fds; /* each program's descriptor by its index: kept, or of either share (-1) */
	uint64_t *base_runs, *base_ns; /* each program's counts at attach (a kept one has more) */
	int nprogs;
	int ncpus;
	uint64_t period_ns;
	bool rseq, task_work;	 /* wall mode: where intervals are reported (resume_paths) */
	const char *resume_path; /* their names, or NULL (cpu mode) */
	struct bpf_link *gpu_links[2];
	struct bpf_link **trace_links; /* python-usdt builds and native probes */
	size_t ntrace;
	int lib_fds[2 * LS_LIB_IMAGES]; /* shared builds' start probes: perf events and links */
	int nlib_fds;
	/* agg_maps[0] is set by a thread of its own (ls_loader__agg_start), joined before a swap */
	pthread_t agg_setter;
	enum {
		AGG_UNSET,   /* not begun: every sample goes whole (stats.agg_unset) */
		AGG_SETTING, /* agg_setter is at it */
		AGG_ON,	     /* set: the maps are swapped at each flush */
		AGG_FAILED,  /* it could not be set: every sample goes whole */
	} agg_state;
	int agg_set_err;   /* agg_setter's result */
	bool agg_b_active; /* agg_maps[0] is agg_b (else agg_a) */
	int agg_fd[2];	   /* agg_a and agg_b, created by agg_setter (-1 before) */
	int stats_fd;	   /* held: the kernel counts each program's run time (-1: it refused) */
	sem_t asked;	   /* ls_loader__new: the resume paths known (ask_kernel) */
	/* the ring buffer's two position pages, mapped read-only: how far it is read and written */
	const volatile uint64_t *rb_pos;
	size_t rb_page;
};

/* Each program's descriptor and run counts noted, then the tracepoint programs and task
 * iterators linked. */
int lsl_attach_programs(struct ls_loader *l);
/* A cpu-clock perf event per online CPU, with the sampler on it. */
int lsl_attach_sampling(struct ls_loader *l);
/* python-usdt's probes in every build of the site directory (--trace). */
int lsl_attach_trace(struct ls_loader *l, const char *site);
/* The GPU library's probes (--gpu). */
int lsl_attach_gpu(struct ls_loader *l, const char *lib);

#endif
