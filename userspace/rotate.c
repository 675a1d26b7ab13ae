// SPDX-License-Identifier: MIT
/*
 * Interval profiles of a rotated recording: their names, their pushes (a child process each,
 * reaped from the poll loop) and --keep, which removes the oldest closed profile once its push,
 * if any, is over. Only files this run wrote are ever removed.
 */
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "log.h"
#include "rotate.h"

extern char **environ;

int ls_rotate__init(struct ls_rotate *r, const char *base, const char *push, const char *name,
		    const char *tenant, unsigned keep)
{
	char dir[PATH_MAX];
	const char *slash = strrchr(base, '/');

	memset(r, 0, sizeof(*r));
	r->base = base;
	r->push = push;
	r->name = name;
	r->tenant = tenant;
	r->keep = keep;
	r->dirfd = -1;
	if (!keep)
		return 0;
	snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - base) + 1 : 1, slash ? base : ".");
	r->dirfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (r->dirfd < 0)
		return ls_err(-errno, "--keep: cannot open %s: %s", dir, strerror(errno));
	return 0;
}

int ls_rotate__path(const struct ls_rotate *r, char *buf, size_t len)
{
	size_t n = strlen(r->base);
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	if (n > 7 && !strcmp(r->base + n - 7, ".lsprof"))
		n -= 7;
	strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", gmtime_r(&now, &tm));
	if ((size_t)snprintf(buf, len, "%.*s-%s.lsprof", (int)n, r->base, stamp) >= len)
		return ls_err(-ENAMETOOLONG, "--rotate: %s-%s.lsprof: name too long", r->base,
			      stamp);
	return 0;
}

/* `linescope-bpf push PATH URL [--name APP] [--tenant ID] [-q]`, by our own executable */
static pid_t spawn_push(const struct ls_rotate *r, const char *path)
{
	char *argv[10] = {"linescope-bpf", "push", (char *)path, (char *)r->push};
	int n = 4, err;
	pid_t pid;

	if (ls_log_level() < LS_LOG_WARN)
		argv[n++] = "-q"; /* errors only, as we were asked */
	if (r->name) {
		argv[n++] = "--name";
		argv[n++] = (char *)r->name;
	}
	if (r->tenant) {
		argv[n++] = "--tenant";
		argv[n++] = (char *)r->tenant;
	}
	err = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, argv, environ);
	if (err) {
		ls_warn(0, "--push of %s: cannot start: %s", path, strerror(err));
		return 0;
	}
	return pid;
}

/* Removes the oldest profiles beyond --keep whose push is over. */
static void apply_keep(struct ls_rotate *r)
{
	while (r->keep && r->nfiles > r->keep && !r->files[0].pusher) {
		const char *name = strrchr(r->files[0].path, '/');

		/* unlinkat never follows the name itself, and dirfd is the directory of the start
		 */
		if (unlinkat(r->dirfd, name ? name + 1 : r->files[0].path, 0) && errno != ENOENT)
			ls_warn(0, "--keep: cannot remove %s: %s", r->files[0].path,
				strerror(errno));
		else
			r->removed++;
		memmove(&r->files[0], &r->files[1], (r->nfiles - 1) * sizeof(r->files[0]));
		r->nfiles--;
	}
}

void ls_rotate__closed(struct ls_rotate *r, const char *path)
{
	struct ls_rotate_file *f;

	if (r->nfiles == r->cap) {
		unsigned cap = r->cap ? 2 * r->cap : 8;
		struct ls_rotate_file *v = realloc(r->files, cap * sizeof(*v));

		if (!v) {
			ls_warn(0, "--rotate: out of memory: %s is not pushed or removed", path);
			return;
		}
		r->files = v;
		r->cap = cap;
	}
	f = &r->files[r->nfiles++];
	snprintf(f->path, sizeof(f->path), "%s", path);
	f->pusher = r->push ? spawn_push(r, path) : 0;
	if (r->push && !f->pusher)
		r->push_failed++;
	apply_keep(r);
}

void ls_rotate__reap(struct ls_rotate *r, bool wait)
{
	for (unsigned i = 0; i < r->nfiles; i++) {
		int status;
		pid_t got;

		if (!r->files[i].pusher)
			continue;
		got = waitpid(r->files[i].pusher, &status, wait ? 0 : WNOHANG);
		if (got == 0)
			continue;
		if (got > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0)
			r->pushed++;
		else
			r->push_failed++; /* the child said why */
		r->files[i].pusher = 0;
	}
	apply_keep(r);
}

void ls_rotate__release(struct ls_rotate *r)
{
	if (r->dirfd >= 0)
		close(r->dirfd);
	r->dirfd = -1;
	free(r->files);
	r->files = NULL;
	r->nfiles = r->cap = 0;
}
