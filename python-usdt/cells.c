// SPDX-License-Identifier: MIT
/*
 * IPython cells announced to the tracer: the compile name of each cell, its text as typed and its
 * text as compiled, so that linescope-bpf can show cells that no history database or notebook
 * file holds (run_cell() from code, a kernel that keeps its history in memory, an edited cell not
 * saved). The shell's compiler is wrapped (its `cache` method, which names every cell IPython
 * compiles) by a C function, so nothing of ours runs as Python code under the tracer; the cells
 * cached before are announced from the compiler's map and linecache once per tracing session.
 * The flush thread looks for a shell (IPython imported, get_ipython() not None) while tracing is
 * on and none was found: the hooks cannot tell, since IPython's own frames may run in a thread
 * they do not reach. Everything here runs with the GIL held except ls_cells_pending().
 */
#include "pyusdt.h"
#include "probes.h"

#include <string.h>

static struct {
	bool scanned;	/* this session's earlier cells are announced, the compiler wrapped */
	unsigned looks; /* flush periods this session without a shell (no IPython, or not yet) */
	uint32_t seq;
	/* the cell id pre_run_cell gave for the cell about to be cached; taken by its announcement */
	char cell_id[LS_TRACE_CELL_ID];
	uint64_t buf[LS_TRACE_MAX_MSG / 8];
} g_cells;

/* a shell is looked for at every flush period for a minute, then once in ten */
#define CELLS_EAGER_LOOKS 600

static const char *utf8(PyObject *o, Py_ssize_t *len)
{
	const char *s = ls_str_utf8(o, len);

	if (!s)
		*len = 0;
	return s ? s : "";
}

/* Sends one cell in parts through linescope:code; id: its notebook cell's id, or "" */
static void announce(PyObject *name, long number, PyObject *raw, PyObject *text, const char *id)
{
	struct ls_trace_cell *m = (struct ls_trace_cell *)g_cells.buf;
	const size_t room = sizeof(g_cells.buf) - sizeof(*m);
	Py_ssize_t nlen, rlen, tlen;
	bool has_raw = ls_str_utf8(raw, &rlen) != NULL;
	const char *ns = utf8(name, &nlen), *rs = utf8(raw, &rlen), *ts = utf8(text, &tlen);
	const char *parts[4] = {ns, rs, ts, id};
	size_t lens[4] = {nlen, rlen, tlen, strlen(id)};
	size_t total = nlen + rlen + tlen + lens[3], off = 0;

	if (!linescope_code_semaphore || !nlen || total > LS_TRACE_CELL_MAX)
		return;
	memset(m, 0, sizeof(*m));
	m->kind = LS_TM_CELL;
	m->seq = ++g_cells.seq;
	m->name_len = nlen;
	m->raw_len = rlen;
	m->text_len = tlen;
	m->id_len = lens[3];
	m->number = number >= INT32_MIN && number <= INT32_MAX ? (int32_t)number : 0;
	m->flags = has_raw ? 0 : LS_TCELL_NO_RAW;
	do {
		size_t n = total - off < room ? total - off : room, at = 0, base = 0;

		/* this part's bytes, gathered from the four strings */
		for (int i = 0; i < 4; i++) {
			size_t lo = off > base ? off - base : 0, hi = lens[i];

			if (off + n > base && lo < hi) {
				size_t k = hi - lo < n - at ? hi - lo : n - at;

				memcpy((char *)(m + 1) + at, parts[i] + lo, k);
				at += k;
			}
			base += lens[i];
		}
		m->off = off;
		m->part_len = n;
		ls_probe_code(m, sizeof(*m) + n);
		off += n;
	} while (off < total);
}

/* An item of a tuple or a keyword argument; borrowed, or NULL. */
static PyObject *arg_of(PyObject *args, PyObject *kw, Py_ssize_t i, const char *name)
{
	if (PyTuple_GET_SIZE(args) > i)
		return PyTuple_GET_ITEM(args, i);
	return kw ? PyDict_GetItemString(kw, name) : NULL;
}

/* compiler.cache(transformed_code, number=0, raw_code=None) -> the cell's name */
static PyObject *cache_wrapper(PyObject *orig, PyObject *args, PyObject *kw)
{
	PyObject *name = PyObject_Call(orig, args, kw), *text, *num, *raw;
	long number = 0;

	if (!name || !linescope_code_semaphore || !PyUnicode_Check(name))
		return name;
	text = arg_of(args, kw, 0, "transformed_code");
	num = arg_of(args, kw, 1, "number");
	raw = arg_of(args, kw, 2, "raw_code");
	if (num && PyLong_Check(num)) {
		number = PyLong_AsLong(num);
		if (number == -1 && PyErr_Occurred())
			PyErr_Clear(), number = 0;
	}
	announce(name, number, raw && raw != Py_None ? raw : NULL, text, g_cells.cell_id);
	g_cells.cell_id[0] = 0; /* a cell run from this one (silent: no pre_run_cell) has none */
	return name;
}

