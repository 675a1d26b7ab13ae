// SPDX-License-Identifier: MIT
/*
 * python-usdt message parser (userspace/tracerec.c): the input is a sequence of LS_REC_TRACE
 * records as a target's python-usdt sends them, each prefixed with its 2-byte length.
 */
#include <stdint.h>
#include <string.h>
#include "tracerec.h"

static int64_t name(void *ctx, int64_t proc_id, const char *filename, const char *qualname,
		    int firstlineno)
{
	return (int64_t)(strlen(filename) + strlen(qualname)) % 64 + 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_tracerec *t;
	struct ls_tracerec_stats st;
	static uint64_t rec[65536 / 8];

	if (ls_tracerec__new(name, NULL, &t))
		return 0;
	while (size >= 2) {
		size_t n = data[0] | (size_t)data[1] << 8;

		data += 2;
		size -= 2;
		if (n > size)
			n = size;
		/* ring-buffer records are 8-byte aligned */
		memcpy(rec, data, n);
		ls_tracerec__record(t, 1 + (n & 1), rec, n);
		data += n;
		size -= n;
	}
	ls_tracerec__stats(t, &st);
	ls_tracerec__state(t, 1);
	ls_tracerec__free(t);
	return 0;
}
