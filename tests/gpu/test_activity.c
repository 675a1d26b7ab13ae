// SPDX-License-Identifier: MIT
/*
 * Activity parsing through the real libcupti.so.13 iterator (cuptiActivityGetNextRecord) on
 * hand-built buffers: the record strides are libcupti's, not ours. No driver is needed.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "activity.h"

#define MAXR 16

struct got {
	int n, ndev, stop_at;
	struct ls_gpu_act act[MAXR];
	const char *kname[MAXR];
	struct ls_gpu_devinfo dev[4];
};

static int on_act(void *ctx, struct ls_gpu_act *a, const char *kname)
{
	struct got *g = ctx;

	if (g->stop_at && g->n + 1 == g->stop_at)
		return -ECANCELED;
	assert_true(g->n < MAXR);
	g->act[g->n] = *a;
	g->kname[g->n] = kname;
	g->n++;
	return 0;
}

static int on_dev(void *ctx, const struct ls_gpu_devinfo *d)
{
	struct got *g = ctx;

	g->dev[g->ndev++] = *d;
	return 0;
}

/* a buffer being built; aligned as CUPTI requires */
struct buf {
	uint8_t *p;
	size_t used;
};

static struct buf *buf_new(void)
{
	struct buf *b = calloc(1, sizeof(*b));

	b->p = aligned_alloc(8, 1 << 16);
	memset(b->p, 0, 1 << 16);
	return b;
}

static void buf_free(struct buf *b)
{
	free(b->p);
	free(b);
}

static void put(struct buf *b, const void *rec, size_t size)
{
	memcpy(b->p + b->used, rec, size);
	b->used += size;
}

static void put_kernel(struct buf *b, const char *name, uint64_t start, uint64_t end, uint32_t corr,
		       uint32_t graph, uint64_t node)
{
	CUpti_ActivityKernel10 k;

	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	k.start = start;
	k.end = end;
	k.deviceId = 2;
	k.streamId = 13;
	k.correlationId = corr;
	k.name = name;
	k.graphId = graph;
	k.graphNodeId = node;
	put(b, &k, sizeof(k));
}

static int parse(struct buf *b, size_t valid, struct got *g, struct ls_gpu_parse_stats *st)
{
	struct ls_gpu_parse_ops ops = {
		.next = cuptiActivityGetNextRecord,
		.act = on_act,
		.device = on_dev,
		.ctx = g,
	};

	return ls_gpu_activity__parse(&ops, b->p, valid, st);
}

static void test_kernel(void **state)
{
	static const char name[] = "ampere_sgemm_128x64_nn";
	struct ls_gpu_parse_stats st = {};
	struct buf *b = buf_new();
	struct got g = {};

	put_kernel(b, name, 1000, 251000, 77, 0, 0);
	assert_int_equal(parse(b, b->used, &g, &st), 1);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.act[0].kind, LS_GPU_ACT_KERNEL);
	assert_int_equal(g.act[0].start, 1000);
	assert_int_equal(g.act[0].end, 251000);
	assert_int_equal(g.act[0].corr, 77);
	assert_int_equal(g.act[0].device, 2);
	assert_int_equal(g.act[0].stream, 13);
	assert_int_equal(g.act[0].flags, 0);
	assert_int_equal(g.act[0].name_id, 0);
	assert_ptr_equal(g.kname[0], name);
	assert_int_equal(st.records, 1);
	assert_int_equal(st.used, 1);
	assert_int_equal(st.bad, 0);
	buf_free(b);
}

