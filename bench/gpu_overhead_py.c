// SPDX-License-Identifier: MIT
/*
 * bench/gpu-overhead's Python loops: an embedded CPython whose loop calls a builtin that makes one
 * cudaLaunchKernel on the fake driver, so the launching thread has a real Python frame chain for
 * the injection library to read (gpu/pyloc.c), as in a training loop:
 *   same  every launch from one line (`for _ in range(n): launch()`), what a layer's kernels or
 *         an optimizer's loop look like to the library: each batched under the one before;
 *   new   each launch from another line than the one before (two call sites in turn), as a
 *         model's forward pass: each batched with the frames the library walked;
 *   deep  new, 32 frames deeper (a model's stack is 20-40 frames): more to walk and to send.
 * Both loops make the same Python calls, so their baselines (no library) differ only by loop
 * overhead, which the caller measures with the same shape.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <time.h>

#include "fakecuda.h"
#include "gpu_overhead_py.h"

static const char loops[] = "import ls_bench\n"
			    "launch = ls_bench.launch\n"
			    "def same(n):\n"
			    "    for _ in range(n):\n"
			    "        launch()\n"
			    "def new(n):\n"
			    "    for _ in range(n // 2):\n"
			    "        launch()\n"
			    "        launch()\n"
			    "def deep(n, d=30):\n"
			    "    if d:\n"
			    "        return deep(n, d - 1)\n"
			    "    new(n)\n";

static PyObject *bench_launch(PyObject *self, PyObject *args)
{
	(void)self;
	(void)args;
	fakecuda_launch("bench_kernel", 1000, 0, FAKECUDA_RT);
	Py_RETURN_NONE;
}

static PyMethodDef bench_methods[] = {
	{"launch", bench_launch, METH_NOARGS, "one cudaLaunchKernel on the fake driver"},
	{NULL, NULL, 0, NULL},
};

static struct PyModuleDef bench_module = {
	PyModuleDef_HEAD_INIT, "ls_bench", NULL, -1, bench_methods, NULL, NULL, NULL, NULL,
};

static PyObject *init_bench(void)
{
	return PyModule_Create(&bench_module);
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int call(PyObject *fn, long n)
{
	PyObject *r = PyObject_CallFunction(fn, "l", n);

	if (!r) {
		PyErr_Print();
		return -1;
	}
	Py_DECREF(r);
	return 0;
}

int gpu_overhead_py(const char *shape, long launches, long warmup, int rounds, double *best)
{
	PyObject *main_mod, *fn;
	int r, err = -1;

	if (PyImport_AppendInittab("ls_bench", init_bench))
		return -1;
	Py_InitializeEx(0);
	if (PyRun_SimpleString(loops))
		goto out;
	main_mod = PyImport_AddModule("__main__"); /* borrowed */
	fn = main_mod ? PyObject_GetAttrString(main_mod, shape) : NULL;
	if (!fn)
		goto out;
	if (call(fn, warmup))
		goto out_fn;
	fakecuda_flush();
	for (r = 0; r < rounds; r++) {
		double t0 = now_ns(), ns;

		if (call(fn, launches))
			goto out_fn;
		fakecuda_flush();
		ns = (now_ns() - t0) / (double)launches;
		if (!r || ns < *best)
			*best = ns;
	}
	err = 0;
out_fn:
	Py_DECREF(fn);
out:
	Py_FinalizeEx();
	return err;
}
