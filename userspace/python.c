// SPDX-License-Identifier: MIT
/*
 * Finds _PyRuntime in the executable or a libpython mapping, reads the version from the file
 * (Py_Version is a constant), and sets up the thread-state lookup. glibc keeps a thread's
 * pthread_getspecific slots inside struct pthread at fsbase; the offsets below hold for glibc
 * 2.26+ on x86_64 and are verified on each process before they are trusted.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include "elffile.h"
#include "log.h"
#include "monoclock.h"
#include "procfs.h"
#include "python.h"

#define GLIBC_SPECIFIC_1ST  0x310 /* offsetof(struct pthread, specific_1stblock) */
#define GLIBC_KEY_DATA_SIZE 16	  /* sizeof(struct pthread_key_data): seq, data */
#define GLIBC_KEY_DATA_DATA 8
#define GLIBC_SPECIFIC_2ND  (GLIBC_SPECIFIC_1ST + 32 * GLIBC_KEY_DATA_SIZE)

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static bool is_candidate(const char *path)
{
	const char *b = base_name(path);

	return !strncmp(b, "libpython", 9) || !strncmp(b, "python", 6);
}

/* Lowest mapping of the file: its start minus the first segment's vaddr is the load bias. */
static const struct ls_vma *first_mapping(const struct ls_procmaps *maps, const char *path)
{
	for (size_t i = 0; i < maps->n; i++)
		if (!strcmp(maps->vmas[i].path, path) && maps->vmas[i].offset == 0)
			return &maps->vmas[i];
	return NULL;
}

static void text_range(const struct ls_procmaps *maps, const char *path, struct ls_pyinfo *pi)
{
	for (size_t i = 0; i < maps->n; i++) {
		const struct ls_vma *v = &maps->vmas[i];

		if (strcmp(v->path, path) || v->perms[2] != 'x')
			continue;
		if (!pi->text_start || v->start < pi->text_start)
			pi->text_start = v->start;
		if (v->end > pi->text_end)
			pi->text_end = v->end;
	}
}

static bool uses_glibc(const struct ls_procmaps *maps)
{
	for (size_t i = 0; i < maps->n; i++)
		if (strstr(base_name(maps->vmas[i].path), "libc.so.6"))
			return true;
	return false;
}

/* pid-namespace depth of pid (0: the host's). */
static unsigned pidns_level(pid_t pid)
{
	struct ls_procstat st;

	return ls_procfs__stat(pid, &st) ? 0 : st.nslevel;
}

/* The file the interpreter lives in, as the kernel's exec record will name it. */
static void image_key(const struct stat *st, struct ls_image_key *k)
{
	memset(k, 0, sizeof(*k));
	/* the kernel's dev_t: major in the top 12 bits, minor in the low 20 */
	k->dev = ((uint64_t)major(st->st_dev) << 20) | minor(st->st_dev);
	k->ino = st->st_ino;
	k->mtime_sec = st->st_mtim.tv_sec;
	k->mtime_nsec = st->st_mtim.tv_nsec;
}

/*
 * st's change time, when a later write cannot leave it as it is: a file system that stamps
 * changes with the coarse clock gives two writes in one tick the same time, so a change time
 * within two ticks of now ({0, 0}: the build id is read at every exec) could hide the next write.
 * Called after the file's bytes were read.
 */
static struct timespec settled_ctime(const struct stat *st)
{
	struct timespec now, tick;
	int64_t age;

	if (clock_gettime(CLOCK_REALTIME, &now) || clock_getres(CLOCK_REALTIME_COARSE, &tick))
		return (struct timespec){0};
	age = (int64_t)(ls_timespec_ns(&now) - ls_timespec_ns(&st->st_ctim));
	if (age <= 2 * (int64_t)ls_timespec_ns(&tick))
		return (struct timespec){0};
	return st->st_ctim;
}

