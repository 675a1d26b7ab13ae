// SPDX-License-Identifier: MIT
/*
 * linescope_usdt core: per-thread counters, the code registry, and the batches that leave the
 * process through the USDT probes. See pyusdt.h for who may touch what, and when.
 */
#include "pyusdt.h"
#include "probes.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define _SDT_HAS_SEMAPHORES 1
#include <sys/sdt.h>

/* The kernel counts attached tracers in these (uprobe ref_ctr_offset); sys/sdt.h names them. */
__extension__ volatile unsigned short linescope_state_semaphore
	__attribute__((unused, section(".probes")));
__extension__ volatile unsigned short linescope_code_semaphore
	__attribute__((unused, section(".probes")));
__extension__ volatile unsigned short linescope_batch_semaphore
	__attribute__((unused, section(".probes")));

struct ls_global g_ls = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
};
__thread struct ls_thread *ls_tls __attribute__((tls_model("initial-exec")));
static pthread_key_t g_key;

#define LS_BATCH_MAX \
	((LS_TRACE_MAX_MSG - sizeof(struct ls_trace_batch)) / sizeof(struct ls_trace_line))

__attribute__((noinline)) void ls_probe_state(const void *msg, long len)
{
	STAP_PROBE2(linescope, state, msg, len);
}

__attribute__((noinline)) void ls_probe_code(const void *msg, long len)
{
	STAP_PROBE2(linescope, code, msg, len);
}

__attribute__((noinline)) void ls_probe_batch(const void *msg, long len)
{
	STAP_PROBE2(linescope, batch, msg, len);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/*
 * The TSC is read on every event (about 10 ns, against about 25 for clock_gettime), so use it
 * where it ticks at a constant rate in every power state; the ratio to CLOCK_MONOTONIC is
 * measured over the whole run at each flush, which needs no calibration pause at import.
 */
static void clock_init(void)
{
	const char *env = getenv("LINESCOPE_TRACE_CLOCK");

	g_ls.use_tsc = false;
#if defined(__x86_64__)
	unsigned int a, b, c, d;

	if (__get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8)))
		g_ls.use_tsc = true;
#endif
	if (env && !strcmp(env, "monotonic"))
		g_ls.use_tsc = false;
	g_ls.ns0 = mono_ns();
	g_ls.tick0 = ls_now();
	g_ls.flush_ticks = LS_FLUSH_MS * 1000000ull;
	if (g_ls.use_tsc) {
		/* a rough rate for the flush period only; conversions use the measured ratio */
		struct timespec nap = {0, 2000000};
		uint64_t t0 = ls_now(), n0 = mono_ns();

		nanosleep(&nap, NULL);
		double r = (double)(ls_now() - t0) / (double)(mono_ns() - n0 ?: 1);
		g_ls.flush_ticks = (uint64_t)(r * LS_FLUSH_MS * 1e6);
	}
}

/* ns per tick, measured from import to now; called under the lock */
static double ns_per_tick(void)
{
	uint64_t t, n;

	if (!g_ls.use_tsc)
		return 1.0;
	t = ls_now();
	n = mono_ns();
	if (n - g_ls.ns0 < 1000000) {
		/* too short a base for a precise ratio: wait out one millisecond */
		struct timespec nap = {0, 1000000};

		nanosleep(&nap, NULL);
		t = ls_now();
		n = mono_ns();
	}
	return (double)(n - g_ls.ns0) / (double)(t - g_ls.tick0);
}

/* ---- the code registry (lock held) ---- */

static struct ls_code *registry_find(PyObject *code)
{
	uint32_t i;

	if (!g_ls.codes)
		return NULL;
	for (i = ls_hash_ptr(code) & g_ls.codes_mask;; i = (i + 1) & g_ls.codes_mask) {
		struct ls_code *c = g_ls.codes[i];

		if (!c || c->code == code)
			return c;
	}
}

