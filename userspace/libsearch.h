/* SPDX-License-Identifier: MIT */
/*
 * The file the dynamic loader will map for a library an executable needs, found before the
 * executable runs: a launched shared build's libpython can then be probed from its interpreter's
 * start, as an executable interpreter is known at its exec.
 */
#ifndef LS_LIBSEARCH_H
#define LS_LIBSEARCH_H

#include <stddef.h>

/*
 * The library exe's DT_NEEDED names that starts with prefix, searched as glibc's ld.so does:
 * DT_RPATH (when there is no DT_RUNPATH), ld_library_path (NULL: none; ignored for a set-id
 * executable), DT_RUNPATH, /etc/ld.so.cache, the default directories. $ORIGIN is exe's
 * directory; an entry with another dynamic string token is skipped. The first regular file
 * found, resolved, in out: 0, or -ENOENT (none found, no such library needed), -ENAMETOOLONG,
 * or an error opening exe.
 */
int ls_libsearch__find(const char *exe, const char *prefix, const char *ld_library_path, char *out,
		       size_t len);

#endif
