// SPDX-License-Identifier: MIT
/* Fake CUPTI + CUDA driver for GPU-less tests; see fakecuda.h. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <cupti.h>

#include "fakecuda.h"

#define EXPORT	 __attribute__((visibility("default")))
#define MAX_CBID 2048
#define MAX_DONE 1024

enum { RT = 0, DRV = 1 };

static struct {
	pthread_mutex_t lock;
	pthread_once_t env_once;
	/* configuration */
	const char *holder;
	int subscribe_err, enable_err, zero_ts_every, ndevices;
	/* subscription */
	CUpti_CallbackFunc cb;
	void *ud;
	int subscribed;
	unsigned char enabled[2][MAX_CBID];
	/* activity */
	CUpti_BuffersCallbackRequestFunc request;
	CUpti_BuffersCallbackCompleteFunc complete;
	_Atomic uint64_t kinds; /* bit per CUpti_ActivityKind < 64 */
	uint8_t *cur;
	size_t cur_size, cur_used;
	struct {
		uint8_t *buf;
		size_t size, valid;
	} done[MAX_DONE];
	int ndone;
	uint32_t period_ms;
	int worker;
	pthread_cond_t wake;   /* a buffer filled up: the worker hands it back now */
	int delivering;	       /* deliver() calls handing buffers back right now */
	pthread_cond_t handed; /* one of them finished */
	/* driver state */
	_Atomic uint32_t corr;
	_Atomic uint64_t allocated, next_addr, api_cost_ns, kernels;
	_Atomic uint64_t st_records, st_dropped, st_callbacks;
	int injected;
} F = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wake = PTHREAD_COND_INITIALIZER,
	.handed = PTHREAD_COND_INITIALIZER,
	.env_once = PTHREAD_ONCE_INIT,
	.next_addr = 0x7f0000000000ull,
};

static void read_env(void)
{
	const char *s;

	F.holder = getenv("FAKE_CUPTI_HOLDER");
	s = getenv("FAKE_CUPTI_SUBSCRIBE_ERR");
	F.subscribe_err = s ? atoi(s) : 0;
	s = getenv("FAKE_CUPTI_ENABLE_ERR");
	F.enable_err = s ? atoi(s) : 0;
	s = getenv("FAKE_CUPTI_ZERO_TS");
	F.zero_ts_every = s ? atoi(s) : 0;
	s = getenv("FAKE_CUDA_DEVICES");
	F.ndevices = s ? atoi(s) : 1;
	if (F.ndevices < 1 || F.ndevices > 8)
		F.ndevices = 1;
}

static void env(void)
{
	pthread_once(&F.env_once, read_env);
}

static uint64_t realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void spin(uint64_t ns)
{
	uint64_t end;

	if (!ns)
		return;
	end = realtime_ns() + ns;
	while (realtime_ns() < end)
		;
}

/* ---- CUPTI: results, version, names ------------------------------------------------------ */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	switch (result) {
	case CUPTI_SUCCESS:
		*str = "CUPTI_SUCCESS";
		break;
	case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
		*str = "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED";
		break;
	case CUPTI_ERROR_UNKNOWN:
		*str = "CUPTI_ERROR_UNKNOWN";
		break;
	default:
		*str = "CUPTI_ERROR (fake)";
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetTimestamp(uint64_t *ts)
{
	*ts = realtime_ns();
	return CUPTI_SUCCESS;
}

#define R(x)                                         \
	{                                            \
		RT, CUPTI_RUNTIME_TRACE_CBID_##x, #x \
	}
#define D(x)                                         \
	{                                            \
		DRV, CUPTI_DRIVER_TRACE_CBID_##x, #x \
	}
static const struct {
	int dom;
	uint32_t cbid;
	const char *name;
} names[] = {
	R(cudaGetDeviceCount_v3020),
	R(cudaLaunchKernel_v7000),
	R(cudaLaunchKernelExC_v11060),
	R(cudaGraphLaunch_v10000),
	R(cudaLaunchHostFunc_v10000),
	R(cudaMemcpy_v3020),
	R(cudaMemset_v3020),
	R(cudaMalloc_v3020),
	R(cudaFree_v3020),
	R(cudaDeviceSynchronize_v3020),
	D(cuInit),
	D(cuLaunchKernel),
	D(cuLaunchKernelEx),
	D(cuGraphLaunch),
	D(cuLaunchHostFunc),
	D(cuMemcpyHtoD_v2),
	D(cuMemcpyDtoH_v2),
	D(cuMemcpyDtoD_v2),
	D(cuMemsetD8_v2),
	D(cuMemAlloc_v2),
	D(cuMemFree_v2),
	D(cuCtxSynchronize),
};

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					const char **name)
{
	int dom = domain == CUPTI_CB_DOMAIN_RUNTIME_API ? RT : DRV;
	size_t i;

	if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (names[i].dom == dom && names[i].cbid == cbid) {
			*name = names[i].name;
			return CUPTI_SUCCESS;
		}
	}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

