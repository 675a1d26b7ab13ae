// SPDX-License-Identifier: MIT
/* cgroup v2 paths by id, kept once checked against the directory's inode (cgpaths.h). */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "array.h"
#include "cgpaths.h"
#include "procfs.h"
#include "targets.h"

void ls_cgpaths_init(struct ls_cgpaths *c)
{
	memset(c, 0, sizeof(*c));
	ls_hashmap_init(&c->ids);
}

void ls_cgpaths_release(struct ls_cgpaths *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->paths[i]);
	free(c->paths);
	free(c->mount);
	ls_hashmap_release(&c->ids);
	memset(c, 0, sizeof(*c));
}

/* Whether path (relative to the v2 mount) is the directory of cgroup id: its inode number. */
static bool is_cgroup(struct ls_cgpaths *c, const char *path, uint64_t id)
{
	char full[PATH_MAX + 8], mnt[PATH_MAX];
	struct stat st;

	if (!c->mount && !c->mount_err) {
		c->mount_err = ls_cgroup__v2_mount(mnt, sizeof(mnt));
		if (!c->mount_err && !(c->mount = strdup(mnt)))
			c->mount_err = -ENOMEM;
	}
	if (!c->mount)
		return false;
	if (snprintf(full, sizeof(full), "%s%s", c->mount, path) >= (int)sizeof(full))
		return false;
	return !stat(full, &st) && S_ISDIR(st.st_mode) && (uint64_t)st.st_ino == id;
}

const char *ls_cgpaths__of(struct ls_cgpaths *c, pid_t pid, uint64_t id, char *buf, size_t len)
{
	uint64_t idx;
	char **v;

	if (id && ls_hashmap__get(&c->ids, id, &idx)) {
		c->hits++;
		return c->paths[idx];
	}
	if (ls_procfs__cgroup(pid, buf, len) <= 0)
		return NULL;
	if (!id || buf[0] != '/' || !is_cgroup(c, buf, id))
		return buf; /* moved since, or not a path of the v2 mount: not kept */
	v = ls_array_grow(c->paths, &c->cap, c->n, sizeof(*v), 16);
	if (!v)
		return buf;
	c->paths = v;
	c->paths[c->n] = strdup(buf);
	if (!c->paths[c->n] || ls_hashmap__set(&c->ids, id, c->n)) {
		free(c->paths[c->n]);
		return buf;
	}
	return c->paths[c->n++];
}
