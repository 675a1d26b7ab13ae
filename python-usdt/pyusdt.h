/* SPDX-License-Identifier: MIT */
/*
 * Internals of the linescope_usdt extension, shared by its C files.
 *
 * Every traced thread owns an ls_thread: a shadow stack of the traced frames it is in and, per code
 * object, an array of per-line counters. The event hooks (hooks311.c, hooks312.c) call the inline
 * ls_ev_*() functions below with the GIL held; only the owning thread touches its ls_thread then.
 * Anything else (the flush thread, thread exit, interpreter exit, fork) takes g_ls.lock, and
 * touches another thread's counters only while also holding the GIL (or after that thread has
 * ended).
 *
 * Time: each event closes the interval since the thread's previous traced event and adds it to
 * the line being executed by the innermost traced frame (own time). When a traced activation
 * ends, its duration is added to the line of the traced frame below it (callee time), so a line's
 * total time is own + callee time. Library code is not traced at all, so its time lands on the
 * project line that called it. Counters hold clock ticks; flushes convert.
 */
#ifndef LS_PYUSDT_H
#define LS_PYUSDT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/types.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif
#include "linescope.h"

#define ls_likely(x)   __builtin_expect(!!(x), 1)
#define ls_unlikely(x) __builtin_expect(!!(x), 0)

#define LS_FLUSH_MS	  100	 /* batches leave a thread at least this often while it runs */
#define LS_MAX_DEPTH	  100000 /* shadow frames per thread; deeper frames are not traced */
#define LS_MAX_LINE_SPAN  1000000
#define LS_LIB_PREFIX_MAX 64

/* Counters of one line, or of the calls of a code object, in one thread. Times in ticks. */
struct ls_ent {
	uint64_t hits;
	uint64_t own;
	uint64_t total; /* line: time in traced callees it started; calls: time inside the code */
};

/* A code object as the process knows it. Lives in the registry, under g_ls.lock. */
struct ls_code {
	PyObject *code; /* strong reference for the session, so the address stays unique */
	uint32_t id;
	uint32_t flags; /* enum ls_trace_code_flags */
	int firstlineno;
	bool sent; /* LS_TM_CODE fired since tracing turned on */
	uint16_t filename_len;
	uint16_t qualname_len;
	char *names; /* filename then qualname, UTF-8, no NULs between */
};

/* A code object's counters in one thread; owned by that thread's ls_thread. */
struct ls_tcode {
	PyObject *code; /* borrowed from ci */
	struct ls_code *ci;
	int base; /* line of lines[0] */
	int n;
	struct ls_ent *lines;
	struct ls_ent calls;
	bool library;
};

/* One activation of a traced code object on a thread's shadow stack. */
struct ls_sframe {
	PyObject *code;
	struct ls_tcode *tc;
	struct ls_ent *cur; /* the line being executed; the thread's sink before the first one */
	uint64_t t_enter;   /* when the activation started or resumed */
};

struct ls_thread {
	/* touched on every event */
	struct ls_sframe *top;	 /* NULL when no traced frame is active */
	uint64_t last;		 /* time of the thread's previous traced event */
	uint64_t flush_at;	 /* the owner flushes its own counters once this time passes */
	struct ls_tcode **slots; /* open addressing by code address */
	uint32_t mask;
	uint32_t used;
	/* the rest */
	struct ls_sframe *stack;
	int depth;
	int cap;
	struct ls_tcode **tcodes; /* every tcode, in creation order, for flushing */
	uint32_t ntcodes;
	uint32_t captcodes;
	struct ls_ent sink; /* takes time that belongs to no traced line */
	pid_t tid;
	uint64_t flushed_last;	/* `last` at the previous flush: a newer `last` means new events */
	struct ls_thread *next; /* g_ls.threads, under g_ls.lock */
	struct ls_thread *prev;
};

struct ls_global {
	pthread_mutex_t lock;
	struct ls_thread *threads;
	struct ls_code **codes; /* registry: open addressing by code address */
	uint32_t codes_mask;
	uint32_t ncodes;
	uint32_t next_code_id;
	uint64_t seq;	  /* next batch number */
	uint64_t session; /* times tracing turned on */
	bool enabled;	  /* hooks installed (GIL) */
	uint32_t mech;	  /* enum ls_trace_mech */
	uint32_t tool_id;
	uint32_t reason; /* why tracing is not on, enum ls_trace_reason */
	bool trace_all;	 /* LINESCOPE_TRACE_LIBRARY="" : library code is traced too */
	char *lib_prefix[LS_LIB_PREFIX_MAX];
	int nlib_prefix;
	/* clock */
	bool use_tsc;
	uint64_t tick0; /* ticks and CLOCK_MONOTONIC ns at import, for tick -> ns */
	uint64_t ns0;
	uint64_t flush_ticks;
	/* message buffers, under lock */
	uint64_t batch_buf[LS_TRACE_MAX_MSG / 8];
	uint64_t code_buf[LS_TRACE_MAX_MSG / 8];
};

extern struct ls_global g_ls;
extern __thread struct ls_thread *ls_tls __attribute__((tls_model("initial-exec")));

enum ls_ev_result {
	LS_EV_OK = 0,
	LS_EV_DISABLE = 1, /* library code: the hook may stop reporting this location */
};