/* ---- CUPTI: callbacks --------------------------------------------------------------------- */

static CUptiResult subscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud,
			     CUpti_SubscriberParams *params)
{
	env();
	if (F.holder || F.subscribed) {
		if (params && params->oldSubscriberName && params->oldSubscriberSize)
			snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s",
				 F.holder ? F.holder : "CUPTI for an earlier subscriber");
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	}
	if (F.subscribe_err)
		return (CUptiResult)F.subscribe_err;
	F.cb = cb;
	F.ud = ud;
	F.subscribed = 1;
	*sub = (CUpti_SubscriberHandle)&F;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud)
{
	return subscribe(sub, cb, ud, NULL);
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *sub, CUpti_CallbackFunc cb, void *ud,
				     CUpti_SubscriberParams *params)
{
	return subscribe(sub, cb, ud, params);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle sub)
{
	if (sub != (CUpti_SubscriberHandle)&F || !F.subscribed)
		return CUPTI_ERROR_INVALID_PARAMETER;
	F.subscribed = 0;
	F.cb = NULL;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle sub,
				       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
	if (sub != (CUpti_SubscriberHandle)&F || cbid >= MAX_CBID)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (domain == CUPTI_CB_DOMAIN_RUNTIME_API)
		F.enabled[RT][cbid] = !!enable;
	else if (domain == CUPTI_CB_DOMAIN_DRIVER_API)
		F.enabled[DRV][cbid] = !!enable;
	else
		return CUPTI_ERROR_INVALID_PARAMETER;
	return CUPTI_SUCCESS;
}

/* ---- CUPTI: activity ---------------------------------------------------------------------- */

