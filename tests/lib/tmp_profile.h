/* SPDX-License-Identifier: MIT */
/* Tests: a profile at a new temporary path, and its removal with SQLite's -wal and -shm files. */
#ifndef LS_TEST_TMP_PROFILE_H
#define LS_TEST_TMP_PROFILE_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* path: at least 64 bytes; name: a short word that says which test made it */
static inline void ls_test_profile_path(char *path, const char *name)
{
	snprintf(path, 64, "/tmp/ls-%.16s-XXXXXX", name);
	close(mkstemp(path));
}

static inline void ls_test_profile_remove(const char *path)
{
	static const char *const sfx[] = {"", "-wal", "-shm"};
	char p[96];

	for (int i = 0; i < 3; i++) {
		snprintf(p, sizeof(p), "%s%s", path, sfx[i]);
		unlink(p);
	}
}

/*
 * The cmocka group fixture most profile tests use: `path` is a new temporary profile path for the
 * group (setup) and is removed with its -wal and -shm files afterwards (teardown).
 */
#define LS_TEST_PROFILE_FIXTURE(name)             \
	static char path[64];                     \
                                                  \
	static int setup(void **state)            \
	{                                         \
		(void)state;                      \
		ls_test_profile_path(path, name); \
		return 0;                         \
	}                                         \
                                                  \
	static int teardown(void **state)         \
	{                                         \
		(void)state;                      \
		ls_test_profile_remove(path);     \
		return 0;                         \
	}

#endif
