// SPDX-License-Identifier: MIT
/*
 * A kernel another kernel started (nbclient or papermill run from a notebook) names no notebook:
 * the notebooks of its working directory, listed and read with its rights, are tried, and the
 * first with a code cell hashing to a sampled cell's name becomes its notebook.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "asuser.h"
#include "ipycell.h"
#include "notebooks.h"
#include "procfs.h"

#define CWD_MAX_NOTEBOOKS 64
#define CWD_MAX_SCANS	  3

/* Whether a notebook file in the kernel's working directory has a code cell hashing to hash. */
static int cwd_has(const struct ls_notebook *nb, const char *name, uint32_t hash)
{
	struct ls_ipynb k;
	char why[160];
	bool has = false;
	int err = ls_ipynb__load(nb->pid, name, NULL, &k, why, sizeof(why));

	if (err)
		return err == -ENOMEM ? err : 0;
	for (size_t i = 0; i < k.n && !has; i++)
		has = ls_ipycell__murmur2(k.cells[i].text, k.cells[i].len, LS_IPYCELL_SEED) == hash;
	ls_ipynb_release(&k);
	return has;
}

int ls_notebooks__adopt_from_cwd(struct ls_notebook *nb, uint32_t hash, bool input)
{
	char link[64], cwd[PATH_MAX];
	struct ls_creds cr;
	struct dirent *de;
	int fd, err = 0, tried = 0;
	DIR *d;

	if (nb->path || !nb->by_kernel || input || nb->cwd_scans >= CWD_MAX_SCANS)
		return 0;
	nb->cwd_scans++;
	snprintf(link, sizeof(link), "/proc/%d/cwd", nb->pid);
	if (ls_creds__of_pid(nb->pid, &cr) ||
	    ls_procfs__link(nb->pid, "cwd", cwd, sizeof(cwd)) <= 0)
		return 0;
	fd = ls_asuser__open(&cr, AT_FDCWD, link, O_RDONLY, 0, LS_OPEN_DIR);
	if (fd < 0 || !(d = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while (!err && tried < CWD_MAX_NOTEBOOKS && (de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= 6 || strcmp(de->d_name + len - 6, ".ipynb") || de->d_name[0] == '.')
			continue;
		tried++;
		err = cwd_has(nb, de->d_name, hash);
		if (err == 1) {
			nb->nb_relpath = strdup(de->d_name);
			if (asprintf(&nb->path, "%s/%s", cwd, de->d_name) < 0)
				nb->path = NULL;
			err = nb->path && nb->nb_relpath ? 1 : -ENOMEM;
		}
	}
	closedir(d);
	if (err == 1)
		nb->loaded_round = UINT_MAX; /* read it now */
	return err;
}