static size_t stride(CUpti_ActivityKind kind)
{
	switch (kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return sizeof(CUpti_ActivityKernel10);
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return sizeof(CUpti_ActivityMemcpy6);
	case CUPTI_ACTIVITY_KIND_MEMCPY2:
		return sizeof(CUpti_ActivityMemcpyPtoP4);
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return sizeof(CUpti_ActivityMemset4);
	case CUPTI_ACTIVITY_KIND_MEMORY2:
		return sizeof(CUpti_ActivityMemory4);
	case CUPTI_ACTIVITY_KIND_DEVICE:
		return sizeof(CUpti_ActivityDevice5);
	case CUPTI_ACTIVITY_KIND_OVERHEAD:
		return sizeof(CUpti_ActivityOverhead3);
	default:
		return 0;
	}
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buf, size_t valid, CUpti_Activity **rec)
{
	size_t off = 0, size;

	if (!buf || !rec)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (*rec) {
		size = stride((*rec)->kind);
		if (!size)
			return CUPTI_ERROR_INVALID_KIND;
		off = (size_t)((uint8_t *)*rec - buf) + size;
	}
	if (off + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size = stride(((CUpti_Activity *)(buf + off))->kind);
	if (!size)
		return CUPTI_ERROR_INVALID_KIND;
	if (off + size > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED; /* what libcupti 13.0 answers for a cut record
						       */
	*rec = (CUpti_Activity *)(buf + off);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
						  CUpti_BuffersCallbackCompleteFunc complete)
{
	if (!request || !complete)
		return CUPTI_ERROR_INVALID_PARAMETER;
	F.request = request;
	F.complete = complete;
	return CUPTI_SUCCESS;
}

static void put_record(const void *rec, size_t size);

static void device_records(void)
{
	CUpti_ActivityDevice5 d;
	static char name[] = FAKECUDA_DEVICE_NAME;
	int i;

	for (i = 0; i < F.ndevices; i++) {
		memset(&d, 0, sizeof(d));
		d.kind = CUPTI_ACTIVITY_KIND_DEVICE;
		d.id = (uint32_t)i;
		d.globalMemorySize = FAKECUDA_DEVICE_MEM;
		d.computeCapabilityMajor = 9;
		d.computeCapabilityMinor = 0;
		d.name = name;
		fakecuda_uuid(i, (unsigned char *)d.uuid.bytes);
		put_record(&d, sizeof(d));
	}
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	env();
	if (F.enable_err)
		return (CUptiResult)F.enable_err;
	if ((int)kind <= 0 || (int)kind >= 64 || !stride(kind))
		return CUPTI_ERROR_NOT_COMPATIBLE;
	atomic_fetch_or(&F.kinds, 1ull << kind);
	if (kind == CUPTI_ACTIVITY_KIND_DEVICE)
		device_records();
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	atomic_fetch_and(&F.kinds, ~(1ull << kind));
	return CUPTI_SUCCESS;
}

static int kind_on(CUpti_ActivityKind kind)
{
	return !!(atomic_load(&F.kinds) & (1ull << kind));
}

/* Moves the current buffer, even an empty one, to the completed list. Holds F.lock. */
static void retire_current(void)
{
	if (!F.cur)
		return;
	if (F.ndone < MAX_DONE) {
		F.done[F.ndone].buf = F.cur;
		F.done[F.ndone].size = F.cur_size;
		F.done[F.ndone].valid = F.cur_used;
		F.ndone++;
	} else {
		free(F.cur); /* the client never collects: its records are lost, as in CUPTI */
	}
	F.cur = NULL;
	F.cur_size = F.cur_used = 0;
}

/* Hands every completed buffer to the client, outside F.lock. */
static void deliver(void)
{
	typeof(F.done[0]) done[MAX_DONE];
	int n, i;

	pthread_mutex_lock(&F.lock);
	n = F.ndone;
	memcpy(done, F.done, n * sizeof(done[0]));
	F.ndone = 0;
	F.delivering++;
	pthread_mutex_unlock(&F.lock);
	for (i = 0; i < n; i++)
		F.complete(NULL, 0, done[i].buf, done[i].size, done[i].valid);
	pthread_mutex_lock(&F.lock);
	F.delivering--;
	pthread_cond_broadcast(&F.handed);
	pthread_mutex_unlock(&F.lock);
}

static void put_record(const void *rec, size_t size)
{
	size_t max_records = 0;
	int full = 0;

	if (!F.request)
		return;
	pthread_mutex_lock(&F.lock);
	if (F.cur && F.cur_used + size > F.cur_size) {
		retire_current();
		full = 1;
	}
	if (!F.cur) {
		F.request(&F.cur, &F.cur_size, &max_records);
		if (F.cur && F.cur_size < size)
			F.cur = NULL; /* unusable: CUPTI would drop too */
	}
	if (!F.cur) {
		atomic_fetch_add(&F.st_dropped, 1);
	} else {
		memcpy(F.cur + F.cur_used, rec, size);
		F.cur_used += size;
		atomic_fetch_add(&F.st_records, 1);
	}
	if (full && F.worker)
		pthread_cond_signal(&F.wake);
	pthread_mutex_unlock(&F.lock);
	/* with no worker thread, full buffers go back at once on the recording thread */
	if (full && !F.worker)
		deliver();
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	(void)flag;
	if (!F.complete)
		return CUPTI_SUCCESS;
	pthread_mutex_lock(&F.lock);
	retire_current();
	pthread_mutex_unlock(&F.lock);
	deliver();
	/*
	 * As CUPTI: every buffer completed before the call is back when it returns, including one
	 * the worker thread is handing back right now (else an exit right after the flush loses a
	 * full buffer of records).
	 */
	pthread_mutex_lock(&F.lock);
	while (F.delivering)
		pthread_cond_wait(&F.handed, &F.lock);
	pthread_mutex_unlock(&F.lock);
	return CUPTI_SUCCESS;
}

/*
 * fork: the child has no worker thread and none of its deliveries; take F.lock across the fork so
 * that the child does not inherit it held.
 */
static void fork_prepare(void)
{
	pthread_mutex_lock(&F.lock);
}

static void fork_parent(void)
{
	pthread_mutex_unlock(&F.lock);
}

static void fork_child(void)
{
	F.delivering = 0;
	pthread_mutex_unlock(&F.lock);
}

__attribute__((constructor)) static void fake_cupti_init(void)
{
	pthread_atfork(fork_prepare, fork_parent, fork_child);
}

/* CUPTI's worker: full buffers go back as soon as they fill, partial ones every period. */
static void *worker(void *arg)
{
	struct timespec until;

	(void)arg;
	for (;;) {
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += F.period_ms / 1000;
		until.tv_nsec += (long)(F.period_ms % 1000) * 1000000;
		if (until.tv_nsec >= 1000000000) {
			until.tv_sec++;
			until.tv_nsec -= 1000000000;
		}
		pthread_mutex_lock(&F.lock);
		if (!F.ndone && pthread_cond_timedwait(&F.wake, &F.lock, &until) == ETIMEDOUT &&
		    F.cur && F.cur_used)
			retire_current();
		pthread_mutex_unlock(&F.lock);
		deliver();
	}
	return NULL;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
	pthread_t t;

	F.period_ms = ms;
	if (ms && !F.worker && pthread_create(&t, NULL, worker, NULL) == 0) {
		pthread_detach(t);
		F.worker = 1;
	}
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *n)
{
	(void)ctx;
	(void)stream;
	*n = atomic_load(&F.st_dropped);
	return CUPTI_SUCCESS;
}

/* ---- the fake driver ---------------------------------------------------------------------- */

EXPORT int fakecuda_init(void)
{
	const char *path = getenv("CUDA_INJECTION64_PATH");
	int (*init)(void);
	void *dl;

	env();
	if (!path || !*path)
		return 0;
	pthread_mutex_lock(&F.lock);
	if (F.injected) {
		pthread_mutex_unlock(&F.lock);
		return 1;
	}
	F.injected = 1;
	pthread_mutex_unlock(&F.lock);
	dl = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!dl) {
		fprintf(stderr, "fakecuda: cannot load %s: %s\n", path, dlerror());
		return -1;
	}
	*(void **)&init = dlsym(dl, "InitializeInjection");
	if (!init) {
		fprintf(stderr, "fakecuda: %s has no InitializeInjection\n", path);
		return -1;
	}
	return init();
}

static void callback(int dom, uint32_t cbid, CUpti_ApiCallbackSite site, const char *fn,
		     const char *sym, uint32_t corr, uint64_t *data)
{
	CUpti_CallbackData d = {};

	if (!F.cb || !F.enabled[dom][cbid])
		return;
	d.callbackSite = site;
	d.functionName = fn;
	d.symbolName = sym;
	d.context = (CUcontext)0x1;
	d.contextUid = 1;
	d.correlationData = data;
	d.correlationId = corr;
	atomic_fetch_add(&F.st_callbacks, 1);
	F.cb(F.ud, dom == RT ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API, cbid, &d);
}

struct call {
	int runtime; /* 0: a driver call with no runtime wrapper */
	uint32_t rt_cbid, drv_cbid;
	const char *rt_fn, *drv_fn, *sym;
	uint32_t corr;
	uint64_t data[2]; /* correlationData of each level, shared by its ENTER and EXIT */
};

static void call_enter(struct call *c)
{
	c->corr = atomic_fetch_add(&F.corr, 1) + 1;
	c->data[0] = c->data[1] = 0;
	if (c->runtime)
		callback(RT, c->rt_cbid, CUPTI_API_ENTER, c->rt_fn, c->sym, c->corr, &c->data[0]);
	callback(DRV, c->drv_cbid, CUPTI_API_ENTER, c->drv_fn, c->sym, c->corr, &c->data[1]);
	spin(atomic_load(&F.api_cost_ns));
}

static void call_exit(struct call *c)
{
	callback(DRV, c->drv_cbid, CUPTI_API_EXIT, c->drv_fn, c->sym, c->corr, &c->data[1]);
	if (c->runtime)
		callback(RT, c->rt_cbid, CUPTI_API_EXIT, c->rt_fn, c->sym, c->corr, &c->data[0]);
}

/*
 * The kernel name as CUPTI holds it: in its own memory, valid after the caller's string is gone
 * (a Python bytes object passed through ctypes is freed long before the buffer goes out).
 */
static const char *kept_name(const char *name)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static char *kept[256];
	static int n;
	const char *out = NULL;
	int i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < n && !out; i++)
		if (!strcmp(kept[i], name))
			out = kept[i];
	if (!out && n < (int)(sizeof(kept) / sizeof(kept[0])) && (kept[n] = strdup(name)))
		out = kept[n++];
	pthread_mutex_unlock(&lock);
	return out ? out : "fake_kernel_name_table_full";
}

