/* SPDX-License-Identifier: MIT */
/*
 * Per-version CPython layouts: what the BPF walker needs (struct ls_pylayout) and what userspace
 * needs to read code objects and strings (struct ls_pyextra). 3.11 and 3.12 come from tables;
 * 3.13+ are read from the target's _Py_DebugOffsets.
 */
#ifndef LS_PYLAYOUT_H
#define LS_PYLAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include "linescope.h"

/* What only userspace needs; str and bytes offsets are in ls_pylayout (the walker reads them). */
struct ls_pyextra {
	uint16_t runtime_tss; /* offsetof(_PyRuntimeState, autoTSSkey); LS_OFF_NONE if absent */
	uint16_t tstate_thread_id; /* PyThreadState.thread_id (pthread_self of the thread) */
	uint16_t code_name;	   /* co_name pointer */
	uint16_t code_header;	   /* bytes of PyCodeObject to read to see every code field */
	uint16_t runtime_gil; /* offsetof(_PyRuntimeState, ceval.gil); LS_OFF_NONE if elsewhere */
	uint16_t gil_size;    /* sizeof(struct _gil_runtime_state) */
};

/*
 * Fills the layouts for an interpreter of version `version_hex` (PY_VERSION_HEX). For 3.13+ the
 * caller passes the target's _Py_DebugOffsets bytes (debug, len); otherwise NULL. Returns 0, or
 * -ENOTSUP with a one-line reason in why.
 */
int ls_pylayout__get(uint32_t version_hex, const void *debug, size_t len, struct ls_pylayout *L,
		     struct ls_pyextra *X, char *why, size_t whylen);

/* Checks that every offset fits the BPF walker's read windows. 0 or -EINVAL. */
int ls_pylayout__check(const struct ls_pylayout *L);

#endif
