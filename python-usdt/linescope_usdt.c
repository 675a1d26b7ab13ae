// SPDX-License-Identifier: MIT
/*
 * linescope_usdt: exact per-line hit counts and times for linescope-bpf --trace.
 *
 * Importing the module costs one background thread that wakes every 100 ms and reads the USDT
 * semaphore of linescope:batch. While a tracer is attached (the semaphore is non-zero) the
 * interpreter hooks are installed and per-thread counters leave the process in batches through
 * the linescope:* probes; when the last tracer detaches the hooks are removed again. With no
 * tracer the interpreter runs untouched. python-usdt/README.md documents the contract.
 */
#include "pyusdt.h"
#include "probes.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>

/*
 * The flush thread. It sleeps on a condition variable so that it can be stopped at once: around
 * os.fork() it is stopped and started again, because CPython 3.12+ warns about forking a
 * multi-threaded process and this thread should not be what makes it so.
 */
static struct {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	pthread_t thread;
	pid_t tid;
	bool running;
	bool stop;
} g_fl = {.mu = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

static volatile bool g_stopping; /* interpreter exit began: never take the GIL again */
static bool g_failed;		 /* tracing could not start for the current attachment */
static PyObject *g_orig_exit;	 /* os._exit before we wrapped it */

/* GIL held. Turn tracing on or off to match `want`. */
static void set_enabled(bool want)
{
	if (want == g_ls.enabled || (want && g_failed))
		return;
	if (want) {
		ls_core_reset_all();
		ls_cells_reset();
		g_ls.session++;
		g_ls.reason = LS_TR_NONE;
#ifdef Py_GIL_DISABLED
		g_ls.reason = LS_TR_FREE_THREADED;
#else
		if (ls_hooks_enable() == 0) {
			pthread_mutex_lock(&g_ls.lock);
			g_ls.enabled = true;
			pthread_mutex_unlock(&g_ls.lock);
			ls_core_emit_state(LS_TRACE_ON, LS_TR_NONE);
			return;
		}
#endif
		g_failed = true;
		ls_core_emit_state(LS_TRACE_UNAVAILABLE, g_ls.reason);
		return;
	}
	ls_hooks_disable();
	pthread_mutex_lock(&g_ls.lock);
	g_ls.enabled = false;
	pthread_mutex_unlock(&g_ls.lock);
	ls_core_emit_state(LS_TRACE_OFF, LS_TR_DETACHED);
	ls_core_reset_all();
}

/* Sleep one flush period; false when asked to stop. */
static bool flusher_nap(void)
{
	struct timespec until;
	bool stop;

	clock_gettime(CLOCK_MONOTONIC, &until);
	until.tv_nsec += LS_FLUSH_MS * 1000000L;
	if (until.tv_nsec >= 1000000000L) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000L;
	}
	pthread_mutex_lock(&g_fl.mu);
	while (!g_fl.stop && pthread_cond_timedwait(&g_fl.cond, &g_fl.mu, &until) == 0)
		;
	stop = g_fl.stop;
	pthread_mutex_unlock(&g_fl.mu);
	return !stop && !g_stopping;
}

static void *flusher_main(void *arg)
{
	sigset_t all;

	/* signals belong to the main thread, as Python expects */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	g_fl.tid = syscall(SYS_gettid);
	while (flusher_nap()) {
		bool want = linescope_batch_semaphore != 0, stale, cells;

		if (!want)
			g_failed = false; /* a later attachment tries again */
		stale = g_ls.enabled && ls_core_has_stale();
		cells = g_ls.enabled && ls_cells_pending();
		if ((want == g_ls.enabled && !stale && !cells) || (want && g_failed))
			continue;
		if (Py_IsInitialized() == 0)
			break;
		PyGILState_STATE st = PyGILState_Ensure();

		if (!g_stopping && !g_fl.stop) {
			set_enabled(want);
			if (g_ls.enabled)
				ls_core_flush_stale();
			if (cells && g_ls.enabled)
				ls_cells_hook();
		}
		PyGILState_Release(st);
	}
	return NULL;
}

static int flusher_start(void)
{
	pthread_condattr_t ca;
	int err;

	if (g_fl.running || g_stopping)
		return 0;
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&g_fl.cond, &ca);
	pthread_condattr_destroy(&ca);
	pthread_mutex_init(&g_fl.mu, NULL);
	g_fl.stop = false;
	err = pthread_create(&g_fl.thread, NULL, flusher_main, NULL);
	if (err)
		return -err;
	g_fl.running = true;
	return 0;
}