static void image_identity(const struct ls_elf *elf, struct ls_pyinfo *pi)
{
	struct stat st;

	pi->in_exe = false;
	pi->lib_start = 0;
	if (pi->shared && !ls_elf__stat(elf, &st) &&
	    !ls_elf__sym(elf, LS_LIB_START, &pi->lib_start, NULL) &&
	    !ls_elf__file_offset(elf, pi->lib_start, &pi->lib_start_off))
		image_key(&st, &pi->lib); /* its processes' starts can be probed (ls_lib_image) */
	else
		pi->lib_start = 0;
	if (pi->shared || ls_elf__stat(elf, &st))
		return;
	image_key(&st, &pi->image);
	pi->x_vaddr = ls_elf__exec_vaddr(elf);
	pi->build_id_len =
		ls_elf__build_id_at(elf, pi->build_id, sizeof(pi->build_id), &pi->build_id_off);
	pi->image_ctime = settled_ctime(&st);
	pi->in_exe = true;
}

bool ls_python__unchanged(const struct ls_pyinfo *pi, const struct timespec *ctime)
{
	return (ctime->tv_sec || ctime->tv_nsec) && ctime->tv_sec == pi->image_ctime.tv_sec &&
	       ctime->tv_nsec == pi->image_ctime.tv_nsec;
}

bool ls_python__same_build(pid_t pid, const struct ls_pyinfo *pi)
{
	uint8_t id[sizeof(pi->build_id)];
	struct ls_elf *elf;
	int fd;
	size_t n;

	if (!pi->build_id_len)
		return true;
	fd = ls_procfs__open_link(pid, "exe");
	if (fd < 0)
		return true;
	/*
	 * Every exec of a known image asks: its id's bytes where they were, not the whole file
	 * mapped and parsed again (a 7 MB interpreter's mapping and faults were a fifth of the
	 * collector's CPU with 500 processes starting)
	 */
	if (pi->build_id_off &&
	    pread(fd, id, pi->build_id_len, (off_t)pi->build_id_off) == (ssize_t)pi->build_id_len) {
		close(fd);
		return !memcmp(id, pi->build_id, pi->build_id_len);
	}
	if (ls_elf__open_fd(fd, &elf))
		return true;
	n = ls_elf__build_id(elf, id, sizeof(id));
	ls_elf__free(elf);
	return !n || (n == pi->build_id_len && !memcmp(id, pi->build_id, n));
}

void ls_python__rebase(const struct ls_pyinfo *pi, uint64_t start_code, struct ls_pyinfo *out)
{
	ls_python__move(pi, pi->dyn ? start_code - pi->x_vaddr : 0, out);
}

void ls_python__move(const struct ls_pyinfo *pi, uint64_t nb, struct ls_pyinfo *out)
{
	int64_t d = (int64_t)(nb - pi->bias);

	*out = *pi;
	out->bias = nb;
	out->runtime += d;
	if (out->text_end) { /* no executable mapping was seen: nothing to move */
		out->text_start += d;
		out->text_end += d;
	}
	ls_proc_move(&out->proc, d);
}

void ls_python__image(const struct ls_pyinfo *pi, struct ls_image *img)
{
	memset(img, 0, sizeof(*img));
	img->proc = pi->proc;
	ls_proc_move(&img->proc, -(int64_t)pi->bias);
	img->proc.gen = 0;
	img->x_vaddr = pi->x_vaddr;
	img->dyn = pi->dyn;
}

int ls_python__check_layout(const struct ls_pylayout *L)
{
	const uint16_t frame_offs[] = {L->frame_code, L->frame_previous, L->frame_instr};
	const uint16_t code_offs[] = {L->code_filename, L->code_qualname, L->code_linetable};

	for (size_t i = 0; i < sizeof(frame_offs) / sizeof(frame_offs[0]); i++)
		if (frame_offs[i] > LS_FRAME_WIN - 8)
			return -EINVAL;
	if (L->frame_owner >= LS_FRAME_WIN)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(code_offs) / sizeof(code_offs[0]); i++)
		if (code_offs[i] > LS_CODE_WIN - 8)
			return -EINVAL;
	if (L->code_firstlineno > LS_CODE_WIN - 4)
		return -EINVAL;
	/* the walker reads a str header as one 48-byte window */
	if (L->unicode_length > 40 || L->unicode_state > 44)
		return -EINVAL;
	return 0;
}