static int registry_insert(struct ls_code *ci)
{
	if (!g_ls.codes || (g_ls.ncodes + 1) * 2 > g_ls.codes_mask + 1) {
		uint32_t ncap = g_ls.codes ? (g_ls.codes_mask + 1) * 2 : 256;
		struct ls_code **n = calloc(ncap, sizeof(*n));

		if (!n)
			return -ENOMEM;
		for (uint32_t i = 0; g_ls.codes && i <= g_ls.codes_mask; i++) {
			struct ls_code *c = g_ls.codes[i];
			uint32_t j;

			if (!c)
				continue;
			for (j = ls_hash_ptr(c->code) & (ncap - 1); n[j]; j = (j + 1) & (ncap - 1))
				;
			n[j] = c;
		}
		free(g_ls.codes);
		g_ls.codes = n;
		g_ls.codes_mask = ncap - 1;
	}
	uint32_t j = ls_hash_ptr(ci->code) & g_ls.codes_mask;

	while (g_ls.codes[j])
		j = (j + 1) & g_ls.codes_mask;
	g_ls.codes[j] = ci;
	g_ls.ncodes++;
	return 0;
}

static const char *utf8_of(PyObject *s, Py_ssize_t *len)
{
	const char *p = ls_str_utf8(s, len);

	if (!p) {
		*len = 1;
		return "?";
	}
	return p;
}

/* Describe a code object (GIL held, lock not held: this calls into the interpreter). */
static struct ls_code *code_describe(PyObject *code)
{
	PyCodeObject *co = (PyCodeObject *)code;
	Py_ssize_t flen, qlen;
	const char *fn, *qn;
	struct ls_code *ci;
	size_t room = LS_TRACE_MAX_MSG - sizeof(struct ls_trace_code);

	if (!PyCode_Check(code))
		return NULL;
	fn = utf8_of(co->co_filename, &flen);
	qn = utf8_of(co->co_qualname, &qlen);
	ci = calloc(1, sizeof(*ci));
	if (!ci)
		return NULL;
	if ((size_t)qlen > 1024) {
		qlen = 1024;
		ci->flags |= LS_TCF_TRUNCATED;
	}
	if ((size_t)(flen + qlen) > room) {
		flen = room - qlen;
		ci->flags |= LS_TCF_TRUNCATED;
	}
	ci->names = malloc(flen + qlen + 1);
	if (!ci->names) {
		free(ci);
		return NULL;
	}
	memcpy(ci->names, fn, flen);
	memcpy(ci->names + flen, qn, qlen);
	ci->names[flen + qlen] = 0;
	ci->filename_len = flen;
	ci->qualname_len = qlen;
	ci->firstlineno = co->co_firstlineno;
	ci->code = Py_NewRef(code);
	if (ls_core_is_library(ci->names))
		ci->flags |= LS_TCF_LIBRARY;
	return ci;
}

static void code_free(struct ls_code *ci)
{
	if (!ci)
		return;
	Py_XDECREF(ci->code);
	free(ci->names);
	free(ci);
}

static void code_send(struct ls_code *ci)
{
	struct ls_trace_code *m = (struct ls_trace_code *)g_ls.code_buf;
	char *names = (char *)(m + 1);

	memset(m, 0, sizeof(*m));
	m->kind = LS_TM_CODE;
	m->code = ci->id;
	m->firstlineno = ci->firstlineno;
	m->flags = ci->flags;
	m->filename_len = ci->filename_len;
	m->qualname_len = ci->qualname_len;
	m->addr = (uintptr_t)ci->code;
	memcpy(names, ci->names, ci->filename_len + ci->qualname_len);
	ls_probe_code(m, sizeof(*m) + ci->filename_len + ci->qualname_len);
	ci->sent = true;
}

/* ---- per-thread state ---- */

static void thread_destroy(void *p);

static void tcode_free(struct ls_tcode *tc)
{
	if (!tc)
		return;
	free(tc->lines);
	free(tc);
}

/* Forget every code and counter of a thread, keeping the thread registered. */
static void thread_clear(struct ls_thread *t)
{
	for (uint32_t i = 0; i < t->ntcodes; i++)
		tcode_free(t->tcodes[i]);
	t->ntcodes = 0;
	memset(t->slots, 0, (t->mask + 1) * sizeof(*t->slots));
	t->used = 0;
	t->depth = 0;
	t->top = NULL;
	memset(&t->sink, 0, sizeof(t->sink));
	t->last = ls_now();
	t->flushed_last = t->last;
	t->flush_at = t->last + g_ls.flush_ticks;
}

