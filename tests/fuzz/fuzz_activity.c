// SPDX-License-Identifier: MIT
/*
 * CUPTI activity-buffer parser (gpu/activity.c): the input is a run of records, one per 256-byte
 * slot (more than any record kind we read), walked by an iterator standing in for
 * cuptiActivityGetNextRecord. Pointers inside records (kernel and device names), which CUPTI
 * owns, are pointed at a string made of the input, or NULL, as CUPTI would give them.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "activity.h"

#define SLOT 256

static char name[128];

static CUptiResult CUPTIAPI next(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	uint8_t *p = *rec ? (uint8_t *)*rec + SLOT : buf;

	if (p + SLOT > buf + valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*rec = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

static int on_act(void *ctx, struct ls_gpu_act *act, const char *kname)
{
	return ls_gpu_activity__is_nccl(kname);
}

static int on_device(void *ctx, const struct ls_gpu_devinfo *dev)
{
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t buf[64 * SLOT] __attribute__((aligned(8)));
	struct ls_gpu_parse_ops ops = {.next = next, .act = on_act, .device = on_device};
	struct ls_gpu_parse_stats st = {};
	size_t n = size < sizeof(buf) ? size / SLOT * SLOT : sizeof(buf);
	const char *nm;

	memset(name, 0, sizeof(name));
	memcpy(name, data, size < sizeof(name) - 1 ? size : sizeof(name) - 1);
	memcpy(buf, data, n);
	for (size_t off = 0; off < n; off += SLOT) {
		CUpti_Activity *r = (CUpti_Activity *)(buf + off);
		const char *v = (buf[off + 8] & 1) ? NULL : name;

		if (r->kind == CUPTI_ACTIVITY_KIND_KERNEL ||
		    r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			memcpy(buf + off + offsetof(CUpti_ActivityKernel10, name), &v, sizeof(v));
		if (r->kind == CUPTI_ACTIVITY_KIND_DEVICE)
			memcpy(buf + off + offsetof(CUpti_ActivityDevice5, name), &v, sizeof(v));
	}
	ls_gpu_activity__parse(&ops, buf, n, &st);
	for (size_t off = 0; off < n; off += SLOT) {
		struct ls_gpu_act act;
		struct ls_gpu_devinfo dev;

		ls_gpu_activity__normalize((CUpti_Activity *)(buf + off), &act, &nm);
		ls_gpu_activity__device((CUpti_Activity *)(buf + off), &dev);
	}
	return 0;
}