static void kernel_record(const char *name, uint64_t dur, uint32_t stream, uint32_t corr,
			  uint32_t graph, uint64_t node)
{
	CUpti_ActivityKernel10 k;
	uint64_t n = atomic_fetch_add(&F.kernels, 1) + 1;

	if (!kind_on(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL))
		return;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	if (!(F.zero_ts_every && n % (uint64_t)F.zero_ts_every == 0)) {
		k.start = realtime_ns() + 1000;
		k.end = k.start + dur;
		k.completed = k.end;
	}
	k.deviceId = 0;
	k.contextId = 1;
	k.streamId = stream;
	k.correlationId = corr;
	k.name = kept_name(name);
	k.graphId = graph;
	k.graphNodeId = node;
	put_record(&k, sizeof(k));
}

static uint32_t launch(const char *kernel, uint64_t dur_ns, uint32_t stream, int api)
{
	struct call c = {.sym = kernel};

	switch (api) {
	case FAKECUDA_RT_EX:
	case FAKECUDA_DRV_EX:
		c.runtime = api == FAKECUDA_RT_EX;
		c.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060;
		c.rt_fn = "cudaLaunchKernelExC";
		c.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx;
		c.drv_fn = "cuLaunchKernelEx";
		break;
	default:
		c.runtime = api == FAKECUDA_RT;
		c.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
		c.rt_fn = "cudaLaunchKernel";
		c.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel;
		c.drv_fn = "cuLaunchKernel";
	}
	call_enter(&c);
	kernel_record(kernel, dur_ns, stream, c.corr, 0, 0);
	call_exit(&c);
	return c.corr;
}