static void thread_free(struct ls_thread *t)
{
	if (!t)
		return;
	for (uint32_t i = 0; i < t->ntcodes; i++)
		tcode_free(t->tcodes[i]);
	free(t->tcodes);
	free(t->slots);
	free(t->stack);
	free(t);
}

static struct ls_thread *thread_new(uint64_t now)
{
	struct ls_thread *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = 64;
	t->stack = calloc(t->cap, sizeof(*t->stack));
	t->mask = 63;
	t->slots = calloc(t->mask + 1, sizeof(*t->slots));
	if (!t->stack || !t->slots) {
		thread_free(t);
		return NULL;
	}
	t->tid = syscall(SYS_gettid);
	t->last = now;
	t->flushed_last = now;
	t->flush_at = now + g_ls.flush_ticks;
	pthread_mutex_lock(&g_ls.lock);
	t->next = g_ls.threads;
	if (t->next)
		t->next->prev = t;
	g_ls.threads = t;
	pthread_mutex_unlock(&g_ls.lock);
	pthread_setspecific(g_key, t);
	ls_tls = t;
	return t;
}

static void thread_unlink(struct ls_thread *t)
{
	if (t->prev)
		t->prev->next = t->next;
	else
		g_ls.threads = t->next;
	if (t->next)
		t->next->prev = t->prev;
	t->next = t->prev = NULL;
}

static int slots_grow(struct ls_thread *t)
{
	uint32_t ncap = (t->mask + 1) * 2;
	struct ls_tcode **n = calloc(ncap, sizeof(*n));

	if (!n)
		return -ENOMEM;
	for (uint32_t i = 0; i < t->ntcodes; i++) {
		uint32_t j = ls_hash_ptr(t->tcodes[i]->code) & (ncap - 1);

		while (n[j])
			j = (j + 1) & (ncap - 1);
		n[j] = t->tcodes[i];
	}
	free(t->slots);
	t->slots = n;
	t->mask = ncap - 1;
	return 0;
}

/* The thread's counters for `code`, created (and the code registered) on first sight. */
static struct ls_tcode *tcode_get(struct ls_thread *t, PyObject *code)
{
	struct ls_tcode *tc = ls_tcode_find(t, code);
	struct ls_code *ci;
	uint32_t j;

	if (tc)
		return tc;
	if ((t->used + 1) * 2 > t->mask + 1 && slots_grow(t))
		return NULL;
	if (t->ntcodes == t->captcodes) {
		uint32_t ncap = t->captcodes ? t->captcodes * 2 : 64;
		struct ls_tcode **n = realloc(t->tcodes, ncap * sizeof(*n));

		if (!n)
			return NULL;
		t->tcodes = n;
		t->captcodes = ncap;
	}
	pthread_mutex_lock(&g_ls.lock);
	ci = registry_find(code);
	pthread_mutex_unlock(&g_ls.lock);
	if (!ci) {
		/* only GIL holders insert, so no other thread can register this code meanwhile */
		ci = code_describe(code);
		if (!ci)
			return NULL;
		pthread_mutex_lock(&g_ls.lock);
		ci->id = g_ls.next_code_id++;
		if (registry_insert(ci)) {
			pthread_mutex_unlock(&g_ls.lock);
			code_free(ci);
			return NULL;
		}
		pthread_mutex_unlock(&g_ls.lock);
	}
	tc = calloc(1, sizeof(*tc));
	if (!tc)
		return NULL;
	tc->code = code;
	tc->ci = ci;
	tc->library = ci->flags & LS_TCF_LIBRARY;
	tc->base = ci->firstlineno;
	for (j = ls_hash_ptr(code) & t->mask; t->slots[j]; j = (j + 1) & t->mask)
		;
	t->slots[j] = tc;
	t->used++;
	t->tcodes[t->ntcodes++] = tc;
	return tc;
}

/*
 * The counters of `line`, growing the code's line array when the line is outside it. Frames
 * point into the array, so moving it moves their pointers too. NULL: not countable.
 */
static struct ls_ent *tcode_line(struct ls_thread *t, struct ls_tcode *tc, int line)
{
	int lo, hi, n;
	struct ls_ent *a;

