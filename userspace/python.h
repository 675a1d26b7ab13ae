/* SPDX-License-Identifier: MIT */
/*
 * CPython discovery in a target process: which file holds the interpreter (executable or
 * libpython), where it is loaded, its version and build, the layout the BPF walker needs, and how
 * each thread finds its thread state.
 */
#ifndef LS_PYTHON_H
#define LS_PYTHON_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include "linescope.h"
#include "pyversions.h"

struct ls_pyinfo {
	uint32_t version_hex;
	char version[24];    /* "3.11.2" */
	char build[64];	     /* "static, usdt" / "shared" */
	char path[PATH_MAX]; /* interpreter file as the process maps it */
	bool shared;	     /* interpreter in a libpython shared object */
	bool usdt;	     /* the file has CPython's SDT probes */
	uint64_t bias;	     /* load bias of that file */
	uint64_t runtime;    /* &_PyRuntime */
	uint64_t text_start,
		text_end;  /* executable mapping of the interpreter (python vs native) */
	bool tsd_verified; /* the thread-state lookup was checked against a live thread */
	/* the interpreter is the executable itself: `images` can name it by its inode */
	bool in_exe;
	bool dyn;		   /* ET_DYN: relocated by its load bias */
	struct ls_image_key image; /* its file, as the kernel names it at exec */
	/* that file's inode change time when it was read ({0, 0}: too recent to vouch for it) */
	struct timespec image_ctime;
	uint64_t x_vaddr;     /* lowest executable segment vaddr (see ls_elf__exec_vaddr) */
	uint8_t build_id[32]; /* its GNU build id, build_id_len bytes (0: none) */
	uint8_t build_id_len;
	uint64_t build_id_off; /* where it lies in the file (0: not known) */
	/* a shared build: its libpython, LS_LIB_START's address in it at bias 0 (0: none), and
	 * where that lies in the file */
	struct ls_image_key lib;
	uint64_t lib_start, lib_start_off;
	struct ls_pylayout layout;
	struct ls_pyver ver; /* everything else about this interpreter's layout */
	struct ls_proc proc; /* what BPF gets in `procs` (layout_id filled by the caller) */
};

/*
 * Discovers the interpreter of pid. Returns 0; -EAGAIN when the process may still load one
 * (a libpython it needs is not mapped yet); -ENOENT when it does not run CPython; -ENOTSUP for a
 * CPython this tool cannot walk; -ESRCH when the process is gone
 * or exiting (no memory left). `why` gets a one-line reason for
 * every non-zero return.
 */
int ls_python__discover(pid_t pid, struct ls_pyinfo *pi, char *why, size_t whylen);

/*
 * An interpreter executable before any process runs it (a launched command's): pi as at load
 * bias 0, for `images`, so that its exec is walked from the first sample. 0; -EAGAIN when it is
 * Python through a libpython (found once that is mapped); -ENOENT when it is not Python (no
 * _PyRuntime, no libpython needed), with pi->image naming the file; -ENOTSUP for a CPython this
 * tool cannot walk; -errno when it cannot be read. `why` says which.
 */
int ls_python__probe_exe(const char *path, struct ls_pyinfo *pi, char *why, size_t whylen);

/*
 * A shared build's libpython before any process maps it: pi as at load bias 0, with its start
 * (LS_LIB_START) to probe. 0; -ENOENT when it has none; else as ls_python__probe_exe().
 */
int ls_python__probe_lib(const char *path, struct ls_pyinfo *pi, char *why, size_t whylen);

/*
 * Whether pid's interpreter (pi) has started: 1 when its runtime has an interpreter, 0 when not
 * yet (no Python frame can have run), -errno when unreadable.
 */
int ls_python__started(pid_t pid, const struct ls_pyinfo *pi);

/*
 * Checks the glibc thread-specific-data lookup against the main thread once the interpreter is
 * initialised, and falls back to the thread-list walk when it does not hold. Returns 1 when the
 * lookup mode changed (push the new ls_proc to BPF), 0 when unchanged or not yet decidable.
 */
int ls_python__verify_tsd(pid_t pid, struct ls_pyinfo *pi);

/*
 * The interpreter of another process of the same image: pi (found in some process) moved to the
 * load bias implied by that process's mm->start_code. pi must be in_exe.
 */
void ls_python__rebase(const struct ls_pyinfo *pi, uint64_t start_code, struct ls_pyinfo *out);
/* pi, as another process that loaded its file at load bias nb shows it. */
void ls_python__move(const struct ls_pyinfo *pi, uint64_t nb, struct ls_pyinfo *out);

/*
 * Whether pi's file is unchanged since it was read: `ctime` is its change time as an exec saw it
 * ({0, 0}: not known). Every write moves it, and no call sets it back (unlike the mtime the image
 * key holds), so the same time means the same bytes.
 */
bool ls_python__unchanged(const struct ls_pyinfo *pi, const struct timespec *ctime);

/*
 * Whether the executable pid runs now is still pi's file: false only when both have a build id
 * and they differ (an image rewritten in place that kept its inode and mtime). A process already
 * gone cannot be checked: true.
 */
bool ls_python__same_build(pid_t pid, const struct ls_pyinfo *pi);

/* The `images` value for pi (in_exe): its BPF entry with addresses made bias-relative. */
void ls_python__image(const struct ls_pyinfo *pi, struct ls_image *img);

/* Checks that every layout offset fits the BPF walker's read windows. 0 or -EINVAL. */
int ls_python__check_layout(const struct ls_pylayout *L);

#endif
