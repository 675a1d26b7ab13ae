/* SPDX-License-Identifier: MIT */
/*
 * Which CPython layouts LineScope knows, and how to read one: 3.11 and 3.12 from built-in tables,
 * 3.13, 3.14 and 3.15 from the target's own _Py_DebugOffsets (the first member of _PyRuntime), so a
 * new patch release of a known minor version needs no code change.
 *
 * Pure functions over caller-supplied bytes: nothing here reads a process or logs. The debug-offset
 * bytes come from another process and are treated as untrusted: the cookie, version, free-threaded
 * flag, every section size and every offset used are checked before anything is returned. On
 * failure the reason is written to info->note (one line, no trailing newline) so the caller can
 * log it with its own context (pid, binary) and report the process as "native only".
 *
 * Thread-safe; no allocation. docs/cpython-layouts.md has the tables and how they were verified.
 */
#ifndef LS_PYVERSIONS_H
#define LS_PYVERSIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "linescope.h"

#define LS_PY_OFF_NONE 0xffffffffu /* an ls_pyinfo offset this interpreter does not have */
#define LS_PY_NOTE_LEN 192
/* Enough bytes of _PyRuntime for the _Py_DebugOffsets of every known version (3.15: 888). */
#define LS_PY_DEBUG_OFFSETS_MAX 1024

/* ls_pyinfo.tstate_ways: how a thread can find its PyThreadState (see docs/cpython-layouts.md). */
enum ls_py_tstate_way {
	/* pthread_getspecific(_PyRuntime.autoTSSkey): set for every thread with a thread state,
	 * also while it waits for or has released the GIL (3.11-3.14). */
	LS_PY_TS_TSS_KEY = 1 << 0,
	/* the _Py_tss_tstate thread-local: set only while the thread is attached (holds the GIL),
	 * NULL while it sleeps, does I/O or waits for the GIL (3.12+). */
	LS_PY_TS_TLS = 1 << 1,
	/* walk interp->threads.head ... ->next matching native_thread_id to the TID (any version)
	 */
	LS_PY_TS_THREAD_LIST = 1 << 2,
};

/*
 * Everything userspace needs beyond struct ls_pylayout. Offsets in bytes from the start of the
 * named struct; LS_PY_OFF_NONE when absent.
 */
struct ls_pyver {
	__u32 version;		  /* PY_VERSION_HEX, e.g. 0x030e0af0 for 3.14.10 */
	bool from_debug_offsets;  /* layout read from _Py_DebugOffsets (3.13+), else a table */
	bool free_threaded;	  /* set even when refused, so the caller can say why */
	__u32 debug_offsets_size; /* bytes of _Py_DebugOffsets consumed; 0 for table versions */
	__u32 runtime_size;	  /* sizeof(_PyRuntimeState): from the blob, or the table's value */
	__u32 tstate_ways;	  /* enum ls_py_tstate_way bits valid for this version */

	/* _PyRuntimeState */
	__u32 runtime_interp_head; /* interpreters.head (newest interpreter) */
	__u32 runtime_interp_main; /* interpreters.main (3.13+: head + 8, a per-version rule) */
	__u32 runtime_tss_key;	   /* autoTSSkey._key (int); NONE from 3.15 */
	__u32 runtime_gil_holder;  /* 3.11: gilstate.tstate_current (NULL while nobody holds it) */

	/* PyInterpreterState */
	__u32 interp_next;
	__u32 interp_threads_head;
	__u32 interp_threads_main; /* 3.13+; NONE before */
	__u32 interp_ceval_gil; /* 3.12+: ceval.gil, pointer to the struct _gil_runtime_state used
				 */
	__u32 runtime_gil; /* 3.11: ceval.gil, the struct _gil_runtime_state inside _PyRuntime */
	__u32 gil_size;	   /* sizeof(struct _gil_runtime_state): a futex in it is a GIL wait */
	__u32 gil_locked;  /* 3.12+: offsetof(struct _gil_runtime_state, locked) (int) */
	__u32 gil_last_holder; /* 3.12+: offsetof(struct _gil_runtime_state, last_holder) */