	if ((unsigned int)(line - tc->base) < (unsigned int)tc->n)
		return &tc->lines[line - tc->base];
	if (line < 0)
		return NULL;
	lo = line < tc->base ? line : tc->base;
	hi = tc->n ? tc->base + tc->n : line + 1;
	if (line + 1 > hi)
		hi = line + 1;
	hi += (hi - lo) / 2 + 8;
	n = hi - lo;
	if (n > LS_MAX_LINE_SPAN)
		return NULL;
	a = calloc(n, sizeof(*a));
	if (!a)
		return NULL;
	if (tc->n) {
		memcpy(a + (tc->base - lo), tc->lines, tc->n * sizeof(*a));
		for (int i = 0; i < t->depth; i++) {
			struct ls_sframe *f = &t->stack[i];

			if (f->tc == tc && f->cur >= tc->lines && f->cur < tc->lines + tc->n)
				f->cur = a + (tc->base - lo) + (f->cur - tc->lines);
		}
	}
	free(tc->lines);
	tc->lines = a;
	tc->base = lo;
	tc->n = n;
	return &a[line - lo];
}

static int stack_grow(struct ls_thread *t)
{
	int ncap = t->cap * 2;
	struct ls_sframe *n;

	if (t->cap >= LS_MAX_DEPTH)
		return -E2BIG;
	n = realloc(t->stack, ncap * sizeof(*n));
	if (!n)
		return -ENOMEM;
	t->stack = n;
	t->cap = ncap;
	t->top = t->depth ? &t->stack[t->depth - 1] : NULL;
	return 0;
}

/* Pops frames down to and including index `k`, closing their intervals at `now`. */
static void frames_pop_to(struct ls_thread *t, int k, uint64_t now)
{
	while (t->depth > k)
		ls_frame_pop(t, now);
}

static int frame_find(struct ls_thread *t, PyObject *code)
{
	for (int i = t->depth - 1; i >= 0; i--)
		if (t->stack[i].code == code)
			return i;
	return -1;
}

int ls_ev_start_slow(struct ls_thread *t, PyObject *code, bool fresh, uint64_t now)
{
	struct ls_tcode *tc;

	if (!t && !(t = thread_new(now)))
		return LS_EV_OK;
	tc = tcode_get(t, code);
	if (!tc)
		return LS_EV_OK;
	if (tc->library)
		return LS_EV_DISABLE;
	if (t->depth >= t->cap && stack_grow(t))
		return LS_EV_OK; /* too deep: this activation is not traced */
	ls_frame_push(t, tc, fresh, now);
	return LS_EV_OK;
}

/*
 * A line of a code object that is not on top of the shadow stack: the frame began before
 * tracing did (push it), or frames above it ended unseen (pop them).
 */
int ls_ev_line_slow(struct ls_thread *t, PyObject *code, int line, uint64_t now)
{
	struct ls_tcode *tc;
	struct ls_sframe *f;
	struct ls_ent *e;

	if (!t && !(t = thread_new(now)))
		return LS_EV_OK;
	tc = tcode_get(t, code);
	if (!tc)
		return LS_EV_OK;
	if (tc->library)
		return LS_EV_DISABLE;
	if (!t->top || t->top->code != code) {
		int k = frame_find(t, code);

		if (k >= 0) {
			frames_pop_to(t, k + 1, now);
		} else {
			if (t->depth >= t->cap && stack_grow(t))
				return LS_EV_OK;
			ls_frame_push(t, tc, false, now);
		}
	}
	f = t->top;
	e = tcode_line(t, tc, line);
	if (!e)
		e = &t->sink;
	f->cur->own += now - t->last;
	e->hits++;
	f->cur = e;
	t->last = now;
	if (now >= t->flush_at)
		ls_thread_flush_self(t, now);
	return LS_EV_OK;
}

int ls_ev_end_slow(struct ls_thread *t, PyObject *code, uint64_t now)
{
	struct ls_tcode *tc;
	int k;

	if (!t)
		return LS_EV_OK;
	tc = tcode_get(t, code);
	if (!tc)
		return LS_EV_OK;
	if (tc->library)
		return LS_EV_DISABLE;
	k = frame_find(t, code);
	if (k >= 0)
		frames_pop_to(t, k, now);
	return LS_EV_OK;
}

/* ---- flushing (lock held) ---- */

