// SPDX-License-Identifier: MIT
/*
 * Skeleton open -> rodata -> load -> attach. Sampling uses a fixed cpu-clock period (not a
 * frequency), so every sample weighs exactly the period and times are exact multiples of it.
 * The online CPU list is parsed here: libbpf 1.1's shared library does not export its parser.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include "loader.h" /* before the skeleton: it defines the .bss types */
#include "monoclock.h"
#include "gpu_records.h"
#include "linescope.skel.h"
#include "loader_split.h"
#include "log.h"
#include "taskwork_probe.h"

struct ls_loader {
	struct linescope_bpf *skel;
	struct linescope_bpf *skel2; /* the programs verified beside skel's (loader_split.c) */
	struct bpf_link **links;     /* one per CPU */
	int *pfds;
	int ncpus;
	uint64_t period_ns;
	bool rseq, task_work;	 /* wall mode: where intervals are reported (resume_paths) */
	const char *resume_path; /* their names, or NULL (cpu mode) */
	struct bpf_link *gpu_links[2];
	struct bpf_link **trace_links; /* python-usdt builds and native probes */
	size_t ntrace;
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
	/* the ring buffer's two position pages, mapped read-only: how far it is read and written */
	const volatile uint64_t *rb_pos;
	size_t rb_page;
};

/* Parses a CPU list like "0-3,5,7-8" into mask[0..max). Returns the count or -EINVAL. */
static int parse_cpulist(const char *s, bool *mask, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s)
			return -EINVAL;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1)
				return -EINVAL;
			s = end;
		}
		for (long c = a; c <= b && c < max; c++) {
			if (!mask[c])
				n++;
			mask[c] = true;
		}
		if (*s == ',')
			s++;
	}
	return n;
}

static int online_cpus(bool **mask, int *max)
{
	char buf[1024];
	FILE *f = fopen("/sys/devices/system/cpu/online", "re");
	int n = libbpf_num_possible_cpus();

	if (n <= 0)
		return n ? n : -EINVAL;
	if (!f)
		return -errno;
	if (!fgets(buf, sizeof(buf), f)) {
		fclose(f);
		return -EIO;
	}
	fclose(f);
	*mask = calloc(n, sizeof(bool));
	if (!*mask)
		return -ENOMEM;
	*max = n;
	return parse_cpulist(buf, *mask, n);
}

static int open_perf_event(int cpu, uint64_t period_ns)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.sample_period = period_ns,
	};
	int fd = syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

static int attach_sampling(struct ls_loader *l)
{
	bool *mask = NULL;
	int max = 0, err;

	err = online_cpus(&mask, &max);
	if (err < 0)
		return ls_err(err, "cannot read the online CPUs: %s", strerror(-err));
	l->ncpus = max;
	l->links = calloc(max, sizeof(*l->links));
	l->pfds = malloc(max * sizeof(int));
	if (!l->links || !l->pfds) {
		free(mask);
		return -ENOMEM;
	}
	for (int c = 0; c < max; c++)
		l->pfds[c] = -1;
	for (int c = 0; c < max; c++) {
		if (!mask[c])
			continue;
		l->pfds[c] = open_perf_event(c, l->period_ns);
		if (l->pfds[c] < 0) {
			err = l->pfds[c];
			free(mask);
			return ls_err(err, "perf_event_open(cpu-clock) on CPU %d: %s%s", c,
				      strerror(-err),
				      err == -EACCES || err == -EPERM
					      ? "; run as root (CAP_PERFMON)"
					      : "");
		}
		l->links[c] =
			bpf_program__attach_perf_event(l->skel->progs.handle_sample, l->pfds[c]);
		if (!l->links[c]) {
			err = -errno;
			free(mask);
			return ls_err(err, "cannot attach the sampler on CPU %d: %s", c,
				      strerror(-err));
		}
	}
	free(mask);
	return 0;
}

static int add_trace_link(struct ls_loader *l, struct bpf_link *link)
{
	struct bpf_link **v = realloc(l->trace_links, (l->ntrace + 1) * sizeof(*v));

	if (!v) {
		bpf_link__destroy(link);
		return -ENOMEM;
	}
	l->trace_links = v;
	l->trace_links[l->ntrace++] = link;
	return 0;
}