	/* PyThreadState */
	__u32 tstate_size;
	__u32 tstate_prev;
	__u32 tstate_next;
	__u32 tstate_interp;
	__u32 tstate_thread_id;	       /* pthread_self() of the owning thread */
	__u32 tstate_native_thread_id; /* its TID */
	__u32 tstate_holds_gil;	       /* 3.15+: int, 1 while this thread holds the GIL */

	/* _PyInterpreterFrame (the walker's fields are in ls_pylayout) */
	__u32 frame_size;
	__u8 frame_owner_native; /* owner >= this is a C-stack/interpreter frame, not Python; 0xff:
				    none */

	/* PyCodeObject */
	__u32 code_size; /* sizeof(PyCodeObject) as the build reports it (the flexible array's
			    start) */
	__u32 code_filename;
	__u32 code_name;
	__u32 code_qualname;
	__u32 code_linetable;
	__u32 code_firstlineno; /* int */
	__u32 code_argcount;	/* int */
	__u32 code_adaptive;	/* co_code_adaptive: instruction byte offsets count from here */

	/* str: data of a compact object follows the header; state holds kind/compact/ascii bits */
	__u32 unicode_length;	    /* Py_ssize_t, in code points */
	__u32 unicode_state;	    /* 32-bit bitfield */
	__u32 unicode_ascii_data;   /* sizeof(PyASCIIObject): data of compact ASCII strings */
	__u32 unicode_compact_data; /* sizeof(PyCompactUnicodeObject): data of other compact ones */
	__u8 unicode_kind_shift;    /* kind = (state >> shift) & 7: 1, 2 or 4 bytes per char */
	__u8 unicode_compact_bit;
	__u8 unicode_ascii_bit;

	/* bytes (co_linetable) */
	__u32 bytes_size; /* ob_size, Py_ssize_t */
	__u32 bytes_data; /* ob_sval */

	/* why the layout was refused, or a warning on success ("" when none) */
	char note[LS_PY_NOTE_LEN];
};

/*
 * How many bytes of _PyRuntime (from its start) to read for @version: sizeof(_Py_DebugOffsets)
 * of that minor version, or 0 when the version uses a table (3.11, 3.12).
 * Returns -ENOTSUP for a version this build does not know.
 */
int ls_pyversions__blob_size(__u32 version);

/*
 * Fills @layout (for the BPF walker) and @info for the interpreter whose Py_Version is @version.
 * @blob/@blob_len: the first bytes of the target's _PyRuntime (at least
 * ls_pyversions__blob_size()); ignored, and may be NULL, for 3.11 and 3.12.
 * @runtime_size: st_size of the target's _PyRuntime symbol (or the .PyRuntime section size), or 0
 * when unknown; a mismatch with what the layout expects refuses the layout (3.13+) or leaves a
 * warning in info->note (3.11/3.12 tables).
 * Returns 0, or:
 *   -ENOTSUP  version unknown, pre-release, or a free-threaded build (info->free_threaded set)
 *   -EBADMSG  the debug offsets are missing, truncated, carry a bad cookie or version, or hold an
 *             offset outside its struct or too large for ls_pylayout
 *   -EINVAL   NULL @layout or @info
 * @layout and @info are always written (zeroed on failure, except info->note, info->version and
 * info->free_threaded).
 */
int ls_pyversions__resolve(__u32 version, const void *blob, size_t blob_len, __u64 runtime_size,
			   struct ls_pylayout *layout, struct ls_pyver *info);

/* Writes "3.14.10", "3.15.0b2" or "3.13.0rc1" for a PY_VERSION_HEX into @buf. Returns its length.
 */
int ls_pyversions__format(__u32 version, char *buf, size_t len);

/*
 * Decodes the thread-pointer offset of _Py_tss_tstate from the machine code of the exported
 * _PyThreadState_GetCurrent() of a statically linked interpreter (x86-64: optional endbr64, then
 * `mov %fs:DISP32,%rax; ret`): the current thread's attached tstate is *(fsbase + *@tpoff).
 * Returns 0, or -ENOENT when the code has another shape (shared libpython uses __tls_get_addr;
 * use the thread list or the TSS key there).
 */
int ls_pyversions__tls_tpoff(const void *code, size_t len, __s64 *tpoff);

#endif /* LS_PYVERSIONS_H */
