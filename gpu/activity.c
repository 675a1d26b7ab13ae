// SPDX-License-Identifier: MIT
/* CUPTI activity records -> struct ls_gpu_act; see activity.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "activity.h"

/*
 * The layouts we read, pinned against the CUDA 13.0 headers. The iterator's stride follows the
 * libcupti loaded at run time, which may be newer (Kernel11.. in 13.1+) or older (Kernel9 in
 * 12.x); we read only prefix fields whose offsets every version since CUDA 11 shares, so each
 * offset is asserted both as a number and as equal to the older versions' offset.
 */
#define OFF(type, field, off) _Static_assert(offsetof(type, field) == (off), #type "." #field)
#define SAME(new, old, field) \
	_Static_assert(offsetof(new, field) == offsetof(old, field), #new "." #field " moved")

OFF(CUpti_Activity, kind, 0);

typedef CUpti_ActivityKernel10 kernel_t;
OFF(kernel_t, start, 16);
OFF(kernel_t, end, 24);
OFF(kernel_t, deviceId, 40);
OFF(kernel_t, streamId, 48);
OFF(kernel_t, correlationId, 92);
OFF(kernel_t, name, 104);
OFF(kernel_t, graphNodeId, 144);
OFF(kernel_t, graphId, 156);
_Static_assert(sizeof(kernel_t) == 216, "CUpti_ActivityKernel10 size (iterator stride in 13.0)");
SAME(kernel_t, CUpti_ActivityKernel9, start);
SAME(kernel_t, CUpti_ActivityKernel9, end);
SAME(kernel_t, CUpti_ActivityKernel9, deviceId);
SAME(kernel_t, CUpti_ActivityKernel9, streamId);
SAME(kernel_t, CUpti_ActivityKernel9, correlationId);
SAME(kernel_t, CUpti_ActivityKernel9, name);
SAME(kernel_t, CUpti_ActivityKernel9, graphNodeId);
SAME(kernel_t, CUpti_ActivityKernel9, graphId);
SAME(kernel_t, CUpti_ActivityKernel5, start);
SAME(kernel_t, CUpti_ActivityKernel5, end);
SAME(kernel_t, CUpti_ActivityKernel5, deviceId);
SAME(kernel_t, CUpti_ActivityKernel5, streamId);
SAME(kernel_t, CUpti_ActivityKernel5, correlationId);
SAME(kernel_t, CUpti_ActivityKernel5, name);
SAME(kernel_t, CUpti_ActivityKernel5, graphNodeId);
SAME(kernel_t, CUpti_ActivityKernel5, graphId);

typedef CUpti_ActivityMemcpy6 memcpy_t;
OFF(memcpy_t, copyKind, 4);
OFF(memcpy_t, bytes, 8);
OFF(memcpy_t, start, 16);
OFF(memcpy_t, end, 24);
OFF(memcpy_t, deviceId, 32);
OFF(memcpy_t, streamId, 40);
OFF(memcpy_t, correlationId, 44);
OFF(memcpy_t, graphNodeId, 64);
OFF(memcpy_t, graphId, 72);
_Static_assert(sizeof(memcpy_t) == 96, "CUpti_ActivityMemcpy6 size");
SAME(memcpy_t, CUpti_ActivityMemcpy5, copyKind);
SAME(memcpy_t, CUpti_ActivityMemcpy5, bytes);
SAME(memcpy_t, CUpti_ActivityMemcpy5, start);
SAME(memcpy_t, CUpti_ActivityMemcpy5, end);
SAME(memcpy_t, CUpti_ActivityMemcpy5, deviceId);
SAME(memcpy_t, CUpti_ActivityMemcpy5, streamId);
SAME(memcpy_t, CUpti_ActivityMemcpy5, correlationId);
SAME(memcpy_t, CUpti_ActivityMemcpy5, graphNodeId);
SAME(memcpy_t, CUpti_ActivityMemcpy5, graphId);

/* Peer-to-peer copies have their own layout: the correlation id sits after the peer ids. */
typedef CUpti_ActivityMemcpyPtoP4 p2p_t;
OFF(p2p_t, copyKind, 4);
OFF(p2p_t, bytes, 8);
OFF(p2p_t, start, 16);
OFF(p2p_t, end, 24);
OFF(p2p_t, deviceId, 32);
OFF(p2p_t, streamId, 40);
OFF(p2p_t, correlationId, 60);
OFF(p2p_t, graphNodeId, 72);
OFF(p2p_t, graphId, 80);
_Static_assert(sizeof(p2p_t) == 96, "CUpti_ActivityMemcpyPtoP4 size");
SAME(p2p_t, CUpti_ActivityMemcpyPtoP3, correlationId);
SAME(p2p_t, CUpti_ActivityMemcpyPtoP3, graphNodeId);
SAME(p2p_t, CUpti_ActivityMemcpyPtoP3, graphId);

typedef CUpti_ActivityMemset4 memset_t;
OFF(memset_t, bytes, 8);
OFF(memset_t, start, 16);
OFF(memset_t, end, 24);
OFF(memset_t, deviceId, 32);
OFF(memset_t, streamId, 40);
OFF(memset_t, correlationId, 44);
OFF(memset_t, memoryKind, 50);
OFF(memset_t, graphNodeId, 64);
OFF(memset_t, graphId, 72);
_Static_assert(sizeof(memset_t) == 88, "CUpti_ActivityMemset4 size");
SAME(memset_t, CUpti_ActivityMemset3, correlationId);
SAME(memset_t, CUpti_ActivityMemset3, memoryKind);
SAME(memset_t, CUpti_ActivityMemset3, graphNodeId);

typedef CUpti_ActivityMemory4 memory_t;
OFF(memory_t, memoryOperationType, 4);
OFF(memory_t, memoryKind, 8);
OFF(memory_t, correlationId, 12);
OFF(memory_t, address, 16);
OFF(memory_t, bytes, 24);
OFF(memory_t, timestamp, 32);
OFF(memory_t, deviceId, 52);
OFF(memory_t, streamId, 60);
_Static_assert(sizeof(memory_t) == 128, "CUpti_ActivityMemory4 size");
SAME(memory_t, CUpti_ActivityMemory3, memoryOperationType);
SAME(memory_t, CUpti_ActivityMemory3, memoryKind);
SAME(memory_t, CUpti_ActivityMemory3, correlationId);
SAME(memory_t, CUpti_ActivityMemory3, address);
SAME(memory_t, CUpti_ActivityMemory3, bytes);
SAME(memory_t, CUpti_ActivityMemory3, timestamp);
SAME(memory_t, CUpti_ActivityMemory3, deviceId);
SAME(memory_t, CUpti_ActivityMemory3, streamId);

typedef CUpti_ActivityDevice5 device_t;
OFF(device_t, globalMemorySize, 16);
_Static_assert(sizeof(device_t) == 184, "CUpti_ActivityDevice5 size");
SAME(device_t, CUpti_ActivityDevice4, globalMemorySize);
SAME(device_t, CUpti_ActivityDevice4, computeCapabilityMajor);
SAME(device_t, CUpti_ActivityDevice4, computeCapabilityMinor);
SAME(device_t, CUpti_ActivityDevice4, id);
SAME(device_t, CUpti_ActivityDevice4, uuid);
SAME(device_t, CUpti_ActivityDevice4, name);

_Static_assert(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL == 10 && CUPTI_ACTIVITY_KIND_MEMCPY == 1 &&
		       CUPTI_ACTIVITY_KIND_MEMCPY2 == 22 && CUPTI_ACTIVITY_KIND_MEMSET == 2 &&
		       CUPTI_ACTIVITY_KIND_MEMORY2 == 49 && CUPTI_ACTIVITY_KIND_DEVICE == 8,
	       "activity kind values");

/* Zero or inverted timestamps mean CUPTI had no timing for the record (e.g. no device memory). */
static void set_times(struct ls_gpu_act *a, __u64 start, __u64 end)
{
	if (!start || !end || end < start) {
		a->start = a->end = 0;
		a->flags |= LS_GPU_AF_NO_TIMING;
		return;
	}
	a->start = start;
	a->end = end;
}

static void set_graph(struct ls_gpu_act *a, __u32 graph_id, __u64 node)
{
	a->graph_id = graph_id;
	a->addr = node;
	if (graph_id)
		a->flags |= LS_GPU_AF_GRAPH;
}

int ls_gpu_activity__is_nccl(const char *kname)
{
	return kname && strncmp(kname, "nccl", 4) == 0;
}

static int is_device_memory(__u32 kind)
{
	return kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE ||
	       kind == CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC ||
	       kind == CUPTI_ACTIVITY_MEMORY_KIND_ARRAY;
}

int ls_gpu_activity__normalize(const CUpti_Activity *rec, struct ls_gpu_act *out,
			       const char **kname)
{
	struct ls_gpu_act a = {};

	*kname = NULL;
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const kernel_t *k = (const kernel_t *)rec;

		a.kind = LS_GPU_ACT_KERNEL;
		set_times(&a, k->start, k->end);
		a.corr = k->correlationId;
		a.device = (__u16)k->deviceId;
		a.stream = k->streamId;
		set_graph(&a, k->graphId, k->graphNodeId);
		*kname = k->name;
		if (ls_gpu_activity__is_nccl(k->name))
			a.flags |= LS_GPU_AF_NCCL;
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const memcpy_t *m = (const memcpy_t *)rec;

		a.kind = LS_GPU_ACT_MEMCPY;
		set_times(&a, m->start, m->end);
		a.bytes = m->bytes;
		a.corr = m->correlationId;
		a.device = (__u16)m->deviceId;
		a.stream = m->streamId;
		a.detail = m->copyKind;
		set_graph(&a, m->graphId, m->graphNodeId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const p2p_t *m = (const p2p_t *)rec;

		a.kind = LS_GPU_ACT_MEMCPY;
		a.flags |= LS_GPU_AF_P2P;
		set_times(&a, m->start, m->end);
		a.bytes = m->bytes;
		a.corr = m->correlationId;
		a.device = (__u16)m->deviceId;
		a.stream = m->streamId;
		a.detail = m->copyKind;
		set_graph(&a, m->graphId, m->graphNodeId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const memset_t *m = (const memset_t *)rec;

		a.kind = LS_GPU_ACT_MEMSET;
		set_times(&a, m->start, m->end);
		a.bytes = m->bytes;
		a.corr = m->correlationId;
		a.device = (__u16)m->deviceId;
		a.stream = m->streamId;
		a.detail = (__u8)m->memoryKind;
		set_graph(&a, m->graphId, m->graphNodeId);
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMORY2: {
		const memory_t *m = (const memory_t *)rec;

		if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION)
			a.kind = LS_GPU_ACT_ALLOC;
		else if (m->memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE)
			a.kind = LS_GPU_ACT_FREE;
		else
			return 0;
		set_times(&a, m->timestamp, m->timestamp);
		a.bytes = m->bytes;
		a.addr = m->address;
		a.corr = m->correlationId;
		a.device = (__u16)m->deviceId;
		a.stream = m->streamId;
		a.detail = (__u8)m->memoryKind;
		if (is_device_memory(m->memoryKind))
			a.flags |= LS_GPU_AF_DEVMEM;
		break;
	}
	default:
		return 0;
	}
	*out = a;
	return 1;
}

void ls_gpu_activity__uuid_str(const unsigned char b[16], char *out, size_t size)
{
	snprintf(out, size,
		 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
		 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
		 b[14], b[15]);
}

int ls_gpu_activity__device(const CUpti_Activity *rec, struct ls_gpu_devinfo *dev)
{
	const device_t *d = (const device_t *)rec;

	if (rec->kind != CUPTI_ACTIVITY_KIND_DEVICE)
		return 0;
	memset(dev, 0, sizeof(*dev));
	dev->ordinal = d->id;
	dev->cc = d->computeCapabilityMajor * 10 + d->computeCapabilityMinor;
	dev->mem_total = d->globalMemorySize;
	if (d->name)
		snprintf(dev->name, sizeof(dev->name), "%s", d->name);
	ls_gpu_activity__uuid_str((const unsigned char *)d->uuid.bytes, dev->uuid,
				  sizeof(dev->uuid));
	return 1;
}

int ls_gpu_activity__parse(const struct ls_gpu_parse_ops *ops, uint8_t *buf, size_t valid,
			   struct ls_gpu_parse_stats *st)
{
	CUpti_Activity *rec = NULL;
	struct ls_gpu_devinfo dev;
	struct ls_gpu_act act;
	const char *kname;
	CUptiResult res;
	int n = 0, err;

	if (!buf || !valid)
		return 0;
	for (;;) {
		res = ops->next(buf, valid, &rec);
		if (res == CUPTI_ERROR_MAX_LIMIT_REACHED)
			return n;
		if (res != CUPTI_SUCCESS || !rec) {
			/* INVALID_KIND: a truncated record or a kind this libcupti does not know */
			st->bad++;
			return -EBADMSG;
		}
		n++;
		st->records++;
		if (ls_gpu_activity__normalize(rec, &act, &kname)) {
			st->used++;
			if (act.flags & LS_GPU_AF_NO_TIMING)
				st->no_timing++;
			err = ops->act(ops->ctx, &act, kname);
			if (err < 0)
				return err;
		} else if (ls_gpu_activity__device(rec, &dev)) {
			st->devices++;
			if (ops->device) {
				err = ops->device(ops->ctx, &dev);
				if (err < 0)
					return err;
			}
		} else {
			st->unknown++;
		}
	}
}
