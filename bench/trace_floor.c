// SPDX-License-Identifier: MIT
/*
 * bench/trace's floor: the cost of the interpreter's hooks alone. start() installs a C trace
 * function that does nothing (3.11) or registers builtin callbacks that do nothing for the events
 * python-usdt uses (3.12+), so the difference to python-usdt is python-usdt's own work.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#if PY_VERSION_HEX < 0x030C0000
static int noop_trace(PyObject *obj, PyFrameObject *frame, int what, PyObject *arg)
{
	return 0;
}

static PyObject *start(PyObject *self, PyObject *unused)
{
	PyEval_SetTrace(noop_trace, NULL);
	Py_RETURN_NONE;
}
#else
static PyObject *noop(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
	Py_RETURN_NONE;
}

static PyMethodDef noop_def = {"noop", (PyCFunction)(void (*)(void))noop, METH_FASTCALL, NULL};

static PyObject *start(PyObject *self, PyObject *unused)
{
	static const char *const events[] = {"PY_START", "PY_RESUME", "PY_THROW", "PY_RETURN",
					     "PY_YIELD", "PY_UNWIND", "LINE"};
	PyObject *mon = PySys_GetObject("monitoring"), *ev, *cb, *r;
	long mask = 0;

	if (!mon)
		return NULL;
	ev = PyObject_GetAttrString(mon, "events");
	cb = PyCFunction_NewEx(&noop_def, NULL, NULL);
	if (!ev || !cb)
		goto fail;
	r = PyObject_CallMethod(mon, "use_tool_id", "is", 2, "floor");
	if (!r)
		goto fail;
	Py_DECREF(r);
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		PyObject *bit = PyObject_GetAttrString(ev, events[i]);

		if (!bit)
			goto fail;
		mask |= PyLong_AsLong(bit);
		r = PyObject_CallMethod(mon, "register_callback", "iOO", 2, bit, cb);
		Py_DECREF(bit);
		if (!r)
			goto fail;
		Py_DECREF(r);
	}
	r = PyObject_CallMethod(mon, "set_events", "il", 2, mask);
	if (!r)
		goto fail;
	Py_DECREF(r);
	Py_DECREF(ev);
	Py_DECREF(cb);
	Py_RETURN_NONE;
fail:
	Py_XDECREF(ev);
	Py_XDECREF(cb);
	return NULL;
}
#endif

static PyMethodDef methods[] = {
	{"start", start, METH_NOARGS, "Install hooks that do nothing."},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, .m_name = "trace_floor", .m_size = -1,
				    .m_methods = methods};

PyMODINIT_FUNC PyInit_trace_floor(void)
{
	return PyModule_Create(&moddef);
}
