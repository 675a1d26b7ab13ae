/* SPDX-License-Identifier: MIT */
/*
 * Which executable a launched command's exec will run, found before it runs: its interpreter can
 * then be known to BPF at the exec, so that none of the command's first samples go unwalked.
 */
#ifndef LS_LAUNCH_EXE_H
#define LS_LAUNCH_EXE_H

#include <stddef.h>

#include <limits.h>

#define LS_LAUNCH_EXES 2

/*
 * The files that exec'ing argv makes the process's executable, in order: argv[0] looked up in
 * PATH as execvp does; for a script, its "#!" interpreter instead, and when that is env, the
 * program env runs (looked up in PATH too). Symbolic links resolved. How many (1 or 2), or
 * -ENOENT when it cannot be told (the exec itself says why, if it fails).
 */
int ls_launch_exes(char *const *argv, char (*out)[PATH_MAX]);

#endif
