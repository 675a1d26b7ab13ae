// SPDX-License-Identifier: MIT
/*
 * Prints, as "name value" lines, the offsets and sizes that LineScope needs from one CPython build,
 * computed by the compiler from that build's own internal headers. Build it once per interpreter:
 *
 *	cc -DPy_BUILD_CORE -I<prefix>/include/python3.X [-idirafter <root>/usr/include] \
 *		tests/tools/pylayout_dump.c -o pylayout_dump-3.X
 *
 * tests/tools/check_layouts.sh compiles it against every interpreter we test and compares the
 * output with userspace/pyversions.c (tables for 3.11/3.12, debug-offset readers for 3.13+), so a
 * wrong table entry or a wrong _Py_DebugOffsets field position fails a test instead of a profile.
 * Names are "struct.field"; the value is a byte offset or a size in bytes; "dbg.*" lines are
 * positions inside _Py_DebugOffsets itself.
 */
#include <Python.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal/pycore_code.h"
#include "internal/pycore_frame.h"
#include "internal/pycore_interp.h"
#include "internal/pycore_runtime.h"
#if PY_VERSION_HEX >= 0x030e0000
#include "internal/pycore_debug_offsets.h"
#include "internal/pycore_interpframe_structs.h"
#include "internal/pycore_tstate.h"
#endif

#define P(name, val)	 printf("%s %lu\n", name, (unsigned long)(val))
#define OFF(type, field) P(#type "." #field, offsetof(type, field))
#define DBG(path)	 P("dbg." #path, offsetof(_Py_DebugOffsets, path))

