// SPDX-License-Identifier: MIT
/* The default SQLite VFS, but with paths through a directory descriptor left unresolved. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sqlite3.h>
#include "dirvfs.h"

static sqlite3_vfs vfs;
static int (*base_full_pathname)(sqlite3_vfs *, const char *, int, char *);
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int registered = -EIO;

static int full_pathname(sqlite3_vfs *v, const char *name, int n, char *out)
{
	if (strncmp(name, "/proc/self/fd/", 14))
		return base_full_pathname(v, name, n, out);
	if ((int)strlen(name) >= n)
		return SQLITE_CANTOPEN;
	memcpy(out, name, strlen(name) + 1);
	return SQLITE_OK;
}

static void do_register(void)
{
	sqlite3_vfs *base;

	/* before SQLite initialises (the first profile opened): its allocation statistics, which no
	 * one reads, lock a global mutex at each allocation, 7% of a flush's writes at 10,000
	 * threads (SQLITE_MISUSE, and no harm, if it initialised already) */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	base = sqlite3_vfs_find(NULL);
	if (!base)
		return;
	vfs = *base;
	vfs.zName = LS_DIRVFS_NAME;
	vfs.pNext = NULL;
	base_full_pathname = base->xFullPathname;
	vfs.xFullPathname = full_pathname;
	registered = sqlite3_vfs_register(&vfs, 0) == SQLITE_OK ? 0 : -EIO;
}

int ls_dirvfs__register(void)
{
	pthread_once(&once, do_register);
	return registered;
}

void ls_dirvfs__path(int dirfd, const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/self/fd/%d/%s", dirfd, name);
}
