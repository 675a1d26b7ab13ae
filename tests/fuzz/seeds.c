// SPDX-License-Identifier: MIT
/*
 * Writes the hand-made seeds of the record-parsing fuzz targets (trace, gpu_records, activity) in
 * the layouts of bpf/linescope.h, gpu/gpu_records.h and CUPTI 13: `make fuzz-seeds`. The other
 * seeds are real files (tests/fuzz/make-seeds.sh).
 *	seeds DIR
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/types.h>
#include <cupti.h>
#include "linescope.h"
#include "gpu_records.h"

static uint8_t buf[65536];
static size_t len;

static void put(const void *p, size_t n)
{
	memcpy(buf + len, p, n);
	len += n;
}

/* a trace record as the fuzz target reads it: 2-byte length, then ls_trace_rec + message */
static void trace_rec(const void *msg, size_t n)
{
	struct ls_trace_rec h = {.type = LS_REC_TRACE, .pid = 100, .tid = 100, .size = n};
	uint16_t l = sizeof(h) + n;

	put(&l, 2);
	put(&h, sizeof(h));
	put(msg, n);
}

static void save(const char *dir, const char *name)
{
	char p[512];
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", dir, name);
	f = fopen(p, "w");
	if (f) {
		fwrite(buf, 1, len, f);
		fclose(f);
	}
	len = 0;
}

static void gpu_rec(uint8_t kind, const void *p, size_t n)
{
	uint16_t l = n;

	put(&kind, 1);
	put(&l, 2);
	put(p, n);
}

int main(int argc, char **argv)
{
	const char *d = argv[1];
	char p[512];

	/* trace: state on, a code object, a batch of two lines and a call count */
	{
		struct ls_trace_state st = {
			.kind = LS_TM_STATE, .state = 1, .hexversion = 0x030b02f0};
		struct {
			struct ls_trace_code c;
			char names[16];
		} code = {{.kind = LS_TM_CODE,
			   .code = 1,
			   .firstlineno = 3,
			   .filename_len = 6,
			   .qualname_len = 4},
			  "app.pymain"};
		struct {
			struct ls_trace_batch b;
			struct ls_trace_line l[3];
		} batch = {{.kind = LS_TM_BATCH, .tid = 100, .nlines = 3},
			   {{1, 4, 10, 1000, 2000},
			    {1, 5, 10, 500, 500},
			    {1, LS_TRACE_CALLS, 1, 0, 3000}}};

		trace_rec(&st, sizeof(st));
		trace_rec(&code, sizeof(code.c) + 10);
		trace_rec(&batch, sizeof(batch));
		snprintf(p, sizeof(p), "%s/trace", d);
		save(p, "seed-session");
	}
	/* gpu_records: hello, a kernel name, a launch and its kernel, a copy, an exit */
	{
		struct ls_gpu_hello h = {.hdr = {.type = LS_REC_GPU,
						 .pid = 100,
						 .tid = 7,
						 .sub = LS_GPU_HELLO,
						 .seq = 1,
						 .lib_pid = 100},
					 .abi = LS_GPU_ABI_VERSION,
					 .kinds = 0x3f};
		struct {
			struct ls_gpu_name n;
			char name[8];
		} nm = {{.hdr = {.type = LS_REC_GPU,
				 .pid = 100,
				 .sub = LS_GPU_NAME,
				 .count = 6,
				 .seq = 2},
			 .id = 1},
			"kernel"};
		struct {
			struct ls_gpu_hdr hdr;
			struct ls_gpu_act a[2];
		} act = {{.type = LS_REC_GPU,
			  .pid = 100,
			  .sub = LS_GPU_ACTIVITY,
			  .count = 2,
			  .seq = 3},
			 {{.start = 1000,
			   .end = 2000,
			   .corr = 5,
			   .name_id = 1,
			   .kind = LS_GPU_ACT_KERNEL},
			  {.start = 2000,
			   .end = 2500,
			   .bytes = 4096,
			   .corr = 6,
			   .kind = LS_GPU_ACT_MEMCPY}}};
		struct ls_gpu_status ex = {
			.hdr = {.type = LS_REC_GPU, .pid = 100, .sub = LS_GPU_EXIT, .seq = 4}};
		uint64_t launch[3] = {900, LS_GPU_AUX(5, 1, 0, 0), 100};

		gpu_rec(0, &h, sizeof(h));
		gpu_rec(0, &nm, sizeof(nm.n) + 6);
		gpu_rec(1, launch, sizeof(launch));
		gpu_rec(0, &act, sizeof(act));
		gpu_rec(0, &ex, sizeof(ex));
		snprintf(p, sizeof(p), "%s/gpu_records", d);
		save(p, "seed-session");
	}
	/* activity: one 256-byte slot per record: a kernel, a copy, a set, an allocation, a device
	 */
	{
		static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
							   CUPTI_ACTIVITY_KIND_MEMCPY,
							   CUPTI_ACTIVITY_KIND_MEMSET,
							   CUPTI_ACTIVITY_KIND_MEMORY2,
							   CUPTI_ACTIVITY_KIND_DEVICE,
							   CUPTI_ACTIVITY_KIND_MEMCPY2};

		for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
			uint8_t slot[256] = {0};
			uint64_t t[2] = {1000 * (i + 1), 1000 * (i + 1) + 500};

			memcpy(slot, &kinds[i], 4);
			memcpy(slot + 16, t, sizeof(t));
			put(slot, sizeof(slot));
		}
		snprintf(p, sizeof(p), "%s/activity", d);
		save(p, "seed-records");
	}
	return 0;
}