static void test_copies_sets_memory(void **state)
{
	struct ls_gpu_parse_stats st = {};
	CUpti_ActivityMemcpy6 cp;
	CUpti_ActivityMemcpyPtoP4 p2p;
	CUpti_ActivityMemset4 ms;
	CUpti_ActivityMemory4 mem;
	struct buf *b = buf_new();
	struct got g = {};

	memset(&cp, 0, sizeof(cp));
	cp.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	cp.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	cp.bytes = 1 << 20;
	cp.start = 10;
	cp.end = 110;
	cp.deviceId = 1;
	cp.streamId = 5;
	cp.correlationId = 8;
	cp.graphId = 3;
	cp.graphNodeId = 99;
	put(b, &cp, sizeof(cp));

	memset(&p2p, 0, sizeof(p2p));
	p2p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
	p2p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
	p2p.bytes = 4096;
	p2p.start = 200;
	p2p.end = 260;
	p2p.deviceId = 1;
	p2p.srcDeviceId = 1;
	p2p.dstDeviceId = 0;
	p2p.correlationId = 9;
	put(b, &p2p, sizeof(p2p));

	memset(&ms, 0, sizeof(ms));
	ms.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	ms.bytes = 512;
	ms.start = 300;
	ms.end = 301;
	ms.correlationId = 10;
	ms.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	put(b, &ms, sizeof(ms));

	memset(&mem, 0, sizeof(mem));
	mem.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	mem.correlationId = 11;
	mem.address = 0x7f0000100000ull;
	mem.bytes = 3 << 20;
	mem.timestamp = 400;
	mem.deviceId = 1;
	put(b, &mem, sizeof(mem));
	mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
	mem.correlationId = 12;
	mem.timestamp = 500;
	put(b, &mem, sizeof(mem));
	/* pinned host memory is not device memory */
	mem.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	mem.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
	mem.correlationId = 13;
	put(b, &mem, sizeof(mem));

	assert_int_equal(parse(b, b->used, &g, &st), 6);
	assert_int_equal(g.n, 6);

	assert_int_equal(g.act[0].kind, LS_GPU_ACT_MEMCPY);
	assert_int_equal(g.act[0].bytes, 1 << 20);
	assert_int_equal(g.act[0].detail, CUPTI_ACTIVITY_MEMCPY_KIND_HTOD);
	assert_int_equal(g.act[0].corr, 8);
	assert_int_equal(g.act[0].end - g.act[0].start, 100);
	assert_int_equal(g.act[0].graph_id, 3);
	assert_int_equal(g.act[0].addr, 99);
	assert_int_equal(g.act[0].flags, LS_GPU_AF_GRAPH);
	assert_null(g.kname[0]);

	assert_int_equal(g.act[1].kind, LS_GPU_ACT_MEMCPY);
	assert_int_equal(g.act[1].flags, LS_GPU_AF_P2P);
	assert_int_equal(g.act[1].corr, 9); /* at offset 60 in the peer-to-peer layout */
	assert_int_equal(g.act[1].bytes, 4096);

	assert_int_equal(g.act[2].kind, LS_GPU_ACT_MEMSET);
	assert_int_equal(g.act[2].bytes, 512);
	assert_int_equal(g.act[2].corr, 10);
	assert_int_equal(g.act[2].detail, CUPTI_ACTIVITY_MEMORY_KIND_DEVICE);

	assert_int_equal(g.act[3].kind, LS_GPU_ACT_ALLOC);
	assert_int_equal(g.act[3].flags, LS_GPU_AF_DEVMEM);
	assert_int_equal(g.act[3].addr, 0x7f0000100000ull);
	assert_int_equal(g.act[3].bytes, 3 << 20);
	assert_int_equal(g.act[3].start, 400);
	assert_int_equal(g.act[3].end, 400);
	assert_int_equal(g.act[3].corr, 11);
	assert_int_equal(g.act[3].device, 1);

	assert_int_equal(g.act[4].kind, LS_GPU_ACT_FREE);
	assert_int_equal(g.act[4].flags, LS_GPU_AF_DEVMEM);
	assert_int_equal(g.act[4].corr, 12);

	assert_int_equal(g.act[5].kind, LS_GPU_ACT_ALLOC);
	assert_int_equal(g.act[5].flags, 0);
	assert_int_equal(g.act[5].detail, CUPTI_ACTIVITY_MEMORY_KIND_PINNED);
	buf_free(b);
}