EXPORT uint32_t fakecuda_launch(const char *kernel, uint64_t dur_ns, uint32_t stream, int api)
{
	return launch(kernel, dur_ns, stream, api);
}

EXPORT uint32_t fakecuda_graph_launch(uint32_t graph_id, uint32_t nkernels, const char *kernel,
				      uint64_t dur_ns_each)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
		.rt_fn = "cudaGraphLaunch",
		.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
		.drv_fn = "cuGraphLaunch",
	};
	uint32_t i;

	call_enter(&c);
	for (i = 0; i < nkernels; i++)
		kernel_record(kernel, dur_ns_each, 7, c.corr, graph_id,
			      (uint64_t)graph_id << 16 | (i + 1));
	call_exit(&c);
	return c.corr;
}

EXPORT uint32_t fakecuda_memcpy(uint64_t bytes, int copy_kind, uint64_t dur_ns)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemcpy_v3020,
		.rt_fn = "cudaMemcpy",
	};
	CUpti_ActivityMemcpy6 m;

	switch (copy_kind) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
		c.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoH_v2;
		c.drv_fn = "cuMemcpyDtoH_v2";
		break;
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
		c.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyDtoD_v2;
		c.drv_fn = "cuMemcpyDtoD_v2";
		break;
	default:
		c.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2;
		c.drv_fn = "cuMemcpyHtoD_v2";
	}
	call_enter(&c);
	if (kind_on(CUPTI_ACTIVITY_KIND_MEMCPY)) {
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
		m.copyKind = (uint8_t)copy_kind;
		m.bytes = bytes;
		m.start = realtime_ns() + 500;
		m.end = m.start + dur_ns;
		m.streamId = 7;
		m.correlationId = c.corr;
		put_record(&m, sizeof(m));
	}
	call_exit(&c);
	return c.corr;
}

