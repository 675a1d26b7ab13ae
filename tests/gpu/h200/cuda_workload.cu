// SPDX-License-Identifier: MIT
/*
 * Real CUDA work with known per-thread device time, for tests/gpu/h200-check.sh (built here with
 * nvcc -arch=sm_90, static cudart; needs only the driver there).
 *
 *   cuda_workload work EXPECT.json    threads on their own streams launch spin kernels through
 *                                     the runtime (<<<>>>), the driver (cuLaunchKernelEx) and a
 *                                     CUDA graph; copies, sets, allocations. The device time of
 *                                     each thread's stream is measured with CUDA events, apart
 *                                     from CUPTI, and written with the thread ids.
 *   cuda_workload overhead N          N empty-kernel launches from one thread; prints
 *                                     "launch_ns <ns per launch>".
 */
#include <cuda.h>
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CHECK(x)                                                                                \
	do {                                                                                    \
		cudaError_t e_ = (x);                                                           \
		if (e_ != cudaSuccess) {                                                        \
			fprintf(stderr, "cuda_workload: %s: %s\n", #x, cudaGetErrorString(e_)); \
			exit(1);                                                                \
		}                                                                               \
	} while (0)
#define CHECK_DRV(x)                                                                   \
	do {                                                                           \
		CUresult r_ = (x);                                                     \
		if (r_ != CUDA_SUCCESS) {                                              \
			fprintf(stderr, "cuda_workload: %s: error %d\n", #x, (int)r_); \
			exit(1);                                                       \
		}                                                                      \
	} while (0)

__global__ void spin_a(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

__global__ void spin_b(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

__global__ void spin_driver(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

__global__ void graph_node(long long cycles)
{
	long long t0 = clock64();

	while (clock64() - t0 < cycles)
		;
}

__global__ void empty_kernel(void)
{
}

static long long cycles_per_ms;

struct job {
	const char *label;
	int kernels;
	double ms_each;
	int how; /* 0: runtime <<<>>>, 1: second runtime kernel, 2: driver cuLaunchKernelEx */
	long tid;
	double event_ms;
};

static void *run_job(void *arg)
{
	struct job *j = (struct job *)arg;
	long long cycles = (long long)(j->ms_each * (double)cycles_per_ms);
	cudaStream_t s;
	cudaEvent_t a, b;
	float ms = 0;
	int i;

	j->tid = syscall(SYS_gettid);
	CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CHECK(cudaEventCreate(&a));
	CHECK(cudaEventCreate(&b));
	CHECK(cudaEventRecord(a, s));
	for (i = 0; i < j->kernels; i++) {
		if (j->how == 0) {
			spin_a<<<1, 32, 0, s>>>(cycles);
		} else if (j->how == 1) {
			spin_b<<<1, 32, 0, s>>>(cycles);
		} else {
			cudaFunction_t f;
			CUlaunchConfig cfg;
			void *args[] = {&cycles};

			CHECK(cudaGetFuncBySymbol(&f, (const void *)spin_driver));
			memset(&cfg, 0, sizeof(cfg));
			cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
			cfg.blockDimX = 32;
			cfg.blockDimY = cfg.blockDimZ = 1;
			cfg.hStream = (CUstream)s;
			CHECK_DRV(cuLaunchKernelEx(&cfg, (CUfunction)f, args, NULL));
		}
	}
	CHECK(cudaGetLastError());
	CHECK(cudaEventRecord(b, s));
	CHECK(cudaEventSynchronize(b));
	CHECK(cudaEventElapsedTime(&ms, a, b));
	j->event_ms = ms;
	CHECK(cudaStreamDestroy(s));
	return NULL;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int overhead(long n)
{
	cudaStream_t s;
	double t0;
	long i;

	CHECK(cudaStreamCreate(&s));
	for (i = 0; i < 1000; i++)
		empty_kernel<<<1, 1, 0, s>>>();
	CHECK(cudaStreamSynchronize(s));
	t0 = now_ns();
	for (i = 0; i < n; i++)
		empty_kernel<<<1, 1, 0, s>>>();
	CHECK(cudaStreamSynchronize(s));
	printf("launch_ns %.1f\n", (now_ns() - t0) / (double)n);
	return 0;
}

int main(int argc, char **argv)
{
	struct job jobs[] = {
		{"runtime_a", 200, 0.5, 0, 0, 0},
		{"runtime_b", 100, 1.0, 1, 0, 0},
		{"driver_ex", 50, 2.0, 2, 0, 0},
	};
	const int njobs = sizeof(jobs) / sizeof(jobs[0]);
	pthread_t thr[sizeof(jobs) / sizeof(jobs[0])];
	size_t big = 256u << 20, copy = 64u << 20;
	cudaStream_t gs;
	cudaGraph_t graph;
	cudaGraphExec_t exec;
	cudaEvent_t ga, gb;
	float graph_ms = 0;
	void *dev, *dev2, *host;
	int khz = 0, i;
	FILE *out;

	if (argc < 3) {
		fprintf(stderr, "usage: cuda_workload work EXPECT.json | overhead N\n");
		return 64;
	}
	CHECK(cudaSetDevice(0));
	if (!strcmp(argv[1], "overhead"))
		return overhead(atol(argv[2]));
	CHECK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
	cycles_per_ms =
		(long long)khz; /* kHz = cycles per ms (nominal; events measure the truth) */

	/* memory: an allocation, copies both ways, a set, a stream-ordered allocation */
	CHECK(cudaMalloc(&dev, big));
	host = malloc(copy);
	memset(host, 1, copy);
	CHECK(cudaMemcpy(dev, host, copy, cudaMemcpyHostToDevice));
	CHECK(cudaMemset(dev, 0, copy));
	CHECK(cudaMemcpy(host, dev, copy, cudaMemcpyDeviceToHost));
	CHECK(cudaMallocAsync(&dev2, 32u << 20, 0));
	CHECK(cudaFreeAsync(dev2, 0));
	CHECK(cudaDeviceSynchronize());

	for (i = 0; i < njobs; i++)
		pthread_create(&thr[i], NULL, run_job, &jobs[i]);
	for (i = 0; i < njobs; i++)
		pthread_join(thr[i], NULL);

	/* a captured graph of three kernels, replayed 20 times from the main thread */
	CHECK(cudaStreamCreateWithFlags(&gs, cudaStreamNonBlocking));
	CHECK(cudaStreamBeginCapture(gs, cudaStreamCaptureModeThreadLocal));
	for (i = 0; i < 3; i++)
		graph_node<<<1, 32, 0, gs>>>(cycles_per_ms / 5);
	CHECK(cudaStreamEndCapture(gs, &graph));
	CHECK(cudaGraphInstantiate(&exec, graph, 0));
	CHECK(cudaEventCreate(&ga));
	CHECK(cudaEventCreate(&gb));
	CHECK(cudaEventRecord(ga, gs));
	for (i = 0; i < 20; i++)
		CHECK(cudaGraphLaunch(exec, gs));
	CHECK(cudaEventRecord(gb, gs));
	CHECK(cudaEventSynchronize(gb));
	CHECK(cudaEventElapsedTime(&graph_ms, ga, gb));
	CHECK(cudaFree(dev));
	free(host);

	out = fopen(argv[2], "w");
	if (!out)
		return 1;
	fprintf(out, "{\"pid\": %d, \"clock_khz\": %d, \"jobs\": [", (int)getpid(), khz);
	for (i = 0; i < njobs; i++)
		fprintf(out,
			"%s{\"label\": \"%s\", \"tid\": %ld, \"kernels\": %d, \"event_ns\": %.0f}",
			i ? ", " : "", jobs[i].label, jobs[i].tid, jobs[i].kernels,
			jobs[i].event_ms * 1e6);
	fprintf(out,
		"], \"graph\": {\"tid\": %ld, \"kernels\": 60, \"event_ns\": %.0f}, "
		"\"memory\": {\"alloc_bytes\": %zu, \"copy_bytes\": %zu, \"set_bytes\": %zu}}\n",
		(long)syscall(SYS_gettid), graph_ms * 1e6, big, 2 * copy, copy);
	fclose(out);
	printf("cuda_workload: ok\n");
	return 0;
}
