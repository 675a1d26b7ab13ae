/* SPDX-License-Identifier: MIT */
/*
 * Files written as root for the user who ran sudo, in directories other users may control.
 * Nothing at the output path is ever followed or truncated: the file is created under a new
 * random name in the same directory (O_CREAT|O_EXCL|O_NOFOLLOW, relative to a descriptor of the
 * directory), given to SUDO_UID:SUDO_GID through its descriptor, and renamed into place. A
 * character device or FIFO already at the path is written through instead, opened with the
 * invoking user's rights; "-" and links to our own descriptors (/dev/stdout, /dev/fd/N, which the
 * user's shell opened) are written to that descriptor.
 */
#ifndef LS_OUTFILE_H
#define LS_OUTFILE_H

#include <limits.h>
#include <stdbool.h>

enum ls_out_kind {
	LS_OUT_ANY,	/* a report: streams written through */
	LS_OUT_REGULAR, /* a profile: only ever a regular file */
};

struct ls_outfile {
	int dirfd;		/* the directory the file goes into; -1 when written through */
	int fd;			/* the file being written */
	bool is_stdout;		/* fd is our standard output, not ours to close */
	char *path;		/* as given, for messages */
	char *base;		/* its name in dirfd */
	char tmp[NAME_MAX + 1]; /* the temporary name until committed; "" when there is none */
};

/* The invoking user's ids when run as root under sudo (SUDO_UID/SUDO_GID), else -1 and -1. */
void ls_outfile__owner(int *uid, int *gid);

/*
 * Creates the file (or opens the stream) for path, owned by uid:gid when uid >= 0. 0, or
 * -errno after one message naming path.
 */
int ls_outfile__open(struct ls_outfile *f, const char *path, enum ls_out_kind kind, int uid,
		     int gid);
/* Renames the temporary file into place (nothing for a stream); descriptors stay open. */
int ls_outfile__commit(struct ls_outfile *f);
/* Closes it; a file never committed is removed, with the SQLite journal named after it. */
void ls_outfile__release(struct ls_outfile *f);

/* Everything ls_outfile__open() would check, and nothing left behind: 0 or -errno logged. */
int ls_outfile__check(const char *path, enum ls_out_kind kind);
/* Whether a and b name the same file, whether it exists yet or not. */
bool ls_outfile__same(const char *a, const char *b);

#endif
