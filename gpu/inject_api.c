// SPDX-License-Identifier: MIT
/*
 * CUDA API callbacks: which calls are followed (by name), the attach that starts an epoch and
 * turns activity tracing on, sampled launches, and the api probe fired at each call's exit
 * (unless a launch is batched with its thread's last probed one, inject_launches.c).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "inject_int.h"

enum { DOM_RT = 0, DOM_DRV = 1 };

static pthread_mutex_t attach_lock = PTHREAD_MUTEX_INITIALIZER; /* taken before L.lock */
static __thread __u32 t_rt_corr; /* correlation id of the runtime call this thread is in */
static __thread __u32 t_skip;	 /* sampled launches: launches to leave out before the next */
static __thread __u32 t_rng;

static void enable_activity(void)
{
	static const struct {
		CUpti_ActivityKind kind;
		__u32 bit;
		int copies; /* only with LINESCOPE_GPU_COPIES != 0 */
	} kinds[] = {
		/* never CUPTI_ACTIVITY_KIND_KERNEL: it serialises every kernel on the device */
		{CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, LS_GPU_KB_KERNEL, 0},
		{CUPTI_ACTIVITY_KIND_MEMORY2, LS_GPU_KB_MEMORY2, 0},
		{CUPTI_ACTIVITY_KIND_MEMCPY, LS_GPU_KB_MEMCPY, 1},
		{CUPTI_ACTIVITY_KIND_MEMCPY2, LS_GPU_KB_MEMCPY2, 1},
		{CUPTI_ACTIVITY_KIND_MEMSET, LS_GPU_KB_MEMSET, 1},
	};
	CUptiResult res;
	size_t i;

	L.activity_on = 1;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		if (kinds[i].copies && !L.follow_copies)
			continue;
		res = L.cupti.enable(kinds[i].kind);
		if (res == CUPTI_SUCCESS) {
			L.kinds |= kinds[i].bit;
			continue;
		}
		L.last_err = res;
		if (kinds[i].kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			L.status = LS_GPU_ST_NO_ACTIVITY;
			L.cupti_err = res;
			snprintf(L.message, sizeof(L.message),
				 "CUPTI refused kernel tracing: %s (error %d); no GPU time, only "
				 "driver time",
				 ls_cupti_api__strerror(&L.cupti, res), res);
			lib_log(1, "%s", L.message);
		} else {
			lib_log(2, "activity kind %d not enabled: %s", kinds[i].kind,
				ls_cupti_api__strerror(&L.cupti, res));
		}
	}
	if (L.flush_ms && L.cupti.flush_period)
		L.cupti.flush_period(L.flush_ms);
}

/*
 * The first callback that finds a tracer attached (again) starts a new attach epoch. CUPTI calls
 * are made outside L.lock: should CUPTI deliver a buffer from inside them, the completion
 * callback takes L.lock on this same thread.
 */
__attribute__((noinline, cold)) void on_attach(void)
{
	pthread_mutex_lock(&attach_lock);
	if (!atomic_load(&L.attached) && L.subscribed) {
		atomic_fetch_add(&L.epoch, 1);
		if (!L.activity_on)
			enable_activity();
		atomic_store(&L.attached, 1);
		pthread_mutex_lock(&L.lock);
		send_hello();
		if (L.ncdev || L.nnvml)
			send_devices();
		pthread_mutex_unlock(&L.lock);
	}
	pthread_mutex_unlock(&attach_lock);
}

/*
 * Sampled launches (LINESCOPE_GPU_SAMPLE=N): each thread probes one launch in N on average, at
 * random gaps (a fixed stride would alias with loops that launch the same kernels in turn). A
 * launch left out is remembered so that its device work is dropped rather than orphaned; the
 * collector scales what the probed launches carry by N.
 */
static int sampled(__u32 corr)
{
	if (t_skip) {
		t_skip--;
		atomic_store_explicit(&L.unsampled[corr & (UNSAMPLED_SLOTS - 1)], corr,
				      memory_order_relaxed);
		return 0;
	}
	if (!t_rng)
		t_rng = (__u32)mono_ns() ^ ((__u32)(uintptr_t)&t_rng) ^ 0x9e3779b9u;
	t_rng ^= t_rng << 13;
	t_rng ^= t_rng >> 17;
	t_rng ^= t_rng << 5;
	/* uniform on 0 .. 2N-2: the gap between probed launches averages N */
	t_skip = t_rng % ((2u << L.sample_shift) - 1);
	return 1;
}