/*
 * python-usdt's probes in every build of the site directory, for every process (pid -1): each
 * process that loads one gets its semaphore set, and `procs` decides whose messages count.
 */
static int attach_trace(struct ls_loader *l, const char *site)
{
	struct bpf_program *progs[] = {l->skel->progs.handle_pyusdt_state,
				       l->skel->progs.handle_pyusdt_code,
				       l->skel->progs.handle_pyusdt_batch};
	const char *probes[] = {"state", "code", "batch"};
	struct dirent *de;
	int n = 0, err = 0;
	DIR *d = opendir(site);

	if (!d)
		return ls_err(-errno, "--trace: cannot read %s: %s", site, strerror(errno));
	while (!err && (de = readdir(d))) {
		char path[PATH_MAX];

		if (strncmp(de->d_name, "linescope_usdt", 14) || !strstr(de->d_name, ".so"))
			continue;
		snprintf(path, sizeof(path), "%s/%s", site, de->d_name);
		for (int i = 0; i < 3 && !err; i++) {
			struct bpf_link *link = bpf_program__attach_usdt(
				progs[i], -1, path, "linescope", probes[i], NULL);

			if (!link)
				err = ls_err(-errno, "--trace: cannot attach to %s: %s", path,
					     strerror(errno));
			else
				err = add_trace_link(l, link);
		}
		n++;
	}
	closedir(d);
	if (!err && !n)
		err = ls_err(-ENOENT, "--trace: no python-usdt build in %s; build it (make)", site);
	return err;
}

int ls_loader__attach_native_trace(struct ls_loader *l, pid_t pid, const char *binary)
{
	struct bpf_program *progs[] = {l->skel->progs.handle_py_line,
				       l->skel->progs.handle_py_entry,
				       l->skel->progs.handle_py_return};
	const char *probes[] = {"line", "function__entry", "function__return"};

	for (int i = 0; i < 3; i++) {
		struct bpf_link *link =
			bpf_program__attach_usdt(progs[i], pid, binary, "python", probes[i], NULL);
		int err;

		if (!link)
			return ls_err(-errno, "pid %d: cannot attach python:%s in %s: %s", pid,
				      probes[i], binary, strerror(errno));
		err = add_trace_link(l, link);
		if (err)
			return err;
	}
	return 0;
}

int ls_loader__native_drain(struct ls_loader *l, pid_t pid,
			    void (*cb)(void *ctx, const struct ls_native_key *k,
				       const struct ls_native_val *v, const char *file,
				       const char *func),
			    void *ctx)
{
	int lines = bpf_map__fd(l->skel->maps.native_lines);
	int strs = bpf_map__fd(l->skel->maps.native_strs);
	struct ls_native_key key, next, *prev = NULL;
	int n = 0;

	while (bpf_map_get_next_key(lines, prev, &next) == 0) {
		struct ls_native_val v;

		key = next;
		prev = &key;
		if ((pid_t)key.pid != pid || bpf_map_lookup_elem(lines, &key, &v))
			continue;
		{
			struct ls_native_str_key fk = {.pid = key.pid, .hash = key.file};
			struct ls_native_str_key qk = {.pid = key.pid, .hash = key.func};
			char file[LS_NATIVE_STR + 1] = "", func[LS_NATIVE_STR + 1] = "";

			bpf_map_lookup_elem(strs, &fk, file);
			bpf_map_lookup_elem(strs, &qk, func);
			cb(ctx, &key, &v, file, func);
			n++;
		}
	}
	return n;
}

/* The GPU library's probes, in every process that maps it (pid -1; `procs` filters). */
static int attach_gpu(struct ls_loader *l, const char *lib)
{
	struct {
		struct bpf_program *prog;
		const char *probe;
		struct bpf_link **link;
	} probes[] = {
		{l->skel->progs.handle_gpu_api, "api", &l->gpu_links[0]},
		{l->skel->progs.handle_gpu_record, "record", &l->gpu_links[1]},
	};

	for (size_t i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
		*probes[i].link = bpf_program__attach_usdt(probes[i].prog, -1, lib, "linescope_gpu",
							   probes[i].probe, NULL);
		if (!*probes[i].link)
			return ls_err(-errno, "cannot attach the GPU probes of %s: %s", lib,
				      strerror(errno));
	}
	return 0;
}

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
	char why[256];
	int err;

	err = ls_taskwork_probe(&l->rseq, &l->task_work, why, sizeof(why));
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