EXPORT uint32_t fakecuda_memset(uint64_t bytes, uint64_t dur_ns)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMemset_v3020,
		.rt_fn = "cudaMemset",
		.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemsetD8_v2,
		.drv_fn = "cuMemsetD8_v2",
	};
	CUpti_ActivityMemset4 m;

	call_enter(&c);
	if (kind_on(CUPTI_ACTIVITY_KIND_MEMSET)) {
		memset(&m, 0, sizeof(m));
		m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
		m.bytes = bytes;
		m.start = realtime_ns() + 500;
		m.end = m.start + dur_ns;
		m.streamId = 7;
		m.correlationId = c.corr;
		m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
		put_record(&m, sizeof(m));
	}
	call_exit(&c);
	return c.corr;
}

static void memory_record(uint32_t corr, uint64_t addr, uint64_t bytes, int release)
{
	CUpti_ActivityMemory4 m;

	if (!kind_on(CUPTI_ACTIVITY_KIND_MEMORY2))
		return;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
	m.memoryOperationType = release ? CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE
					: CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.correlationId = corr;
	m.address = addr;
	m.bytes = bytes;
	m.timestamp = realtime_ns();
	m.processId = (uint32_t)getpid();
	put_record(&m, sizeof(m));
}

/* live allocations, for free() to know sizes */
static struct {
	uint64_t addr, bytes;
} live[4096];

EXPORT uint32_t fakecuda_malloc(uint64_t bytes, uint64_t *addr)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaMalloc_v3020,
		.rt_fn = "cudaMalloc",
		.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemAlloc_v2,
		.drv_fn = "cuMemAlloc_v2",
	};
	uint64_t a = atomic_fetch_add(&F.next_addr, (bytes + 0xfffff) & ~0xfffffull);
	size_t i;

	call_enter(&c);
	pthread_mutex_lock(&F.lock);
	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		if (!live[i].addr) {
			live[i].addr = a;
			live[i].bytes = bytes;
			break;
		}
	}
	pthread_mutex_unlock(&F.lock);
	atomic_fetch_add(&F.allocated, bytes);
	memory_record(c.corr, a, bytes, 0);
	call_exit(&c);
	*addr = a;
	return c.corr;
}

EXPORT uint32_t fakecuda_free(uint64_t addr)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaFree_v3020,
		.rt_fn = "cudaFree",
		.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuMemFree_v2,
		.drv_fn = "cuMemFree_v2",
	};
	uint64_t bytes = 0;
	size_t i;

	call_enter(&c);
	pthread_mutex_lock(&F.lock);
	for (i = 0; i < sizeof(live) / sizeof(live[0]); i++) {
		if (live[i].addr == addr) {
			bytes = live[i].bytes;
			live[i].addr = 0;
			break;
		}
	}
	pthread_mutex_unlock(&F.lock);
	if (bytes) {
		atomic_fetch_sub(&F.allocated, bytes);
		memory_record(c.corr, addr, bytes, 1);
	}
	call_exit(&c);
	return c.corr;
}

EXPORT uint32_t fakecuda_synchronize(uint64_t busy_ns)
{
	struct call c = {
		.runtime = 1,
		.rt_cbid = CUPTI_RUNTIME_TRACE_CBID_cudaDeviceSynchronize_v3020,
		.rt_fn = "cudaDeviceSynchronize",
		.drv_cbid = CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize,
		.drv_fn = "cuCtxSynchronize",
	};

	call_enter(&c);
	spin(busy_ns);
	call_exit(&c);
	return c.corr;
}

