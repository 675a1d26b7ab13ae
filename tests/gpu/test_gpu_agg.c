// SPDX-License-Identifier: MIT
/* The collector's join of launch samples and GPU records (userspace/gpu_agg.c). */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "gpu_agg.h"

#define MAXA 256
#define MS   1000000ull

struct sink {
	int n;
	struct ls_gpu_attr a[MAXA];
};

static void collect(void *ctx, const struct ls_gpu_attr *attr)
{
	struct sink *s = ctx;

	assert_true(s->n < MAXA);
	s->a[s->n++] = *attr;
}

/* Sums what the sink got for one cookie (0: orphans). */
static __u64 gpu_of(const struct sink *s, __u64 cookie, int *count)
{
	__u64 t = 0;
	int i;

	*count = 0;
	for (i = 0; i < s->n; i++) {
		if (s->a[i].cookie != cookie || (s->a[i].flags & LS_GPU_ATTR_API))
			continue;
		t += s->a[i].gpu_ns;
		*count += s->a[i].count;
	}
	return t;
}

static const struct ls_gpu_attr *last_device_work(const struct sink *s)
{
	int i;

	for (i = s->n - 1; i >= 0; i--)
		if (!(s->a[i].flags & LS_GPU_ATTR_API))
			return &s->a[i];
	return NULL;
}

static __u32 seq = 1;

static void hdr(struct ls_gpu_hdr *h, __u32 pid, __u16 sub, __u16 count)
{
	h->type = LS_REC_GPU;
	h->pid = pid;
	h->tid = pid + 1;
	h->sub = sub;
	h->count = count;
	h->ts = 5000 * MS;	 /* ktime */
	h->cupti_ts = 1000 * MS; /* CUPTI: ktime = cupti + 4000 ms */
	h->seq = seq++;
	h->lib_pid = pid;
}

/* Sends acts[0..n) as one ACTIVITY record of pid. */
static int send_acts(struct ls_gpu_agg *agg, __u32 pid, const struct ls_gpu_act *acts, int n)
{
	struct {
		struct ls_gpu_hdr h;
		struct ls_gpu_act a[LS_GPU_BATCH_MAX];
	} r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, pid, LS_GPU_ACTIVITY, (__u16)n);
	memcpy(r.a, acts, n * sizeof(*acts));
	return ls_gpu_agg__record(agg, &r, sizeof(r.h) + n * sizeof(*acts));
}

static struct ls_gpu_act kernel(__u32 corr, __u64 start, __u64 dur)
{
	struct ls_gpu_act a = {.kind = LS_GPU_ACT_KERNEL, .corr = corr, .start = start};

	a.end = start + dur;
	return a;
}

static struct ls_gpu_act mem(__u8 kind, __u32 corr, __u64 t, __u64 addr, __u64 bytes)
{
	struct ls_gpu_act a = {.kind = kind, .corr = corr, .start = t, .end = t};

	a.addr = addr;
	a.bytes = bytes;
	a.flags = LS_GPU_AF_DEVMEM;
	return a;
}

static struct ls_gpu_agg *new_agg(struct sink *s, __u32 window, __u32 pending)
{
	struct ls_gpu_agg_opts o = {.sz = sizeof(o), .window = window, .pending = pending};
	struct ls_gpu_agg *agg = NULL;

	memset(s, 0, sizeof(*s));
	assert_int_equal(ls_gpu_agg__new(&o, collect, s, &agg), 0);
	return agg;
}

