// SPDX-License-Identifier: MIT
/*
 * -p --trace: exact line counts for processes already running, which cannot be restarted with
 * python-usdt on their path.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "log.h"
#include "procfs.h"
#include "python.h"
#include "remote_exec.h"
#include "session_int.h"

#define PY_REMOTE_EXEC_HEX 0x030e0000 /* CPython 3.14: PEP 768 sys.remote_exec() */

/* Whether the site holds linescope_usdt for this CPython minor version (the loader imports it). */
static bool has_build(const struct session *s, uint32_t version_hex)
{
	char want[64];
	struct dirent *d;
	bool found = false;
	DIR *dir;

	snprintf(want, sizeof(want), "linescope_usdt.cpython-%u%u", version_hex >> 24,
		 (version_hex >> 16) & 0xff);
	dir = opendir(s->trace_site);
	while (dir && !found && (d = readdir(dir)))
		found = !strncmp(d->d_name, want, strlen(want)) &&
			(d->d_name[strlen(want)] == '-' || d->d_name[strlen(want)] == 't');
	if (dir)
		closedir(dir);
	return found;
}

void lss_remove_loaders(struct session *s)
{
	struct dirent *d;
	DIR *dir;

	if (!s->load_dir[0])
		return;
	dir = opendir(s->load_dir);
	while (dir && (d = readdir(dir)))
		if (d->d_name[0] != '.')
			unlinkat(dirfd(dir), d->d_name, 0);
	if (dir)
		closedir(dir);
	rmdir(s->load_dir);
	s->load_dir[0] = 0;
}

/*
 * The script sys.remote_exec() has process pid run: in a directory of our own under /tmp (root's,
 * mode 711, so a target of any user can read a file whose name it is given and nobody can plant
 * one), never in a tree a user owns. Removed with the directory at the end of the session.
 */
static int write_loader(struct session *s, pid_t pid, char *path, size_t len)
{
	char src[8192];
	int fd, err;
	ssize_t n;

	err = ls_remote_exec__loader_source(s->trace_site, src, sizeof(src));
	if (err)
		return err;
	if (!s->load_dir[0]) {
		snprintf(s->load_dir, sizeof(s->load_dir), "/tmp/linescope-load-XXXXXX");
		if (!mkdtemp(s->load_dir)) {
			s->load_dir[0] = 0;
			return -errno;
		}
		if (chmod(s->load_dir, 0711)) {
			err = -errno;
			lss_remove_loaders(s);
			return err;
		}
	}
	snprintf(path, len, "%s/load-%d.py", s->load_dir, pid);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	n = write(fd, src, strlen(src));
	err = n == (ssize_t)strlen(src) ? 0 : n < 0 ? -errno : -EIO;
	if (close(fd) && !err)
		err = -errno;
	return err;
}

/*
 * -p --trace: a running process cannot be restarted with python-usdt on its path. 3.14+ loads it
 * through PEP 768 remote execution; a CPython with its own SDT probes (Debian's) is counted with
 * those; anything else is profiled by sampling, with a note saying why it has no hits.
 */
void lss_trace_running(struct session *s, pid_t pid)
{
	const struct ls_pyinfo *pi = ls_recorder__python(s->rec, pid);
	char note[256], path[PATH_MAX + 64];
	int err;

	if (!pi)
		return;
	if (pi->version_hex >= PY_REMOTE_EXEC_HEX && !has_build(s, pi->version_hex)) {
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable: %.100s has no linescope_usdt build for "
			 "CPython %u.%u (make pyusdt PYUSDT_PYTHONS=...)",
			 s->trace_site, pi->version_hex >> 24, (pi->version_hex >> 16) & 0xff);
	} else if (pi->version_hex >= PY_REMOTE_EXEC_HEX) {
		char script[128];

		err = write_loader(s, pid, script, sizeof(script));
		if (!err)
			err = ls_remote_exec__send(pid, script);
		if (!err)
			return; /* its state message says whether it took */
		snprintf(
			note, sizeof(note),
			"exact line tracing unavailable: remote loading into CPython %s failed (%s)",
			pi->version, strerror(err < 0 ? -err : EIO));
	} else if (pi->usdt && s->nnative < LSS_MAX_NATIVE) {
		ls_procfs__resolve(pid, pi->path, path, sizeof(path));
		if (!ls_loader__attach_native_trace(s->loader, pid, path)) {
			s->native_pids[s->nnative++] = pid;
			ls_info("pid %d: exact line counts from CPython's own probes (slow)", pid);
			return;
		}
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable: cannot attach to "
			 "CPython's probes");
	} else {
		snprintf(note, sizeof(note),
			 "exact line tracing unavailable for a running CPython %s without SDT "
			 "probes: start it under linescope-bpf --trace -- or import linescope_usdt",
			 pi->version);
	}
	ls_warn(0, "pid %d: %s; its samples still count", pid, note);
	ls_recorder__trace_note(s->rec, pid, note);
}

void lss_trace_running_cb(void *ctx, pid_t pid, pid_t ppid)
{
	lss_trace_running(ctx, pid);
}