int main(void)
{
	P("version", PY_VERSION_HEX);
#ifdef Py_GIL_DISABLED
	P("free_threaded", 1);
#else
	P("free_threaded", 0);
#endif
	P("sizeof._PyRuntimeState", sizeof(_PyRuntimeState));
	P("sizeof.PyInterpreterState", sizeof(PyInterpreterState));
	P("sizeof.PyThreadState", sizeof(PyThreadState));
	P("sizeof._PyInterpreterFrame", sizeof(_PyInterpreterFrame));
	P("sizeof.gil", sizeof(struct _gil_runtime_state));

	/* runtime and interpreter: thread discovery and the GIL holder */
	OFF(_PyRuntimeState, interpreters.head);
	OFF(_PyRuntimeState, interpreters.main);
#if PY_VERSION_HEX < 0x030c0000
	OFF(_PyRuntimeState, gilstate.tstate_current);
	OFF(_PyRuntimeState, gilstate.autoTSSkey);
	OFF(_PyRuntimeState, gilstate.autoTSSkey._key);
	OFF(_PyRuntimeState, ceval.gil);
	OFF(_PyRuntimeState, ceval.gil.last_holder);
	OFF(_PyRuntimeState, ceval.gil.locked);
#else
	OFF(PyInterpreterState, ceval.gil);
	OFF(PyInterpreterState, _gil);
	OFF(PyInterpreterState, _gil.last_holder);
	OFF(PyInterpreterState, _gil.locked);
#endif
#if PY_VERSION_HEX >= 0x030c0000 && PY_VERSION_HEX < 0x030f0000
	/* 3.15 dropped autoTSSkey: the thread state is only in the _Py_tss_tstate TLS variable */
	OFF(_PyRuntimeState, autoTSSkey);
	OFF(_PyRuntimeState, autoTSSkey._key);
#endif
#if PY_VERSION_HEX >= 0x030d0000
	OFF(PyInterpreterState, threads.main);
#endif
	OFF(PyInterpreterState, next);
	OFF(PyInterpreterState, id);
	OFF(PyInterpreterState, threads.head);

	OFF(PyThreadState, prev);
	OFF(PyThreadState, next);
	OFF(PyThreadState, interp);
	OFF(PyThreadState, thread_id);
	OFF(PyThreadState, native_thread_id);
#if PY_VERSION_HEX < 0x030d0000
	OFF(PyThreadState, cframe);
	OFF(_PyCFrame, current_frame);
#else
	OFF(PyThreadState, current_frame);
#endif

	/* the interpreter frame */
#if PY_VERSION_HEX < 0x030d0000
	OFF(_PyInterpreterFrame, f_code);
	OFF(_PyInterpreterFrame, prev_instr);
#else
	OFF(_PyInterpreterFrame, f_executable);
	OFF(_PyInterpreterFrame, instr_ptr);
#endif
	OFF(_PyInterpreterFrame, previous);
	OFF(_PyInterpreterFrame, owner);
	OFF(_PyInterpreterFrame, localsplus);
#if PY_VERSION_HEX < 0x030c0000
	OFF(_PyInterpreterFrame, is_entry);
	P("owner.cstack", 255); /* 3.11 has no C-stack-owned frames */
#elif PY_VERSION_HEX < 0x030e0000
	P("owner.cstack", FRAME_OWNED_BY_CSTACK);
#else
	P("owner.interpreter", FRAME_OWNED_BY_INTERPRETER);
	P("owner.cstack", FRAME_OWNED_BY_INTERPRETER); /* first non-Python owner value */
#endif

	/* code objects */
	OFF(PyCodeObject, co_flags);
	OFF(PyCodeObject, co_argcount);
	OFF(PyCodeObject, co_kwonlyargcount);
	OFF(PyCodeObject, co_firstlineno);
	OFF(PyCodeObject, co_filename);
	OFF(PyCodeObject, co_name);
	OFF(PyCodeObject, co_qualname);
	OFF(PyCodeObject, co_linetable);
	OFF(PyCodeObject, co_code_adaptive);
	P("sizeof.PyCodeObject", sizeof(PyCodeObject));

	/* strings */
	P("sizeof.PyASCIIObject", sizeof(PyASCIIObject));
	P("sizeof.PyCompactUnicodeObject", sizeof(PyCompactUnicodeObject));
	OFF(PyASCIIObject, length);
	OFF(PyASCIIObject, state);
	/* bit positions inside the state bitfield, found by setting each field in a zeroed object
	 */
	{
		PyASCIIObject a;
		unsigned int w;

		memset(&a, 0, sizeof(a));
		a.state.kind = 7;
		memcpy(&w, (char *)&a + offsetof(PyASCIIObject, state), sizeof(w));
		P("unicode.kind_shift", __builtin_ctz(w));
		memset(&a, 0, sizeof(a));
		a.state.compact = 1;
		memcpy(&w, (char *)&a + offsetof(PyASCIIObject, state), sizeof(w));
		P("unicode.compact_bit", __builtin_ctz(w));
		memset(&a, 0, sizeof(a));
		a.state.ascii = 1;
		memcpy(&w, (char *)&a + offsetof(PyASCIIObject, state), sizeof(w));
		P("unicode.ascii_bit", __builtin_ctz(w));
	}
	OFF(PyBytesObject, ob_base.ob_size);
	OFF(PyBytesObject, ob_sval);

#if PY_VERSION_HEX >= 0x030d0000
	P("sizeof._Py_DebugOffsets", sizeof(_Py_DebugOffsets));
	OFF(_PyRuntimeState, debug_offsets);
	DBG(cookie);
	DBG(version);
	DBG(free_threaded);
	DBG(runtime_state.size);
	DBG(runtime_state.interpreters_head);
	DBG(interpreter_state.size);
	DBG(interpreter_state.next);
	DBG(interpreter_state.threads_head);
	DBG(interpreter_state.ceval_gil);
	DBG(interpreter_state.gil_runtime_state);
	DBG(interpreter_state.gil_runtime_state_enabled);
	DBG(interpreter_state.gil_runtime_state_locked);
	DBG(interpreter_state.gil_runtime_state_holder);
	DBG(thread_state.size);
	DBG(thread_state.prev);
	DBG(thread_state.next);
	DBG(thread_state.interp);
	DBG(thread_state.current_frame);
	DBG(thread_state.thread_id);
	DBG(thread_state.native_thread_id);
	DBG(interpreter_frame.size);
	DBG(interpreter_frame.previous);
	DBG(interpreter_frame.executable);
	DBG(interpreter_frame.instr_ptr);
	DBG(interpreter_frame.owner);
	DBG(code_object.size);
	DBG(code_object.filename);
	DBG(code_object.name);
	DBG(code_object.qualname);
	DBG(code_object.linetable);
	DBG(code_object.firstlineno);
	DBG(code_object.argcount);
	DBG(code_object.co_code_adaptive);
	DBG(pyobject.size);
	DBG(pyobject.ob_type);
	DBG(bytes_object.size);
	DBG(bytes_object.ob_size);
	DBG(bytes_object.ob_sval);
	DBG(unicode_object.size);
	DBG(unicode_object.state);
	DBG(unicode_object.length);
	DBG(unicode_object.asciiobject_size);
#endif
#if PY_VERSION_HEX >= 0x030e0000
	DBG(interpreter_state.threads_main);
	DBG(interpreter_state.code_object_generation);
	DBG(interpreter_frame.stackpointer);
	DBG(interpreter_frame.tlbc_index);
	DBG(code_object.co_tlbc);
#endif
#if PY_VERSION_HEX >= 0x030f0000
	DBG(thread_state.holds_gil);
	OFF(PyThreadState, holds_gil);
#endif
	return 0;
}
