/* SPDX-License-Identifier: MIT */
/*
 * cgroup v2 paths by cgroup id. An exec record names its process's cgroup by id; its path was
 * read from /proc/PID/cgroup at every exec (500 processes starting: 4-5% of the collector). A v2
 * cgroup cannot be renamed (rename(2) fails with EPERM) and its id is not reused within a boot,
 * so a path known for an id stays that id's. A path is kept only once the directory it names is
 * found to have that id (its inode number): a process moved between its exec and the read
 * names another cgroup, whose path is given but not kept.
 * Embedded object: ls_cgpaths_init/_release. Not thread-safe.
 */
#ifndef LS_CGPATHS_H
#define LS_CGPATHS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include "hashmap.h"

struct ls_cgpaths {
	struct ls_hashmap ids; /* cgroup id -> index in paths */
	char **paths;
	size_t n, cap;
	char *mount; /* the v2 hierarchy's mount point; NULL until looked for */
	int mount_err;
	uint64_t hits; /* paths given from what was kept */
};

void ls_cgpaths_init(struct ls_cgpaths *c);
void ls_cgpaths_release(struct ls_cgpaths *c);

/*
 * The v2 path of cgroup id, where process pid was when its record was taken: kept, or read from
 * /proc/PID/cgroup into buf. NULL when it cannot be read (pid gone, no v2 hierarchy). The string
 * is c's or buf, valid until the next call.
 */
const char *ls_cgpaths__of(struct ls_cgpaths *c, pid_t pid, uint64_t id, char *buf, size_t len);

#endif