const char *ls_loader__resume_path(const struct ls_loader *l)
{
	return l->resume_path;
}

int ls_loader__new(const struct ls_loader_opts *opts, struct ls_loader **out)
{
	uint64_t t[4] = {ls_mono_ns()}; /* begun, opened and probed, loaded, attached */
	struct ls_loader *l;
	int err;

	l = calloc(1, sizeof(*l));
	if (!l)
		return -ENOMEM;
	l->stats_fd = l->agg_fd[0] = l->agg_fd[1] = -1;
	l->period_ns = 1000000000ULL / (opts->frequency_hz ? opts->frequency_hz : 999);
	libbpf_set_print(ls_libbpf_print);

	l->skel = linescope_bpf__open();
	if (!l->skel) {
		err = -errno;
		ls_loader__free(l);
		return ls_err(err, "cannot open the BPF programs: %s", strerror(-err));
	}
	l->skel->rodata->self_tgid = opts->self_pid;
	l->skel->rodata->filter_cgroup = opts->cgroup_fd >= 0;
	l->skel->rodata->offcpu_enabled = opts->offcpu;
	l->skel->rodata->offcpu_period_ns = l->period_ns;
	l->skel->rodata->agg_enabled = !opts->no_agg;
	/* the aggregate maps come later, from agg_setter (create_agg_maps) */
	bpf_map__set_autocreate(l->skel->maps.agg_a, false);
	bpf_map__set_autocreate(l->skel->maps.agg_b, false);
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
	/* where a blocked thread's interval is reported: not at every syscall where avoidable */
	if (opts->offcpu)
		resume_paths(l);
	l->skel->rodata->offcpu_rseq = l->rseq;
	l->skel->rodata->offcpu_task_work = l->task_work;
	l->skel->rodata->offcpu_exit_report = l->rseq && !l->task_work;
	l->skel->rodata->offcpu_sample_report = opts->offcpu && !l->rseq && !l->task_work;
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

	/* our own cost, per program: held for the recording (two clock reads per program run) */
	l->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	t[1] = ls_mono_ns();
	err = ls_loader_split__load(l->skel, opts->offcpu, &l->skel2);
	t[2] = ls_mono_ns();
	if (err) {
		ls_loader__free(l);
		return ls_err(err, "cannot load the BPF programs: %s%s", strerror(-err),
			      geteuid() != 0 ? "; run as root (CAP_BPF, CAP_PERFMON)"
					     : "; the kernel refused them (see -vv for the log)");
	}
	if (opts->cgroup_fd >= 0) {
		__u32 zero = 0;

		err = bpf_map_update_elem(bpf_map__fd(l->skel->maps.cgroup_filter), &zero,
					  &opts->cgroup_fd, BPF_ANY);
		if (err) {
			err = -errno;
			ls_loader__free(l);
			return ls_err(err, "cannot set the cgroup filter: %s", strerror(-err));
		}
	}
	err = linescope_bpf__attach(l->skel);
	if (!err && l->skel2)
		err = linescope_bpf__attach(l->skel2);
	if (err) {
		ls_loader__free(l);
		return ls_err(err, "cannot attach the BPF tracepoints: %s", strerror(-err));
	}
	err = opts->no_sampling ? 0 : attach_sampling(l);
	if (!err && opts->trace_site)
		err = attach_trace(l, opts->trace_site);
	if (!err && opts->gpu_lib)
		err = attach_gpu(l, opts->gpu_lib);
	if (err) {
		ls_loader__free(l);
		return err;
	}
	t[3] = ls_mono_ns();
	/* start-up's largest part (bench/startup): the kernel's BTF parsed and every program verified */
	ls_info("BPF set-up %.1f ms: open and probe %.1f ms, load %.1f ms (maps, BTF, verifier), "
		"attach %.1f ms",
		(double)(t[3] - t[0]) / 1e6, (double)(t[1] - t[0]) / 1e6,
		(double)(t[2] - t[1]) / 1e6, (double)(t[3] - t[2]) / 1e6);
	*out = l;
	return 0;
}

