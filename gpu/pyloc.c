// SPDX-License-Identifier: MIT
/* The calling thread's Python location, read in process; see gpu/pyloc.h. */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "pyloc.h"
#include "pyversions.h"

static struct {
	int ok;
	int (*is_initialized)(void);
	void *(*this_tstate)(void);
	__u32 ts_frame;	  /* PyThreadState.cframe (3.11/3.12) or .current_frame */
	__u32 cf_current; /* _PyCFrame.current_frame; LS_PY_OFF_NONE from 3.13 */
	__u32 ts_tid;	  /* PyThreadState.native_thread_id */
	__u32 fr_code, fr_previous, fr_instr;
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
	P.ts_frame = lay.tstate_frame;
	P.cf_current = lay.cframe_current == LS_OFF_NONE ? LS_PY_OFF_NONE : lay.cframe_current;
	P.ts_tid = info.tstate_native_thread_id;
	P.fr_code = lay.frame_code;
	P.fr_previous = lay.frame_previous;
	P.fr_instr = lay.frame_instr;
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

static inline __u64 mix(__u64 h, __u64 v)
{
	h ^= v;
	h *= 0x9e3779b97f4a7c15ull;
	return h ^ (h >> 31);
}

__u64 ls_pyloc__key(void)
{
	__u64 ts, f, h = 0x2545f4914f6cdd1dull;
	int depth;

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
	f = word(ts, P.ts_frame);
	if (f && P.cf_current != LS_PY_OFF_NONE)
		f = word(f, P.cf_current);
	if (!f)
		return 0;
	for (depth = 0; f && depth < LS_MAX_FRAMES; depth++) {
		h = mix(h, word(f, P.fr_code));
		h = mix(h, word(f, P.fr_instr));
		f = word(f, P.fr_previous);
	}
	/* deeper than the sampler walks: its stack would be cut, so tell nothing */
	if (f)
		return 0;
	return h | 1;
}
