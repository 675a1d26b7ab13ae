/* SPDX-License-Identifier: MIT */
/* Tests: writes text to DIR/NAME (replacing it) and sets its mode; 0 or -errno. */
#ifndef LS_TEST_WRITE_FILE_H
#define LS_TEST_WRITE_FILE_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>

static inline int ls_test_write_file(const char *dir, const char *name, const char *text,
				     mode_t mode)
{
	char path[PATH_MAX];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ok = fputs(text, f) >= 0;
	ok &= fclose(f) == 0;
	if (!ok)
		return -EIO;
	return chmod(path, mode) ? -errno : 0;
}

#endif
