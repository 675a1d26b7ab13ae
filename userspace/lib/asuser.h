/* SPDX-License-Identifier: MIT */
/*
 * Opening files with another user's rights. We run as root on behalf of users we must not trust:
 * a target's files are opened with its filesystem uid, gid and groups, and an output that is a
 * device or a FIFO with the invoking user's. A thread of its own (the opener, started at the first
 * such open) takes each request's credentials (Linux keeps them per thread; raw syscalls, so that
 * glibc does not spread them to every thread) and opens the file; the descriptor it returns is
 * then read with nothing more to check.
 */
#ifndef LS_ASUSER_H
#define LS_ASUSER_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define LS_CREDS_MAX_GROUPS 256

struct ls_creds {
	uid_t fsuid;
	gid_t fsgid;
	int ngroups;
	gid_t groups[LS_CREDS_MAX_GROUPS];
};

enum ls_open_want {
	LS_OPEN_REGULAR = 1, /* only a regular file: looked at through O_PATH, then opened */
	LS_OPEN_STREAM = 2,  /* only a character device or FIFO (an output written through) */
	LS_OPEN_DIR = 3,     /* only a directory (opened O_RDONLY | O_DIRECTORY to be listed) */
};

/* The filesystem credentials of process pid (/proc/PID/status Uid, Gid and Groups). */
int ls_creds__of_pid(pid_t pid, struct ls_creds *c);
/* A user's: uid, gid and the groups of its passwd entry, if it has one. */
int ls_creds__of_user(uid_t uid, gid_t gid, struct ls_creds *c);

/*
 * openat2(dirfd, path, flags, resolve) as c. want says what the file must be: anything else is
 * -EINVAL (opened as O_PATH first, so that a FIFO or device is never opened by mistake; with
 * O_NOFOLLOW in flags a symlink is -EINVAL too). A NULL c opens it with our own rights. The new
 * descriptor, or -errno (-EACCES/-EPERM: c may not).
 */
int ls_asuser__open(const struct ls_creds *c, int dirfd, const char *path, int flags,
		    uint64_t resolve, enum ls_open_want want);
/*
 * The UNIX socket at path (not through a symlink) as an O_PATH descriptor, when c may connect to
 * it: found with c's rights and writable by c. Connecting to /proc/self/fd/N then reaches that
 * very socket, so a root collector never connects where c could not. The descriptor, or -errno
 * (-EINVAL: not a socket).
 */
int ls_asuser__unix_socket(const struct ls_creds *c, const char *path);

#endif
