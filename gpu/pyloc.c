// SPDX-License-Identifier: MIT
/* The calling thread's Python location, read in process; see gpu/pyloc.h. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fingerprint.h"
#include "linescope.h"
#include "pyloc.h"
#include "pyversions.h"

static struct {
	int ok;
	int (*is_initialized)(void);
	void *(*this_tstate)(void);
	struct ls_pylayout L; /* the walker's layout */
	__u32 ts_tid;	      /* PyThreadState.native_thread_id */
	__u64 code_type;      /* &PyCode_Type */
} P;

static __thread unsigned long t_tid;

int ls_pyloc__init(char *why, size_t len)
{
	unsigned char blob[LS_PY_DEBUG_OFFSETS_MAX];
	const unsigned long *version = dlsym(RTLD_DEFAULT, "Py_Version");
	void *runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
	const ElfW(Sym) *sym = NULL;
	struct ls_pylayout lay;
	struct ls_pyver info;
	__u64 runtime_size = 0;
	Dl_info dl;
	int n, err;

	P.is_initialized = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
	P.this_tstate = (void *(*)(void))dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	if (!version || !runtime || !P.is_initialized || !P.this_tstate) {
		snprintf(why, len, "no Python interpreter in this process");
		return -ENOENT;
	}
	if (dladdr1(runtime, &dl, (void **)&sym, RTLD_DL_SYMENT) && sym)
		runtime_size = sym->st_size;
	n = ls_pyversions__blob_size((__u32)*version);
	if (n < 0 || (size_t)n > sizeof(blob)) {
		snprintf(why, len, "Python %#lx: layout unknown", *version);
		return -ENOTSUP;
	}
	/* the start of our own _PyRuntime: its _Py_DebugOffsets from 3.13 */
	memcpy(blob, runtime, (size_t)n);
	err = ls_pyversions__resolve((__u32)*version, blob, (size_t)n, runtime_size, &lay, &info);
	if (err) {
		snprintf(why, len, "Python %#lx: %s", *version, info.note);
		return -ENOTSUP;
	}
	P.L = lay;
	P.ts_tid = info.tstate_native_thread_id;
	P.code_type = (__u64)(uintptr_t)dlsym(RTLD_DEFAULT, "PyCode_Type");
	if (P.ts_tid == LS_PY_OFF_NONE) {
		snprintf(why, len, "Python %#lx: no native_thread_id", *version);
		return -ENOTSUP;
	}
	P.ok = 1;
	return 0;
}

void ls_pyloc__forked(void)
{
	t_tid = 0;
}

static inline __u64 word(__u64 base, __u32 off)
{
	return *(const volatile __u64 *)(base + off);
}

/* The calling thread's innermost interpreter frame, or 0. */
static __u64 current_frame(void)
{
	__u64 ts, f;

	/* false from early in Py_FinalizeEx, before other threads' states are freed */
	if (!P.ok || !P.is_initialized())
		return 0;
	ts = (__u64)(uintptr_t)P.this_tstate();
	if (!ts)
		return 0;
	if (!t_tid)
		t_tid = (unsigned long)gettid();
	/* the thread state this API calls ours must name this thread */
	if (word(ts, P.ts_tid) != t_tid)
		return 0;
	f = word(ts, P.L.tstate_frame);
	if (f && P.L.cframe_current != LS_OFF_NONE)
		f = word(f, P.L.cframe_current);
	return f;
}

static inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

__u64 ls_pyloc__key(void)
{
	__u64 f = current_frame(), h = 0x2545f4914f6cdd1dull;
	int depth;

	if (!f)
		return 0;
	for (depth = 0; f && depth < LS_MAX_FRAMES; depth++) {
		h = mix(h, word(f, P.L.frame_code));
		h = mix(h, word(f, P.L.frame_instr));
		f = word(f, P.L.frame_previous);
	}
	/* deeper than the sampler walks: its stack would be cut, so tell nothing */
	if (f)
		return 0;
	return h | 1;
}

int ls_pyloc__frames(struct ls_frame *out, int max)
{
	__u64 f = current_frame(), code, instr, fname, qname, ltab;
	__u32 firstlineno;
	int n = 0, depth;

	if (!f || !P.code_type)
		return -1;
	/* the walk the hash covered: every frame of the chain, at most LS_MAX_FRAMES */
	for (depth = 0; f && depth < LS_MAX_FRAMES; depth++, f = word(f, P.L.frame_previous)) {
		__u8 owner = P.L.frame_owner != LS_OFF_NONE
				     ? *(const volatile __u8 *)(uintptr_t)(f + P.L.frame_owner)
				     : 0;

		code = word(f, P.L.frame_code) & ~(__u64)P.L.code_tag_mask;
		instr = word(f, P.L.frame_instr);
		/* shim frames owned by the C stack or the interpreter (3.12+) carry no user code */
		if (owner >= P.L.owner_cstack)
			continue;
		if (!code)
			return -1;
		/* a frame whose executable is not a code object is skipped, as by the walker */
		if (word(code, 8) != P.code_type)
			continue;
		if (n == max)
			return -1;
		fname = word(code, P.L.code_filename);
		qname = word(code, P.L.code_qualname);
		ltab = word(code, P.L.code_linetable);
		firstlineno = *(const volatile __u32 *)(uintptr_t)(code + P.L.code_firstlineno);
		out[n].code = code;
		out[n].instr = instr ? (__s32)(instr - (code + P.L.code_adaptive)) : -2;
		out[n].fp = ls_code_fp(fname, qname, ltab, firstlineno);
		n++;
	}
	return f ? -1 : n;
}