static inline uint64_t ls_now(void)
{
#if defined(__x86_64__)
	if (ls_likely(g_ls.use_tsc))
		return __rdtsc();
#endif
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline uint32_t ls_hash_ptr(const void *p)
{
	return (uint32_t)((((uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull) >> 32);
}

static inline struct ls_tcode *ls_tcode_find(struct ls_thread *t, PyObject *code)
{
	uint32_t i = ls_hash_ptr(code) & t->mask;

	for (;;) {
		struct ls_tcode *tc = t->slots[i];

		if (!tc || tc->code == code)
			return tc;
		i = (i + 1) & t->mask;
	}
}

/* core.c: slow paths and bookkeeping */
int ls_ev_line_slow(struct ls_thread *t, PyObject *code, int line, uint64_t now);
int ls_ev_start_slow(struct ls_thread *t, PyObject *code, bool fresh, uint64_t now);
int ls_ev_end_slow(struct ls_thread *t, PyObject *code, uint64_t now);
void ls_thread_flush_self(struct ls_thread *t, uint64_t now);

/* A LINE event: `code` is about to run `line`. */
static inline int ls_ev_line(PyObject *code, int line)
{
	struct ls_thread *t = ls_tls;
	uint64_t now = ls_now();
	struct ls_sframe *f;

	if (ls_likely(t && (f = t->top) && f->code == code)) {
		struct ls_tcode *tc = f->tc;
		unsigned int idx = (unsigned int)(line - tc->base);

		if (ls_likely(idx < (unsigned int)tc->n)) {
			struct ls_ent *e = &tc->lines[idx], *c = f->cur;

			c->own += now - t->last;
			e->hits++;
			f->cur = e;
			t->last = now;
			if (ls_unlikely(now >= t->flush_at))
				ls_thread_flush_self(t, now);
			return LS_EV_OK;
		}
	}
	return ls_ev_line_slow(t, code, line, now);
}

/* Enters a frame of tc (room on the stack checked by the caller); the caller's line pauses. */
static inline void ls_frame_push(struct ls_thread *t, struct ls_tcode *tc, bool fresh, uint64_t now)
{
	struct ls_sframe *f;

	if (t->top)
		t->top->cur->own += now - t->last;
	f = &t->stack[t->depth++];
	f->code = tc->code;
	f->tc = tc;
	f->cur = &t->sink;
	f->t_enter = now;
	t->top = f;
	tc->calls.hits += fresh;
	t->last = now;
}

/* Leaves the top frame: its interval closes, and its time is the calling line's callee time. */
static inline void ls_frame_pop(struct ls_thread *t, uint64_t now)
{
	struct ls_sframe *f = t->top;
	uint64_t dt = now - f->t_enter;

	f->cur->own += now - t->last;
	f->tc->calls.total += dt;
	t->last = now;
	if (--t->depth) {
		t->top = f - 1;
		t->top->cur->total += dt;
	} else {
		t->top = NULL;
	}
}

/* A traced activation of `code` starts (fresh) or resumes (!fresh). */
static inline int ls_ev_start(PyObject *code, bool fresh)
{
	struct ls_thread *t = ls_tls;
	uint64_t now = ls_now();
	struct ls_tcode *tc;

	if (ls_unlikely(!t || t->depth >= t->cap))
		return ls_ev_start_slow(t, code, fresh, now);
	tc = ls_tcode_find(t, code);
	if (ls_unlikely(!tc))
		return ls_ev_start_slow(t, code, fresh, now);
	if (tc->library)
		return LS_EV_DISABLE;
	ls_frame_push(t, tc, fresh, now);
	return LS_EV_OK;
}

/* An activation of `code` ends: return, yield or exception. */
static inline int ls_ev_end(PyObject *code)
{
	struct ls_thread *t = ls_tls;
	uint64_t now = ls_now();

	if (ls_likely(t && t->top && t->top->code == code)) {
		ls_frame_pop(t, now);
		return LS_EV_OK;
	}
	return ls_ev_end_slow(t, code, now);
}

/* core.c: lifecycle, called with the GIL held unless stated */
int ls_core_init(PyObject *module);
void ls_core_reset_all(void);		/* forget counters and codes (tracing turned on or off) */
void ls_core_flush_all(uint32_t flags); /* every thread, now */
void ls_core_flush_stale(void);		/* threads with events older than a flush period */
bool ls_core_has_stale(void);		/* no GIL needed */
void ls_core_after_fork_child(void);
void ls_core_emit_state(uint32_t state, uint32_t reason);

/* The UTF-8 text of a str; NULL (no exception left set) for anything else or unencodable text. */
static inline const char *ls_str_utf8(PyObject *o, Py_ssize_t *len)
{
	const char *s;

	if (!o || !PyUnicode_Check(o))
		return NULL;
	s = PyUnicode_AsUTF8AndSize(o, len);
	if (!s)
		PyErr_Clear();
	return s;
}

/* library.c: library code classification, decided once at import (GIL held) */
void ls_library_init(void);
bool ls_core_is_library(const char *filename);

/* cells.c: IPython cells announced through linescope:code (GIL held unless stated) */
void ls_cells_reset(void);   /* tracing turned on: look for the shell again */
bool ls_cells_pending(void); /* no GIL needed: ls_cells_hook() has work; once per period */
void ls_cells_hook(void);    /* wrap the shell's compiler, announce its cells */

/* hooks311.c / hooks312.c: install or remove the interpreter hooks (GIL held). 0 or -errno. */
int ls_hooks_init(PyObject *module);
int ls_hooks_enable(void); /* sets g_ls.reason on failure */
void ls_hooks_disable(void);
int ls_hooks_active_threads(void); /* threads with the hook installed; -1: per interpreter */

#endif /* LS_PYUSDT_H */
