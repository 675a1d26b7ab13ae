// SPDX-License-Identifier: MIT
/*
 * Skeleton open -> rodata -> a kept load bound (loader_keep.c), or a load (loader_split.c) ->
 * attach (loader_attach.c); then the maps the recorder updates, the in-kernel aggregates' swap
 * and drain, the ring buffer and the programs' cost.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h" /* before the skeleton: it defines the .bss types */
#include "monoclock.h"
#include "gpu_records.h"
#include "linescope.skel.h"
#include "loader_int.h"
#include "loader_jitter.h"
#include "loader_remote.h"
#include "loader_keep.h"
#include "loader_split.h"
#include "log.h"
#include "taskwork_probe.h"

/*
 * Where wall mode reports an interval (offcpu.bpf.c): rseq_update, and a task work for threads
 * without rseq, where the kernel has both; rseq alone where it refuses task works from a
 * tracepoint (6.18.y stable: an interval of a thread without rseq is then reported late, at its
 * next switch, and one a fatal signal or the thread's exit ends, at its exit); else sys_exit.
 * LINESCOPE_OFFCPU_RESUME=sys-exit or task-work (no rseq) chooses, for the tests of each path and
 * bench/syscalls.
 */
static void resume_paths(struct ls_loader *l)
{
	const char *force = getenv("LINESCOPE_OFFCPU_RESUME");
	struct ls_keep_probe kp;
	const char *why = kp.why;
	int err;

	/* the kernel's answer, kept for the boot: asking loads a program (4-7 ms) */
	if (!l->may_keep || ls_keep__probe_get(&kp)) {
		kp.err = ls_taskwork_probe(&kp.rseq, &kp.task_work, kp.why, sizeof(kp.why));
		if (l->may_keep && !kp.err)
			ls_keep__probe_put(&kp);
	}
	err = kp.err;
	l->rseq = kp.rseq;
	l->task_work = kp.task_work;
	if (err)
		ls_warn(err,
			"cannot read the kernel's BTF (%s): off-CPU intervals are reported at "
			"sys_exit",
			strerror(-err));
	else if (!l->task_work && why[0])
		ls_info("the kernel refuses task works from a tracepoint (%s): off-CPU intervals of "
			"threads without rseq are reported at their next switch or their exit",
			why);
	if (force && !strcmp(force, "sys-exit"))
		l->rseq = l->task_work = false;
	else if (force && !strcmp(force, "task-work"))
		l->rseq = false;
	if (!l->rseq && !l->task_work)
		l->resume_path = "sys_exit";
	else
		l->resume_path = !l->task_work ? "rseq"
				 : l->rseq     ? "rseq, task works"
					       : "task works";
}

/* What the kernel is asked before a load: where intervals are reported (posted on l->asked,
 * which configure() waits for), and the programs' run times counted, which patches the kernel's
 * text (11 ms of CPU here): the load goes on meanwhile, and the attach waits for it. */
static void *ask_kernel(void *arg)
{
	struct ls_loader *l = arg;

	if (l->offcpu)
		resume_paths(l);
	sem_post(&l->asked);
	/* our own cost, per program: held for the recording (two clock reads per program run) */
	l->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	return NULL;
}

const char *ls_loader__resume_path(const struct ls_loader *l)
{
	return l->resume_path;
}