static void test_zero_timestamps(void **state)
{
	struct ls_gpu_parse_stats st = {};
	struct buf *b = buf_new();
	struct got g = {};

	put_kernel(b, "k0", 0, 0, 1, 0, 0);	/* no device memory for timestamps */
	put_kernel(b, "k1", 500, 0, 2, 0, 0);	/* end missing */
	put_kernel(b, "k2", 900, 800, 3, 0, 0); /* inverted */
	put_kernel(b, "k3", 900, 950, 4, 0, 0);
	assert_int_equal(parse(b, b->used, &g, &st), 4);
	assert_int_equal(st.no_timing, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(g.act[i].flags & LS_GPU_AF_NO_TIMING, LS_GPU_AF_NO_TIMING);
		assert_int_equal(g.act[i].start, 0);
		assert_int_equal(g.act[i].end, 0);
		assert_int_equal(g.act[i].corr, i + 1);
	}
	assert_int_equal(g.act[3].flags, 0);
	assert_int_equal(g.act[3].end - g.act[3].start, 50);
	buf_free(b);
}

static void test_truncated(void **state)
{
	struct ls_gpu_parse_stats st = {};
	struct buf *b = buf_new();
	struct got g = {};
	int r;

	put_kernel(b, "a", 10, 20, 1, 0, 0);
	put_kernel(b, "b", 30, 40, 2, 0, 0);
	/* the second record is cut short: libcupti 13.0 ends the walk there (MAX_LIMIT_REACHED) */
	r = parse(b, b->used - 8, &g, &st);
	assert_int_equal(r, 1);
	assert_int_equal(st.bad, 0);
	assert_int_equal(g.n, 1);
	assert_int_equal(g.act[0].corr, 1);

	/* less than a record header */
	memset(&g, 0, sizeof(g));
	r = parse(b, 2, &g, &st);
	assert_int_equal(r, 0);
	assert_int_equal(g.n, 0);

	/* nothing at all */
	assert_int_equal(parse(b, 0, &g, &st), 0);
	buf_free(b);
}

static void test_unknown_kinds(void **state)
{
	struct ls_gpu_parse_stats st = {};
	CUpti_ActivityOverhead3 ov;
	struct buf *b = buf_new();
	struct got g = {};
	uint32_t bogus = 0x7ffe;

	/* a kind libcupti knows but we do not use: skipped, walk goes on */
	memset(&ov, 0, sizeof(ov));
	ov.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
	put_kernel(b, "x", 10, 20, 1, 0, 0);
	put(b, &ov, sizeof(ov));
	put_kernel(b, "y", 30, 40, 2, 0, 0);
	assert_int_equal(parse(b, b->used, &g, &st), 3);
	assert_int_equal(st.unknown, 1);
	assert_int_equal(st.used, 2);
	assert_int_equal(g.n, 2);
	assert_int_equal(g.act[1].corr, 2);

	/* a kind libcupti does not know: the walk stops there, earlier records are kept */
	put(b, &bogus, sizeof(bogus));
	b->used += 60;
	put_kernel(b, "z", 50, 60, 3, 0, 0);
	memset(&g, 0, sizeof(g));
	memset(&st, 0, sizeof(st));
	assert_int_equal(parse(b, b->used, &g, &st), -EBADMSG);
	assert_int_equal(st.bad, 1);
	assert_int_equal(g.n, 2);
	buf_free(b);
}