void ls_loader__free(struct ls_loader *l)
{
	if (!l)
		return;
	if (l->agg_state == AGG_SETTING)
		pthread_join(l->agg_setter, NULL);
	for (int c = 0; l->links && c < l->ncpus; c++)
		bpf_link__destroy(l->links[c]);
	for (int c = 0; l->pfds && c < l->ncpus; c++)
		if (l->pfds[c] >= 0)
			close(l->pfds[c]);
	free(l->links);
	free(l->pfds);
	bpf_link__destroy(l->gpu_links[0]);
	bpf_link__destroy(l->gpu_links[1]);
	for (size_t i = 0; i < l->ntrace; i++)
		bpf_link__destroy(l->trace_links[i]);
	free(l->trace_links);
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

	if (l->stats_fd < 0)
		return -ENOTSUP;
	for (int i = 0; i < 2; i++) {
		const struct linescope_bpf *s = i ? l->skel2 : l->skel;

		if (!s)
			continue;
		bpf_object__for_each_program(prog, s->obj)
		{
			struct bpf_prog_info info = {};
			__u32 len = sizeof(info);
			int fd = bpf_program__fd(prog);

			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len))
				continue; /* not loaded here: its collection is off, or the other has it */
			cb(ctx, bpf_program__name(prog), info.run_cnt, info.run_time_ns);
		}
	}
	return 0;
}

int ls_loader__set_proc(struct ls_loader *l, pid_t pid, const struct ls_proc *p)
{
	struct ls_proc cur;
	__u32 key = pid;
	int err;

	if (!p) {
		bpf_map_delete_elem(bpf_map__fd(l->skel->maps.procs), &key);
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
	return 0;
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
 * agg_a and agg_b are created here, not by the skeleton's load: each costs a 4 MB bucket array
 * (3-6 ms), which held up the targets' start; the programs reach them only through agg_maps, whose
 * inner-map template is small (agg.bpf.h).
 */
static int create_agg_maps(struct ls_loader *l)
{
	const struct bpf_map *def = l->skel->maps.agg_a;
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = bpf_map__map_flags(def));

	for (int i = 0; i < 2; i++) {
		l->agg_fd[i] = bpf_map_create(bpf_map__type(def), i ? "agg_b" : "agg_a",
					      bpf_map__key_size(def), bpf_map__value_size(def),
					      bpf_map__max_entries(def), &opts);
		if (l->agg_fd[i] < 0)
			return -errno;
	}
	return 0;
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
	int fd = l->agg_fd[!l->agg_b_active];

	if (agg_started(l)) {
		ls_loader__agg_start(l); /* not begun yet (nothing is retired) */
		return -EAGAIN;
	}

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

/* Runs a task iterator over every task of the machine (it writes nothing to read). */
static int run_iter(struct bpf_link *link, const char *what)
{
	char buf[64];
	ssize_t n;
	int fd;

	if (!link)
		return 0; /* wall mode is off */
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return ls_err(-errno, "cannot run the %s iterator: %s", what, strerror(errno));
	while ((n = read(fd, buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
		;
	if (n < 0)
		n = ls_err(-errno, "the %s iterator failed: %s", what, strerror(errno));
	close(fd);
	return n < 0 ? (int)n : 0;
}

int ls_loader__open_blocked(struct ls_loader *l)
{
	return run_iter(l->skel->links.open_blocked, "attach-time off-CPU");
}

int ls_loader__close_blocked(struct ls_loader *l)
{
	return run_iter(l->skel->links.close_blocked, "stop-time off-CPU");
}

void ls_loader__stop_sampling(struct ls_loader *l)
{
	for (int c = 0; l->pfds && c < l->ncpus; c++)
		if (l->pfds[c] >= 0)
			ioctl(l->pfds[c], PERF_EVENT_IOC_DISABLE, 0);
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

void ls_loader__jitter(struct ls_loader *l)
{
	for (int c = 0; c < l->ncpus; c++) {
		uint64_t period;

		if (l->pfds[c] < 0)
			continue;
		/* the rate, not the period, is drawn uniformly in [0.75, 1.25] of the nominal: a
		 * uniform period would sample 2.2% more often than nominal on average (E[1/p]) and
		 * overstate every time by as much, since a sample stands for one nominal period */
		period = l->period_ns * 4000 / (3000 + (uint64_t)random() % 2001);
		ioctl(l->pfds[c], PERF_EVENT_IOC_PERIOD, &period);
	}
}

uint64_t ls_loader__period_ns(const struct ls_loader *l)
{
	return l->period_ns;
}
