// SPDX-License-Identifier: MIT
/*
 * CPython layouts: tables for 3.11/3.12, _Py_DebugOffsets readers for 3.13-3.15.
 *
 * Every number here was checked against the interpreters' own headers (offsetof, compiled by
 * tests/tools/pylayout_dump.c) and against live processes (tests/tools/pyoracle.py); the unit test
 * re-checks them against real binaries on every run. docs/cpython-layouts.md has the details.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "pyversions.h"

#define PY_MINOR(v) (((v) >> 16) & 0xff)
#define PY_MAJOR(v) (((v) >> 24) & 0xff)
#define PY_LEVEL(v) (((v) >> 4) & 0xf) /* 0xA alpha, 0xB beta, 0xC candidate, 0xF final */

/* _Py_DebugOffsets is a flat array of uint64_t; positions below are indexes into it (slot * 8). */
#define NO_SLOT 0

/*
 * Where the fields we use sit inside one minor version's _Py_DebugOffsets. The struct layout
 * changes between minor versions (fields are inserted mid-struct), never between patch releases.
 * Slot 0 is the cookie, so 0 doubles as "absent".
 */
struct dbg_desc {
	unsigned minor;
	unsigned size; /* sizeof(_Py_DebugOffsets) */
	unsigned short rt_size, rt_interp_head;
	unsigned short is_size, is_next, is_threads_head, is_threads_main, is_ceval_gil,
		is_gil_state, is_gil_locked, is_gil_holder;
	unsigned short ts_size, ts_prev, ts_next, ts_interp, ts_current_frame, ts_thread_id,
		ts_native_thread_id, ts_holds_gil;
	unsigned short fr_size, fr_previous, fr_executable, fr_instr_ptr, fr_owner;
	unsigned short co_size, co_filename, co_name, co_qualname, co_linetable, co_firstlineno,
		co_argcount, co_adaptive;
	unsigned short by_size, by_ob_size, by_ob_sval;
	unsigned short un_size, un_state, un_length, un_ascii_size, un_compact_size;
};

/* slot numbers: counted from the structs in Include/internal/pycore_runtime.h (3.13) and
 * pycore_debug_offsets.h (3.14, 3.15); the positions are asserted against those headers by
 * tests/unit/test_pyversions.c */
