// SPDX-License-Identifier: MIT
/*
 * CPython layout tables. The 3.11 offsets were verified on Debian's 3.11.2 and pyenv's 3.11.7 by
 * walking live processes (see docs/cpython-layouts.md); they are identical for 3.11.0-3.11.x.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include "pylayout.h"

static const struct ls_pylayout layout_311 = {
	.tstate_frame = 56, /* PyThreadState.cframe */
	.cframe_current = 8,
	.tstate_native_tid = 160,
	.tstate_next = 8,
	.frame_code = 32,
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
	.owner_cstack = 0xff,
	.code_tag_mask = 0,
	.unicode_length = 16,
	.unicode_state = 32,
	.unicode_ascii_data = 48,
	.unicode_compact_data = 72,
	.bytes_size = 16,
	.bytes_data = 32,
	.unicode_kind_shift = 2,
	.unicode_compact_bit = 5,
	.unicode_ascii_bit = 6,
};

static const struct ls_pyextra extra_311 = {
	.runtime_tss = 592,
	.tstate_thread_id = 152,
	.code_name = 120,
	.code_header = 184,
	.runtime_gil = 360,
	.gil_size = 208,
};

int ls_pylayout__check(const struct ls_pylayout *L)
{
	const uint16_t frame_offs[] = {L->frame_code, L->frame_previous, L->frame_instr};
	const uint16_t code_offs[] = {L->code_filename, L->code_qualname, L->code_linetable};

	for (size_t i = 0; i < sizeof(frame_offs) / sizeof(frame_offs[0]); i++)
		if (frame_offs[i] > LS_FRAME_WIN - 8)
			return -EINVAL;
	if (L->frame_owner >= LS_FRAME_WIN)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(code_offs) / sizeof(code_offs[0]); i++)
		if (code_offs[i] > LS_CODE_WIN - 8)
			return -EINVAL;
	if (L->code_firstlineno > LS_CODE_WIN - 4)
		return -EINVAL;
	/* the walker reads a str header as one 48-byte window */
	if (L->unicode_length > 40 || L->unicode_state > 44)
		return -EINVAL;
	return 0;
}

int ls_pylayout__get(uint32_t version_hex, const void *debug, size_t len, struct ls_pylayout *L,
		     struct ls_pyextra *X, char *why, size_t whylen)
{
	unsigned major = version_hex >> 24, minor = (version_hex >> 16) & 0xff;

	if (major == 3 && minor == 11) {
		*L = layout_311;
		*X = extra_311;
		return 0;
	}
	snprintf(why, whylen, "CPython %u.%u is not supported (supported: 3.11)", major, minor);
	return -ENOTSUP;
}
