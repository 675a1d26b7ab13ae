/* SPDX-License-Identifier: MIT */
/* Tests and benches: reads a whole file, NUL-terminated. NULL with errno set when it cannot. */
#ifndef LS_TEST_READ_FILE_H
#define LS_TEST_READ_FILE_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static inline char *ls_test_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	long n = -1;
	int err = 0;

	*len = 0;
	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) || (n = ftell(f)) < 0 || fseek(f, 0, SEEK_SET))
		err = errno;
	else if (!(buf = malloc(n + 1)))
		err = ENOMEM;
	else if (fread(buf, 1, n, f) != (size_t)n)
		err = EIO;
	fclose(f);
	if (err) {
		free(buf);
		errno = err;
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
}

#endif
