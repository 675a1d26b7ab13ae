// SPDX-License-Identifier: MIT
/*
 * Attaching by descriptor (a kept program has no libbpf object behind it): the tracepoint
 * programs and task iterators, one cpu-clock perf event per online CPU with the sampler, and the
 * USDT programs through libbpf (loaded runs only). Sampling uses a fixed cpu-clock period (not a
 * frequency), so every sample weighs exactly the period and times are exact multiples of it.
 * The online CPU list is parsed here: libbpf 1.1's shared library does not export its parser.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "loader.h" /* before the skeleton: it defines the .bss types */
#include "gpu_records.h"
#include "linescope.skel.h"
#include "loader_int.h"
#include "loader_jitter.h"
#include "loader_remote.h"
#include "loader_keep.h"
#include "log.h"

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

/*
 * The loaded program at index i of the object: the kept one, or whichever instance of a split
 * load verified it. -1 when it is not loaded.
 */
static int prog_fd_at(const struct ls_loader *l, int i)
{
	struct bpf_program *p = NULL, *q = NULL;
	int fd;

	if (l->keep)
		return ls_keep__prog_fd(l->keep, i);
	for (int j = 0; j <= i; j++) {
		p = bpf_object__next_program(l->skel->obj, p);
		if (l->skel2)
			q = bpf_object__next_program(l->skel2->obj, q);
		if (!p)
			return -1;
	}
	fd = bpf_program__fd(p);
	if (fd < 0 && q)
		fd = bpf_program__fd(q);
	return fd < 0 ? -1 : fd;
}

/* prog's descriptor, from those lsl_attach_programs noted */
static int prog_fd(const struct ls_loader *l, const struct bpf_program *prog)
{
	struct bpf_program *p;
	int i = 0;

	bpf_object__for_each_program(p, l->skel->obj)
	{
		if (p == prog)
			return l->prog_fds[i];
		i++;
	}
	return -1;
}

/*
 * Each loaded tracepoint program linked to its tracepoint, and the task iterators' links made,
 * by descriptor (a kept program has no libbpf object behind it). The sampler and the USDT
 * programs are attached on their own. Each program's run counts are noted first: a kept one
 * carries those of the runs before.
 */
int lsl_attach_programs(struct ls_loader *l)
{
	struct bpf_program *p;
	int i = 0;

	bpf_object__for_each_program(p, l->skel->obj) l->nprogs++;
	l->tp_links = malloc(l->nprogs * sizeof(int));
	l->prog_fds = malloc(l->nprogs * sizeof(int));
	l->base_runs = calloc(l->nprogs, sizeof(uint64_t));
	l->base_ns = calloc(l->nprogs, sizeof(uint64_t));
	if (!l->tp_links || !l->prog_fds || !l->base_runs || !l->base_ns)
		return -ENOMEM;
	bpf_object__for_each_program(p, l->skel->obj)
	{
		const char *sec = bpf_program__section_name(p);
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);
		int fd = prog_fd_at(l, i), link;

		l->prog_fds[i] = fd;
		if (fd >= 0 && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
			l->base_runs[i] = info.run_cnt;
			l->base_ns[i] = info.run_time_ns;
		}
		i++;
		if (fd < 0 || (strncmp(sec, "tp_btf/", 7) && strncmp(sec, "iter", 4)))
			continue;
		link = bpf_link_create(fd, 0, sec[0] == 'i' ? BPF_TRACE_ITER : BPF_TRACE_RAW_TP,
				       NULL);
		if (link < 0)
			return ls_err(-errno, "cannot attach %s: %s", bpf_program__name(p),
				      strerror(errno));
		if (p == l->skel->progs.open_blocked)
			l->iter_open = link;
		else if (p == l->skel->progs.close_blocked)
			l->iter_close = link;
		else if (p == l->skel->progs.sample_remote)
			l->iter_sample = link;
		else
			l->tp_links[l->ntp++] = link;
	}
	return 0;
}

/* --sampler remote: our thread runs the sampler's iterator (loader_remote.c), no perf event. */
static int start_remote(struct ls_loader *l)
{
	struct ls_remote_cfg cfg = {
		.prog_fd = prog_fd(l, l->skel->progs.sample_remote),
		.all_link = l->iter_sample,
		.procs_fd = bpf_map__fd(l->skel->maps.procs),
		.changes = (const uint64_t *)&l->skel->bss->procs_changes,
		.weight_ns = (uint64_t *)&l->skel->bss->remote_weight_ns,
		.sampler_tid = &l->skel->bss->remote_sampler_tid,
		.period_ns = l->period_ns,
	};
	int err;

	/* there, only a tick in the thread's own context reports a preempted thread's wait */
	if (l->offcpu && !l->rseq && !l->task_work)
		return ls_err(-ENOTSUP, "--sampler remote needs rseq or task works for wall mode "
					"on this kernel; use --mode cpu or the timer sampler");
	l->skel->bss->remote_weight_ns = 0;
	l->skel->bss->remote_sampler_tid = 0;
	memset(l->skel->bss->remote_displaced, 0, sizeof(l->skel->bss->remote_displaced));
	err = ls_remote__start(&l->sampler, &cfg);
	return err ? ls_err(err, "cannot start the remote sampler: %s", strerror(-err)) : 0;
}