static const struct dbg_desc dbg_descs[] = {
	{
		.minor = 13,
		.size = 73 * 8,
		.rt_size = 3,
		.rt_interp_head = 5,
		.is_size = 6,
		.is_next = 8,
		.is_threads_head = 9,
		.is_threads_main = NO_SLOT,
		.is_ceval_gil = 14,
		.is_gil_state = 15,
		.is_gil_locked = 17,
		.is_gil_holder = 18,
		.ts_size = 19,
		.ts_prev = 20,
		.ts_next = 21,
		.ts_interp = 22,
		.ts_current_frame = 23,
		.ts_thread_id = 24,
		.ts_native_thread_id = 25,
		.ts_holds_gil = NO_SLOT,
		.fr_size = 28,
		.fr_previous = 29,
		.fr_executable = 30,
		.fr_instr_ptr = 31,
		.fr_owner = 33,
		.co_size = 34,
		.co_filename = 35,
		.co_name = 36,
		.co_qualname = 37,
		.co_linetable = 38,
		.co_firstlineno = 39,
		.co_argcount = 40,
		.co_adaptive = 43,
		.by_size = 64,
		.by_ob_size = 65,
		.by_ob_sval = 66,
		.un_size = 67,
		.un_state = 68,
		.un_length = 69,
		.un_ascii_size = 70,
		.un_compact_size = NO_SLOT,
	},
	{
		.minor = 14,
		.size = 95 * 8,
		.rt_size = 3,
		.rt_interp_head = 5,
		.is_size = 6,
		.is_next = 8,
		.is_threads_head = 9,
		.is_threads_main = 10,
		.is_ceval_gil = 15,
		.is_gil_state = 16,
		.is_gil_locked = 18,
		.is_gil_holder = 19,
		.ts_size = 22,
		.ts_prev = 23,
		.ts_next = 24,
		.ts_interp = 25,
		.ts_current_frame = 26,
		.ts_thread_id = 27,
		.ts_native_thread_id = 28,
		.ts_holds_gil = NO_SLOT,
		.fr_size = 31,
		.fr_previous = 32,
		.fr_executable = 33,
		.fr_instr_ptr = 34,
		.fr_owner = 36,
		.co_size = 39,
		.co_filename = 40,
		.co_name = 41,
		.co_qualname = 42,
		.co_linetable = 43,
		.co_firstlineno = 44,
		.co_argcount = 45,
		.co_adaptive = 48,
		.by_size = 74,
		.by_ob_size = 75,
		.by_ob_sval = 76,
		.un_size = 77,
		.un_state = 78,
		.un_length = 79,
		.un_ascii_size = 80,
		.un_compact_size = NO_SLOT,
	},
	{
		.minor = 15,
		.size = 111 * 8,
		.rt_size = 3,
		.rt_interp_head = 5,
		.is_size = 6,
		.is_next = 8,
		.is_threads_head = 9,
		.is_threads_main = 10,
		.is_ceval_gil = 15,
		.is_gil_state = 16,
		.is_gil_locked = 18,
		.is_gil_holder = 19,
		.ts_size = 22,
		.ts_prev = 23,
		.ts_next = 24,
		.ts_interp = 25,
		.ts_current_frame = 26,
		.ts_thread_id = 30,
		.ts_native_thread_id = 31,
		.ts_holds_gil = 34,
		.fr_size = 39,
		.fr_previous = 40,
		.fr_executable = 41,
		.fr_instr_ptr = 42,
		.fr_owner = 44,
		.co_size = 47,
		.co_filename = 48,
		.co_name = 49,
		.co_qualname = 50,
		.co_linetable = 51,
		.co_firstlineno = 52,
		.co_argcount = 53,
		.co_adaptive = 56,
		.by_size = 86,
		.by_ob_size = 87,
		.by_ob_sval = 88,
		.un_size = 89,
		.un_state = 90,
		.un_length = 91,
		.un_ascii_size = 92,
		.un_compact_size = 93,
	},
};

/* Sanity ceilings for section sizes read from another process: far above any real build
 * (3.15: runtime 346560, interp 226232, tstate 888, frame 88, code 216) yet small enough that an
 * offset below them always fits the u16 fields of ls_pylayout where it has to. */
/*
 * 3.13+ facts _Py_DebugOffsets does not carry: offsetof(_PyRuntimeState, autoTSSkey) per minor
 * (3.13.0 and 3.13.18 agree; gone in 3.15), and sizeof(struct _gil_runtime_state).
 */
#define RUNTIME_TSS_KEY_313 2164
#define RUNTIME_TSS_KEY_314 2340
#define GIL_SIZE_313	    216

#define MAX_RUNTIME_SIZE (16u << 20)
#define MAX_INTERP_SIZE	 (4u << 20)
#define MAX_OBJ_SIZE	 0xfff0u

static const char cookie[8] = {'x', 'd', 'e', 'b', 'u', 'g', 'p', 'y'};

