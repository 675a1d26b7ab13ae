// SPDX-License-Identifier: MIT
/*
 * GPU records from a target's injection library (userspace/gpu_agg.c, the profiler's side): the input is
 * a sequence of launches and records, each prefixed with a kind byte and a 2-byte length.
 */
#include <stdint.h>
#include <string.h>
#include "gpu_agg.h"

static void attr(void *ctx, const struct ls_gpu_attr *a)
{
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ls_gpu_agg_opts o = {.sz = sizeof(o), .window = 64, .pending = 64};
	struct ls_gpu_agg_stats st;
	struct ls_gpu_agg *agg;
	static uint64_t rec[65536 / 8];

	if (ls_gpu_agg__new(&o, attr, NULL, &agg))
		return 0;
	while (size >= 3) {
		uint8_t kind = data[0];
		size_t n = data[1] | (size_t)data[2] << 8;
		uint64_t v[3] = {0};

		data += 3;
		size -= 3;
		if (n > size)
			n = size;
		if (kind & 1) {
			memcpy(v, data, n < sizeof(v) ? n : sizeof(v));
			ls_gpu_agg__launch(agg, 100 + (kind >> 6), 7, v[0], v[1], v[2],
					   v[0] ^ v[1]);
		} else {
			/* ring-buffer records are 8-byte aligned */
			memcpy(rec, data, n);
			ls_gpu_agg__record(agg, rec, n);
		}
		data += n;
		size -= n;
	}
	ls_gpu_agg__name(agg, 100, 1);
	ls_gpu_agg__finish_pid(agg, 100);
	ls_gpu_agg__finish(agg);
	ls_gpu_agg__stats(agg, &st);
	ls_gpu_agg__free(agg);
	return 0;
}