static void test_launch_then_kernel(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_act k = kernel(10, 1000 * MS, 3 * MS);
	struct ls_gpu_agg_stats st;
	int n;

	assert_int_equal(ls_gpu_agg__launch(agg, 100, 101, 4999 * MS,
					    LS_GPU_AUX(10, LS_GPU_API_LAUNCH, 211, 0), 7000, 0xabc),
			 0);
	/* driver time is given at once */
	assert_int_equal(s->n, 1);
	assert_int_equal(s->a[0].flags, LS_GPU_ATTR_API);
	assert_int_equal(s->a[0].api_ns, 7000);
	assert_int_equal(s->a[0].cookie, 0xabc);
	assert_int_equal(s->a[0].tid, 101);
	assert_int_equal(s->a[0].api_class, LS_GPU_API_LAUNCH);
	assert_int_equal(s->a[0].gpu_ns, 0);

	assert_int_equal(send_acts(agg, 100, &k, 1), 0);
	assert_int_equal(s->n, 2);
	assert_int_equal(s->a[1].cookie, 0xabc);
	assert_int_equal(s->a[1].tid, 101);
	assert_int_equal(s->a[1].gpu_ns, 3 * MS);
	assert_int_equal(s->a[1].kind, LS_GPU_ACT_KERNEL);
	assert_int_equal(s->a[1].corr, 10);
	assert_int_equal(s->a[1].flags, 0);
	assert_int_equal(s->a[1].api_class, LS_GPU_API_LAUNCH);
	/* CUPTI time 1000 ms maps to ktime 5000 ms through the header's clock pair */
	assert_int_equal(s->a[1].start_mono, 5000 * MS);
	ls_gpu_agg__finish(agg);
	assert_int_equal(s->n, 2);
	assert_int_equal(gpu_of(s, 0xabc, &n), 3 * MS);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.attributed, 1);
	assert_int_equal(st.orphans, 0);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_kernel_before_launch(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_act k[2] = {kernel(20, 1000 * MS, 1 * MS), kernel(20, 1002 * MS, 2 * MS)};
	int n;

	assert_int_equal(send_acts(agg, 100, k, 2), 0);
	assert_int_equal(s->n, 0); /* held back until its launch shows up */
	ls_gpu_agg__launch(agg, 100, 105, 1, LS_GPU_AUX(20, LS_GPU_API_GRAPH, 311, 0), 10, 77);
	assert_int_equal(s->n, 2);
	assert_int_equal(s->a[1].cookie, 77);
	assert_int_equal(s->a[1].tid, 105);
	assert_int_equal(s->a[1].count, 2);
	assert_int_equal(s->a[1].flags & LS_GPU_ATTR_NO_LAUNCH, 0);
	assert_int_equal(gpu_of(s, 77, &n), 3 * MS);
	assert_int_equal(n, 2);
	ls_gpu_agg__finish(agg);
	assert_int_equal(s->n, 2);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_orphans(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_act k[3] = {kernel(30, 1000 * MS, 1 * MS), kernel(0, 1001 * MS, 4 * MS),
				  kernel(31, 1010 * MS, 2 * MS)};
	struct ls_gpu_proc_info pi;
	struct ls_gpu_agg_stats st;
	int n;

	assert_int_equal(send_acts(agg, 100, k, 3), 0);
	/* no correlation id at all: an orphan at once */
	assert_int_equal(s->n, 1);
	assert_int_equal(s->a[0].flags, LS_GPU_ATTR_NO_LAUNCH);
	ls_gpu_agg__finish_pid(agg, 100);
	assert_int_equal(s->n, 3);
	assert_int_equal(gpu_of(s, 0, &n), 7 * MS);
	assert_int_equal(n, 3);
	for (int i = 0; i < 3; i++) {
		assert_int_equal(s->a[i].flags & LS_GPU_ATTR_NO_LAUNCH, LS_GPU_ATTR_NO_LAUNCH);
		assert_int_equal(s->a[i].tid, 0);
	}
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.orphans, 3);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_int_equal(pi.orphans, 3);
	assert_int_equal(pi.gpu_ns, 7 * MS);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_graph_launch(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_act k[5];
	int i, n;

	for (i = 0; i < 5; i++) {
		k[i] = kernel(40, (1000 + i) * MS, (i + 1) * MS);
		k[i].graph_id = 9;
		k[i].flags = LS_GPU_AF_GRAPH;
	}
	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(40, LS_GPU_API_GRAPH, 311, 0), 50, 5);
	assert_int_equal(send_acts(agg, 100, k, 5), 0);
	assert_int_equal(s->n, 6);
	assert_int_equal(gpu_of(s, 5, &n), 15 * MS);
	assert_int_equal(n, 5);
	for (i = 1; i < 6; i++) {
		assert_int_equal(s->a[i].flags, LS_GPU_ATTR_GRAPH);
		assert_int_equal(s->a[i].api_class, LS_GPU_API_GRAPH);
	}
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_memory_levels(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_proc_info pi;
	struct ls_gpu_act a;
	int i;

	for (i = 1; i <= 8; i++)
		ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(i, LS_GPU_API_LAUNCH, 211, 0), 1,
				   1000 + i);
	/* 100 MiB allocated at t=1000 by corr 1, 50 MiB more at 1010 by corr 2 */
	a = mem(LS_GPU_ACT_ALLOC, 1, 1000 * MS, 0x1000000, 100 << 20);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 100 << 20);
	assert_int_equal(last_device_work(s)->cookie, 1001);
	assert_int_equal(last_device_work(s)->kind, LS_GPU_ACT_ALLOC);
	assert_int_equal(last_device_work(s)->bytes, 100 << 20);
	a = mem(LS_GPU_ACT_ALLOC, 2, 1010 * MS, 0x9000000, 50 << 20);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 150 << 20);
	/* a kernel running before the second allocation sees 100 MiB */
	a = kernel(3, 1001 * MS, 5 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 100 << 20);
	/* one spanning it sees the highest level during its run */
	a = kernel(4, 1005 * MS, 20 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 150 << 20);
	assert_int_equal(last_device_work(s)->mem_peak, 150 << 20);
	/* freeing the 100 MiB at 1030 */
	a = mem(LS_GPU_ACT_FREE, 5, 1030 * MS, 0x1000000, 100 << 20);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 50 << 20);
	/* releasing memory we never saw allocated changes nothing */
	a = mem(LS_GPU_ACT_FREE, 6, 1031 * MS, 0xdead000, 1 << 30);
	send_acts(agg, 100, &a, 1);
	a = kernel(7, 1040 * MS, 1 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 50 << 20);
	/* an allocation record arriving late (out of time order) still lands at its time */
	a = mem(LS_GPU_ACT_ALLOC, 8, 1020 * MS, 0x20000000, 10 << 20);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 160 << 20);
	a = kernel(7, 1040 * MS, 1 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_alloc, 60 << 20);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_int_equal(pi.peak_alloc, 160 << 20);
	ls_gpu_agg__free(agg);
	free(s);
}