/* The collections' settings, programs and map sizes, written on a freshly opened skeleton. */
static void configure(struct ls_loader *l, const struct ls_loader_opts *opts)
{
	const char *unseen = getenv("LINESCOPE_FAULT_UNSEEN_IN");

	l->skel->bss->self_tgid = opts->self_pid;
	l->skel->rodata->filter_cgroup = opts->cgroup_fd >= 0;
	l->skel->rodata->offcpu_enabled = opts->offcpu;
	l->skel->rodata->offcpu_period_ns = l->period_ns;
	l->skel->rodata->agg_enabled = !opts->no_agg;
	/* the aggregate maps: a load that is kept makes them and keeps them with it, so that the
	 * runs that bind it do not (their 4 MB bucket arrays cost 10 ms of a command's start
	 * here); else they come once the targets run (create_agg_maps) */
	bpf_map__set_autocreate(l->skel->maps.agg_a, l->keepable);
	bpf_map__set_autocreate(l->skel->maps.agg_b, l->keepable);
	l->skel->rodata->timeline_enabled = opts->timeline;
	/* shorter waits are sampled at the period's weight: their length is not known */
	l->skel->rodata->timeline_min_wait_ns = l->period_ns;
	if (opts->offcpu)
		l->skel->rodata->long_wait_ns = LS_LONG_WAIT_NS;
	l->skel->rodata->mem_enabled = opts->memory;
	if (opts->mem_threshold)
		l->skel->rodata->mem_threshold = opts->mem_threshold;
	/* maps of collections that are off are not worth their memory and creation time */
	if (!opts->offcpu)
		bpf_map__set_max_entries(l->skel->maps.offcpu_pending, 1);
	if (!opts->memory)
		bpf_map__set_max_entries(l->skel->maps.rss_last, 1);
	if (!opts->trace_site) {
		bpf_map__set_max_entries(l->skel->maps.native_threads, 1);
		bpf_map__set_max_entries(l->skel->maps.native_lines, 1);
		bpf_map__set_max_entries(l->skel->maps.native_strs, 1);
	}
	l->skel->rodata->offcpu_rseq = l->rseq;
	l->skel->rodata->offcpu_task_work = l->task_work;
	l->skel->rodata->offcpu_exit_report = l->rseq && !l->task_work;
	l->skel->rodata->offcpu_sample_report = opts->offcpu && !l->rseq && !l->task_work;
	if (unseen) /* tests: switches in no tracepoint shows */
		l->skel->rodata->fault_unseen_in = (__u32)strtoul(unseen, NULL, 10) % 1000;
	if (!l->task_work)
		bpf_map__set_max_entries(l->skel->maps.offcpu_resume, 1);
	/* programs for collections that are off are not even attached */
	bpf_program__set_autoload(l->skel->progs.handle_switch, opts->offcpu);
	bpf_program__set_autoload(l->skel->progs.handle_rseq, l->rseq);
	bpf_program__set_autoload(l->skel->progs.handle_sys_exit,
				  opts->offcpu && !l->rseq && !l->task_work);
	bpf_program__set_autoload(l->skel->progs.open_blocked, opts->offcpu);
	bpf_program__set_autoload(l->skel->progs.close_blocked, opts->offcpu);
	bpf_program__set_autoload(l->skel->progs.handle_rss, opts->memory);
	bpf_program__set_autoload(l->skel->progs.handle_sample, !l->remote);
	bpf_program__set_autoload(l->skel->progs.sample_remote, l->remote);
	bpf_program__set_autoload(l->skel->progs.remote_switch, l->remote);
	bpf_program__set_autoload(l->skel->progs.handle_gpu_api, opts->gpu_lib != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_gpu_record, opts->gpu_lib != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_gpu_waking, opts->gpu_lib != NULL);
	if (!opts->gpu_lib)
		bpf_map__set_max_entries(l->skel->maps.gpu_wakers, 1);
	bpf_program__set_autoload(l->skel->progs.handle_pyusdt_state, opts->trace_site != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_pyusdt_code, opts->trace_site != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_pyusdt_batch, opts->trace_site != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_py_line, opts->trace_site != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_py_entry, opts->trace_site != NULL);
	bpf_program__set_autoload(l->skel->progs.handle_py_return, opts->trace_site != NULL);
}

static int open_configured(struct ls_loader *l, const struct ls_loader_opts *opts)
{
	l->skel = linescope_bpf__open();
	if (!l->skel)
		return ls_err(-errno, "cannot open the BPF programs: %s", strerror(errno));
	configure(l, opts);
	return 0;
}

static int create_agg_maps(struct ls_loader *l);

/*
 * A kept load's aggregate slot, left as it was on one of the kept aggregate maps (emptied at
 * bind, loader_keep.c): taken as set, which saves the grace period that setting it costs. The
 * first samples are then added up too.
 */
static void agg_kept(struct ls_loader *l)
{
	const struct bpf_map *m[2] = {l->skel->maps.agg_a, l->skel->maps.agg_b};
	struct bpf_map_info info[2] = {};
	__u32 zero = 0, id, len;

	if (!l->skel->rodata->agg_enabled ||
	    bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.agg_maps), &zero, &id))
		return; /* not set: the first samples go whole until it is (ls_loader__agg_start) */
	for (int i = 0; i < 2; i++) {
		len = sizeof(info[i]);
		if (bpf_obj_get_info_by_fd(bpf_map__fd(m[i]), &info[i], &len))
			return;
	}
	if (id != info[0].id && id != info[1].id)
		return; /* loader_keep.c clears any other */
	if (create_agg_maps(l))
		return; /* made again by ls_loader__agg_start */
	l->agg_b_active = id == info[1].id;
	l->agg_state = AGG_ON;
}

