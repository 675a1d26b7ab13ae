/* SPDX-License-Identifier: MIT */
/*
 * A fake CUDA driver + CUPTI for tests on machines without a GPU, built as libcupti.so.13 so that
 * the injection library finds it exactly as it finds the real one. It implements the CUPTI calls
 * the injection library makes with CUDA 13.0 record layouts and CUPTI's documented behaviour
 * (cursor semantics of cuptiActivityGetNextRecord, one subscriber per process, error 39 for a
 * second one, NULL buffers dropping records, zero timestamps). The fakecuda_* calls play the
 * application and the driver: each one fires the CUPTI API callbacks a real call would (runtime
 * ENTER, driver ENTER under the same correlation id, driver EXIT, runtime EXIT) and queues the
 * activity records a GPU would produce, with the device times asked for.
 *
 * Knobs (environment, read once): FAKE_CUPTI_HOLDER=name (another subscriber holds CUPTI),
 * FAKE_CUPTI_SUBSCRIBE_ERR=n, FAKE_CUPTI_ENABLE_ERR=n (cuptiActivityEnable fails with n),
 * FAKE_CUPTI_ZERO_TS=n (every n-th kernel has zero timestamps), FAKE_CUDA_DEVICES=n (default 1).
 */
#ifndef FAKECUDA_H
#define FAKECUDA_H

#include <stdint.h>

enum fakecuda_api {
	FAKECUDA_RT = 0,    /* cudaLaunchKernel -> cuLaunchKernel */
	FAKECUDA_RT_EX = 1, /* cudaLaunchKernelExC -> cuLaunchKernelEx */
	FAKECUDA_DRV = 2,   /* cuLaunchKernel alone (Triton) */
	FAKECUDA_DRV_EX = 3 /* cuLaunchKernelEx alone (NCCL) */
};

/* Like cuInit(): loads $CUDA_INJECTION64_PATH once per process and calls its InitializeInjection.
 * Returns what InitializeInjection returned, 0 when the variable is unset, -1 when loading failed.
 */
int fakecuda_init(void);

/* Each returns the correlation id of the call it made. Device times are exact: end - start. */
uint32_t fakecuda_launch(const char *kernel, uint64_t dur_ns, uint32_t stream, int api);
uint32_t fakecuda_graph_launch(uint32_t graph_id, uint32_t nkernels, const char *kernel,
			       uint64_t dur_ns_each);
uint32_t fakecuda_memcpy(uint64_t bytes, int copy_kind, uint64_t dur_ns);
uint32_t fakecuda_memset(uint64_t bytes, uint64_t dur_ns);
uint32_t fakecuda_malloc(uint64_t bytes, uint64_t *addr);
uint32_t fakecuda_free(uint64_t addr);
/* n launches (cudaLaunchKernel) from a new native thread with no Python state; returns its tid */
uint32_t fakecuda_launch_native_thread(const char *kernel, uint64_t dur_ns, uint32_t n);
/*
 * An engine as autograd's: a persistent native worker per id (0..FAKECUDA_ENGINES-1) that waits
 * for work on a condition variable. _start creates it and returns its tid; _run hands it n
 * launches of dur_ns each, gap_ns of CPU apart, wakes it, and waits until it has done them (the
 * caller blocks, as loss.backward() does); returns the worker's tid.
 */
#define FAKECUDA_ENGINES 4
uint32_t fakecuda_engine_start(uint32_t id);
uint32_t fakecuda_engine_run(uint32_t id, const char *kernel, uint64_t dur_ns, uint32_t n,
			     uint64_t gap_ns);
/* cudaDeviceSynchronize that keeps the CPU busy for busy_ns inside the call */
uint32_t fakecuda_synchronize(uint64_t busy_ns);
/* CPU time each fake API call spends inside the driver (default 0) */
void fakecuda_set_api_cost(uint64_t ns);
/* Delivers every queued activity buffer now, on this thread (cuptiActivityFlushAll). */
void fakecuda_flush(void);
/* Device bytes currently allocated through fakecuda_malloc (fake NVML reads it). */
uint64_t fakecuda_allocated(void);
/* Counters: records queued, records dropped for lack of a buffer, callbacks fired. */
uint64_t fakecuda_stat(int which);
#define FAKECUDA_ST_RECORDS   0
#define FAKECUDA_ST_DROPPED   1
#define FAKECUDA_ST_CALLBACKS 2

/* The UUID of fake device i, as both the fake CUPTI device record and the fake NVML report it. */
static inline void fakecuda_uuid(int dev, unsigned char out[16])
{
	int i;

	for (i = 0; i < 16; i++)
		out[i] = (unsigned char)(0x10 * dev + i + 1);
}

#define FAKECUDA_DEVICE_NAME "NVIDIA H200 (fake)"
#define FAKECUDA_DEVICE_MEM  (143771533312ull)

#endif