/* shell.events' pre_run_cell(info): the front end's id of the cell about to run, if it sent one */
static PyObject *pre_run_cell(PyObject *self, PyObject *args, PyObject *kw)
{
	static char *names[] = {"info", NULL};
	PyObject *info, *id;

	/* info by position or by name: IPython's callback prototype (backcall) names it */
	if (!PyArg_ParseTupleAndKeywords(args, kw, "O", names, &info))
		return NULL;
	id = PyObject_GetAttrString(info, "cell_id");
	Py_ssize_t len;
	const char *s = ls_str_utf8(id, &len);

	PyErr_Clear();
	g_cells.cell_id[0] = 0;
	if (s && len > 0 && (size_t)len < sizeof(g_cells.cell_id) && !memchr(s, 0, len))
		memcpy(g_cells.cell_id, s, len + 1);
	Py_XDECREF(id);
	Py_RETURN_NONE;
}

static PyMethodDef g_pre_run_def = {
	"pre_run_cell", (PyCFunction)(void (*)(void))pre_run_cell, METH_VARARGS | METH_KEYWORDS,
	"pre_run_cell(info)\n--\n\nNotes the cell id for linescope-bpf."};

/* Registers pre_run_cell once (events.register does not add a callback it holds already) */
static void watch_cell_ids(PyObject *shell)
{
	static PyObject *cb;
	PyObject *ev = PyObject_GetAttrString(shell, "events"), *r = NULL;

	if (!cb)
		cb = PyCFunction_NewEx(&g_pre_run_def, NULL, NULL);
	if (ev && cb)
		r = PyObject_CallMethod(ev, "register", "sO", "pre_run_cell", cb);
	PyErr_Clear();
	Py_XDECREF(r);
	Py_XDECREF(ev);
}

static PyMethodDef g_wrapper_def = {"cache", (PyCFunction)(void (*)(void))cache_wrapper,
				    METH_VARARGS | METH_KEYWORDS,
				    "IPython's cache(), announcing the cell to linescope-bpf."};

/* Wraps compiler.cache once (a fork child or a later session finds it wrapped). */
static void wrap_cache(PyObject *compiler)
{
	PyObject *cur = PyObject_GetAttrString(compiler, "cache"), *w;

	if (!cur || (PyCFunction_Check(cur) &&
		     PyCFunction_GET_FUNCTION(cur) == (PyCFunction)(void (*)(void))cache_wrapper)) {
		Py_XDECREF(cur);
		return;
	}
	w = PyCFunction_NewEx(&g_wrapper_def, cur, NULL);
	if (w)
		PyObject_SetAttrString(compiler, "cache", w);
	Py_XDECREF(w);
	Py_DECREF(cur);
}

/* The cells the compiler named before: raw text from the shell's input history, when its entry
 * for the execution count is there, compiled text from linecache */
static void announce_cached(PyObject *shell, PyObject *compiler)
{
	PyObject *map = PyObject_GetAttrString(compiler, "_filename_map");
	PyObject *hm = PyObject_GetAttrString(shell, "history_manager");
	PyObject *hist = hm ? PyObject_GetAttrString(hm, "input_hist_raw") : NULL;
	PyObject *lc = PyImport_ImportModule("linecache");
	PyObject *cache = lc ? PyObject_GetAttrString(lc, "cache") : NULL;
	PyObject *key, *val, *sep = PyUnicode_FromString("");
	Py_ssize_t pos = 0;

	PyErr_Clear();
	while (map && PyDict_Check(map) && cache && PyDict_Check(cache) && sep &&
	       PyDict_Next(map, &pos, &key, &val)) {
		PyObject *entry = PyDict_GetItem(cache, key), *text = NULL, *raw = NULL;
		long number = PyLong_Check(val) ? PyLong_AsLong(val) : 0;

		if (entry && PyTuple_Check(entry) && PyTuple_GET_SIZE(entry) >= 3 &&
		    PyList_Check(PyTuple_GET_ITEM(entry, 2)))
			text = PyUnicode_Join(sep, PyTuple_GET_ITEM(entry, 2));
		if (hist && PyList_Check(hist) && number > 0 && number < PyList_GET_SIZE(hist))
			raw = PyList_GET_ITEM(hist, number);
		PyErr_Clear();
		if (text)
			announce(key, number, raw, text, "");
		Py_XDECREF(text);
	}
	PyErr_Clear();
	Py_XDECREF(sep);
	Py_XDECREF(cache);
	Py_XDECREF(lc);
	Py_XDECREF(hist);
	Py_XDECREF(hm);
	Py_XDECREF(map);
}

void ls_cells_reset(void)
{
	g_cells.scanned = false;
	g_cells.looks = 0;
}

bool ls_cells_pending(void)
{
	if (g_cells.scanned)
		return false;
	/* counted here, without the GIL, so that the rare looks cost nothing between them */
	return g_cells.looks++ < CELLS_EAGER_LOOKS || g_cells.looks % 10 == 0;
}

void ls_cells_hook(void)
{
	PyObject *mod = PyUnicode_FromString("IPython");
	PyObject *ipy = mod ? PyImport_GetModule(mod) : NULL, *shell = NULL, *compiler = NULL;

	Py_XDECREF(mod);
	PyErr_Clear();
	if (ipy)
		shell = PyObject_CallMethod(ipy, "get_ipython", NULL);
	if (shell && shell != Py_None)
		compiler = PyObject_GetAttrString(shell, "compile");
	if (compiler) {
		/* wrapped first: no cell is named between the two, the GIL being held */
		wrap_cache(compiler);
		watch_cell_ids(shell);
		announce_cached(shell, compiler);
		g_cells.scanned = true;
	}
	PyErr_Clear();
	Py_XDECREF(compiler);
	Py_XDECREF(shell);
	Py_XDECREF(ipy);
}
