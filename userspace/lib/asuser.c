// SPDX-License-Identifier: MIT
/* Files opened with another user's filesystem credentials, in a thread that holds them. */
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/openat2.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include "asuser.h"

static int parse_ids(const char *line, unsigned long *out, int max)
{
	char *end;
	int n = 0;

	while (n < max) {
		while (*line == ' ' || *line == '\t')
			line++;
		if (*line < '0' || *line > '9')
			break;
		errno = 0;
		out[n] = strtoul(line, &end, 10);
		if (errno || out[n] > UINT32_MAX - 1)
			return -EINVAL;
		n++;
		line = end;
	}
	return n;
}

int ls_creds__of_pid(pid_t pid, struct ls_creds *c)
{
	char path[64], *line = NULL;
	unsigned long ids[LS_CREDS_MAX_GROUPS];
	bool have_uid = false, have_gid = false;
	size_t cap = 0;
	FILE *f;
	int n, err = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	f = fopen(path, "re");
	if (!f)
		return errno == ENOENT ? -ESRCH : -errno;
	memset(c, 0, sizeof(*c));
	while (!err && getline(&line, &cap, f) > 0) {
		/* Uid: real effective saved filesystem; the last one decides what it may open */
		if (!strncmp(line, "Uid:", 4)) {
			n = parse_ids(line + 4, ids, 4);
			err = n == 4 ? 0 : -EINVAL;
			c->fsuid = ids[3];
			have_uid = true;
		} else if (!strncmp(line, "Gid:", 4)) {
			n = parse_ids(line + 4, ids, 4);
			err = n == 4 ? 0 : -EINVAL;
			c->fsgid = ids[3];
			have_gid = true;
		} else if (!strncmp(line, "Groups:", 7)) {
			n = parse_ids(line + 7, ids, LS_CREDS_MAX_GROUPS);
			if (n < 0)
				err = n;
			for (int i = 0; i < n; i++)
				c->groups[i] = ids[i];
			c->ngroups = n < 0 ? 0 : n;
		}
	}
	free(line);
	fclose(f);
	if (!err && (!have_uid || !have_gid))
		err = -EINVAL;
	return err;
}

int ls_creds__of_user(uid_t uid, gid_t gid, struct ls_creds *c)
{
	struct passwd *pw = getpwuid(uid);
	int n = LS_CREDS_MAX_GROUPS;

	memset(c, 0, sizeof(*c));
	c->fsuid = uid;
	c->fsgid = gid;
	if (pw && getgrouplist(pw->pw_name, gid, c->groups, &n) >= 0) {
		c->ngroups = n;
	} else {
		c->groups[0] = gid;
		c->ngroups = 1;
	}
	return 0;
}

struct open_req {
	const struct ls_creds *c;
	int dirfd, flags;
	const char *path;
	uint64_t resolve;
	enum ls_open_want want;
	int result;
	bool connect; /* a UNIX socket to connect to, not a file to open (socket_as_caller) */
};

static int take_creds(const struct ls_creds *c)
{
	/* setfsuid/setfsgid return the previous id: ask again to know whether it took */
	if (syscall(SYS_setgroups, (size_t)c->ngroups, c->groups))
		return -errno;
	syscall(SYS_setfsgid, c->fsgid);
	if ((gid_t)syscall(SYS_setfsgid, -1) != c->fsgid)
		return -EPERM;
	syscall(SYS_setfsuid, c->fsuid);
	if ((uid_t)syscall(SYS_setfsuid, -1) != c->fsuid)
		return -EPERM;
	return 0;
}

static int open_as_caller(const struct open_req *r)
{
	/* O_NOFOLLOW: a symlink is looked at itself, and refused as not what was wanted */
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | (r->flags & O_NOFOLLOW),
			       .resolve = r->resolve};
	char self[64];
	struct stat st;
	int pfd, fd;

	pfd = syscall(SYS_openat2, r->dirfd, r->path, &how, sizeof(how));
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, &st)) {
		fd = -errno;
		goto out;
	}
	if ((r->want == LS_OPEN_REGULAR && !S_ISREG(st.st_mode)) ||
	    (r->want == LS_OPEN_STREAM && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode)) ||
	    (r->want == LS_OPEN_DIR && !S_ISDIR(st.st_mode))) {
		fd = -EINVAL;
		goto out;
	}
	/* reopening the O_PATH descriptor checks the permission of the file it names, as us */
	snprintf(self, sizeof(self), "/proc/self/fd/%d", pfd);
	fd = open(self, (r->flags & ~O_NOFOLLOW) | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		fd = -errno;
out:
	close(pfd);
	return fd;
}

/*
 * The socket itself, as O_PATH, if we may connect to it: looked up with our fs ids, and writable
 * by them (AT_EACCESS: the check uses the fs ids rather than the real ones)
 */
