// SPDX-License-Identifier: MIT
/* Output files created safely under a random name and renamed into place, or streams written
 * through. */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>
#include "asuser.h"
#include "log.h"
#include "outfile.h"

static int parse_id(const char *s)
{
	char *end;
	long v;

	if (!s || !*s)
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	/* (uid_t)-1 means "unchanged" to fchown: never a user's id */
	if (errno || *end || v < 0 || v >= 0xffffffffL || v > INT_MAX)
		return -1;
	return (int)v;
}

void ls_outfile__owner(int *uid, int *gid)
{
	*uid = *gid = -1;
	if (geteuid() != 0)
		return;
	*uid = parse_id(getenv("SUDO_UID"));
	*gid = parse_id(getenv("SUDO_GID"));
	if (*uid < 0)
		*gid = -1;
	else if (*gid < 0)
		*gid = *uid;
}

/* dirname and basename of path, without touching it */
static int split(const char *path, char **dir, char **base)
{
	char *d = strdup(path), *b = strdup(path);

	if (!d || !b) {
		free(d);
		free(b);
		return -ENOMEM;
	}
	*dir = strdup(dirname(d));
	*base = strdup(basename(b));
	free(d);
	free(b);
	if (!*dir || !*base) {
		free(*dir);
		free(*base);
		return -ENOMEM;
	}
	return 0;
}

/* N when s names one of our own descriptors: /proc/self/fd/N, /dev/fd/N, /proc/<our pid>/fd/N */
static int own_fd(const char *s)
{
	char mine[64];
	const char *n = NULL;
	char *end;
	long v;

	snprintf(mine, sizeof(mine), "/proc/%d/fd/", getpid());
	if (!strncmp(s, "/proc/self/fd/", 14))
		n = s + 14;
	else if (!strncmp(s, "/proc/thread-self/fd/", 21))
		n = s + 21;
	else if (!strncmp(s, "/dev/fd/", 8))
		n = s + 8;
	else if (!strncmp(s, mine, strlen(mine)))
		n = s + strlen(mine);
	if (!n || *n < '0' || *n > '9')
		return -1;
	v = strtol(n, &end, 10);
	return *end || v > INT_MAX ? -1 : (int)v;
}

/*
 * /dev/stdout and its kind: a path whose links lead to one of our descriptors, which the user's
 * shell opened for us. Its number, or -1. Links are read, not followed, and only a few deep.
 */
static int fd_link(const char *path)
{
	char cur[PATH_MAX], next[PATH_MAX], *slash;
	ssize_t n;

	snprintf(cur, sizeof(cur), "%s", path);
	for (int hop = 0; hop < 8; hop++) {
		if (own_fd(cur) >= 0)
			return own_fd(cur);
		n = readlink(cur, next, sizeof(next) - 1);
		if (n < 0)
			return -1;
		next[n] = 0;
		if (next[0] != '/' && (slash = strrchr(cur, '/'))) {
			slash[1] = 0;
			if (strlen(cur) + n >= sizeof(cur))
				return -1;
			strcat(cur, next);
		} else {
			snprintf(cur, sizeof(cur), "%s", next);
		}
	}
	return -1;
}

/* An existing character device or FIFO at path (following links, which point to where it goes). */
static bool is_stream(const char *path)
{
	struct stat st;

	return !stat(path, &st) && (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode));
}

static int open_stream(struct ls_outfile *f, int uid, int gid)
{
	struct ls_creds c;
	int fd;

	/* the invoking user's rights: root's would let anyone's FIFO take our output */
	if (uid >= 0)
		ls_creds__of_user(uid, gid, &c);
	fd = ls_asuser__open(uid >= 0 ? &c : NULL, AT_FDCWD, f->path, O_WRONLY, 0, LS_OPEN_STREAM);
	if (fd < 0)
		return ls_err(fd, "cannot write %s: %s", f->path,
			      fd == -EINVAL ? "it changed while being opened" : strerror(-fd));
	f->fd = fd;
	return 0;
}

static int open_dir(struct ls_outfile *f)
{
	char *dir;
	struct stat st;
	int err;

	err = split(f->path, &dir, &f->base);
	if (err)
		return err;
	if (!strcmp(f->base, "/") || !strcmp(f->base, ".") || !strcmp(f->base, "..")) {
		free(dir);
		return ls_err(-EISDIR, "cannot write %s: it is a directory", f->path);
	}
	f->dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err = f->dirfd < 0 ? -errno : 0;
	free(dir);
	if (err)
		return ls_err(err, "cannot write %s: %s", f->path,
			      err == -ENOENT ? "no such directory" : strerror(-err));
	if (!fstatat(f->dirfd, f->base, &st, AT_SYMLINK_NOFOLLOW) && S_ISDIR(st.st_mode))
		return ls_err(-EISDIR, "cannot write %s: it is a directory", f->path);
	return 0;
}

