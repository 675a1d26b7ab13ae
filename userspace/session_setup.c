// SPDX-License-Identifier: MIT
/*
 * Before anything loads: the targets and outputs are checked, the files this tool ships are found,
 * and the launched command's environment is set up to load them (--trace, --gpu).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "log.h"
#include "outfile.h"
#include "procfs.h"
#include "python.h"
#include "session_int.h"

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

int lss_prepare(struct session *s, struct ls_loader_opts *lo)
{
	const struct ls_opts *o = s->o;
	int err;

	if (o->npids && (err = check_pids(o)))
		return err;
	/* before anything runs: a job must not run for an hour and then have nowhere to go */
	if ((err = ls_outfile__check(o->output, LS_OUT_ANY)) ||
	    (err = ls_outfile__check(o->profile, LS_OUT_REGULAR)))
		return err;
	if (o->trace) {
		char pp[PATH_MAX * 2];
		const char *old = getenv("PYTHONPATH");

		err = find_trace_site(s->trace_site, sizeof(s->trace_site));
		if (err)
			return err;
		lo->trace_site = s->trace_site;
		lo->no_sampling = !o->sample;
		lo->offcpu = lo->offcpu && o->sample;
		/* the launched command imports linescope_usdt through the site's sitecustomize */
		snprintf(pp, sizeof(pp), "%s%s%s", s->trace_site, old && *old ? ":" : "",
			 old ? old : "");
		if (o->command)
			setenv("PYTHONPATH", pp, 1);
	}
	if (o->gpu) {
		err = find_gpu_lib(s->gpu_lib, sizeof(s->gpu_lib));
		if (err)
			return err;
		lo->gpu_lib = s->gpu_lib;
		/* the launched command and its children load it: CUDA reads this at cuInit */
		if (o->command)
			setenv("CUDA_INJECTION64_PATH", s->gpu_lib, 1);
	}
	if (o->cgroup) {
		err = ls_cgroup__open(o->cgroup, &s->cg);
		if (err)
			return err;
		lo->cgroup_fd = s->cg.fd;
		if (!strcmp(s->cg.rel, "/"))
			ls_info("-c %s is the root cgroup: every process of the machine, until -d or "
				"Ctrl-C",
				o->cgroup);
	}
	if (geteuid() != 0)
		ls_warn(0,
			"not running as root; loading BPF programs needs CAP_BPF and CAP_PERFMON");
	return 0;
}
