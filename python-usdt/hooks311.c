// SPDX-License-Identifier: MIT
/*
 * CPython 3.11: a C trace function (PyTrace_CALL / LINE / RETURN) on every thread. Existing threads
 * get it through _PyEval_SetTrace(); threads started later by `threading` get it from a trampoline
 * in threading._trace_hook, which threading installs with sys.settrace() in the new thread and
 * which replaces itself with the C function on the thread's first event. Threads started with
 * _thread.start_new_thread() directly are not traced.
 */
#include "pyusdt.h"

#if PY_VERSION_HEX < 0x030C0000

#include <frameobject.h>

/*
 * The head of 3.11's PyFrameObject and _PyInterpreterFrame (Include/internal/pycore_frame.h),
 * read directly on every event to skip two calls. Checked against the public API at import; if
 * the check fails the public API is used instead.
 */
struct frame311 {
	PyObject_HEAD PyFrameObject *f_back;
	struct iframe311 *f_frame;
	PyObject *f_trace;
	int f_lineno;
	char f_trace_lines;
	char f_trace_opcodes;
};

struct iframe311 {
	PyObject *f_func;
	PyObject *f_globals;
	PyObject *f_builtins;
	PyObject *f_locals;
	PyCodeObject *f_code;
};

static bool g_mirror_ok;
static PyObject *g_trampoline; /* the builtin set as threading._trace_hook */
static PyObject *g_threading;

static inline PyObject *frame_code(PyFrameObject *frame)
{
	PyCodeObject *co;

	if (ls_likely(g_mirror_ok))
		return (PyObject *)((struct frame311 *)frame)->f_frame->f_code;
	co = PyFrame_GetCode(frame);
	Py_DECREF(co); /* the frame keeps it alive */
	return (PyObject *)co;
}

static inline int frame_line(PyFrameObject *frame)
{
	/* call_trace() stores the line in f_lineno before calling a trace function */
	if (ls_likely(g_mirror_ok))
		return ((struct frame311 *)frame)->f_lineno;
	return PyFrame_GetLineNumber(frame);
}

/* Library code: no line events for this frame (call and return still come). */
static void frame_lines_off(PyFrameObject *frame)
{
	if (g_mirror_ok) {
		((struct frame311 *)frame)->f_trace_lines = 0;
		return;
	}
	if (PyObject_SetAttrString((PyObject *)frame, "f_trace_lines", Py_False))
		PyErr_Clear();
}

/*
 * A 'call' event comes at every RESUME: function start and generator/coroutine resumption. A
 * fresh start is the first RESUME, at _co_firsttraceable; a plain function only ever starts.
 */
static inline bool frame_is_start(PyFrameObject *frame, PyObject *code)
{
	PyCodeObject *co = (PyCodeObject *)code;

	if (!(co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR)))
		return true;
	return PyFrame_GetLasti(frame) / (int)sizeof(_Py_CODEUNIT) <= co->_co_firsttraceable;
}

static int trace_fn(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	PyObject *code;

	switch (what) {
	case PyTrace_LINE:
		code = frame_code(frame);
		if (ls_ev_line(code, frame_line(frame)) == LS_EV_DISABLE)
			frame_lines_off(frame);
		break;
	case PyTrace_CALL:
		code = frame_code(frame);
		if (ls_ev_start(code, frame_is_start(frame, code)) == LS_EV_DISABLE)
			frame_lines_off(frame);
		break;
	case PyTrace_RETURN:
		ls_ev_end(frame_code(frame));
		break;
	default:
		break;
	}
	return 0;
}

/*
 * threading._trace_hook(frame, event, arg) in a new thread, or sys.settrace(x) where x is what
 * sys.gettrace() gave a tool that saved and restored the trace function (pydevd does at import,
 * which ipykernel imports): swap in the C trace function. That is why the C function is installed
 * with this as its object: a restore gives it back, where a NULL object read as None took it away.
 */
static PyObject *trampoline(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	if (!g_ls.enabled) {
		PyEval_SetTrace(NULL, NULL); /* restored after the tracer went: nothing to trace */
		Py_RETURN_NONE;
	}
	PyEval_SetTrace(trace_fn, g_trampoline);
	if (nargs == 3 && PyFrame_Check(args[0]) && PyUnicode_Check(args[1]) &&
	    PyUnicode_CompareWithASCIIString(args[1], "call") == 0)
		trace_fn(NULL, (PyFrameObject *)args[0], PyTrace_CALL, Py_None);
	Py_RETURN_NONE;
}