void CUPTIAPI on_callback(void *ud, CUpti_CallbackDomain dom, CUpti_CallbackId cbid,
			  const void *data)
{
	const CUpti_CallbackData *cb = data;
	__u64 t0 = 0, now;
	__u32 cls;
	int d;

	if (!LINESCOPE_GPU_API_ENABLED()) {
		if (atomic_load_explicit(&L.attached, memory_order_relaxed))
			atomic_store_explicit(&L.attached, 0, memory_order_relaxed);
		return;
	}
	if (__builtin_expect(!atomic_load_explicit(&L.attached, memory_order_relaxed), 0))
		on_attach();
	if (dom == CUPTI_CB_DOMAIN_RUNTIME_API)
		d = DOM_RT;
	else if (dom == CUPTI_CB_DOMAIN_DRIVER_API)
		d = DOM_DRV;
	else
		return;
	if (cbid >= LS_MAX_CBID || !cb)
		return;
	/*
	 * A runtime call runs the driver call under the same correlation id; the runtime callback
	 * speaks for both. A driver call without a runtime wrapper (Triton, NCCL) speaks for
	 * itself.
	 */
	cls = L.cls[d][cbid];
	if (cb->callbackSite == CUPTI_API_ENTER) {
		if (d == DOM_RT)
			t_rt_corr = cb->correlationId;
		else if (cb->correlationId == t_rt_corr)
			return;
		if (!cb->correlationData)
			return;
		/* decided before the kernel is queued, so its record is always known as left out */
		if (cls == LS_GPU_API_LAUNCH && L.unsampled && !sampled(cb->correlationId))
			*cb->correlationData = UNSAMPLED;
		else
			*cb->correlationData = mono_ns();
		return;
	}
	if (d == DOM_DRV) {
		if (cb->correlationId == t_rt_corr)
			return;
	} else {
		t_rt_corr = 0;
	}
	if (cb->correlationData)
		t0 = *cb->correlationData;
	if (t0 == UNSAMPLED)
		return;
	now = mono_ns();
	if (!t0 || t0 > now || now - t0 > 3600ull * 1000000000ull) {
		/* attached between ENTER and EXIT: no entry time */
		atomic_fetch_add_explicit(&L.no_entry, 1, memory_order_relaxed);
		t0 = now;
	}
	if (cls == LS_GPU_API_LAUNCH) {
		/* same Python location as the thread's last probed launch: no probe (its batch
		 * goes out through the record probe, so only while that one is attached too) */
		if (L.same_loc && LINESCOPE_GPU_RECORD_ENABLED() &&
		    launches_add(cb->correlationId, now - t0, now))
			return;
		cls |= L.sample_shift << 8;
	} else if (L.same_loc) {
		launches_send_mine(); /* in order: the thread's launches before this call */
	}
	LINESCOPE_GPU_API(cb->correlationId, d == DOM_DRV ? -(__s32)cbid : (__s32)cbid, cls,
			  now - t0, cb->symbolName ? cb->symbolName : cb->functionName);
}

/* Classifies a CUDA API by name; LS_GPU_API_NONE for calls we do not follow. */
static __u8 classify(const char *n, int follow_copies)
{
	if (!n)
		return LS_GPU_API_NONE;
	if (strstr(n, "HostFunc"))
		return LS_GPU_API_NONE; /* host callbacks: no device work */
	if (!strncmp(n, "cudaGraphLaunch", 15) || !strncmp(n, "cuGraphLaunch", 13))
		return LS_GPU_API_GRAPH;
	if (!strncmp(n, "cudaLaunch", 10) || !strncmp(n, "cuLaunch", 8))
		return LS_GPU_API_LAUNCH;
	if (!strncmp(n, "cudaMemcpy", 10) || !strncmp(n, "cuMemcpy", 8))
		return follow_copies ? LS_GPU_API_MEMCPY : LS_GPU_API_NONE;
	if (!strncmp(n, "cudaMemset", 10) || !strncmp(n, "cuMemset", 8))
		return follow_copies ? LS_GPU_API_MEMSET : LS_GPU_API_NONE;
	if (!strncmp(n, "cudaMalloc", 10) || !strncmp(n, "cuMemAlloc", 10) ||
	    !strncmp(n, "cuMemCreate", 11) || !strncmp(n, "cuMemHostAlloc", 14))
		return LS_GPU_API_ALLOC;
	if (!strncmp(n, "cudaFree", 8) || !strncmp(n, "cuMemFree", 9) ||
	    !strncmp(n, "cuMemRelease", 12))
		return LS_GPU_API_FREE;
	if (strstr(n, "Synchronize"))
		return LS_GPU_API_SYNC;
	return LS_GPU_API_NONE;
}

int enable_callbacks(void)
{
	static const CUpti_CallbackDomain doms[2] = {CUPTI_CB_DOMAIN_RUNTIME_API,
						     CUPTI_CB_DOMAIN_DRIVER_API};
	const char *name;
	CUptiResult res;
	__u32 cbid;
	int d;

	for (d = 0; d < 2; d++) {
		for (cbid = 1; cbid < LS_MAX_CBID; cbid++) {
			name = NULL;
			if (!L.cupti.callback_name ||
			    L.cupti.callback_name(doms[d], cbid, &name) != CUPTI_SUCCESS)
				continue;
			L.cls[d][cbid] = classify(name, L.follow_copies);
			if (L.cls[d][cbid] == LS_GPU_API_NONE)
				continue;
			res = L.cupti.enable_callback(1, L.sub, doms[d], cbid);
			if (res != CUPTI_SUCCESS) {
				L.last_err = res;
				L.cls[d][cbid] = LS_GPU_API_NONE;
				continue;
			}
			L.ncallbacks++;
		}
	}
	return L.ncallbacks ? 0 : -ENOENT;
}
