/* SPDX-License-Identifier: MIT */
/*
 * PEP 768 remote execution (CPython 3.14+): ask a running interpreter to run a Python file at
 * its next safe point, which is how `linescope-bpf --trace -p PID` loads linescope_usdt into a
 * process that was started without it. The same protocol as sys.remote_exec(pid, path):
 *
 *   1. find _PyRuntime: the ELF section .PyRuntime of the python executable or libpython
 *      mapped in the target (/proc/PID/maps), relocated to where it is mapped;
 *   2. read _Py_DebugOffsets at its start (cookie "xdebugpy", PY_VERSION_HEX, offsets);
 *   3. in the main thread state: write the script path into remote_debugger_support's
 *      debugger_script_path, set debugger_pending_call = 1, and set _PY_EVAL_PLEASE_STOP_BIT
 *      in eval_breaker. The thread runs the file when it next checks its eval breaker (a thread
 *      blocked in a system call runs it once the call returns).
 *
 * The target must allow it (not started with -X disable_remote_debug or with
 * PYTHON_DISABLE_REMOTE_DEBUG set), and the caller needs ptrace access to it (root).
 * Memory is read and written with process_vm_readv/writev. Functions are thread-safe and keep
 * no state; errors are negative errno values, logged once here.
 */
#ifndef LS_REMOTE_EXEC_H
#define LS_REMOTE_EXEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ls_remote_info {
	uint64_t runtime;   /* address of _PyRuntime in the target */
	uint64_t version;   /* the target's PY_VERSION_HEX */
	bool free_threaded; /* a free-threaded (no GIL) build */
	bool enabled;	    /* the target accepts remote execution */
	uint64_t tstate;    /* its main thread state */
	uint32_t path_max;  /* bytes of script path it accepts, NUL included */
	/* where to write, as offsets from tstate */
	uint64_t off_eval_breaker;
	uint64_t off_pending;
	uint64_t off_path;
};

/*
 * Inspect `pid`: 0 and *info filled when it runs a CPython that supports remote execution (see
 * info->enabled for whether it accepts it); -ENOENT when no python mapping has a PyRuntime
 * section, -EPROTONOSUPPORT for CPython < 3.14 or unrecognised debug offsets, -ESRCH, -EPERM.
 */
int ls_remote_exec__probe(pid_t pid, struct ls_remote_info *info);

/*
 * Ask `pid`'s main thread to run the Python file `script_path` (absolute, readable by the
 * target). 0 when the request is written; the target runs it later. -EACCES when the target
 * has remote execution disabled, -ENAMETOOLONG, and the errors of ls_remote_exec__probe().
 */
int ls_remote_exec__send(pid_t pid, const char *script_path);

/*
 * The Python source that loads linescope_usdt from `site_dir` (python-usdt/README.md) without
 * changing sys.path, for the interpreter that runs it. 0, or -ENOSPC when `len` is too small.
 */
int ls_remote_exec__loader_source(const char *site_dir, char *buf, size_t len);

#endif /* LS_REMOTE_EXEC_H */