static PyMethodDef trampoline_def = {
	"_trace_trampoline", (PyCFunction)(void (*)(void))trampoline, METH_FASTCALL,
	"Installs linescope's C trace function in a thread started by threading."};

static void mirror_check(void)
{
	PyFrameObject *f = PyEval_GetFrame(); /* borrowed; the importer's frame */
	struct frame311 *m = (struct frame311 *)f;
	PyCodeObject *co;
	bool ok;

	g_mirror_ok = false;
	if (!f)
		return;
	co = PyFrame_GetCode(f);
	ok = m->f_frame && m->f_frame->f_code == co;
	Py_DECREF(co);
	if (!ok)
		return;
	char was = m->f_trace_lines;

	if (PyObject_SetAttrString((PyObject *)f, "f_trace_lines", Py_False) == 0 &&
	    m->f_trace_lines == 0 &&
	    PyObject_SetAttrString((PyObject *)f, "f_trace_lines", Py_True) == 0 &&
	    m->f_trace_lines == 1)
		ok = true;
	else
		ok = false;
	PyErr_Clear();
	m->f_trace_lines = was;
	g_mirror_ok = ok;
}

int ls_hooks_init(PyObject *module)
{
	g_ls.mech = LS_TMECH_SETTRACE;
	mirror_check();
	g_trampoline = PyCFunction_NewEx(&trampoline_def, NULL, NULL);
	if (!g_trampoline)
		return -ENOMEM;
	/* new threads find the hook in threading; import it now, not from the flush thread */
	g_threading = PyImport_ImportModule("threading");
	if (!g_threading)
		return -ENOENT;
	return 0;
}

static bool hook_is_ours(void)
{
	PyObject *h = PyObject_GetAttrString(g_threading, "_trace_hook");
	bool ours = !h || h == Py_None || h == g_trampoline;

	if (!h)
		PyErr_Clear();
	Py_XDECREF(h);
	return ours;
}

int ls_hooks_enable(void)
{
	PyInterpreterState *interp = PyInterpreterState_Get();
	PyThreadState *ts;

	for (ts = PyInterpreterState_ThreadHead(interp); ts; ts = PyThreadState_Next(ts)) {
		if (ts->c_tracefunc && ts->c_tracefunc != trace_fn &&
		    ts->c_traceobj != g_trampoline) {
			g_ls.reason = LS_TR_BUSY; /* a debugger or coverage tool traces already */
			return -EBUSY;
		}
	}
	if (!hook_is_ours()) {
		g_ls.reason = LS_TR_BUSY;
		return -EBUSY;
	}
	for (ts = PyInterpreterState_ThreadHead(interp); ts; ts = PyThreadState_Next(ts)) {
		if (_PyEval_SetTrace(ts, trace_fn, g_trampoline)) {
			PyErr_Clear();
			ls_hooks_disable();
			g_ls.reason = LS_TR_ERROR;
			return -EPERM;
		}
	}
	if (PyObject_SetAttrString(g_threading, "_trace_hook", g_trampoline)) {
		PyErr_Clear();
		ls_hooks_disable();
		g_ls.reason = LS_TR_ERROR;
		return -EPERM;
	}
	return 0;
}

void ls_hooks_disable(void)
{
	PyInterpreterState *interp = PyInterpreterState_Get();
	PyThreadState *ts;

	for (ts = PyInterpreterState_ThreadHead(interp); ts; ts = PyThreadState_Next(ts))
		if ((ts->c_tracefunc == trace_fn || ts->c_traceobj == g_trampoline) &&
		    _PyEval_SetTrace(ts, NULL, NULL))
			PyErr_Clear();
	if (hook_is_ours() && PyObject_SetAttrString(g_threading, "_trace_hook", Py_None))
		PyErr_Clear();
}

/* Threads of this interpreter that have the C trace function installed. */
int ls_hooks_active_threads(void)
{
	PyThreadState *ts;
	int n = 0;

	for (ts = PyInterpreterState_ThreadHead(PyInterpreterState_Get()); ts;
	     ts = PyThreadState_Next(ts))
		n += ts->c_tracefunc == trace_fn;
	return n;
}

#endif /* PY_VERSION_HEX < 0x030C0000 */