int lsl_attach_sampling(struct ls_loader *l)
{
	int sampler = prog_fd(l, l->skel->progs.handle_sample);
	bool *mask = NULL;
	int max = 0, err;

	if (l->remote)
		return start_remote(l);
	err = online_cpus(&mask, &max);
	if (err < 0)
		return ls_err(err, "cannot read the online CPUs: %s", strerror(-err));
	l->ncpus = max;
	l->links = malloc(max * sizeof(int));
	l->pfds = malloc(max * sizeof(int));
	if (!l->links || !l->pfds) {
		free(mask);
		return -ENOMEM;
	}
	for (int c = 0; c < max; c++)
		l->pfds[c] = l->links[c] = -1;
	/* a kept load's .bss has the last run's clocks */
	memset(l->skel->bss->cpu_clocks, 0, sizeof(l->skel->bss->cpu_clocks));
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
		l->links[c] = bpf_link_create(sampler, l->pfds[c], BPF_PERF_EVENT, NULL);
		if (l->links[c] < 0) {
			err = -errno;
			free(mask);
			return ls_err(err, "cannot attach the sampler on CPU %d: %s", c,
				      strerror(-err));
		}
	}
	free(mask);
	err = ls_jitter__start(&l->jitter, l->pfds, max, l->period_ns, l->skel->bss->cpu_clocks);
	return err ? ls_err(err, "cannot start the sampling jitter: %s", strerror(-err)) : 0;
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
int lsl_attach_trace(struct ls_loader *l, const char *site)
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

/* The uprobe PMU's type (/sys/bus/event_source/devices/uprobe/type), or -errno. */
static int uprobe_pmu(void)
{
	FILE *f = fopen("/sys/bus/event_source/devices/uprobe/type", "re");
	int type = -ENOENT;

	if (f) {
		if (fscanf(f, "%d", &type) != 1)
			type = -EINVAL;
		fclose(f);
	}
	return type;
}

/* the run goes on: what it costs */
#define LATER "; its later processes are found through /proc (a short one may end first)"

/*
 * By descriptor, as the other programs (a kept load has no libbpf object behind it): a uprobe
 * perf event for every process (pid -1, cpu 0, as libbpf opens one) linked with its cookie.
 */
int ls_loader__set_lib(struct ls_loader *l, uint32_t slot, const char *path, uint64_t offset,
		       const struct ls_lib_image *lib)
{
	LIBBPF_OPTS(bpf_link_create_opts, lo, .perf_event.bpf_cookie = slot);
	struct perf_event_attr attr = {.size = sizeof(attr)};
	int fd = prog_fd(l, l->skel->progs.handle_lib_start), pfd, link, type = uprobe_pmu();

	if (slot >= LS_LIB_IMAGES || l->nlib_fds + 2 > 2 * LS_LIB_IMAGES)
		return -ENOSPC;
	if (fd < 0 || type < 0)
		return ls_warn(fd < 0 ? -ENOENT : type, "cannot probe %s: no uprobes here" LATER,
			       LS_LIB_START);
	if (bpf_map_update_elem(bpf_map__fd(l->skel->maps.lib_images), &slot, lib, BPF_ANY))
		return ls_warn(-errno, "cannot record a shared interpreter: %s" LATER,
			       strerror(errno));
	attr.type = type;
	attr.config1 = (uint64_t)(uintptr_t)path;
	attr.config2 = offset;
	pfd = syscall(__NR_perf_event_open, &attr, -1, 0, -1, PERF_FLAG_FD_CLOEXEC);
	if (pfd < 0)
		return ls_warn(-errno, "cannot probe %s in %s: %s" LATER, LS_LIB_START, path,
			       strerror(errno));
	link = bpf_link_create(fd, pfd, BPF_PERF_EVENT, &lo);
	if (link < 0) {
		int err = -errno;

		close(pfd);
		return ls_warn(err, "cannot probe %s in %s: %s" LATER, LS_LIB_START, path,
			       strerror(-err));
	}
	l->lib_fds[l->nlib_fds++] = pfd;
	l->lib_fds[l->nlib_fds++] = link;
	return 0;
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
int lsl_attach_gpu(struct ls_loader *l, const char *lib)
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

/* Runs a task iterator over every task of the machine. */
static int run_iter(int link, const char *what)
{
	int err = link < 0 ? 0 : ls_remote__read_iter(link); /* < 0: wall mode is off */

	return err ? ls_err(err, "the %s iterator failed: %s", what, strerror(-err)) : 0;
}

int ls_loader__open_blocked(struct ls_loader *l)
{
	return run_iter(l->iter_open, "attach-time off-CPU");
}

int ls_loader__close_blocked(struct ls_loader *l)
{
	return run_iter(l->iter_close, "stop-time off-CPU");
}

void ls_loader__remote_stats(const struct ls_loader *l, uint64_t *passes, uint64_t *late_ns)
{
	*passes = l->remote_passes;
	*late_ns = l->remote_late_ns;
	if (l->sampler)
		ls_remote__stats(l->sampler, passes, late_ns);
}

void ls_loader__stop_sampling(struct ls_loader *l)
{
	if (l->sampler) {
		ls_remote__stats(l->sampler, &l->remote_passes, &l->remote_late_ns);
		ls_remote__stop(l->sampler);
		l->sampler = NULL;
	}
	ls_jitter__stop(l->jitter);
	l->jitter = NULL;
	for (int c = 0; l->pfds && c < l->ncpus; c++)
		if (l->pfds[c] >= 0)
			ioctl(l->pfds[c], PERF_EVENT_IOC_DISABLE, 0);
}