static void test_device_record(void **state)
{
	static char name[] = "NVIDIA H200";
	struct ls_gpu_parse_stats st = {};
	CUpti_ActivityDevice5 d;
	struct buf *b = buf_new();
	struct got g = {};
	int i;

	memset(&d, 0, sizeof(d));
	d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
	d.id = 3;
	d.globalMemorySize = 150754820096ull;
	d.computeCapabilityMajor = 9;
	d.computeCapabilityMinor = 0;
	d.name = name;
	for (i = 0; i < 16; i++)
		d.uuid.bytes[i] = (char)(0xa0 + i);
	put(b, &d, sizeof(d));
	assert_int_equal(parse(b, b->used, &g, &st), 1);
	assert_int_equal(g.n, 0);
	assert_int_equal(g.ndev, 1);
	assert_int_equal(st.devices, 1);
	assert_int_equal(g.dev[0].ordinal, 3);
	assert_int_equal(g.dev[0].cc, 90);
	assert_int_equal(g.dev[0].mem_total, 150754820096ull);
	assert_string_equal(g.dev[0].name, "NVIDIA H200");
	assert_string_equal(g.dev[0].uuid, "GPU-a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
	buf_free(b);
}

static void test_graph_and_nccl(void **state)
{
	struct ls_gpu_parse_stats st = {};
	struct buf *b = buf_new();
	struct got g = {};
	int i;

	for (i = 0; i < 3; i++)
		put_kernel(b, "fused_attention", 100 * i + 10, 100 * i + 60, 42, 5, 0x50000 + i);
	put_kernel(b, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", 1000, 9000, 43, 0, 0);
	put_kernel(b, "ncclKernel_AllGather_RING_LL_Sum_int8_t", 9000, 9500, 44, 0, 0);
	put_kernel(b, "my_nccl_like_kernel", 9500, 9600, 45, 0, 0);
	assert_int_equal(parse(b, b->used, &g, &st), 6);
	for (i = 0; i < 3; i++) {
		assert_int_equal(g.act[i].corr, 42);
		assert_int_equal(g.act[i].graph_id, 5);
		assert_int_equal(g.act[i].addr, 0x50000 + i);
		assert_int_equal(g.act[i].flags, LS_GPU_AF_GRAPH);
	}
	assert_int_equal(g.act[3].flags, LS_GPU_AF_NCCL);
	assert_int_equal(g.act[4].flags, LS_GPU_AF_NCCL);
	assert_int_equal(g.act[5].flags, 0);
	buf_free(b);
}

static void test_callback_stops_walk(void **state)
{
	struct ls_gpu_parse_stats st = {};
	struct buf *b = buf_new();
	struct got g = {.stop_at = 2};

	put_kernel(b, "a", 1, 2, 1, 0, 0);
	put_kernel(b, "b", 3, 4, 2, 0, 0);
	put_kernel(b, "c", 5, 6, 3, 0, 0);
	assert_int_equal(parse(b, b->used, &g, &st), -ECANCELED);
	assert_int_equal(g.n, 1);
	buf_free(b);
}

static void test_uuid_format(void **state)
{
	unsigned char u[16] = {0x5f, 0xd3, 0xe4, 0xc4, 0xbd, 0x5e, 0x6b, 0x7e,
			       0x52, 0xa4, 0x1a, 0x0b, 0x4b, 0xbe, 0xc9, 0xc5};
	char s[48];

	ls_gpu_activity__uuid_str(u, s, sizeof(s));
	assert_string_equal(s, "GPU-5fd3e4c4-bd5e-6b7e-52a4-1a0b4bbec9c5");
	assert_true(ls_gpu_activity__is_nccl("ncclDevKernel_Generic"));
	assert_false(ls_gpu_activity__is_nccl("gemm"));
	assert_false(ls_gpu_activity__is_nccl(NULL));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_kernel),		cmocka_unit_test(test_copies_sets_memory),
		cmocka_unit_test(test_zero_timestamps), cmocka_unit_test(test_truncated),
		cmocka_unit_test(test_unknown_kinds),	cmocka_unit_test(test_device_record),
		cmocka_unit_test(test_graph_and_nccl),	cmocka_unit_test(test_callback_stops_walk),
		cmocka_unit_test(test_uuid_format),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