struct batch {
	struct ls_trace_batch *hdr;
	struct ls_trace_line *lines;
	double ns_per_tick;
};

static void batch_start(struct batch *b, struct ls_thread *t)
{
	b->hdr = (struct ls_trace_batch *)g_ls.batch_buf;
	b->lines = (struct ls_trace_line *)(b->hdr + 1);
	memset(b->hdr, 0, sizeof(*b->hdr));
	b->hdr->kind = LS_TM_BATCH;
	b->hdr->tid = t->tid;
}

static void batch_fire(struct batch *b, uint32_t flags)
{
	b->hdr->flags = flags;
	b->hdr->seq = g_ls.seq++;
	ls_probe_batch(b->hdr, sizeof(*b->hdr) + b->hdr->nlines * sizeof(struct ls_trace_line));
	b->hdr->nlines = 0;
}

static void batch_add(struct batch *b, struct ls_tcode *tc, int line, struct ls_ent *e)
{
	struct ls_trace_line *l;

	if (!tc->ci->sent)
		code_send(tc->ci);
	if (b->hdr->nlines == LS_BATCH_MAX)
		batch_fire(b, 0);
	l = &b->lines[b->hdr->nlines++];
	l->code = tc->ci->id;
	l->line = line;
	l->hits = e->hits;
	l->own_ns = (uint64_t)(e->own * b->ns_per_tick);
	/* a line's total is its own time plus its callees'; a calls entry's is its duration */
	l->total_ns = (uint64_t)((line == LS_TRACE_CALLS ? e->total : e->own + e->total) *
				 b->ns_per_tick);
	memset(e, 0, sizeof(*e));
}

/*
 * Send a thread's counters and zero them. Intervals still open are closed at `now` first, so a
 * line that has been running for a while shows its time so far.
 */
static void thread_flush_locked(struct ls_thread *t, uint64_t now, uint32_t flags)
{
	struct batch b;

	if (t->top)
		t->top->cur->own += now - t->last;
	t->last = now;
	for (int i = t->depth - 1; i >= 0; i--) {
		struct ls_sframe *f = &t->stack[i];
		uint64_t dt = now - f->t_enter;

		f->tc->calls.total += dt;
		if (i > 0)
			t->stack[i - 1].cur->total += dt;
		f->t_enter = now;
	}
	memset(&t->sink, 0, sizeof(t->sink));
	batch_start(&b, t);
	b.ns_per_tick = ns_per_tick();
	for (uint32_t i = 0; i < t->ntcodes; i++) {
		struct ls_tcode *tc = t->tcodes[i];

		if (tc->library)
			continue;
		if (tc->calls.hits || tc->calls.total)
			batch_add(&b, tc, LS_TRACE_CALLS, &tc->calls);
		for (int j = 0; j < tc->n; j++) {
			struct ls_ent *e = &tc->lines[j];

			if (e->hits || e->own || e->total)
				batch_add(&b, tc, tc->base + j, e);
		}
	}
	if (b.hdr->nlines || flags)
		batch_fire(&b, flags);
	__atomic_store_n(&t->flushed_last, t->last, __ATOMIC_RELAXED);
	t->flush_at = now + g_ls.flush_ticks;
}

void ls_thread_flush_self(struct ls_thread *t, uint64_t now)
{
	pthread_mutex_lock(&g_ls.lock);
	if (g_ls.enabled)
		thread_flush_locked(t, now, 0);
	else
		t->flush_at = now + g_ls.flush_ticks;
	pthread_mutex_unlock(&g_ls.lock);
}

void ls_core_flush_all(uint32_t flags)
{
	pthread_mutex_lock(&g_ls.lock);
	if (g_ls.enabled)
		for (struct ls_thread *t = g_ls.threads; t; t = t->next)
			thread_flush_locked(t, ls_now(), flags);
	pthread_mutex_unlock(&g_ls.lock);
}

static bool is_stale(struct ls_thread *t, uint64_t now)
{
	uint64_t last = __atomic_load_n(&t->last, __ATOMIC_RELAXED);

	/* running threads flush themselves; this is for those that went quiet with news */
	return last != __atomic_load_n(&t->flushed_last, __ATOMIC_RELAXED) &&
	       now - last >= g_ls.flush_ticks / 2;
}

