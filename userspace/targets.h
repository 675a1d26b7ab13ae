/* SPDX-License-Identifier: MIT */
/*
 * Target selection: launching a command held until profiling is ready, finding the existing
 * descendants of a process, and cgroup v2 groups (path resolution, members, whether populated).
 */
#ifndef LS_TARGETS_H
#define LS_TARGETS_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct ls_launch {
	pid_t pid;
	int go_fd;  /* write end: closing it lets the child exec */
	int err_fd; /* read end: the child writes errno here if exec fails */
};

/* Forks a child that waits for ls_launch__go() before exec'ing argv. */
int ls_launch__start(char **argv, struct ls_launch *l);
/* Releases the child; returns 0, or the exec errno (negative) with a one-line message logged. */
int ls_launch__go(struct ls_launch *l, const char *argv0);

/* Calls cb for every live descendant of pid (children first). Returns the count. */
int ls_targets__descendants(pid_t pid, void (*cb)(void *ctx, pid_t pid, pid_t ppid), void *ctx);

struct ls_cgroup {
	char path[PATH_MAX]; /* directory in the cgroup v2 hierarchy */
	char rel[PATH_MAX];  /* path relative to the v2 mount, for display */
	int fd;		     /* O_RDONLY directory fd for the BPF filter */
};

/* Where the cgroup v2 hierarchy is mounted, into buf: 0, or -ENOENT when it is not. */
int ls_cgroup__v2_mount(char *buf, size_t len);
/* Resolves PATH (absolute, or relative to the v2 mount) and opens it. One-line errors. */
int ls_cgroup__open(const char *arg, struct ls_cgroup *cg);
void ls_cgroup__close(struct ls_cgroup *cg);
/* Calls cb for every process in the group and its descendants. Returns the count. */
int ls_cgroup__procs(const struct ls_cgroup *cg, void (*cb)(void *ctx, pid_t pid, pid_t ppid),
		     void *ctx);
/* Whether any process is in the group or below (cgroup.events "populated"). */
bool ls_cgroup__populated(const struct ls_cgroup *cg);

#endif
