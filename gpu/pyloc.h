/* SPDX-License-Identifier: MIT */
/*
 * Where the calling thread is in Python, read in process: a hash of its frame chain, the
 * (code, instruction) pair of every frame, through the same layout the BPF sampler uses
 * (userspace/pyversions.c: tables for 3.11/3.12, the interpreter's own _Py_DebugOffsets from
 * 3.13). Two launches with the same key have the same Python stack, so the sampler would give
 * them the same line: the library probes only the first (inject_batch.c).
 *
 * Part of liblinescope_cupti.so (the rules of inject_int.h hold): no Python API call beyond
 * Py_IsInitialized() and PyGILState_GetThisThreadState(), which take no lock and need no GIL.
 * The frames read are the calling thread's own, which cannot change while it is inside a CUDA
 * call; a process without a known interpreter gets key 0 for every call.
 */
#ifndef LS_PYLOC_H
#define LS_PYLOC_H

#include <stddef.h>
#include <linux/types.h>

#pragma GCC visibility push(hidden)

/*
 * Finds the interpreter of this process and its layout, once. Returns 0, -ENOENT without a
 * Python interpreter, -ENOTSUP for one whose layout is unknown (why says which).
 */
int ls_pyloc__init(char *why, size_t len);

/* The calling thread's Python location; 0 when it has no Python frame (or it cannot be told). */
__u64 ls_pyloc__key(void);

struct ls_frame;
/*
 * The calling thread's Python frames into f[0..max), innermost first, exactly as the BPF walker
 * gives them (bpf/pywalk.bpf.h: shim frames and non-code executables skipped, the instruction's
 * byte offset, the code object's fingerprint). Returns how many, or -1 when it cannot tell them
 * all (no frame, more than max, an unreadable frame): then the launch is probed instead.
 */
int ls_pyloc__frames(struct ls_frame *f, int max);

/* After fork(), in the child: the calling thread's id changed. */
void ls_pyloc__forked(void);

#pragma GCC visibility pop

#endif /* LS_PYLOC_H */
