// SPDX-License-Identifier: MIT
/* /proc readers and target memory access. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>
#include "asuser.h"
#include "credcache.h"
#include "procfs.h"

static int read_small(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;
	ssize_t n, total = 0;

	if (fd < 0)
		return -errno;
	while ((size_t)total < len - 1) {
		n = read(fd, buf + total, len - 1 - total);
		if (n < 0) {
			err = -errno;
			close(fd);
			return err;
		}
		if (n == 0)
			break;
		total += n;
	}
	close(fd);
	buf[total] = 0;
	return total;
}

int ls_procfs__stat(pid_t pid, struct ls_procstat *st)
{
	char path[64], buf[4096], *p, *close_paren;
	int n;

	memset(st, 0, sizeof(*st));
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	n = read_small(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ESRCH ? -ENOENT : n;
	/* comm may contain spaces and parentheses: it ends at the last ')' */
	p = strchr(buf, '(');
	close_paren = strrchr(buf, ')');
	if (!p || !close_paren || close_paren < p)
		return -EINVAL;
	snprintf(st->comm, sizeof(st->comm), "%.*s", (int)(close_paren - p - 1), p + 1);
	p = close_paren + 2;
	st->state = *p;
	/* fields after comm: state(3) ppid(4) ... starttime(22) */
	for (int field = 3; field <= 22 && p; field++) {
		if (field == 4)
			st->ppid = atoi(p);
		else if (field == 22)
			st->start_ticks = strtoull(p, NULL, 10);
		p = strchr(p, ' ');
		if (p)
			p++;
	}
	st->nspid = pid;
	st->nslevel = 0;
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small(path, buf, sizeof(buf)) > 0) {
		char *l = strstr(buf, "\nNSpid:");

		if (l) {
			/* the last value is the pid in the innermost namespace */
			char *end = strchr(l + 1, '\n'), *last = NULL;

			if (end)
				*end = 0;
			for (p = l + 7; *p; p++)
				if (isdigit((unsigned char)*p) && (p[-1] == ' ' || p[-1] == '\t')) {
					st->nslevel += last != NULL;
					last = p;
				}
			if (last)
				st->nspid = atoi(last);
		}
	}
	return 0;
}

int ls_procfs__cmdline(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = read_small(path, buf, len);
	if (n < 0)
		return n;
	while (n > 0 && buf[n - 1] == 0)
		n--;
	for (int i = 0; i < n; i++)
		if (buf[i] == 0)
			buf[i] = ' ';
	buf[n] = 0;
	return n;
}

int ls_procfs__cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], text[4096], *line, *save = NULL;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", pid);
	n = read_small(path, text, sizeof(text));
	if (n < 0)
		return n;
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		if (!strncmp(line, "0::", 3))
			return snprintf(buf, len, "%s", line + 3);
	return -ENOENT;
}