/* GIL held; released while waiting, since the thread may be waiting for it. */
static void flusher_stop(void)
{
	pid_t tid;

	if (!g_fl.running)
		return;
	pthread_mutex_lock(&g_fl.mu);
	g_fl.stop = true;
	pthread_cond_signal(&g_fl.cond);
	pthread_mutex_unlock(&g_fl.mu);
	Py_BEGIN_ALLOW_THREADS pthread_join(g_fl.thread, NULL);
	Py_END_ALLOW_THREADS g_fl.running = false;
	/* pthread_join returns before the kernel drops the thread from the count CPython reads */
	tid = g_fl.tid;
	for (int i = 0; tid > 0 && i < 100000 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; i++)
		sched_yield();
}

/* Py_AtExit: after finalization, no hook runs any more; send what is left. */
static void at_exit_final(void)
{
	g_stopping = true;
	ls_core_flush_all(LS_TBF_PROCESS_END);
}

/* atexit (Python): finalization is about to start; the flush thread must keep off the GIL. */
static PyObject *py_atexit(PyObject *self, PyObject *unused)
{
	g_stopping = true;
	Py_RETURN_NONE;
}

static PyObject *py_before_fork(PyObject *self, PyObject *unused)
{
	flusher_stop();
	Py_RETURN_NONE;
}

static int flusher_restart(void *unused)
{
	if (flusher_start())
		return PyErr_WarnEx(PyExc_RuntimeWarning,
				    "linescope_usdt: no flush thread after fork", 1);
	return 0;
}

/*
 * Not now: 3.13+ counts the process's threads for its warning after these callbacks have run.
 * A pending call runs once os.fork() has returned.
 */
static PyObject *py_after_fork_parent(PyObject *self, PyObject *unused)
{
	if (Py_AddPendingCall(flusher_restart, NULL))
		flusher_restart(NULL);
	Py_RETURN_NONE;
}

static PyObject *py_after_fork_child(PyObject *self, PyObject *unused)
{
	ls_core_after_fork_child();
	if (g_ls.enabled)
		ls_core_emit_state(LS_TRACE_ON,
				   LS_TR_NONE); /* the child is a new process to trace */
	g_fl.running = false;
	if (flusher_start())
		PyErr_WarnEx(PyExc_RuntimeWarning, "linescope_usdt: no flush thread after fork", 1);
	Py_RETURN_NONE;
}

/* os._exit skips Py_AtExit (multiprocessing children leave this way): flush first. */
static PyObject *py_exit_wrapper(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	g_stopping = true;
	ls_core_flush_all(LS_TBF_PROCESS_END);
	return PyObject_Vectorcall(g_orig_exit, args, nargs, NULL);
}

static PyObject *py_enabled(PyObject *self, PyObject *unused)
{
	return PyBool_FromLong(g_ls.enabled);
}

static PyObject *py_flush(PyObject *self, PyObject *unused)
{
	ls_core_flush_all(0);
	Py_RETURN_NONE;
}

/* depth: traced frames on the calling thread's shadow stack (-1: the thread has none yet) */
/* depth: traced frames on the calling thread's shadow stack (-1: the thread has none yet) */
static PyObject *py_state(PyObject *self, PyObject *unused)
{
	static const char *const mechs[] = {"none", "settrace", "monitoring"};
	int nthreads = 0;

	pthread_mutex_lock(&g_ls.lock);
	for (struct ls_thread *t = g_ls.threads; t; t = t->next)
		nthreads++;
	pthread_mutex_unlock(&g_ls.lock);
	/* one key and its value a line */
	/* clang-format off */
	return Py_BuildValue("{s:O,s:s,s:i,s:i,s:K,s:i,s:i,s:I,s:O,s:O,s:i,s:i}",
			     "enabled", g_ls.enabled ? Py_True : Py_False,
			     "mechanism", mechs[g_ls.mech < 3 ? g_ls.mech : 0],
			     "tool_id", g_ls.enabled ? (int)g_ls.tool_id : -1,
			     "attached", (int)linescope_batch_semaphore,
			     "session", (unsigned long long)g_ls.session,
			     "threads", nthreads,
			     "hooked_threads", ls_hooks_active_threads(),
			     "reason", g_ls.reason,
			     "tsc", g_ls.use_tsc ? Py_True : Py_False,
			     "flusher", g_fl.running ? Py_True : Py_False,
			     "library_prefixes", g_ls.nlib_prefix,
			     "depth", ls_tls ? ls_tls->depth : -1);
	/* clang-format on */
}

static PyObject *py_library_prefixes(PyObject *self, PyObject *unused)
{
	PyObject *l = PyList_New(0);

	for (int i = 0; l && i < g_ls.nlib_prefix; i++) {
		PyObject *s = PyUnicode_DecodeFSDefault(g_ls.lib_prefix[i]);

		if (!s || PyList_Append(l, s)) {
			Py_XDECREF(s);
			Py_DECREF(l);
			return NULL;
		}
		Py_DECREF(s);
	}
	return l;
}

