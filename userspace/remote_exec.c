// SPDX-License-Identifier: MIT
/* PEP 768 remote execution in a running CPython 3.14+; remote_exec.h has the protocol. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "elffile.h"
#include "log.h"
#include "procfs.h"
#include "remote_exec.h"

/* _PY_EVAL_PLEASE_STOP_BIT in Include/internal/pycore_ceval.h */
#define EVAL_PLEASE_STOP (1ull << 5)
#define DEBUG_COOKIE	 "xdebugpy"
/* words of _Py_DebugOffsets read: more than any version has */
#define OFFSETS_WORDS	  192
#define MAX_STRUCT_OFFSET (4u << 20) /* PyInterpreterState is the largest, well under this */
/* word indexes in _Py_DebugOffsets that every version with remote execution shares */
#define W_VERSION	1
#define W_FREE_THREADED 2
#define W_INTERPRETERS	5  /* runtime_state.interpreters_head */
#define W_THREADS_MAIN	10 /* interpreter_state.threads_main */

/*
 * Where the section .PyRuntime of the ELF file open at fd (owned here), mapped from its start at
 * `start`, is. 0 and *out set; -ENOENT when the file has no such section.
 */
static int elf_runtime_addr(int fd, uint64_t start, uint64_t *out)
{
	struct ls_elf *elf;
	uint64_t addr, size;
	int err = ls_elf__open_fd(fd, &elf);

	if (err)
		return err == -ENOEXEC ? -ENOENT : err;
	err = ls_elf__section(elf, ".PyRuntime", &addr, &size);
	if (!err)
		*out = start + addr - ls_elf__first_load_vaddr(elf);
	ls_elf__free(elf);
	return err;
}

/* The first mapping of a file named like python that has a .PyRuntime section. */
static int find_runtime(pid_t pid, uint64_t *out)
{
	struct ls_procmaps maps;
	int fd, err;

	err = ls_procmaps__load(pid, &maps);
	if (err)
		return err == -ENOENT ? -ESRCH : err;
	err = -ENOENT;
	for (size_t i = 0; i < maps.n; i++) {
		const struct ls_vma *v = &maps.vmas[i];
		const char *base = strrchr(v->path, '/');

		base = base ? base + 1 : v->path;
		if (v->offset != 0 || v->path[0] != '/' || !strstr(base, "python"))
			continue;
		/* the very file mapped, opened with the process's rights */
		fd = ls_procfs__open_mapped(pid, v);
		err = fd < 0 ? fd : elf_runtime_addr(fd, v->start, out);
		if (!err)
			break;
	}
	ls_procmaps__free(&maps);
	return err;
}

/*
 * debugger_support is the last group of _Py_DebugOffsets in 3.14 and 3.15, but the groups
 * before it differ between versions. Find it by what it must hold: debugger_pending_call at 0
 * and debugger_script_path at 4 in _PyRemoteDebuggerSupport ({int32_t; char[N]}), N a sane size.
 */
static int find_debugger_support(const uint64_t *w, int n)
{
	for (int i = W_THREADS_MAIN + 1; i + 6 <= n; i++) {
		if (w[i + 3] == 0 && w[i + 4] == 4 && w[i + 5] >= 256 && w[i + 5] <= 65536 &&
		    w[i] >= 8 && w[i] < 65536 && w[i + 1] >= 8 && w[i + 1] < 65536 &&
		    w[i + 2] >= 8 && w[i + 2] < (1u << 24))
			return i;
	}
	return -1;
}