int ls_procfs__link(pid_t pid, const char *name, char *buf, size_t len)
{
	char path[64];
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	n = readlink(path, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return n;
}

void ls_procfs__resolve(pid_t pid, const char *path, char *buf, size_t len)
{
	if (path[0] == '/')
		snprintf(buf, len, "/proc/%d/root%s", pid, path);
	else
		snprintf(buf, len, "/proc/%d/cwd/%s", pid, path);
}

/* path with prefix/ cut off, or NULL when it is not under prefix ("/" is everything's prefix) */
static const char *under(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	if (!strcmp(prefix, "/"))
		return path;
	if (strncmp(path, prefix, n) || (path[n] != '/' && path[n]))
		return NULL;
	return path[n] ? path + n : "/";
}

/* path in pid's root, opened with c's rights */
static int open_in_root(pid_t pid, const struct ls_creds *c, const char *path, int flags)
{
	char dir[64];
	int rootfd, fd;

	snprintf(dir, sizeof(dir), "/proc/%d/root", pid);
	rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	/* in its root: absolute symlinks and ".." stay inside, as they do for the process */
	fd = ls_asuser__open(c, rootfd, path, O_RDONLY | O_NONBLOCK | flags,
			     RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS, LS_OPEN_REGULAR);
	close(rootfd);
	return fd;
}

static int open_file(pid_t pid, const char *path, enum ls_path_view view, int flags)
{
	char root[PATH_MAX], cwd[PATH_MAX], in_root[PATH_MAX * 2];
	const char *p = path, *c;
	struct ls_creds creds;
	int err;

	if (!path[0])
		return -ENOENT;
	if (view == LS_VIEW_OURS || path[0] != '/') {
		err = ls_procfs__link(pid, "root", root, sizeof(root));
		if (err < 0)
			return err;
	}
	if (view == LS_VIEW_OURS) {
		/* a chrooted target's maps name files by our root: cut its root off */
		p = under(path, root);
		if (!p)
			return -ENOENT;
	} else if (path[0] != '/') {
		err = ls_procfs__link(pid, "cwd", cwd, sizeof(cwd));
		if (err < 0)
			return err;
		c = under(cwd, root);
		if (!c)
			return -ENOENT; /* a cwd outside its root: nothing we could name safely */
		snprintf(in_root, sizeof(in_root), "%s/%s", c, path);
		p = in_root;
	}
	err = ls_credcache__of_pid(pid, &creds);
	if (err)
		return err;
	return open_in_root(pid, &creds, p, flags);
}

int ls_procfs__identify(pid_t pid, const char *path, struct stat *st)
{
	struct open_how how = {.flags = O_PATH | O_CLOEXEC,
			       .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS};
	char dir[64];
	int rootfd, fd, err;

	if (path[0] != '/')
		return -EINVAL;
	snprintf(dir, sizeof(dir), "/proc/%d/root", pid);
	rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	fd = syscall(SYS_openat2, rootfd, path, &how, sizeof(how));
	err = fd < 0 ? -errno : fstat(fd, st) ? -errno : S_ISREG(st->st_mode) ? 0 : -EINVAL;
	if (fd >= 0)
		close(fd);
	close(rootfd);
	return err;
}

int ls_procfs__open_file(pid_t pid, const char *path, enum ls_path_view view)
{
	return open_file(pid, path, view, 0);
}

int ls_procfs__open_as(pid_t pid, const struct ls_creds *c, const char *path)
{
	return path[0] == '/' ? open_in_root(pid, c, path, 0) : -EINVAL;
}

/* The rest of fd, at most max bytes (-EFBIG beyond), NUL-terminated; closes fd. */
static int slurp(int fd, size_t max, char **out, size_t *len)
{
	size_t total = 0, cap = 0;
	char *buf = NULL, *v;
	ssize_t n;
	int err = 0;

	for (;;) {
		if (total + 1 >= cap) {
			cap = cap ? cap * 2 : 65536;
			if (cap > max + 2)
				cap = max + 2;
			v = realloc(buf, cap);
			if (!v) {
				err = -ENOMEM;
				break;
			}
			buf = v;
		}
		n = read(fd, buf + total, cap - 1 - total);
		if (n < 0) {
			err = -errno;
			break;
		}
		if (n == 0)
			break;
		total += n;
		if (total > max) {
			err = -EFBIG;
			break;
		}
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	if (!buf && !(buf = malloc(1)))
		return -ENOMEM;
	buf[total] = 0;
	*out = buf;
	*len = total;
	return 0;
}

int ls_procfs__read_file(pid_t pid, const char *path, unsigned how, size_t max, char **out,
			 size_t *len)
{
	int fd = open_file(pid, path, LS_VIEW_TARGET, how & LS_READ_NOFOLLOW ? O_NOFOLLOW : 0);

	return fd < 0 ? fd : slurp(fd, max, out, len);
}

int ls_procfs__read_file_kept(pid_t pid, const char *path, unsigned how, size_t max, char **out,
			      size_t *len, int *kept)
{
	int fd = open_file(pid, path, LS_VIEW_TARGET, how & LS_READ_NOFOLLOW ? O_NOFOLLOW : 0), dfd;

	if (fd == -ESRCH && *kept >= 0)
		fd = *kept, *kept = -1; /* gone: what it could open while it ran, read once more */
	else if (fd < 0)
		return fd;
	dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (dfd < 0) {
		close(fd);
		return -errno;
	}
	if (*kept >= 0)
		close(*kept);
	*kept = fd;
	/* the kept descriptor and dfd share the offset: from the start, each time */
	if (lseek(dfd, 0, SEEK_SET) < 0) {
		close(dfd);
		return -errno;
	}
	return slurp(dfd, max, out, len);
}

int ls_procfs__argv(pid_t pid, char *buf, size_t len)
{
	char path[64];
	int n;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
	n = read_small(path, buf, len);
	if (n > 0 && buf[n - 1])
		buf[n++] = 0; /* truncated in an argument (read_small left room for it) */
	return n;
}

int ls_procfs__environ(pid_t pid, char **out, size_t *len)
{
	int fd = ls_procfs__open_link(pid, "environ");

	return fd < 0 ? fd : slurp(fd, LS_ENVIRON_MAX, out, len);
}

int ls_procfs__open_link(pid_t pid, const char *name)
{
	struct ls_creds creds;
	char path[128];
	int err;

	err = ls_credcache__of_pid(pid, &creds);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/%s", pid, name);
	return ls_asuser__open(&creds, AT_FDCWD, path, O_RDONLY, 0, LS_OPEN_REGULAR);
}

int ls_procfs__open_mapped(pid_t pid, const struct ls_vma *v)
{
	char name[64];
	int fd;

	/* map_files names the very file mapped, deleted or not; its path is only the fallback */
	snprintf(name, sizeof(name), "map_files/%lx-%lx", v->start, v->end);
	fd = ls_procfs__open_link(pid, name);
	return fd >= 0 ? fd : ls_procfs__open_file(pid, v->path, LS_VIEW_OURS);
}

int ls_procfs__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return -EFAULT; /* partial read: the range crosses into unmapped memory */
	return -errno;
}

int ls_procfs__write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len)
{
	struct iovec local = {.iov_base = (void *)buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n;

	if (!addr)
		return -EFAULT;
	n = process_vm_writev(pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (n >= 0)
		return -EFAULT;
	return -errno;
}

bool ls_procfs__alive(pid_t pid)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d", pid);
	return access(path, F_OK) == 0;
}

int ls_procfs__thread_cpu(pid_t pid, pid_t tid, uint64_t *ns)
{
	char path[96];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/schedstat", pid, tid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*ns = v;
	return 0;
}

/* Calls fn(ctx, id) for each numeric entry of a /proc directory; stops at fn's first error. */
static int each_id(const char *path, int (*fn)(void *ctx, pid_t id), void *ctx)
{
	struct dirent *d;
	int err = 0;
	DIR *dir;

	dir = opendir(path);
	if (!dir)
		return -errno;
	while (!err && (d = readdir(dir))) {
		char *end;
		long id = strtol(d->d_name, &end, 10);

		if (*end || id <= 0 || id > INT32_MAX)
			continue;
		err = fn(ctx, (pid_t)id);
	}
	closedir(dir);
	return err;
}

struct thread_cb {
	void (*fn)(void *ctx, pid_t tid);
	void *ctx;
};

static int one_thread(void *ctx, pid_t tid)
{
	const struct thread_cb *cb = ctx;

	cb->fn(cb->ctx, tid);
	return 0;
}

int ls_procfs__each_thread(pid_t pid, void (*fn)(void *ctx, pid_t tid), void *ctx)
{
	struct thread_cb cb = {fn, ctx};
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/task", pid);
	return each_id(path, one_thread, &cb);
}

int ls_procfs__each_process(int (*fn)(void *ctx, pid_t pid), void *ctx)
{
	return each_id("/proc", fn, ctx);
}

int ls_procmaps__load(pid_t pid, struct ls_procmaps *maps)
{
	char path[64], *line = NULL;
	size_t cap = 0, alloc = 0;
	FILE *f;
	int err = 0;

	maps->vmas = NULL;
	maps->n = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (getline(&line, &cap, f) > 0) {
		struct ls_vma v = {};
		int pos = 0;
		char *p;

		if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu %n", &v.start, &v.end, v.perms,
			   &v.offset, &v.dev_major, &v.dev_minor, &v.inode, &pos) < 7)
			continue;
		p = line + pos;
		p[strcspn(p, "\n")] = 0;
		v.path = strdup(p);
		if (!v.path) {
			err = -ENOMEM;
			break;
		}
		if (maps->n == alloc) {
			struct ls_vma *nv;

			alloc = alloc ? alloc * 2 : 64;
			nv = realloc(maps->vmas, alloc * sizeof(*nv));
			if (!nv) {
				free(v.path);
				err = -ENOMEM;
				break;
			}
			maps->vmas = nv;
		}
		maps->vmas[maps->n++] = v;
	}
	free(line);
	fclose(f);
	if (err)
		ls_procmaps__free(maps);
	return err;
}

void ls_procmaps__free(struct ls_procmaps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		free(maps->vmas[i].path);
	free(maps->vmas);
	maps->vmas = NULL;
	maps->n = 0;
}

const struct ls_vma *ls_procmaps__find(const struct ls_procmaps *maps, uint64_t addr)
{
	size_t lo = 0, hi = maps->n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (addr < maps->vmas[mid].start)
			hi = mid;
		else if (addr >= maps->vmas[mid].end)
			lo = mid + 1;
		else
			return &maps->vmas[mid];
	}
	return NULL;
}