/* How the thread-state lookup finds a thread's state: glibc's TSD slots, else the thread list. */
static void set_tsd(struct ls_pyinfo *pi, bool glibc)
{
	pi->proc.tss_addr = pi->proc.tsd_base = pi->proc.tsd_stride = pi->proc.tsd_data =
		pi->proc.tsd_2nd = 0;
	if ((pi->ver.tstate_ways & LS_PY_TS_TSS_KEY) && pi->ver.runtime_tss_key != LS_PY_OFF_NONE &&
	    glibc) {
		/* Py_tss_t is {int _is_initialized; pthread_key_t _key;} */
		pi->proc.tss_addr = pi->runtime + pi->ver.runtime_tss_key - 4;
		pi->proc.tsd_mode = LS_TS_GLIBC_TSD;
		pi->proc.tsd_base = GLIBC_SPECIFIC_1ST;
		pi->proc.tsd_stride = GLIBC_KEY_DATA_SIZE;
		pi->proc.tsd_data = GLIBC_KEY_DATA_DATA;
		pi->proc.tsd_2nd = GLIBC_SPECIFIC_2ND;
	} else {
		pi->proc.tsd_mode = LS_TS_THREAD_LIST;
	}
}

/*
 * Fills pi from the interpreter file `path` (opened as elf) alone, at load bias 0, its
 * thread-state lookup not yet checked: what `images` needs before any process of the file runs,
 * and what setup_proc() moves to where a process maps it.
 */
static int setup_file(const char *path, struct ls_elf *elf, struct ls_pyinfo *pi, char *why,
		      size_t whylen)
{
	uint64_t runtime, code_type, verval, rtsize = 0;
	uint8_t blob[LS_PY_DEBUG_OFFSETS_MAX];
	uint32_t version = 0;
	int err, n;

	if (ls_elf__sym(elf, "_PyRuntime", &runtime, &rtsize))
		return -ENOENT;
	if (ls_elf__sym(elf, "Py_Version", &verval, NULL) ||
	    ls_elf__read(elf, verval, &version, sizeof(version))) {
		snprintf(why, whylen,
			 "CPython older than 3.11 in %s (no Py_Version); supported: 3.11 to 3.15",
			 path);
		return -ENOTSUP;
	}
	if (ls_elf__sym(elf, "PyCode_Type", &code_type, NULL)) {
		snprintf(why, whylen, "%s exports no PyCode_Type; unknown CPython build", path);
		return -ENOTSUP;
	}
	memset(pi, 0, sizeof(*pi));
	pi->version_hex = version;
	ls_pyversions__format(version, pi->version, sizeof(pi->version));
	/* 3.13+: _Py_DebugOffsets opens _PyRuntime, a static initializer: read it from the file */
	n = ls_pyversions__blob_size(version);
	if (n > (int)sizeof(blob) || (n > 0 && ls_elf__read(elf, runtime, blob, n)))
		n = 0;
	err = ls_pyversions__resolve(version, n > 0 ? blob : NULL, n > 0 ? n : 0, rtsize,
				     &pi->layout, &pi->ver);
	if (err) {
		snprintf(why, whylen, "%s", pi->ver.note);
		return -ENOTSUP;
	}
	if (ls_python__check_layout(&pi->layout)) {
		snprintf(why, whylen, "CPython %s layout exceeds the walker's windows",
			 pi->version);
		return -ENOTSUP;
	}
	pi->dyn = ls_elf__is_dyn(elf);
	snprintf(pi->path, sizeof(pi->path), "%s", path);
	pi->shared = !strncmp(base_name(path), "libpython", 9);
	pi->usdt = ls_elf__has_sdt(elf, "python");
	snprintf(pi->build, sizeof(pi->build), "%s%s%s", pi->shared ? "shared" : "static",
		 pi->dyn && !pi->shared ? ", PIE" : "", pi->usdt ? ", usdt" : "");
	pi->runtime = runtime;
	if (ls_elf__exec_range(elf, &pi->text_start, &pi->text_end))
		pi->text_start = pi->text_end = 0;
	image_identity(elf, pi);

	pi->proc.flags = LS_PF_PYTHON;
	pi->proc.runtime = pi->runtime;
	pi->proc.text_lo = pi->text_start;
	pi->proc.text_hi = pi->text_end;
	pi->proc.code_type = code_type;
	if (pi->ver.runtime_gil != LS_PY_OFF_NONE) {
		pi->proc.gil_lo = pi->runtime + pi->ver.runtime_gil;
		pi->proc.gil_hi = pi->proc.gil_lo + pi->ver.gil_size;
	}
	set_tsd(pi, ls_elf__needs(elf, "libc.so.6"));
	return 0;
}

