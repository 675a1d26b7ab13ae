/* SPDX-License-Identifier: MIT */
/*
 * One recording run: select targets, load BPF, consume records until the targets are gone, the
 * duration passes or a signal arrives, then write and close the profile. Rendering it is main's.
 */
#ifndef LS_SESSION_H
#define LS_SESSION_H

#include "cli.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

/* What a recording leaves for the report: set whatever the run returns. */
struct ls_session_result {
	bool recorded;	     /* the profile is written and closed, BPF detached: render it */
	bool command_failed; /* the launched command failed: its status says more than ours */
	int uid, gid;	     /* the outputs' owner (-1: leave as created) */
	uint64_t samples;
	unsigned processes;
	double elapsed_s;
	char profile[PATH_MAX]; /* the profile written (--rotate: the last interval's) */
	bool pushed;		/* --push is done (--rotate pushed every interval) */
	unsigned push_failed;	/* of those, not delivered */
};

/*
 * Runs a recording. Returns the process exit status: the launched command's status (128+signal
 * when it was killed), 0 for -p/--cgroup runs, 1 on a runtime error (logged).
 */
int ls_session__run(const struct ls_opts *opts, int argc, char **argv,
		    struct ls_session_result *res);

#endif