/*
 * Sizes come from the target's records: one no device holds is refused and counted, and levels
 * that would pass 2^64 stay at the top instead of wrapping (a signed sum overflowed once).
 */
static void test_memory_implausible(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_agg_stats st;
	struct ls_gpu_proc_info pi;
	struct ls_gpu_act a;
	__u32 i;

	a = mem(LS_GPU_ACT_ALLOC, 1, 1000 * MS, 0x1000, 1ULL << 62);
	send_acts(agg, 100, &a, 1);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.bad_records, 1);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_int_equal(pi.peak_alloc, 0);
	/* 2^14 allocations of 2^50 bytes: the 2^14th reaches 2^64 */
	for (i = 0; i < 1U << 14; i++) {
		a = mem(LS_GPU_ACT_ALLOC, 2 + i, (1001 + i) * MS, 0x100000ULL * (i + 1),
			LS_GPU_BYTES_MAX);
		s->n = 0; /* the sink keeps what it was given: only the last is looked at */
		send_acts(agg, 100, &a, 1);
	}
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.bad_records, 1);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_true(pi.peak_alloc == UINT64_MAX);
	/* a release goes down from there (its launch seen: its work is given out at once) */
	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(1U << 15, LS_GPU_API_LAUNCH, 211, 0), 1, 7);
	a = mem(LS_GPU_ACT_FREE, 1U << 15, (1001 + (1U << 14)) * MS, 0x100000, LS_GPU_BYTES_MAX);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->cookie, 7);
	assert_true(last_device_work(s)->mem_alloc == UINT64_MAX - LS_GPU_BYTES_MAX);
	ls_gpu_agg__free(agg);
	free(s);
}

struct series {
	int n;
	__u64 t[16], alloc[16], nvml[16];
};

static void on_point(void *ctx, __u64 t, __u64 alloc, __u64 nvml)
{
	struct series *se = ctx;

	if (se->n < 16) {
		se->t[se->n] = t;
		se->alloc[se->n] = alloc;
		se->nvml[se->n] = nvml;
	}
	se->n++;
}