/*
 * The kept load of this configuration where there is one nobody uses (loader_keep.c); else a
 * load, kept at the end of the run. --unload (or LINESCOPE_KEEP=0, which leaves what is kept
 * alone) neither uses nor keeps one. A kept load that cannot be reset is left for this run's
 * load to replace.
 */
static int load(struct ls_loader *l, const struct ls_loader_opts *opts, const char **how)
{
	int err;

	*how = "load";
	if (l->keepable) {
		l->key = ls_keep__key(l->skel);
		err = ls_keep__bind(l->skel, l->key, &l->keep);
		if (!err) {
			*how = "kept programs";
			agg_kept(l);
			return 0;
		}
		if (err != -ENOENT) {
			ls_warn(err, "cannot reset the kept BPF programs (%s): loading them",
				strerror(-err));
			linescope_bpf__destroy(l->skel);
			err = open_configured(l, opts);
			if (err)
				return err;
		}
	}
	return ls_loader_split__load(l->skel, opts->offcpu, &l->skel2);
}

/* The skeleton configured, loaded (or bound to a kept load) and filtered; t[1], t[2] stamped. */
static int load_configured(struct ls_loader *l, const struct ls_loader_opts *opts, uint64_t *t,
			   const char **how)
{
	int err;

	configure(l, opts);
	t[1] = ls_mono_ns();
	err = load(l, opts, how);
	t[2] = ls_mono_ns();
	if (err)
		return ls_err(err, "cannot load the BPF programs: %s%s", strerror(-err),
			      geteuid() != 0 ? "; run as root (CAP_BPF, CAP_PERFMON)"
					     : "; the kernel refused them (see -vv for the log)");
	if (opts->cgroup_fd >= 0) {
		__u32 zero = 0;

		if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.cgroup_filter), &zero,
					&opts->cgroup_fd, BPF_ANY)) {
			err = -errno;
			return ls_err(err, "cannot set the cgroup filter: %s", strerror(-err));
		}
	}
	return 0;
}

static int attach(struct ls_loader *l, const struct ls_loader_opts *opts)
{
	int err = lsl_attach_programs(l);

	if (err)
		return ls_err(err, "cannot attach the BPF tracepoints: %s", strerror(-err));
	err = opts->no_sampling ? 0 : lsl_attach_sampling(l);
	if (!err && opts->trace_site)
		err = lsl_attach_trace(l, opts->trace_site);
	if (!err && opts->gpu_lib)
		err = lsl_attach_gpu(l, opts->gpu_lib);
	if (!err)
		l->loaded = true;
	return err;
}

int ls_loader__new(const struct ls_loader_opts *opts, struct ls_loader **out)
{
	uint64_t t[4] = {ls_mono_ns()}; /* begun, opened and probed, loaded, attached */
	struct ls_loader *l;
	const char *how = "load", *env;
	pthread_t asker;
	bool asked;
	int err;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->stats_fd = l->agg_fd[0] = l->agg_fd[1] = l->iter_open = l->iter_close = l->iter_sample =
		-1;
	l->period_ns = 1000000000ULL / (opts->frequency_hz ? opts->frequency_hz : 999);
	libbpf_set_print(ls_libbpf_print);
	l->offcpu = opts->offcpu;
	l->remote = opts->remote && !opts->no_sampling;
	env = getenv("LINESCOPE_KEEP");
	l->may_keep = !opts->unload && !(env && !strcmp(env, "0"));
	l->unload = opts->unload;
	l->keepable = l->may_keep && !opts->gpu_lib && !opts->trace_site;
	/* where a blocked thread's interval is reported (not at every syscall where avoidable), and
	 * the run times counted: asked on a thread while the skeleton opens */
	sem_init(&l->asked, 0, 0);
	asked = !pthread_create(&asker, NULL, ask_kernel, l);
	if (!asked)
		ask_kernel(l);
	l->skel = linescope_bpf__open();
	err = l->skel ? 0 : -errno;
	if (err)
		ls_err(err, "cannot open the BPF programs: %s", strerror(-err));
	while (asked && sem_wait(&l->asked) && errno == EINTR)
		;
	if (!err)
		err = load_configured(l, opts, t, &how);
	if (asked)
		pthread_join(asker, NULL); /* run times counted from the programs' first runs */
	sem_destroy(&l->asked);
	if (!err)
		err = attach(l, opts);
	if (err) {
		ls_loader__free(l);
		return err;
	}
	t[3] = ls_mono_ns();
	/* start-up's largest part (bench/startup): the kernel's BTF parsed and every program verified,
	 * unless a kept load was bound */
	ls_info("BPF set-up %.1f ms: open and probe %.1f ms, %s %.1f ms, attach %.1f ms",
		(double)(t[3] - t[0]) / 1e6, (double)(t[1] - t[0]) / 1e6, how,
		(double)(t[2] - t[1]) / 1e6, (double)(t[3] - t[2]) / 1e6);
	*out = l;
	return 0;
}

