// SPDX-License-Identifier: MIT
/*
 * Which code is library code: not traced, its time left on the project line that called it.
 * The prefixes are decided once, at import (pyusdt.h, README.md "What is counted").
 */
#include "pyusdt.h"

#include <dlfcn.h>
#include <errno.h>
#include <string.h>

static int add_prefix(const char *p, size_t len)
{
	char *s;

	while (len > 1 && p[len - 1] == '/')
		len--;
	if (!len || g_ls.nlib_prefix >= LS_LIB_PREFIX_MAX)
		return 0;
	for (int i = 0; i < g_ls.nlib_prefix; i++)
		if (strlen(g_ls.lib_prefix[i]) == len && !memcmp(g_ls.lib_prefix[i], p, len))
			return 0;
	s = malloc(len + 1);
	if (!s)
		return -ENOMEM;
	memcpy(s, p, len);
	s[len] = 0;
	g_ls.lib_prefix[g_ls.nlib_prefix++] = s;
	return 0;
}

static void add_prefix_obj(PyObject *o)
{
	Py_ssize_t len;
	const char *s = ls_str_utf8(o, &len);

	if (s)
		add_prefix(s, len);
}

static void ends_with_add(PyObject *o, const char *suffix)
{
	Py_ssize_t len;
	size_t sl = strlen(suffix);
	const char *s = ls_str_utf8(o, &len);

	if (!s)
		return;
	while (len > 1 && s[len - 1] == '/')
		len--;
	if ((size_t)len >= sl && !memcmp(s + len - sl, suffix, sl))
		add_prefix(s, len);
}

/*
 * Library code is what the interpreter and installed packages bring: the standard library
 * (the directory of os.py), every site-packages / dist-packages directory on sys.path, frozen
 * modules, and this extension's own directory (our sitecustomize). LINESCOPE_TRACE_LIBRARY
 * replaces the list (colon-separated prefixes); set but empty, everything is traced.
 */
void ls_library_init(void)
{
	const char *env = getenv("LINESCOPE_TRACE_LIBRARY");
	PyObject *path, *os, *file;
	Dl_info dl;

	if (env) {
		const char *p = env;

		g_ls.trace_all = !*env;
		while (*p) {
			const char *e = strchr(p, ':');
			size_t n = e ? (size_t)(e - p) : strlen(p);

			add_prefix(p, n);
			p += n + (e ? 1 : 0);
		}
		return;
	}
	os = PyImport_ImportModule("os.path");
	if (os) {
		file = PyObject_GetAttrString(PyImport_AddModule("os"), "__file__");
		if (file) {
			PyObject *d = PyObject_CallMethod(os, "dirname", "O", file);

			add_prefix_obj(d);
			Py_XDECREF(d);
			Py_DECREF(file);
		}
	}
	PyErr_Clear();
	path = PySys_GetObject("path"); /* borrowed */
	if (path && PyList_Check(path)) {
		for (Py_ssize_t i = 0; i < PyList_GET_SIZE(path); i++) {
			ends_with_add(PyList_GET_ITEM(path, i), "site-packages");
			ends_with_add(PyList_GET_ITEM(path, i), "dist-packages");
		}
	}
	Py_XDECREF(os);
	PyErr_Clear();
	/* __file__ is not set yet while the module initialises; ask the dynamic loader */
	if (dladdr((void *)ls_library_init, &dl) && dl.dli_fname && strrchr(dl.dli_fname, '/'))
		add_prefix(dl.dli_fname, strrchr(dl.dli_fname, '/') - dl.dli_fname);
}

bool ls_core_is_library(const char *filename)
{
	if (g_ls.trace_all)
		return false;
	if (!strncmp(filename, "<frozen ", 8))
		return true;
	for (int i = 0; i < g_ls.nlib_prefix; i++) {
		size_t n = strlen(g_ls.lib_prefix[i]);

		if (!strncmp(filename, g_ls.lib_prefix[i], n) &&
		    (filename[n] == '/' || filename[n] == 0))
			return true;
	}
	return false;
}