static int create_tmp(struct ls_outfile *f)
{
	unsigned int r;

	for (int i = 0; i < 16; i++) {
		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			return ls_err(-errno, "cannot write %s: no random name: %s", f->path,
				      strerror(errno));
		snprintf(f->tmp, sizeof(f->tmp), ".%.200s.%08x", f->base, r);
		f->fd = openat(f->dirfd, f->tmp, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			       0666);
		if (f->fd >= 0)
			return 0;
		if (errno != EEXIST)
			break;
	}
	f->tmp[0] = 0;
	return ls_err(-errno, "cannot write %s: %s", f->path, strerror(errno));
}

int ls_outfile__open(struct ls_outfile *f, const char *path, enum ls_out_kind kind, int uid,
		     int gid)
{
	int err;

	memset(f, 0, sizeof(*f));
	f->dirfd = f->fd = -1;
	f->path = strdup(path);
	if (!f->path)
		return -ENOMEM;
	if (kind == LS_OUT_ANY && !strcmp(path, "-")) {
		f->fd = STDOUT_FILENO;
		f->is_stdout = true;
		return 0;
	}
	if (kind == LS_OUT_ANY && fd_link(path) >= 0) {
		f->fd = fcntl(fd_link(path), F_DUPFD_CLOEXEC, 3);
		err = f->fd < 0 ? ls_err(-errno, "cannot write %s: %s", path, strerror(errno)) : 0;
	} else if (is_stream(path)) {
		err = kind == LS_OUT_ANY ? open_stream(f, uid, gid)
					 : ls_err(-EINVAL,
						  "cannot write %s: a profile must be a "
						  "regular file",
						  path);
	} else {
		err = open_dir(f);
		if (!err)
			err = create_tmp(f);
		if (!err && uid >= 0 && fchown(f->fd, uid, gid))
			err = ls_err(-errno, "cannot give %s to uid %d: %s", path, uid,
				     strerror(errno));
	}
	if (err)
		ls_outfile__release(f);
	return err;
}

int ls_outfile__commit(struct ls_outfile *f)
{
	if (!f->tmp[0])
		return 0;
	if (renameat(f->dirfd, f->tmp, f->dirfd, f->base))
		return ls_err(-errno, "cannot write %s: %s", f->path, strerror(errno));
	f->tmp[0] = 0;
	return 0;
}

void ls_outfile__release(struct ls_outfile *f)
{
	if (f->tmp[0] && f->dirfd >= 0) {
		char journal[NAME_MAX + 16];

		unlinkat(f->dirfd, f->tmp, 0);
		snprintf(journal, sizeof(journal), "%s-journal", f->tmp);
		unlinkat(f->dirfd, journal, 0);
	}
	if (f->fd >= 0 && !f->is_stdout)
		close(f->fd);
	if (f->dirfd >= 0)
		close(f->dirfd);
	free(f->path);
	free(f->base);
	memset(f, 0, sizeof(*f));
	f->dirfd = f->fd = -1;
}

int ls_outfile__check(const char *path, enum ls_out_kind kind)
{
	struct ls_outfile f;
	int err;

	if (kind == LS_OUT_ANY && (!strcmp(path, "-") || fd_link(path) >= 0 || is_stream(path)))
		return 0; /* opened at the end: a FIFO would wait for its reader */
	err = ls_outfile__open(&f, path, kind, -1, -1);
	if (!err)
		ls_outfile__release(&f);
	return err;
}

/* realpath of the directory, then the name as given: a file that does not exist yet has one */
static char *canonical(const char *path)
{
	char *dir, *base, *real, *out = NULL;

	if (split(path, &dir, &base))
		return NULL;
	real = realpath(dir, NULL);
	if (real && asprintf(&out, "%s/%s", real, base) < 0)
		out = NULL;
	free(real);
	free(dir);
	free(base);
	return out;
}

bool ls_outfile__same(const char *a, const char *b)
{
	struct stat sa, sb;
	char *ca, *cb;
	bool same;

	if (!strcmp(a, "-") || !strcmp(b, "-"))
		return false;
	/* a link at an output is replaced, not followed: two links are two outputs */
	if (!lstat(a, &sa) && !lstat(b, &sb))
		return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
	ca = canonical(a);
	cb = canonical(b);
	same = ca && cb ? !strcmp(ca, cb) : !strcmp(a, b);
	free(ca);
	free(cb);
	return same;
}