struct native_job {
	const char *kernel;
	uint64_t dur_ns;
	uint32_t n;
	uint32_t tid;
};

static void *native_thread(void *arg)
{
	struct native_job *j = arg;
	uint32_t i;

	j->tid = (uint32_t)gettid();
	for (i = 0; i < j->n; i++)
		launch(j->kernel, j->dur_ns, 3, FAKECUDA_RT);
	return NULL;
}

EXPORT uint32_t fakecuda_launch_native_thread(const char *kernel, uint64_t dur_ns, uint32_t n)
{
	struct native_job j = {.kernel = kernel, .dur_ns = dur_ns, .n = n};
	pthread_t t;

	if (pthread_create(&t, NULL, native_thread, &j))
		return 0;
	pthread_join(t, NULL);
	return j.tid;
}

static struct engine {
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool started, has_job, finished;
	uint32_t tid;
	struct native_job job;
	uint64_t gap_ns;
} E[FAKECUDA_ENGINES] = {
	[0 ... FAKECUDA_ENGINES - 1] = {.mu = PTHREAD_MUTEX_INITIALIZER,
					.work = PTHREAD_COND_INITIALIZER,
					.done = PTHREAD_COND_INITIALIZER},
};

static void *engine_main(void *arg)
{
	struct engine *e = arg;

	pthread_mutex_lock(&e->mu);
	e->tid = (uint32_t)gettid();
	pthread_cond_broadcast(&e->done); /* started */
	for (;;) {
		struct native_job j;
		uint64_t gap;

		while (!e->has_job)
			pthread_cond_wait(&e->work, &e->mu);
		j = e->job;
		gap = e->gap_ns;
		e->has_job = false;
		pthread_mutex_unlock(&e->mu);
		for (uint32_t i = 0; i < j.n; i++) {
			launch(j.kernel, j.dur_ns, 5, FAKECUDA_RT);
			spin(gap);
		}
		pthread_mutex_lock(&e->mu);
		e->finished = true;
		pthread_cond_broadcast(&e->done);
	}
	return NULL;
}

EXPORT uint32_t fakecuda_engine_start(uint32_t id)
{
	struct engine *e = &E[id % FAKECUDA_ENGINES];
	pthread_t t;
	uint32_t tid;

	pthread_mutex_lock(&e->mu);
	if (!e->started && pthread_create(&t, NULL, engine_main, e) == 0) {
		pthread_detach(t);
		e->started = true;
	}
	while (e->started && !e->tid)
		pthread_cond_wait(&e->done, &e->mu);
	tid = e->tid;
	pthread_mutex_unlock(&e->mu);
	return tid;
}

EXPORT uint32_t fakecuda_engine_run(uint32_t id, const char *kernel, uint64_t dur_ns, uint32_t n,
				    uint64_t gap_ns)
{
	struct engine *e = &E[id % FAKECUDA_ENGINES];
	uint32_t tid = fakecuda_engine_start(id);

	pthread_mutex_lock(&e->mu);
	e->job = (struct native_job){.kernel = kernel, .dur_ns = dur_ns, .n = n};
	e->gap_ns = gap_ns;
	e->has_job = true;
	e->finished = false;
	pthread_cond_signal(&e->work);
	while (!e->finished)
		pthread_cond_wait(&e->done, &e->mu);
	pthread_mutex_unlock(&e->mu);
	return tid;
}

EXPORT void fakecuda_set_api_cost(uint64_t ns)
{
	atomic_store(&F.api_cost_ns, ns);
}

EXPORT void fakecuda_flush(void)
{
	cuptiActivityFlushAll(0);
}

EXPORT uint64_t fakecuda_allocated(void)
{
	return atomic_load(&F.allocated);
}

EXPORT uint64_t fakecuda_stat(int which)
{
	switch (which) {
	case FAKECUDA_ST_RECORDS:
		return atomic_load(&F.st_records);
	case FAKECUDA_ST_DROPPED:
		return atomic_load(&F.st_dropped);
	case FAKECUDA_ST_CALLBACKS:
		return atomic_load(&F.st_callbacks);
	}
	return 0;
}