int ls_remote_exec__probe(pid_t pid, struct ls_remote_info *info)
{
	uint64_t w[OFFSETS_WORDS], runtime = 0, interp, tstate;
	unsigned int major, minor;
	int32_t enabled;
	int err, ds;

	err = find_runtime(pid, &runtime);
	if (err == -ENOENT)
		return ls_err(err, "pid %d: no CPython runtime (.PyRuntime) in its mappings", pid);
	if (err)
		return ls_err(err, "pid %d: cannot read its mappings: %s", pid, strerror(-err));
	err = ls_procfs__read_mem(pid, runtime, w, sizeof(w));
	if (err)
		return ls_err(err, "pid %d: cannot read _PyRuntime at %#" PRIx64 ": %s", pid,
			      runtime, strerror(-err));
	if (memcmp(w, DEBUG_COOKIE, 8))
		return ls_err(-EPROTONOSUPPORT,
			      "pid %d: no debug offsets in _PyRuntime (CPython older than 3.13)",
			      pid);
	major = (w[W_VERSION] >> 24) & 0xff;
	minor = (w[W_VERSION] >> 16) & 0xff;
	if (major != 3 || minor < 14)
		return ls_err(
			-EPROTONOSUPPORT,
			"pid %d runs Python %u.%u; remote loading needs 3.14 or newer (PEP 768); "
			"start it with linescope-bpf --trace -- CMD, or import linescope_usdt in it",
			pid, major, minor);
	ds = find_debugger_support(w, OFFSETS_WORDS);
	if (ds < 0)
		return ls_err(-EPROTONOSUPPORT,
			      "pid %d: Python %u.%u debug offsets have no remote-execution fields",
			      pid, major, minor);
	/* offsets from the target's memory: within the structs they index (pyversions.c bounds) */
	if (w[W_INTERPRETERS] >= MAX_STRUCT_OFFSET || w[W_THREADS_MAIN] >= MAX_STRUCT_OFFSET ||
	    w[ds + 2] >= MAX_STRUCT_OFFSET ||
	    w[ds + 1] + w[ds + 4] + w[ds + 5] >= MAX_STRUCT_OFFSET)
		return ls_err(-EBADMSG, "pid %d: its debug offsets point outside its structs", pid);
	err = ls_procfs__read_mem(pid, runtime + w[W_INTERPRETERS], &interp, sizeof(interp));
	if (!err && !interp)
		err = -ESRCH;
	if (!err)
		err = ls_procfs__read_mem(pid, interp + w[W_THREADS_MAIN], &tstate, sizeof(tstate));
	if (!err && !tstate)
		err = -ESRCH;
	if (!err)
		err = ls_procfs__read_mem(pid, interp + w[ds + 2], &enabled, sizeof(enabled));
	if (err)
		return ls_err(err, "pid %d: cannot find its main thread state: %s", pid,
			      strerror(-err));
	memset(info, 0, sizeof(*info));
	info->runtime = runtime;
	info->version = w[W_VERSION];
	info->free_threaded = w[W_FREE_THREADED] != 0;
	info->enabled = enabled == 1;
	info->tstate = tstate;
	info->path_max = w[ds + 5];
	info->off_eval_breaker = w[ds];
	info->off_pending = w[ds + 1] + w[ds + 3];
	info->off_path = w[ds + 1] + w[ds + 4];
	return 0;
}

int ls_remote_exec__send(pid_t pid, const char *script_path)
{
	struct ls_remote_info info;
	size_t len = strlen(script_path);
	uint64_t breaker;
	int32_t one = 1;
	int err;

	err = ls_remote_exec__probe(pid, &info);
	if (err)
		return err;
	if (!info.enabled)
		return ls_err(-EACCES,
			      "pid %d has remote execution disabled (-X disable_remote_debug "
			      "or PYTHON_DISABLE_REMOTE_DEBUG)",
			      pid);
	if (len + 1 > info.path_max)
		return ls_err(-ENAMETOOLONG, "script path longer than %u bytes: %s",
			      info.path_max - 1, script_path);
	/* path first, then the flag that makes it valid, then wake the eval loop */
	err = ls_procfs__write_mem(pid, info.tstate + info.off_path, script_path, len + 1);
	if (!err)
		err = ls_procfs__write_mem(pid, info.tstate + info.off_pending, &one, sizeof(one));
	if (!err)
		err = ls_procfs__read_mem(pid, info.tstate + info.off_eval_breaker, &breaker,
					  sizeof(breaker));
	if (!err) {
		breaker |= EVAL_PLEASE_STOP;
		err = ls_procfs__write_mem(pid, info.tstate + info.off_eval_breaker, &breaker,
					   sizeof(breaker));
	}
	if (err)
		return ls_err(err, "pid %d: cannot write the remote-execution request: %s", pid,
			      strerror(-err));
	return 0;
}

int ls_remote_exec__loader_source(const char *site_dir, char *buf, size_t len)
{
	char lit[4096 * 2 + 3], *p = lit;
	int n;

	/* site_dir as a Python string literal */
	*p++ = '\'';
	for (const char *s = site_dir; *s; s++) {
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			return ls_err(-EINVAL, "control character in %s", site_dir);
		if (p - lit > (long)sizeof(lit) - 4)
			return ls_err(-ENAMETOOLONG, "path too long: %s", site_dir);
		if (*s == '\\' || *s == '\'')
			*p++ = '\\';
		*p++ = *s;
	}
	*p++ = '\'';
	*p = 0;
	n = snprintf(
		buf, len,
		"# linescope-bpf --trace -p: load linescope_usdt into this interpreter (PEP 768)\n"
		"def _linescope_load(site):\n"
		"    import importlib.machinery, importlib.util, os, sys\n"
		"    if 'linescope_usdt' in sys.modules:\n"
		"        return\n"
		"    for suffix in importlib.machinery.EXTENSION_SUFFIXES:\n"
		"        path = os.path.join(site, 'linescope_usdt' + suffix)\n"
		"        if os.path.exists(path):\n"
		"            spec = importlib.util.spec_from_file_location('linescope_usdt', path)\n"
		"            module = importlib.util.module_from_spec(spec)\n"
		"            sys.modules['linescope_usdt'] = module\n"
		"            spec.loader.exec_module(module)\n"
		"            return\n"
		"\n"
		"_linescope_load(%s)\n"
		"del _linescope_load\n",
		lit);
	if (n < 0 || (size_t)n >= len)
		return -ENOSPC;
	return 0;
}