static void test_nvml_samples(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct {
		struct ls_gpu_memsample m;
		struct ls_gpu_memsample_dev d[1];
	} ms;
	struct ls_gpu_proc_info pi;
	struct series se = {};
	struct ls_gpu_act a;

	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(1, LS_GPU_API_LAUNCH, 211, 0), 1, 9);
	memset(&ms, 0, sizeof(ms));
	hdr(&ms.m.hdr, 100, LS_GPU_MEMSAMPLE, 1);
	ms.m.hdr.cupti_ts = 1000 * MS;
	ms.m.hdr.ts = 5000 * MS;
	ms.m.found = 1;
	ms.m.total = 700 << 20;
	ms.d[0].used = 700 << 20;
	assert_int_equal(ls_gpu_agg__record(agg, &ms, sizeof(ms)), 0);
	/* a kernel before the first sample: the first sample stands for it */
	a = kernel(1, 900 * MS, 1 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_nvml, 700 << 20);
	/* a second sample: later work sees the later figure */
	ms.m.hdr.cupti_ts = 1100 * MS;
	ms.m.hdr.ts = 5100 * MS;
	ms.m.total = 900 << 20;
	assert_int_equal(ls_gpu_agg__record(agg, &ms, sizeof(ms)), 0);
	a = kernel(1, 1150 * MS, 1 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_nvml, 900 << 20);
	ms.m.total = 700 << 20;
	a = kernel(1, 1001 * MS, 1 * MS);
	send_acts(agg, 100, &a, 1);
	assert_int_equal(last_device_work(s)->mem_nvml, 700 << 20);
	assert_int_equal(last_device_work(s)->mem_alloc, 0);
	assert_int_equal(last_device_work(s)->mem_peak, 700 << 20);
	/* NVML does not list the process (pid namespace): counted, no level */
	ms.m.found = 0;
	ms.m.hdr.count = 0;
	assert_int_equal(ls_gpu_agg__record(agg, &ms, sizeof(ms.m)), 0);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_int_equal(pi.peak_nvml, 900 << 20);
	assert_int_equal(pi.nvml_samples, 3);
	assert_int_equal(pi.nvml_not_listed, 1);
	/* 1000 ms and 1100 ms CUPTI time: two 100 ms buckets */
	assert_int_equal(ls_gpu_agg__mem_series(agg, 100, on_point, &se), 2);
	assert_int_equal(se.nvml[0], 700 << 20);
	assert_int_equal(se.nvml[1], 900 << 20);
	assert_true(se.t[0] <= 5000 * MS && se.t[0] > 4800 * MS);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_flags_and_names(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct {
		struct ls_gpu_name n;
		char text[32];
	} nm;
	struct ls_gpu_act a[2];

	memset(&nm, 0, sizeof(nm));
	hdr(&nm.n.hdr, 100, LS_GPU_NAME, 13);
	nm.n.id = 3;
	memcpy(nm.text, "ncclDevKernel", 13);
	assert_int_equal(ls_gpu_agg__record(agg, &nm, sizeof(nm.n) + 13), 0);
	assert_string_equal(ls_gpu_agg__name(agg, 100, 3), "ncclDevKernel");
	assert_null(ls_gpu_agg__name(agg, 100, 4));
	assert_null(ls_gpu_agg__name(agg, 101, 3));

	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(1, LS_GPU_API_LAUNCH, 652, 1), 1, 9);
	a[0] = kernel(1, 1000 * MS, 8 * MS);
	a[0].flags = LS_GPU_AF_NCCL;
	a[0].name_id = 3;
	a[1] = kernel(1, 0, 0);
	a[1].flags = LS_GPU_AF_NO_TIMING;
	send_acts(agg, 100, a, 2);
	assert_int_equal(s->n, 3);
	assert_int_equal(s->a[1].flags, LS_GPU_ATTR_NCCL);
	assert_int_equal(s->a[1].name_id, 3);
	assert_int_equal(s->a[1].gpu_ns, 8 * MS);
	assert_int_equal(s->a[2].flags, LS_GPU_ATTR_NO_TIMING);
	assert_int_equal(s->a[2].gpu_ns, 0);
	assert_int_equal(s->a[2].start_mono, 0);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_malformed(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_agg_stats st;
	struct {
		struct ls_gpu_hdr h;
		struct ls_gpu_act a[2];
	} r;

	memset(&r, 0, sizeof(r));
	hdr(&r.h, 100, LS_GPU_ACTIVITY, 2);
	/* shorter than the two entries it announces */
	assert_int_equal(ls_gpu_agg__record(agg, &r, sizeof(r.h) + sizeof(r.a[0])), -EINVAL);
	/* shorter than a header */
	assert_int_equal(ls_gpu_agg__record(agg, &r, 8), -EINVAL);
	/* unknown sub */
	r.h.sub = 99;
	assert_int_equal(ls_gpu_agg__record(agg, &r, sizeof(r)), -EINVAL);
	/* not a GPU record */
	r.h.sub = LS_GPU_ACTIVITY;
	r.h.type = LS_REC_SAMPLE;
	assert_int_equal(ls_gpu_agg__record(agg, &r, sizeof(r)), -EINVAL);
	/* more entries than a batch can hold */
	r.h.type = LS_REC_GPU;
	r.h.count = LS_GPU_BATCH_MAX + 1;
	assert_int_equal(ls_gpu_agg__record(agg, &r, sizeof(r)), -EINVAL);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.bad_records, 5);
	assert_int_equal(st.records, 0);
	assert_int_equal(s->n, 0);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_processes_and_status(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_hello h;
	struct ls_gpu_device d;
	struct ls_gpu_status st;
	struct ls_gpu_proc_info pi;
	struct ls_gpu_act k;
	int n;

	/* the same correlation id in two processes are two launches */
	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(5, LS_GPU_API_LAUNCH, 211, 0), 1, 1);
	ls_gpu_agg__launch(agg, 200, 201, 1, LS_GPU_AUX(5, LS_GPU_API_LAUNCH, 211, 0), 1, 2);
	k = kernel(5, 1000 * MS, 1 * MS);
	send_acts(agg, 200, &k, 1);
	k = kernel(5, 1000 * MS, 4 * MS);
	send_acts(agg, 100, &k, 1);
	assert_int_equal(gpu_of(s, 1, &n), 4 * MS);
	assert_int_equal(gpu_of(s, 2, &n), 1 * MS);

	memset(&h, 0, sizeof(h));
	hdr(&h.hdr, 200, LS_GPU_HELLO, 0);
	h.status = LS_GPU_ST_CONFLICT;
	strcpy(h.message, "CUPTI is already used by Nsight Systems");
	assert_int_equal(ls_gpu_agg__record(agg, &h, sizeof(h)), 0);
	memset(&d, 0, sizeof(d));
	hdr(&d.hdr, 200, LS_GPU_DEVICE, 0);
	d.ordinal = 0;
	d.mem_total = 1ull << 37;
	strcpy(d.name, "NVIDIA H200");
	assert_int_equal(ls_gpu_agg__record(agg, &d, sizeof(d)), 0);
	/* NVML's card of the same device (matched by UUID): fields merge into one card */
	strcpy(d.uuid, "GPU-01020304-0506-0708-090a-0b0c0d0e0f10");
	assert_int_equal(ls_gpu_agg__record(agg, &d, sizeof(d)), 0);
	d.ordinal = ~0u;
	d.nvml_index = 0;
	d.mem_total = 0;
	strcpy(d.driver, "580.95.05");
	assert_int_equal(ls_gpu_agg__record(agg, &d, sizeof(d)), 0);
	memset(&st, 0, sizeof(st));
	hdr(&st.hdr, 200, LS_GPU_EXIT, 0);
	st.dropped = 12;
	assert_int_equal(ls_gpu_agg__record(agg, &st, sizeof(st)), 0);

	assert_int_equal(ls_gpu_agg__proc_count(agg), 2);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 0, &pi), 0);
	assert_int_equal(pi.pid, 100);
	assert_null(pi.hello);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 1, &pi), 0);
	assert_int_equal(pi.pid, 200);
	assert_non_null(pi.hello);
	assert_int_equal(pi.hello->status, LS_GPU_ST_CONFLICT);
	assert_string_equal(pi.hello->message, "CUPTI is already used by Nsight Systems");
	assert_int_equal(pi.ndevices, 1);
	assert_string_equal(pi.devices[0].name, "NVIDIA H200");
	assert_string_equal(pi.devices[0].driver, "580.95.05");
	assert_int_equal(pi.devices[0].ordinal, 0);
	assert_int_equal(pi.devices[0].nvml_index, 0);
	assert_int_equal(pi.devices[0].mem_total, 1ull << 37);
	assert_non_null(pi.status);
	assert_int_equal(pi.status->dropped, 12);
	assert_int_equal(pi.exited, 1);
	assert_int_equal(ls_gpu_agg__proc_info(agg, 2, &pi), -ENOENT);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_lost_records(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_agg_stats st;
	struct ls_gpu_status r;

	memset(&r, 0, sizeof(r));
	hdr(&r.hdr, 300, LS_GPU_STATUS, 0);
	r.hdr.seq = 41; /* a later attach: numbering does not start at 1 */
	ls_gpu_agg__record(agg, &r, sizeof(r));
	r.hdr.seq = 43; /* out of order across threads */
	ls_gpu_agg__record(agg, &r, sizeof(r));
	r.hdr.seq = 42;
	ls_gpu_agg__record(agg, &r, sizeof(r));
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.lost_records, 0);
	r.hdr.seq = 47; /* 44..46 lost */
	ls_gpu_agg__record(agg, &r, sizeof(r));
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.lost_records, 3);
	ls_gpu_agg__free(agg);
	free(s);
}

