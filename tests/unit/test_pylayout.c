// SPDX-License-Identifier: MIT
/*
 * The per-version layout tables against CPython's own headers (offsetof on the real structs of
 * Debian's python3.11-dev), and the bounds the BPF walker relies on.
 */
#define Py_BUILD_CORE 1
#include <Python.h>
#include <internal/pycore_frame.h>
#include <internal/pycore_interp.h>
#include <internal/pycore_runtime.h>
#include <internal/pycore_gil.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <cmocka.h>
#include <errno.h>
#include <string.h>
#include "pylayout.h"

static void test_311_matches_headers(void **state)
{
	struct ls_pylayout L;
	struct ls_pyextra X;
	char why[128];

	assert_int_equal(ls_pylayout__get(0x030b02f0, NULL, 0, &L, &X, why, sizeof(why)), 0);
	assert_int_equal(L.tstate_frame, offsetof(PyThreadState, cframe));
	assert_int_equal(L.cframe_current, offsetof(_PyCFrame, current_frame));
	assert_int_equal(L.tstate_native_tid, offsetof(PyThreadState, native_thread_id));
	assert_int_equal(L.tstate_next, offsetof(PyThreadState, next));
	assert_int_equal(L.frame_code, offsetof(_PyInterpreterFrame, f_code));
	assert_int_equal(L.frame_previous, offsetof(_PyInterpreterFrame, previous));
	assert_int_equal(L.frame_instr, offsetof(_PyInterpreterFrame, prev_instr));
	assert_int_equal(L.frame_owner, offsetof(_PyInterpreterFrame, owner));
	assert_int_equal(L.code_adaptive, offsetof(PyCodeObject, co_code_adaptive));
	assert_int_equal(L.code_firstlineno, offsetof(PyCodeObject, co_firstlineno));
	assert_int_equal(L.code_filename, offsetof(PyCodeObject, co_filename));
	assert_int_equal(L.code_qualname, offsetof(PyCodeObject, co_qualname));
	assert_int_equal(L.code_linetable, offsetof(PyCodeObject, co_linetable));
	assert_int_equal(L.interp_threads_head, offsetof(PyInterpreterState, threads.head));
	assert_int_equal(L.runtime_interp_head, offsetof(_PyRuntimeState, interpreters.head));
	assert_int_equal(L.runtime_gil_holder, offsetof(_PyRuntimeState, gilstate.tstate_current));
	assert_int_equal(L.owner_cstack, 0xff); /* 3.11 has no C-stack shim frames */
	assert_int_equal(X.runtime_tss, offsetof(_PyRuntimeState, gilstate.autoTSSkey));
	assert_int_equal(X.tstate_thread_id, offsetof(PyThreadState, thread_id));
	assert_int_equal(X.code_name, offsetof(PyCodeObject, co_name));
	assert_int_equal(L.unicode_length, offsetof(PyASCIIObject, length));
	assert_int_equal(L.unicode_state, offsetof(PyASCIIObject, state));
	assert_int_equal(L.unicode_ascii_data, sizeof(PyASCIIObject));
	assert_int_equal(L.unicode_compact_data, sizeof(PyCompactUnicodeObject));
	assert_int_equal(L.bytes_size, offsetof(PyVarObject, ob_size));
	assert_int_equal(L.bytes_data, offsetof(PyBytesObject, ob_sval));
	assert_true(X.code_header >= offsetof(PyCodeObject, co_code_adaptive));
	assert_int_equal(X.runtime_gil, offsetof(_PyRuntimeState, ceval.gil));
	assert_int_equal(X.gil_size, sizeof(struct _gil_runtime_state));
	assert_int_equal(ls_pylayout__check(&L), 0);
}

static void test_311_unicode_state_bits(void **state)
{
	PyASCIIObject o;
	struct ls_pylayout L;
	struct ls_pyextra X;
	uint32_t raw;
	char why[128];

	/* set each bit field through the real struct and read it back with our shifts */
	assert_int_equal(ls_pylayout__get(0x030b07f0, NULL, 0, &L, &X, why, sizeof(why)), 0);
	memset(&o, 0, sizeof(o));
	o.state.kind = PyUnicode_2BYTE_KIND;
	o.state.compact = 1;
	o.state.ascii = 0;
	memcpy(&raw, (char *)&o + L.unicode_state, 4);
	assert_int_equal((raw >> L.unicode_kind_shift) & 7, 2);
	assert_int_equal((raw >> L.unicode_compact_bit) & 1, 1);
	assert_int_equal((raw >> L.unicode_ascii_bit) & 1, 0);
	o.state.ascii = 1;
	memcpy(&raw, (char *)&o + L.unicode_state, 4);
	assert_int_equal((raw >> L.unicode_ascii_bit) & 1, 1);
}

static void test_unknown_versions(void **state)
{
	struct ls_pylayout L;
	struct ls_pyextra X;
	char why[128] = "";

	assert_int_equal(ls_pylayout__get(0x030a0cf0, NULL, 0, &L, &X, why, sizeof(why)), -ENOTSUP);
	assert_non_null(strstr(why, "3.10"));
	assert_int_equal(ls_pylayout__get(0x04000000, NULL, 0, &L, &X, why, sizeof(why)), -ENOTSUP);
}

static void test_check_bounds(void **state)
{
	struct ls_pylayout L;
	struct ls_pyextra X;
	char why[128];

	ls_pylayout__get(0x030b02f0, NULL, 0, &L, &X, why, sizeof(why));
	L.frame_instr = LS_FRAME_WIN - 4;
	assert_int_equal(ls_pylayout__check(&L), -EINVAL);
	ls_pylayout__get(0x030b02f0, NULL, 0, &L, &X, why, sizeof(why));
	L.code_linetable = LS_CODE_WIN;
	assert_int_equal(ls_pylayout__check(&L), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_311_matches_headers),
		cmocka_unit_test(test_311_unicode_state_bits),
		cmocka_unit_test(test_unknown_versions),
		cmocka_unit_test(test_check_bounds),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
