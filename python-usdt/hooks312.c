// SPDX-License-Identifier: MIT
/*
 * CPython 3.12+: sys.monitoring (PEP 669) with builtin C callbacks for PY_START, PY_RESUME,
 * PY_THROW (activation starts), PY_RETURN, PY_YIELD, PY_UNWIND (activation ends) and LINE. The
 * events are per interpreter, so every thread, present and future, is covered. Library code
 * answers DISABLE to the local events, after which the interpreter stops reporting them there.
 */
#include "pyusdt.h"

#if PY_VERSION_HEX >= 0x030C0000

#define LS_TOOL_NAME "linescope"

enum ev {
	EV_PY_START,
	EV_PY_RESUME,
	EV_PY_THROW,
	EV_PY_RETURN,
	EV_PY_YIELD,
	EV_PY_UNWIND,
	EV_LINE,
	EV_N,
};

static const char *const ev_names[EV_N] = {
	"PY_START", "PY_RESUME", "PY_THROW", "PY_RETURN", "PY_YIELD", "PY_UNWIND", "LINE",
};

static PyObject *g_monitoring; /* sys.monitoring */
static PyObject *g_disable;    /* sys.monitoring.DISABLE */
static long g_ev_bits[EV_N];
static PyObject *g_cb[EV_N];
static int g_tool = -1;

static inline PyObject *result(int r)
{
	if (r == LS_EV_DISABLE)
		return Py_NewRef(g_disable);
	Py_RETURN_NONE;
}

static PyObject *cb_start(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	return result(ls_ev_start(args[0], true));
}

static PyObject *cb_resume(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	return result(ls_ev_start(args[0], false));
}

/* PY_THROW and PY_UNWIND are not local events: DISABLE is not an answer they accept */
static PyObject *cb_throw(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	ls_ev_start(args[0], false);
	Py_RETURN_NONE;
}

static PyObject *cb_end(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	return result(ls_ev_end(args[0]));
}

static PyObject *cb_unwind(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	ls_ev_end(args[0]);
	Py_RETURN_NONE;
}

static PyObject *cb_line(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	PyObject *l = args[1];
	long line;

	if (ls_likely(PyLong_CheckExact(l) && PyUnstable_Long_IsCompact((PyLongObject *)l))) {
		line = (long)PyUnstable_Long_CompactValue((PyLongObject *)l);
	} else {
		line = PyLong_AsLong(l);
		if (line == -1 && PyErr_Occurred()) {
			PyErr_Clear();
			Py_RETURN_NONE;
		}
	}
	return result(ls_ev_line(args[0], (int)line));
}

#define CB(name, fn)                                                       \
	{                                                                  \
		name, (PyCFunction)(void (*)(void))fn, METH_FASTCALL, NULL \
	}

static PyMethodDef g_defs[EV_N] = {
	[EV_PY_START] = CB("_on_py_start", cb_start),
	[EV_PY_RESUME] = CB("_on_py_resume", cb_resume),
	[EV_PY_THROW] = CB("_on_py_throw", cb_throw),
	[EV_PY_RETURN] = CB("_on_py_return", cb_end),
	[EV_PY_YIELD] = CB("_on_py_yield", cb_end),
	[EV_PY_UNWIND] = CB("_on_py_unwind", cb_unwind),
	[EV_LINE] = CB("_on_line", cb_line),
};

int ls_hooks_init(PyObject *module)
{
	PyObject *events;

	g_ls.mech = LS_TMECH_MONITORING;
	g_monitoring = PySys_GetObject("monitoring"); /* borrowed */
	if (!g_monitoring)
		return -ENOENT;
	Py_INCREF(g_monitoring);
	g_disable = PyObject_GetAttrString(g_monitoring, "DISABLE");
	events = PyObject_GetAttrString(g_monitoring, "events");
	if (!g_disable || !events) {
		Py_XDECREF(events);
		return -ENOENT;
	}
	for (int i = 0; i < EV_N; i++) {
		PyObject *v = PyObject_GetAttrString(events, ev_names[i]);

		g_ev_bits[i] = v ? PyLong_AsLong(v) : -1;
		Py_XDECREF(v);
		g_cb[i] = PyCFunction_NewEx(&g_defs[i], NULL, NULL);
		if (g_ev_bits[i] <= 0 || !g_cb[i]) {
			Py_DECREF(events);
			return -ENOENT;
		}
	}
	Py_DECREF(events);
	return 0;
}

static int call_mon(const char *fn, const char *fmt, ...)
{
	PyObject *f = PyObject_GetAttrString(g_monitoring, fn), *args, *r = NULL;
	va_list ap;

	if (!f)
		goto fail;
	va_start(ap, fmt);
	args = Py_VaBuildValue(fmt, ap);
	va_end(ap);
	if (args)
		r = PyObject_CallObject(f, args);
	Py_XDECREF(args);
	Py_DECREF(f);
	if (!r)
		goto fail;
	Py_DECREF(r);
	return 0;
fail:
	PyErr_Clear();
	return -EINVAL;
}

static bool tool_free(int id)
{
	PyObject *f = PyObject_GetAttrString(g_monitoring, "get_tool");
	PyObject *r = f ? PyObject_CallFunction(f, "i", id) : NULL;
	bool free_ = r == Py_None;

	Py_XDECREF(r);
	Py_XDECREF(f);
	PyErr_Clear();
	return free_;
}

int ls_hooks_enable(void)
{
	/* PROFILER_ID first, then the two ids CPython leaves unnamed */
	static const int ids[] = {2, 4, 3};
	long mask = 0;

	g_tool = -1;
	for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++) {
		if (tool_free(ids[i]) &&
		    call_mon("use_tool_id", "(is)", ids[i], LS_TOOL_NAME) == 0) {
			g_tool = ids[i];
			break;
		}
	}
	if (g_tool < 0) {
		g_ls.reason = LS_TR_BUSY;
		return -EBUSY;
	}
	g_ls.tool_id = g_tool;
	for (int i = 0; i < EV_N; i++) {
		if (call_mon("register_callback", "(ilO)", g_tool, g_ev_bits[i], g_cb[i]))
			goto fail;
		mask |= g_ev_bits[i];
	}
	if (call_mon("set_events", "(il)", g_tool, mask))
		goto fail;
	return 0;
fail:
	ls_hooks_disable();
	g_ls.reason = LS_TR_ERROR;
	return -EINVAL;
}

void ls_hooks_disable(void)
{
	if (g_tool < 0)
		return;
	call_mon("set_events", "(ii)", g_tool, 0);
	for (int i = 0; i < EV_N; i++)
		call_mon("register_callback", "(ilO)", g_tool, g_ev_bits[i], Py_None);
	call_mon("free_tool_id", "(i)", g_tool);
	g_tool = -1;
}

int ls_hooks_active_threads(void)
{
	return -1; /* sys.monitoring is per interpreter: not counted per thread */
}

#endif /* PY_VERSION_HEX >= 0x030C0000 */
