// SPDX-License-Identifier: MIT
/* Which executable a launched command's exec will run (see launch_exe.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "launch_exe.h"

/* execvp's search when PATH is unset (glibc: confstr(_CS_PATH)) */
#define DEFAULT_PATH "/bin:/usr/bin"

static int resolved(const char *path, char *buf, size_t len)
{
	char real[PATH_MAX];
	struct stat st;

	if (!realpath(path, real) || stat(real, &st) || !S_ISREG(st.st_mode) ||
	    access(real, X_OK) || strlen(real) >= len)
		return -ENOENT;
	memcpy(buf, real, strlen(real) + 1);
	return 0;
}

/* name as execvp finds it: as given when it has a slash, else the first PATH entry that runs */
static int search(const char *name, char *buf, size_t len)
{
	const char *path = getenv("PATH"), *p, *end;
	char cand[PATH_MAX];

	if (!*name)
		return -ENOENT;
	if (strchr(name, '/'))
		return resolved(name, buf, len);
	for (p = path ? path : DEFAULT_PATH;; p = end + 1) {
		int n;

		end = strchrnul(p, ':');
		/* an empty entry is the current directory */
		n = snprintf(cand, sizeof(cand), "%.*s%s%s", (int)(end - p), p, end == p ? "" : "/",
			     name);
		if (n > 0 && (size_t)n < sizeof(cand) && resolved(cand, buf, len) == 0)
			return 0;
		if (!*end)
			return -ENOENT;
	}
}

/* the next blank-separated word of s (advanced past it), NUL-terminated in place; NULL if none */
static char *word(char **s)
{
	char *w = *s + strspn(*s, " \t"), *e;

	if (!*w)
		return NULL;
	e = w + strcspn(w, " \t");
	*s = *e ? e + 1 : e;
	*e = 0;
	return w;
}

int ls_launch_exes(char *const *argv, char (*out)[PATH_MAX])
{
	char line[256], *s, *interp, *arg;
	const char *base;
	ssize_t n;
	int fd, err;

	err = search(argv[0], out[0], PATH_MAX);
	if (err)
		return err;
	fd = open(out[0], O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -ENOENT;
	n = read(fd, line, sizeof(line) - 1);
	close(fd);
	if (n < 2 || line[0] != '#' || line[1] != '!')
		return 1; /* an ELF file (or one the kernel refuses: the exec says so) */
	line[n] = 0;
	line[strcspn(line, "\n")] = 0;
	s = line + 2;
	interp = word(&s);
	if (!interp || resolved(interp, out[0], PATH_MAX))
		return -ENOENT;
	arg = word(&s);
	base = strrchr(out[0], '/') + 1;
	if (strcmp(base, "env") || !arg)
		return 1;
	/* #!/usr/bin/env [-S] NAME: env looks NAME up in PATH and execs it */
	if (!strcmp(arg, "-S"))
		arg = word(&s);
	else if (!strncmp(arg, "-S", 2))
		arg += 2;
	if (!arg || arg[0] == '-' || strchr(arg, '='))
		return 1; /* other options, or variables set: not followed */
	return search(arg, out[1], PATH_MAX) ? 1 : 2;
}
