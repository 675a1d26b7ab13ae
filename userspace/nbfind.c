// SPDX-License-Identifier: MIT
/*
 * Where a kernel's cells can be found: its history database (its argv and environment) and the
 * notebook file it runs (the .ipynb its launcher names, or its Jupyter server's sessions), all read
 * with the rights of the processes that name them. What is unavailable becomes the notebook's note.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "jpserver.h"
#include "notebooks.h"
#include "procfs.h"

#define ARGV_MAX       65536
#define LAUNCHER_DEPTH 4 /* nbconvert → kernel, or papermill → (a shell) → kernel */

void ls_notebook__note(struct ls_notebook *nb, const char *why)
{
	size_t old = nb->note ? strlen(nb->note) : 0;
	char *v;

	/* enough said: a note each round of a changing error would grow unbounded */
	if (old + strlen(why) > LS_NB_MAX_NOTE || (nb->note && strstr(nb->note, why)))
		return;
	v = realloc(nb->note, old + strlen(why) + 3);
	if (!v)
		return;
	sprintf(v + old, "%s%s", old ? "; " : "", why);
	nb->note = v;
	nb->dirty = true;
}

/* The value of NAME= in a NUL-separated block, or NULL */
static const char *env_value(const char *env, size_t len, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = env; p < env + len; p += strlen(p) + 1)
		if (!strncmp(p, name, n) && p[n] == '=')
			return p + n + 1;
	return NULL;
}

int ls_nbfind__history(struct ls_notebook *nb)
{
	static const char opt[] = "--HistoryManager.hist_file";
	char argv[ARGV_MAX], path[PATH_MAX];
	const char *val = NULL, *dir;
	char *env = NULL;
	size_t envlen = 0;
	int n, err;

	n = ls_procfs__argv(nb->pid, argv, sizeof(argv));
	for (const char *p = argv; n > 0 && p < argv + n; p += strlen(p) + 1) {
		if (!strncmp(p, opt, sizeof(opt) - 1) && p[sizeof(opt) - 1] == '=')
			val = p + sizeof(opt);
		else if (!strcmp(p, opt) && p + strlen(p) + 1 < argv + n)
			val = p + strlen(p) + 1;
	}
	if (val && !strcmp(val, ":memory:")) {
		ls_notebook__note(
			nb, "the kernel keeps its history in memory only (" /* nbclient's default */
			    "--HistoryManager.hist_file=:memory:)");
		return 0;
	}
	if (val && val[0]) {
		nb->history = strdup(val);
		return nb->history ? 0 : -ENOMEM;
	}
	err = ls_procfs__environ(nb->pid, &env, &envlen);
	if (err) {
		ls_notebook__note(nb,
				  "the kernel's environment is unreadable: no history database");
		return err == -ENOMEM ? err : 0;
	}
	if ((dir = env_value(env, envlen, "IPYTHONDIR")) && dir[0] == '/')
		snprintf(path, sizeof(path), "%s/profile_default/history.sqlite", dir);
	else if ((dir = env_value(env, envlen, "HOME")) && dir[0] == '/')
		snprintf(path, sizeof(path), "%s/.ipython/profile_default/history.sqlite", dir);
	else
		path[0] = 0;
	free(env);
	if (!path[0]) {
		ls_notebook__note(nb, "the kernel has no HOME or IPYTHONDIR: no history database");
		return 0;
	}
	nb->history = strdup(path);
	return nb->history ? 0 : -ENOMEM;
}

static bool runs_notebooks(const char *arg)
{
	const char *base = strrchr(arg, '/');

	base = base ? base + 1 : arg;
	return strstr(base, "nbconvert") || strstr(base, "nbclient") || strstr(base, "papermill") ||
	       !strcmp(base, "jupyter-execute");
}

/* The notebook of a Jupyter server's kernel, from the server's sessions */
static int find_server_notebook(struct ls_notebook *nb)
{
	char why[512] = "";
	int err = ls_jpserver__notebook(nb->pid, &nb->path, &nb->launcher, why, sizeof(why));

	if (err == -ENOMEM)
		return err;
	if (err == -ENOENT && !why[0]) {
		ls_notebook__note(
			nb, "no nbconvert, nbclient, papermill or Jupyter server above the kernel: "
			    "notebook file unknown");
		return 0;
	}
	if (err) {
		nb->launcher = 0;
		ls_notebook__note(nb, why);
		return 0;
	}
	nb->nb_relpath = strdup(nb->path); /* absolute: the server's cwd does not matter */
	return nb->nb_relpath ? 0 : -ENOMEM;
}

/* Whether argv (n bytes) is an IPython kernel's: `python -m ipykernel_launcher -f ...` */
static bool is_kernel(const char *argv, int n)
{
	for (const char *p = argv; n > 0 && p < argv + n; p += strlen(p) + 1)
		if (strstr(p, "ipykernel_launcher") ||
		    (!strcmp(p, "ipykernel") && p > argv && !strcmp(p - 3, "-m")))
			return true;
	return false;
}

int ls_nbfind__notebook_file(struct ls_notebook *nb)
{
	char argv[ARGV_MAX];
	struct ls_procstat st;
	pid_t pid = nb->pid;

	for (int depth = 0; depth < LAUNCHER_DEPTH; depth++) {
		const char *found = NULL, *prev = "";
		bool launcher = false;
		int n;

		if (ls_procfs__stat(pid, &st) || st.ppid <= 1)
			break;
		pid = st.ppid;
		n = ls_procfs__argv(pid, argv, sizeof(argv));
		if (is_kernel(argv, n)) {
			/* nbclient or papermill run from a notebook: the launcher above is the
			 * parent notebook's, never this kernel's */
			nb->by_kernel = pid;
			ls_notebook__note(
				nb,
				"started by another kernel (nbclient or papermill in a notebook): "
				"its notebook is looked for in its working directory");
			return 0;
		}
		for (const char *p = argv; n > 0 && p < argv + n; prev = p, p += strlen(p) + 1) {
			size_t len = strlen(p);

			launcher = launcher || runs_notebooks(p) ||
				   (!strcmp(prev, "jupyter") &&
				    (!strcmp(p, "nbconvert") || !strcmp(p, "execute")));
			/* --output NAME names what is written, not what runs */
			if (!found && p[0] != '-' && len > 6 && !strcmp(p + len - 6, ".ipynb") &&
			    strcmp(prev, "--output") && strcmp(prev, "-o") &&
			    strcmp(prev, "--output-dir"))
				found = p;
		}
		if (!launcher)
			continue;
		if (!found) {
			ls_notebook__note(nb, "the notebook's launcher names no .ipynb");
			return 0;
		}
		nb->launcher = pid;
		nb->nb_relpath = strdup(found);
		nb->path = ls_nbfind__from_cwd(pid, found);
		return nb->nb_relpath && nb->path ? 0 : -ENOMEM;
	}
	return find_server_notebook(nb);
}

char *ls_nbfind__from_cwd(pid_t pid, const char *path)
{
	char cwd[PATH_MAX], *out;

	if (path[0] == '/' || ls_procfs__link(pid, "cwd", cwd, sizeof(cwd)) <= 0)
		return strdup(path);
	return asprintf(&out, "%s/%s", cwd, path) < 0 ? NULL : out;
}