static void close_fds(int *fd, int n)
{
	for (int i = 0; fd && i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(fd);
}

void ls_loader__free(struct ls_loader *l)
{
	int err;

	if (!l)
		return;
	if (l->agg_state == AGG_SETTING)
		pthread_join(l->agg_setter, NULL);
	close_fds(l->links, l->ncpus);
	ls_jitter__stop(l->jitter); /* before the events it changes close */
	close_fds(l->pfds, l->ncpus);
	close_fds(l->tp_links, l->ntp);
	if (l->iter_open >= 0)
		close(l->iter_open);
	if (l->iter_close >= 0)
		close(l->iter_close);
	ls_remote__stop(l->sampler); /* before its iterator's link closes */
	if (l->iter_sample >= 0)
		close(l->iter_sample);
	bpf_link__destroy(l->gpu_links[0]);
	bpf_link__destroy(l->gpu_links[1]);
	for (size_t i = 0; i < l->ntrace; i++)
		bpf_link__destroy(l->trace_links[i]);
	for (int i = 0; i < l->nlib_fds; i++)
		close(l->lib_fds[i]);
	free(l->trace_links);
	free(l->prog_fds);
	free(l->base_runs);
	free(l->base_ns);
	/* detached: this load is kept for the next run of the same configuration */
	if (l->loaded && l->keepable && !l->keep) {
		err = ls_keep__store(l->skel, l->skel2, l->key);
		if (err)
			ls_info("the BPF programs are not kept for the next run: %s",
				strerror(-err));
		else
			ls_info("the BPF programs are kept verified for the next run in "
				"/sys/fs/bpf/linescope (--unload not to)");
	}
	if (l->unload)
		ls_keep__drop_all();
	ls_keep__free(l->keep);
	linescope_bpf__destroy(l->skel2);
	linescope_bpf__destroy(l->skel);
	for (int i = 0; i < 2; i++)
		if (l->agg_fd[i] >= 0)
			close(l->agg_fd[i]);
	if (l->stats_fd >= 0)
		close(l->stats_fd);
	if (l->rb_pos)
		munmap((void *)l->rb_pos, 2 * l->rb_page);
	free(l);
}

int ls_loader__cost(const struct ls_loader *l,
		    void (*cb)(void *ctx, const char *prog, uint64_t runs, uint64_t run_ns),
		    void *ctx)
{
	struct bpf_program *prog;
	int i = 0;

	if (l->stats_fd < 0)
		return -ENOTSUP;
	bpf_object__for_each_program(prog, l->skel->obj)
	{
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = i < l->nprogs ? l->prog_fds[i] : -1;

		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len))
			cb(ctx, bpf_program__name(prog), info.run_cnt - l->base_runs[i],
			   info.run_time_ns - l->base_ns[i]);
		i++; /* else not loaded: its collection is off */
	}
	return 0;
}

/* After a change to `procs`: the remote sampler reads its keys again (loader_remote.c). */
static void procs_changed(struct ls_loader *l)
{
	__atomic_fetch_add(&l->skel->bss->procs_changes, 1, __ATOMIC_RELEASE);
}

int ls_loader__set_proc(struct ls_loader *l, pid_t pid, const struct ls_proc *p)
{
	struct ls_proc cur;
	__u32 key = pid;
	int err;

	if (!p) {
		bpf_map_delete_elem(bpf_map__fd(l->skel->maps.procs), &key);
		procs_changed(l);
		return 0;
	}
	/*
	 * Refused when the kernel's entry is of a newer exec than ours. A lookup then an update:
	 * an exec in between has its entry replaced by ours, its generation rolled back, and the
	 * next push (its exec record's) is let through, since ours is then the newer.
	 */
	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.procs), &key, &cur) == 0 &&
	    ls_gen_newer(cur.gen, p->gen))
		return -ESTALE;
	err = bpf_map_update_elem(bpf_map__fd(l->skel->maps.procs), &key, p, BPF_ANY);
	if (err)
		return ls_err(-errno, "cannot add pid %d to the target set: %s", pid,
			      strerror(errno));
	procs_changed(l);
	return 0;
}