static void note(struct ls_pyver *info, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void note(struct ls_pyver *info, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(info->note, sizeof(info->note), fmt, ap);
	va_end(ap);
}

int ls_pyversions__format(__u32 v, char *buf, size_t len)
{
	unsigned level = PY_LEVEL(v), serial = v & 0xf;
	const char *tag = level == 0xa ? "a" : level == 0xb ? "b" : level == 0xc ? "rc" : "?";
	int n;

	if (level == 0xf)
		n = snprintf(buf, len, "%u.%u.%u", PY_MAJOR(v), PY_MINOR(v), (v >> 8) & 0xff);
	else
		n = snprintf(buf, len, "%u.%u.%u%s%u", PY_MAJOR(v), PY_MINOR(v), (v >> 8) & 0xff,
			     tag, serial);
	return n < 0 ? 0 : n;
}

static const struct dbg_desc *find_desc(__u32 version)
{
	size_t i;

	for (i = 0; i < sizeof(dbg_descs) / sizeof(dbg_descs[0]); i++)
		if (PY_MAJOR(version) == 3 && PY_MINOR(version) == dbg_descs[i].minor)
			return &dbg_descs[i];
	return NULL;
}

static bool is_table_version(__u32 version)
{
	return PY_MAJOR(version) == 3 && (PY_MINOR(version) == 11 || PY_MINOR(version) == 12);
}

int ls_pyversions__blob_size(__u32 version)
{
	const struct dbg_desc *d;

	if (is_table_version(version))
		return 0;
	d = find_desc(version);
	return d ? (int)d->size : -ENOTSUP;
}

/* ---- 3.11 / 3.12 tables (x86-64, GIL builds) ---- */

struct table {
	unsigned minor;
	unsigned runtime_size; /* sizeof(_PyRuntimeState) of the builds we verified */
	const char *verified;  /* patch releases checked against headers and live processes */
	struct ls_pylayout lay;
	struct ls_pyver info; /* only the offset fields are used */
};

static const struct table tables[] = {
	{
		.minor = 11,
		.runtime_size = 166688,
		.verified = "3.11.2 (Debian) and 3.11.7",
		.lay =
			{
				.tstate_frame = 56,  /* PyThreadState.cframe */
				.cframe_current = 8, /* _PyCFrame.current_frame */
				.tstate_native_tid = 160,
				.tstate_next = 8,
				.frame_code = 32, /* f_code */
				.frame_previous = 48,
				.frame_instr = 56, /* prev_instr */
				.frame_owner = 69,
				.code_adaptive = 184,
				.code_firstlineno = 72,
				.code_filename = 112,
				.code_qualname = 128,
				.code_linetable = 136,
				.interp_threads_head = 16,
				.runtime_interp_head = 40,
				.runtime_gil_holder = 576, /* gilstate.tstate_current */
				.owner_cstack = 0xff, /* 3.11 has no C-stack frames in the chain */
				.code_tag_mask = 0,
			},
		.info =
			{
				.runtime_interp_head = 40,
				.runtime_interp_main = 48,
				.runtime_tss_key = 596, /* gilstate.autoTSSkey._key */
				.runtime_gil_holder = 576,
				.interp_next = 0,
				.interp_threads_head = 16,
				.interp_threads_main = LS_PY_OFF_NONE,
				.interp_ceval_gil = LS_PY_OFF_NONE,
				.runtime_gil = 360,
				.gil_size = 208,
				.gil_locked = LS_PY_OFF_NONE,
				.gil_last_holder = LS_PY_OFF_NONE,
				.tstate_size = 360,
				.tstate_prev = 0,
				.tstate_next = 8,
				.tstate_interp = 16,
				.tstate_thread_id = 152,
				.tstate_native_thread_id = 160,
				.tstate_holds_gil = LS_PY_OFF_NONE,
				.frame_size = 80,
				.frame_owner_native = 0xff,
				.code_size = 192,
				.code_filename = 112,
				.code_name = 120,
				.code_qualname = 128,
				.code_linetable = 136,
				.code_firstlineno = 72,
				.code_argcount = 56,
				.code_adaptive = 184,
				.unicode_length = 16,
				.unicode_state = 32,
				.unicode_ascii_data = 48,
				.unicode_compact_data = 72,
				.bytes_size = 16,
				.bytes_data = 32,
			},
	},
	{
		.minor = 12,
		.runtime_size = 459944,
		.verified = "3.12.1",
		.lay =
			{
				.tstate_frame = 56,  /* PyThreadState.cframe */
				.cframe_current = 0, /* _PyCFrame.current_frame */
				.tstate_native_tid = 144,
				.tstate_next = 8,
				.frame_code = 0, /* f_code */
				.frame_previous = 8,
				.frame_instr = 56, /* prev_instr */
				.frame_owner = 70,
				.code_adaptive = 192,
				.code_firstlineno = 68,
				.code_filename = 112,
				.code_qualname = 128,
				.code_linetable = 136,
				.interp_threads_head = 72,
				.runtime_interp_head = 40,
				.runtime_gil_holder =
					LS_OFF_NONE, /* the GIL moved into the interpreter */
				.owner_cstack = 3,   /* FRAME_OWNED_BY_CSTACK */
				.code_tag_mask = 0,
			},
		.info =
			{
				.runtime_interp_head = 40,
				.runtime_interp_main = 48,
				.runtime_tss_key = 1548, /* autoTSSkey._key */
				.runtime_gil_holder = LS_PY_OFF_NONE,
				.interp_next = 0,
				.interp_threads_head = 72,
				.interp_threads_main = LS_PY_OFF_NONE,
				.interp_ceval_gil = 384,
				.runtime_gil = LS_PY_OFF_NONE,
				.gil_size = 208,
				.gil_locked = 1056 - 1040,
				.gil_last_holder = 1048 - 1040, /* interp->_gil at 1040 */
				.tstate_size = 288,
				.tstate_prev = 0,
				.tstate_next = 8,
				.tstate_interp = 16,
				.tstate_thread_id = 136,
				.tstate_native_thread_id = 144,
				.tstate_holds_gil = LS_PY_OFF_NONE,
				.frame_size = 80,
				.frame_owner_native = 3,
				.code_size = 200,
				.code_filename = 112,
				.code_name = 120,
				.code_qualname = 128,
				.code_linetable = 136,
				.code_firstlineno = 68,
				.code_argcount = 52,
				.code_adaptive = 192,
				.unicode_length = 16,
				.unicode_state = 32,
				.unicode_ascii_data = 40,
				.unicode_compact_data = 56,
				.bytes_size = 16,
				.bytes_data = 32,
			},
	},
};

static int from_table(__u32 version, __u64 runtime_size, struct ls_pylayout *lay,
		      struct ls_pyver *info)
{
	const struct table *t = &tables[PY_MINOR(version) == 11 ? 0 : 1];
	char vbuf[32];

	*lay = t->lay;
	*info = t->info;
	info->version = version;
	info->runtime_size = t->runtime_size;
	info->tstate_ways = LS_PY_TS_TSS_KEY | LS_PY_TS_THREAD_LIST;
	if (t->minor >= 12)
		info->tstate_ways |= LS_PY_TS_TLS;
	info->unicode_kind_shift = 2;
	info->unicode_compact_bit = 5;
	info->unicode_ascii_bit = 6;
	if (runtime_size && runtime_size != t->runtime_size) {
		ls_pyversions__format(version, vbuf, sizeof(vbuf));
		note(info,
		     "CPython %s: _PyRuntime is %llu bytes, the %u.%u table (verified on %s) expects %u; "
		     "line attribution may be wrong",
		     vbuf, (unsigned long long)runtime_size, 3, t->minor, t->verified,
		     t->runtime_size);
	}
	return 0;
}

/* ---- 3.13+: _Py_DebugOffsets ---- */

static __u64 slot(const unsigned char *blob, unsigned idx)
{
	__u64 v;

	memcpy(&v, blob + (size_t)idx * 8, sizeof(v)); /* the target is x86-64, as we are */
	return v;
}

/*
 * Reads the offset in slot @idx and checks that a @width-byte field there lies inside a struct of
 * @limit bytes. Stores it in *@out (LS_PY_OFF_NONE for an absent slot).
 */
static int field(struct ls_pyver *info, const unsigned char *blob, unsigned idx, __u64 limit,
		 unsigned width, const char *what, __u32 *out)
{
	__u64 off;

	if (idx == NO_SLOT) {
		*out = LS_PY_OFF_NONE;
		return 0;
	}
	off = slot(blob, idx);
	if (off > limit || width > limit - off) {
		note(info, "_Py_DebugOffsets: %s offset %llu is outside its %llu-byte struct", what,
		     (unsigned long long)off, (unsigned long long)limit);
		return -EBADMSG;
	}
	*out = (__u32)off;
	return 0;
}

/* A struct size read from the blob: non-zero and below @max. */
static int size_of(struct ls_pyver *info, const unsigned char *blob, unsigned idx, __u64 max,
		   const char *what, __u64 *out)
{
	__u64 v = slot(blob, idx);

	if (v == 0 || v > max) {
		note(info, "_Py_DebugOffsets: %s size %llu is implausible", what,
		     (unsigned long long)v);
		return -EBADMSG;
	}
	*out = v;
	return 0;
}

static int to_u16(struct ls_pyver *info, __u32 v, const char *what, __u16 *out)
{
	if (v == LS_PY_OFF_NONE) {
		*out = LS_OFF_NONE;
		return 0;
	}
	if (v >= LS_OFF_NONE) {
		note(info, "_Py_DebugOffsets: %s offset %u does not fit the BPF layout", what, v);
		return -EBADMSG;
	}
	*out = (__u16)v;
	return 0;
}

/* The blob is a _Py_DebugOffsets of this version, of a build the walker can read. */
static int blob_header(const struct dbg_desc *d, __u32 version, const unsigned char *blob,
		       size_t blob_len, struct ls_pyver *info)
{
	char vbuf[32], bbuf[32];
	__u64 blob_version;

	ls_pyversions__format(version, vbuf, sizeof(vbuf));
	if (!blob || blob_len < d->size) {
		note(info, "CPython %s: need %u bytes of _Py_DebugOffsets, got %zu", vbuf, d->size,
		     blob ? blob_len : 0);
		return -EBADMSG;
	}
	if (memcmp(blob, cookie, sizeof(cookie)) != 0) {
		note(info, "CPython %s: _PyRuntime does not start with the \"xdebugpy\" cookie",
		     vbuf);
		return -EBADMSG;
	}
	blob_version = slot(blob, 1);
	if (blob_version != version) {
		ls_pyversions__format((__u32)blob_version, bbuf, sizeof(bbuf));
		note(info, "CPython %s: _Py_DebugOffsets says version %s (0x%llx)", vbuf, bbuf,
		     (unsigned long long)blob_version);
		return -EBADMSG;
	}
	if (slot(blob, 2) != 0) {
		info->free_threaded = true;
		note(info,
		     "CPython %u.%ut is a free-threaded build; not supported (its samples count as "
		     "native)",
		     PY_MAJOR(version), PY_MINOR(version));
		return -ENOTSUP;
	}
	return 0;
}

/* Where the data of compact ASCII and compact non-ASCII strings start. */
static int unicode_offsets(const struct dbg_desc *d, const unsigned char *blob, __u64 un,
			   struct ls_pyver *info)
{
	/* asciiobject_size is a size, not an offset: the data of a compact ASCII string starts
	 * there */
	info->unicode_ascii_data = (__u32)slot(blob, d->un_ascii_size);
	if (info->unicode_ascii_data == 0 || info->unicode_ascii_data > un) {
		note(info, "_Py_DebugOffsets: PyASCIIObject size %u is implausible",
		     info->unicode_ascii_data);
		return -EBADMSG;
	}
	/* PyCompactUnicodeObject adds utf8_length and utf8 to PyASCIIObject (3.12+); 3.15 says so
	 */
	info->unicode_compact_data = d->un_compact_size ? (__u32)slot(blob, d->un_compact_size)
							: info->unicode_ascii_data + 16;
	if (info->unicode_compact_data < info->unicode_ascii_data ||
	    info->unicode_compact_data > un) {
		note(info, "_Py_DebugOffsets: PyCompactUnicodeObject size %u is implausible",
		     info->unicode_compact_data);
		return -EBADMSG;
	}
	return 0;
}

static int gil_offsets(struct ls_pyver *info, __u32 gil_state, __u32 gil_locked, __u32 gil_holder)
{
	/* The GIL fields are offsets inside the interpreter of its own _gil; the walker follows the
	 * ceval.gil pointer instead (a legacy subinterpreter shares the main GIL), so keep them
	 * relative to struct _gil_runtime_state. */
	if (gil_locked < gil_state || gil_holder < gil_state) {
		note(info, "_Py_DebugOffsets: GIL fields lie before the GIL struct");
		return -EBADMSG;
	}
	info->gil_locked = gil_locked - gil_state;
	info->gil_last_holder = gil_holder - gil_state;
	return 0;
}

/* Facts of the version that _Py_DebugOffsets does not carry. */
static void version_facts(const struct dbg_desc *d, __u64 rt, struct ls_pyver *info)
{
	/* version rules checked against the headers */
	info->runtime_interp_main = info->runtime_interp_head + 8; /* interpreters.{head,main} */
	if (info->runtime_interp_main + 8 > rt)
		info->runtime_interp_main = LS_PY_OFF_NONE;
	/* autoTSSkey sits deep inside _PyRuntimeState where no debug offset points; known per minor
	 * (3.13.0 and 3.13.18 agree) and gone in 3.15. The caller should still check that the
	 * Py_tss_t there reads _is_initialized == 1 before trusting the key. */
	info->runtime_tss_key = d->minor == 13	 ? RUNTIME_TSS_KEY_313
				: d->minor == 14 ? RUNTIME_TSS_KEY_314
						 : LS_PY_OFF_NONE;
	info->runtime_gil_holder = LS_PY_OFF_NONE;
	info->tstate_ways = LS_PY_TS_TLS | LS_PY_TS_THREAD_LIST;
	if (info->runtime_tss_key != LS_PY_OFF_NONE)
		info->tstate_ways |= LS_PY_TS_TSS_KEY;
	/* FRAME_OWNED_BY_CSTACK (3.13) / FRAME_OWNED_BY_INTERPRETER (3.14+, and CSTACK = 4) */
	info->frame_owner_native = 3;
	info->unicode_kind_shift = 2;
	info->unicode_compact_bit = 5;
	info->unicode_ascii_bit = 6;
}

/* The BPF walker's layout from the offsets read (frame fields as read from the blob); notes
 * what does not fit. */
static int to_layout(const struct dbg_desc *d, struct ls_pyver *info, __u32 cur_frame,
		     __u32 previous, __u32 executable, __u32 instr, __u32 owner,
		     struct ls_pylayout *lay)
{
	int err = 0;

	lay->cframe_current = LS_OFF_NONE;
	lay->owner_cstack = info->frame_owner_native;
	/* 3.14 made f_executable a _PyStackRef: with the GIL, the low two bits are tags
	 * (Py_TAG_REFCNT = 1, Py_INT_TAG = 3); a code object pointer is at least 8-aligned */
	lay->code_tag_mask = d->minor >= 14 ? 3 : 0;
	lay->runtime_gil_holder = LS_OFF_NONE;
	err = err ?: to_u16(info, cur_frame, "current_frame", &lay->tstate_frame);
	err = err ?: to_u16(info, previous, "frame previous", &lay->frame_previous);
	err = err ?: to_u16(info, executable, "frame executable", &lay->frame_code);
	err = err ?: to_u16(info, instr, "frame instr_ptr", &lay->frame_instr);
	err = err ?: to_u16(info, owner, "frame owner", &lay->frame_owner);
	err = err ?: to_u16(info, info->code_adaptive, "co_code_adaptive", &lay->code_adaptive);
	err = err ?: to_u16(info, info->code_firstlineno, "co_firstlineno", &lay->code_firstlineno);
	err = err ?: to_u16(info, info->code_filename, "co_filename", &lay->code_filename);
	err = err ?: to_u16(info, info->code_qualname, "co_qualname", &lay->code_qualname);
	err = err ?: to_u16(info, info->code_linetable, "co_linetable", &lay->code_linetable);
	err = err
		      ?: to_u16(info, info->tstate_native_thread_id, "native_thread_id",
				&lay->tstate_native_tid);
	err = err ?: to_u16(info, info->tstate_next, "tstate next", &lay->tstate_next);
	err = err
		      ?: to_u16(info, info->interp_threads_head, "threads_head",
				&lay->interp_threads_head);
	err = err
		      ?: to_u16(info, info->runtime_interp_head, "interpreters_head",
				&lay->runtime_interp_head);
	return err;
}

static int from_blob(const struct dbg_desc *d, __u32 version, const unsigned char *blob,
		     size_t blob_len, __u64 runtime_size, struct ls_pylayout *lay,
		     struct ls_pyver *info)
{
	__u64 rt, is, ts, fr, co, by, un;
	__u32 gil_state, gil_locked, gil_holder, cur_frame, previous, executable, instr, owner;
	char vbuf[32];
	int err = 0;

	err = blob_header(d, version, blob, blob_len, info);
	if (err)
		return err;
	err = err ?: size_of(info, blob, d->rt_size, MAX_RUNTIME_SIZE, "_PyRuntimeState", &rt);
	err = err ?: size_of(info, blob, d->is_size, MAX_INTERP_SIZE, "PyInterpreterState", &is);
	err = err ?: size_of(info, blob, d->ts_size, MAX_OBJ_SIZE, "PyThreadState", &ts);
	err = err ?: size_of(info, blob, d->fr_size, MAX_OBJ_SIZE, "_PyInterpreterFrame", &fr);
	err = err ?: size_of(info, blob, d->co_size, MAX_OBJ_SIZE, "PyCodeObject", &co);
	err = err ?: size_of(info, blob, d->by_size, MAX_OBJ_SIZE, "PyBytesObject", &by);
	err = err ?: size_of(info, blob, d->un_size, MAX_OBJ_SIZE, "PyUnicodeObject", &un);
	if (err)
		return err;
	if (runtime_size && runtime_size != rt) {
		note(info, "CPython %s: _PyRuntime is %llu bytes but _Py_DebugOffsets says %llu",
		     vbuf, (unsigned long long)runtime_size, (unsigned long long)rt);
		return -EBADMSG;
	}
	info->runtime_size = (__u32)rt;
	info->tstate_size = (__u32)ts;
	info->frame_size = (__u32)fr;
	info->code_size = (__u32)co;

#define F(idx, limit, width, what, out) \
	err = err ?: field(info, blob, d->idx, limit, width, what, out)
	F(rt_interp_head, rt, 8, "interpreters_head", &info->runtime_interp_head);
	F(is_next, is, 8, "interpreter next", &info->interp_next);
	F(is_threads_head, is, 8, "threads_head", &info->interp_threads_head);
	F(is_threads_main, is, 8, "threads_main", &info->interp_threads_main);
	F(is_ceval_gil, is, 8, "ceval_gil", &info->interp_ceval_gil);
	F(is_gil_state, is, 8, "gil_runtime_state", &gil_state);
	F(is_gil_locked, is, 4, "gil_runtime_state_locked", &gil_locked);
	F(is_gil_holder, is, 8, "gil_runtime_state_holder", &gil_holder);
	F(ts_prev, ts, 8, "tstate prev", &info->tstate_prev);
	F(ts_next, ts, 8, "tstate next", &info->tstate_next);
	F(ts_interp, ts, 8, "tstate interp", &info->tstate_interp);
	F(ts_current_frame, ts, 8, "current_frame", &cur_frame);
	F(ts_thread_id, ts, 8, "thread_id", &info->tstate_thread_id);
	F(ts_native_thread_id, ts, 8, "native_thread_id", &info->tstate_native_thread_id);
	F(ts_holds_gil, ts, 4, "holds_gil", &info->tstate_holds_gil);
	F(fr_previous, fr, 8, "frame previous", &previous);
	F(fr_executable, fr, 8, "frame executable", &executable);
	F(fr_instr_ptr, fr, 8, "frame instr_ptr", &instr);
	F(fr_owner, fr, 1, "frame owner", &owner);
	F(co_filename, co, 8, "co_filename", &info->code_filename);
	F(co_name, co, 8, "co_name", &info->code_name);
	F(co_qualname, co, 8, "co_qualname", &info->code_qualname);
	F(co_linetable, co, 8, "co_linetable", &info->code_linetable);
	F(co_firstlineno, co, 4, "co_firstlineno", &info->code_firstlineno);
	F(co_argcount, co, 4, "co_argcount", &info->code_argcount);
	F(co_adaptive, co, 0, "co_code_adaptive", &info->code_adaptive);
	F(by_ob_size, by, 8, "bytes ob_size", &info->bytes_size);
	F(by_ob_sval, by, 0, "bytes ob_sval", &info->bytes_data);
	F(un_state, un, 4, "unicode state", &info->unicode_state);
	F(un_length, un, 8, "unicode length", &info->unicode_length);
#undef F
	if (err)
		return err;
	err = unicode_offsets(d, blob, un, info);
	if (err)
		return err;
	err = gil_offsets(info, gil_state, gil_locked, gil_holder);
	if (err)
		return err;
	version_facts(d, rt, info);
	err = to_layout(d, info, cur_frame, previous, executable, instr, owner, lay);
	if (err)
		return err;
	info->from_debug_offsets = true;
	info->debug_offsets_size = d->size;
	return 0;
}

/* The walker reads str and bytes objects too (to describe code objects): give it their offsets. */
static void copy_strings(struct ls_pylayout *lay, const struct ls_pyver *info)
{
	lay->unicode_length = info->unicode_length;
	lay->unicode_state = info->unicode_state;
	lay->unicode_ascii_data = info->unicode_ascii_data;
	lay->unicode_compact_data = info->unicode_compact_data;
	lay->unicode_kind_shift = info->unicode_kind_shift;
	lay->unicode_compact_bit = info->unicode_compact_bit;
	lay->unicode_ascii_bit = info->unicode_ascii_bit;
	lay->bytes_size = info->bytes_size;
	lay->bytes_data = info->bytes_data;
}

int ls_pyversions__resolve(__u32 version, const void *blob, size_t blob_len, __u64 runtime_size,
			   struct ls_pylayout *layout, struct ls_pyver *info)
{
	const struct dbg_desc *d;
	char vbuf[32];
	int err;

	if (!layout || !info)
		return -EINVAL;
	memset(layout, 0, sizeof(*layout));
	memset(info, 0, sizeof(*info));
	info->version = version;
	ls_pyversions__format(version, vbuf, sizeof(vbuf));

	if (PY_MAJOR(version) != 3 || PY_MINOR(version) < 11) {
		note(info,
		     "CPython %s is not supported (3.11 to 3.15 are); its samples count as native",
		     vbuf);
		return -ENOTSUP;
	}
	if (PY_LEVEL(version) < 0xc) {
		/* alphas and betas reshuffle internal structs from one release to the next */
		note(info,
		     "CPython %s is a pre-release; only release candidates and finals are "
		     "supported (its samples count as native)",
		     vbuf);
		return -ENOTSUP;
	}
	if (is_table_version(version)) {
		err = from_table(version, runtime_size, layout, info);
		if (!err)
			copy_strings(layout, info);
		return err;
	}
	d = find_desc(version);
	if (!d) {
		note(info,
		     "CPython %s is newer than this build knows (3.11 to 3.15); its samples "
		     "count as native",
		     vbuf);
		return -ENOTSUP;
	}
	err = from_blob(d, version, blob, blob_len, runtime_size, layout, info);
	if (!err) {
		/* the GIL is the interpreter's (ceval.gil points at it); its size is stable */
		info->runtime_gil = LS_PY_OFF_NONE;
		info->gil_size = GIL_SIZE_313;
		copy_strings(layout, info);
	}
	if (err) {
		/* keep only what tells the caller why */
		char why[LS_PY_NOTE_LEN];
		bool ft = info->free_threaded;

		memcpy(why, info->note, sizeof(why));
		memset(layout, 0, sizeof(*layout));
		memset(info, 0, sizeof(*info));
		info->version = version;
		info->free_threaded = ft;
		memcpy(info->note, why, sizeof(why));
	}
	return err;
}

int ls_pyversions__tls_tpoff(const void *code, size_t len, __s64 *tpoff)
{
	static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
	/* mov %fs:disp32,%rax = 64 (fs) 48 (REX.W) 8b (mov r64,r/m64) 04 (rax, SIB) 25 (disp32) */
	static const unsigned char mov_fs[] = {0x64, 0x48, 0x8b, 0x04, 0x25};
	const unsigned char *p = code;
	__s32 disp;

	if (!p || !tpoff)
		return -EINVAL;
	if (len >= sizeof(endbr64) && memcmp(p, endbr64, sizeof(endbr64)) == 0) {
		p += sizeof(endbr64);
		len -= sizeof(endbr64);
	}
	if (len < sizeof(mov_fs) + 4 + 1 || memcmp(p, mov_fs, sizeof(mov_fs)) != 0 ||
	    p[sizeof(mov_fs) + 4] != 0xc3)
		return -ENOENT;
	memcpy(&disp, p + sizeof(mov_fs), sizeof(disp));
	*tpoff = disp;
	return 0;
}