/*
 * pi, from setup_file(), as process pid maps its file (maps): moved by the load bias (the file's
 * lowest PT_LOAD is at first_vaddr), its executable range and thread-state lookup from maps, the
 * lookup checked on a live thread. 0, or -EAGAIN with why when the file's base is not mapped.
 */
static int setup_proc(pid_t pid, const struct ls_procmaps *maps, uint64_t first_vaddr,
		      struct ls_pyinfo *pi, char *why, size_t whylen)
{
	const struct ls_vma *first = first_mapping(maps, pi->path);

	if (pi->ver.note[0]) /* a file alone: said when a process of it is found */
		ls_warn(0, "pid %d: %s", pid, pi->ver.note);
	if (pi->dyn) {
		if (!first) {
			snprintf(why, whylen, "no base mapping for %s", pi->path);
			return -EAGAIN;
		}
		ls_python__move(pi, first->start - first_vaddr, pi);
	}
	pi->text_start = pi->text_end = 0;
	text_range(maps, pi->path, pi);
	pi->proc.text_lo = pi->text_start;
	pi->proc.text_hi = pi->text_end;
	pi->proc.pidns_level = pidns_level(pid); /* BPF sets it at exec */
	set_tsd(pi, uses_glibc(maps));
	ls_python__verify_tsd(pid, pi);
	return 0;
}

/*
 * What one interpreter file holds (setup_file's result, whether it needs a libpython, its lowest
 * PT_LOAD), kept by the file's identity: every process of a shared build maps the same
 * libpython, and parsing it again (libelf, its symbol table) was a quarter of the collector's CPU
 * with 500 processes of pyenv's shared 3.11 starting.
 */
struct pyfile {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime; /* a rewrite changes the ctime, which no one can set */
	int err;		      /* setup_file's: 0, -ENOENT or -ENOTSUP */
	bool needs_libpython;
	uint64_t first_vaddr;
	char why[256];
	struct ls_pyinfo pi; /* its path is the mapping's: part of the key */
};

#define PYFILES 8
static struct pyfile pyfiles[PYFILES]; /* the most recent first */
static unsigned npyfiles;
static pthread_mutex_t pyfiles_lock = PTHREAD_MUTEX_INITIALIZER;

static bool same_file(const struct pyfile *f, const struct stat *st, const char *path)
{
	return f->dev == st->st_dev && f->ino == st->st_ino && f->size == st->st_size &&
	       f->mtime.tv_sec == st->st_mtim.tv_sec && f->mtime.tv_nsec == st->st_mtim.tv_nsec &&
	       f->ctime.tv_sec == st->st_ctim.tv_sec && f->ctime.tv_nsec == st->st_ctim.tv_nsec &&
	       !strcmp(f->pi.path, path);
}

/* The kept result for the file st at path into *out: true when there is one. */
static bool pyfile_get(const struct stat *st, const char *path, struct pyfile *out)
{
	bool hit = false;

	pthread_mutex_lock(&pyfiles_lock);
	for (unsigned i = 0; i < npyfiles && !hit; i++) {
		if (!same_file(&pyfiles[i], st, path))
			continue;
		*out = pyfiles[i];
		if (i) { /* to the front */
			memmove(&pyfiles[1], &pyfiles[0], i * sizeof(pyfiles[0]));
			pyfiles[0] = *out;
		}
		hit = true;
	}
	pthread_mutex_unlock(&pyfiles_lock);
	return hit;
}

static void pyfile_put(const struct stat *st, struct pyfile *f)
{
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->size = st->st_size;
	f->mtime = st->st_mtim;
	f->ctime = st->st_ctim;
	pthread_mutex_lock(&pyfiles_lock);
	if (npyfiles < PYFILES)
		npyfiles++;
	memmove(&pyfiles[1], &pyfiles[0], (npyfiles - 1) * sizeof(pyfiles[0]));
	pyfiles[0] = *f;
	pthread_mutex_unlock(&pyfiles_lock);
}