static void test_windows(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 16, 4);
	struct ls_gpu_agg_stats st;
	struct ls_gpu_act k;
	__u32 c;
	int n;

	/* launch 1 is pushed out of a 16-slot window by launch 17 */
	for (c = 1; c <= 17; c++)
		ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(c, LS_GPU_API_LAUNCH, 211, 0), 1,
				   c);
	k = kernel(1, 1000 * MS, 2 * MS);
	send_acts(agg, 100, &k, 1);
	k = kernel(17, 1000 * MS, 3 * MS);
	send_acts(agg, 100, &k, 1);
	assert_int_equal(gpu_of(s, 17, &n), 3 * MS);
	assert_int_equal(gpu_of(s, 1, &n), 0);
	/* a 4-slot pending table: corr 1 and corr 5 share a slot, 1 goes out as an orphan */
	k = kernel(21, 1000 * MS, 5 * MS); /* slot 1 taken by 1 already */
	send_acts(agg, 100, &k, 1);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(gpu_of(s, 0, &n), 2 * MS);
	ls_gpu_agg__finish(agg);
	assert_int_equal(gpu_of(s, 0, &n), 7 * MS);
	assert_int_equal(
		ls_gpu_agg__new(&(struct ls_gpu_agg_opts){.sz = sizeof(struct ls_gpu_agg_opts),
							  .window = 3},
				collect, s, &agg),
		-EINVAL);
	ls_gpu_agg__free(agg);
	ls_gpu_agg__free(NULL);
	free(s);
}