bool ls_core_has_stale(void)
{
	uint64_t now = ls_now();
	bool any = false;

	pthread_mutex_lock(&g_ls.lock);
	for (struct ls_thread *t = g_ls.threads; t && !any; t = t->next)
		any = is_stale(t, now);
	pthread_mutex_unlock(&g_ls.lock);
	return any;
}

void ls_core_flush_stale(void)
{
	uint64_t now = ls_now();

	pthread_mutex_lock(&g_ls.lock);
	if (g_ls.enabled)
		for (struct ls_thread *t = g_ls.threads; t; t = t->next)
			if (is_stale(t, now))
				thread_flush_locked(t, now, 0);
	pthread_mutex_unlock(&g_ls.lock);
}

/* pthread key destructor: the thread is ending and runs no more Python code. */
static void thread_destroy(void *p)
{
	struct ls_thread *t = p;

	pthread_mutex_lock(&g_ls.lock);
	if (g_ls.enabled)
		thread_flush_locked(t, ls_now(), LS_TBF_THREAD_END);
	thread_unlink(t);
	pthread_mutex_unlock(&g_ls.lock);
	ls_tls = NULL;
	thread_free(t);
}

/* GIL held: no hook runs, so every thread's counters are safe to drop. */
void ls_core_reset_all(void)
{
	struct ls_code **codes;
	uint32_t mask;

	pthread_mutex_lock(&g_ls.lock);
	for (struct ls_thread *t = g_ls.threads; t; t = t->next)
		thread_clear(t);
	codes = g_ls.codes;
	mask = g_ls.codes_mask;
	g_ls.codes = NULL;
	g_ls.codes_mask = 0;
	g_ls.ncodes = 0;
	pthread_mutex_unlock(&g_ls.lock);
	for (uint32_t i = 0; codes && i <= mask; i++)
		code_free(codes[i]);
	free(codes);
}

void ls_core_emit_state(uint32_t state, uint32_t reason)
{
	struct ls_trace_state m = {
		.kind = LS_TM_STATE,
		.state = state,
		.reason = reason,
		.hexversion = PY_VERSION_HEX,
		.mech = g_ls.mech,
		.tool_id = g_ls.tool_id,
		.session = g_ls.session,
	};

	ls_probe_state(&m, sizeof(m));
}

/*
 * os.fork() child, GIL held, one thread: the other threads are gone, and counters copied from
 * the parent are the parent's to report. Codes are re-announced under the child's pid.
 */
void ls_core_after_fork_child(void)
{
	struct ls_thread *t, *next;

	pthread_mutex_init(&g_ls.lock, NULL);
	for (t = g_ls.threads; t; t = next) {
		next = t->next;
		if (t == ls_tls)
			continue;
		thread_unlink(t);
		thread_free(t);
	}
	g_ls.seq = 0;
	for (uint32_t i = 0; g_ls.codes && i <= g_ls.codes_mask; i++)
		if (g_ls.codes[i])
			g_ls.codes[i]->sent = false;
	t = ls_tls;
	if (!t)
		return;
	t->tid = syscall(SYS_gettid);
	for (uint32_t i = 0; i < t->ntcodes; i++) {
		struct ls_tcode *tc = t->tcodes[i];

		memset(&tc->calls, 0, sizeof(tc->calls));
		if (tc->lines)
			memset(tc->lines, 0, tc->n * sizeof(*tc->lines));
	}
	memset(&t->sink, 0, sizeof(t->sink));
	t->last = ls_now();
	for (int i = 0; i < t->depth; i++)
		t->stack[i].t_enter = t->last;
	t->flushed_last = t->last;
	t->flush_at = t->last + g_ls.flush_ticks;
}

/* fork(2) from any thread: keep the lock usable in the child. */
static void atfork_prepare(void)
{
	pthread_mutex_lock(&g_ls.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&g_ls.lock);
}

static void atfork_child(void)
{
	pthread_mutex_init(&g_ls.lock, NULL);
}

int ls_core_init(PyObject *module)
{
	int err;

	clock_init();
	ls_library_init();
	err = pthread_key_create(&g_key, thread_destroy);
	if (err)
		return -err;
	err = pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
	if (err)
		return -err;
	return 0;
}
