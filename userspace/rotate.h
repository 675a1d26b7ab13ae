/* SPDX-License-Identifier: MIT */
/*
 * --rotate SECONDS: a profile per interval, NAME-<UTC start>.lsprof beside --profile's NAME,
 * the oldest removed beyond --keep N, and each closed one pushed (--push) by a child process
 * of its own (`linescope-bpf push FILE URL`), so that sampling never waits for a server.
 */
#ifndef LS_ROTATE_H
#define LS_ROTATE_H

#include <limits.h>
#include <stdbool.h>
#include <sys/types.h>

struct ls_rotate_file {
	char path[PATH_MAX];
	pid_t pusher; /* its push child, 0: none running */
};

struct ls_rotate {
	const char *base;		  /* --profile, whose name the intervals' names extend */
	const char *push, *name, *tenant; /* --push URL, --name and --tenant, or NULL */
	unsigned keep;			  /* --keep: closed profiles kept (0: all) */
	struct ls_rotate_file *files;	  /* closed profiles still on disk, oldest first */
	unsigned nfiles, cap;
	unsigned pushed, push_failed; /* push children that delivered / did not */
	unsigned removed;	      /* profiles removed for --keep */
	int dirfd; /* their directory, opened once: a link swapped in later is not followed */
};

/* 0, or -errno when --keep's directory cannot be opened (logged). */
int ls_rotate__init(struct ls_rotate *r, const char *base, const char *push, const char *name,
		    const char *tenant, unsigned keep);
/* The path of an interval starting now (wall clock): NAME-YYYYmmddTHHMMSSZ.lsprof into buf. */
int ls_rotate__path(const struct ls_rotate *r, char *buf, size_t len);
/* A profile of an interval is closed: push it (--push), then apply --keep. */
void ls_rotate__closed(struct ls_rotate *r, const char *path);
/* Collects push children that ended; with wait, waits for every one. */
void ls_rotate__reap(struct ls_rotate *r, bool wait);
void ls_rotate__release(struct ls_rotate *r);

#endif