int ls_loader__set_pending(struct ls_loader *l, pid_t pid, uint32_t gen)
{
	struct ls_proc cur, p = {.flags = LS_PF_PENDING, .gen = gen};
	__u32 key = pid;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.procs), &key, &cur) == 0 &&
	    cur.gen == gen && (cur.flags & LS_PF_PYTHON))
		return -EEXIST;
	return ls_loader__set_proc(l, pid, &p);
}

int ls_loader__set_layout(struct ls_loader *l, uint32_t id, const struct ls_pylayout *L)
{
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.pylayouts), &id, L, BPF_ANY))
		return ls_err(-errno, "cannot install interpreter layout %u: %s", id,
			      strerror(errno));
	return 0;
}

int ls_loader__proc_gen(struct ls_loader *l, pid_t pid, uint32_t *gen)
{
	struct ls_proc cur;
	__u32 key = pid;

	if (bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.procs), &key, &cur))
		return -ENOENT;
	*gen = cur.gen;
	return 0;
}

int ls_loader__exit_view(struct ls_loader *l, pid_t pid, struct ls_task_view *v)
{
	__u32 key = pid;

	return bpf_map_lookup_elem(bpf_map__fd(l->skel->maps.exit_views), &key, v) ? -ENOENT : 0;
}

int ls_loader__set_image(struct ls_loader *l, const struct ls_image_key *k,
			 const struct ls_image *img)
{
	if (!img) {
		bpf_map_delete_elem(bpf_map__fd(l->skel->maps.images), k);
		return 0;
	}
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.images), k, img, BPF_ANY))
		return ls_err(-errno, "cannot record an interpreter image: %s", strerror(errno));
	return 0;
}

bool ls_loader__agg_on(const struct ls_loader *l)
{
	return l->skel->rodata->agg_enabled;
}

/*
 * agg_a and agg_b: those of a kept load (made once, by the load that was kept, and emptied as its
 * other maps are when a run binds it); else created here, not by the skeleton's load: each costs
 * a 4 MB bucket array (3-6 ms), which held up the targets' start. The programs reach them only
 * through agg_maps, whose inner-map template is small (agg.bpf.h).
 */
static int create_agg_maps(struct ls_loader *l)
{
	const struct bpf_map *def = l->skel->maps.agg_a;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(def));
	int err = 0;

	if (bpf_map__fd(def) >= 0) {
		/* made by the load, or kept and emptied when bound (loader_keep.c) */
		l->agg_fd[0] = fcntl(bpf_map__fd(def), F_DUPFD_CLOEXEC, 0);
		l->agg_fd[1] = fcntl(bpf_map__fd(l->skel->maps.agg_b), F_DUPFD_CLOEXEC, 0);
		err = l->agg_fd[0] < 0 || l->agg_fd[1] < 0 ? -errno : 0;
	} else {
		for (int i = 0; i < 2 && !err; i++) {
			l->agg_fd[i] = bpf_map_create(
				bpf_map__type(def), i ? "agg_b" : "agg_a", bpf_map__key_size(def),
				bpf_map__value_size(def), bpf_map__max_entries(def), &opts);
			if (l->agg_fd[i] < 0)
				err = -errno;
		}
	}
	/* both or neither: a caller may try again without leaking one */
	for (int i = 0; err && i < 2; i++) {
		if (l->agg_fd[i] >= 0)
			close(l->agg_fd[i]);
		l->agg_fd[i] = -1;
	}
	return err;
}

/* the kernel waits for a grace period on this update: off the thread that reads the records */
static void *set_first_map(void *arg)
{
	struct ls_loader *l = arg;
	__u32 zero = 0;

	l->agg_set_err = create_agg_maps(l);
	if (!l->agg_set_err &&
	    bpf_map_update_elem(bpf_map__fd(l->skel->maps.agg_maps), &zero, &l->agg_fd[0], BPF_ANY))
		l->agg_set_err = -errno;
	return NULL;
}

int ls_loader__agg_start(struct ls_loader *l)
{
	int err;

	if (l->agg_state != AGG_UNSET)
		return 0;
	err = -pthread_create(&l->agg_setter, NULL, set_first_map, l);
	if (err)
		return ls_err(err, "cannot set up the in-kernel aggregates: %s", strerror(-err));
	l->agg_state = AGG_SETTING;
	return 0;
}