/*
 * The file of mapping v of pid, opened with the process's rights, as *f: kept, or parsed (and
 * kept when it says something about the file itself). 0, or -errno when it cannot be read.
 */
static int file_of(pid_t pid, const struct ls_vma *v, struct pyfile *f)
{
	int fd = ls_procfs__open_mapped(pid, v), err;
	struct ls_elf *elf;
	struct stat st;

	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (pyfile_get(&st, v->path, f)) {
		close(fd);
		return 0;
	}
	err = ls_elf__open_fd(fd, &elf);
	if (err)
		return err;
	memset(f, 0, sizeof(*f));
	f->needs_libpython = ls_elf__needs(elf, "libpython");
	f->first_vaddr = ls_elf__first_load_vaddr(elf);
	f->err = setup_file(v->path, elf, &f->pi, f->why, sizeof(f->why));
	if (f->err) /* not Python, or not walkable: its path is still the key */
		snprintf(f->pi.path, sizeof(f->pi.path), "%s", v->path);
	ls_elf__free(elf);
	if (!f->err || f->err == -ENOENT || f->err == -ENOTSUP)
		pyfile_put(&st, f);
	return 0;
}

int ls_python__discover(pid_t pid, struct ls_pyinfo *pi, char *why, size_t whylen)
{
	char exe[PATH_MAX] = "";
	struct ls_procmaps maps;
	bool needs_libpython = false, tried_exe = false;
	struct pyfile *f;
	int err, best = -ENOENT;

	snprintf(why, whylen, "not a CPython process");
	err = ls_procmaps__load(pid, &maps);
	if (err == -ENOENT || err == -ESRCH || (!err && !maps.n)) {
		/* gone, or no memory left (exiting, a zombie): not a verdict on its image (that would
		 * settle every other process of its file, a shared build's mapping libpython late too) */
		if (!err)
			ls_procmaps__free(&maps);
		snprintf(why, whylen, "ended before it could be looked at");
		return -ESRCH;
	}
	if (err) {
		snprintf(why, whylen, "cannot read /proc/%d/maps: %s", pid, strerror(-err));
		return err;
	}
	f = malloc(sizeof(*f));
	if (!f) {
		ls_procmaps__free(&maps);
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	ls_procfs__link(pid, "exe", exe, sizeof(exe));

	/* try libpython mappings first, then the executable itself, then other python* files */
	for (int pass = 0; pass < 3; pass++) {
		for (size_t i = 0; i < maps.n; i++) {
			const struct ls_vma *v = &maps.vmas[i];
			const char *b = base_name(v->path);
			bool is_exe = exe[0] && !strcmp(v->path, exe);

			if (v->offset != 0 || !v->path[0] || v->path[0] == '[')
				continue;
			if (pass == 0 && strncmp(b, "libpython", 9))
				continue;
			if (pass == 1 && (!is_exe || tried_exe))
				continue;
			if (pass == 2 &&
			    (is_exe || !is_candidate(v->path) || !strncmp(b, "libpython", 9)))
				continue;
			if (is_exe)
				tried_exe = true;
			if (file_of(pid, v, f))
				continue;
			if (is_exe && f->needs_libpython)
				needs_libpython = true;
			err = f->err;
			if (err == -ENOTSUP)
				snprintf(why, whylen, "%s", f->why);
			if (!err) {
				*pi = f->pi;
				err = setup_proc(pid, &maps, f->first_vaddr, pi, why, whylen);
			}
			if (err == 0 || err == -ENOTSUP || err == -EAGAIN) {
				free(f);
				ls_procmaps__free(&maps);
				return err;
			}
		}
	}
	free(f);
	ls_procmaps__free(&maps);
	if (needs_libpython) {
		snprintf(why, whylen, "libpython not loaded yet");
		return -EAGAIN;
	}
	if (!exe[0] && !ls_procfs__alive(pid))
		return -ESRCH;
	snprintf(why, whylen, "not a CPython process (no _PyRuntime in %s or a libpython)",
		 exe[0] ? base_name(exe) : "its executable");
	return best;
}

/* path as a file alone, at load bias 0: setup_file()'s result, the file left open in *elf */
static int probe_file(const char *path, struct ls_pyinfo *pi, struct ls_elf **elf, char *why,
		      size_t whylen)
{
	int err;

	memset(pi, 0, sizeof(*pi));
	err = ls_elf__open(path, elf);
	if (err) {
		snprintf(why, whylen, "cannot read %s: %s", path, strerror(-err));
		return err;
	}
	return setup_file(path, *elf, pi, why, whylen);
}

int ls_python__probe_exe(const char *path, struct ls_pyinfo *pi, char *why, size_t whylen)
{
	struct ls_elf *elf = NULL;
	struct stat st;
	int err = probe_file(path, pi, &elf, why, whylen);

	if (!elf)
		return err;
	if (err == 0 && !pi->in_exe) {
		snprintf(why, whylen, "%s: the interpreter is not in the executable", path);
		err = -EAGAIN;
	} else if (err == -ENOENT && ls_elf__needs(elf, "libpython")) {
		snprintf(why, whylen, "%s needs a libpython: found once it is mapped", path);
		err = -EAGAIN;
	} else if (err == -ENOENT && ls_elf__stat(elf, &st) == 0) {
		image_key(&st, &pi->image);
		snprintf(why, whylen, "not a CPython process (no _PyRuntime in %s or a libpython)",
			 base_name(path));
	} else if (err == -ENOENT) {
		err = -EIO;
	}
	ls_elf__free(elf);
	return err;
}

int ls_python__probe_lib(const char *path, struct ls_pyinfo *pi, char *why, size_t whylen)
{
	struct ls_elf *elf = NULL;
	int err = probe_file(path, pi, &elf, why, whylen);

	ls_elf__free(elf);
	if (!err && !pi->lib_start) {
		snprintf(why, whylen, "%s: no %s to probe", path, LS_LIB_START);
		err = -ENOENT;
	}
	return err;
}

static uint64_t read_ptr(pid_t pid, uint64_t addr)
{
	uint64_t v = 0;

	if (ls_procfs__read_mem(pid, addr, &v, sizeof(v)))
		return 0;
	return v;
}

int ls_python__started(pid_t pid, const struct ls_pyinfo *pi)
{
	uint64_t interp;
	int err = ls_procfs__read_mem(pid, pi->runtime + pi->layout.runtime_interp_head, &interp,
				      sizeof(interp));

	return err ? err : interp != 0;
}

int ls_python__verify_tsd(pid_t pid, struct ls_pyinfo *pi)
{
	const struct ls_pylayout *L = &pi->layout;
	struct {
		int32_t initialized;
		uint32_t key;
	} tss;
	uint64_t interp, ts, pthread_self, slot;

	if (pi->tsd_verified || pi->proc.tsd_mode != LS_TS_GLIBC_TSD)
		return 0;
	interp = read_ptr(pid, pi->runtime + L->runtime_interp_head);
	if (!interp)
		return 0; /* not initialised yet: decide later */
	if (ls_procfs__read_mem(pid, pi->proc.tss_addr, &tss, sizeof(tss)) || !tss.initialized)
		return 0;
	/* find the main thread's state: its native thread id is the pid */
	ts = read_ptr(pid, interp + L->interp_threads_head);
	for (int i = 0; ts && i < 4096; i++) {
		uint64_t tid = read_ptr(pid, ts + L->tstate_native_tid);

		if ((pid_t)tid == pid)
			break;
		ts = read_ptr(pid, ts + L->tstate_next);
	}
	if (!ts)
		return 0;
	pthread_self = read_ptr(pid, ts + pi->ver.tstate_thread_id);
	if (tss.key < 32)
		slot = pthread_self + GLIBC_SPECIFIC_1ST + (uint64_t)tss.key * GLIBC_KEY_DATA_SIZE;
	else
		slot = read_ptr(pid, pthread_self + GLIBC_SPECIFIC_2ND + (tss.key / 32) * 8) +
		       (uint64_t)(tss.key % 32) * GLIBC_KEY_DATA_SIZE;
	pi->tsd_verified = true;
	if (pthread_self && read_ptr(pid, slot + GLIBC_KEY_DATA_DATA) == ts)
		return 0;
	ls_info("pid %d: glibc thread-specific data layout not as expected; walking the thread list",
		pid);
	pi->proc.tsd_mode = LS_TS_THREAD_LIST;
	return 1;
}