static int socket_as_caller(const struct open_req *r)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC | O_NOFOLLOW, .resolve = r->resolve};
	char self[64];
	struct stat st;
	int fd = syscall(SYS_openat2, AT_FDCWD, r->path, &how, sizeof(how)), err;

	if (fd < 0)
		return -errno;
	snprintf(self, sizeof(self), "/proc/self/fd/%d", fd);
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISSOCK(st.st_mode))
		err = -EINVAL;
	else if (faccessat(AT_FDCWD, self, W_OK, AT_EACCESS))
		err = -errno;
	else
		return fd;
	close(fd);
	return err;
}

/*
 * The opener: one thread that takes each request's credentials before it runs it (all of them:
 * ids and groups, so nothing of another request's stays), for the life of the process. A thread per open
 * cost 45-55 us on a 2-vCPU VM, a few dozen times for each new process of a user's job; a
 * request to this one costs two wake-ups. Linux keeps credentials per thread, and the raw
 * syscalls keep glibc from spreading them: no other thread ever holds these.
 */
static struct {
	pthread_mutex_t call; /* one request at a time */
	pthread_mutex_t lock; /* the hand-over below */
	pthread_cond_t cond;
	struct open_req *req; /* waiting to be run; NULL once it has been */
	pid_t owner;	      /* the process that started the thread: a fork's child has none */
} opener = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, NULL,
	    0};

/* Whether a and b are the same fs ids and groups */
static bool same_creds(const struct ls_creds *a, const struct ls_creds *b)
{
	return a->fsuid == b->fsuid && a->fsgid == b->fsgid && a->ngroups == b->ngroups &&
	       a->ngroups >= 0 && a->ngroups <= LS_CREDS_MAX_GROUPS &&
	       !memcmp(a->groups, b->groups, a->ngroups * sizeof(a->groups[0]));
}

static void *opener_thread(void *arg)
{
	struct ls_creds held; /* what this thread holds, when have */
	bool have = false;
	struct open_req *r;

	(void)arg;
	pthread_mutex_lock(&opener.lock);
	for (;;) {
		while (!opener.req)
			pthread_cond_wait(&opener.cond, &opener.lock);
		r = opener.req;
		pthread_mutex_unlock(&opener.lock);
		/*
		 * the same ids as the last request's are not taken again: each of the five calls
		 * replaces the thread's credentials (commit_creds), and a job's opens come from one
		 * user; a failed take leaves them unknown
		 */
		r->result = have && same_creds(&held, r->c) ? 0 : take_creds(r->c);
		have = !r->result;
		if (have)
			held = *r->c;
		if (!r->result)
			r->result = r->connect ? socket_as_caller(r) : open_as_caller(r);
		pthread_mutex_lock(&opener.lock);
		opener.req = NULL;
		pthread_cond_broadcast(&opener.cond);
	}
	return NULL;
}

static int opener_started(void)
{
	sigset_t all, old;
	pthread_t t;
	int err;

	if (opener.owner == getpid())
		return 0;
	/* no signal of ours is ever handled there (it blocks them all from its start) */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&t, NULL, opener_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		return -err;
	pthread_detach(t);
	opener.owner = getpid();
	return 0;
}

/* Runs r in the opener, with r->c's credentials, or as we are for a root target */
static int as_user(struct open_req *r)
{
	int err;

	if (!r->c || (r->c->fsuid == 0 && geteuid() == 0))
		return r->connect ? socket_as_caller(r) : open_as_caller(r);
	pthread_mutex_lock(&opener.call);
	err = opener_started();
	if (!err) {
		pthread_mutex_lock(&opener.lock);
		opener.req = r;
		pthread_cond_broadcast(&opener.cond);
		while (opener.req)
			pthread_cond_wait(&opener.cond, &opener.lock);
		pthread_mutex_unlock(&opener.lock);
		err = r->result;
	}
	pthread_mutex_unlock(&opener.call);
	return err;
}

int ls_asuser__unix_socket(const struct ls_creds *c, const char *path)
{
	struct open_req r = {.c = c, .path = path, .result = -EIO, .connect = true};

	return as_user(&r);
}

int ls_asuser__open(const struct ls_creds *c, int dirfd, const char *path, int flags,
		    uint64_t resolve, enum ls_open_want want)
{
	struct open_req r = {c, dirfd, flags, path, resolve, want, -EIO, false};

	/*
	 * Root opens for a root target as itself: its groups cannot restrict what root reads. Else
	 * a thread of its own, whose credentials end with it: ours are never changed. (Waiting for
	 * it to be scheduled costs a time slice on a busy machine, so root targets skip it.)
	 */
	return as_user(&r);
}