/* The first map is set, once its thread is done: 0, or -EAGAIN while it is not. */
static int agg_started(struct ls_loader *l)
{
	if (l->agg_state == AGG_SETTING) {
		pthread_join(l->agg_setter, NULL);
		l->agg_state = l->agg_set_err ? AGG_FAILED : AGG_ON;
		if (l->agg_set_err)
			ls_warn(0,
				"cannot set up the in-kernel aggregates (%s): every sample goes "
				"whole through the ring buffer",
				strerror(-l->agg_set_err));
	}
	return l->agg_state == AGG_ON ? 0 : -EAGAIN;
}

int ls_loader__agg_swap(struct ls_loader *l)
{
	__u32 zero = 0;
	int fd;

	if (agg_started(l)) {
		ls_loader__agg_start(l); /* not begun yet (nothing is retired) */
		return -EAGAIN;
	}
	/* read only now: the thread that set the first map made both (a run that ends at once) */
	fd = l->agg_fd[!l->agg_b_active];
	/* the kernel waits here for every program that may still hold the old map */
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.agg_maps), &zero, &fd, BPF_ANY))
		return ls_err(-errno, "cannot swap the in-kernel aggregates: %s", strerror(errno));
	l->agg_b_active = !l->agg_b_active;
	return 0;
}

#define DRAIN_BATCH 4096

int ls_loader__agg_drain(struct ls_loader *l,
			 void (*cb)(void *ctx, const struct ls_agg_key *k,
				    const struct ls_agg_val *v),
			 void *ctx)
{
	int fd = l->agg_fd[!l->agg_b_active];
	static struct ls_agg_key keys[DRAIN_BATCH];
	static struct ls_agg_val vals[DRAIN_BATCH];
	LIBBPF_OPTS(bpf_map_batch_opts, opts);
	__u64 in = 0, out = 0;
	bool first = true;
	int n = 0;

	for (;;) {
		__u32 count = DRAIN_BATCH;
		int err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, keys, vals,
							  &count, &opts);

		if (err && errno != ENOENT)
			return ls_err(-errno, "cannot read the in-kernel aggregates: %s",
				      strerror(errno));
		for (__u32 i = 0; i < count; i++)
			cb(ctx, &keys[i], &vals[i]);
		n += count;
		if (err) /* ENOENT: that was the last batch */
			return n;
		in = out;
		first = false;
	}
}

void ls_loader__forget_stack(struct ls_loader *l, const struct ls_known_key *k)
{
	bpf_map_delete_elem(bpf_map__fd(l->skel->maps.agg_known), k);
}

int ls_loader__ring(struct ls_loader *l, int (*cb)(void *ctx, void *data, size_t len), void *ctx,
		    struct ring_buffer **out)
{
	struct ring_buffer *rb = ring_buffer__new(bpf_map__fd(l->skel->maps.events), cb, ctx, NULL);

	void *pos;

	if (!rb)
		return ls_err(-errno, "cannot open the ring buffer: %s", strerror(errno));
	/*
	 * libbpf (1.1) has no reader for them: its consumer page and the producer page, mapped a
	 * second time, read-only (the kernel lets only the consumer page be written)
	 */
	l->rb_page = sysconf(_SC_PAGESIZE);
	pos = mmap(NULL, 2 * l->rb_page, PROT_READ, MAP_SHARED, bpf_map__fd(l->skel->maps.events),
		   0);
	if (pos == MAP_FAILED) {
		int err = -errno;

		ring_buffer__free(rb);
		return ls_err(err, "cannot map the ring buffer's positions: %s", strerror(-err));
	}
	l->rb_pos = pos;
	*out = rb;
	return 0;
}

uint64_t ls_loader__ring_read(const struct ls_loader *l)
{
	return __atomic_load_n(l->rb_pos, __ATOMIC_ACQUIRE);
}

uint64_t ls_loader__ring_written(const struct ls_loader *l)
{
	return __atomic_load_n(l->rb_pos + l->rb_page / sizeof(*l->rb_pos), __ATOMIC_ACQUIRE);
}

void ls_loader__stats(const struct ls_loader *l, struct ls_stats *st)
{
	/* .bss is mmap'ed: read each counter once */
	memcpy(st, (const void *)&l->skel->bss->stats, sizeof(*st));
}

uint64_t ls_loader__period_ns(const struct ls_loader *l)
{
	return l->period_ns;
}