static PyObject *py_is_library(PyObject *self, PyObject *arg)
{
	const char *s = PyUnicode_AsUTF8(arg);

	if (!s)
		return NULL;
	return PyBool_FromLong(ls_core_is_library(s));
}

static PyMethodDef g_methods[] = {
	{"enabled", py_enabled, METH_NOARGS,
	 "True while a tracer is attached and lines are counted."},
	{"state", py_state, METH_NOARGS, "Diagnostics: mechanism, tool id, threads, reason."},
	{"flush", py_flush, METH_NOARGS, "Send every thread's counters now."},
	{"library_prefixes", py_library_prefixes, METH_NOARGS,
	 "Path prefixes whose code is library code (not traced)."},
	{"is_library", py_is_library, METH_O, "Whether a code file name counts as library code."},
	{NULL, NULL, 0, NULL},
};

static PyMethodDef g_atexit_def = {"_atexit", py_atexit, METH_NOARGS, NULL};
static PyMethodDef g_fork_defs[] = {
	{"_before_fork", py_before_fork, METH_NOARGS, NULL},
	{"_after_fork_parent", py_after_fork_parent, METH_NOARGS, NULL},
	{"_after_fork_child", py_after_fork_child, METH_NOARGS, NULL},
};
static PyMethodDef g_exit_def = {"_exit", (PyCFunction)(void (*)(void))py_exit_wrapper,
				 METH_FASTCALL, "os._exit, flushing linescope counters first."};

static struct PyModuleDef g_moddef = {
	PyModuleDef_HEAD_INIT,
	.m_name = "linescope_usdt",
	.m_doc = "Exact line counts for linescope-bpf --trace (USDT probes linescope:*).",
	.m_size = -1,
	.m_methods = g_methods,
};

static int call_with(const char *mod, const char *fn, PyObject *arg, const char *kw)
{
	PyObject *m = PyImport_ImportModule(mod), *f = NULL, *r = NULL, *args = NULL, *kws = NULL;
	int err = -EINVAL;

	if (!m)
		goto out;
	f = PyObject_GetAttrString(m, fn);
	if (!f)
		goto out;
	if (kw) {
		args = PyTuple_New(0);
		kws = Py_BuildValue("{s:O}", kw, arg);
		if (!args || !kws)
			goto out;
		r = PyObject_Call(f, args, kws);
	} else {
		r = PyObject_CallOneArg(f, arg);
	}
	err = r ? 0 : -EINVAL;
out:
	Py_XDECREF(r);
	Py_XDECREF(kws);
	Py_XDECREF(args);
	Py_XDECREF(f);
	Py_XDECREF(m);
	PyErr_Clear();
	return err;
}

static void wrap_os_exit(void)
{
	PyObject *os = PyImport_ImportModule("os"), *w;

	if (!os)
		goto out;
	g_orig_exit = PyObject_GetAttrString(os, "_exit");
	w = g_orig_exit ? PyCFunction_NewEx(&g_exit_def, NULL, NULL) : NULL;
	if (w && PyObject_SetAttrString(os, "_exit", w) == 0)
		w = NULL;
	Py_XDECREF(w);
	Py_DECREF(os);
out:
	PyErr_Clear();
}

PyMODINIT_FUNC PyInit_linescope_usdt(void)
{
	PyObject *m = PyModule_Create(&g_moddef), *cb;
	int err;

	if (!m)
		return NULL;
	err = ls_core_init(m);
	if (!err)
		err = ls_hooks_init(m);
	if (err) {
		Py_DECREF(m);
		PyErr_Format(PyExc_ImportError, "linescope_usdt: cannot initialise (%s)",
			     strerror(-err));
		return NULL;
	}
	PyModule_AddIntConstant(m, "FLUSH_MS", LS_FLUSH_MS);
	PyModule_AddStringConstant(m, "PROVIDER", LS_USDT_PROVIDER);
	cb = PyCFunction_NewEx(&g_atexit_def, NULL, NULL);
	if (cb) {
		call_with("atexit", "register", cb, NULL);
		Py_DECREF(cb);
	}
	for (int i = 0; i < 3; i++) {
		static const char *const when[] = {"before", "after_in_parent", "after_in_child"};

		cb = PyCFunction_NewEx(&g_fork_defs[i], NULL, NULL);
		if (cb) {
			call_with("os", "register_at_fork", cb, when[i]);
			Py_DECREF(cb);
		}
	}
	wrap_os_exit();
	Py_AtExit(at_exit_final);
	/* a tracer attached before the import (a launched command): trace from the first line */
	if (linescope_batch_semaphore)
		set_enabled(true);
	err = flusher_start();
	if (err)
		PyErr_WarnEx(PyExc_RuntimeWarning, "linescope_usdt: no flush thread; not tracing",
			     1);
	return m;
}