static void test_sampled_launches(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg *agg = new_agg(s, 0, 0);
	struct ls_gpu_act k[2] = {kernel(50, 1000 * MS, 2 * MS), kernel(51, 1000 * MS, 1 * MS)};
	__u64 aux = LS_GPU_AUX(50, LS_GPU_API_LAUNCH | (4 << 8), 211, 0);
	int n;

	/* launch 50 stands for 16 launches (LINESCOPE_GPU_SAMPLE=16); 51 was probed exactly */
	assert_int_equal(LS_GPU_AUX_SHIFT(aux), 4);
	assert_int_equal(LS_GPU_AUX_CLASS(aux), LS_GPU_API_LAUNCH);
	assert_int_equal(LS_GPU_AUX_CORR(aux), 50);
	assert_int_equal(LS_GPU_AUX_CBID(aux), 211);
	ls_gpu_agg__launch(agg, 100, 101, 1, aux, 3000, 8);
	assert_int_equal(s->a[0].api_ns, 16 * 3000);
	assert_int_equal(s->a[0].weight, 16);
	assert_int_equal(s->a[0].flags, LS_GPU_ATTR_API | LS_GPU_ATTR_SAMPLED);
	ls_gpu_agg__launch(agg, 100, 101, 1, LS_GPU_AUX(51, LS_GPU_API_LAUNCH, 211, 0), 3000, 9);
	assert_int_equal(s->a[1].api_ns, 3000);
	assert_int_equal(s->a[1].weight, 1);
	send_acts(agg, 100, k, 2);
	assert_int_equal(gpu_of(s, 8, &n), 32 * MS);
	assert_int_equal(n, 16);
	assert_int_equal(s->a[2].flags, LS_GPU_ATTR_SAMPLED);
	assert_int_equal(gpu_of(s, 9, &n), 1 * MS);
	assert_int_equal(n, 1);
	ls_gpu_agg__free(agg);
	free(s);
}

