/* SPDX-License-Identifier: MIT */
/*
 * Everything read from /proc about the targets: the process list, identity, command line, maps,
 * threads and the target's memory, and a target's files opened inside its root. The credentials
 * in /proc/PID/status are asuser.c's, and our own /proc/self links are outfile.c's and dirvfs.c's.
 */
#ifndef LS_PROCFS_H
#define LS_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ls_procstat {
	pid_t ppid;
	pid_t nspid;	      /* pid in the innermost pid namespace (== pid when not namespaced) */
	unsigned nslevel;     /* how deep that namespace is: 0 for the host's (NSpid values - 1) */
	uint64_t start_ticks; /* start time in clock ticks after boot (/proc/PID/stat field 22) */
	char comm[16];
	char state;
};

/* -ENOENT when the process does not exist (or is a zombie with no status). */
int ls_procfs__stat(pid_t pid, struct ls_procstat *st);

/* NUL-separated argv joined with spaces into buf (truncated to len-1). Returns length or -errno. */
int ls_procfs__cmdline(pid_t pid, char *buf, size_t len);
/* The process's cgroup v2 path (the "0::" line of /proc/PID/cgroup); its length or -errno. */
int ls_procfs__cgroup(pid_t pid, char *buf, size_t len);

/* readlink of /proc/PID/<name> ("exe", "cwd", "root"). Returns length or -errno. */
int ls_procfs__link(pid_t pid, const char *name, char *buf, size_t len);

/*
 * Path through which this tool can open a file the process names `path`: absolute paths go
 * through /proc/PID/root (so containers work), relative ones through /proc/PID/cwd. Only for
 * the kernel's own use (uprobe attachment); files we read go through ls_procfs__open_file().
 */
void ls_procfs__resolve(pid_t pid, const char *path, char *buf, size_t len);

enum ls_path_view {
	LS_VIEW_TARGET, /* as the process names it (co_filename): in its root, from its cwd */
	LS_VIEW_OURS,	/* a path as /proc/PID/maps shows it to us (a chroot's prefix included) */
};

/*
 * Opens a regular file of process pid read-only with the process's own rights (ls_asuser):
 * resolved inside its root, never through a /proc magic link. fd, or -errno: -EACCES/-EPERM when
 * the process could not read it either, -EINVAL when it is not a regular file.
 */
int ls_procfs__open_file(pid_t pid, const char *path, enum ls_path_view view);
/*
 * ls_procfs__open_file() of an absolute path in pid's root with c's rights, not pid's: those of a
 * process that has ended, whose root was pid's (recorder_view.c). -EINVAL for a relative path.
 */
struct ls_creds;
int ls_procfs__open_as(pid_t pid, const struct ls_creds *c, const char *path);
/*
 * The identity (fstat) of the regular file at absolute path in pid's root, looked up as we are:
 * never a read of it. Whether a text read earlier with the same rights is still that file's.
 */
struct stat;
int ls_procfs__identify(pid_t pid, const char *path, struct stat *st);
/*
 * The whole regular file pid names path (as LS_VIEW_TARGET), opened as ls_procfs__open_file()
 * does, at most max bytes: 0 with *out (NUL-terminated, the caller frees it) and *len, or -errno
 * (-EFBIG when larger than max). LS_READ_NOFOLLOW: a symlink as the last component is -EINVAL.
 */
#define LS_READ_NOFOLLOW 1u
int ls_procfs__read_file(pid_t pid, const char *path, unsigned how, size_t max, char **out,
			 size_t *len);
/*
 * ls_procfs__read_file() for a file pid keeps writing until it ends (an IPython history: the last
 * cells at exit). *kept (-1 at first) holds the descriptor of the last read, which the caller
 * closes. Once pid is gone (-ESRCH), the file is read from that descriptor, opened with pid's rights
 * while it ran, and *kept is left as it was.
 */
int ls_procfs__read_file_kept(pid_t pid, const char *path, unsigned how, size_t max, char **out,
			      size_t *len, int *kept);
/* argv as the kernel keeps it, NUL-separated (and NUL-terminated) into buf; length or -errno. */
int ls_procfs__argv(pid_t pid, char *buf, size_t len);
/* The environment of pid, read with its rights (NUL-separated, at most LS_ENVIRON_MAX). */
#define LS_ENVIRON_MAX (1 << 20)
int ls_procfs__environ(pid_t pid, char **out, size_t *len);
/* /proc/PID/<name> ("exe", "map_files/START-END": the very file mapped), opened the same way. */
int ls_procfs__open_link(pid_t pid, const char *name);

struct ls_vma;
/* The file mapped at v: through map_files, else by its path inside the root; fd or -errno. */
int ls_procfs__open_mapped(pid_t pid, const struct ls_vma *v);

/* Reads len bytes of the target's memory at addr. 0, or -EFAULT/-ESRCH/-EPERM. */
int ls_procfs__read_mem(pid_t pid, uint64_t addr, void *buf, size_t len);
/* Writes len bytes into the target's memory at addr (PEP 768 remote execution). The same errors. */
int ls_procfs__write_mem(pid_t pid, uint64_t addr, const void *buf, size_t len);

/* Whether the thread/process with this id still exists. */
bool ls_procfs__alive(pid_t pid);

/* CPU time thread tid of pid has used, as the scheduler accounts it (its schedstat). */
int ls_procfs__thread_cpu(pid_t pid, pid_t tid, uint64_t *ns);

/* Calls fn(ctx, tid) for each thread of pid. Returns 0 or -errno. */
int ls_procfs__each_thread(pid_t pid, void (*fn)(void *ctx, pid_t tid), void *ctx);
/* Calls fn(ctx, pid) for each process of the machine; stops at, and returns, fn's first error. */
int ls_procfs__each_process(int (*fn)(void *ctx, pid_t pid), void *ctx);

struct ls_vma {
	uint64_t start, end, offset;
	uint64_t inode;
	unsigned dev_major, dev_minor;
	char perms[5];
	char *path; /* "" for anonymous mappings */
};

struct ls_procmaps {
	struct ls_vma *vmas;
	size_t n;
};

/* Snapshot of /proc/PID/maps. Free with ls_procmaps__free(). */
int ls_procmaps__load(pid_t pid, struct ls_procmaps *maps);
void ls_procmaps__free(struct ls_procmaps *maps);
const struct ls_vma *ls_procmaps__find(const struct ls_procmaps *maps, uint64_t addr);

#endif
