// SPDX-License-Identifier: MIT
/* Launch, descendant scan and cgroup v2 handling. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "procfs.h"
#include "targets.h"

int ls_launch__start(char **argv, struct ls_launch *l)
{
	int go[2], errp[2], err;
	pid_t pid;

	if (pipe2(go, O_CLOEXEC))
		return ls_err(-errno, "pipe: %s", strerror(errno));
	if (pipe2(errp, O_CLOEXEC)) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		return ls_err(err, "pipe: %s", strerror(-err));
	}
	pid = fork();
	if (pid < 0) {
		err = -errno;
		close(go[0]);
		close(go[1]);
		close(errp[0]);
		close(errp[1]);
		return ls_err(err, "fork: %s", strerror(-err));
	}
	if (pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(errp[0]);
		/* wait until the profiler is attached; EOF means go (or the profiler died) */
		while (read(go[0], &c, 1) < 0 && errno == EINTR)
			;
		close(go[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		signal(SIGPIPE, SIG_DFL);
		execvp(argv[0], argv);
		e = errno;
		if (write(errp[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(errp[1]);
	l->pid = pid;
	l->go_fd = go[1];
	l->err_fd = errp[0];
	return 0;
}

int ls_launch__go(struct ls_launch *l, const char *argv0)
{
	int e = 0;
	ssize_t n;

	close(l->go_fd);
	l->go_fd = -1;
	/* the error pipe closes on a successful exec (O_CLOEXEC) */
	do {
		n = read(l->err_fd, &e, sizeof(e));
	} while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == sizeof(e))
		return ls_err(-e, "cannot run '%s': %s", argv0, strerror(e));
	return 0;
}

struct pidlist {
	pid_t *pid, *ppid;
	size_t n, cap;
};

static int add_pid(void *ctx, pid_t pid)
{
	struct pidlist *l = ctx;
	struct ls_procstat st;

	if (ls_procfs__stat(pid, &st))
		return 0; /* gone since the listing */
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 512;
		pid_t *a = realloc(l->pid, cap * sizeof(pid_t));
		pid_t *b = a ? realloc(l->ppid, cap * sizeof(pid_t)) : NULL;

		if (a)
			l->pid = a;
		if (!b)
			return -ENOMEM;
		l->ppid = b;
		l->cap = cap;
	}
	l->pid[l->n] = pid;
	l->ppid[l->n] = st.ppid;
	l->n++;
	return 0;
}

static int scan_all(struct pidlist *l)
{
	return ls_procfs__each_process(add_pid, l);
}

static int walk_children(const struct pidlist *l, pid_t parent,
			 void (*cb)(void *ctx, pid_t pid, pid_t ppid), void *ctx, int depth)
{
	int n = 0;

	if (depth > 64)
		return 0;
	for (size_t i = 0; i < l->n; i++) {
		if (l->ppid[i] != parent || l->pid[i] == parent)
			continue;
		cb(ctx, l->pid[i], parent);
		n += 1 + walk_children(l, l->pid[i], cb, ctx, depth + 1);
	}
	return n;
}

int ls_targets__descendants(pid_t pid, void (*cb)(void *ctx, pid_t pid, pid_t ppid), void *ctx)
{
	struct pidlist l = {};
	int n = scan_all(&l);

	if (n == 0)
		n = walk_children(&l, pid, cb, ctx, 0);
	free(l.pid);
	free(l.ppid);
	return n;
}

int ls_cgroup__v2_mount(char *buf, size_t len)
{
	FILE *f = fopen("/proc/mounts", "re");
	char dev[256], dir[PATH_MAX], type[64];
	int found = -ENOENT;

	if (!f)
		return -errno;
	while (fscanf(f, "%255s %4095s %63s %*s %*d %*d", dev, dir, type) == 3) {
		if (!strcmp(type, "cgroup2")) {
			snprintf(buf, len, "%s", dir);
			found = 0;
			break;
		}
	}
	fclose(f);
	return found;
}

int ls_cgroup__open(const char *arg, struct ls_cgroup *cg)
{
	char mnt[PATH_MAX], cand[2][PATH_MAX + 8];
	struct stat st;
	int err;

	cg->fd = -1;
	err = ls_cgroup__v2_mount(mnt, sizeof(mnt));
	if (err)
		return ls_err(err, "no cgroup v2 hierarchy is mounted (see /proc/mounts)");
	/* absolute paths may name the directory itself or a path inside the v2 hierarchy */
	snprintf(cand[0], sizeof(cand[0]), "%s", arg);
	snprintf(cand[1], sizeof(cand[1]), "%s/%s", mnt, arg + (arg[0] == '/'));
	for (int i = arg[0] == '/' ? 0 : 1; i < 2; i++) {
		size_t ml = strlen(mnt);

		if (stat(cand[i], &st) || !S_ISDIR(st.st_mode))
			continue;
		if (!realpath(cand[i], cg->path))
			continue;
		if (strncmp(cg->path, mnt, ml) || (cg->path[ml] && cg->path[ml] != '/'))
			continue; /* a directory, but not in the v2 hierarchy */
		snprintf(cg->rel, sizeof(cg->rel), "%s", cg->path[ml] ? cg->path + ml : "/");
		cg->fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (cg->fd < 0)
			return ls_err(-errno, "cannot open cgroup %s: %s", cg->path,
				      strerror(errno));
		return 0;
	}
	return ls_err(-ENOENT, "no cgroup v2 group '%s' (looked in %s)", arg, mnt);
}

void ls_cgroup__close(struct ls_cgroup *cg)
{
	if (cg->fd >= 0)
		close(cg->fd);
	cg->fd = -1;
}

static int procs_in(const char *dir, void (*cb)(void *ctx, pid_t pid, pid_t ppid), void *ctx,
		    int depth)
{
	char p[PATH_MAX + 32];
	DIR *d;
	struct dirent *de;
	FILE *f;
	int n = 0, pid;

	snprintf(p, sizeof(p), "%s/cgroup.procs", dir);
	f = fopen(p, "re");
	if (f) {
		while (fscanf(f, "%d", &pid) == 1) {
			cb(ctx, pid, 0);
			n++;
		}
		fclose(f);
	}
	if (depth > 32 || !(d = opendir(dir)))
		return n;
	while ((de = readdir(d))) {
		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s", dir, de->d_name);
		n += procs_in(p, cb, ctx, depth + 1);
	}
	closedir(d);
	return n;
}

int ls_cgroup__procs(const struct ls_cgroup *cg, void (*cb)(void *ctx, pid_t pid, pid_t ppid),
		     void *ctx)
{
	return procs_in(cg->path, cb, ctx, 0);
}

bool ls_cgroup__populated(const struct ls_cgroup *cg)
{
	char p[PATH_MAX + 32], line[128];
	bool populated = false;
	FILE *f;

	snprintf(p, sizeof(p), "%s/cgroup.events", cg->path);
	f = fopen(p, "re");
	if (!f) /* the root group has no cgroup.events and is never empty; any other was removed */
		return !strcmp(cg->rel, "/") && !access(cg->path, F_OK);
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, "populated ", 10))
			populated = atoi(line + 10) != 0;
	fclose(f);
	return populated;
}