/* An LS_GPU_LAUNCHES record being built: entries appended in order. */
struct launches_rec {
	struct ls_gpu_launches r;
	__u8 data[LS_GPU_REC_MAX];
	size_t used;
};

static void launches_begin(struct launches_rec *b, __u32 pid, __u32 ident)
{
	memset(b, 0, sizeof(*b));
	hdr(&b->r.hdr, pid, LS_GPU_LAUNCHES, 0);
	b->r.ident_corr = ident;
	b->r.mono = 2000 * MS; /* hdr.ts is 5000 ms: the library's clock is 3000 ms behind */
}

/* corr made at library time t from the location of ref, or (ref 0) with nframes frames */
static void launches_add(struct launches_rec *b, __u32 corr, __u32 ref, __u64 t, __u16 nframes)
{
	struct ls_gpu_launch_ent e = {.corr = corr, .api_ns = 100 + corr, .t_mono = t, .ref = ref};
	struct ls_frame f = {.instr = 2};

	e.nframes = ref ? 0 : nframes;
	memcpy(b->data + b->used, &e, sizeof(e));
	b->used += sizeof(e);
	for (int i = 0; i < e.nframes; i++) {
		f.code = 0x1000 * (i + 1) + corr; /* the stack function reads it back */
		memcpy(b->data + b->used, &f, sizeof(f));
		b->used += sizeof(f);
	}
	b->r.hdr.count++;
}

static int launches_send(struct ls_gpu_agg *agg, struct launches_rec *b)
{
	return ls_gpu_agg__record(agg, b, sizeof(b->r) + b->used);
}

static __u32 stack_calls;

/* A stack function: the cookie says which frames it was given. */
static __u64 stack_of(void *ctx, __u32 pid, __u32 tid, const struct ls_frame *f, __u32 n)
{
	assert_ptr_equal(ctx, &stack_calls);
	assert_int_equal(pid, 100);
	assert_int_equal(tid, 101);
	stack_calls++;
	return n ? 0x50000 + f[0].code * 16 + n : 0x50000;
}

/*
 * Launches the library did not probe come in LS_GPU_LAUNCHES records of their thread (named by
 * a probed launch, ident): an entry under a reference is a launch of its own with the
 * reference's stack, its own driver time and time; an entry from a new location carries the
 * frames the library walked, which the stack function turns into its cookie, and becomes the
 * reference for the entries after it. Device work joins each, before or after the record. A
 * record whose thread, or an entry whose reference, was never seen is counted and its work
 * orphaned; a record whose entries run past its end is refused.
 */
