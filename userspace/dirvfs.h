/* SPDX-License-Identifier: MIT */
/*
 * An SQLite VFS that takes a path through a directory descriptor, /proc/self/fd/N/NAME, as it is.
 * The default VFS resolves that link to the directory's name, and names can be swapped by whoever
 * owns a directory on the way; kept as given, the database, its -journal, -wal and -shm are all
 * opened in the directory the descriptor holds.
 */
#ifndef LS_DIRVFS_H
#define LS_DIRVFS_H

#include <stddef.h>

#define LS_DIRVFS_NAME "linescope-dirfd"

/* Registers the VFS once. 0 or -errno. */
int ls_dirvfs__register(void);
/* "/proc/self/fd/<dirfd>/<name>" into buf. */
void ls_dirvfs__path(int dirfd, const char *name, char *buf, size_t len);

#endif
