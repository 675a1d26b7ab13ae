/* SPDX-License-Identifier: MIT */
/*
 * One recording run: select targets, load BPF, consume records until the targets are gone, the
 * duration passes or a signal arrives, then write the profile and the report.
 */
#ifndef LS_SESSION_H
#define LS_SESSION_H

#include "cli.h"

/*
 * Runs a recording. Returns the process exit status: the launched command's status (128+signal
 * when it was killed), 0 for -p/--cgroup runs, 1 on a runtime error (logged).
 */
int ls_session__run(const struct ls_opts *opts, int argc, char **argv);

#endif