static void test_same_location_launches(void **state)
{
	struct sink *s = malloc(sizeof(*s));
	struct ls_gpu_agg_opts o = {.sz = sizeof(o), .stack = stack_of, .stack_ctx = &stack_calls};
	struct ls_gpu_agg *agg = NULL;
	struct ls_gpu_act k[6] = {kernel(22, 1000 * MS, 2 * MS), kernel(20, 1000 * MS, 1 * MS),
				  kernel(21, 1001 * MS, 3 * MS), kernel(24, 1002 * MS, 5 * MS),
				  kernel(25, 1003 * MS, 7 * MS), kernel(26, 1004 * MS, 11 * MS)};
	struct launches_rec *b = malloc(sizeof(*b));
	__u64 walked = 0x50000 + (0x1000 + 25) * 16 + 3;
	struct ls_gpu_agg_stats st;
	int i, n, api = 0;

	memset(s, 0, sizeof(*s));
	assert_int_equal(ls_gpu_agg__new(&o, collect, s, &agg), 0);
	/* kernel 22's record arrives before its entry */
	assert_int_equal(send_acts(agg, 100, &k[0], 1), 0);
	assert_int_equal(ls_gpu_agg__launch(agg, 100, 101, 4999 * MS,
					    LS_GPU_AUX(20, LS_GPU_API_LAUNCH, 211, 0), 7000, 0xabc),
			 0);
	/* 21, 22, 24 from the probed launch's location; 25 from a new one; 26 from 25's */
	launches_begin(b, 100, 20);
	launches_add(b, 21, 20, 1500 * MS, 0);
	launches_add(b, 22, 20, 1500 * MS + 1000, 0);
	launches_add(b, 24, 20, 1500 * MS + 2000, 0);
	launches_add(b, 25, 0, 1500 * MS + 3000, 3);
	launches_add(b, 26, 25, 1500 * MS + 4000, 0);
	assert_int_equal(launches_send(agg, b), 0);
	assert_int_equal(stack_calls, 1);
	for (i = 0; i < s->n; i++) {
		if (!(s->a[i].flags & LS_GPU_ATTR_API))
			continue;
		assert_int_equal(s->a[i].tid, 101);
		assert_int_equal(s->a[i].api_class, LS_GPU_API_LAUNCH);
		assert_int_equal(s->a[i].cookie, s->a[i].corr >= 25 ? walked : 0xabc);
		if (s->a[i].corr != 20)
			assert_int_equal(s->a[i].api_ns, 100 + s->a[i].corr);
		if (s->a[i].corr == 24) /* library clock + (hdr.ts - mono) */
			assert_int_equal(s->a[i].start_mono, 4500 * MS + 2000);
		api++;
	}
	assert_int_equal(api, 6);
	assert_int_equal(send_acts(agg, 100, &k[1], 5), 0);
	assert_int_equal(gpu_of(s, 0xabc, &n), 11 * MS);
	assert_int_equal(n, 4);
	assert_int_equal(gpu_of(s, walked, &n), 18 * MS);
	assert_int_equal(n, 2);

	/* a thread never seen, then a reference never seen: nothing attributed, all counted */
	launches_begin(b, 100, 30);
	launches_add(b, 31, 20, 1600 * MS, 0);
	assert_int_equal(launches_send(agg, b), 0);
	launches_begin(b, 100, 20);
	launches_add(b, 32, 29, 1600 * MS, 0);
	assert_int_equal(launches_send(agg, b), 0);
	k[0] = kernel(31, 1005 * MS, 1 * MS);
	assert_int_equal(send_acts(agg, 100, &k[0], 1), 0);
	ls_gpu_agg__finish(agg);
	assert_int_equal(gpu_of(s, 0, &n), 1 * MS);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.launches, 6);
	assert_int_equal(st.same_loc, 5);
	assert_int_equal(st.walked, 1);
	assert_int_equal(st.same_loc_lost, 2);
	assert_int_equal(st.bad_records, 0);

	/* frames running past the record, a count beyond its entries or beyond the most */
	launches_begin(b, 100, 20);
	launches_add(b, 40, 0, 1700 * MS, 2);
	assert_int_equal(ls_gpu_agg__record(agg, b, sizeof(b->r) + b->used - 8), -EINVAL);
	launches_begin(b, 100, 20);
	launches_add(b, 41, 20, 1700 * MS, 0);
	b->r.hdr.count = 2;
	assert_int_equal(
		ls_gpu_agg__record(agg, b, sizeof(b->r) + 2 * sizeof(struct ls_gpu_launch_ent) - 4),
		-EINVAL);
	b->r.hdr.count = LS_GPU_LAUNCHES_MAX + 1;
	assert_int_equal(ls_gpu_agg__record(agg, b, sizeof(*b)), -EINVAL);
	ls_gpu_agg__stats(agg, &st);
	assert_int_equal(st.bad_records, 3);
	assert_int_equal(stack_calls, 1);
	ls_gpu_agg__free(agg);
	free(b);
	free(s);
	(void)state;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_launch_then_kernel),
		cmocka_unit_test(test_kernel_before_launch),
		cmocka_unit_test(test_orphans),
		cmocka_unit_test(test_graph_launch),
		cmocka_unit_test(test_memory_levels),
		cmocka_unit_test(test_memory_implausible),
		cmocka_unit_test(test_nvml_samples),
		cmocka_unit_test(test_flags_and_names),
		cmocka_unit_test(test_malformed),
		cmocka_unit_test(test_processes_and_status),
		cmocka_unit_test(test_lost_records),
		cmocka_unit_test(test_windows),
		cmocka_unit_test(test_sampled_launches),
		cmocka_unit_test(test_same_location_launches),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
